#!/usr/bin/env python
"""Open-world trainer throughput and scoring time of a full predictions set.

    python benchmarks/open_world.py --dataset FOLDER [--config hwu12_cov] [--model tiny|minilm] [--steps 5]

Prints JSON: training examples/s over ``--steps`` optimiser steps (batch 64, the trainer's loss), and the time the
task-generic pipeline takes to score one ``cov_test`` predictions file of the config (1,000 bootstrap replicates).
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "trainers"))


def main(argv=None) -> int:
    from open_world import IntentTask, load_config, parse_args, write_predictions

    from dialshift.scoring import ScoringSettings, score_files

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True)
    p.add_argument("--config", default="hwu12_cov")
    p.add_argument("--model", default="tiny")
    p.add_argument("--steps", type=int, default=5)
    args = p.parse_args(argv)
    loaded = load_config(args.dataset, args.config)
    with tempfile.TemporaryDirectory() as folder:
        trainer_args = parse_args(["--dataset", args.dataset, "--output-dir", folder, "--model", args.model])
        task = IntentTask(trainer_args, loaded, seed=0)
        import torch
        from accelerate import Accelerator

        accelerator = Accelerator()
        model = task.build(accelerator)
        optimiser = torch.optim.AdamW(model.parameters(), lr=2e-5)
        batches = task.epoch_batches(0, np.random.default_rng(0))[: args.steps]
        started = time.perf_counter()
        for rows in batches:
            loss = task.loss(model, rows)
            loss.backward()
            optimiser.step()
            optimiser.zero_grad()
        train_seconds = time.perf_counter() - started
        data = loaded["data"]["cov_test"]
        rng = np.random.default_rng(0)
        path = write_predictions(Path(folder) / f"{args.config}.jsonl", list(data["id"]),
                                 rng.integers(0, len(loaded["names"]), len(data)), rng.random(len(data)),
                                 len(loaded["names"]))
        started = time.perf_counter()
        score_files({args.config: path}, ScoringSettings(Path(args.dataset), split="cov_test", replicates=1000))
        score_seconds = time.perf_counter() - started
    print(json.dumps({"model": args.model, "config": args.config,
                      "train_examples_per_second": sum(len(b) for b in batches) / train_seconds,
                      "scored_instances": len(data), "score_seconds_1000_replicates": score_seconds}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
