#!/usr/bin/env python
"""Training throughput of ``trainers/debias.py``: pairs/s of the baseline, +deb, +UMS and +UMS+deb, and the ratios.

    python benchmarks/debias.py --dataset FOLDER [--models tiny /tmp/e5] [--steps 3] [--batch-size 16] [--json OUT]

For each backbone (``tiny``: the random 2-layer test BERT; a folder: e.g. the converted multilingual-e5-small of
``dialshift convert-e5 OUT``) and each variant, the trainer's own task (:class:`trainers.debias.DebiasTask`) is built
on the ``kor_chitchat`` train split and stepped exactly as :func:`dialshift.training.train` steps it (``task.loss``,
``accelerator.backward``, ``optimizer.step``, ``optimizer.zero_grad``), without validation or saving. Each variant
is stepped alternately with a baseline held beside it (baseline step, variant step, ...); each model's first step
warms up and is not timed, ``--steps`` more of the variant are. Figures:

- ``pairs/s``: training (context, response) pairs per second of the timed steps (``--batch-size`` rows of 2 pairs a
  step). UMS's insertion/deletion/search examples are extra forward passes of the same step, not counted as pairs.
- ``setup s``: the one-time cost of ``task.build`` (loading the backbone; for +deb also the Jaccard features of every
  training pair, kiwipiepy morphemes included, and the 3-epoch biased model), paid once per run.
- ``ratio``: the variant's pairs/s divided by the baseline's over the steps interleaved with it, same backbone
  (``+deb / baseline`` is the debiasing overhead per step).

Every variant uses the same seed, rows and batches, so the figures differ by the variant's work only. The machine's
load is not controlled: the alternating order puts its changes on both sides of a ratio alike, so the ratios are
steadier than the figures; on a shared machine read the ratios.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {"baseline": [], "+deb": ["--debias"], "+UMS": ["--ums"], "+UMS+deb": ["--ums", "--debias"]}


class Variant:
    """One variant's task, model and optimiser, built as :func:`dialshift.training.train` builds them, stepped one
    optimiser step at a time exactly as it steps them (``task.loss``, ``accelerator.backward``, ``optimizer.step``,
    ``optimizer.zero_grad``), without validation or saving."""

    def __init__(self, dataset, model: str, flags: list[str], batch_size: int, max_length: int,
                 max_train_instances: int, freeze_word_embeddings: bool):
        from accelerate import Accelerator
        from accelerate.utils import set_seed

        from dialshift.training import TrainingArguments
        from dialshift.training.runner import epoch_rng
        from trainers.debias import DebiasTask, parse_args

        argv = ["--dataset", str(dataset), "--model", model, "--output-dir", "unused", "--seed", "0",
                "--batch-size", str(batch_size), "--max-length", str(max_length),
                "--max-train-instances", str(max_train_instances), "--max-eval-instances", "1", *flags]
        if freeze_word_embeddings:
            argv.append("--freeze-word-embeddings")
        args = parse_args(argv)
        self.accelerator = Accelerator()
        set_seed(args.seed)
        self.task = DebiasTask(args)
        started = time.perf_counter()
        model_ = self.task.build(self.accelerator)
        self.setup_seconds = time.perf_counter() - started
        optimizer = self.task.optimizer(model_, TrainingArguments.from_namespace(args))
        self.model, self.optimizer = self.accelerator.prepare(model_, optimizer)
        self.model.train()
        self.batches = self.task.epoch_batches(0, epoch_rng(args.seed, 0))
        self.seconds, self.pairs, self.steps = 0.0, 0, 0

    def step(self, index: int, timed: bool) -> None:
        """Optimiser step ``index`` of the first epoch; its time and pairs count when ``timed``."""
        batch = self.batches[index]
        started = time.perf_counter()
        loss = self.task.loss(self.model, batch)
        self.accelerator.backward(loss)
        self.optimizer.step()
        self.optimizer.zero_grad()
        loss.item()
        if timed:
            self.seconds += time.perf_counter() - started
            self.pairs += len(batch[0]) * self.task.pairs_per_row
            self.steps += 1

    def figures(self) -> dict:
        return {"pairs_per_second": self.pairs / self.seconds, "seconds_per_step": self.seconds / self.steps,
                "setup_seconds": self.setup_seconds, "pairs_per_step": self.pairs // self.steps,
                "timed_steps": self.steps}


def measure(dataset, model: str, variants: list[str], steps: int, batch_size: int, max_length: int,
            max_train_instances: int, freeze_word_embeddings: bool) -> dict:
    """``{variant: figures}`` on one backbone. The baseline is built once and held; each other variant is built in
    turn and stepped alternately with it (baseline step, variant step, ...), so a change in the machine's load falls
    on both sides of a ratio alike; the variant's first step warms up and is not timed. Two models are held at once
    (a few GB for e5-small). ``ratio_to_baseline`` divides by the baseline's pairs/s over the steps interleaved with
    that variant; the baseline's own row counts all its timed steps."""
    import gc

    def build(name):
        return Variant(dataset, model, VARIANTS[name], batch_size, max_length, max_train_instances,
                       freeze_word_embeddings)

    build("baseline")  # once untimed: the first build in a process pays one-time start-up costs
    baseline = build("baseline")
    if len(baseline.batches) < steps + 1:
        raise SystemExit(f"benchmarks/debias.py: error: {steps + 1} steps need {(steps + 1) * batch_size} training "
                         f"rows; raise --max-train-instances (now {max_train_instances})")
    baseline.step(0, timed=False)
    done, results = 1, {}
    for name in variants:
        if name == "baseline":
            continue
        variant = build(name)
        variant.step(0, timed=False)
        before = (baseline.pairs, baseline.seconds)
        for index in range(1, steps + 1):
            baseline.step(done % len(baseline.batches), timed=True)  # the baseline cycles through its epoch
            done += 1
            variant.step(index, timed=True)
        results[name] = variant.figures()
        paired_rate = (baseline.pairs - before[0]) / (baseline.seconds - before[1])
        results[name]["ratio_to_baseline"] = results[name]["pairs_per_second"] / paired_rate
        del variant
        gc.collect()
    if not results:  # the baseline alone
        for index in range(1, steps + 1):
            baseline.step(index, timed=True)
    return {"baseline": {**baseline.figures(), "ratio_to_baseline": 1.0}, **results}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="dialshift dataset folder with the korean family's configs")
    parser.add_argument("--models", nargs="+", default=["tiny"],
                        help="backbones: 'tiny' and/or model folders (e.g. a `dialshift convert-e5` folder)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS),
                        help="variants measured beside the baseline (always measured)")
    parser.add_argument("--steps", type=int, default=3, help="timed optimiser steps per variant (after 1 warm-up)")
    parser.add_argument("--batch-size", type=int, default=16, help="training rows a step (2 pairs each)")
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--max-train-instances", type=int, default=400,
                        help="training rows loaded (the +deb setup computes features for all of them)")
    parser.add_argument("--train-word-embeddings", action="store_true",
                        help="train the word embeddings too (default: frozen, as the CPU reproduction runs)")
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch_size < 1:
        parser.error("--steps and --batch-size must be at least 1")
    if args.max_train_instances < (args.steps + 1) * args.batch_size:
        parser.error(f"{args.steps + 1} steps of {args.batch_size} rows need --max-train-instances of at least "
                     f"{(args.steps + 1) * args.batch_size} (now {args.max_train_instances})")
    sys.path.insert(0, str(ROOT))

    import torch
    import transformers  # noqa: F401 (imported here so that no variant's setup time includes the imports)

    import dialshift.models.backbones  # noqa: F401
    import dialshift.models.debias  # noqa: F401

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch {args.batch_size} rows "
          f"({2 * args.batch_size} pairs), max length {args.max_length}, {args.steps} timed steps, word embeddings "
          f"{'trained' if args.train_word_embeddings else 'frozen'}")
    results = {}
    for model in args.models:
        rows = results[model] = measure(args.dataset, model, args.variants, args.steps, args.batch_size,
                                        args.max_length, args.max_train_instances, not args.train_word_embeddings)

    print("\n| backbone | variant | pairs/s | s/step | setup s | ratio to baseline |\n|---|---|---:|---:|---:|---:|")
    for model, rows in results.items():
        for variant, f in rows.items():
            ratio = f"{f['ratio_to_baseline']:.2f}"
            print(f"| {Path(model).name} | {variant} | {f['pairs_per_second']:.2f} | {f['seconds_per_step']:.2f} | "
                  f"{f['setup_seconds']:.1f} | {ratio} |")
    if args.json:
        document = {"settings": {k: v for k, v in vars(args).items() if k != "json"},
                    "torch_threads": torch.get_num_threads(), "results": results,
                    "load_average": [round(x, 2) for x in os.getloadavg()]}
        Path(args.json).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
