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

Library against the plain loop, in the same run: training steps/s of ``trainers/ranker.py`` against a
plain PyTorch loop (same backbone, batch of 12 x 10 candidates, padding to the step's longest pair, AdamW, tokenizer
called every step), and model-side scoring pairs/s of the library (tokens encoded once, length-sorted, pinned) against
a plain batched loop (tokenizer per batch, input order). ``--precision`` is passed to both library paths (default
auto: the fast path on CUDA, fp32 on CPU); the plain loops run fp32. The H100 figures for docs/full_scale.md come from
this script run by the bundle's ``smoke`` step and on the remote machine.

CPU paths (``--compare-cpu-paths``, needs ``--model-dir``; no training, no references): the ranker scores the same
distinct pairs three ways, interleaved ``--repeats`` times (median pairs/s, model side: encoding excluded) —
``current``: the previous defaults (batch 64, torch's default threads), ``default``: today's defaults of
``dialshift evaluate`` on a CPU (batch 16, threads set for the machine's load), ``int8``: ``--quantize int8`` on top.
It prints the machine's load average, the largest logit change of each path, whether its predictions files are
byte-identical to ``current``'s, and every metric of every config per path with its change from ``current`` (the
same scoring as ``dialshift evaluate``, bootstrap intervals included). Quick: ``--instances 10`` (about 200 pairs).

    python benchmarks/ranker.py --dataset FOLDER --model-dir RANKER --configs dailydialog uw_0.30 \\
        --instances 10 --compare-cpu-paths [--json OUT.json]
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
                    batch = tokenizer(sep.join(context), candidate, truncation="longest_first",
                                      max_length=ranker.meta["max_length"], return_tensors="pt")
                    model(**batch)
                    count += 1
    return count


def plain_training(args, data: dict, steps: int, device: str) -> float:
    """Steps/s of a plain loop: tokenizer every step, one padded forward, cross-entropy over 10 candidates, AdamW."""
    import numpy as np
    import torch

    from dialshift.models.backbones import load_backbone

    model, tokenizer, _ = load_backbone(args.model, seed=0)
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    gold = [c[k] for c, k in zip(data["candidates"], data["label"], strict=True)]
    rng = np.random.default_rng(0)
    sep = f" {tokenizer.sep_token} "
    elapsed = 0.0
    for step in range(steps + 1):  # the first step warms up and is not timed
        rows = rng.choice(len(gold), size=12, replace=False)
        firsts, seconds = [], []
        for r in rows:
            for candidate in [gold[r], *(gold[i] for i in rng.choice(len(gold), size=9))]:
                firsts.append(sep.join(data["context"][r]))
                seconds.append(candidate)
        started = time.perf_counter()
        batch = tokenizer(firsts, seconds, padding=True, truncation="longest_first", max_length=args.max_length,
                          return_tensors="pt").to(device)
        logits = model(**batch).logits.view(12, 10)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(12, dtype=torch.long, device=device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss.item()
        if step:
            elapsed += time.perf_counter() - started
    return steps / elapsed


def plain_scoring(ranker, pairs, batch_size: int) -> float:
    """Pairs/s of a plain batched loop: the tokenizer on every batch, pairs in input order."""
    import torch

    tokenizer, model = ranker.tokenizer, ranker.model
    device = next(model.parameters()).device
    sep = f" {tokenizer.sep_token} "
    started = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start : start + batch_size]
            batch = tokenizer([sep.join(c) for c, _ in chunk], [r for _, r in chunk], padding=True,
                              truncation="longest_first", max_length=ranker.meta["max_length"], return_tensors="pt")
            model(**batch.to(device)).logits.float().cpu()
    return len(pairs) / (time.perf_counter() - started)


def library_scoring(model_dir, pairs, batch_size: int, device: str, precision: str) -> tuple[float, float]:
    """``(model-side pairs/s, encoding pairs/s)`` of :func:`dialshift.ranking.inference.score_pairs` on pairs encoded
    once (the cost every later pass, seed and method skips)."""
    from dialshift.models.ranker import load_ranker, precision_context, resolve_attention, resolve_precision
    from dialshift.ranking.inference import encode, score_pairs

    precision = resolve_precision(precision, device, "scoring")
    ranker = load_ranker(model_dir, device=device, attn_implementation=resolve_attention("auto", precision),
                         precision=precision)
    started = time.perf_counter()
    encoded = encode(ranker, pairs)
    encoding = len(pairs) / (time.perf_counter() - started)
    with precision_context("tf32" if precision == "tf32" else "fp32", device):
        score_pairs(ranker, encoded, batch_size, progress=False)  # warm-up
        started = time.perf_counter()
        score_pairs(ranker, encoded, batch_size, progress=False)
    return len(pairs) / (time.perf_counter() - started), encoding


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


def cpu_paths(args) -> int:
    """``--compare-cpu-paths``: see the module docstring."""
    import os
    import statistics

    import numpy as np
    import torch

    from dialshift.models.adapters import AdapterOptions, load_scorer, machine_threads
    from dialshift.ranking.evaluation import (DEFAULT_BATCH_SIZE, EvaluationSettings, load_configs, scoring_settings,
                                              unique_pairs, write_method)

    default_threads = torch.get_num_threads()
    paths = {"current": (64, default_threads, "none"),
             "default": (DEFAULT_BATCH_SIZE["cpu"], machine_threads(), "none"),
             "int8": (DEFAULT_BATCH_SIZE["cpu"], machine_threads(), "int8")}
    settings = EvaluationSettings([Path(args.model_dir)], ["vanilla"], Path(args.dataset), args.configs,
                                  Path("unused"), max_instances=args.instances, progress=False, plots=False,
                                  replicates=args.bootstrap)
    data = load_configs(settings)
    pairs, rows = unique_pairs(data)
    scorers = {name: load_scorer(args.model_dir, device="cpu", options=AdapterOptions(quantize=quantize))
               for name, (_, _, quantize) in paths.items()}
    encoded = scorers["current"].encode(pairs)  # the same tokens for every path (the ranker's encoding)
    loads, speeds, logits = [os.getloadavg()[0]], {name: [] for name in paths}, {}
    for _ in range(args.repeats):
        for name, (batch, threads, _) in paths.items():
            torch.set_num_threads(threads)
            started = time.perf_counter()
            logits[name] = scorers[name].score(encoded, batch, progress=False)
            speeds[name].append(len(pairs) / (time.perf_counter() - started))
            loads.append(os.getloadavg()[0])
    torch.set_num_threads(default_threads)
    print(f"{len(data)} configs, {len(pairs)} distinct pairs, {os.cpu_count()} CPUs, 1-minute load average "
          f"{min(loads):.1f}..{max(loads):.1f} during the runs, {args.repeats} interleaved repeats (median)")
    documents, report = {}, {"pairs": len(pairs), "load_average": [min(loads), max(loads)], "paths": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in paths:
            documents[name] = write_method(Path(tmp) / name, {c: split["id"] for c, split in data.items()},
                                           {c: logits[name][rows[c]][None] for c in data}, 1.0, {"path": name},
                                           scoring_settings(settings))
        same = {name: all((Path(tmp) / name / "predictions" / f"{c}.jsonl").read_bytes()
                          == (Path(tmp) / "current" / "predictions" / f"{c}.jsonl").read_bytes() for c in data)
                for name in paths}
    base = statistics.median(speeds["current"])
    for name, (batch, threads, quantize) in paths.items():
        speed = statistics.median(speeds[name])
        diff = float(np.abs(logits[name] - logits["current"]).max())
        print(f"{name:8s} batch {batch:3d}, {threads} thread(s), quantize {quantize}: {speed:7.1f} pairs/s "
              f"({speed / base:.2f}x current), max |logit change| {diff:.2e}, predictions "
              f"{'byte-identical' if same[name] else 'differ'}")
        report["paths"][name] = {"batch_size": batch, "threads": threads, "quantize": quantize,
                                 "pairs_per_second": speed, "ratio": speed / base, "max_logit_change": diff,
                                 "identical_predictions": same[name], "results": documents[name]["results"]}
    print("\nmetric per config: current | default (change) | int8 (change)")
    for config, values in documents["current"]["results"].items():
        for metric, value in values.items():
            if metric == "instances" or not isinstance(value, float):
                continue
            cells = [f"{documents[n]['results'][config][metric]:.4f} ({documents[n]['results'][config][metric] - value:+.4f})"
                     for n in ("default", "int8")]
            print(f"  {config:12s} {metric:12s} {value:.4f} | {cells[0]} | {cells[1]}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="Hub dataset folder with a source config")
    parser.add_argument("--model-dir", default=None, help="a trained ranker (default: train a MiniLM one here)")
    parser.add_argument("--configs", nargs="+", default=["dailydialog", "uw_0.10", "ic_0of6", "sr_6"])
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per forward pass, (a) and (c)")
    parser.add_argument("--instances", type=int, default=30, help="instances per config (default: 30)")
    parser.add_argument("--train-steps", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--model", default="minilm", help="backbone of the trained rankers (default: minilm)")
    parser.add_argument("--precision", default="auto", choices=("auto", "fp32", "tf32", "bf16"),
                        help="library paths (default auto: the fast path on CUDA, fp32 on CPU)")
    parser.add_argument("--score-batch-size", type=int, default=None,
                        help="pairs per batch of the library/plain scoring comparison (default: 512 on CUDA, else "
                             "--batch-size)")
    parser.add_argument("--no-reference", action="store_true", help="skip the naive loop and CrossEncoder.predict")
    parser.add_argument("--compare-cpu-paths", action="store_true",
                        help="current vs default vs int8 scoring on the CPU, with every metric's change (needs "
                             "--model-dir)")
    parser.add_argument("--repeats", type=int, default=2, help="--compare-cpu-paths: interleaved repeats (default 2)")
    parser.add_argument("--bootstrap", type=int, default=200, help="--compare-cpu-paths: bootstrap replicates")
    parser.add_argument("--json", default=None, help="--compare-cpu-paths: also write the figures to this file")
    args = parser.parse_args(argv)
    if args.compare_cpu_paths:
        if not args.model_dir:
            parser.error("--compare-cpu-paths needs --model-dir (a ranker folder)")
        return cpu_paths(args)

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
                             "--max-eval-instances", "5", "--max-length", str(args.max_length), "--no-progress",
                             "--model", args.model, "--precision", args.precision])
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

        from dialshift.ranking.data import load_split
        from dialshift.ranking.evaluation import unique_pairs

        device = "cuda" if torch.cuda.is_available() else "cpu"
        train_data = load_split(args.dataset, "dailydialog", "train", 12 * args.train_steps * 4, 0)
        plain_steps = plain_training(args, train_data, args.train_steps, device)
        pairs = unique_pairs(data)[0]
        batch = args.score_batch_size or (512 if device == "cuda" else args.batch_size)
        library_pairs, encoding = library_scoring(model_dir, pairs, batch, device, args.precision)
        plain_ranker = load_ranker(model_dir, device=device)
        plain_pairs = plain_scoring(plain_ranker, pairs, batch)
        print(f"training steps/s (batch 12 x 10, max length {args.max_length}, {device}): library "
              f"{steps_per_second:.2f}, plain loop {plain_steps:.2f} ({steps_per_second / plain_steps:.2f}x)")
        print(f"scoring pairs/s ({len(pairs)} pairs, batch {batch}, {device}): library {library_pairs:.0f} "
              f"(model side; encoding once {encoding:.0f} pairs/s), plain loop {plain_pairs:.0f} "
              f"({library_pairs / plain_pairs:.2f}x)")
        library = {"device": device, "precision": args.precision, "train_steps_per_second": steps_per_second,
                   "plain_train_steps_per_second": plain_steps, "train_ratio": steps_per_second / plain_steps,
                   "score_pairs_per_second": library_pairs, "encode_pairs_per_second": encoding,
                   "plain_score_pairs_per_second": plain_pairs, "score_ratio": library_pairs / plain_pairs}
        if args.no_reference:
            print(json.dumps(library))
            return 0
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
    print(json.dumps({**library, "evaluate_pairs_per_second": fast,
                      "naive_pairs_per_second": naive, "speedup": fast / naive,
                      "cross_encoder_pairs_per_second": reference, "speedup_vs_cross_encoder": fast / reference}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
