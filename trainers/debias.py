#!/usr/bin/env python
"""Train a Korean response-selection cross-encoder with optional DRiFt debiasing and UMS (Han et al. 2021, §3).

    python -m dialshift_trainers.debias --dataset FOLDER --output-dir DIR --model E5_FOLDER [--debias] [--ums]
        [--seed S] [--predictions DIR]      # then write kor_adv / kor_chitchat predictions and score them
    accelerate launch -m dialshift_trainers.debias ...                 # same, through Accelerate

Variants (Tables 3-4): baseline (binary cross-entropy on ``[CLS] u1 [EOU] ... uk [EOU] [SEP] r [EOU] [SEP]``),
``--debias`` (+deb: a biased model, one linear layer over the four Jaccard features of eq. 2, is trained first with
AdamW 5e-4 for 3 epochs; then the cross-encoder is trained on the cross-entropy of softmax(b + d), the gradient
reaching only the cross-encoder, which alone is used at test time), ``--ums`` (+UMS: utterance insertion, deletion
and search as auxiliary losses, Whang et al. 2021) and both (+UMS+deb).

Data: the train split of ``--config`` (default ``kor_chitchat``; 1:1 pairs, each row a positive and a negative
candidate), selection on its validation split (1:9, Precision@1). Optimiser: AdamW, lr 2.5e-5, 3 epochs, batch 128
pairs (App. B); CPU runs shrink the data (``--max-train-instances``) and say so. With ``--predictions DIR`` the
selected model scores ``kor_adv`` (pairwise: ``scores`` and ``probabilities`` of the two responses) and the
``kor_chitchat`` test split (``scores``/``probabilities`` of the 10 candidates) through ``dialshift.scoring``:
``DIR/results.json`` holds Precision@1 overall and per adversarial type, and in-domain R@1/10 (= P@1).
The model folder is a ``transformers`` sequence classifier (2 labels; the score of a response is logit 1 - logit 0).
"""

import sys
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.models.debias import binary_pairs
from dialshift.ranking.selection import score_predictions
from dialshift.training import (
    Task,
    add_training_arguments,
    arguments,
    configure_logging,
    get_logger,
    train,
    trainer_parser,
)

DEFAULT_CONFIG, ADVERSARIAL_CONFIG = "kor_chitchat", "kor_adv"


def parse_args(argv=None):
    p = trainer_parser(__doc__, "debias")
    p.add_argument("--dataset", required=True, help="dialshift dataset folder with the korean family's configs")
    p.add_argument("--config", default=DEFAULT_CONFIG, help="the training config (train/validation splits)")
    p.add_argument("--model", default="tiny", help="backbone: a converted e5 folder (`dialshift convert-e5 OUT`), "
                                                   "'tiny' (random 2-layer BERT, tests) or any local model folder")
    add_training_arguments(p, learning_rate=2.5e-5, num_epochs=3)
    p.add_argument("--debias", action="store_true", help="DRiFt: train on softmax(b + d) with the biased model b")
    p.add_argument("--ums", action="store_true", help="add the UMS auxiliary tasks (insertion, deletion, search)")
    p.add_argument("--ums-weight", type=arguments.non_negative_float, default=1.0,
                   help="weight of each UMS loss (Whang et al.: 1)")
    p.add_argument("--bias-learning-rate", type=arguments.positive_float, default=5e-4)
    p.add_argument("--bias-epochs", type=arguments.positive_int, default=3,
                   help="epochs of the biased model (Appendix B: 3 on 500K pairs, ~11,700 steps); on a smaller "
                        "training set raise it so the biased model converges (e.g. 45 on kor_chitchat's 32,916 "
                        "pairs), otherwise DRiFt has no bias to remove (docs/reproduction_han.md)")
    p.add_argument("--bias-features", default=None, metavar="FILE",
                   help="the biased model's features of the training pairs, computed elsewhere (an .npz of row "
                        "'ids' and 'features', rows x pairs x 4, as `dialshift bundle create --paper han` writes "
                        "it): no kiwipiepy needed here")
    p.add_argument("--batch-size", type=arguments.positive_int, default=64,
                   help="training rows per step (2 pairs each: 128 pairs)")
    p.add_argument("--max-length", type=arguments.positive_int, default=128,
                   help="tokens per (context, response) input")
    p.add_argument("--freeze-word-embeddings", action="store_true",
                   help="do not train the word-embedding matrix (CPU: e5's 250K x 384 matrix dominates each step)")
    p.add_argument("--max-train-instances", type=arguments.positive_int, default=None,
                   help="seeded subsample of the training rows")
    p.add_argument("--max-eval-instances", type=arguments.positive_int, default=None,
                   help="seeded subsample of validation instances")
    p.add_argument("--sample-seed", type=arguments.seed, default=0,
                   help="seed of the subsamples (the same for every --seed)")
    p.add_argument("--eval-batch-size", type=arguments.positive_int, default=64)
    p.add_argument("--predictions", default=None, metavar="DIR",
                   help="after training, write and score kor_adv and kor_chitchat test predictions in DIR")
    p.add_argument("--max-test-instances", type=arguments.positive_int, default=None,
                   help="seeded subsample of the kor_chitchat test instances predicted (kor_adv is always whole)")
    return p.parse_args(argv)


def variant_name(args) -> str:
    """The row label of Tables 3-4: baseline, +deb, +UMS or +UMS+deb."""
    return ("+UMS" if args.ums else "") + ("+deb" if args.debias else "") or "baseline"


def candidate_pairs(split: dict) -> list[tuple]:
    """Every (context, candidate) pair of a split's rows, row by row."""
    return [(context, candidate) for context, candidates in zip(split["context"], split["candidates"], strict=True)
            for candidate in candidates]


def response_scores(model, encoder, pairs, batch_size: int, device) -> np.ndarray:
    """``logit 1 - logit 0`` (the log-odds that a response fits) of each (context, response) pair, length-sorted."""
    import torch

    from dialshift.models.batching import sorted_batches

    encoded = [encoder.encode(context, response) for context, response in pairs]
    scores = np.empty(len(encoded), dtype=np.float64)
    model.eval()
    with torch.inference_mode():
        for rows in sorted_batches([len(ids) for ids, _ in encoded], batch_size):
            batch = {k: v.to(device) for k, v in encoder.collate([encoded[r] for r in rows]).items()}
            logits = model(**batch).logits.float()
            scores[rows] = (logits[:, 1] - logits[:, 0]).cpu().numpy()
    return scores


def read_bias_features(path, ids, pairs_per_row: int) -> np.ndarray:
    """The features of the training pairs, row by row in the order of ``ids``, from an .npz of row ``ids`` and
    ``features`` (rows x pairs x 4); a file that does not cover every row is one line."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            stored, features = list(archive["ids"]), archive["features"]
    except (OSError, ValueError, KeyError) as error:
        raise DialshiftError(f"--bias-features {path}: not an .npz of 'ids' and 'features' ({error})") from None
    if features.shape != (len(stored), pairs_per_row, 4) or features.dtype.kind != "f":
        raise DialshiftError(f"--bias-features {path}: 'features' is {features.dtype} {features.shape}, expected "
                             f"floats of shape ({len(stored)}, {pairs_per_row}, 4)")
    where = {row_id: index for index, row_id in enumerate(stored)}
    missing = [row_id for row_id in ids if row_id not in where]
    if missing:
        raise DialshiftError(f"--bias-features {path}: no features of {len(missing)} training rows (e.g. "
                             f"{missing[0]!r}); compute them from this training split")
    return features[[where[row_id] for row_id in ids]].reshape(-1, 4).astype(np.float32)


class DebiasTask(Task):
    """Binary cross-entropy (or DRiFt) on 1:1 pairs, optional UMS losses; selection on validation P@1 (1 of 10)."""

    name, metric = "response_selection", "precision@1"

    def __init__(self, args):
        from dialshift.ranking.data import load_split, read_card_configs

        self.args = args
        configs = read_card_configs(args.dataset)
        if args.config not in configs:
            raise DialshiftError(f"{args.dataset}: no {args.config!r} config (build it with `dialshift build "
                                 f"--family korean --out {args.dataset}`)")
        self.train_rows = load_split(args.dataset, args.config, "train", args.max_train_instances, args.sample_seed,
                                     configs)
        self.validation = load_split(args.dataset, args.config, "validation", args.max_eval_instances,
                                     args.sample_seed, configs)
        if not self.train_rows["id"] or not self.validation["id"]:
            raise DialshiftError(f"{args.dataset}: the {args.config} config's train or validation split is empty")
        self.pairs = binary_pairs(self.train_rows)
        self.pairs_per_row = len(self.train_rows["candidates"][0])
        self.bias_summary = None

    # --- model ---------------------------------------------------------------------------------------------------

    def build(self, accelerator):
        import torch

        from dialshift.models.backbones import load_backbone
        from dialshift.models.debias import TurnEncoder, add_special_tokens

        self.accelerator = accelerator
        model, self.tokenizer, self.backbone = load_backbone(self.args.model, self.args.seed, num_labels=2)
        add_special_tokens(model, self.tokenizer, with_ums=self.args.ums)
        if self.args.freeze_word_embeddings:
            model.get_input_embeddings().weight.requires_grad_(False)
        if self.args.ums:
            model.ums_head = torch.nn.Linear(model.config.hidden_size, 1)  # training only; not saved
        self.encoder = TurnEncoder(self.tokenizer, self.args.max_length)
        if self.args.debias:
            self._fit_biased_model()
        return model

    def _fit_biased_model(self):
        import torch

        from dialshift.models.debias import BiasFeatures, train_biased_model

        if self.args.bias_features:
            train_features = read_bias_features(self.args.bias_features, self.train_rows["id"], self.pairs_per_row)
        else:
            train_features = BiasFeatures(self.tokenizer)([(context, response) for context, response, _ in self.pairs])
        labels = np.array([label for _, _, label in self.pairs])
        self.biased, accuracy = train_biased_model(train_features, labels, self.args.seed,
                                                   self.args.bias_learning_rate, self.args.bias_epochs)
        with torch.no_grad():
            self.bias_logits = self.biased(torch.as_tensor(train_features))
        self.bias_summary = {"train_accuracy": accuracy, "weight": self.biased.weight.tolist(),
                             "bias": self.biased.bias.tolist(), "features": [
                                 "JS_morph(c, r)", "JS_morph(u_k, r)", "JS_subword(c, r)", "JS_subword(u_k, r)"]}
        get_logger().info(f"biased model: training accuracy {accuracy:.3f} on {len(labels):,} pairs")

    def optimizer(self, model, args):
        import torch

        return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.learning_rate,
                                 weight_decay=args.weight_decay)

    # --- training ------------------------------------------------------------------------------------------------

    def epoch_batches(self, epoch, rng):
        order = rng.permutation(len(self.train_rows["id"]))
        size = self.args.batch_size
        return [(order[i:i + size], int(rng.integers(2**31))) for i in range(0, len(order), size)]

    def loss(self, model, batch):
        import torch

        from dialshift.models.debias import drift_loss

        rows, ums_seed = batch
        indices = [row * self.pairs_per_row + k for row in rows for k in range(self.pairs_per_row)]
        pairs = [self.pairs[i] for i in indices]
        device = self.accelerator.device
        encoded = [self.encoder.encode(context, response) for context, response, _ in pairs]
        inputs = {k: v.to(device) for k, v in self.encoder.collate(encoded).items()}
        labels = torch.tensor([label for _, _, label in pairs], device=device)
        logits = model(**inputs).logits
        if self.args.debias:
            loss = drift_loss(self.bias_logits[indices].to(device), logits, labels)
        else:
            loss = torch.nn.functional.cross_entropy(logits, labels)
        if self.args.ums:
            loss = loss + self.args.ums_weight * self._ums_loss(model, rows, np.random.default_rng(ums_seed))
        return loss

    def _ums_loss(self, model, rows, rng):
        """Mean cross-entropy of the UMS examples of the batch's positive pairs (insertion, deletion, search)."""
        import torch

        from dialshift.models.debias import UMS_TOKENS, ums_examples

        unwrapped = self.accelerator.unwrap_model(model)
        examples, golds, marker_ids, totals = [], [], [], []
        for row in rows:
            candidates, label = self.train_rows["candidates"][row], self.train_rows["label"][row]
            context, response = self.train_rows["context"][row], candidates[label]
            other = candidates[1 - label] if len(candidates) > 1 else None  # an utterance of another dialogue
            for task, token in UMS_TOKENS.items():
                example = ums_examples(context, response, task, rng, other)
                if example is None:
                    continue
                turns, second, gaps, gold = example
                marker = self.tokenizer.convert_tokens_to_ids(token)
                markers = [marker if index in gaps else None for index in range(len(turns) + 1)]
                examples.append(self.encoder.encode(turns, second, markers))
                golds.append(gaps.index(gold))
                marker_ids.append(marker)
                totals.append(len(gaps))
        device = self.accelerator.device
        if not examples:
            return torch.zeros((), device=device)
        inputs = {k: v.to(device) for k, v in self.encoder.collate(examples).items()}
        hidden = unwrapped.base_model(**inputs).last_hidden_state
        scores = unwrapped.ums_head(hidden).squeeze(-1)
        losses = []
        for index, (gold, marker, total) in enumerate(zip(golds, marker_ids, totals, strict=True)):
            positions = (inputs["input_ids"][index] == marker).nonzero().squeeze(-1)
            dropped = total - len(positions)  # truncation keeps the newest tokens: the first markers go
            if len(positions) < 2 or gold < dropped:
                continue
            losses.append(torch.nn.functional.cross_entropy(scores[index, positions][None],
                                                            torch.tensor([gold - dropped], device=device)))
        return torch.stack(losses).mean() if losses else torch.zeros((), device=device)

    # --- selection -----------------------------------------------------------------------------------------------

    def validation_size(self):
        return len(self.validation["id"])

    def validation_outputs(self, model, rows):
        share = {key: [self.validation[key][row] for row in rows] for key in ("context", "candidates")}
        scores = response_scores(model, self.encoder, candidate_pairs(share), self.args.eval_batch_size,
                                 self.accelerator.device).reshape(len(rows), -1)
        return {"scores": scores}

    def validation_score(self, outputs):
        return float(np.mean(outputs["scores"].argmax(axis=1) == np.asarray(self.validation["label"]))), {}

    def save(self, model, output_dir):
        state = {k: v for k, v in model.state_dict().items() if not k.startswith("ums_head.")}
        model.save_pretrained(output_dir, state_dict=state)

    def describe(self):
        return {"backbone": self.backbone, "model_argument": self.args.model, "variant": variant_name(self.args),
                "max_length": self.args.max_length, "train_rows": len(self.train_rows["id"]),
                "train_pairs": len(self.pairs), "input": "[CLS] u1 [EOU] ... uk [EOU] [SEP] r [EOU] [SEP]",
                "score": "logit 1 - logit 0", "biased_model": self.bias_summary}

    def finalize(self, output_dir, selection):
        self.tokenizer.save_pretrained(output_dir)
        return {}


# ----------------------------------------------------------------------------------------------- predictions


def load_model(model_dir, device=None):
    """``(model, encoder, meta)`` of a trained model folder: the sequence classifier in eval mode (on ``device``
    when given), its :class:`~dialshift.models.debias.TurnEncoder` and ``dialshift_model.json``."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from dialshift.models.debias import TurnEncoder
    from dialshift.training import read_model_meta

    meta = read_model_meta(model_dir, task=DebiasTask.name, kind="response selection model",
                           trainer="trainers/debias.py")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    if device is not None:
        model.to(device)
    return model, TurnEncoder(tokenizer, meta["max_length"]), meta


def instance_scores(model, encoder, split: dict, batch_size: int = 64) -> np.ndarray:
    """``(instances, candidates)`` scores (logit 1 - logit 0) of a ranking split's candidates; every instance must
    have the same number of candidates."""
    scores = response_scores(model, encoder, candidate_pairs(split), batch_size, next(model.parameters()).device)
    return scores.reshape(len(split["id"]), -1)


def test_scores(model_dir, dataset, batch_size: int = 64, max_test_instances=None, sample_seed=0,
                device=None, max_adversarial_instances=None) -> dict:
    """``{config: (ids, rows x candidates scores)}`` of ``kor_adv`` (all of it unless ``max_adversarial_instances``)
    and the ``kor_chitchat`` test split by a trained model folder, and its metadata."""
    from dialshift.ranking.data import load_split

    model, encoder, meta = load_model(model_dir, device)
    scores = {}
    for config, limit in ((ADVERSARIAL_CONFIG, max_adversarial_instances), (DEFAULT_CONFIG, max_test_instances)):
        split = load_split(dataset, config, "test", limit, sample_seed)
        scores[config] = (split["id"], instance_scores(model, encoder, split, batch_size))
    return scores, meta


def write_predictions(model_dir, dataset, out_dir, batch_size: int = 64, max_test_instances=None, sample_seed=0,
                      device=None) -> dict:
    """Score ``kor_adv`` and the ``kor_chitchat`` test split with a trained model folder, write
    ``OUT/{config}/{config}.jsonl`` in the formats of :mod:`dialshift.scoring.tasks` and a ``run.json`` beside each;
    return the run descriptions."""
    from dialshift.hub.reading import folder_configs
    from dialshift.io import write_json_atomic
    from dialshift.models.uncertainty import softmax
    from dialshift.scoring.predictions import write_predictions

    tasks = {name: config.task for name, config in folder_configs(dataset).items()}
    scored, meta = test_scores(model_dir, dataset, batch_size, max_test_instances, sample_seed, device)
    runs = {}
    for config, (ids, scores) in scored.items():
        limit = max_test_instances if config == DEFAULT_CONFIG else None
        out = Path(out_dir) / config  # one folder per config: the subsample setting of run.json is per folder
        out.mkdir(parents=True, exist_ok=True)
        write_predictions(out / f"{config}.jsonl", tasks[config], ids,
                          {"scores": scores, "probabilities": softmax(scores, axis=1)})
        runs[config] = {"run": {"model": meta.get("backbone"), "method": meta.get("variant"),
                                "seeds": [meta.get("seed")], "model_dir": str(model_dir)},
                        "scoring": {"max_instances": limit, "sample_seed": sample_seed}}
        write_json_atomic(out / "run.json", runs[config])
    return runs


def predictions_ownership(args) -> dict:
    """The ``--predictions`` folder: never one of the run's inputs or its model folder; an unmarked folder only when
    it holds no config folder of the predictions."""
    return {"inputs": (args.model, args.dataset, Path(args.output_dir)), "writes": (ADVERSARIAL_CONFIG, DEFAULT_CONFIG),
            "flag": "--predictions"}


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_logging()
    try:
        arguments.check_output_dir(args.output_dir, inputs=(args.model, args.dataset))
        if args.predictions:  # before training: a bad --predictions fails at once
            arguments.check_output_dir(args.predictions, **predictions_ownership(args))
        meta = train(DebiasTask(args), args)
        if meta is not None and args.predictions:
            import torch

            arguments.claim_output_dir(args.predictions, "trainers/debias.py --predictions",
                                       **predictions_ownership(args))
            write_predictions(args.output_dir, args.dataset, args.predictions, args.eval_batch_size,
                              args.max_test_instances, args.sample_seed,
                              device="cuda" if torch.cuda.is_available() else "cpu")
            results = score_predictions(args.predictions, args.dataset)
            adversarial, chitchat = results[ADVERSARIAL_CONFIG], results[DEFAULT_CONFIG]
            print(f"{variant_name(args)}: in-domain P@1 {chitchat['recall@1']:.3f}, adversarial P@1 "
                  f"{adversarial['accuracy']:.3f}, adversarial ECE {adversarial['ece']:.3f}")
    except DialshiftError as error:
        print(f"trainers/debias.py: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
