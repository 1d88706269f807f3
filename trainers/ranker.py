#!/usr/bin/env python
"""Train a cross-encoder response ranker on DailyDialog (Lee et al. 2022, §3.2 and §3.5).

    accelerate launch -m dialshift_trainers.ranker --dataset FOLDER --output-dir DIR [--model minilm|tiny|PATH]
        [--seed S]
    python -m dialshift_trainers.ranker ...                          # same, single process

Training uses the train split of ``--config`` (default ``dailydialog``, the unshifted config): every turn after the
first of each dialogue is a response (instance). Each step scores, per instance, the gold response and
``--num-negatives`` random negatives drawn from the gold responses of the other training instances, re-drawn every
epoch from ``numpy.random.default_rng([seed, epoch])``, and minimises the cross-entropy of the softmax over those 10
candidates. Optimiser: AdamW (lr 2e-5, constant, no weight decay), batch 12 instances, 1 epoch — the paper's settings.

Model selection: validation R@1/10 on the config's validation split (its fixed 10 candidates) is computed at the end
of every epoch and every ``--eval-steps`` steps; the best weights are kept (ties keep the earlier). The temperature of
temperature scaling is then fitted on the selected model's validation logits (NLL) and stored in the ranker folder's
``dialshift_model.json`` together with the training arguments and validation metrics.

Checkpoints (``--checkpointing-steps N``) go to ``DIR/checkpoints/step_N`` through ``accelerator.save_state`` (model,
optimiser, schedule, RNG states) plus ``trainer_state.json``; ``--resume-from-checkpoint PATH|latest`` continues
mid-epoch deterministically: the epoch's order and negatives are recomputed from the seed and the consumed batches
skipped.
The loop, checkpoints, selection and the folder's metadata are those of :mod:`dialshift.training`.

Seeds side by side: ``--concurrent-seeds 0 1 2 3 4`` trains those seeds as one stacked computation
(:mod:`dialshift.training.concurrent`: ``vmap`` over ``functional_call``, eager attention, one AdamW over the stacked
weights) into ``--output-dir/seed<S>``; seed S gets the initial weights, data order and negatives of ``--seed S``,
dropout on (its masks drawn per seed from one generator stream, so not the masks of a one-seed run). It keeps the
final weights (Lee's protocol selects at the end of its one epoch) and writes no checkpoints.

Speed: every training and validation string is tokenized once, up front, into the shared token cache
(:func:`dialshift.models.ranker.shared_encoder`); on CUDA a step is one forward over its 120 pairs
(``--train-chunk-size 0``), batches come from pinned memory with non-blocking copies, AdamW is the fused kernel and
matmuls run in TF32 (``--precision auto``; ``--precision fp32`` is the exact path, ``bf16`` autocasts with eager
attention). On CPU: fp32, chunks of 40 pairs.
"""

import sys

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.training import (
    Selection,
    Task,
    add_training_arguments,
    arguments,
    configure_logging,
    train,
    trainer_parser,
)

DEFAULT_CONFIG = "dailydialog"


def parse_args(argv=None):
    p = trainer_parser(__doc__, "ranker")
    p.add_argument("--dataset", required=True, help="dialshift Hub dataset folder with the --config config")
    p.add_argument("--config", default=DEFAULT_CONFIG,
                   help=f"the config whose train/validation splits are used (default: {DEFAULT_CONFIG})")
    p.add_argument("--model", default="minilm",
                   help="backbone: 'minilm' (all-MiniLM-L6-v2, offline, default), 'tiny' (random 2-layer BERT, tests), "
                        "or a local folder / Hub id")
    add_training_arguments(p, learning_rate=2e-5, num_epochs=1)
    p.add_argument("--batch-size", type=arguments.positive_int, default=12,
                   help="training instances (of 10 candidates each) per step")
    p.add_argument("--num-negatives", type=arguments.positive_int, default=9)
    p.add_argument("--max-length", type=arguments.positive_int, default=256,
                   help="tokens per (context, candidate) pair")
    p.add_argument("--max-train-instances", type=arguments.positive_int, default=None,
                   help="subsample of the training instances for CPU runs: the N with the smallest hash of "
                        "(--sample-seed, id), so rankers with different --seed share the same training data")
    p.add_argument("--sample-seed", type=arguments.seed, default=0, help="seed of the --max-train-instances subsample")
    p.add_argument("--max-eval-instances", type=arguments.positive_int, default=None,
                   help="seeded subsample of the validation instances used for model selection and temperature")
    p.add_argument("--train-chunk-size", type=arguments.non_negative_int, default=None,
                   help="pairs per forward inside a training step (length-sorted; the step is still one batch); "
                        "0: the whole step in one forward (default: 0 on CUDA, 40 on CPU)")
    p.add_argument("--precision", default="auto", choices=("auto", "fp32", "tf32", "bf16"),
                   help="auto: tf32 on CUDA (measured fastest), fp32 on CPU; bf16: autocast, eager attention")
    p.add_argument("--attn", default="auto", choices=("auto", "eager", "sdpa"),
                   help="attention implementation (auto: eager under bf16, else the library default)")
    p.add_argument("--eval-batch-size", type=arguments.positive_int, default=64, help="pairs per validation batch")
    p.add_argument("--concurrent-seeds", type=arguments.seed, nargs="+", default=None, metavar="SEED",
                   help="train these seeds side by side as one stacked computation (dialshift.training.concurrent) "
                        "into --output-dir/seed<S>, each with its own data order and negatives; no checkpoints, "
                        "the final weights are kept (Lee's protocol: 1 epoch, selection at its end); --seed is "
                        "ignored")
    return p.parse_args(argv)


def draw_negatives(gold: np.ndarray, pool_size: int, k: int, rng) -> np.ndarray:
    """``len(gold) x k`` distinct pool indices per row, none equal to the row's gold index."""
    if pool_size <= k:
        raise DialshiftError(f"need more than {k} distinct training responses to draw {k} negatives, have {pool_size}")

    def draw(rows):
        values = rng.integers(0, pool_size - 1, size=(len(rows), k))
        return values + (values >= gold[rows, None])  # skip the gold index

    negatives = draw(np.arange(len(gold)))
    while True:  # redraw the (rare) rows with a repeated negative
        ordered = np.sort(negatives, axis=1)
        repeated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not len(repeated):
            return negatives
        negatives[repeated] = draw(repeated)


def epoch_plan(gold: np.ndarray, pool_size: int, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """The order of the instances and their ``k`` negatives for one epoch, drawn only from ``rng``."""
    order = rng.permutation(len(gold))
    return order, draw_negatives(gold, pool_size, k, rng)


def forward_by_length(model, encoder, pairs, chunk_size: int, device):
    """Logits of ``pairs`` (in order), computed in length-sorted chunks so that short pairs are not padded to the
    longest pair of the batch (``chunk_size`` 0: one forward); the loss and its gradient are those of one forward
    over the whole batch."""
    import torch

    encoded = encoder.encode_flat(pairs)
    pin = torch.device(device).type == "cuda"
    rows, parts = [], []
    for chunk_rows, chunk in encoded.batches(chunk_size or len(encoded), pin):
        rows.append(chunk_rows)
        parts.append(model(**{k: v.to(device, non_blocking=True) for k, v in chunk.items()}).logits[:, 0])
    inverse = torch.as_tensor(np.argsort(np.concatenate(rows)), device=device)
    return torch.cat(parts)[inverse]


def load_training_data(args):
    from dialshift.ranking.data import load_split, read_card_configs

    configs = read_card_configs(args.dataset)
    if args.config not in configs:
        raise DialshiftError(f"{args.dataset}: no {args.config!r} config to train on (it has: "
                             f"{', '.join(sorted(configs))}; pass --config or build it with `dialshift build`)")
    train_data = load_split(args.dataset, args.config, "train", args.max_train_instances, args.sample_seed, configs)
    validation = load_split(args.dataset, args.config, "validation", args.max_eval_instances, 0, configs)
    if not train_data["id"] or not validation["id"]:
        raise DialshiftError(f"{args.dataset}: the {args.config} config's train or validation split is empty")
    return train_data, validation


class RankingTask(Task):
    """Cross-entropy over (gold + ``num_negatives`` fresh random negatives), selection on validation R@1/10."""

    name, metric = "ranking", "recall@1"

    def __init__(self, args):
        self.args = args
        self.train_data, self.validation = load_training_data(args)
        gold_text = [c[label] for c, label in zip(self.train_data["candidates"], self.train_data["label"], strict=True)]
        self.pool = list(dict.fromkeys(gold_text))  # every distinct gold response of the (subsampled) train split
        index = {text: i for i, text in enumerate(self.pool)}
        self.gold = np.array([index[t] for t in gold_text])

    def build(self, accelerator):
        from dialshift.models.backbones import load_backbone
        from dialshift.models.ranker import resolve_attention, resolve_precision, shared_encoder

        self.accelerator = accelerator
        self.precision = resolve_precision(self.args.precision, accelerator.device, "training")
        self.attn = resolve_attention(self.args.attn, self.precision, "training")
        on_cuda = accelerator.device.type == "cuda"
        self.chunk_size = self.args.train_chunk_size if self.args.train_chunk_size is not None else (0 if on_cuda
                                                                                                     else 40)
        model, self.tokenizer, self.backbone = load_backbone(self.args.model, self.args.seed)
        if self.attn:
            model.set_attn_implementation(self.attn)
        self.encoder = shared_encoder(self.tokenizer, self.args.max_length)
        # every string once, in one fast batch: no tokenizer call inside the training loop
        self.encoder.tokenize(text for split in (self.train_data, self.validation) for turns in split["context"]
                              for text in turns)
        self.encoder.tokenize(self.pool)
        self.encoder.tokenize(text for candidates in self.validation["candidates"] for text in candidates)
        return model

    def optimizer(self, model, args):
        import torch

        fused = {"fused": True} if self.accelerator.device.type == "cuda" else {}  # same update, one kernel
        return torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay, **fused)

    def epoch_batches(self, epoch, rng):
        order, negatives = epoch_plan(self.gold, len(self.pool), self.args.num_negatives, rng)
        size = self.args.batch_size
        return [(rows, negatives[rows]) for rows in (order[i : i + size] for i in range(0, len(order), size))]

    def loss(self, model, batch):
        import torch

        from dialshift.models.ranker import precision_context

        rows, negatives = batch

        pairs = [(self.train_data["context"][r], self.pool[i]) for r, n in zip(rows, negatives, strict=True)
                 for i in (self.gold[r], *n)]
        with precision_context(self.precision, self.accelerator.device):
            logits = forward_by_length(model, self.encoder, pairs, self.chunk_size, self.accelerator.device)
        logits = logits.view(len(rows), self.args.num_negatives + 1)
        return torch.nn.functional.cross_entropy(logits, torch.zeros(len(rows), dtype=torch.long,
                                                                     device=logits.device))

    def validation_size(self):
        return len(self.validation["id"])

    def validation_outputs(self, model, rows):
        from dialshift.models.ranker import Ranker, precision_context
        from dialshift.ranking.inference import instance_pairs, score_pairs

        ranker = Ranker(self.args.output_dir, model, self.tokenizer, {"max_length": self.args.max_length})
        ranker._encoder = self.encoder
        progress = self.accelerator.is_local_main_process and not self.args.no_progress
        if not hasattr(self, "validation_pairs"):  # encoded once, reused at every evaluation point
            share = {key: [self.validation[key][row] for row in rows] for key in ("context", "candidates")}
            self.validation_pairs = self.encoder.encode_flat(instance_pairs(share))
        with precision_context("fp32" if self.precision == "fp32" else "tf32", self.accelerator.device):
            logits = score_pairs(ranker, self.validation_pairs, self.args.eval_batch_size, progress=progress,
                                 desc="validation").reshape(len(rows), -1)
        return {"logits": logits}

    def validation_score(self, outputs):
        logits = outputs["logits"]
        return float(np.mean(logits.argmax(axis=1) == np.asarray(self.validation["label"]))), {"logits": logits}

    def describe(self):
        return {"backbone": self.backbone, "model_argument": self.args.model, "separator": self.tokenizer.sep_token,
                "max_length": self.args.max_length, "train_instances": len(self.gold), "precision": self.precision,
                "attention": self.attn or "default", "train_chunk_size": self.chunk_size,
                "predictive_probability": "softmax over the candidates' logits"}

    def finalize(self, output_dir, selection: Selection):
        from dialshift.models.uncertainty import fit_temperature, negative_log_likelihood

        logits, labels = selection.arrays["logits"], np.asarray(self.validation["label"])
        temperature = fit_temperature(logits, labels)
        self.tokenizer.save_pretrained(output_dir)  # the selected weights are already in place
        return {"temperature": temperature, "validation": {
            "instances": len(labels), "nll": negative_log_likelihood(logits, labels),
            "nll_temperature": negative_log_likelihood(logits, labels, temperature)}}


def train_concurrently(args) -> list[dict]:
    """``--concurrent-seeds``: every seed's ranker folder (``OUTPUT/seed<S>``) from one stacked training run, the
    batches of seed S those of ``--seed S`` (the same epoch plan), then per seed the validation logits, the
    temperature and the folder's metadata as :func:`dialshift.training.train` writes them. Returns their metadata."""
    import time
    from pathlib import Path

    import torch
    from accelerate import Accelerator

    from dialshift.models.backbones import load_backbone
    from dialshift.models.metadata import class_path, library_versions, write_model_meta
    from dialshift.models.ranker import precision_context
    from dialshift.training.arguments import claim_output_dir, recorded_options
    from dialshift.training.concurrent import StackedSeeds, stack_batches
    from dialshift.training.task import Selection, epoch_rng

    seeds = list(dict.fromkeys(args.concurrent_seeds))
    task = RankingTask(args)
    accelerator = Accelerator()
    task.build(accelerator)
    device = accelerator.device
    models = [load_backbone(args.model, seed)[0].to(device) for seed in seeds]
    candidates = args.num_negatives + 1

    def loss(call, batch):
        logits = call(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                      token_type_ids=batch["token_type_ids"]).logits[:, 0]
        logits = logits.gather(0, batch["inverse"]).view(-1, candidates)  # back to the batch's order
        return torch.nn.functional.cross_entropy(logits, torch.zeros(logits.shape[0], dtype=torch.long,
                                                                     device=logits.device))

    def inputs(rows, negatives):
        pairs = [(task.train_data["context"][r], task.pool[i]) for r, n in zip(rows, negatives, strict=True)
                 for i in (task.gold[r], *n)]
        encoded = task.encoder.encode_flat(pairs)
        order, batch = next(encoded.batches(len(encoded)))
        batch = {k: v.to(device) for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        batch.setdefault("token_type_ids", torch.zeros_like(batch["input_ids"]))
        batch["inverse"] = torch.as_tensor(np.argsort(order), device=device)
        return batch

    # train mode, as the runner trains: dropout on, its masks drawn per seed from one generator stream
    stacked = StackedSeeds(models, loss, learning_rate=args.learning_rate, weight_decay=args.weight_decay,
                           dropout=True)
    steps, seconds = 0, 0.0
    for epoch in range(args.num_epochs):
        plans = [task.epoch_batches(epoch, epoch_rng(seed, epoch)) for seed in seeds]
        for step_batches in zip(*plans, strict=True):
            if args.max_steps is not None and steps >= args.max_steps:
                break
            batch = stack_batches([inputs(*b) for b in step_batches], {"input_ids": task.encoder.pad_id})
            started = time.perf_counter()
            with precision_context(task.precision, device):
                stacked.step(batch)
            if device.type == "cuda":
                torch.cuda.synchronize()
            seconds += time.perf_counter() - started
            steps += 1
    metas = []
    for index, (seed, model) in enumerate(zip(seeds, models, strict=True)):
        output_dir = claim_output_dir(Path(args.output_dir) / f"seed{seed}", "trainers/ranker.py",
                                      inputs=(args.model, args.dataset))
        model.load_state_dict(stacked.state_dict(index))
        model.eval()
        rows = np.arange(task.validation_size())
        score, extras = task.validation_score(task.validation_outputs(model, rows))
        np.save(output_dir / "validation_logits.npy", extras["logits"])
        task.save(model, output_dir)
        described = task.describe()
        extra = task.finalize(output_dir, Selection(steps, float(score), {}, {"logits": extras["logits"]}))
        versions = library_versions()
        meta = {"task": task.name, "model_class": class_path(model), "backbone": described.pop("backbone", None),
                **described, "seed": seed, "training": {**recorded_options(args), "seed": seed},
                "versions": versions, "dialshift_version": versions["dialshift"], "steps": steps,
                "selected_step": steps, "selection": {"metric": task.metric, "step": steps,
                                                      "rule": "the final weights (concurrent seeds)"},
                "history": [{"step": steps, f"validation_{task.metric}": float(score)}],
                "validation": {task.metric: float(score), **extra.pop("validation", {})},
                "train_steps_per_second": steps / seconds if seconds else None,
                "concurrent_seeds": seeds, "train_seed_steps_per_second": len(seeds) * steps / seconds
                if seconds else None, **extra}
        write_model_meta(output_dir, meta)
        metas.append(meta)
    return metas


def main(argv=None) -> int:
    args = parse_args(argv)
    configure_logging()
    try:
        arguments.check_output_dir(args.output_dir, inputs=(args.model, args.dataset))
        if args.concurrent_seeds:
            for meta in train_concurrently(args):
                print(f"seed {meta['seed']}: temperature T = {meta['temperature']:.3f}")
            return 0
        meta = train(RankingTask(args), args)
    except DialshiftError as error:
        print(f"trainers/ranker.py: error: {error}", file=sys.stderr)
        return 2
    if meta is not None:
        print(f"temperature T = {meta['temperature']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
