"""The training runner every trainer of ``trainers/`` is built on.

A trainer describes *what* to learn as a :class:`Task`; :func:`train` does the rest, the same way for every task:

* Accelerate set-up (``accelerate launch`` or plain ``python``; mixed precision and devices from its config), seeding
  (``accelerate.utils.set_seed(seed)`` before :meth:`Task.build`);
* a deterministic epoch plan: epoch ``e`` runs the batches :meth:`Task.epoch_batches` returns for
  ``numpy.random.default_rng([seed, e])`` (:func:`epoch_rng`), so the order (and e.g. sampled negatives) of every
  epoch is a pure function of the seed;
* checkpoints every ``checkpointing_steps`` to ``OUTPUT/checkpoints/step_N`` (``accelerator.save_state``: model,
  optimiser, RNG states; ``trainer_state.json``; the selected weights so far in ``best/``) and deterministic mid-epoch
  resume (``resume_from_checkpoint``: a checkpoint folder or ``latest``): the epoch's plan is recomputed from the
  seed and the consumed batches are skipped, so the final weights are byte-identical to an uninterrupted run;
* validation at every epoch end, at the last step and every ``eval_steps`` steps; the weights with the highest
  validation score are kept in ``OUTPUT`` (ties keep the earlier step);
* a progress bar (loss, epoch) on the local main process;
* the self-describing model folder: after :meth:`Task.finalize` (e.g. temperature fitting on the selected model's
  validation outputs) ``dialshift_model.json`` is written last (see :mod:`dialshift.models.metadata`).

A minimal task::

    class Regression(Task):
        name, metric = "regression", "neg_mse"

        def build(self, accelerator):
            return torch.nn.Linear(4, 1)

        def epoch_batches(self, epoch, rng):
            order = rng.permutation(len(self.x))
            return [order[i : i + 8] for i in range(0, len(order), 8)]

        def loss(self, model, rows):
            return ((model(self.x[rows]) - self.y[rows]) ** 2).mean()

        def validate(self, model):
            return -float(((model(self.vx) - self.vy) ** 2).mean()), {}

    train(Regression(), TrainingArguments(output_dir="runs/r", learning_rate=1e-2))
"""

import argparse
import dataclasses
import json
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
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

TRAINER_STATE = "trainer_state.json"
#: The progress bar shows the loss every this many steps (``loss.item()`` waits for the GPU).
LOSS_DISPLAY_STEPS = 50
STATE_VERSION = 1


@dataclass
class TrainingArguments:
    """What the runner needs; a trainer's own options (batch size, max length, ...) belong to its :class:`Task`."""

    output_dir: Path
    learning_rate: float
    seed: int = 0
    weight_decay: float = 0.0
    num_epochs: int = 1
    max_steps: int | None = None  # stop after this many optimiser steps in total
    eval_steps: int | None = None  # also validate every N steps (always: every epoch end and the last step)
    checkpointing_steps: int | None = None
    resume_from_checkpoint: str | None = None  # a checkpoint folder, or "latest"
    max_grad_norm: float | None = None  # clip the gradient norm (None: no clipping)
    progress: bool = True

    def __post_init__(self):
        self.output_dir = Path(self.output_dir)
        for name in ("num_epochs", "max_steps", "eval_steps", "checkpointing_steps"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise DialshiftError(f"training argument {name} must be at least 1, got {value}")

    @classmethod
    def from_namespace(cls, namespace: argparse.Namespace) -> "TrainingArguments":
        """From the options :func:`add_training_arguments` defined (``--no-progress`` becomes ``progress``)."""
        values = vars(namespace)
        names = {f.name for f in dataclasses.fields(cls)} - {"progress"}
        return cls(**{name: values[name] for name in names if name in values}, progress=not values.get("no_progress"))


def add_training_arguments(parser: argparse.ArgumentParser, *, learning_rate: float, num_epochs: int = 1,
                           weight_decay: float = 0.0) -> None:
    """Add the runner's options (``--output-dir``, ``--seed``, ``--learning-rate``, ``--weight-decay``,
    ``--num-epochs``, ``--max-steps``, ``--eval-steps``, ``--checkpointing-steps``, ``--resume-from-checkpoint``,
    ``--max-grad-norm``, ``--no-progress``) with a trainer's defaults; read them back with
    :meth:`TrainingArguments.from_namespace`."""
    parser.add_argument("--output-dir", required=True,
                        help="where the trained model folder is written: a new or empty folder, or one a trainer "
                             "wrote (never the --model folder)")
    parser.add_argument("--seed", type=arguments.seed, default=0,
                        help="seed of the initialisation, epoch plans and dropout")
    parser.add_argument("--learning-rate", type=arguments.positive_float, default=learning_rate)
    parser.add_argument("--weight-decay", type=arguments.non_negative_float, default=weight_decay)
    parser.add_argument("--num-epochs", type=arguments.positive_int, default=num_epochs)
    parser.add_argument("--max-steps", type=arguments.positive_int, default=None,
                        help="stop after this many optimiser steps")
    parser.add_argument("--eval-steps", type=arguments.positive_int, default=None,
                        help="also validate every N steps (default: epoch ends)")
    parser.add_argument("--checkpointing-steps", type=arguments.positive_int, default=None,
                        help="save a resumable checkpoint every N steps")
    parser.add_argument("--resume-from-checkpoint", default=None, help="a checkpoint folder, or 'latest'")
    parser.add_argument("--max-grad-norm", type=arguments.positive_float, default=None,
                        help="clip the gradient norm (default: no)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


@dataclass
class Selection:
    """The selected (best-on-validation) evaluation: what :meth:`Task.finalize` receives."""

    step: int
    score: float
    metrics: dict = field(default_factory=dict)  # the scalar extras of :meth:`Task.validate`
    arrays: dict = field(default_factory=dict)  # its array extras, read back from OUTPUT/validation_<name>.npy


class Task(ABC):
    """What a trainer supplies to :func:`train`. Subclasses set :attr:`name` and :attr:`metric`.

    Call order: :meth:`build` once; then per epoch :meth:`epoch_batches` and :meth:`loss` per batch; :meth:`validate`
    at evaluation points and :meth:`save` on a new best; :meth:`finalize` once at the end (main process).
    """

    name: str = ""  # the task recorded in the model folder ("ranking", "intent_classification", ...)
    metric: str = "score"  # the name of the validation score (higher is better), e.g. "recall@1"

    @abstractmethod
    def build(self, accelerator):
        """Load data and return the model (a ``torch.nn.Module``, not yet prepared). Runs after seeding; keep
        ``accelerator`` if :meth:`loss` needs the device or the process index."""

    def optimizer(self, model, args: TrainingArguments):
        """The optimiser (default: AdamW, constant learning rate, ``args.weight_decay``)."""
        import torch

        return torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)

    @abstractmethod
    def epoch_batches(self, epoch: int, rng: np.random.Generator) -> Sequence:
        """The batches of ``epoch`` in order, drawn only from ``rng``: a pure function of ``(seed, epoch)``.

        Keep batches light (index arrays): the plan is recomputed on resume and for the step count; tokenisation
        and collation belong in :meth:`loss`.
        """

    @abstractmethod
    def loss(self, model, batch):
        """The scalar loss tensor of one batch (``model`` is the prepared model, in train mode). Under multi-process
        training each process computes the loss of its share of the batch."""

    @abstractmethod
    def validate(self, model) -> tuple[float, dict]:
        """``(score, extras)`` on the validation data (``model`` is unwrapped; put it in eval mode yourself).

        Scalar extras are recorded in the history and the metadata's ``validation``; numpy-array extras (e.g.
        logits) are saved beside the selected weights as ``validation_<name>.npy`` and handed to :meth:`finalize`.
        """

    def save(self, model, output_dir: Path) -> None:
        """Save the selected weights (default: ``save_pretrained``, else the ``state_dict`` as model.safetensors)."""
        if hasattr(model, "save_pretrained"):
            model.save_pretrained(output_dir)
        else:
            from safetensors.torch import save_file

            save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(output_dir / "model.safetensors"))

    def describe(self) -> dict:
        """Task-specific metadata (``backbone`` and e.g. ``max_length``), merged into the model folder's JSON."""
        return {}

    def finalize(self, output_dir: Path, selection: Selection) -> dict:
        """Post-selection hook, main process only: save artefacts (tokenizer, ...) and return metadata to add
        (a ``validation`` dict is merged into the validation metrics), e.g. a temperature fitted on
        ``selection.arrays["logits"]``."""
        return {}


def epoch_rng(seed: int, epoch: int) -> np.random.Generator:
    """The generator of an epoch's plan: ``numpy.random.default_rng([seed, epoch])``."""
    return np.random.default_rng([seed, epoch])


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


def train(task: Task, args: TrainingArguments, hyperparameters: dict | None = None) -> dict | None:
    """Train ``task`` and write the model folder ``args.output_dir``; return its metadata (``None`` on processes
    other than the main one). ``hyperparameters`` (default: ``args``) are recorded as the metadata's ``training``."""
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from tqdm.auto import tqdm

    output_dir = args.output_dir
    accelerator = Accelerator()
    if accelerator.is_main_process:  # before any work: never into a folder a trainer did not write
        arguments.claim_output_dir(output_dir, f"the {task.name} trainer")
    progress = accelerator.is_local_main_process and args.progress
    set_seed(args.seed)
    model = task.build(accelerator)
    model_class = class_path(model)
    optimizer = task.optimizer(model, args)
    model, optimizer = accelerator.prepare(model, optimizer)

    plan_lengths = [len(task.epoch_batches(epoch, epoch_rng(args.seed, epoch))) for epoch in range(args.num_epochs)]
    total_steps = sum(plan_lengths) if args.max_steps is None else min(sum(plan_lengths), args.max_steps)
    identity = {"version": STATE_VERSION, "seed": args.seed, "plan_lengths": plan_lengths}
    state = {**identity, "epoch": 0, "step_in_epoch": 0, "global_step": 0, "best": None, "history": []}
    if args.resume_from_checkpoint:
        checkpoint = resolve_checkpoint(output_dir, args.resume_from_checkpoint)
        saved = json.loads((checkpoint / TRAINER_STATE).read_text())
        changed = [key for key in identity if saved.get(key) != identity[key]]
        if changed:
            raise DialshiftError(f"{checkpoint}: written by a run with other {', '.join(changed)} "
                                 f"({', '.join(f'{k}={saved.get(k)}' for k in changed)}); resume with the same "
                                 "seed, data and batch options")
        accelerator.load_state(str(checkpoint))
        state = saved
        if (checkpoint / "best").is_dir() and accelerator.is_main_process:
            output_dir.mkdir(parents=True, exist_ok=True)
            shutil.copytree(checkpoint / "best", output_dir, dirs_exist_ok=True)
        accelerator.print(f"resumed from {checkpoint} at step {state['global_step']}")

    def evaluate_and_select():
        unwrapped = accelerator.unwrap_model(model)
        score, extras = task.validate(unwrapped)
        scalars, arrays = _split(extras)
        score = float(score)
        state["history"].append({"step": state["global_step"], f"validation_{task.metric}": score,
                                 **{f"validation_{k}": v for k, v in scalars.items()}})
        if state["best"] is None or score > state["best"]["score"]:  # ties (and NaN) keep the earlier weights
            state["best"] = {"step": state["global_step"], "score": score, "metrics": scalars, "arrays": list(arrays)}
            if accelerator.is_main_process:
                task.save(unwrapped, output_dir)
                for key, value in arrays.items():
                    np.save(output_dir / f"validation_{key}.npy", value)
        accelerator.print(f"step {state['global_step']}: validation {task.metric} = {score:.4f}")

    def save_checkpoint():
        folder = output_dir / CHECKPOINTS / f"step_{state['global_step']}"
        accelerator.save_state(str(folder))
        if accelerator.is_main_process:
            if state["best"] is not None:  # the selected weights so far travel with the checkpoint
                shutil.copytree(output_dir, folder / "best", dirs_exist_ok=True,
                                ignore=lambda d, names: [CHECKPOINTS] if Path(d) == output_dir else [])
            write_json_atomic(folder / TRAINER_STATE, state)

    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / MODEL_FILE).unlink(missing_ok=True)  # the folder is a model again only when training finishes
    bar = tqdm(total=total_steps, initial=state["global_step"], desc="training", unit="step", disable=not progress)
    done = state["global_step"] >= total_steps
    train_seconds, trained_steps = 0.0, 0
    while not done and state["epoch"] < args.num_epochs:
        batches = task.epoch_batches(state["epoch"], epoch_rng(args.seed, state["epoch"]))
        for step in range(state["step_in_epoch"], len(batches)):
            started = time.perf_counter()
            model.train()
            loss = task.loss(model, batches[step])
            accelerator.backward(loss)
            if args.max_grad_norm is not None:
                accelerator.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            optimizer.zero_grad()
            train_seconds += time.perf_counter() - started
            trained_steps += 1
            state["global_step"] += 1
            state["step_in_epoch"] = step + 1
            bar.update(1)
            if not bar.disable and state["global_step"] % LOSS_DISPLAY_STEPS == 0:  # .item() waits for a GPU
                bar.set_postfix(loss=f"{loss.item():.4f}", epoch=state["epoch"])
            done = state["global_step"] >= total_steps
            end_of_epoch = state["step_in_epoch"] == len(batches)
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
    if not accelerator.is_main_process:
        return None
    best = state["best"]
    selection = Selection(best["step"], best["score"], dict(best["metrics"]),
                          {key: np.load(output_dir / f"validation_{key}.npy") for key in best["arrays"]})
    if hyperparameters is None:
        hyperparameters = {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(args).items()}
        hyperparameters = {k: v for k, v in hyperparameters.items() if k not in ("output_dir", "progress")}
    described = task.describe()
    versions = library_versions()
    extra = task.finalize(output_dir, selection)
    meta = {
        "task": task.name,
        "model_class": model_class,
        "backbone": described.pop("backbone", None),
        **described,
        "seed": args.seed,
        "training": hyperparameters,
        "versions": versions,
        "dialshift_version": versions["dialshift"],
        "steps": state["global_step"],
        "selected_step": best["step"],
        "selection": {"metric": task.metric, "step": best["step"], "rule": "highest validation score, ties earlier"},
        "history": state["history"],
        "validation": {task.metric: best["score"], **best["metrics"], **extra.pop("validation", {})},
        "train_steps_per_second": trained_steps / train_seconds if train_seconds else None,
        **extra,
    }
    write_model_meta(output_dir, meta)
    accelerator.print(f"saved the {task.name} model to {output_dir} (step {best['step']}, validation {task.metric} "
                      f"{best['score']:.4f})")
    return meta
