#!/usr/bin/env python
"""Train an LSTM seq2seq response generator with the distraction attention loss (Xing and Gulla 2022, §3-§4).

    python -m dialshift_trainers.seq2seq --dataset FOLDER --output-dir DIR --structure static_ui --train-probability 0.7
    python -m dialshift_trainers.seq2seq ... --no-attention-loss          # the Non-atten-loss variant
    python -m dialshift_trainers.seq2seq --predict-only DIR --dataset FOLDER --predict '*distract*'   # a trained model
    accelerate launch -m dialshift_trainers.seq2seq ...                   # through Accelerate

Training reads the train/validation splits of ``--config`` (default ``ubuntu``, built by ``dialshift build --family
distracting``). The word-level vocabulary is the ``--vocab-size`` most frequent tokens of the training split
(contexts and responses); every utterance ends with ``__eou__``; teacher forcing, NLL of the response tokens.

Self-contained distractions (§3.4): with ``--train-probability p > 0`` each training context gets, at every epoch,
two utterances of other training dialogues (the :class:`~dialshift.shifts.distraction.DistractingInsertion` shift on
a pool of the training dialogues, each kept with probability p, at random History slots, seeded by (seed, id,
epoch)); the attention loss of eq. 9 on their mask is added to the NLL (weight ``--attention-loss-weight``, 1 in the
paper) unless ``--no-attention-loss``. Model selection: validation perplexity (no distractions) at every epoch end;
the learning rate is halved when it stops dropping (§4.2). The paper's optimiser is SGD, lr 1.0, clip 5
(``--optimizer sgd --learning-rate 1.0 --max-grad-norm 5``); the small CPU default is Adam, lr 1e-3.

``--predict PATTERNS`` (after training, or with ``--predict-only MODEL``) writes ``<config>.jsonl`` predictions for
the matching configs of ``--predict-dataset`` (default ``--dataset``): per test row ``id``, ``attention_scores``
(eq. 7 AS of every context utterance, the Query's last, as the configs' ``includes_query`` says), ``log_likelihood``
and ``tokens`` (of the gold response, for perplexity). The ``attention_distribution`` task of ``dialshift score``
scores the distracting configs (DAS ratio, eq. 8); the unshifted configs (no distraction, no DAS ratio) are
summarised in ``original.json`` (perplexity and mean History AS, Table 3's "Original" columns).
"""

import sys
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.training import Task, add_training_arguments, arguments, configure_logging, train, trainer_parser

DEFAULT_CONFIG = "ubuntu"
COLUMNS = ("id", "dialogue_id", "context", "response", "distractor_mask")


def parse_args(argv=None):
    from dialshift.models.seq2seq import STRUCTURES

    p = trainer_parser(__doc__, "seq2seq")
    p.add_argument("--dataset", required=True, help="dialshift dataset folder with the --config config")
    p.add_argument("--config", default=DEFAULT_CONFIG, help=f"config to train on (default {DEFAULT_CONFIG})")
    p.add_argument("--predict-only", metavar="MODEL", default=None,
                   help="skip training: write predictions of this trained model folder (needs --predict)")
    if "--predict-only" in (argv if argv is not None else sys.argv):
        p.add_argument("--output-dir", default=None)
        p.add_argument("--seed", type=arguments.seed, default=0)
        p.add_argument("--no-progress", action="store_true")
    else:
        add_training_arguments(p, learning_rate=1e-3, num_epochs=3)
    p.add_argument("--structure", choices=STRUCTURES, default="static")
    p.add_argument("--train-probability", type=arguments.probability, default=0.0,
                   help="training inserting probability of each self-contained distraction (0, 0.5, 0.7, 1.0)")
    p.add_argument("--no-attention-loss", action="store_true",
                   help="insert distractions without the attention loss (the Non-atten-loss variant)")
    p.add_argument("--attention-loss-weight", type=arguments.non_negative_float, default=1.0)
    p.add_argument("--dim", type=arguments.positive_int, default=128, help="embedding and hidden size (the paper: 512)")
    p.add_argument("--layers", type=arguments.positive_int, default=1, help="LSTM layers (the paper: 4)")
    p.add_argument("--dropout", type=arguments.probability, default=0.2)
    p.add_argument("--vocab-size", type=arguments.positive_int, default=10000,
                   help="vocabulary size with the specials (paper: 25000)")
    p.add_argument("--batch-size", type=arguments.positive_int, default=64, help="examples per step (the paper: 256)")
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    p.add_argument("--output-bias", choices=("default", "unigram"), default="default",
                   help="initial output-layer bias: torch's default, or the log add-one unigram distribution of the "
                        "training responses (the model starts at the unigram baseline; not in the paper)")
    p.add_argument("--max-utterance-tokens", type=arguments.positive_int, default=30)
    p.add_argument("--max-response-tokens", type=arguments.positive_int, default=30)
    p.add_argument("--max-train-instances", type=arguments.positive_int, default=None,
                   help="seeded subsample of the training rows")
    p.add_argument("--max-eval-instances", type=arguments.positive_int, default=None,
                   help="seeded subsample of validation/test rows")
    p.add_argument("--eval-batch-size", type=arguments.positive_int, default=128)
    p.add_argument("--predict", nargs="+", default=None, metavar="PATTERN",
                   help="configs to write predictions for after training (shell patterns, e.g. 'ubuntu*')")
    p.add_argument("--predict-dataset", default=None, help="dataset folder of --predict (default: --dataset)")
    p.add_argument("--predictions-dir", default=None, help="where predictions go (default: OUTPUT/predictions)")
    p.add_argument("--replicates", type=arguments.positive_int, default=1000,
                   help="bootstrap replicates when scoring the predictions")
    p.add_argument("--torch-threads", type=arguments.positive_int, default=None,
                   help="torch CPU threads (1 is fastest on a busy shared machine; default: torch's choice)")
    args = p.parse_args(argv)
    if args.predict_only and not args.predict:
        p.error("--predict-only needs --predict PATTERN")
    return args


def load_rows(folder, config: str, split: str, max_instances: int | None = None, seed: int = 0) -> list[dict]:
    """Rows of one config split of a dataset folder (``COLUMNS``), optionally a seeded subsample (by id hash)."""
    from dialshift.ranking.data import read_columns

    return read_columns(folder, config, split, COLUMNS, max_instances, seed,
                        hint="; build it with `dialshift build --family distracting`").to_pylist()


class Seq2SeqTask(Task):
    """NLL (+ the eq. 9 attention loss on self-contained distractions); selection on validation perplexity."""

    name, metric = "seq2seq", "neg_perplexity"
    plateau_lr_factor = 0.5  # §4.2: the learning rate is halved when validation perplexity stops dropping

    def __init__(self, args):
        from dialshift.models.seq2seq import Vocabulary
        from dialshift.shifts.distraction import DistractingInsertion, DistractionPool

        self.args = args
        self.train_rows = load_rows(args.dataset, args.config, "train", args.max_train_instances, 0)
        self.validation = load_rows(args.dataset, args.config, "validation", args.max_eval_instances, 0)
        if not self.train_rows or not self.validation:
            raise DialshiftError(f"{args.dataset}: the {args.config} config's train or validation split is empty")
        self.vocab = Vocabulary.build((text for row in self.train_rows for text in (*row["context"], row["response"])),
                                      args.vocab_size)
        self.shift = None
        if args.train_probability > 0:
            dialogues: dict[str, list[str]] = {}
            for row in self.train_rows:  # a dialogue's utterances, once each, in order of first appearance
                utterances = dialogues.setdefault(row["dialogue_id"], [])
                for text in (*row["context"], row["response"]):
                    if text not in utterances:
                        utterances.append(text)
            owner = {row["id"]: row["dialogue_id"] for row in self.train_rows}
            self.shift = DistractingInsertion(pool=DistractionPool(dialogues.items()),
                                              probability=args.train_probability,
                                              dialogue_id=lambda key: owner[key.rsplit("@", 1)[0]],
                                              stream="self_contained_distractions")

    def build(self, accelerator):
        from dialshift.models.seq2seq import Seq2Seq, Seq2SeqConfig

        self.accelerator = accelerator
        args = self.args
        self.model_config = Seq2SeqConfig(len(self.vocab), args.structure, args.dim, args.layers, args.dropout)
        model = Seq2Seq(self.model_config)
        if args.output_bias == "unigram":
            import torch

            from dialshift.models.seq2seq import unigram_log_probabilities

            log_p = unigram_log_probabilities(self.vocab, [row["response"] for row in self.train_rows],
                                              args.max_response_tokens)
            with torch.no_grad():
                model.output.bias.copy_(torch.from_numpy(log_p))
        return model

    def optimizer(self, model, args):
        import torch

        kind = torch.optim.SGD if self.args.optimizer == "sgd" else torch.optim.Adam
        return kind(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)

    def epoch_batches(self, epoch, rng):
        order = rng.permutation(len(self.train_rows))
        size = self.args.batch_size
        return [(epoch, order[i : i + size]) for i in range(0, len(order), size)]

    def distracted(self, rows, epoch: int):
        """The rows' contexts with this epoch's self-contained distractions and their per-utterance masks."""
        from dialshift.shifts.base import InstanceRandom

        examples = []
        for row in rows:
            result = None
            if self.shift is not None:
                result = self.shift.apply(row["context"], InstanceRandom(self.args.seed, f"{row['id']}@{epoch}"))
            if not result:  # no shift, or the shift did not apply (Skipped)
                examples.append((row["context"], row["response"], [0] * len(row["context"])))
            else:
                examples.append((list(result.context), row["response"], list(result.inserted_mask)))
        return examples

    def batch_loss(self, model, examples, attention_loss: bool):
        from dialshift.models.seq2seq import attention_loss as eq9
        from dialshift.models.seq2seq import collate, token_nll

        batch = collate(self.vocab, examples, self.args.max_utterance_tokens, self.args.max_response_tokens)
        batch = batch.to(self.accelerator.device)
        output = model(batch)
        nll = token_nll(output, batch).sum() / batch.target_mask.sum()
        if not attention_loss:
            return nll
        return nll + self.args.attention_loss_weight * eq9(output, batch, self.args.structure)

    def loss(self, model, batch):
        epoch, rows = batch
        examples = self.distracted([self.train_rows[i] for i in rows], epoch)
        use_loss = self.shift is not None and not self.args.no_attention_loss
        return self.batch_loss(model, examples, use_loss)

    def validation_size(self):
        return len(self.validation)

    def validation_outputs(self, model, rows):
        return run_model(model, self.vocab, [self.validation[row] for row in rows], self.args,
                         self.accelerator.device, scores=False)

    def validation_score(self, outputs):
        perplexity = float(np.exp(-outputs["log_likelihood"].sum() / outputs["tokens"].sum()))
        return -perplexity, {"perplexity": perplexity}

    def describe(self):
        from dialshift.models.seq2seq import model_config_dict

        return {"backbone": f"lstm-{self.args.structure}", "model_config": model_config_dict(self.model_config),
                "structure": self.args.structure, "train_probability": self.args.train_probability,
                "attention_loss": self.shift is not None and not self.args.no_attention_loss,
                "output_bias": self.args.output_bias,
                "train_instances": len(self.train_rows), "vocab_size": len(self.vocab),
                "max_utterance_tokens": self.args.max_utterance_tokens,
                "max_response_tokens": self.args.max_response_tokens}

    def finalize(self, output_dir, selection):
        self.vocab.save(output_dir)
        return {"validation": {"instances": len(self.validation)}}


def run_model(model, vocab, rows, args, device="cpu", scores: bool = True) -> dict:
    """Per row: the response's log-likelihood and token count, and (``scores``) the AS of every context utterance."""
    import torch

    from dialshift.models.seq2seq import attention_scores, collate, token_nll
    from dialshift.training import sorted_batches

    model.eval()
    likelihood, tokens, as_lists = np.zeros(len(rows)), np.zeros(len(rows), dtype=np.int64), [None] * len(rows)
    examples = [(row["context"], row["response"], [0] * len(row["context"])) for row in rows]  # no mask at test
    with torch.no_grad():
        for chosen in sorted_batches([len(row["context"]) for row in rows], args.eval_batch_size):
            batch = collate(vocab, [examples[i] for i in chosen], args.max_utterance_tokens,
                            args.max_response_tokens).to(device)
            output = model(batch)
            nll = token_nll(output, batch)
            likelihood[chosen] = -nll.sum(dim=1).double().cpu().numpy()
            tokens[chosen] = batch.target_mask.sum(dim=1).cpu().numpy()
            if scores:
                for position, row in enumerate(chosen):
                    as_lists[row] = attention_scores(output, batch, position, model.config.structure)
    result = {"log_likelihood": likelihood, "tokens": tokens}
    if scores:
        result["attention_scores"] = as_lists
    return result


def predict(model, vocab, args, dataset, patterns, out_dir: Path, device="cpu") -> dict:
    """Write ``<config>.jsonl`` for the configs matching ``patterns``; score the distracting ones with the
    ``attention_distribution`` task and summarise the unshifted ones in ``original.json``."""
    from dialshift.configs import expand_patterns
    from dialshift.hub import folder_configs
    from dialshift.io import write_json_atomic
    from dialshift.scoring import ScoringSettings, score_files, write_results
    from dialshift.scoring.predictions import write_predictions

    configs = folder_configs(dataset)
    names = expand_patterns(patterns, [name for name, config in configs.items()
                                       if config.task == "attention_distribution"])
    out_dir.mkdir(parents=True, exist_ok=True)
    files, original = {}, {}
    for name in names:
        rows = load_rows(dataset, name, "test", args.max_eval_instances, 0)
        result = run_model(model, vocab, rows, args, device)
        path = out_dir / f"{name}.jsonl"
        write_predictions(path, "attention_distribution", [row["id"] for row in rows],
                          {"attention_scores": result["attention_scores"], "log_likelihood": result["log_likelihood"],
                           "tokens": result["tokens"]})
        perplexity = float(np.exp(-result["log_likelihood"].sum() / result["tokens"].sum()))
        if configs[name].shifted:
            files[name] = path
            original[name] = {"perplexity": perplexity}
        else:  # no distraction: Table 3's "Original" columns (the DAS task needs distractions)
            history = [float(np.mean(values[:-1])) for values in result["attention_scores"] if len(values) > 1]
            original[name] = {"perplexity": perplexity, "mean_as_history": float(np.mean(history)),
                              "instances": len(rows)}
    write_json_atomic(out_dir / "original.json", original)
    document = None
    if files:
        settings = ScoringSettings(dataset=Path(dataset), replicates=args.replicates,
                                   max_instances=args.max_eval_instances, sample_seed=0)  # load_rows' sample
        document = score_files(files, settings, {"run": {"model": str(getattr(args, "output_dir", "")),
                                                         "method": f"seq2seq-{model.config.structure}"}})
        write_results(out_dir / "results", document, plots=False)
    return {"original": original, "results": document}


def predictions_dir(args) -> tuple[Path, dict]:
    """Where the predictions go (``--predictions-dir``, else ``MODEL/predictions``) and that folder's ownership
    rule: never the model folder or a dataset; a new, empty or earlier predictions folder (``original.json``)."""
    model = Path(args.predict_only or args.output_dir)
    out = Path(args.predictions_dir or model / "predictions")
    return out, {"inputs": (args.dataset, args.predict_dataset, model), "legacy": ("original.json",),
                 "flag": "--predictions-dir"}


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_logging()
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    try:
        out, ownership = predictions_dir(args)
        if args.predict:  # before any work: a bad --predictions-dir fails at once
            arguments.check_output_dir(out, **ownership)
        if args.predict_only:
            from dialshift.models.seq2seq import load_seq2seq

            model, vocab, meta = load_seq2seq(args.predict_only)
            for key in ("max_utterance_tokens", "max_response_tokens"):
                setattr(args, key, meta[key])
            arguments.claim_output_dir(out, "trainers/seq2seq.py --predict", **ownership)
            predict(model, vocab, args, args.predict_dataset or args.dataset, args.predict, out)
            print(f"predictions and scores in {out}")
            return 0
        arguments.check_output_dir(args.output_dir, inputs=(args.dataset,))
        meta = train(Seq2SeqTask(args), args)
        if meta is not None and args.predict:
            from dialshift.models.seq2seq import load_seq2seq

            model, vocab, _ = load_seq2seq(args.output_dir)
            arguments.claim_output_dir(out, "trainers/seq2seq.py --predict", **ownership)
            predict(model, vocab, args, args.predict_dataset or args.dataset, args.predict, out)
            print(f"predictions and scores in {out}")
    except DialshiftError as error:
        print(f"trainers/seq2seq.py: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
