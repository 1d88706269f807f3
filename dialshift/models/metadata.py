"""The self-describing model folder: ``dialshift_model.json`` beside the weights.

Every trainer built on :mod:`dialshift.training` writes, last (so a folder without it is not a finished model)::

    {"format": "dialshift-model/1", "task": "ranking", "model_class": "transformers....BertForSequenceClassification",
     "backbone": "...", "training": {CLI arguments}, "versions": {"torch": ..., ...},
     "validation": {"<metric>": best score, ...}, "selection": {"metric": ..., "step": ...},
     "steps": ..., "history": [...], "train_steps_per_second": ..., ...task-specific keys}
"""

import importlib
import json
import platform
from importlib import metadata as importlib_metadata
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.io import write_json_atomic

MODEL_FILE = "dialshift_model.json"
MODEL_FORMAT = "dialshift-model/1"
#: The folder of the training checkpoints inside a model folder (``checkpoints/step_N``).
CHECKPOINTS = "checkpoints"
VERSIONED_LIBRARIES = ("torch", "transformers", "accelerate", "numpy", "datasets", "safetensors")


def library_versions() -> dict[str, str]:
    """Versions of Python, dialshift and the installed training libraries (absent ones are left out)."""
    from dialshift import __version__

    versions = {"python": platform.python_version(), "dialshift": __version__}
    for name in VERSIONED_LIBRARIES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            pass
    return versions


def class_path(obj_or_class) -> str:
    """``module.QualifiedName`` of a class or of an object's class (what :func:`import_class` imports back)."""
    cls = obj_or_class if isinstance(obj_or_class, type) else type(obj_or_class)
    return f"{cls.__module__}.{cls.__qualname__}"


def import_class(path: str):
    """The class named by :func:`class_path` (``transformers.BertForSequenceClassification`` style paths work too)."""
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as error:
        raise DialshiftError(f"model class {path!r} cannot be imported ({error}); install the library that "
                             "defines it") from error


def write_model_meta(path, meta: dict) -> Path:
    """Write ``dialshift_model.json`` into the folder ``path`` (do it last); ``meta`` needs ``task`` and
    ``model_class``."""
    missing = [key for key in ("task", "model_class") if not meta.get(key)]
    if missing:
        raise ValueError(f"model metadata needs {', '.join(missing)}")
    write_json_atomic(Path(path) / MODEL_FILE, {**meta, "format": MODEL_FORMAT})
    return Path(path)


def read_model_meta(path, task: str | None = None, kind: str = "model", trainer: str = "a script of trainers/") -> dict:
    """The metadata of a model folder (its ``dialshift_model.json``).

    With ``task``, a folder of another task is an error. Problems are one-line :class:`DialshiftError` messages that
    call the folder a ``kind`` (e.g. "ranker") and name ``trainer`` as what writes one.
    """
    path = Path(path)
    if not path.is_dir():
        raise DialshiftError(f"{path}: model directory does not exist (train one with {trainer})")
    meta_file = path / MODEL_FILE
    if not meta_file.is_file():
        raise DialshiftError(f"{path}: not a dialshift {kind} (no {MODEL_FILE}, which training writes last; train "
                             f"one with {trainer}, or resume an unfinished training from its checkpoint)")
    try:
        meta = json.loads(meta_file.read_text())
    except json.JSONDecodeError as error:
        raise DialshiftError(f"{meta_file}: not valid JSON ({error})") from error
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise DialshiftError(f"{meta_file}: unknown model folder format {found!r} (expected {MODEL_FORMAT})")
    if task is not None and meta.get("task") != task:
        raise DialshiftError(f"{meta_file}: not a dialshift {kind}: a model of task {meta.get('task')!r}, not {task!r}")
    return meta
