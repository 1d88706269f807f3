"""Argument types shared by the trainers of ``trainers/``, the commands and the build options.

Each is an ``argparse`` ``type=`` callable: a bad value becomes argparse's usage error naming the flag (exit status
2), never a traceback or a silently odd run (a negative seed, a NaN learning rate, a dropout of 2). Standard library
only, so any layer may use it.
"""

import argparse
import math

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


#: The most bootstrap replicates accepted (the papers use 1,000; 10**12 would run for days).
MAX_REPLICATES = 100_000


def replicates(text: str) -> int:
    """A number of bootstrap replicates: an integer from 1 to :data:`MAX_REPLICATES`."""
    value = positive_int(text)
    if value > MAX_REPLICATES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_REPLICATES:,}, got {value}")
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
