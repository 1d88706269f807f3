"""Argument types and checks shared by every trainer of ``trainers/`` (and the commands taking the same values).

Each type is an ``argparse`` ``type=`` callable: a bad value becomes argparse's one-line usage error (exit status 2)
naming the flag, never a traceback or a silently odd run. :func:`check_output_dir` refuses an ``--output-dir`` that
is an input of the run or holds files a trainer did not write.
"""

import argparse
import math
from pathlib import Path

#: Marks a folder a trainer writes into (a model folder, a run folder): a later run may write there again.
OUTPUT_MARKER = ".dialshift-output"
#: The largest seed (numpy and torch seeds are unsigned 32-bit).
MAX_SEED = 2**32 - 1


def _number(text: str, kind=float):
    try:
        value = kind(text)
    except ValueError:
        expected = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer of at least 1 (sizes, counts, steps)."""
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """An integer of at least 0."""
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def seed(text: str) -> int:
    """A seed: an integer in 0 .. 2**32 - 1 (what numpy and torch accept)."""
    value = _number(text, int)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer in 0..{MAX_SEED}, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (learning rates, temperatures)."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number of at least 0 (weight decay, loss weights, gradient-norm limits)."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def probability(text: str) -> float:
    """A number in [0, 1] (dropout, insertion probabilities)."""
    value = _number(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text}")
    return value


def device(text: str) -> str:
    """A torch device that exists here (``cpu``, ``cuda``, ``cuda:1``, ``mps``)."""
    import torch

    try:
        parsed = torch.device(text)
    except (RuntimeError, ValueError):
        raise argparse.ArgumentTypeError(f"not a torch device: {text!r} (e.g. cpu, cuda, cuda:0)") from None
    if parsed.type == "cuda" and (not torch.cuda.is_available() or (parsed.index or 0) >= torch.cuda.device_count()):
        raise argparse.ArgumentTypeError(f"{text!r}: no such CUDA device here ({torch.cuda.device_count()} visible)")
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise argparse.ArgumentTypeError(f"{text!r}: MPS is not available here")
    if parsed.type not in ("cpu", "cuda", "mps"):
        raise argparse.ArgumentTypeError(f"{text!r}: unsupported device type {parsed.type!r} (use cpu or cuda)")
    return text


def _ownership(inputs, writes, legacy) -> dict:
    from dialshift.training.metadata import LEGACY_RANKER_FILE, MODEL_FILE
    from dialshift.training.runner import CHECKPOINTS

    return {"flag": "--output-dir", "writes": writes,
            "inputs": [path for path in inputs if path and Path(path).expanduser().exists()],
            "legacy": (MODEL_FILE, LEGACY_RANKER_FILE, CHECKPOINTS, *legacy)}


def check_output_dir(output_dir, inputs=(), writes=None, legacy=()) -> Path:
    """Refuse an ``--output-dir`` that is or contains one of ``inputs`` (``--model``, ``--dataset``: fine-tuning a
    model into its own folder replaces it) or holds files no trainer wrote (a ``config.json`` or
    ``model.safetensors`` of someone else's), with one line; return its absolute path. Fine: a new or empty
    folder, one a trainer wrote (:data:`OUTPUT_MARKER`, or a model folder from before markers existed: ``legacy``
    adds names), or with ``writes`` a folder holding none of those names (:func:`dialshift.io.check_owned_folder`).
    """
    from dialshift.io import check_owned_folder

    return check_owned_folder(output_dir, OUTPUT_MARKER, **_ownership(inputs, writes, legacy))


def claim_output_dir(output_dir, trainer: str, inputs=(), writes=None, legacy=()) -> Path:
    """:func:`check_output_dir`, then create the folder and mark it as ``trainer``'s."""
    from dialshift.io import claim_owned_folder

    return claim_owned_folder(output_dir, OUTPUT_MARKER, f"written by {trainer}; it may write here again",
                              **_ownership(inputs, writes, legacy))
