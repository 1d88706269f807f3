#!/usr/bin/env python
"""Scoring at scale: time and peak memory of `dialshift score` on a large synthetic response-ranking file.

    python benchmarks/scoring.py [--instances 1000000] [--candidates 10] [--replicates 1000] [--keep DIR]

Writes a dataset folder with one config of ``--instances`` gold rows and a predictions JSONL file of as many lines
(``id``, ``scores``, ``probabilities``: K values each, about 290 bytes a line at K = 10), then scores it in a fresh
process (so the peak resident memory measured is the scoring's alone) twice: with ``--replicates 1`` (reading,
joining and the metrics) and with ``--replicates`` bootstrap replicates. Prints seconds, instances/s and peak RSS.
"""

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCORE = """
import sys, time
from pathlib import Path
from dialshift.scoring import ScoringSettings, score_directory
started = time.perf_counter()
document = score_directory(Path(sys.argv[1]), ScoringSettings(Path(sys.argv[2]), replicates=int(sys.argv[3])),
                           given={"replicates"})
print(time.perf_counter() - started, document["results"]["big"]["recall@1"])
"""


def write_inputs(root: Path, n: int, k: int) -> tuple[Path, Path]:
    import datasets
    import numpy as np
    import pyarrow as pa

    from dialshift.configs import BenchmarkConfig
    from dialshift.hub import write_hub_folder

    rng = np.random.default_rng(0)
    pool_size = 4096
    logits = rng.normal(size=(pool_size, k))
    labels = rng.integers(0, k, pool_size)
    logits[np.arange(pool_size), labels] += 1.0
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    pool = [f'"scores": {json.dumps(np.round(s, 6).tolist())}, "probabilities": {json.dumps(np.round(p, 7).tolist())}'
            for s, p in zip(logits, probabilities, strict=True)]
    ids = [f"big-{i:09d}" for i in range(n)]
    gold = pa.table({"id": ids, "label": pa.array(labels[np.arange(n) % pool_size], type=pa.int32())})
    config = BenchmarkConfig("big", "bench", "response_ranking")
    dataset = write_hub_folder(root / "dataset", {"big": datasets.DatasetDict({"test": datasets.Dataset(gold)})}, [],
                               metadata={"big": {"config": config.to_dict(), "facts": {}}}, progress=False)
    predictions = root / "predictions"
    predictions.mkdir()
    with open(predictions / "big.jsonl", "w") as handle:
        for start in range(0, n, 100_000):
            handle.write("".join(f'{{"id": "{ids[i]}", {pool[i % pool_size]}}}\n'
                                 for i in range(start, min(n, start + 100_000))))
    return dataset, predictions


def score(predictions: Path, dataset: Path, replicates: int) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    output = subprocess.run([sys.executable, "-c", SCORE, str(predictions), str(dataset), str(replicates)],
                            check=True, capture_output=True, text=True).stdout.split()
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kib <= before:
        print("note: peak RSS not above an earlier child's; run one measurement per process for exact figures")
    return float(output[0]), peak_kib / 1024


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=1_000_000)
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--keep", type=Path, default=None, help="write the inputs here and keep them")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        dataset, predictions = write_inputs(root, args.instances, args.candidates)
        size = (predictions / "big.jsonl").stat().st_size
        print(f"inputs: {args.instances:,} x {args.candidates} predictions, {size / 2**20:,.0f} MiB of JSONL "
              f"(written in {time.perf_counter() - started:.0f} s)")
        figures = {}
        for replicates in (1, args.replicates):
            seconds, peak = score(predictions, dataset, replicates)
            figures[replicates] = (seconds, peak)
            print(f"dialshift score, {replicates} bootstrap replicate(s): {seconds:.1f} s "
                  f"({args.instances / seconds:,.0f} instances/s), peak RSS {peak:,.0f} MiB")
    print(json.dumps({"instances": args.instances, "candidates": args.candidates, "jsonl_mib": size / 2**20,
                      "seconds_no_bootstrap": figures[1][0], "peak_mib_no_bootstrap": figures[1][1],
                      "replicates": args.replicates, "seconds": figures[args.replicates][0],
                      "peak_mib": figures[args.replicates][1]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
