#!/usr/bin/env python
"""Copy what the report needs from the run folders of ``run_all.sh`` into ``docs/reproduction_khosla/runs/``.

    python docs/reproduction_khosla/collect.py OUT

For every finished seed ``OUT/<build>/<config>/seed_<s>/`` (one with a ``run.json`` and the ``command.json`` that
``run_all.sh`` writes once the trainer has exited; a seed still running is left for a later call) it writes
``runs/<build>/<config>/seed_<s>/`` with ``run.json``, ``command.json`` (commit, command, threads, CPU seconds),
``results/<method>/<split>/results.json`` (the scoring pipeline's output), ``predictions.npz`` (compressed, small:
per split the gold labels, the closed-world argmax over the in-scope logits and every method's predicted class, as
int8, and the label names) and ``sha256.json`` (of each full predictions file, whose scores are not committed:
regenerate them with the command in ``command.json``). Per build and config it also writes ``label_counts.json`` (the
utterances per intent and split of the build the runs read: the report's Table A1) and ``overlap.json`` (per test
split, the in-scope utterances and how many of them are, text for text, also training utterances), and for the run
of Table A3
(Maha, CLINC14-COV, seed 2) ``table_a3.json``: per listed intent and split, up to five correctly and five incorrectly
classified utterances drawn at random (numpy ``default_rng(seed)``), with their gold and predicted intents.
"""

import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

import numpy as np

from dialshift import reports

HERE = Path(__file__).resolve().parent
SPLITS = ("test", "cov_test")
COUNTED_SPLITS = ("train", "validation", "validation_hold", *SPLITS)
# Table A3 of the paper: Maha (seed 2) on CLINC14-COV, five random correct and incorrect utterances per intent.
TABLE_A3 = {"build": "default", "config": "clinc14_cov", "seed": 2, "method": "maha", "per_outcome": 5,
            "intents": ["definition", "alarm", "card_declined", "restaurant_reservation"]}


def predictions_npz(seed_dir: Path, methods) -> bytes:
    """The small, compressed predictions archive of one seed."""
    saved = np.load(seed_dir / "outputs.npz")
    model = json.loads((seed_dir / "model" / "dialshift_model.json").read_text())
    names = list(model["intents"]) + ["oos"]
    arrays = {"names": np.asarray(names)}
    for split in SPLITS:
        arrays[f"gold/{split}"] = saved[f"gold/{split}"].astype(np.int8)
        if f"logits/{split}" in saved and "dcloos" not in methods:
            arrays[f"argmax/{split}"] = saved[f"logits/{split}"].argmax(axis=1).astype(np.int8)
        for method in methods:
            arrays[f"{method}/{split}"] = saved[f"{method}/{split}"].astype(np.int8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def label_counts(build: Path, config: str) -> dict:
    """``{split: {intent: utterances}}`` of one config of a build."""
    import datasets

    data = datasets.load_dataset(str(build), config)
    names = data["train"].features["label"].names
    return {split: {names[label]: int(count) for label, count in
                    zip(*np.unique(data[split]["label"], return_counts=True), strict=True)}
            for split in COUNTED_SPLITS}


def overlap(build: Path, config: str) -> dict:
    """``{"splits": {split: {"in_scope", "in_train"}}}``: per test split, its in-scope utterances and those whose
    exact text is also a training utterance of the same config."""
    import datasets

    data = datasets.load_dataset(str(build), config)
    oos = data["train"].features["label"].names.index("oos")
    train = set(data["train"]["text"])
    splits = {}
    for split in SPLITS:
        texts = [text for text, label in zip(data[split]["text"], data[split]["label"], strict=True) if label != oos]
        splits[split] = {"in_scope": len(texts), "in_train": sum(text in train for text in texts)}
    return {"config": config, "compared": "exact text, in-scope utterances against every training utterance",
            "splits": splits}


def table_a3(build: Path, seed_dir: Path) -> dict:
    """The utterances of Table A3 from one run (``TABLE_A3`` says which), drawn with ``default_rng(seed)``."""
    import datasets

    data = datasets.load_dataset(str(build), TABLE_A3["config"])
    names = data["train"].features["label"].names
    saved = np.load(seed_dir / "outputs.npz")
    rng = np.random.default_rng(TABLE_A3["seed"])
    rows = {}
    for intent in TABLE_A3["intents"]:
        for split in SPLITS:
            gold = np.asarray(data[split]["label"])
            if not np.array_equal(gold, saved[f"gold/{split}"]):
                raise SystemExit(f"{seed_dir}: its gold labels of {split} are not those of {build}")
            predicted = saved[f"{TABLE_A3['method']}/{split}"]
            for correct in (True, False):
                where = np.flatnonzero((gold == names.index(intent)) & ((predicted == gold) == correct))
                chosen = np.sort(rng.choice(where, size=min(TABLE_A3["per_outcome"], len(where)), replace=False))
                rows.setdefault(intent, {}).setdefault(split, []).extend(
                    {"text": data[split][int(i)]["text"], "predicted": names[int(predicted[i])], "correct": correct}
                    for i in chosen)
    return {**TABLE_A3, "rows": rows}


def write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def collect(out: Path, target: Path) -> int:
    count = 0
    for run_json in sorted(out.glob("*/*/seed_*/run.json")):
        seed_dir = run_json.parent
        if not (seed_dir / "command.json").is_file():
            continue  # still running (or stopped before run_all.sh recorded it): not finished
        dest = target / seed_dir.relative_to(out)
        run = json.loads(run_json.read_text())
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run_json, dest / "run.json")
        shutil.copyfile(seed_dir / "command.json", dest / "command.json")
        for results in sorted(seed_dir.glob("results/*/*/results.json")):
            (dest / results.relative_to(seed_dir)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(results, dest / results.relative_to(seed_dir))
        (dest / "predictions.npz").write_bytes(predictions_npz(seed_dir, list(run["results"])))
        digests = {str(path.relative_to(seed_dir)): hashlib.sha256(path.read_bytes()).hexdigest()
                   for path in sorted(seed_dir.glob("predictions/*/*/*.jsonl"))}
        (dest / "sha256.json").write_text(json.dumps(digests, indent=1) + "\n")
        build_name, config = seed_dir.parent.parent.name, seed_dir.parent.name
        build = out / f"build_{build_name}"  # the dataset folder run_all.sh trains on
        if not (build / config).is_dir():
            raise SystemExit(f"{build}: no {config} build beside the runs (run_all.sh writes it)")
        if not (dest.parent / "label_counts.json").is_file():
            write_json(dest.parent / "label_counts.json", label_counts(build, config))
        if not (dest.parent / "overlap.json").is_file():
            write_json(dest.parent / "overlap.json", overlap(build, config))
        if (build_name, config, int(seed_dir.name.split("_")[1])) == \
                (TABLE_A3["build"], TABLE_A3["config"], TABLE_A3["seed"]):
            write_json(dest / "table_a3.json", table_a3(build, seed_dir))
        count += 1
    return count


def main(argv=None) -> int:
    return reports.collect_main(__doc__, collect, HERE / "runs", argv)


if __name__ == "__main__":
    sys.exit(main())
