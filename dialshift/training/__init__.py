"""One training runner for every trainer of ``trainers/`` (see :mod:`dialshift.training.runner`).

A trainer subclasses :class:`Task` (model, per-epoch batch plan, batch loss, validation score, optional
post-selection hook) and calls :func:`train`; the runner owns Accelerate, seeding, the epoch plan, checkpoints and
deterministic resume, selection on validation, the progress bar and the self-describing model folder
(:mod:`dialshift.models.metadata`). Length-sorted batching and padding: :mod:`dialshift.models.batching`.
Importing this package does not import torch.
"""

from dialshift.models.batching import pad_batch, sorted_batches
from dialshift.models.metadata import (
    MODEL_FILE,
    MODEL_FORMAT,
    class_path,
    import_class,
    library_versions,
    read_model_meta,
    write_model_meta,
)
from dialshift.training.runner import (
    TRAINER_STATE,
    Selection,
    Task,
    TrainingArguments,
    add_training_arguments,
    epoch_rng,
    resolve_checkpoint,
    train,
)

__all__ = [
    "MODEL_FILE", "MODEL_FORMAT", "TRAINER_STATE", "Selection", "Task", "TrainingArguments", "add_training_arguments",
    "class_path", "epoch_rng", "import_class", "library_versions", "pad_batch", "read_model_meta",
    "resolve_checkpoint", "sorted_batches", "train", "write_model_meta",
]
