"""What every trainer of ``trainers/`` shares on its command line: the argument types (:mod:`dialshift.arguments`),
the runner's options (:func:`add_training_arguments`, read back as :class:`TrainingArguments`), the options recorded
in the model folder (:func:`recorded_options`) and the ``--output-dir`` ownership check: :func:`check_output_dir`
refuses an ``--output-dir`` that is an input of the run or holds files a trainer did not write.
"""

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from dialshift.arguments import (  # noqa: F401  (the trainers' argument types, one import)
    device,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    probability,
    seed,
)
from dialshift.errors import DialshiftError

#: Marks a folder a trainer writes into (a model folder, a run folder): a later run may write there again.
OUTPUT_MARKER = ".dialshift-output"
#: ``--lr-scheduler-type``: the schedules of ``transformers.get_scheduler`` that need no option beyond the warm-up
#: and the number of steps. ``constant`` ignores warm-up steps (use ``constant_with_warmup``).
LR_SCHEDULERS = ("constant", "constant_with_warmup", "linear", "cosine", "cosine_with_restarts", "polynomial",
                 "inverse_sqrt")
#: Options that say how a run is watched, not what it learns: not recorded in the model folder.
UNRECORDED = ("output_dir", "no_progress", "progress", "report_to")


@dataclass
class TrainingArguments:
    """What the runner needs; a trainer's own options (batch size, max length, ...) belong to its task."""

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
    lr_scheduler_type: str = "constant"  # a name of LR_SCHEDULERS (transformers.get_scheduler)
    num_warmup_steps: int = 0  # optimiser steps of linear warm-up from 0
    gradient_accumulation_steps: int = 1  # plan batches per optimiser step (accelerator.accumulate)
    report_to: str = "none"  # experiment trackers of Accelerate: none, all, tensorboard, wandb, ...
    progress: bool = True

    def __post_init__(self):
        self.output_dir = Path(self.output_dir)
        for name in ("num_epochs", "max_steps", "eval_steps", "checkpointing_steps", "gradient_accumulation_steps"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise DialshiftError(f"training argument {name} must be at least 1, got {value}")
        if self.num_warmup_steps < 0:
            raise DialshiftError(f"training argument num_warmup_steps must be 0 or more, got {self.num_warmup_steps}")
        if self.lr_scheduler_type not in LR_SCHEDULERS:
            raise DialshiftError(f"lr_scheduler_type {self.lr_scheduler_type!r}: one of {', '.join(LR_SCHEDULERS)}")
        if self.num_warmup_steps and self.lr_scheduler_type == "constant":
            raise DialshiftError(f"--num-warmup-steps {self.num_warmup_steps} has no effect with --lr-scheduler-type "
                                 "constant; use constant_with_warmup (or linear, cosine, ...)")

    @classmethod
    def from_namespace(cls, namespace: argparse.Namespace) -> "TrainingArguments":
        """From the options :func:`add_training_arguments` defined (``--no-progress`` becomes ``progress``)."""
        values = vars(namespace)
        names = {f.name for f in dataclasses.fields(cls)} - {"progress"}
        return cls(**{name: values[name] for name in names if name in values}, progress=not values.get("no_progress"))


def tracker(text: str) -> str:
    """``--report-to``: ``none``, ``all`` (every installed tracker) or one tracker of Accelerate (``tensorboard``,
    ``wandb``, ...)."""
    from accelerate.utils import LoggerType

    names = ("none", *(kind.value for kind in LoggerType))
    if text not in names:
        raise argparse.ArgumentTypeError(f"{text!r}: one of {', '.join(names)}")
    return text


def trainer_parser(doc: str, name: str) -> argparse.ArgumentParser:
    """The argument parser of the trainer ``dialshift_trainers.<name>`` from its module docstring ``doc`` (a summary
    line, a paragraph of command lines, then the details): ``--help`` shows how the installed trainer is launched
    (``accelerate launch -m dialshift_trainers.<name>``; ``python -m`` runs it in one process), the command lines
    and, below the options, the details."""
    summary, commands, details = (doc.split("\n\n", 2) + ["", ""])[:3]
    launch = (f"Installed with dialshift (its [train] extra brings torch, transformers and accelerate);\n"
              f"trainers/{name}.py of a source checkout is the same script.")
    return argparse.ArgumentParser(prog=f"accelerate launch -m dialshift_trainers.{name}",
                                   description=f"{summary}\n\n{commands}\n\n{launch}", epilog=details,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def add_training_arguments(parser: argparse.ArgumentParser, *, learning_rate: float, num_epochs: int = 1,
                           weight_decay: float = 0.0) -> None:
    """Add the runner's options (``--output-dir``, ``--seed``, the optimiser, schedule, steps, checkpoint, tracker
    and progress options) with a trainer's defaults; read them back with :meth:`TrainingArguments.from_namespace`."""
    parser.add_argument("--output-dir", required=True,
                        help="where the trained model folder is written: a new or empty folder, or one a trainer "
                             "wrote (never the --model folder)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the initialisation, epoch plans and dropout")
    parser.add_argument("--learning-rate", type=positive_float, default=learning_rate,
                        help=f"peak learning rate (default: {learning_rate})")
    parser.add_argument("--lr-scheduler-type", choices=LR_SCHEDULERS, default="constant",
                        help="learning-rate schedule over the optimiser steps (transformers.get_scheduler; "
                             "default: constant)")
    parser.add_argument("--num-warmup-steps", type=non_negative_int, default=0,
                        help="optimiser steps of linear warm-up from 0 (not with the 'constant' schedule)")
    parser.add_argument("--weight-decay", type=non_negative_float, default=weight_decay)
    parser.add_argument("--num-epochs", type=positive_int, default=num_epochs)
    parser.add_argument("--max-steps", type=positive_int, default=None, help="stop after this many optimiser steps")
    parser.add_argument("--gradient-accumulation-steps", type=positive_int, default=1,
                        help="batches whose gradients are summed into one optimiser step (default: 1)")
    parser.add_argument("--eval-steps", type=positive_int, default=None,
                        help="also validate every N optimiser steps (default: epoch ends)")
    parser.add_argument("--checkpointing-steps", type=positive_int, default=None,
                        help="save a resumable checkpoint every N optimiser steps")
    parser.add_argument("--resume-from-checkpoint", default=None, help="a checkpoint folder, or 'latest'")
    parser.add_argument("--max-grad-norm", type=positive_float, default=None,
                        help="clip the gradient norm (default: no)")
    parser.add_argument("--report-to", type=tracker, default="none", metavar="TRACKER",
                        help="log the loss, learning rate and validation metrics to Accelerate's tracker(s) "
                             "(tensorboard, wandb, ..., 'all' installed ones) under OUTPUT/runs (default: none)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def recorded_options(namespace: argparse.Namespace, *excluded: str) -> dict:
    """The options of a trainer's command line that the model folder records as its ``training``: all but how the
    run is watched and where it writes (:data:`UNRECORDED`) and ``excluded``."""
    return {key: value for key, value in vars(namespace).items() if key not in (*UNRECORDED, *excluded)}


def _ownership(inputs, writes, legacy, flag) -> dict:
    from dialshift.models.metadata import CHECKPOINTS, MODEL_FILE

    return {"flag": flag, "writes": writes,
            "inputs": [path for path in inputs
                       if isinstance(path, Path) or (path and Path(path).expanduser().exists())],
            "legacy": (MODEL_FILE, CHECKPOINTS, *legacy)}


def check_output_dir(output_dir, inputs=(), writes=None, legacy=(), flag="--output-dir") -> Path:
    """Refuse an ``--output-dir`` that is or contains one of ``inputs`` (``--model``, ``--dataset``: fine-tuning a
    model into its own folder replaces it) or holds files no trainer wrote (a ``config.json`` or
    ``model.safetensors`` of someone else's), with one line; return its absolute path. Fine: a new or empty
    folder, one a trainer wrote (:data:`OUTPUT_MARKER`, or a model folder from before markers existed: ``legacy``
    adds names), or with ``writes`` a folder holding none of those names (:func:`dialshift.io.check_owned_folder`).
    An input given as a string that names no existing path (a Hub model id) is skipped; a ``Path`` is always checked.
    ``flag``: the option named in the error (a trainer's ``--predictions`` folder follows the same rule).
    """
    from dialshift.io import check_owned_folder

    return check_owned_folder(output_dir, OUTPUT_MARKER, **_ownership(inputs, writes, legacy, flag))


def claim_output_dir(output_dir, trainer: str, inputs=(), writes=None, legacy=(), flag="--output-dir") -> Path:
    """:func:`check_output_dir`, then create the folder and mark it as ``trainer``'s."""
    from dialshift.io import claim_owned_folder

    return claim_owned_folder(output_dir, OUTPUT_MARKER, f"written by {trainer}; it may write here again",
                              **_ownership(inputs, writes, legacy, flag))
