"""Seeded percentile bootstrap intervals, paired by instance id across configs.

Each replicate draws ``U`` ids with replacement from the union of the ids of every scored config (``U`` = their
number), with ``numpy.random.default_rng(seed)``; a config's replicate statistic re-weights its own instances by how
often each of its ids was drawn. So every config sees the *same* resampled ids (those it contains), and the
difference of two configs' statistics within a replicate is a paired bootstrap draw of their difference: its
interval says whether a drop under shift is larger than resampling noise. Two configs are compared on the ids they
share (each restricted to those ids, scored with the same draws: a draw counts an id the same in both). The union
is ordered by id key, so the intervals do not depend on file order. Cost: ``O(replicates x (U + total instances))``.
"""

from dataclasses import dataclass

import numpy as np

#: Replicates scored per call of a batched statistic (bounds the ``block x ids`` weight matrix).
BLOCK = 100


@dataclass
class Sample:
    """One config's bootstrap input: its instance keys (uint64) and a ``weights -> {metric: value}`` function;
    ``batched``: the function also takes an ``R x N`` weight matrix and returns arrays of ``R`` values."""

    keys: np.ndarray
    statistic: object
    batched: bool = False


def percentile_interval(values: np.ndarray, confidence: float = 0.95):
    """``[low, high]`` percentile interval of the finite replicate values; None when fewer than half are finite."""
    finite = values[np.isfinite(values)]
    if len(finite) < max(2, len(values) // 2):
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return [float(low), float(high)]


def paired_replicates(samples: dict[str, Sample], replicates: int = 1000, seed: int = 0) -> dict:
    """``{config: {metric: array of replicate values}}`` for the paired bootstrap described in the module doc."""
    union = np.unique(np.concatenate([sample.keys for sample in samples.values()]))
    positions = {name: np.searchsorted(union, sample.keys) for name, sample in samples.items()}
    rng = np.random.default_rng(seed)
    draws: dict[str, dict[str, list]] = {name: {} for name in samples}
    with np.errstate(divide="ignore", invalid="ignore"):  # a replicate may leave a subset empty: NaN, no warning
        for start in range(0, replicates, BLOCK):
            block = [np.bincount(rng.integers(0, len(union), len(union)), minlength=len(union))
                     for _ in range(min(BLOCK, replicates - start))]
            counts = np.stack(block)
            for name, sample in samples.items():
                weights = counts[:, positions[name]]
                if sample.batched:
                    for metric, values in sample.statistic(weights.astype(np.float64)).items():
                        draws[name].setdefault(metric, []).extend(np.atleast_1d(values).tolist())
                    continue
                for row in weights:
                    for metric, value in sample.statistic(row).items():
                        draws[name].setdefault(metric, []).append(value)
    return {name: {metric: np.asarray(values, dtype=np.float64) for metric, values in metrics.items()}
            for name, metrics in draws.items()}


def intervals(draws: dict, confidence: float = 0.95) -> dict:
    """``{config: {metric: [low, high] or None}}`` from :func:`paired_replicates`."""
    return {name: {metric: percentile_interval(values, confidence) for metric, values in metrics.items()}
            for name, metrics in draws.items()}


def paired_differences(points: dict, draws: dict, pairs: dict, confidence: float = 0.95) -> dict:
    """``{metric: {"value", "interval"}}`` per pair: ``pairs = {key: (config, base)}`` names two entries of ``points``
    / ``draws`` (configs, or configs restricted to the ids two configs share); the point difference
    ``config - base`` and the percentile interval of the replicate differences, for the metrics both have."""
    result = {}
    for key, (name, base) in pairs.items():
        metrics = {}
        for metric, value in points[name].items():
            if metric not in points[base] or metric not in draws[name] or metric not in draws[base]:
                continue
            difference = value - points[base][metric]
            metrics[metric] = {
                "value": float(difference) if np.isfinite(difference) else None,
                "interval": percentile_interval(draws[name][metric] - draws[base][metric], confidence),
            }
        result[key] = metrics
    return result
