"""What a trainer supplies to the runner (:mod:`dialshift.training.runner`): a :class:`Task`.

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

        def validation_size(self):
            return len(self.vx)

        def validation_outputs(self, model, rows):
            with torch.no_grad():
                return {"predictions": model(self.vx[rows]).numpy()}

        def validation_score(self, outputs):
            return -float(((outputs["predictions"] - self.vy) ** 2).mean()), {}

    train(Regression(), TrainingArguments(output_dir="runs/r", learning_rate=1e-2))
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Selection:
    """The selected (best-on-validation) evaluation: what :meth:`Task.finalize` receives."""

    step: int
    score: float
    metrics: dict = field(default_factory=dict)  # the scalar extras of :meth:`Task.validation_score`
    arrays: dict = field(default_factory=dict)  # its array extras, read back from OUTPUT/validation_<name>.npy


class Task(ABC):
    """What a trainer supplies to :func:`~dialshift.training.runner.train`. Subclasses set :attr:`name` and
    :attr:`metric`.

    Call order: :meth:`build` once; then per epoch :meth:`epoch_batches` and :meth:`loss` per batch; at evaluation
    points :meth:`validation_outputs` on each process's share of the validation rows, then :meth:`validation_score`
    on every row's outputs, and :meth:`save` on a new best; :meth:`finalize` once at the end (main process).
    """

    name: str = ""  # the task recorded in the model folder ("ranking", "intent_classification", ...)
    metric: str = "score"  # the name of the validation score (higher is better), e.g. "recall@1"
    #: Multiply the learning rate by this whenever a validation score is not above the best so far (None: never).
    plateau_lr_factor: float | None = None

    @abstractmethod
    def build(self, accelerator):
        """Load data and return the model (a ``torch.nn.Module``, not yet prepared). Runs after seeding; keep
        ``accelerator`` if :meth:`loss` needs the device or the process index."""

    def optimizer(self, model, args):
        """The optimiser (default: AdamW with ``args.learning_rate`` and ``args.weight_decay``); the runner's
        learning-rate schedule drives its learning rate."""
        import torch

        return torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)

    @abstractmethod
    def epoch_batches(self, epoch: int, rng: np.random.Generator) -> Sequence:
        """The batches of ``epoch`` in order, drawn only from ``rng``: a pure function of ``(seed, epoch)``.

        Keep batches light (index arrays, tuples or dicts of them and of numbers): the plan is recomputed on resume
        and for the step count; tokenisation and collation belong in :meth:`loss`.
        """

    @abstractmethod
    def loss(self, model, batch):
        """The scalar loss tensor of ``batch`` (``model`` is the prepared model, in train mode). Under multi-process
        training ``batch`` is this process's share (:func:`~dialshift.training.runner.process_share`)."""

    @abstractmethod
    def validation_size(self) -> int:
        """How many validation rows there are: :meth:`validation_outputs` is asked for a share of ``range(size)``."""

    @abstractmethod
    def validation_outputs(self, model, rows: np.ndarray) -> dict:
        """``{name: array}`` of the validation rows ``rows`` (this process's share, the same at every evaluation),
        each array's first axis one entry per row (``model`` is unwrapped; put it in eval mode yourself)."""

    @abstractmethod
    def validation_score(self, outputs: dict) -> tuple[float, dict]:
        """``(score, extras)`` from the outputs of every validation row, in row order (gathered from all processes).

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
