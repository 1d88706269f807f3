#!/usr/bin/env python
"""Seeds side by side: training steps/s of S seeds stacked into one computation against one seed at a time.

    python benchmarks/concurrent_seeds.py [--model minilm|tiny|PATH] [--seeds 5] [--steps 20] [--quick]

Both paths train the same S rankers (backbone ``--model``, seed s for ranker s) on the same batches: ``--batch-size``
instances x ``--candidates`` pairs of random tokens, lengths drawn per pair up to ``--max-length`` (seeded, a new
batch per seed and step), cross-entropy over each instance's candidates, AdamW (lr 2e-5). (a) One seed at a time: for
each seed, ``--steps`` plain steps (forward, backward, AdamW), the models' own attention. (b) Stacked:
:class:`dialshift.training.concurrent.StackedSeeds`, ``--steps`` steps of all S seeds at once (``vmap`` over
``functional_call``, eager attention). Printed: seed-steps/s of each (S x steps over the seconds of the steps, after
``--warmup`` untimed steps) and their ratio, in one run; on CUDA both in TF32. ``--quick``: the tiny model, 2 seeds,
2 steps, max length 32 (seconds on a CPU: says the path runs, not how fast a GPU is).
"""

import argparse
import json
import time

import numpy as np


def batches(seed: int, steps: int, vocab: int, rows: int, candidates: int, max_length: int, device):
    import torch

    out = []
    for step in range(steps):
        rng = np.random.default_rng([seed, step])
        lengths = rng.integers(max(4, max_length // 4), max_length + 1, size=rows * candidates)
        ids = np.zeros((len(lengths), lengths.max()), dtype=np.int64)
        for row, length in enumerate(lengths):
            ids[row, :length] = rng.integers(5, vocab, size=length)
        ids = torch.as_tensor(ids, device=device)
        out.append({"input_ids": ids, "attention_mask": (ids != 0).long(), "token_type_ids": torch.zeros_like(ids)})
    return out


def make_loss(rows: int, candidates: int):
    import torch

    def loss(call, batch):
        logits = call(**batch).logits[:, 0].reshape(rows, candidates)
        return torch.nn.functional.cross_entropy(logits, torch.zeros(rows, dtype=torch.long, device=logits.device))

    return loss


def timed(run, device) -> float:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    run()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - started


def main(argv=None) -> int:
    import torch

    from dialshift.models.backbones import load_backbone
    from dialshift.training.concurrent import StackedSeeds, stack_batches

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="minilm")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=12)
    p.add_argument("--candidates", type=int, default=10)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--dropout", action="store_true", help="train mode (dropout on) in both paths")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    if args.quick:
        args.model, args.seeds, args.steps, args.warmup, args.max_length = "tiny", 2, 2, 1, 32
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    loss = make_loss(args.batch_size, args.candidates)
    total = args.warmup + args.steps
    models = [load_backbone(args.model, seed)[0].to(device) for seed in range(args.seeds)]
    vocab = models[0].config.vocab_size
    data = [batches(seed, total, vocab, args.batch_size, args.candidates, args.max_length, device)
            for seed in range(args.seeds)]

    def alone(model, seed, steps):
        model.train(args.dropout)
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)

        def run():
            for batch in steps:
                loss(lambda **inputs: model(**inputs), batch).backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
        return run

    one_seconds = 0.0
    for seed, model in enumerate(models):
        alone(model, seed, data[seed][: args.warmup])()
        one_seconds += timed(alone(model, seed, data[seed][args.warmup:]), device)
    models = [load_backbone(args.model, seed)[0].to(device) for seed in range(args.seeds)]
    stacked = StackedSeeds(models, loss, learning_rate=2e-5, dropout=args.dropout)
    joined = [stack_batches([data[seed][step] for seed in range(args.seeds)]) for step in range(total)]
    for batch in joined[: args.warmup]:
        stacked.step(batch)
    stacked_seconds = timed(lambda: [stacked.step(batch) for batch in joined[args.warmup:]], device)
    seed_steps = args.seeds * args.steps
    result = {"device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu", "model": args.model,
              "seeds": args.seeds, "steps": args.steps, "batch": f"{args.batch_size} x {args.candidates}",
              "max_length": args.max_length, "dropout": args.dropout,
              "one_at_a_time_seed_steps_per_second": round(seed_steps / one_seconds, 2),
              "stacked_seed_steps_per_second": round(seed_steps / stacked_seconds, 2),
              "stacked_over_one_at_a_time": round(one_seconds / stacked_seconds, 2)}
    print(f"{result['device']}, {args.model}, {args.seeds} seeds x {args.steps} steps of {result['batch']} pairs "
          f"(max length {args.max_length}): one seed at a time {result['one_at_a_time_seed_steps_per_second']} "
          f"seed-steps/s, stacked {result['stacked_seed_steps_per_second']} seed-steps/s: "
          f"{result['stacked_over_one_at_a_time']}x")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
