"""Time `dialshift leaderboard score` on complete synthetic submissions over a real build.

Builds nothing: pass a folder from `dialshift build --family dailydialog --out DIR`. For each of four methods it
writes a synthetic submission (every config of the family with a test split, full test splits, 10-way
probabilities from seeded logits with a bonus on the gold candidate, so the metrics are realistic), then times
scoring each one, split into reading + point metrics and the paired bootstrap (measured by scoring again with one
replicate). Example:

    .venv/bin/python benchmarks/leaderboard.py --dataset /tmp/dd --family dailydialog
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


def main(argv=None) -> int:
    from dialshift.leaderboard import score_submission, write_record

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--family", default="dailydialog")
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="dialshift-leaderboard-bench-"))
    total = cpu_total = 0.0
    for seed, method in enumerate(METHODS):
        folder = scratch / method
        lines = write_submission(args.dataset, args.family, folder, method, seed)
        start, cpu = time.perf_counter(), time.process_time()
        record = score_submission(folder, args.dataset, replicates=args.bootstrap)
        write_record(scratch / "results", record)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        score_submission(folder, args.dataset, replicates=1)
        without = time.perf_counter() - start
        total += elapsed
        cpu_total += cpu
        print(f"{method:<12} {len(record['results'])} configs, {lines:,} instances: {elapsed:.2f} s, CPU {cpu:.2f} s "
              f"(reading + metrics {without:.2f} s, bootstrap x{args.bootstrap} {elapsed - without:.2f} s)")
    print(f"four methods: {total:.2f} s in all, {total / len(METHODS):.2f} s per submission (CPU time "
          f"{cpu_total / len(METHODS):.2f} s: on a busy machine the wall time also counts waiting for a core); "
          f"results in {scratch / 'results'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
