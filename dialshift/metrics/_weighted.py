"""Weighted reductions shared by every metric's weighted compute.

Each metric of :mod:`dialshift.metrics` is split the way torchmetrics' functional API is (``_update``/``_compute``):
per-instance statistics, then a compute that counts instance ``i`` ``weights[i]`` times. ``weights`` is ``None``
(every instance once), a 1-D array of ``N`` counts (one estimate: a resample drawn explicitly as counts), or an
``R x N`` matrix (a block of ``R`` bootstrap replicates, one per row; the compute then returns arrays of ``R``).
Counting instance ``i`` ``w_i`` times gives, up to rounding, what the metric gives on the explicitly resampled copy
(``tests/test_metric_parity_harness.py``).
"""

import numpy as np


def as_weights(weights, n: int):
    """``None`` or a float64 array of shape ``(N,)`` or ``(R, N)``; a ValueError for another shape."""
    if weights is None:
        return None
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim not in (1, 2) or weights.shape[-1] != n:
        raise ValueError(f"weights must have shape (N,) or (R, N) with N = {n} instances, got {weights.shape}")
    return weights


def weighted_mean(values, weights=None):
    """Mean of ``values`` with each counted ``weights[i]`` times: a float, or an array of ``R`` for ``R x N`` weights;
    NaN where the weights sum to 0 (or for no value)."""
    values = np.asarray(values)
    if weights is None:
        return float(np.mean(values)) if len(values) else float("nan")
    weights = as_weights(weights, len(values))
    with np.errstate(divide="ignore", invalid="ignore"):
        means = (weights @ values.astype(np.float64, copy=False)) / weights.sum(axis=-1)
    return float(means) if np.ndim(means) == 0 else means


def weighted_bincount(index, values, size: int, weights=None):
    """Per-bin sums of ``values`` (counts if ``values`` is None) with instance ``i`` counted ``weights[i]`` times:
    an array of ``size``, or ``R x size`` for ``R x N`` weights (a sparse product, so any number of bins fits)."""
    index = np.asarray(index)
    if weights is None or np.ndim(weights) == 1:
        terms = weights if values is None else (values if weights is None else weights * values)
        return np.bincount(index, weights=terms, minlength=size).astype(np.float64, copy=False)
    from scipy import sparse

    n = len(index)
    data = np.ones(n) if values is None else np.asarray(values, dtype=np.float64)
    one_hot = sparse.csc_array((data, index, np.arange(n + 1)), shape=(size, n))  # one entry per column: no sorting
    return np.asarray((one_hot @ np.asarray(weights, dtype=np.float64).T).T)


def masked_mean(values, rows, weights=None):
    """Weighted mean of ``values[rows]`` as a dot product (``weights`` None, ``N`` or ``R x N``); NaN where the
    weights of ``rows`` sum to 0."""
    counts = np.ones(len(values)) if weights is None else as_weights(weights, len(values))
    part = counts[..., rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (part @ np.asarray(values, dtype=np.float64)[rows]) / part.sum(axis=-1)
    return float(mean) if np.ndim(mean) == 0 else mean
