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
    stacked = np.empty((len(columns) + 1, len(columns[0])))
    stacked[0] = 1.0  # the row totals from the same product (exact: sums of counts), remembered as row_totals does
    for row, column in enumerate(columns, 1):
        stacked[row] = column
    # columns x rows, as the product of the transposes: numpy copies column-major weights (the bootstrap's) before a
    # product on their left, not on their right
    sums = stacked @ weights.T
    if _LAST_TOTALS[0] is not weights:
        _LAST_TOTALS[:] = [weights, sums[0]]
    with np.errstate(divide="ignore", invalid="ignore"):
        means = sums[1:] / _LAST_TOTALS[1]
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


#: Sorted instances per run of :class:`RunningSums` (a multiple of 8, at most 64: :meth:`RunningSums.count_position`
#: counts a run's booleans as bits of 64-bit words).
RUN = 16
#: Column ``j`` sums a run's first ``j + 1`` counts (:meth:`RunningSums.count_position`).
_UPPER_ONES = np.triu(np.ones((RUN, RUN)))
#: Runs per group of :func:`exclusive_prefix`, and the strict lower triangle of ones that sums a group's rows.
GROUP = 16
_LOWER_ONES = np.tril(np.ones((GROUP, GROUP)), -1)


def exclusive_prefix(values: np.ndarray) -> np.ndarray:
    """The sum of the rows before each row of ``values`` (``runs x ...``, the first row's is 0), in two levels: within
    groups of :data:`GROUP` rows one batched product with a triangle of ones, the groups' totals by a cumulative sum
    (numpy's cumulative sum along many short columns costs several times as much). Rows in whole groups are read in
    place; otherwise they are copied into zero-padded groups first."""
    runs = len(values)
    groups = -(-runs // GROUP)
    if runs == groups * GROUP and values.flags.c_contiguous:
        blocks = values.reshape(groups, GROUP, -1)
    else:
        padded = np.zeros((groups * GROUP, values[0].size))
        padded[:runs] = values.reshape(runs, -1)
        blocks = padded.reshape(groups, GROUP, -1)
    prefix = _LOWER_ONES @ blocks
    totals = prefix[:, -1] + blocks[:, -1]  # each group's total, without another pass
    offsets = np.zeros_like(totals)
    np.cumsum(totals[:-1], axis=0, out=offsets[1:])
    prefix += offsets[:, None, :]
    return prefix.reshape(groups * GROUP, -1)[:runs].reshape(values.shape)


class RunningSums:
    """Running sums over the instances (in a given order) of each row's weighted count, gap ``f - y`` and hit ``y``,
    read at any positions without a cumulative sum over every instance: the sums of runs of :data:`RUN` consecutive
    instances are one batched matrix product, and only the run a position falls in is summed in part. The counts are
    held instance-major (``runs x RUN x R``: an instance's ``R`` weights side by side), a plain copy of column-major
    weights (the scoring's bootstrap passes them so), zero-padded to whole groups of :data:`GROUP` runs.

    The debiased L2 error reads them at each row's equal-mass bin ends (instances sorted by confidence), the binned
    ECE at its fixed bin ends (instances sorted by bin): :func:`running_sums` lets both share one."""

    def __init__(self, weights, order, confidence, correct, storage=None):
        """``weights``: ``R x N`` in the instances' own order; ``order``: a permutation of the instances to sum them
        in, or None to keep their order; ``confidence`` and ``correct``: in the order summed; ``storage``: a float64
        array whose memory holds the padded counts when large enough (:attr:`storage` then is it)."""
        rows, n = weights.shape
        self.runs = -(-n // RUN)
        padded_runs = -(-self.runs // GROUP) * GROUP
        size = padded_runs * RUN * rows
        if storage is None or storage.size < size:
            storage = np.empty(size)
        #: the memory of the counts (:func:`running_sums` hands it to the next one)
        self.storage = storage
        padded = storage[:size].reshape(padded_runs * RUN, rows)
        padded[n:] = 0.0
        if order is None:
            padded[:n] = weights.T
        else:
            padded[:n] = weights.T[order]
        self.counts = padded.reshape(padded_runs, RUN, rows)
        terms = np.zeros((padded_runs * RUN, 3))
        terms[:n, 0] = 1.0
        np.subtract(confidence, correct, out=terms[:n, 1])
        terms[:n, 2] = correct
        self.terms = terms.reshape(padded_runs, RUN, 3)
        run_sums = np.matmul(self.terms.transpose(0, 2, 1), self.counts)  # runs x 3 x rows
        #: runs x 3 x rows: the sums before each run
        self.before = exclusive_prefix(run_sums)[: self.runs]

    def _within(self, run, row) -> np.ndarray:
        """The counts of run ``run[r, k]`` of row ``r`` (``R x K x RUN``), taken by flat index (several times faster
        than indexing with three broadcast index arrays)."""
        rows = self.counts.shape[2]
        flat = (run * (RUN * rows) + row)[..., None] + np.arange(RUN) * rows
        return np.take(self.counts.ravel(), flat)

    def at(self, positions) -> np.ndarray:
        """The sums over the first ``positions[r, k]`` instances of row ``r`` (``R x K x 3``)."""
        run, within = np.divmod(positions, RUN)
        last = run == self.runs  # the end of a full last run
        run[last], within[last] = self.runs - 1, RUN
        row = np.arange(len(positions))[:, None]
        part = self._within(run, row) * (np.arange(RUN) < within[..., None])
        # a stacked product of each (1 x RUN) masked count row with its run's terms: half the cost of the einsum
        return self.before[run, :, row] + (part[..., None, :] @ self.terms[run])[..., 0, :]

    def at_fixed(self, positions) -> np.ndarray:
        """:meth:`at` for positions shared by every row (``K`` of them): ``R x K x 3``, the part of each position's
        run before it one batched product of its masked terms with the run's counts."""
        run, within = np.divmod(np.asarray(positions, dtype=np.int64), RUN)
        last = run == self.runs
        run[last], within[last] = self.runs - 1, RUN
        terms = self.terms[run] * (np.arange(RUN) < within[:, None])[..., None]  # K x RUN x 3
        inside = np.matmul(terms.transpose(0, 2, 1), self.counts[run])  # K x 3 x R
        inside += self.before[run]
        return inside.transpose(2, 0, 1)

    def count_position(self, totals) -> np.ndarray:
        """``numpy.searchsorted(running count of row r, totals[r], side="right")`` for ``totals`` below each row's
        total count (``R x K``): the number of instances whose running count is at most the total."""
        row = np.arange(len(totals))[:, None]
        count_before = np.ascontiguousarray(self.before[:, 0, :].T)  # rows x runs
        # the run where the count passes it: one search over the rows laid end to end, each lifted above the one
        # before (counts are integers, so the lifted values are exact)
        lift = row * (max(float(count_before.max(initial=0.0)), float(np.max(totals, initial=0.0))) + 1.0)
        run = np.searchsorted((count_before + lift).ravel(), totals + lift, side="right") - row * self.runs - 1
        # each run's running counts: a product with a triangle of ones (exact: the counts are integers), several
        # times faster than numpy's cumulative sum on these short rows, compared with what is left of the total
        inside = self._within(run, row) @ _UPPER_ONES <= (totals - count_before[row, run])[..., None]
        # the instances counted in: each run's RUN booleans (bytes 0 or 1) read as RUN / 8 64-bit words, word i
        # shifted by i bits into one word (no two set bits meet), its set bits counted (numpy's count of the
        # booleans along these short rows costs several times as much)
        words = inside.reshape(-1, RUN).view(np.uint64)
        folded = words[:, 0].copy()
        for i in range(1, RUN // 8):
            folded |= words[:, i] << np.uint64(i)
        return run * RUN + np.bitwise_count(folded).astype(np.int64).reshape(run.shape)


#: The last :class:`RunningSums` of :func:`running_sums` and the objects it was made from.
_LAST_RUNNING: list = [(), None]


def running_sums(weights: np.ndarray, confidence, correct) -> RunningSums:
    """:class:`RunningSums` of ``R x N`` ``weights`` over the instances in their own order, remembered for the last
    ``(weights, confidence, correct)`` passed (the same objects: the debiased L2 error and the binned ECE of one block
    of replicates share one). The next call with other objects reuses its memory: use it before calling again."""
    key = (weights, confidence, correct)
    if len(_LAST_RUNNING[0]) != 3 or any(a is not b for a, b in zip(_LAST_RUNNING[0], key, strict=True)):
        last = _LAST_RUNNING[1]
        _LAST_RUNNING[:] = [(), None]
        # the last one's memory is reused: a block's counts are megabytes, and fresh memory of that size costs a page
        # fault per 4 KiB on first write (a third of the time of these sums, measured)
        sums = RunningSums(weights, None, np.asarray(confidence, dtype=np.float64),
                           np.asarray(correct, dtype=np.float64), None if last is None else last.storage)
        _LAST_RUNNING[:] = [key, sums]
    return _LAST_RUNNING[1]
