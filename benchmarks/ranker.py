#!/usr/bin/env python
"""Ranker throughput: `dialshift evaluate` vs a naive per-pair loop and a batched reference, and training steps/s.

    python benchmarks/ranker.py --dataset FOLDER [--model-dir RANKER] [--configs dailydialog 'uw_0.1*'] [--instances 30]

Evaluation: the same ranker scores the same pairs of the chosen configs (test split, ``--instances`` per config,
seeded) three ways — (a) ``dialshift evaluate`` end to end (each distinct pair once, length-sorted batches, inference
mode, then the predictions written and scored with bootstrap intervals), (b) a naive loop: one
``tokenizer(context, candidate)`` + forward per pair, config by config, (c) the batched reference:
sentence-transformers' ``CrossEncoder.predict`` around the same model folder, same batch size, every pair. All
throughputs count every (config, instance, candidate) pair evaluated, so (a) profits from deduplication exactly as a
real run does.
Training: ``trainers/ranker.py`` for ``--train-steps`` steps; steps/s of the optimisation steps alone.
Without ``--model-dir`` a MiniLM ranker is trained for the benchmark (that run also gives the training figure).
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def naive_scores(ranker, data) -> int:
    import torch

    tokenizer, model = ranker.tokenizer, ranker.model
    sep = f" {tokenizer.sep_token} "
    count = 0
    with torch.no_grad():
        for split in data.values():
            for context, candidates in zip(split["context"], split["candidates"], strict=True):
                for candidate in candidates:
                    batch = tokenizer(sep.join(context), candidate, truncation="only_first",
                                      max_length=ranker.meta["max_length"], return_tensors="pt")
                    model(**batch)
                    count += 1
    return count


def cross_encoder_scores(model_dir, ranker, data, batch_size: int) -> float:
    """Pairs/s of sentence-transformers' ``CrossEncoder.predict`` on every pair, around the same model folder."""
    from sentence_transformers import CrossEncoder

    device = str(next(ranker.model.parameters()).device)
    model = CrossEncoder(str(model_dir), max_length=ranker.meta["max_length"], device=device, local_files_only=True)
    sep = f" {ranker.tokenizer.sep_token} "
    pairs = [(sep.join(context), candidate) for split in data.values()
             for context, candidates in zip(split["context"], split["candidates"], strict=True)
             for candidate in candidates]
    started = time.perf_counter()
    model.predict(pairs, batch_size=batch_size, show_progress_bar=False)
    return len(pairs) / (time.perf_counter() - started)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="Hub dataset folder with a source config")
    parser.add_argument("--model-dir", default=None, help="a trained ranker (default: train a MiniLM one here)")
    parser.add_argument("--configs", nargs="+", default=["dailydialog", "uw_0.10", "ic_0of6", "sr_6"])
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per forward pass, (a) and (c)")
    parser.add_argument("--instances", type=int, default=30, help="instances per config (default: 30)")
    parser.add_argument("--train-steps", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=128)
    args = parser.parse_args(argv)

    import torch

    from dialshift.models.ranker import load_ranker, read_ranker_meta
    from dialshift.ranking.evaluation import EvaluationSettings, evaluate, load_configs

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(args.model_dir) if args.model_dir else Path(tmp) / "ranker"
        sys.path.insert(0, str(ROOT))  # a script: the repository root is not on sys.path
        import trainers.ranker as trainer

        train_dir = Path(tmp) / "train-bench"
        code = trainer.main(["--dataset", args.dataset, "--output-dir", str(train_dir), "--seed", "0",
                             "--max-steps", str(args.train_steps), "--max-train-instances", str(12 * args.train_steps),
                             "--max-eval-instances", "5", "--max-length", str(args.max_length), "--no-progress"])
        if code:
            return code
        steps_per_second = read_ranker_meta(train_dir)["train_steps_per_second"]
        print(f"training: {steps_per_second:.3f} steps/s ({1 / steps_per_second:.2f} s/step; batch 12 x 10 "
              f"candidates, max length {args.max_length})")
        if not args.model_dir:
            model_dir = train_dir

        settings = EvaluationSettings([model_dir], ["vanilla"], Path(args.dataset), args.configs, Path(tmp) / "out",
                                      max_instances=args.instances, batch_size=args.batch_size, progress=False,
                                      plots=False)
        data = load_configs(settings)
        total = sum(len(split["id"]) * len(split["candidates"][0]) for split in data.values())
        torch.manual_seed(0)
        started = time.perf_counter()
        evaluate(settings)
        fast = total / (time.perf_counter() - started)
        ranker = load_ranker(model_dir)
        started = time.perf_counter()
        naive = naive_scores(ranker, data) / (time.perf_counter() - started)
        reference = cross_encoder_scores(model_dir, ranker, data, args.batch_size)
    print(f"evaluation over {len(data)} configs, {total} pairs: dialshift evaluate {fast:.1f} pairs/s, "
          f"naive per-pair loop {naive:.1f} pairs/s ({fast / naive:.2f}x), CrossEncoder.predict {reference:.1f} "
          f"pairs/s ({fast / reference:.2f}x), batch size {args.batch_size}")
    print(json.dumps({"train_steps_per_second": steps_per_second, "evaluate_pairs_per_second": fast,
                      "naive_pairs_per_second": naive, "speedup": fast / naive,
                      "cross_encoder_pairs_per_second": reference, "speedup_vs_cross_encoder": fast / reference}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
