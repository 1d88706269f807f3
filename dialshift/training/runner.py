"""The training runner every trainer of ``trainers/`` is built on: :class:`Runner` (or :func:`train`) runs a
:class:`~dialshift.training.task.Task` the same way for every task, with the pieces of Accelerate's
``run_glue_no_trainer.py``:

* ``Accelerator`` set-up (``accelerate launch`` or plain ``python``; mixed precision and devices from its config),
  seeding (``accelerate.utils.set_seed(seed)`` before :meth:`Task.build`), ``accelerate.logging`` messages (main
  process) and ``--report-to`` trackers (``Accelerator(log_with=...)``: loss, learning rate and validation metrics,
  under ``OUTPUT/runs``);
* a deterministic epoch plan: epoch ``e`` runs the batches :meth:`Task.epoch_batches` returns for
  ``numpy.random.default_rng([seed, e])`` (:func:`~dialshift.training.task.epoch_rng`), so the order (and e.g.
  sampled negatives) of every epoch is a pure function of the seed. The plan is iterated through Accelerate's
  ``DataLoaderShard``; under multi-process training every process reads every batch and trains on its share
  (:func:`process_share`), so a batch is the same global batch on any number of processes;
* ``--gradient-accumulation-steps N`` (``accelerator.accumulate``): N plan batches per optimiser step, the last
  group of an epoch possibly shorter (its loss is still the mean over its batches);
* the learning rate from ``transformers.get_scheduler`` (``--lr-scheduler-type``, ``--num-warmup-steps``, over the
  run's optimiser steps), times the task's plateau factor (:attr:`Task.plateau_lr_factor`) once per validation
  that does not improve;
* checkpoints every ``checkpointing_steps`` optimiser steps to ``OUTPUT/checkpoints/step_N``
  (``accelerator.save_state``: model, optimiser, schedule, RNG states; ``trainer_state.json``; the selected weights
  so far in ``best/``) and deterministic mid-epoch resume (``resume_from_checkpoint``: a checkpoint folder or
  ``latest``): the epoch's plan is recomputed from the seed and the consumed batches are skipped, so the final
  weights are byte-identical to an uninterrupted run;
* validation at every epoch end, at the last step and every ``eval_steps`` steps: each process computes the
  outputs of its share of the validation rows, ``accelerator.gather_for_metrics`` collects every row exactly once,
  and every process scores them; the weights with the highest validation score are kept in ``OUTPUT`` (ties keep
  the earlier step);
* a progress bar (loss, epoch) on the local main process;
* the self-describing model folder: after :meth:`Task.finalize` (e.g. temperature fitting on the selected model's
  validation outputs) ``dialshift_model.json`` is written last (see :mod:`dialshift.models.metadata`).
"""

import argparse
import dataclasses
import json
import logging
import math
import shutil
import time
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.io import write_json_atomic
from dialshift.models.metadata import (
    CHECKPOINTS,
    MODEL_FILE,
    class_path,
    library_versions,
    write_model_meta,
)
from dialshift.training import arguments
from dialshift.training.arguments import UNRECORDED, TrainingArguments, recorded_options
from dialshift.training.task import Selection, Task, epoch_rng

TRAINER_STATE = "trainer_state.json"
#: Tracker logs (``--report-to``) go to ``OUTPUT/runs/<task name>``; they are not copied into checkpoints.
TRACKER_DIR = "runs"
#: The progress bar and the trackers show the loss every this many steps (``loss.item()`` waits for the GPU).
LOSS_DISPLAY_STEPS = 50
STATE_VERSION = 2
#: The logger of training runs (``accelerate.logging``: main process only unless asked).
LOGGER = "dialshift.training"


def configure_logging(level: int = logging.INFO) -> None:
    """Print the ``dialshift`` loggers' messages (the runner's and the trainers') on stderr: for trainer scripts."""
    logger = logging.getLogger("dialshift")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
        logger.addHandler(handler)
    logger.setLevel(level)


def get_logger(name: str = LOGGER):
    """An ``accelerate.logging`` logger (``logger.info(..., main_process_only=False)`` logs on every process)."""
    from accelerate.logging import get_logger as accelerate_logger

    return accelerate_logger(name)


def process_share(batch, index: int, count: int):
    """Process ``index`` of ``count``'s share of a plan batch: every array, tensor or list in it (also inside tuples
    and dicts) sliced ``[index::count]``; numbers (seeds, epochs) as they are. One process: the batch itself."""
    if count == 1:
        return batch
    if isinstance(batch, tuple):
        return tuple(process_share(part, index, count) for part in batch)
    if isinstance(batch, dict):
        return {key: process_share(part, index, count) for key, part in batch.items()}
    if isinstance(batch, list | range) or getattr(batch, "ndim", 0) > 0:
        return batch[index::count]
    return batch


def share_size(share) -> int | None:
    """The length of the first array, tensor or list in a batch share (its rows), ``None`` when it holds none."""
    if isinstance(share, tuple | dict):
        for part in share.values() if isinstance(share, dict) else share:
            size = share_size(part)
            if size is not None:
                return size
        return None
    if isinstance(share, list | range) or getattr(share, "ndim", 0) > 0:
        return len(share)
    return None


def resolve_checkpoint(output_dir, value: str) -> Path:
    """A checkpoint folder from ``--resume-from-checkpoint`` (a folder, or ``latest`` under ``output_dir``)."""
    if value == "latest":
        found = sorted((Path(output_dir) / CHECKPOINTS).glob("step_*"), key=lambda p: int(p.name.split("_")[1]))
        if not found:
            raise DialshiftError(f"{Path(output_dir) / CHECKPOINTS}: no checkpoint to resume from")
        return found[-1]
    path = Path(value)
    if not (path / TRAINER_STATE).is_file():
        raise DialshiftError(f"{path}: not a trainer checkpoint (no {TRAINER_STATE})")
    return path


def _split(extras: dict) -> tuple[dict, dict]:
    scalars, arrays = {}, {}
    for key, value in extras.items():
        if isinstance(value, np.ndarray):
            arrays[key] = value
        elif isinstance(value, int | float | np.number):
            scalars[key] = float(value)
        else:
            raise TypeError(f"validation extra {key!r}: expected a number or a numpy array, got {type(value)}")
    return scalars, arrays


def _tracker_config(hyperparameters: dict) -> dict:
    """Hyperparameters as trackers store them (numbers, strings and booleans; anything else as its text)."""
    return {key: value if isinstance(value, bool | int | float | str) else str(value)
            for key, value in hyperparameters.items()}


def _plan_loader(batches: list, skip: int):
    """Accelerate's ``DataLoaderShard`` over an epoch's plan batches (as they are, from ``skip`` on): it tells
    ``accelerator.accumulate`` where the epoch ends. A private generator keeps the global torch RNG untouched."""
    import torch
    from accelerate.data_loader import DataLoaderShard

    return DataLoaderShard(batches, batch_size=None, collate_fn=_as_is, skip_batches=skip,
                           generator=torch.Generator().manual_seed(0))


def _as_is(batch):
    return batch


class Runner:
    """One training run of ``task`` into the model folder ``args.output_dir``: :meth:`run` builds, trains,
    validates, checkpoints and writes the folder. ``hyperparameters`` (default: ``args``) are recorded as the
    metadata's ``training``."""

    def __init__(self, task: Task, args: TrainingArguments, hyperparameters: dict | None = None):
        self.task, self.args, self.output_dir = task, args, args.output_dir
        if hyperparameters is None:
            hyperparameters = {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(args).items()
                               if k not in UNRECORDED}
        self.hyperparameters = hyperparameters
        self.log = get_logger()
        self.train_seconds, self.trained_steps = 0.0, 0

    # --- set-up ------------------------------------------------------------------------------------------------

    def run(self) -> dict | None:
        """Train; return the model folder's metadata (``None`` on processes other than the main one)."""
        self.setup()
        if self.args.resume_from_checkpoint:
            self.resume(resolve_checkpoint(self.output_dir, self.args.resume_from_checkpoint))
        self.train()
        return self.finish()

    def setup(self) -> None:
        from accelerate import Accelerator
        from accelerate.utils import DataLoaderConfiguration, ProjectConfiguration, set_seed
        from transformers import get_scheduler

        args, task = self.args, self.task
        trackers = None if args.report_to == "none" else args.report_to
        # split_batches: a plan batch is one global batch split over the processes, so the schedule steps once per
        # optimiser step whatever the number of processes
        self.accelerator = accelerator = Accelerator(
            gradient_accumulation_steps=args.gradient_accumulation_steps, log_with=trackers,
            dataloader_config=DataLoaderConfiguration(split_batches=True),
            project_config=ProjectConfiguration(project_dir=str(self.output_dir),
                                                logging_dir=str(self.output_dir / TRACKER_DIR)))
        if trackers and not accelerator.log_with:
            raise DialshiftError(f"--report-to {args.report_to}: no such tracker is installed (pip install it, "
                                 "e.g. tensorboard)")
        if accelerator.is_main_process:  # before any work: never into a folder a trainer did not write
            arguments.claim_output_dir(self.output_dir, f"the {task.name} trainer")
        if not accelerator.is_local_main_process:
            import datasets
            import transformers

            datasets.utils.logging.set_verbosity_error()
            transformers.utils.logging.set_verbosity_error()
        set_seed(args.seed)
        model = task.build(accelerator)
        self.model_class = class_path(model)
        optimizer = task.optimizer(model, args)
        self.plan_lengths = [len(task.epoch_batches(epoch, epoch_rng(args.seed, epoch)))
                             for epoch in range(args.num_epochs)]
        total = sum(self.steps_in(length) for length in self.plan_lengths)
        self.total_steps = total if args.max_steps is None else min(total, args.max_steps)
        scheduler = get_scheduler(args.lr_scheduler_type, optimizer, num_warmup_steps=args.num_warmup_steps,
                                  num_training_steps=self.total_steps)
        self.model, self.optimizer, self.scheduler = accelerator.prepare(model, optimizer, scheduler)
        self.identity = {"version": STATE_VERSION, "seed": args.seed, "plan_lengths": self.plan_lengths,
                         "gradient_accumulation_steps": args.gradient_accumulation_steps}
        self.state = {**self.identity, "epoch": 0, "step_in_epoch": 0, "global_step": 0, "best": None,
                      "history": [], "lr_scale": 1.0}
        self.validation_rows = process_share(np.arange(task.validation_size()), accelerator.process_index,
                                             accelerator.num_processes)
        accelerator.init_trackers(task.name, config=_tracker_config(self.hyperparameters))
        self.loss_sum, self.loss_count = 0.0, 0

    def steps_in(self, batches: int) -> int:
        """Optimiser steps of an epoch of ``batches`` plan batches."""
        return math.ceil(batches / self.args.gradient_accumulation_steps)

    def resume(self, checkpoint: Path) -> None:
        saved = json.loads((checkpoint / TRAINER_STATE).read_text())
        changed = [key for key in self.identity if saved.get(key) != self.identity[key]]
        if changed:
            raise DialshiftError(f"{checkpoint}: written by a run with other {', '.join(changed)} "
                                 f"({', '.join(f'{k}={saved.get(k)}' for k in changed)}); resume with the same "
                                 "seed, data, batch and accumulation options")
        self.accelerator.load_state(str(checkpoint))
        self.state = saved
        if (checkpoint / "best").is_dir() and self.accelerator.is_main_process:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            shutil.copytree(checkpoint / "best", self.output_dir, dirs_exist_ok=True)
        self.log.info(f"resumed from {checkpoint} at step {self.state['global_step']}")

    # --- training ----------------------------------------------------------------------------------------------

    def train(self) -> None:
        from tqdm.auto import tqdm

        self.output_dir.mkdir(parents=True, exist_ok=True)
        (self.output_dir / MODEL_FILE).unlink(missing_ok=True)  # a model again only when training finishes
        state = self.state
        self.bar = tqdm(total=self.total_steps, initial=state["global_step"], desc="training", unit="step",
                        disable=not (self.accelerator.is_local_main_process and self.args.progress))
        while state["global_step"] < self.total_steps and state["epoch"] < self.args.num_epochs:
            self.train_epoch()
        self.bar.close()
        if state["best"] is None:  # nothing trained (e.g. resumed from the final checkpoint): select these weights
            self.evaluate()

    def train_epoch(self) -> None:
        """The rest of the current epoch (or up to the last step): optimiser steps, evaluations, checkpoints."""
        accelerator, args, state = self.accelerator, self.args, self.state
        accumulation = args.gradient_accumulation_steps
        batches = self.task.epoch_batches(state["epoch"], epoch_rng(args.seed, state["epoch"]))
        steps = self.steps_in(len(batches))
        loader = _plan_loader(batches, skip=state["step_in_epoch"] * accumulation)
        try:
            for index, batch in enumerate(loader, start=state["step_in_epoch"] * accumulation):
                group = min(accumulation, len(batches) - index // accumulation * accumulation)
                started = time.perf_counter()
                self.model.train()
                share = process_share(batch, accelerator.process_index, accelerator.num_processes)
                # fewer rows than processes: the first process's rows weighted 0, so that every process runs the
                # forward and backward the gradient reduce waits for
                empty = share_size(share) == 0
                with accelerator.accumulate(self.model):
                    if empty:
                        loss = self.task.loss(self.model, process_share(batch, 0, accelerator.num_processes)) * 0.0
                    else:
                        loss = self.task.loss(self.model, share)
                    # accelerate divides by the accumulation steps: a shorter last group still averages its batches
                    accelerator.backward(loss if group == accumulation else loss * (accumulation / group))
                    if accelerator.sync_gradients and args.max_grad_norm is not None:
                        accelerator.clip_grad_norm_(self.model.parameters(), args.max_grad_norm)
                    self.optimizer.step()
                    self.scheduler.step()
                    self.optimizer.zero_grad()
                self.train_seconds += time.perf_counter() - started
                self.loss_sum, self.loss_count = self.loss_sum + loss.detach(), self.loss_count + 1
                if not accelerator.sync_gradients:
                    continue
                self.apply_lr_scale()
                self.trained_steps += 1
                state["global_step"] += 1
                state["step_in_epoch"] += 1
                self.bar.update(1)
                done = state["global_step"] >= self.total_steps
                end_of_epoch = state["step_in_epoch"] == steps
                if end_of_epoch:
                    state["epoch"] += 1
                    state["step_in_epoch"] = 0
                if state["global_step"] % LOSS_DISPLAY_STEPS == 0:
                    self.log_training()
                if end_of_epoch or done or (args.eval_steps and state["global_step"] % args.eval_steps == 0):
                    self.evaluate()
                if args.checkpointing_steps and state["global_step"] % args.checkpointing_steps == 0:
                    self.save_checkpoint()
                if done or end_of_epoch:
                    break
        finally:
            loader.end()  # also when the last step ends the run mid-epoch

    def apply_lr_scale(self) -> None:
        """The schedule's learning rates times the plateau factor's product so far."""
        for group, rate in zip(self.optimizer.param_groups, self.scheduler.get_last_lr(), strict=True):
            group["lr"] = rate * self.state["lr_scale"]

    def log_training(self) -> None:
        """The mean training loss since the last call, the learning rate and the epoch: progress bar, trackers."""
        if not self.loss_count or (self.bar.disable and not self.accelerator.trackers):
            return
        loss = float(self.loss_sum) / self.loss_count  # waits for the device
        self.loss_sum, self.loss_count = 0.0, 0
        self.bar.set_postfix(loss=f"{loss:.4f}", epoch=self.state["epoch"])
        self.accelerator.log({"train/loss": loss, "train/learning_rate": self.optimizer.param_groups[0]["lr"],
                              "train/epoch": self.state["epoch"]}, step=self.state["global_step"])

    # --- validation and selection ------------------------------------------------------------------------------

    def validate(self) -> tuple[float, dict]:
        """The task's ``(score, extras)`` on every validation row, each process computing the outputs of its share."""
        accelerator, rows = self.accelerator, self.validation_rows
        outputs = self.task.validation_outputs(accelerator.unwrap_model(self.model), rows) if len(rows) else {}
        gathered = [(share, part) for share, part in
                    accelerator.gather_for_metrics([(rows, outputs)], use_gather_object=True) if len(share)]
        order = np.concatenate([share for share, _ in gathered])
        if not np.array_equal(np.sort(order), np.arange(self.task.validation_size())):
            raise RuntimeError(f"validation gathered {len(order)} rows, not each of {self.task.validation_size()} once")
        if accelerator.num_processes > 1 and not self.state["history"]:
            self.log.info(f"process {accelerator.process_index}: validation outputs of {len(rows)} of {len(order)} "
                          "rows", main_process_only=False)
        inverse = np.argsort(order, kind="stable")
        merged = {key: np.concatenate([np.asarray(part[key]) for _, part in gathered])[inverse]
                  for key in gathered[0][1]}
        return self.task.validation_score(merged)

    def evaluate(self) -> None:
        """Validate; keep the weights on a new best (ties and NaN keep the earlier); else apply the plateau factor."""
        task, state, accelerator = self.task, self.state, self.accelerator
        score, extras = self.validate()
        scalars, arrays = _split(extras)
        score = float(score)
        state["history"].append({"step": state["global_step"], f"validation_{task.metric}": score,
                                 **{f"validation_{k}": v for k, v in scalars.items()}})
        if state["best"] is None or score > state["best"]["score"]:
            state["best"] = {"step": state["global_step"], "score": score, "metrics": scalars, "arrays": list(arrays)}
            if accelerator.is_main_process:
                task.save(accelerator.unwrap_model(self.model), self.output_dir)
                for key, value in arrays.items():
                    np.save(self.output_dir / f"validation_{key}.npy", value)
        elif task.plateau_lr_factor is not None and score <= state["best"]["score"]:
            state["lr_scale"] *= task.plateau_lr_factor
            self.apply_lr_scale()
        self.log.info(f"step {state['global_step']}: validation {task.metric} = {score:.4f}")
        self.log_training()
        accelerator.log({key.replace("validation_", "validation/", 1): value
                         for key, value in state["history"][-1].items() if key != "step"}, step=state["global_step"])

    def save_checkpoint(self) -> None:
        state, output_dir = self.state, self.output_dir
        folder = output_dir / CHECKPOINTS / f"step_{state['global_step']}"
        self.accelerator.save_state(str(folder))
        if self.accelerator.is_main_process:
            if state["best"] is not None:  # the selected weights so far travel with the checkpoint
                shutil.copytree(output_dir, folder / "best", dirs_exist_ok=True,
                                ignore=lambda d, names: [CHECKPOINTS, TRACKER_DIR] if Path(d) == output_dir else [])
            write_json_atomic(folder / TRAINER_STATE, state)

    # --- the model folder --------------------------------------------------------------------------------------

    def finish(self) -> dict | None:
        accelerator, task, state = self.accelerator, self.task, self.state
        accelerator.wait_for_everyone()
        for tracker in accelerator.trackers:  # not end_training(): a process may train several models
            tracker.finish()
        if not accelerator.is_main_process:
            return None
        best = state["best"]
        output_dir = self.output_dir
        selection = Selection(best["step"], best["score"], dict(best["metrics"]),
                              {key: np.load(output_dir / f"validation_{key}.npy") for key in best["arrays"]})
        described = task.describe()
        versions = library_versions()
        extra = task.finalize(output_dir, selection)
        meta = {
            "task": task.name,
            "model_class": self.model_class,
            "backbone": described.pop("backbone", None),
            **described,
            "seed": self.args.seed,
            "training": self.hyperparameters,
            "versions": versions,
            "dialshift_version": versions["dialshift"],
            "steps": state["global_step"],
            "selected_step": best["step"],
            "selection": {"metric": task.metric, "step": best["step"],
                          "rule": "highest validation score, ties earlier"},
            "history": state["history"],
            "validation": {task.metric: best["score"], **best["metrics"], **extra.pop("validation", {})},
            "train_steps_per_second": self.trained_steps / self.train_seconds if self.train_seconds else None,
            **extra,
        }
        write_model_meta(output_dir, meta)
        self.log.info(f"saved the {task.name} model to {output_dir} (step {best['step']}, validation {task.metric} "
                      f"{best['score']:.4f})")
        return meta


def train(task: Task, args, hyperparameters: dict | None = None) -> dict | None:
    """Train ``task`` and write the model folder ``args.output_dir`` (:class:`Runner`); return its metadata
    (``None`` on processes other than the main one). ``args``: :class:`TrainingArguments`, or a trainer's parsed
    command line (its runner options read with :meth:`TrainingArguments.from_namespace`, and by default all its
    options recorded: :func:`~dialshift.training.arguments.recorded_options`)."""
    if isinstance(args, argparse.Namespace):
        args, hyperparameters = TrainingArguments.from_namespace(args), hyperparameters or recorded_options(args)
    return Runner(task, args, hyperparameters).run()
