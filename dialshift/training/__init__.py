"""One training runner for every trainer of ``trainers/`` (see :mod:`dialshift.training.runner`).

A trainer subclasses :class:`Task` (model, per-epoch batch plan, batch loss, validation outputs and score,
optional post-selection hook; :mod:`dialshift.training.task`), adds the runner's options to its command line
(:func:`add_training_arguments`; :mod:`dialshift.training.arguments`) and calls :func:`train`; the runner owns
Accelerate, seeding, the epoch plan, the learning-rate schedule, gradient accumulation, checkpoints and deterministic
resume, validation gathered across processes, selection on validation, logging, trackers, the progress bar and the
self-describing model folder (:mod:`dialshift.models.metadata`). Length-sorted batching and padding:
:mod:`dialshift.models.batching`. Importing this package does not import torch.
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
from dialshift.training.arguments import TrainingArguments, add_training_arguments, recorded_options, trainer_parser
from dialshift.training.runner import (
    TRAINER_STATE,
    Runner,
    configure_logging,
    get_logger,
    process_share,
    resolve_checkpoint,
    train,
)
from dialshift.training.task import Selection, Task, epoch_rng

__all__ = [
    "MODEL_FILE", "MODEL_FORMAT", "TRAINER_STATE", "Runner", "Selection", "Task", "TrainingArguments",
    "add_training_arguments", "class_path", "configure_logging", "epoch_rng", "get_logger", "import_class",
    "library_versions", "pad_batch", "process_share", "read_model_meta", "recorded_options", "resolve_checkpoint",
    "sorted_batches", "train", "trainer_parser", "write_model_meta",
]
