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


#: The last ``R x N`` weight matrix whose row totals were taken, and its totals: the metrics of a task take several
#: weighted means of one block of replicates, and the totals would otherwise be summed again for each.
_LAST_TOTALS: list = [None, None]


def row_totals(weights: np.ndarray) -> np.ndarray:
    """``weights.sum(axis=-1)``, remembered for the last 2-D matrix passed (the same object: a block of replicates is
    not modified while its metrics are computed)."""
    if weights.ndim != 2:
        return weights.sum(axis=-1)
    if _LAST_TOTALS[0] is not weights:
        _LAST_TOTALS[:] = [weights, weights.sum(axis=-1)]
    return _LAST_TOTALS[1]


def weighted_mean(values, weights=None):
    """Mean of ``values`` with each counted ``weights[i]`` times: a float, or an array of ``R`` for ``R x N`` weights;
    NaN where the weights sum to 0 (or for no value)."""
    values = np.asarray(values)
    if weights is None:
        return float(np.mean(values)) if len(values) else float("nan")
    weights = as_weights(weights, len(values))
    with np.errstate(divide="ignore", invalid="ignore"):
        means = (weights @ values.astype(np.float64, copy=False)) / row_totals(weights)
    return float(means) if np.ndim(means) == 0 else means


def weighted_means(columns, weights=None) -> list:
    """:func:`weighted_mean` of each of ``columns`` (arrays of ``N``); for ``R x N`` weights one matrix product
    reads the weights once for all of them."""
    if weights is None or np.ndim(weights) != 2 or len(columns) < 2:
        return [weighted_mean(column, weights) for column in columns]
    weights = as_weights(weights, len(columns[0]))
    stacked = np.stack([np.asarray(column, dtype=np.float64) for column in columns])
    with np.errstate(divide="ignore", invalid="ignore"):
        # columns x rows, as the product of the transposes: numpy copies column-major weights (the bootstrap's)
        # before a product on their left, not on their right
        means = (stacked @ weights.T) / row_totals(weights)
    return list(means)


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


def weighted_sums(indices, values, size: int, weights) -> np.ndarray:
    """``R x size`` sums, for ``R x N`` ``weights``, of several ``(index, value)`` terms per instance: instance ``i``
    adds ``weights[r, i] * values[j][i]`` to cell ``indices[j][i]`` of row ``r`` for every ``j`` (a value of None
    counts 1). One sparse product with one column per instance, ``len(indices)`` entries each, reads the weights once
    where :func:`weighted_bincount` would read them once per term."""
    return np.asarray((sum_matrix(indices, values, size) @ np.asarray(weights, dtype=np.float64).T).T)


def sum_matrix(indices, values, size: int):
    """The sparse ``size x N`` matrix of :func:`weighted_sums` (one column per instance, its terms as entries): its
    product with the transposed weights is their sums (kept by a caller that scores the same terms many times)."""
    from scipy import sparse

    n = len(indices[0])
    terms = len(indices)
    data = np.column_stack([np.ones(n) if value is None else np.asarray(value, dtype=np.float64) for value in values])
    rows = np.column_stack([np.asarray(index) for index in indices])
    return sparse.csc_array((data.ravel(), rows.ravel(), np.arange(0, terms * n + 1, terms)), shape=(size, n))


def masked_mean(values, rows, weights=None):
    """Weighted mean of ``values[rows]`` as a dot product (``weights`` None, ``N`` or ``R x N``); NaN where the
    weights of ``rows`` sum to 0."""
    counts = np.ones(len(values)) if weights is None else as_weights(weights, len(values))
    part = counts[..., rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (part @ np.asarray(values, dtype=np.float64)[rows]) / part.sum(axis=-1)
    return float(mean) if np.ndim(mean) == 0 else mean
