"""Per-instance random generators: an instance's draws depend only on (seed, key, instance id), never on order."""

import hashlib
from functools import cache

import numpy as np


@cache
def stable_hash(text: str) -> int:
    """A 64-bit integer from ``text`` that is the same in every process and Python version (unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def instance_rng(seed: int, key: str, instance_id: str) -> np.random.Generator:
    """``numpy.random.default_rng([seed, stable_hash(key), stable_hash(instance_id)])``."""
    return np.random.default_rng([seed, stable_hash(key), stable_hash(instance_id)])
