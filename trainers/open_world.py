#!/usr/bin/env python
"""Train open-world intent classifiers on CLINC14-COV / HWU12-COV and score them on test and cov_test.

    python trainers/open_world.py --dataset FOLDER --config clinc14_cov [hwu12_cov_5shot ...] --output-dir DIR
        [--model minilm|tiny|PATH_OR_ID] [--seed 0 --num-seeds 10] [--methods msp energy maha cosine knn adb]
    accelerate launch trainers/open_world.py ...                       # same, through Accelerate
    python trainers/open_world.py ... --checkpointing-steps 20 --resume-from-checkpoint latest
                                  # re-run after an interruption: finished seeds kept, the others resume

Per config and seed (Khosla & Gangadharaiah 2022, §3-§4): the encoder (default MiniLM, offline; the paper used
bert-base-uncased) is fine-tuned with cross-entropy on the in-scope intents of the config's `train` split (AdamW,
lr 2e-5, batch 64, the paper's settings; `--num-epochs` epochs, the weights with the best in-scope accuracy on
`validation` kept) on the runner of :mod:`dialshift.training`. Then every method of
:mod:`dialshift.models.open_world` (MSP, Energy, Mahalanobis, Cosine, KNN-C, ADB) is fitted on the training
features (`--features`: the classifier head's input by default, or mean-pooled last-layer states; Cosine against
every training feature by default, `--cosine-scoring`), its threshold chosen on `validation_hold` by maximising
Acc_in + Recall_out (ADB keeps its own boundaries, learnt as in its released code on training features drawn with
dropout active, early-stopped on the macro-F1 of the in-scope `validation` utterances), and its predictions on
`test` and `cov_test` are written in the submission format of the `open_world_intent` task (`{"id", "prediction",
"score"}` lines) and scored by the task-generic pipeline (:mod:`dialshift.scoring`: F1_All, F1_In, F1_Out, Acc,
AUROC, FPR@95TPR with bootstrap intervals).

Output: DIR/<config>/seed_<s>/{model (weights removed unless --keep-models),
predictions/<method>/<split>/<config>.jsonl, results/<method>/<split>/results.json, outputs.npz};
DIR/summary.json and DIR/summary.md (mean and std over seeds, test beside cov_test);
DIR/confusion_<config>.png (Maha, first seed: test, cov_test without rejection, cov_test).
With `--objective dcloos` the classifier is trained as DCLOOS's pseudo k+1 model instead (K + 1 outputs; in-scope
utterances, open-domain outliers from `--dcloos-outliers` and convex combinations of in-scope features of two classes,
the last two labelled `oos`; cross-entropy on logits / `--dcloos-temperature`; the weights with the best K + 1
validation accuracy kept) and scored as the method `dcloos` (argmax over K + 1). ODIST is not implemented.
"""

import argparse
import contextlib
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.training import (
    Task,
    TrainingArguments,
    add_training_arguments,
    arguments,
    configure_logging,
    recorded_options,
    train,
)
from dialshift.training.runner import CHECKPOINTS

SPLITS = ("test", "cov_test")
FEATURES = ("pooler", "mean")
METRICS = ("f1_all", "f1_in", "f1_out", "accuracy", "auroc", "fpr@95tpr")


def parse_args(argv=None):
    from dialshift.models.open_world import COSINE_SCORING, METHODS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
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
    p.add_argument("--knn-neighbors", type=arguments.positive_int, default=20,
                   help="KNN-C: neighbours of the local outlier factor")
    p.add_argument("--adb-epochs", type=arguments.positive_int, default=100,
                   help="ADB: most boundary-learning epochs (ADB's default)")
    p.add_argument("--adb-patience", type=arguments.positive_int, default=10,
                   help="ADB: stop after this many epochs without a better in-scope validation macro-F1 (ADB's "
                        "wait_patient)")
    p.add_argument("--adb-dropout-passes", type=arguments.non_negative_int, default=5,
                   help="ADB: passes over the training utterances with dropout active; the boundary loss reads one "
                        "per epoch in turn, as ADB's code draws fresh dropout features every epoch (0: eval-mode "
                        "features, boundaries at the median distance)")
    p.add_argument("--replicates", type=arguments.positive_int, default=200,
                   help="bootstrap replicates of each scored file")
    p.add_argument("--keep-models", action="store_true", help="keep the fine-tuned weights of every seed")
    args = p.parse_args(argv)
    if args.objective == "dcloos":
        args.methods = ["dcloos"]
    if args.resume_from_checkpoint not in (None, "latest") and len(args.config) * args.num_seeds > 1:
        p.error("--resume-from-checkpoint FOLDER names one run's checkpoint; with several configs or seeds use "
                "'latest' (finished seeds are kept, unfinished ones resume from their last checkpoint)")
    return args


# ----------------------------------------------------------------------------------------------- data


def load_config(folder, config: str) -> dict:
    """``{split: Dataset}`` of a covariate config, its intent names and the oos id; one-line errors otherwise."""
    import datasets

    from dialshift.hub import folder_configs

    configs = folder_configs(folder)
    if config not in configs:
        raise DialshiftError(f"{folder}: no config {config!r} (it has: {', '.join(sorted(configs)) or 'none'}; "
                             "build it with `dialshift build --family covariate`)")
    if configs[config].task != "open_world_intent":
        raise DialshiftError(f"{folder}: config {config!r} is a {configs[config].task} config, not open_world_intent")
    oos = configs[config].parameters.get("oos_label")
    data = datasets.load_dataset(str(folder), config)
    missing = [split for split in ("train", "validation", "validation_hold", *SPLITS) if split not in data]
    if missing:
        raise DialshiftError(f"{folder}: config {config!r} has no {missing[0]!r} split (rebuild it)")
    names = data["train"].features["label"].names
    if oos is None or not 0 <= oos < len(names) or names[oos] != "oos":
        raise DialshiftError(f"{folder}: config {config!r}: oos_label {oos!r} does not name the 'oos' class of {names}")
    if oos != len(names) - 1:
        raise DialshiftError(f"{folder}: config {config!r}: the oos class must be the last label (found id {oos})")
    return {"data": data, "names": names, "oos": oos}


@contextlib.contextmanager
def head_input(head):
    """While open, ``captured["x"]`` holds the input of the last forward call of ``head`` (the features it reads)."""
    captured = {}
    hook = head.register_forward_pre_hook(lambda module, inputs: captured.__setitem__("x", inputs[0]))
    try:
        yield captured
    finally:
        hook.remove()


class Encoder:
    """Tokenises utterances and runs the classifier, returning logits and features: the input of its head
    (``features="pooler"``) or the last layer's hidden states averaged over each utterance's tokens (``"mean"``)."""

    def __init__(self, tokenizer, max_length: int, features: str = "pooler"):
        if features not in FEATURES:
            raise DialshiftError(f"features {features!r}: one of {', '.join(FEATURES)}")
        self.tokenizer, self.max_length, self.features = tokenizer, max_length, features

    def batch(self, texts, device):
        encoded = self.tokenizer(list(texts), truncation=True, max_length=self.max_length, padding=True,
                                 return_tensors="pt")
        return {key: value.to(device) for key, value in encoded.items()}

    def outputs(self, model, texts, batch_size: int, device, *, dropout_passes: int = 0, seed: int = 0):
        """:class:`~dialshift.models.open_world.Outputs` of ``texts`` (length-sorted batches, input order kept), read
        in eval mode; with ``dropout_passes``, also that many passes of features with dropout active (for ADB), their
        draws seeded by ``seed``."""
        import torch

        from dialshift.models.open_world import Outputs

        logits, features = self._forward(model, texts, batch_size, device, train_mode=False)
        passes = []
        if dropout_passes:  # on a forked generator: the caller's random stream (e.g. training dropout) is untouched
            with torch.random.fork_rng(devices=[device] if torch.device(device).type == "cuda" else []):
                torch.manual_seed(seed)
                passes = [self._forward(model, texts, batch_size, device, train_mode=True)[1]
                          for _ in range(dropout_passes)]
            model.eval()
        return Outputs(logits, features, dropout_features=passes)

    def _forward(self, model, texts, batch_size: int, device, *, train_mode: bool):
        """``(logits, features)`` arrays of ``texts``, with dropout active when ``train_mode``."""
        import torch

        from dialshift.training import sorted_batches

        head = getattr(model, "classifier", None) or getattr(model, "score", None)
        if head is None:
            raise DialshiftError(f"model {type(model).__name__} has no 'classifier' head to read features from")
        lengths = [len(text) for text in texts]
        logits, features = [None] * len(texts), [None] * len(texts)
        model.train(train_mode)
        with torch.no_grad(), head_input(head) as captured:
            for rows in sorted_batches(lengths, batch_size):
                batch = self.batch([texts[r] for r in rows], device)
                result = model(**batch, output_hidden_states=self.features == "mean")
                if self.features == "mean":
                    mask = batch["attention_mask"].unsqueeze(-1).to(result.hidden_states[-1].dtype)
                    x = (result.hidden_states[-1] * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
                else:
                    x = captured["x"]
                    x = x[:, 0] if x.dim() == 3 else x  # heads that read the sequence (RoBERTa) take its first token
                for i, row in enumerate(rows):
                    logits[row], features[row] = result.logits[i].float().cpu().numpy(), x[i].float().cpu().numpy()
        return np.stack(logits), np.stack(features)


class IntentTask(Task):
    """Cross-entropy over the in-scope intents; selection on in-scope validation accuracy."""

    name, metric = "intent_classification", "accuracy"

    def __init__(self, args, loaded: dict, seed: int):
        self.args, self.seed = args, seed
        self.names, self.oos = loaded["names"], loaded["oos"]
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
        model, tokenizer, self.backbone = load_backbone(self.args.model, self.seed, num_labels=self.oos)
        self.tokenizer, self.encoder = tokenizer, Encoder(tokenizer, self.args.max_length, self.args.features)
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


def read_outliers(source: str, data_dir=None) -> list[str]:
    """DCLOOS's open-domain outlier utterances from ``source`` ('none', 'dailydialog' or a text file), de-duplicated
    in order of first appearance."""
    from dialshift.data_dir import resolve_data_dir

    if source == "none":
        return []
    path = resolve_data_dir(data_dir) / "dailydialog" / "train" / "dialogues_train.txt" if source == "dailydialog" \
        else Path(source)
    if not path.is_file():
        raise DialshiftError(f"--dcloos-outliers: {path} is not a file (give a text file, 'dailydialog' or 'none')")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise DialshiftError(f"--dcloos-outliers: {path} is not UTF-8 text (byte {error.start})") from error
    utterances = [part.strip() for line in text.splitlines() for part in line.split("__eou__")]
    utterances = list(dict.fromkeys(u for u in utterances if u))
    if not utterances:
        raise DialshiftError(f"--dcloos-outliers: {path} holds no utterance")
    return utterances


class DcloosTask(IntentTask):
    """DCLOOS (Zhan et al. 2021): cross-entropy over K + 1 classes on in-scope utterances, open-domain outliers and
    convex combinations of in-scope features of two classes (the classifier head applied to the mixture), both kinds
    of outlier labelled ``oos``; logits divided by a temperature; selection on K + 1 accuracy over all of
    ``validation`` (in-scope and out-of-scope), as DCLOOS's code selects."""

    def __init__(self, args, loaded: dict, seed: int):
        super().__init__(args, loaded, seed)
        self.outliers = read_outliers(args.dcloos_outliers, args.data_dir)
        validation = loaded["data"]["validation"]
        self.val_texts, self.val_labels = list(validation["text"]), np.asarray(validation["label"])

    def build(self, accelerator):
        import torch

        from dialshift.models.backbones import load_backbone

        self.accelerator = accelerator
        model, tokenizer, self.backbone = load_backbone(self.args.model, self.seed, num_labels=self.oos + 1)
        if not isinstance(getattr(model, "classifier", None), torch.nn.Linear):
            raise DialshiftError(f"--objective dcloos needs a model whose 'classifier' is one linear layer over a "
                                 f"pooled vector (BERT-style); {type(model).__name__} has another head")
        self.tokenizer, self.encoder = tokenizer, Encoder(tokenizer, self.args.max_length, self.args.features)
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


# ----------------------------------------------------------------------------------------------- one run


def write_predictions(path: Path, ids, predictions, scores, num_labels: int) -> Path:
    """The ``open_world_intent`` submission file: ``{"id", "prediction", "score"}`` per line, atomically."""
    from dialshift.io import atomic_write

    predictions = np.asarray(predictions)
    bad = np.flatnonzero((predictions < 0) | (predictions >= num_labels))
    if len(bad):
        raise DialshiftError(f"{path}: prediction {int(predictions[bad[0]])} of {ids[bad[0]]!r} is not a label id "
                             f"(0..{num_labels - 1})")
    if len(ids) != len(set(ids)):
        raise DialshiftError(f"{path}: an id occurs twice")
    lines = [json.dumps({"id": i, "prediction": int(p), "score": float(s)}) for i, p, s
             in zip(ids, predictions, scores, strict=True)]
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(path, "\n".join(lines) + "\n")


def score_file(dataset, config: str, split: str, path: Path, replicates: int, out_dir: Path) -> dict:
    """Score one predictions file with the task-generic pipeline; write its results; return the point metrics."""
    from dialshift.scoring import ScoringSettings, score_files, write_results

    document = score_files({config: path}, ScoringSettings(Path(dataset), split=split, replicates=replicates))
    write_results(out_dir, document, plots=False, name=config)
    return document["results"][config]


def run_seed(args, config: str, loaded: dict, seed: int, out: Path) -> dict:
    """Train one seed, fit and score every method; ``{method: {split: metrics}}`` plus timing."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from dialshift.models.open_world import fit_methods

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
    model = AutoModelForSequenceClassification.from_pretrained(model_dir)
    device = task.accelerator.device
    model.to(device)
    data, oos = loaded["data"], loaded["oos"]
    adb = "adb" in args.methods
    outputs = {split: task.encoder.outputs(model, list(data[split]["text"]), args.eval_batch_size, device,
                                           dropout_passes=args.adb_dropout_passes if adb and split == "train" else 0,
                                           seed=seed)
               for split in ("train", "validation_hold", *SPLITS)}
    validation = (task.encoder.outputs(model, task.val_texts, args.eval_batch_size, device), task.val_labels) \
        if adb else None
    methods = fit_methods(args.methods, outputs["train"], task.labels, outputs["validation_hold"],
                          np.asarray(data["validation_hold"]["label"]), oos, seed=seed, validation=validation,
                          knn_neighbors=args.knn_neighbors, adb_epochs=args.adb_epochs,
                          adb_patience=args.adb_patience, cosine_scoring=args.cosine_scoring)
    results, saved = {}, {}
    for name, method in methods.items():
        for split in SPLITS:
            predictions, scores = method.predict(outputs[split], oos)
            path = write_predictions(out / "predictions" / name / split / f"{config}.jsonl", list(data[split]["id"]),
                                     predictions, scores, len(loaded["names"]))
            metrics = score_file(args.dataset, config, split, path, args.replicates, out / "results" / name / split)
            results.setdefault(name, {})[split] = metrics
            saved[f"{name}/{split}"] = predictions
    np.savez_compressed(out / "outputs.npz", **{f"logits/{split}": outputs[split].logits for split in SPLITS},
                        **{f"gold/{split}": np.asarray(data[split]["label"]) for split in SPLITS}, **saved)
    if not args.keep_models:
        for file in model_dir.glob("*.safetensors"):
            file.unlink()
    del model
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    fitted = {"adb": {key: methods["adb"].state[key] for key in ("epochs_run", "kept_epoch", "validation_f1",
                                                                 "dropout_passes")}} if adb else {}
    if "knn" in methods:
        fitted["knn"] = {"n_neighbors": methods["knn"].state["n_neighbors"]}
    options = {"features": args.features, **({"cosine_scoring": args.cosine_scoring} if "cosine" in methods else {})}
    return {"results": results, "thresholds": {n: m.threshold for n, m in methods.items()}, "fitted": fitted,
            "options": options,
            "train_seconds": train_seconds,
            "train_examples": round(len(task.labels) * meta["steps"] / -(-len(task.labels) // args.batch_size)),
            "train_steps_per_second": meta.get("train_steps_per_second"), "selected_step": meta["selected_step"],
            "validation_accuracy": meta["validation"]["accuracy"]}


# ----------------------------------------------------------------------------------------------- summary


def summarise(runs: dict) -> dict:
    """``{config: {method: {split: {metric: {mean, std, n}}}}}`` over seeds (std: sample std, ddof 1)."""
    summary = {}
    for config, seeds in runs.items():
        for seed_result in seeds.values():
            for method, splits in seed_result["results"].items():
                for split, metrics in splits.items():
                    for metric in METRICS:
                        summary.setdefault(config, {}).setdefault(method, {}).setdefault(split, {}) \
                            .setdefault(metric, []).append(metrics.get(metric))
    for methods in summary.values():
        for splits in methods.values():
            for metrics in splits.values():
                for metric, values in metrics.items():
                    array = np.asarray([v for v in values if v is not None], dtype=float)
                    metrics[metric] = {"mean": float(array.mean()) if len(array) else None,
                                       "std": float(array.std(ddof=1)) if len(array) > 1 else 0.0, "n": len(array)}
    return summary


def summary_markdown(summary: dict) -> str:
    from dialshift.models.open_world import LABELS

    lines = []
    for config, methods in summary.items():
        lines += [f"### {config}", "", "| method | " + " | ".join(f"test {m}" for m in METRICS[:4]) + " | "
                  + " | ".join(f"cov {m}" for m in METRICS[:4]) + " | test AUROC | cov AUROC |",
                  "|---|" + "---:|" * 10]
        for method, splits in methods.items():
            cell = lambda split, metric, splits=splits: "{:.1f} ± {:.1f}".format(  # noqa: E731
                100 * splits[split][metric]["mean"], 100 * splits[split][metric]["std"])
            cells = [cell(s, m) for s in SPLITS for m in METRICS[:4]] + [cell(s, "auroc") for s in SPLITS]
            n = splits["test"]["f1_all"]["n"]
            lines.append(f"| {LABELS[method]} (n={n}) | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def confusion_figure(saved, names: list[str], path: Path, method: str = "maha") -> Path:
    """Figure 1 of the paper: confusion matrices of ``method`` on test (open world), cov_test in-scope utterances
    without rejection (closed world: covariate shift alone) and cov_test (open world: both shifts). ``saved`` maps
    ``gold/<split>`` and ``<method>/<split>`` to arrays, and ``logits/cov_test`` (or its ``argmax/cov_test``) too: a
    seed's ``outputs.npz``."""
    import matplotlib.pyplot as plt
    from sklearn.metrics import confusion_matrix

    oos = len(names) - 1
    labels = list(range(len(names)))
    panels = [("test (open world)", saved["gold/test"], saved[f"{method}/test"])]
    gold = saved["gold/cov_test"]
    closed = saved["argmax/cov_test"] if "argmax/cov_test" in saved else \
        saved["logits/cov_test"][:, :oos].argmax(axis=1)
    inside = gold != oos
    panels.append(("cov_test, in-scope, no rejection", gold[inside], closed[inside]))
    panels.append(("cov_test (open world)", gold, saved[f"{method}/cov_test"]))
    figure, axes = plt.subplots(1, 3, figsize=(19, 6.4))
    for axis, (title, y, p) in zip(axes, panels, strict=True):
        matrix = confusion_matrix(y, p, labels=labels)
        axis.imshow(np.log1p(matrix), cmap="Blues")
        for (i, j), value in np.ndenumerate(matrix):
            if value:
                axis.text(j, i, str(value), ha="center", va="center", fontsize=6,
                          color="white" if value > matrix.max() / 3 else "black")
        axis.set_xticks(labels, names, rotation=90, fontsize=7)
        axis.set_yticks(labels, names, fontsize=7)
        axis.set_title(title, fontsize=9)
        axis.set_xlabel("predicted")
    axes[0].set_ylabel("gold")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def main(argv=None) -> int:
    from dialshift.io import write_json_atomic

    args = parse_args(argv)
    configure_logging()
    out = Path(args.output_dir)
    try:
        arguments.claim_output_dir(out, "trainers/open_world.py", inputs=(args.model, args.dataset),
                                   writes=("summary.json", "summary.md", *args.config), legacy=("summary.json",))
        runs, timing = {}, {}
        for config in args.config:
            loaded = load_config(args.dataset, config)
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
                confusion_figure(np.load(out / config / f"seed_{first}" / "outputs.npz"), loaded["names"],
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
