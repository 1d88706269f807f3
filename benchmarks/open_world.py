#!/usr/bin/env python
"""Open-world trainer throughput and scoring time of a full predictions set.

    python benchmarks/open_world.py --dataset FOLDER [--config hwu12_cov] [--model tiny|minilm] [--steps 5]

Prints JSON: training examples/s (in-scope utterances) over ``--steps`` optimiser steps (batch 64) of the trainer's
two objectives, cross-entropy over K and DCLOOS's K + 1 loss (64 open-domain and 128 convex outliers a batch; its
slowdown as a ratio against cross-entropy), and the time the task-generic pipeline takes to score one ``cov_test``
predictions file of the config (1,000 bootstrap replicates).
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "trainers"))


def train_rate(task, steps: int) -> float:
    """In-scope training utterances per second over the first ``steps`` optimiser steps of ``task``."""
    import torch
    from accelerate import Accelerator

    model = task.build(Accelerator())
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-5)
    batches = task.epoch_batches(0, np.random.default_rng(0))[:steps]
    started = time.perf_counter()
    for batch in batches:
        loss = task.loss(model, batch)
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    seconds = time.perf_counter() - started
    return sum(len(b["rows"] if isinstance(b, dict) else b) for b in batches) / seconds


def main(argv=None) -> int:
    from open_world import DcloosTask, IntentTask, parse_args

    from dialshift.models.open_world_data import load_open_world_config
    from dialshift.scoring import ScoringSettings, score_files
    from dialshift.scoring.predictions import write_predictions

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True)
    p.add_argument("--config", default="hwu12_cov")
    p.add_argument("--model", default="tiny")
    p.add_argument("--steps", type=int, default=5)
    args = p.parse_args(argv)
    loaded = load_open_world_config(args.dataset, args.config)
    rates = {}
    with tempfile.TemporaryDirectory() as folder:
        for objective, task_class in (("ce", IntentTask), ("dcloos", DcloosTask)):
            trainer_args = parse_args(["--dataset", args.dataset, "--output-dir", folder, "--model", args.model,
                                       "--objective", objective])
            rates[objective] = train_rate(task_class(trainer_args, loaded, seed=0), args.steps)
        data = loaded["data"]["cov_test"]
        rng = np.random.default_rng(0)
        path = write_predictions(Path(folder) / f"{args.config}.jsonl", "open_world_intent", data["id"],
                                 {"prediction": rng.integers(0, len(loaded["names"]), len(data)),
                                  "score": rng.random(len(data))})
        started = time.perf_counter()
        score_files({args.config: path}, ScoringSettings(Path(args.dataset), split="cov_test", replicates=1000))
        score_seconds = time.perf_counter() - started
    print(json.dumps({"model": args.model, "config": args.config,
                      "train_examples_per_second": rates["ce"],
                      "dcloos_train_examples_per_second": rates["dcloos"],
                      "dcloos_slowdown_vs_ce": rates["ce"] / rates["dcloos"],
                      "scored_instances": len(data), "score_seconds_1000_replicates": score_seconds}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
