"""Time `dialshift leaderboard score` on complete synthetic submissions over a real build, beside a reference version.

Builds nothing: pass a folder from `dialshift build --family dailydialog --out DIR`. For each of four methods it
writes a synthetic submission (every config of the family with a test split, full test splits, 10-way
probabilities from seeded logits with a bonus on the gold candidate, so the metrics are realistic), then scores each
one (``--bootstrap`` replicates: intervals, paired differences and calibration tests included) with this tree's
dialshift and with the dialshift of ``--reference`` (a git revision, exported with ``git archive`` into a scratch
folder), each in its own process, one after the other on the same submissions, and prints the CPU time (process
time) and wall time of both side by side; a second scoring with one replicate splits this tree's time into reading
+ point metrics and the bootstrap. With ``--repeats N`` both trees score the submissions N times, alternating, and
each method's least CPU time is printed. Example:

    .venv/bin/python benchmarks/leaderboard.py --dataset /tmp/dd --family dailydialog --reference 3d794e3 --repeats 3
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

METHODS = ("vanilla", "dropout", "ensemble", "temperature")


def write_submission(dataset: Path, family: str, out: Path, method: str, seed: int) -> int:
    """A synthetic submission folder for every ``family`` config of ``dataset`` with a test split; returns the
    number of prediction lines."""
    import pyarrow.parquet as pq

    from dialshift.hub import data_files, folder_configs
    from dialshift.scoring.gold import config_fingerprints
    from dialshift.scoring.predictions import write_predictions

    files = data_files(dataset)
    configs = folder_configs(dataset)
    rng = np.random.default_rng(seed)
    (out / "predictions").mkdir(parents=True, exist_ok=True)
    lines = 0
    written = []
    for name, config in configs.items():
        if config.family != family or "test" not in files[name]:
            continue
        written.append(name)
        table = pq.read_table(files[name]["test"], columns=["id", "label"])
        ids, labels = table.column("id").to_pylist(), table.column("label").to_numpy()
        logits = rng.normal(size=(len(ids), 10))
        logits[np.arange(len(ids)), labels] += 1.5
        probabilities = np.exp(logits - logits.max(1, keepdims=True))
        probabilities /= probabilities.sum(1, keepdims=True)
        write_predictions(out / "predictions" / f"{name}.jsonl", config.task, ids,
                          {"scores": logits, "probabilities": probabilities}, digits={"scores": 5})
        lines += len(ids)
    (out / "submission.json").write_text(json.dumps({
        "model": "synthetic-ranker", "method": method, "link": "https://example.org/synthetic", "licence": "cc0-1.0",
        "dataset_revision": config_fingerprints(dataset, written), "seeds": [seed], "family": family}))
    return lines


def worker(folders: list[Path], dataset: Path, replicates: int, out: Path | None) -> list[dict]:
    """Score each submission folder; ``[{"method", "configs", "cpu", "wall", "without"}]`` (``without``: the wall time
    of a one-replicate scoring, only with ``out``, where the records are written)."""
    from dialshift.leaderboard import score_submission, write_record

    timings = []
    for folder in folders:
        start, cpu = time.perf_counter(), time.process_time()
        record = score_submission(folder, dataset, replicates=replicates)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        entry = {"method": folder.name, "configs": len(record["results"]), "cpu": cpu, "wall": elapsed}
        if out is not None:
            write_record(out, record)
            start = time.perf_counter()
            score_submission(folder, dataset, replicates=1)
            entry["without"] = time.perf_counter() - start
        timings.append(entry)
    return timings


def run_worker(python_path: Path | None, folders, dataset, replicates, out=None) -> list[dict]:
    """:func:`worker` in a fresh process importing dialshift from ``python_path`` (this tree's when None)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    if python_path is not None:
        env["PYTHONPATH"] = str(python_path)
    command = [sys.executable, __file__, "--worker", "--dataset", str(dataset), "--bootstrap", str(replicates),
               *(["--records", str(out)] if out else []), *map(str, folders)]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True, cwd=Path(__file__).parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


def least(kept: list[dict] | None, timings: list[dict]) -> list[dict]:
    """Per method, the entry of ``kept`` or ``timings`` with the least CPU time (the one-replicate wall time of the
    first kept)."""
    if kept is None:
        return timings
    return [{**(new if new["cpu"] < old["cpu"] else old), **({"without": old["without"]} if "without" in old else {})}
            for old, new in zip(kept, timings, strict=True)]


def export_reference(revision: str, scratch: Path) -> Path:
    """``git archive`` of the ``dialshift`` package at ``revision`` into ``scratch``; the folder to import it from."""
    import io
    import subprocess
    import tarfile

    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(root), "archive", revision, "dialshift"], check=True,
                             capture_output=True).stdout
    target = scratch / "reference"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target


def main(argv=None) -> int:

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--family", default="dailydialog")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--reference", default=None,
                        help="a git revision to time beside this tree (e.g. the commit before a change)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="score the submissions this many times with each tree, alternating, and keep each "
                             "method's least CPU time (a shared machine's load varies between runs)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--records", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("folders", nargs="*", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats: expected a positive number of runs, got {args.repeats}")
    if args.worker:
        print(json.dumps(worker(args.folders, args.dataset, args.bootstrap, args.records)))
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="dialshift-leaderboard-bench-"))
    folders, lines = [], {}
    for seed, method in enumerate(METHODS):
        folders.append(scratch / method)
        lines[method] = write_submission(args.dataset, args.family, scratch / method, method, seed)
    reference, current = None, None
    source = export_reference(args.reference, scratch) if args.reference else None
    for repeat in range(args.repeats):  # alternating, so both see the same load; the least CPU of each is kept
        if source is not None:
            reference = least(reference, run_worker(source, folders, args.dataset, args.bootstrap))
        current = least(current, run_worker(None, folders, args.dataset, args.bootstrap,
                                            scratch / "results" if repeat == 0 else None))
    for index, entry in enumerate(current):
        method = entry["method"]
        text = (f"{method:<12} {entry['configs']} configs, {lines[method]:,} instances: CPU {entry['cpu']:.2f} s "
                f"(wall {entry['wall']:.2f} s; reading + metrics {entry['without']:.2f} s, bootstrap x{args.bootstrap} "
                f"{entry['wall'] - entry['without']:.2f} s)")
        if reference:
            old = reference[index]
            text += f"; reference {args.reference}: CPU {old['cpu']:.2f} s (wall {old['wall']:.2f} s)"
        print(text)
    cpu = sum(entry["cpu"] for entry in current) / len(current)
    runs = f" (least of {args.repeats} alternating runs)" if args.repeats > 1 else ""
    summary = f"per submission{runs}: CPU {cpu:.2f} s this tree"
    if reference:
        old_cpu = sum(entry["cpu"] for entry in reference) / len(reference)
        summary += f", {old_cpu:.2f} s reference {args.reference} ({old_cpu / cpu:.1f}x)"
    print(summary + f" (CPU = process time; the wall time also counts waiting for a core); records in "
          f"{scratch / 'results'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
