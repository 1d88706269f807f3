"""``dialshift evaluate`` on ``open_world_intent`` configs (CLINC14-COV, HWU12-COV): a classifier's MSP.

The model is a Hugging Face ``AutoModelForSequenceClassification`` folder whose head has one label per known intent
of the config (:mod:`dialshift.models.adapters.classifier`). Each utterance gets the softmax of its logits; the class
is the argmax, and the utterance is out-of-scope when its maximum softmax probability is below a threshold chosen on
the config's ``validation_hold`` split by the project's own MSP method (:class:`dialshift.models.open_world.Method`
``"msp"``: the threshold maximising ``Acc_in + Recall_out``, as ``trainers/open_world.py`` chooses it). The
evaluated splits are ``--split`` and its covariate-shifted counterpart: ``test`` and ``cov_test``, or with
``--split lite`` the lite track's ``lite`` and ``cov_lite`` (:mod:`dialshift.lite`). Per split::

    OUT/msp/<split>/predictions/<config>.jsonl   {"id", "prediction" (label id; oos for a rejection), "score" (MSP)}
    OUT/msp/<split>/predictions/run.json         (the run and its scoring settings: `dialshift score` reads them)
    OUT/msp/<split>/results.json, results.md     (F1_All, F1_In, F1_Out, Acc, AUROC, FPR@95TPR with intervals)

and ``OUT/results.md`` with both splits side by side. ``OUT/msp/test/predictions`` (or ``lite/predictions``), with
``OUT/msp/cov_test/predictions`` (``cov_lite``) copied into it as ``cov_test/`` and a ``submission.json`` beside it, is
a leaderboard submission (full or lite track; docs/leaderboard.md). Every distinct utterance of every
config and split is tokenized and classified once. One run evaluates configs of one intent set (a benchmark and its
few-shot variants): a head fits one.
"""

from pathlib import Path

import numpy as np

from dialshift import __version__
from dialshift.errors import DialshiftError

TASK = "open_world_intent"
METHOD = "msp"
#: The split thresholds are chosen on.
HOLD_SPLIT = "validation_hold"
COLUMNS = ("id", "text", "label")


def open_world_configs(settings) -> list[str] | None:
    """The configs of ``settings`` when they are ``open_world_intent`` configs, None when none is; a one-line error
    when the selection mixes them with other tasks."""
    from dialshift.configs import expand_patterns
    from dialshift.hub.reading import data_files, folder_configs

    if not settings.patterns:
        return None
    names = expand_patterns(settings.patterns, list(data_files(settings.dataset)), hint="the dataset's configs")
    typed = folder_configs(settings.dataset)
    open_world = [name for name in names if name in typed and typed[name].task == TASK]
    if not open_world:
        return None
    if len(open_world) != len(names):
        other = next(name for name in names if name not in open_world)
        raise DialshiftError(f"{settings.dataset}: --configs mixes open_world_intent configs ({open_world[0]!r}) with "
                             f"{other!r}; evaluate the open_world_intent configs in a run of their own")
    return names


def check_classifier_folder(path, model_type: str) -> None:
    """A one-line error unless ``path`` is a sequence-classification folder and ``model_type`` allows it."""
    import json

    from dialshift.models.adapters import detect_model_type

    if model_type not in ("auto", "classifier"):
        raise DialshiftError(f"--model-type {model_type}: open_world_intent configs are scored by a classifier's MSP; "
                             "use --model-type auto or classifier")
    detected = detect_model_type(path)
    config = Path(path) / "config.json"
    architectures = json.loads(config.read_text()).get("architectures") or [] if config.is_file() else []
    if any(name.endswith("ForSequenceClassification") for name in architectures):
        return
    reason = {"bi-encoder": "a sentence-embedding model has no intent head (a nearest-centroid rule fitted on the "
                            "config's training split would be a trained classifier, not a zero-shot baseline)",
              "causal-lm": "a causal LM has no intent head",
              "ranker": "a response ranker scores (context, candidate) pairs, not intents"}.get(detected, detected)
    raise DialshiftError(f"{path}: open_world_intent configs need an AutoModelForSequenceClassification folder with "
                         f"one label per known intent; {reason} (train one with `python -m "
                         "dialshift_trainers.open_world`, or fine-tune any classifier)")


def config_labels(dataset, name: str, files: dict) -> tuple[list[str], int]:
    """``(label names, oos id)`` of an ``open_world_intent`` config (the oos class last, as the family builds it)."""
    import pyarrow.parquet as pq
    from datasets import Features

    from dialshift.hub.reading import folder_configs

    oos = folder_configs(dataset)[name].parameters.get("oos_label")
    try:
        names = Features.from_arrow_schema(pq.read_schema(files[name][HOLD_SPLIT][0]))["label"].names
    except (KeyError, AttributeError, OSError) as error:
        raise DialshiftError(f"{dataset}: config {name!r}: no labelled {HOLD_SPLIT!r} split to choose the MSP "
                             f"threshold on ({error}); rebuild it with `dialshift build --family covariate`") from error
    if oos is None or oos != len(names) - 1 or names[oos] != "oos":
        raise DialshiftError(f"{dataset}: config {name!r}: oos_label {oos!r} is not the last label 'oos' of {names}")
    return list(names), int(oos)


def evaluated_splits(files: dict, name: str, split: str) -> list[str]:
    """``split`` and the config's second test splits paired with it (``cov_test``, ``cov_lite``:
    :func:`dialshift.lite.second_splits`, the rule the leaderboard asks a submission's files by)."""
    from dialshift.lite import second_splits

    if split not in files[name]:
        raise DialshiftError(f"config {name!r} has no {split!r} split (it has: {', '.join(files[name])})")
    return [split, *second_splits(files[name], split)]


def evaluate_open_world(settings, names: list[str]) -> dict:
    """Classify, threshold, write and score (see the module docstring); return ``{"msp/<split>": results.json}``."""
    import torch

    from dialshift.hub.reading import data_files
    from dialshift.io import write_json_atomic
    from dialshift.models.adapters.classifier import IntentClassifier
    from dialshift.models.open_world import Method, Outputs
    from dialshift.models.ranker import precision_context, resolve_attention, resolve_precision
    from dialshift.ranking.data import read_columns
    from dialshift.ranking.settings import DEFAULT_BATCH_SIZE, check_scoring_options, scoring_settings
    from dialshift.scoring import check_output_dir, score_directory
    from dialshift.scoring.pipeline import RESULTS_WRITES, RUN_FILE, claim_output_dir, record_output_dir, write_results
    from dialshift.scoring.predictions import write_predictions
    from dialshift.scoring.report import write_report

    writes = (*RESULTS_WRITES, METHOD)
    settings.out_dir = check_output_dir(settings.out_dir, writes=writes)
    check_scoring_options(settings)
    if list(settings.methods) != ["vanilla"]:
        raise DialshiftError(f"--method {' '.join(settings.methods)}: open_world_intent configs are scored by one "
                             "classifier's maximum softmax probability; use --method vanilla (the default)")
    if len(settings.model_dirs) != 1:
        raise DialshiftError("open_world_intent configs: give one --model-dir (a sequence-classification folder)")
    model_dir = Path(settings.model_dirs[0])
    check_classifier_folder(model_dir, settings.model_type)
    files = data_files(settings.dataset)
    labels = {name: config_labels(settings.dataset, name, files) for name in names}
    splits = {name: evaluated_splits(files, name, settings.split) for name in names}
    split_writes = (*RESULTS_WRITES, RUN_FILE, "predictions")
    for split in dict.fromkeys(s for name in names for s in splits[name]):
        check_output_dir(settings.out_dir / METHOD / split, writes=split_writes)

    # Every config's hold and evaluated splits, their utterances classified in one pass.
    tables = {}
    for name in names:
        tables[(name, HOLD_SPLIT)] = read_columns(settings.dataset, name, HOLD_SPLIT, COLUMNS, files=files)
        for split in splits[name]:
            tables[(name, split)] = read_columns(settings.dataset, name, split, COLUMNS, settings.max_instances,
                                                 settings.sample_seed, files=files)
    device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
    precision = resolve_precision(settings.precision, device, "scoring")
    attn = resolve_attention(settings.attn, precision, "scoring")
    intents = {name: labels[name][0][: labels[name][1]] for name in names}
    other = next((name for name in names if intents[name] != intents[names[0]]), None)
    if other:
        raise DialshiftError(f"--configs {names[0]} and {other} have different intents; one classification head fits "
                             "one intent set: evaluate each benchmark in a run of its own, with its own classifier")
    classifier = IntentClassifier.load(model_dir, intents[names[0]], device=device, attn_implementation=attn,
                                       precision=precision, options=settings.adapter)
    keys = list(tables)
    texts = [text for key in keys for text in tables[key].column("text").to_pylist()]
    encoded = classifier.encode(texts)
    batch_size = settings.batch_size or DEFAULT_BATCH_SIZE.get(torch.device(device).type, 64)
    with precision_context("tf32" if precision == "tf32" else "fp32", device):
        logits = classifier.logits(encoded, batch_size, progress=settings.progress, desc=model_dir.name)
    bounds = np.cumsum([0] + [tables[key].num_rows for key in keys])
    per_key = {key: logits[bounds[i] : bounds[i + 1]] for i, key in enumerate(keys)}

    def outputs(key):
        return Outputs(per_key[key], np.zeros((len(per_key[key]), 0)))

    claim_output_dir(settings.out_dir, "dialshift evaluate", writes=writes)
    for split in dict.fromkeys(s for name in names for s in splits[name]):
        claim_output_dir(settings.out_dir / METHOD / split, "dialshift evaluate", writes=split_writes)
    thresholds, by_split = {}, {}
    for name in names:
        oos = labels[name][1]
        method = Method(METHOD, oos).calibrate(outputs((name, HOLD_SPLIT)),
                                               np.asarray(tables[(name, HOLD_SPLIT)].column("label")), oos)
        thresholds[name] = method.threshold
        for split in splits[name]:
            predictions, scores = method.predict(outputs((name, split)), oos)
            folder = settings.out_dir / METHOD / split / "predictions"
            write_predictions(folder / f"{name}.jsonl", TASK, tables[(name, split)].column("id").to_pylist(),
                              {"prediction": predictions, "score": scores}, digits={"score": 7},
                              bounds={"prediction": (0, oos + 1)})
            by_split.setdefault(split, []).append(name)
    documents = {}
    for split, configs in by_split.items():
        method_dir = settings.out_dir / METHOD / split
        scoring = scoring_settings(settings)
        scoring.split, scoring.progress = split, settings.progress
        run = {"model": str(model_dir), "model_dirs": [str(model_dir)], "method": METHOD, "dialshift_version":
               __version__, "model_type": classifier.model_type, "adapter": classifier.describe(),
               "threshold_split": HOLD_SPLIT, "thresholds": {name: thresholds[name] for name in configs},
               "threshold_rule": "maximises Acc_in + Recall_out on validation_hold (dialshift.models.open_world."
                                 "select_threshold)", "max_length": classifier.max_length, **settings.extra}
        write_json_atomic(method_dir / "predictions" / RUN_FILE, {"run": run, "scoring": scoring.describe()})
        document = score_directory(method_dir / "predictions", scoring)
        write_results(method_dir, document, plots=False, name=f"{METHOD} ({split})")
        record_output_dir(method_dir, split_writes)
        documents[f"{METHOD}/{split}"] = document
    write_report(settings.out_dir, {f"{METHOD} ({key.split('/', 1)[1]})": doc for key, doc in documents.items()},
                 plots=False)
    record_output_dir(settings.out_dir, writes)
    return documents
