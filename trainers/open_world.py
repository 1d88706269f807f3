#!/usr/bin/env python
"""Train open-world intent classifiers on CLINC14-COV / HWU12-COV and score them on test and cov_test.

    python -m dialshift_trainers.open_world --dataset FOLDER --config clinc14_cov [hwu12_cov_5shot ...] --output-dir DIR
        [--model minilm|tiny|PATH_OR_ID] [--seed 0 --num-seeds 10] [--methods msp energy maha cosine knn adb]
    accelerate launch -m dialshift_trainers.open_world ...            # same, through Accelerate
    python -m dialshift_trainers.open_world ... --checkpointing-steps 20 --resume-from-checkpoint latest
                                  # re-run after an interruption: finished seeds kept, the others resume

Per config and seed (Khosla & Gangadharaiah 2022, §3-§4): the encoder (default MiniLM, offline; the paper used
bert-base-uncased) is fine-tuned with cross-entropy on the in-scope intents of the config's `train` split (AdamW,
lr 2e-5, batch 64, the paper's settings; the weights with the best in-scope accuracy on `validation` kept) on the
runner of dialshift.training. Then every method (MSP, Energy, Mahalanobis, Cosine, KNN-C, ADB; see
dialshift.models.open_world) is fitted on the training features, thresholded on `validation_hold` (Acc_in +
Recall_out), and its predictions on `test` and `cov_test` are written and scored (dialshift.open_world_evaluation).

Output: DIR/<config>/seed_<s>/{model (weights removed unless --keep-models),
predictions/<method>/<split>/<config>.jsonl, results/<method>/<split>/results.json, outputs.npz};
DIR/summary.json and DIR/summary.md (mean, sample sd, min and max over seeds, test beside cov_test);
DIR/confusion_<config>.png (Maha, first seed: test, cov_test without rejection, cov_test).
With `--objective dcloos` the classifier is DCLOOS's pseudo k+1 model instead (K + 1 outputs, trained with open-domain
and convex pseudo outliers labelled `oos`), scored as the method `dcloos`. ODIST is not implemented.
"""

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.models.intent_encoder import FEATURES, IntentEncoder, head_input
from dialshift.models.open_world_data import load_open_world_config, read_outlier_utterances
from dialshift.open_world_evaluation import evaluate_methods, summarise, summary_markdown
from dialshift.training import Task, TrainingArguments, add_training_arguments, arguments, train, trainer_parser
from dialshift.training.runner import CHECKPOINTS


def parse_args(argv=None):
    from dialshift.models.open_world import COSINE_SCORING, METHODS

    p = trainer_parser(__doc__, "open_world")
    p.add_argument("--dataset", required=True, help="dialshift dataset folder with the covariate configs")
    p.add_argument("--config", nargs="+", default=["clinc14_cov"], help="configs to train and score, in turn")
    p.add_argument("--model", default="minilm",
                   help="backbone: 'minilm' (all-MiniLM-L6-v2, offline, default), 'tiny' (random 2-layer BERT, tests), "
                        "or a local folder / Hub id (e.g. bert-base-uncased, the paper's)")
    add_training_arguments(p, learning_rate=2e-5, num_epochs=10)
    p.add_argument("--num-seeds", type=arguments.positive_int, default=10,
                   help="seeds --seed, --seed+1, ... (the paper: 10)")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS,
                   help="methods on the cross-entropy classifier (ignored with --objective dcloos)")
    p.add_argument("--objective", choices=("ce", "dcloos"), default="ce",
                   help="'ce': cross-entropy over the K in-scope intents, then the --methods; 'dcloos': DCLOOS's K + 1 "
                        "training with pseudo outliers (Zhan et al. 2021), scored as the method 'dcloos'")
    p.add_argument("--dcloos-outliers", default="dailydialog", metavar="SOURCE",
                   help="DCLOOS's open-domain outliers: 'dailydialog' (DailyDialog's training utterances under "
                        "--data-dir; DCLOOS's code used SQuAD, which is not available offline), a text file (one "
                        "utterance per line, or DailyDialog's '__eou__' lines), or 'none' (convex outliers only)")
    p.add_argument("--data-dir", default=None, help="raw data folder for --dcloos-outliers dailydialog "
                                                    "(default: $DIALSHIFT_DATA_DIR or ../shared/data)")
    p.add_argument("--dcloos-open", type=arguments.non_negative_float, default=1.0, metavar="R",
                   help="open-domain outliers per in-scope utterance of a batch (DCLOOS's code: 200 per 200)")
    p.add_argument("--dcloos-convex", type=arguments.non_negative_float, default=2.0, metavar="R",
                   help="convex pseudo outliers per in-scope utterance of a batch (DCLOOS's code: 400 per 200)")
    p.add_argument("--dcloos-temperature", type=arguments.positive_float, default=0.1,
                   help="the logits are divided by this in the loss (DCLOOS's code: 0.1)")
    p.add_argument("--batch-size", type=arguments.positive_int, default=64)
    p.add_argument("--eval-batch-size", type=arguments.positive_int, default=128)
    p.add_argument("--max-length", type=arguments.positive_int, default=64, help="tokens per utterance")
    p.add_argument("--features", choices=FEATURES, default="pooler",
                   help="what the feature-space methods read: 'pooler' (default: the classifier head's input, BERT's "
                        "[CLS] pooler output) or 'mean' (the last layer's hidden states averaged over the utterance's "
                        "tokens; TEXTOIR's ADB also passes them through a trained dense layer, which is not done here)")
    p.add_argument("--cosine-scoring", choices=COSINE_SCORING, default="nearest",
                   help="Cosine's score: the largest cosine similarity to every training feature ('nearest', default, "
                        "as the method's released code) or to the class centroids ('centroid')")
    p.add_argument("--knn-neighbors", type=arguments.positive_int, default=20, help="KNN-C: neighbours of the LOF")
    p.add_argument("--adb-epochs", type=arguments.positive_int, default=100, help="ADB: most boundary epochs")
    p.add_argument("--adb-patience", type=arguments.positive_int, default=10,
                   help="ADB: epochs without a better in-scope validation macro-F1 before it stops (wait_patient)")
    p.add_argument("--adb-dropout-passes", type=arguments.non_negative_int, default=5,
                   help="ADB: passes over the training utterances with dropout active, one read per epoch in turn, as "
                        "ADB's code draws fresh dropout features every epoch (0: eval-mode features)")
    p.add_argument("--replicates", type=arguments.positive_int, default=200, help="bootstrap replicates per file")
    p.add_argument("--keep-models", action="store_true", help="keep the fine-tuned weights of every seed")
    args = p.parse_args(argv)
    if args.objective == "dcloos":
        args.methods = ["dcloos"]
    if args.resume_from_checkpoint not in (None, "latest") and len(args.config) * args.num_seeds > 1:
        p.error("--resume-from-checkpoint FOLDER names one run's checkpoint; with several configs or seeds use "
                "'latest' (finished seeds are kept, unfinished ones resume from their last checkpoint)")
    return args


class IntentTask(Task):
    """Cross-entropy over the in-scope intents; selection on in-scope validation accuracy."""

    name, metric = "intent_classification", "accuracy"

    def __init__(self, args, loaded: dict, seed: int):
        self.args, self.seed = args, seed
        self.names, self.oos = loaded["names"], loaded["oos"]
        self.num_labels = self.oos  # the in-scope intents; the oos id is the last label
        train_split = loaded["data"]["train"]
        labels = np.asarray(train_split["label"])
        if (labels == self.oos).any():
            raise DialshiftError("the train split holds 'oos' utterances; open-world training is on in-scope ones")
        self.texts, self.labels = list(train_split["text"]), labels
        validation = loaded["data"]["validation"]
        keep = np.asarray(validation["label"]) != self.oos
        self.val_texts = [text for text, k in zip(validation["text"], keep, strict=True) if k]
        self.val_labels = np.asarray(validation["label"])[keep]

    def build(self, accelerator):
        from dialshift.models.backbones import load_backbone

        self.accelerator = accelerator
        model, tokenizer, self.backbone = load_backbone(self.args.model, self.seed, num_labels=self.num_labels)
        self.tokenizer, self.encoder = tokenizer, IntentEncoder(tokenizer, self.args.max_length, self.args.features)
        return model

    def epoch_batches(self, epoch, rng):
        order = rng.permutation(len(self.labels))
        return [order[i : i + self.args.batch_size] for i in range(0, len(order), self.args.batch_size)]

    def loss(self, model, rows):
        import torch

        device = self.accelerator.device
        logits = model(**self.encoder.batch([self.texts[r] for r in rows], device)).logits
        return torch.nn.functional.cross_entropy(logits, torch.as_tensor(self.labels[rows], device=device))

    def validation_size(self):
        return len(self.val_texts)

    def validation_outputs(self, model, rows):
        texts = [self.val_texts[row] for row in rows]
        return {"logits": self.encoder.outputs(model, texts, self.args.eval_batch_size, self.accelerator.device).logits}

    def validation_score(self, outputs):
        return float(np.mean(outputs["logits"].argmax(axis=1) == self.val_labels)), {}

    def describe(self):
        return {"backbone": self.backbone, "model_argument": self.args.model, "max_length": self.args.max_length,
                "intents": self.names[: self.oos], "train_instances": len(self.labels)}

    def finalize(self, output_dir, selection):
        self.tokenizer.save_pretrained(output_dir)
        return {}


class DcloosTask(IntentTask):
    """DCLOOS (Zhan et al. 2021): cross-entropy over K + 1 classes on in-scope utterances, open-domain outliers and
    convex combinations of in-scope features of two classes (the classifier head applied to the mixture), both kinds
    of outlier labelled ``oos``; logits divided by a temperature; selection on K + 1 accuracy over all of
    ``validation`` (in-scope and out-of-scope), as DCLOOS's code selects."""

    def __init__(self, args, loaded: dict, seed: int):
        super().__init__(args, loaded, seed)
        self.num_labels = self.oos + 1
        self.outliers = read_outlier_utterances(args.dcloos_outliers, args.data_dir)
        validation = loaded["data"]["validation"]
        self.val_texts, self.val_labels = list(validation["text"]), np.asarray(validation["label"])

    def build(self, accelerator):
        import torch

        model = super().build(accelerator)
        if not isinstance(getattr(model, "classifier", None), torch.nn.Linear):
            raise DialshiftError(f"--objective dcloos needs a model whose 'classifier' is one linear layer over a "
                                 f"pooled vector (BERT-style); {type(model).__name__} has another head")
        return model

    def epoch_batches(self, epoch, rng):
        batches = []
        for rows in super().epoch_batches(epoch, rng):
            count = round(len(rows) * self.args.dcloos_open) if self.outliers else 0
            batches.append({"rows": rows, "outliers": rng.integers(0, len(self.outliers), count) if count else [],
                            "pair_seed": int(rng.integers(2**31))})
        return batches

    def loss(self, model, batch):
        import torch

        from dialshift.models.open_world import convex_pairs

        rows, outliers = batch["rows"], list(batch["outliers"])
        device = self.accelerator.device
        texts = [self.texts[r] for r in rows] + [self.outliers[o] for o in outliers]
        labels = np.concatenate([self.labels[rows], np.full(len(outliers), self.oos)])
        head = self.accelerator.unwrap_model(model).classifier
        with head_input(head) as captured:
            logits = model(**self.encoder.batch(texts, device)).logits
        pair_rng = np.random.default_rng([batch["pair_seed"], self.accelerator.process_index])
        first, second, weight = convex_pairs(self.labels[rows], round(len(rows) * self.args.dcloos_convex), pair_rng)
        if len(first):
            x = captured["x"]
            weight = torch.as_tensor(weight, dtype=x.dtype, device=device)[:, None]
            logits = torch.cat([logits, head(weight * x[first] + (1 - weight) * x[second])])
            labels = np.concatenate([labels, np.full(len(first), self.oos)])
        return torch.nn.functional.cross_entropy(logits / self.args.dcloos_temperature,
                                                 torch.as_tensor(labels, device=device))

    def describe(self):
        return {**super().describe(), "objective": "dcloos", "open_domain_outliers": len(self.outliers),
                "outlier_source": self.args.dcloos_outliers}


def run_seed(args, config: str, loaded: dict, seed: int, out: Path) -> dict:
    """Train one seed, fit and score every method; ``{method: {split: metrics}}`` plus timing."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from dialshift.training import recorded_options

    model_dir = out / "model"
    task = (DcloosTask if args.objective == "dcloos" else IntentTask)(args, loaded, seed)
    resume = args.resume_from_checkpoint
    if resume == "latest" and not list((model_dir / CHECKPOINTS).glob("step_*")):
        resume = None  # this seed saved no checkpoint yet: it starts afresh
    train_args = dataclasses.replace(TrainingArguments.from_namespace(args), output_dir=model_dir, seed=seed,
                                     resume_from_checkpoint=resume)
    hyper = recorded_options(args, "dataset")
    started = time.perf_counter()
    meta = train(task, train_args, {**hyper, "config": config, "seed": seed})
    train_seconds = time.perf_counter() - started
    if meta is None:  # not the main process
        return {}
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).to(task.accelerator.device)
    evaluated = evaluate_methods(model, task.encoder, loaded, (task.val_texts, task.val_labels), out,
                                 dataset=args.dataset, config=config, methods=args.methods, seed=seed,
                                 batch_size=args.eval_batch_size, replicates=args.replicates,
                                 dropout_passes=args.adb_dropout_passes, knn_neighbors=args.knn_neighbors,
                                 adb_epochs=args.adb_epochs, adb_patience=args.adb_patience,
                                 cosine_scoring=args.cosine_scoring)
    for file in [] if args.keep_models else model_dir.glob("*.safetensors"):
        file.unlink()
    del model
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return {**evaluated, "train_seconds": train_seconds,
            "train_examples": round(len(task.labels) * meta["steps"] / -(-len(task.labels) // args.batch_size)),
            "train_steps_per_second": meta.get("train_steps_per_second"), "selected_step": meta["selected_step"],
            "validation_accuracy": meta["validation"]["accuracy"]}


def main(argv=None) -> int:
    from dialshift.io import write_json_atomic
    from dialshift.plots import open_world_confusion_figure
    from dialshift.training import configure_logging

    args = parse_args(argv)
    configure_logging()
    out = Path(args.output_dir)
    try:
        arguments.claim_output_dir(out, "trainers/open_world.py", inputs=(args.model, args.dataset),
                                   writes=("summary.json", "summary.md", *args.config), legacy=("summary.json",))
        runs, timing = {}, {}
        for config in args.config:
            loaded = load_open_world_config(args.dataset, config)
            for seed in range(args.seed, args.seed + args.num_seeds):
                run_dir = out / config / f"seed_{seed}"
                if args.resume_from_checkpoint == "latest" and (run_dir / "run.json").is_file():
                    runs.setdefault(config, {})[seed] = json.loads((run_dir / "run.json").read_text())
                    timing.setdefault(config, []).append(runs[config][seed]["train_seconds"])
                    print(f"{config} seed {seed}: finished earlier, kept {run_dir / 'run.json'}", flush=True)
                    continue
                result = run_seed(args, config, loaded, seed, run_dir)
                if not result:
                    continue
                runs.setdefault(config, {})[seed] = result
                write_json_atomic(run_dir / "run.json", result)
                timing.setdefault(config, []).append(result["train_seconds"])
                print(f"{config} seed {seed}: " + ", ".join(
                    f"{m} F1_All {r['test']['f1_all']:.3f}/{r['cov_test']['f1_all']:.3f}"
                    for m, r in result["results"].items()), flush=True)
            if config in runs:
                first = min(runs[config])
                open_world_confusion_figure(np.load(out / config / f"seed_{first}" / "outputs.npz"), loaded["names"],
                                            out / f"confusion_{config}.png",
                                            method="maha" if "maha" in args.methods else args.methods[0])
        if runs:
            summary = summarise(runs)
            write_json_atomic(out / "summary.json", {"summary": summary, "train_seconds": timing,
                                                    "arguments": {k: v for k, v in vars(args).items()}})
            (out / "summary.md").write_text(summary_markdown(summary), encoding="utf-8")
    except DialshiftError as error:
        print(f"trainers/open_world.py: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
