#!/usr/bin/env python
"""Train a cross-encoder response ranker on DailyDialog (Lee et al. 2022, §3.2 and §3.5).

    accelerate launch trainers/ranker.py --dataset FOLDER --output-dir DIR [--model minilm|tiny|PATH_OR_ID] [--seed S]
    python trainers/ranker.py ...                                    # same, single process

Training uses the ``source`` config's train split: every turn after the first of each dialogue is a response
(instance). Each step scores, per instance, the gold response and ``--num-negatives`` random negatives drawn from the
gold responses of the other training instances, re-drawn every epoch from ``numpy.random.default_rng([seed, epoch])``,
and minimises the cross-entropy of the softmax over those 10 candidates. Optimiser: AdamW (lr 2e-5, constant, no
weight decay), batch 12 instances, 1 epoch — the paper's settings.

Model selection: validation R@1/10 on the ``source`` validation split (its fixed 10 candidates) is computed at the end
of every epoch and every ``--eval-steps`` steps; the best weights are kept (ties keep the earlier). The temperature of
temperature scaling is then fitted on the selected model's validation logits (NLL) and stored in the ranker folder's
``dialshift_ranker.json`` together with the training arguments and validation metrics.

Checkpoints (``--checkpointing-steps N``) go to ``DIR/checkpoints/step_N`` through ``accelerator.save_state`` (model,
optimiser, RNG states) plus ``trainer_state.json``; ``--resume-from-checkpoint PATH|latest`` continues mid-epoch
deterministically: the epoch's order and negatives are recomputed from the seed and the consumed batches skipped.
"""

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from dialshift import __version__
from dialshift.errors import DialshiftError

TRAINER_STATE = "trainer_state.json"
BEST_FILES = ("config.json", "model.safetensors", "validation_logits.npy")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", required=True, help="dialshift Hub dataset folder with a `source` config")
    p.add_argument("--output-dir", required=True, help="where the trained ranker folder is written")
    p.add_argument("--model", default="minilm",
                   help="backbone: 'minilm' (all-MiniLM-L6-v2, offline, default), 'tiny' (random 2-layer BERT, tests), "
                        "or a local folder / Hub id")
    p.add_argument("--seed", type=int, default=0, help="seed of the head initialisation, negatives, order and dropout")
    p.add_argument("--learning-rate", type=float, default=2e-5)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--batch-size", type=int, default=12, help="training instances (of 10 candidates each) per step")
    p.add_argument("--num-epochs", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many optimiser steps in total")
    p.add_argument("--num-negatives", type=int, default=9)
    p.add_argument("--max-length", type=int, default=256, help="tokens per (context, candidate) pair")
    p.add_argument("--max-train-instances", type=int, default=None,
                   help="subsample of the training instances for CPU runs: the N with the smallest hash of "
                        "(--sample-seed, id), so rankers with different --seed share the same training data")
    p.add_argument("--sample-seed", type=int, default=0, help="seed of the --max-train-instances subsample")
    p.add_argument("--max-eval-instances", type=int, default=None,
                   help="seeded subsample of the validation instances used for model selection and temperature")
    p.add_argument("--train-chunk-size", type=int, default=40,
                   help="pairs per forward inside a training step (length-sorted; the step is still one batch)")
    p.add_argument("--eval-batch-size", type=int, default=64, help="pairs per validation batch")
    p.add_argument("--eval-steps", type=int, default=None, help="also validate every N steps (default: epoch ends)")
    p.add_argument("--checkpointing-steps", type=int, default=None, help="save a resumable checkpoint every N steps")
    p.add_argument("--resume-from-checkpoint", default=None, help="a checkpoint folder, or 'latest'")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    args = p.parse_args(argv)
    for name in ("batch_size", "num_epochs", "num_negatives", "eval_batch_size", "train_chunk_size"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


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


def epoch_plan(num_instances: int, gold: np.ndarray, pool_size: int, k: int, seed: int, epoch: int):
    """The order of instances and their negatives for one epoch, a pure function of (seed, epoch)."""
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(num_instances)
    return order, draw_negatives(gold, pool_size, k, rng)


def forward_by_length(model, encoder, pairs, chunk_size: int, device):
    """Logits of ``pairs`` (in order), computed in length-sorted chunks so that short pairs are not padded to the
    longest pair of the batch; the loss and its gradient are those of one forward over the whole batch."""
    import torch

    encoded = encoder.encode_pairs(pairs)
    order = np.argsort([len(ids) for ids, _ in encoded], kind="stable")
    parts = []
    for start in range(0, len(order), chunk_size):
        chunk = encoder.collate([encoded[i] for i in order[start : start + chunk_size]])
        parts.append(model(**{k: v.to(device) for k, v in chunk.items()}).logits[:, 0])
    inverse = torch.as_tensor(np.argsort(order), device=device)
    return torch.cat(parts)[inverse]


def load_training_data(args):
    from dialshift.ranking.data import load_split, read_card_configs

    configs = read_card_configs(args.dataset)
    if "source" not in configs:
        raise DialshiftError(f"{args.dataset}: no `source` config to train on (build it with `dialshift build`)")
    train = load_split(args.dataset, "source", "train", args.max_train_instances, args.sample_seed, configs)
    validation = load_split(args.dataset, "source", "validation", args.max_eval_instances, 0, configs)
    if not train["id"] or not validation["id"]:
        raise DialshiftError(f"{args.dataset}: the source config's train or validation split is empty")
    return train, validation


def validate(ranker, validation, batch_size, progress):
    """Validation logits (N x 10) and R@1/10."""
    from dialshift.ranking.scoring import instance_pairs, score_pairs

    pairs = instance_pairs(validation)
    logits = score_pairs(ranker, pairs, batch_size, progress=progress, desc="validation").reshape(
        len(validation["id"]), -1)
    labels = np.asarray(validation["label"])
    return logits, float(np.mean(logits.argmax(axis=1) == labels))


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return train(args)
    except DialshiftError as error:
        print(f"trainers/ranker.py: error: {error}", file=sys.stderr)
        return 2


def train(args) -> int:
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from tqdm.auto import tqdm

    from dialshift.models.backbones import load_backbone
    from dialshift.models.ranker import RANKER_FILE, PairEncoder, Ranker, write_json_atomic, write_ranker_meta
    from dialshift.models.uncertainty import fit_temperature, negative_log_likelihood

    output_dir = Path(args.output_dir)
    train_data, validation = load_training_data(args)
    accelerator = Accelerator()
    progress = accelerator.is_local_main_process and not args.no_progress
    set_seed(args.seed)

    # The response pool: every distinct gold response of the (subsampled) training split.
    contexts = train_data["context"]
    gold_text = [cands[label] for cands, label in zip(train_data["candidates"], train_data["label"], strict=True)]
    pool = list(dict.fromkeys(gold_text))
    pool_index = {text: i for i, text in enumerate(pool)}
    gold = np.array([pool_index[t] for t in gold_text])

    model, tokenizer, backbone = load_backbone(args.model, args.seed)
    encoder = PairEncoder(tokenizer, args.max_length)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    model, optimizer = accelerator.prepare(model, optimizer)
    steps_per_epoch = math.ceil(len(gold) / args.batch_size)
    total_steps = steps_per_epoch * args.num_epochs
    if args.max_steps is not None:
        total_steps = min(total_steps, args.max_steps)

    state = {"epoch": 0, "step_in_epoch": 0, "global_step": 0, "best": None, "history": []}
    if args.resume_from_checkpoint:
        checkpoint = resolve_checkpoint(output_dir, args.resume_from_checkpoint)
        accelerator.load_state(str(checkpoint))
        state = json.loads((checkpoint / TRAINER_STATE).read_text())
        if (checkpoint / "best").is_dir() and accelerator.is_main_process:
            output_dir.mkdir(parents=True, exist_ok=True)
            shutil.copytree(checkpoint / "best", output_dir, dirs_exist_ok=True)
        accelerator.print(f"resumed from {checkpoint} at step {state['global_step']}")

    def evaluate_and_select():
        unwrapped = accelerator.unwrap_model(model)
        ranker = Ranker(output_dir, unwrapped, tokenizer, {"max_length": args.max_length})
        ranker._encoder = encoder
        logits, recall = validate(ranker, validation, args.eval_batch_size, progress)
        state["history"].append({"step": state["global_step"], "validation_recall@1": recall})
        if accelerator.is_main_process and (state["best"] is None or recall > state["best"]["recall@1"]):
            unwrapped.save_pretrained(output_dir)
            np.save(output_dir / "validation_logits.npy", logits)
            state["best"] = {"recall@1": recall, "step": state["global_step"]}
        accelerator.print(f"step {state['global_step']}: validation R@1/10 = {recall:.4f}")

    def save_checkpoint():
        folder = output_dir / "checkpoints" / f"step_{state['global_step']}"
        accelerator.save_state(str(folder))
        if accelerator.is_main_process:
            if state["best"] is not None:  # the selected weights so far travel with the checkpoint
                shutil.copytree(output_dir, folder / "best", dirs_exist_ok=True,
                                ignore=lambda d, names: [n for n in names if n not in BEST_FILES])
            write_json_atomic(folder / TRAINER_STATE, state)

    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / RANKER_FILE).unlink(missing_ok=True)  # the folder is a ranker again only when training finishes
    bar = tqdm(total=total_steps, initial=state["global_step"], desc="training", unit="step", disable=not progress)
    loss_fn = torch.nn.CrossEntropyLoss()
    done = state["global_step"] >= total_steps
    train_seconds, trained_steps = 0.0, 0
    while not done and state["epoch"] < args.num_epochs:
        order, negatives = epoch_plan(len(gold), gold, len(pool), args.num_negatives, args.seed, state["epoch"])
        for step in range(state["step_in_epoch"], steps_per_epoch):
            started = time.perf_counter()
            rows = order[step * args.batch_size : (step + 1) * args.batch_size]
            rows = rows[accelerator.process_index :: accelerator.num_processes]  # multi-GPU: split the batch
            pairs = [(contexts[r], pool[i]) for r in rows for i in (gold[r], *negatives[r])]
            model.train()
            logits = forward_by_length(model, encoder, pairs, args.train_chunk_size, accelerator.device)
            logits = logits.view(len(rows), args.num_negatives + 1)
            loss = loss_fn(logits, torch.zeros(len(rows), dtype=torch.long, device=logits.device))
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            train_seconds += time.perf_counter() - started
            trained_steps += 1
            state["global_step"] += 1
            state["step_in_epoch"] = step + 1
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.4f}", epoch=state["epoch"])
            done = state["global_step"] >= total_steps
            end_of_epoch = state["step_in_epoch"] == steps_per_epoch
            if end_of_epoch:
                state["epoch"] += 1
                state["step_in_epoch"] = 0
            if end_of_epoch or done or (args.eval_steps and state["global_step"] % args.eval_steps == 0):
                evaluate_and_select()
            if args.checkpointing_steps and state["global_step"] % args.checkpointing_steps == 0:
                save_checkpoint()
            if done or end_of_epoch:
                break
    bar.close()

    if state["best"] is None:  # nothing trained (e.g. resumed from the final checkpoint): select the current weights
        evaluate_and_select()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        logits = np.load(output_dir / "validation_logits.npy")
        labels = np.asarray(validation["label"])
        temperature = fit_temperature(logits, labels)
        meta = {
            "backbone": backbone,
            "model_argument": args.model,
            "separator": tokenizer.sep_token,
            "max_length": args.max_length,
            "seed": args.seed,
            "predictive_probability": "softmax over the candidates' logits",
            "training": {k: v for k, v in vars(args).items() if k not in ("output_dir", "no_progress")},
            "train_instances": len(gold),
            "steps": state["global_step"],
            "selected_step": state["best"]["step"],
            "history": state["history"],
            "validation": {
                "instances": len(labels),
                "recall@1": state["best"]["recall@1"],
                "nll": negative_log_likelihood(logits, labels),
                "nll_temperature": negative_log_likelihood(logits, labels, temperature),
            },
            "temperature": temperature,
            "train_steps_per_second": trained_steps / train_seconds if train_seconds else None,
            "dialshift_version": __version__,
        }
        tokenizer.save_pretrained(output_dir)  # the selected weights are already in place
        write_ranker_meta(output_dir, meta)
        accelerator.print(f"saved ranker to {output_dir} (step {meta['selected_step']}, validation R@1/10 "
                          f"{meta['validation']['recall@1']:.4f}, T = {temperature:.3f})")
    return 0


def resolve_checkpoint(output_dir: Path, value: str) -> Path:
    if value == "latest":
        found = sorted((output_dir / "checkpoints").glob("step_*"), key=lambda p: int(p.name.split("_")[1]))
        if not found:
            raise DialshiftError(f"{output_dir}/checkpoints: no checkpoint to resume from")
        return found[-1]
    path = Path(value)
    if not (path / TRAINER_STATE).is_file():
        raise DialshiftError(f"{path}: not a trainer checkpoint (no {TRAINER_STATE})")
    return path


if __name__ == "__main__":
    sys.exit(main())
