#!/usr/bin/env python
"""Copy what the report needs from the run folder of ``run_all.sh`` into ``docs/reproduction_lee/cpu/``.

    python docs/reproduction_lee/collect.py OUT

For the build and every finished job of ``OUT`` it writes, under ``cpu/``:

* ``build.json``: the build's ``command.json`` (commit, command, threads, wall and CPU seconds);
* ``seed_<s>/ranker.json``: the ranker's ``dialshift_model.json`` (training arguments, validation history, selected
  step, temperature) and ``seed_<s>/train.json``: the training job's ``command.json``;
* ``seed_<s>/<job>.json`` (``vanilla_temperature``, ``dropout``): the scoring job's ``command.json``, and per method
  ``seed_<s>/<method>/run.json`` and ``results.json`` (what ``dialshift evaluate`` wrote) and
  ``seed_<s>/<method>/<config>.jsonl.gz``: the kept predictions, byte for byte the ``.jsonl`` files of the leaderboard
  submission format, gzip-compressed without a timestamp;
* ``labels.json``: per config, the gold candidate index of every predicted id, read from ``OUT/build``;
* ``sha256.json``: the SHA-256 of every file above, which ``make_tables.py --check`` verifies.
"""

import gzip
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE / "cpu"
JOBS = {"vanilla_temperature": ("vanilla", "temperature"), "dropout": ("dropout",)}


def copy_json(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def compress(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
        packed.write(source.read_bytes())


def collect(out: Path) -> dict:
    """Copy the finished runs of ``out``; return ``{config: set of predicted ids}``."""
    predicted: dict[str, set] = {}
    copy_json(out / "build_command" / "command.json", TARGET / "build.json")
    for ranker in sorted((out / "rankers").glob("seed_*")):
        if not (ranker / "dialshift_model.json").is_file():
            continue
        seed_dir = TARGET / ranker.name
        copy_json(ranker / "dialshift_model.json", seed_dir / "ranker.json")
        copy_json(ranker / "command.json", seed_dir / "train.json")
        for job, methods in JOBS.items():
            job_dir = out / "eval" / ranker.name / job
            if not all((job_dir / method / "results.json").is_file() for method in methods):
                continue
            copy_json(job_dir / "command.json", seed_dir / f"{job}.json")
            for method in methods:
                copy_json(job_dir / method / "results.json", seed_dir / method / "results.json")
                copy_json(job_dir / method / "predictions" / "run.json", seed_dir / method / "run.json")
                for path in sorted((job_dir / method / "predictions").glob("*.jsonl")):
                    compress(path, seed_dir / method / f"{path.name}.gz")
                    ids = {json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()}
                    predicted.setdefault(path.stem, set()).update(ids)
    return predicted


def gold_labels(build: Path, predicted: dict) -> dict:
    """``{config: {id: gold index}}`` of the predicted ids, from the test split of ``build``."""
    from dialshift.ranking.data import read_columns

    labels = {}
    for config, ids in sorted(predicted.items()):
        table = read_columns(build, config, "test", ["id", "label"]).to_pydict()
        gold = dict(zip(table["id"], table["label"], strict=True))
        missing = sorted(ids - gold.keys())
        if missing:
            raise SystemExit(f"{build}: config {config} has no test id {missing[0]} that the predictions hold")
        labels[config] = {i: int(gold[i]) for i in sorted(ids)}
    return labels


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or not Path(argv[0], "build_command", "command.json").is_file():
        print("usage: collect.py OUT (the folder run_all.sh wrote; it holds build_command/command.json)",
              file=sys.stderr)
        return 2
    out = Path(argv[0])
    if TARGET.exists():
        shutil.rmtree(TARGET)
    predicted = collect(out)
    (TARGET / "labels.json").write_text(json.dumps(gold_labels(out / "build", predicted), indent=0, sort_keys=True)
                                        + "\n", encoding="utf-8")
    from dialshift.run_files import write_manifest

    write_manifest(TARGET, sorted(path for path in TARGET.rglob("*") if path.is_file()))
    print(f"collected {sum(1 for _ in TARGET.rglob('*') if _.is_file())} files into {TARGET} (checksums: sha256.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
