#!/usr/bin/env python
"""Training throughput of ``trainers/debias.py``: pairs/s of the baseline, +deb, +UMS and +UMS+deb, and the ratios.

    python benchmarks/debias.py --dataset FOLDER [--models tiny /tmp/e5] [--steps 3] [--batch-size 16] [--json OUT]

For each backbone (``tiny``: the random 2-layer test BERT; a folder: e.g. the converted multilingual-e5-small of
``dialshift convert-e5 OUT``) and each variant, the trainer's own task (:class:`trainers.debias.DebiasTask`) is built
on the ``kor_chitchat`` train split and stepped exactly as :func:`dialshift.training.train` steps it (``task.loss``,
``accelerator.backward``, ``optimizer.step``, ``optimizer.zero_grad``), without validation or saving. The first step
warms up and is not timed; ``--steps`` more are. Figures:

- ``pairs/s``: training (context, response) pairs per second of the timed steps (``--batch-size`` rows of 2 pairs a
  step). UMS's insertion/deletion/search examples are extra forward passes of the same step, not counted as pairs.
- ``setup s``: the one-time cost of ``task.build`` (loading the backbone; for +deb also the Jaccard features of every
  training pair, kiwipiepy morphemes included, and the 3-epoch biased model), paid once per run.
- ``ratio``: the variant's pairs/s divided by the baseline's on the same backbone (``+deb / baseline`` is the
  debiasing overhead per step).

Every variant uses the same seed, rows and batches, so the figures differ by the variant's work only. The machine's
load is not controlled: run it on an idle machine, or read the ratios (taken minutes apart) rather than the figures.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = {"baseline": [], "+deb": ["--debias"], "+UMS": ["--ums"], "+UMS+deb": ["--ums", "--debias"]}


def measure(dataset, model: str, flags: list[str], steps: int, batch_size: int, max_length: int,
            max_train_instances: int, freeze_word_embeddings: bool) -> dict:
    """Build one variant's task and time ``steps`` optimiser steps after a warm-up step; return its figures."""
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
    accelerator = Accelerator()
    set_seed(args.seed)
    task = DebiasTask(args)
    started = time.perf_counter()
    model_ = task.build(accelerator)
    setup = time.perf_counter() - started
    optimizer = task.optimizer(model_, TrainingArguments.from_namespace(args))
    model_, optimizer = accelerator.prepare(model_, optimizer)
    batches = task.epoch_batches(0, epoch_rng(args.seed, 0))
    if len(batches) < steps + 1:
        raise SystemExit(f"benchmarks/debias.py: error: {steps + 1} steps need {(steps + 1) * batch_size} training "
                         f"rows; raise --max-train-instances (now {max_train_instances})")
    model_.train()
    seconds, pairs = 0.0, 0
    for step, batch in enumerate(batches[: steps + 1]):
        started = time.perf_counter()
        loss = task.loss(model_, batch)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        loss.item()
        if step:  # the first step warms up (allocator, thread pool) and is not timed
            seconds += time.perf_counter() - started
            pairs += len(batch[0]) * task.pairs_per_row
    return {"pairs_per_second": pairs / seconds, "seconds_per_step": seconds / steps, "setup_seconds": setup,
            "pairs_per_step": pairs // steps, "timed_steps": steps}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="dialshift dataset folder with the korean family's configs")
    parser.add_argument("--models", nargs="+", default=["tiny"],
                        help="backbones: 'tiny' and/or model folders (e.g. a `dialshift convert-e5` folder)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
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
        rows = results.setdefault(model, {})
        for variant in args.variants:
            rows[variant] = measure(args.dataset, model, VARIANTS[variant], args.steps, args.batch_size,
                                    args.max_length, args.max_train_instances, not args.train_word_embeddings)
            print(f"  {model} {variant}: {rows[variant]['pairs_per_second']:.2f} pairs/s", flush=True)
        base = rows.get("baseline", {}).get("pairs_per_second")
        for figures in rows.values():
            figures["ratio_to_baseline"] = figures["pairs_per_second"] / base if base else None

    print("\n| backbone | variant | pairs/s | s/step | setup s | ratio to baseline |\n|---|---|---:|---:|---:|---:|")
    for model, rows in results.items():
        for variant, f in rows.items():
            ratio = "-" if f["ratio_to_baseline"] is None else f"{f['ratio_to_baseline']:.2f}"
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
