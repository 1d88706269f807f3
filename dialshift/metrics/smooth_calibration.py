"""Calibration error estimators without the upward bias of binned ECE: smooth ECE and the debiased L2 error.

Both take the top-label statistics of :func:`dialshift.metrics.calibration.top_label_stats` (confidence ``f`` and
correctness ``y`` of the predicted class) and count instance ``i`` ``weights[i]`` times (``None``, ``N`` counts, or
an ``R x N`` block of bootstrap replicates; see :mod:`dialshift.metrics._weighted`).

**Smooth ECE** (Błasiok and Nakkiran, 2023, "Smooth ECE: Principled Reliability Diagrams via Kernel Smoothing"), as
computed by their ``relplot`` package's ``smECE`` (1.0.3; reimplemented here, vectorised over replicates): the
residuals ``r = f - y`` and the unit masses are spread linearly onto a grid of ``E = max(2000, round(20/s)) // 2 + 1``
points over [0, 1], convolved with a Gaussian kernel of bandwidth ``s`` reflected at 0 and 1, and read by linear
interpolation at ``max(round(10/s), 200)`` evaluation points ``t``; with ``R(t)`` the smoothed residual sum and
``D(t)`` the smoothed mass plus 1e-4, ``smECE_s = sum_t |R(t)/D(t)| D(t) / sum_t D(t)``. The bandwidth is the fixed
point ``s = smECE_s``, found by ``relplot``'s bisection (10 halvings from 1, bandwidths below 0.001 accepted), and
the estimate is ``smECE`` at that bandwidth. Its population value (the same functional of the true calibration
function, with ``y`` replaced by ``P(y = 1 | f)``) is the target of its bootstrap interval.

**Debiased L2 calibration error** (Kumar, Liang and Ma, 2019, "Verified Uncertainty Calibration"), as computed by
their ``uncertainty-calibration`` package's ``get_calibration_error(probs, labels, p=2, debias=True,
mode="top-label")`` for non-discrete probabilities (0.1.4): ``n_bins`` equal-mass bins (``get_equal_bins``: the
sorted confidences split into ``n_bins`` consecutive parts as ``numpy.array_split`` does, edges halfway between
neighbouring parts, the last edge 1, right-closed); in each bin ``b`` with ``n_b >= 2`` instances, the squared gap
``(mean f - mean y)^2`` minus its bias ``ybar (1 - ybar) / (n_b - 1)``; the bin-size-weighted sum, clipped at 0, and
its square root. It estimates the L2 calibration error ``sqrt(E[(f - P(y = 1 | f))^2])`` (a slight under-estimate by
the binning, Kumar et al.'s lower bound), which is the target of its bootstrap interval.
"""

import functools

import numpy as np

from dialshift.metrics._weighted import (
    RunningSums,
    as_weights,
    row_totals,
    running_sums,
    sum_matrix,
    weighted_bincount,
    weighted_sums,
)

#: relplot's constants: the density floor added to the smoothed mass, the smallest bandwidth, the bisection steps.
DENSITY_FLOOR = 1e-4
MIN_BANDWIDTH = 1e-3
BISECTIONS = 10


def _rows(weights, n: int) -> np.ndarray:
    weights = as_weights(weights, n)
    return np.ones((1, n)) if weights is None else np.atleast_2d(weights)


def _spread(confidence, grid: int):
    """Each confidence's lower grid point of ``grid`` points over [0, 1] and its share of the upper one (relplot's
    ``smooth_round_to_grid``: a value is split linearly between its two neighbouring points)."""
    position = confidence * (grid - 1)
    lower = position.astype(np.int64).clip(0, grid - 2)
    return lower, position - lower


def _grid_sums(confidence, values, grid: int, weights) -> np.ndarray:
    """``R x grid`` weighted sums of ``values`` spread linearly onto ``grid`` points over [0, 1] (:func:`_spread`)."""
    return _spread_sums(*_spread(confidence, grid), values, grid, weights)


def _spread_sums(lower, upper_share, values, size: int, weights) -> np.ndarray:
    """``R x size`` weighted sums of ``values`` split between cells ``lower`` and ``lower + 1`` (:func:`_grid_sums`)."""
    if len(weights) == 1:  # one row: a plain bincount, no sparse matrix
        weights = weights[0]
        sums = (weighted_bincount(lower, (1.0 - upper_share) * values, size, weights)
                + weighted_bincount(lower + 1, upper_share * values, size, weights))
        return np.atleast_2d(sums)
    return weighted_sums([lower, lower + 1], [(1.0 - upper_share) * values, upper_share * values], size, weights)


@functools.lru_cache(maxsize=64)
def _unit_points(count: int) -> np.ndarray:
    """``numpy.linspace(0, 1, count)``, read only (the bandwidth search asks for the same few many times)."""
    points = np.linspace(0.0, 1.0, count)
    points.flags.writeable = False
    return points


def _kernel(grid: int, bandwidth: float) -> np.ndarray:
    """relplot's ``GaussianKernel.kernel_ev``: the Gaussian density of standard deviation ``bandwidth`` centred at
    0.5, sampled at the ``grid`` points of [0, 1]."""
    t = _unit_points(grid)
    return np.exp(-(t - 0.5) * (t - 0.5) / (2 * bandwidth**2)) / (np.sqrt(2 * np.pi) * bandwidth)


def _period(sums: np.ndarray) -> np.ndarray:
    """One period (``2 (E - 1)`` values) of the mirror-symmetric periodic extension of each row of ``sums``: relplot's
    reflected extension ``[flip(v)[:-1], v, flip(v)[1:]]`` is three of its half-periods."""
    return np.concatenate([sums, sums[:, -2:0:-1]], axis=1)


def _interpolate(t: np.ndarray, smoothed: np.ndarray) -> np.ndarray:
    """Linear interpolation of rows given at ``i / (E - 1)`` at the points ``t`` (relplot's ``interpolate``)."""
    grid = smoothed.shape[-1]
    step = 1 / (grid - 1)
    index = (t * (grid - 1)).astype(np.int64).clip(0, grid - 2)
    residual = (t - index * step) / step
    return smoothed[:, index] * (1 - residual) + smoothed[:, index + 1] * residual


def _smooth_ece_at(confidence, residual, weights, bandwidths, cache: dict) -> np.ndarray:
    """smECE of every row of ``weights`` (``R x N``) at its own bandwidth (an array of ``R``).

    relplot's ``np.convolve(extended, kernel, "valid")[E // 2: E // 2 + E]`` of the reflected extension equals the
    circular convolution of the periodic extension (period ``P = 2 (E - 1)``, at least the kernel's length) with
    the kernel, read at ``i + E // 2``; it is computed as a product of FFTs of size ``P``. ``cache`` keeps what does not
    depend on the bandwidth (each row's spectra, per grid size) and each bandwidth's kernel spectrum, so a bisection
    step costs two inverse FFTs per row."""
    from scipy import fft

    result = np.empty(len(bandwidths))
    grids = np.maximum(2000, np.round(20 / bandwidths)).astype(np.int64) // 2 + 1
    points = np.maximum(np.round(10 / bandwidths), 200).astype(np.int64)
    for grid in (int(g) for g in np.unique(grids)):
        rows = np.flatnonzero(grids == grid)
        period = 2 * (grid - 1)
        if ("rows", grid) not in cache:
            cache["rows", grid] = (np.zeros((len(weights), period // 2 + 1), complex),
                                   np.zeros((len(weights), period // 2 + 1), complex), np.zeros(len(weights), bool))
        residual_spectra, mass_spectra, done = cache["rows", grid]
        missing = rows[~done[rows]]
        if len(missing):
            for spectra, values in ((residual_spectra, residual), (mass_spectra, np.ones_like(confidence))):
                spectra[missing] = fft.rfft(_period(_grid_sums(confidence, values, grid, weights[missing])), axis=1)
            done[missing] = True
        kernels = np.empty((len(rows), period // 2 + 1), complex)
        for i, bandwidth in enumerate(bandwidths[rows]):
            key = ("kernel", grid, float(bandwidth))
            if key not in cache:
                cache[key] = fft.rfft(_kernel(grid, float(bandwidth)), period)
            kernels[i] = cache[key]
        read = (np.arange(grid) + grid // 2) % period
        smoothed = [fft.irfft(spectra[rows] * kernels, period, axis=1)[:, read]
                    for spectra in (residual_spectra, mass_spectra)]
        for count in np.unique(points[rows]):
            inside = points[rows] == count
            t = _unit_points(int(count))
            total_residual = np.abs(_interpolate(t, smoothed[0][inside])).sum(axis=1)
            total_density = (_interpolate(t, smoothed[1][inside]) + DENSITY_FLOOR).sum(axis=1)
            result[rows[inside]] = total_residual / total_density  # sum |R/D| D / sum D = sum |R| / sum D
    return result


@functools.lru_cache(maxsize=256)
def _smoothing_operator(grid: int, bandwidth: float, points: int) -> np.ndarray:
    """The ``grid x points`` matrix ``A`` with ``smoothed(t) = G @ A`` for grid sums ``G``: the reflected Gaussian
    convolution of :func:`_smooth_ece_at` followed by its linear interpolation, applied to the identity (the smoothing
    is linear in the grid sums, so one matrix product scores a whole block of replicates at a fixed bandwidth).

    Built directly rather than by FFTs of the identity: grid point ``j`` is one unit at ``j`` of the periodic
    extension and, for ``0 < j < E - 1``, its mirror image at ``P - j``, so its smoothed row read at ``m`` is
    ``kernel[(m - j) mod P] + kernel[(m + j) mod P]`` (the kernel zero-padded to ``P``): the same matrix up to the
    FFTs' rounding (about 1e-16), without their cost (two FFTs of ``E x P``, for each bandwidth)."""
    period = 2 * (grid - 1)
    kernel = np.zeros(period)
    kernel[:grid] = _kernel(grid, bandwidth)
    # row j read at i: kernel[(i + E // 2 - j) mod P] and kernel[(i + E // 2 + j) mod P], windows of one extension
    extended = kernel[(np.arange(-(grid - 1), 2 * grid - 1) + grid // 2) % period]
    windows = np.lib.stride_tricks.sliding_window_view(extended, grid)
    smoothed = windows[grid - 1::-1].copy()
    smoothed[1:-1] += windows[grid:2 * grid - 2]
    return _interpolate(_unit_points(points), smoothed)


def _smooth_ece_fixed(confidence, residual, weights, bandwidth: float) -> np.ndarray:
    """smECE of every row of ``weights`` (``R x N``) at one ``bandwidth``, by :func:`_smoothing_operator`. The
    smoothed mass enters only through its sum over the evaluation points, which is linear in the weights: one
    matrix-vector product with each instance's share of that sum (its grid spread times the operator's row sums)."""
    plan = _fixed_plan(confidence, residual, float(bandwidth))
    if len(weights) == 1:  # one row: a plain bincount, no sparse matrix
        sums = _spread_sums(plan["position"], plan["upper_share"], residual, len(plan["operator"]), weights)
    else:
        sums = np.asarray((plan["matrix"] @ np.asarray(weights, dtype=np.float64).T).T)
    total_residual = np.abs(sums @ plan["operator"]).sum(axis=1)
    total_density = weights @ plan["mass_share"] + DENSITY_FLOOR * plan["points"]
    return total_residual / total_density


#: :func:`_fixed_plan`'s last results, by a digest of the statistics and the bandwidth: a bootstrap scores the same
#: statistics once per block of replicates, and these do not depend on the weights.
_FIXED_PLANS: dict = {}


def _fixed_plan(confidence, residual, bandwidth: float) -> dict:
    """What :func:`_smooth_ece_fixed` needs of the statistics at ``bandwidth``: the grid points some confidence
    spreads onto (the other rows of the smoothing product are zero) and the operator's rows there, each instance's
    lower point among them and its share of the upper one, the sparse matrix of the spread residuals, and each
    instance's share of the smoothed mass."""
    import hashlib

    key = (hashlib.blake2b(confidence.tobytes() + residual.tobytes(), digest_size=16).digest(), bandwidth)
    if key in _FIXED_PLANS:
        return _FIXED_PLANS[key]
    grid = int(max(2000, round(20 / bandwidth))) // 2 + 1
    points = int(max(round(10 / bandwidth), 200))
    operator = _smoothing_operator(grid, bandwidth, points)
    lower, upper_share = _spread(confidence, grid)
    read = operator.sum(axis=1)
    spread_onto = np.zeros(grid, bool)
    spread_onto[lower] = spread_onto[lower + 1] = True
    occupied = np.flatnonzero(spread_onto)
    position = np.searchsorted(occupied, lower)
    plan = {"points": points, "operator": operator[occupied], "position": position, "upper_share": upper_share,
            "matrix": sum_matrix([position, position + 1], [(1.0 - upper_share) * residual, upper_share * residual],
                                 len(occupied)),
            "mass_share": (1.0 - upper_share) * read[lower] + upper_share * read[lower + 1]}
    if len(_FIXED_PLANS) >= 64:
        _FIXED_PLANS.pop(next(iter(_FIXED_PLANS)))
    _FIXED_PLANS[key] = plan
    return plan


#: Point-estimate bandwidths by a digest of the statistics: a bootstrap calls the compute once per block of replicates
#: with the same statistics, and the search is the costly part.
_POINT_BANDWIDTHS: dict = {}


def _point_bandwidth(stats: dict, confidence: np.ndarray, residual: np.ndarray) -> float:
    """The bandwidth of the unweighted statistics (relplot's search), remembered for the last 64 statistics."""
    import hashlib

    key = hashlib.blake2b(confidence.tobytes() + residual.tobytes(), digest_size=16).digest()
    if key not in _POINT_BANDWIDTHS:
        if len(_POINT_BANDWIDTHS) >= 64:
            _POINT_BANDWIDTHS.pop(next(iter(_POINT_BANDWIDTHS)))
        _POINT_BANDWIDTHS[key] = smooth_ece_compute(stats, return_bandwidth=True)[1]
    return _POINT_BANDWIDTHS[key]


def smooth_ece_compute(stats: dict, weights=None, return_bandwidth: bool = False, bandwidth="search"):
    """Smooth ECE (module docstring) of :func:`~dialshift.metrics.calibration.top_label_stats`, each instance counted
    ``weights[i]`` times: a float (an array of ``R`` for ``R x N`` weights); with ``return_bandwidth`` also the
    bandwidth(s). ``stats["correct"]`` may hold probabilities ``P(y = 1 | f)`` (a population value).

    ``bandwidth``: ``"search"`` finds each row's own fixed point (relplot's rule); ``"point"`` finds the bandwidth of
    the unweighted statistics once and scores every row at it (one matrix product per block of replicates, about
    50 times faster than the search: the scoring path's bootstrap uses it, so its interval is the interval of smECE
    at the point estimate's bandwidth); a number scores every row at that bandwidth (the scoring passes the point
    estimate's, found before its bootstrap sample was put in sorted order)."""
    confidence = np.asarray(stats["confidence"], dtype=np.float64)
    residual = confidence - np.asarray(stats["correct"], dtype=np.float64)
    rows = _rows(weights, len(confidence))
    fixed = None
    if isinstance(bandwidth, (int, float)) and not isinstance(bandwidth, bool):
        fixed = float(bandwidth)
        if not fixed > 0:
            raise ValueError(f"bandwidth must be positive, got {bandwidth!r}")
    elif bandwidth not in ("search", "point"):
        raise ValueError(f"bandwidth must be 'search', 'point' or a number, got {bandwidth!r}")
    elif bandwidth == "point" and np.ndim(weights) == 2:
        fixed = _point_bandwidth(stats, confidence, residual)
    if fixed is not None:
        value = _smooth_ece_fixed(confidence, residual, rows, fixed)
        value[row_totals(rows) == 0] = np.nan
        if np.ndim(weights) != 2:
            return (float(value[0]), fixed) if return_bandwidth else float(value[0])
        return (value, np.full(len(rows), fixed)) if return_bandwidth else value
    cache: dict = {}

    def accepted(bandwidths):
        return (bandwidths < MIN_BANDWIDTH) | (bandwidths < _smooth_ece_at(confidence, residual, rows, bandwidths,
                                                                           cache))

    upper = np.ones(len(rows))
    searching = ~accepted(upper)
    lower = np.zeros(len(rows))
    for _ in range(BISECTIONS):  # relplot's search_param: the smallest rejected bandwidth on a 1/1024 grid
        middle = (upper + lower) / 2
        ok = accepted(middle)
        lower = np.where(searching & ok, middle, lower)
        upper = np.where(searching & ~ok, middle, upper)
    value = _smooth_ece_at(confidence, residual, rows, upper, cache)
    value[rows.sum(axis=1) == 0] = np.nan  # a replicate that draws no instance
    if np.ndim(weights) != 2:
        value, upper = float(value[0]), float(upper[0])
    return (value, upper) if return_bandwidth else value


#: The most ``rows x instances`` elements the debiased L2 error's block computation holds at once (bounds memory).
BLOCK_ELEMENTS = 1 << 22
def _equal_mass_ends(sorted_confidence, sums: RunningSums, total, n_bins: int) -> np.ndarray:
    """``uncertainty-calibration``'s ``get_equal_bins`` for each row of weights (running ``sums``, ``total`` counts,
    positive; instance ``i`` repeated as often as its weight): the end of each bin, as the number of sorted
    instances in it and the bins before it (``R x (n_bins + 1)``, the last column ``N``).

    A row's sorted sample is split into ``min(n_bins, total)`` consecutive parts as ``numpy.array_split`` does; the
    edges lie halfway between neighbouring parts, the last edge is 1, bins are right-closed, so a bin holds the
    sorted instances from the end of the bin before it to its own end. An edge that repeats another (ties, or fewer
    parts than bins) gives an empty bin and moves no instance: the bins of the deduplicated edges."""
    parts = np.minimum(n_bins, total)
    size, extra = np.divmod(total, parts)
    j = np.arange(1, n_bins)
    starts = j * size[:, None] + np.minimum(j, extra[:, None])  # numpy.array_split's part starts
    np.minimum(starts, total[:, None] - 1, out=starts)  # parts beyond a row's total: searched anywhere, unused
    last_instance = len(sorted_confidence) - 1  # the bound only matters for a row without weight, whose bins are unused
    both = sums.count_position(np.concatenate([starts, np.maximum(starts - 1, 0)], axis=1))  # one search
    first, last = np.split(sorted_confidence[np.minimum(both, last_instance)], 2, axis=1)
    edges = np.where(j < parts[:, None], (last + first) / 2.0, 1.0)
    ends = np.searchsorted(sorted_confidence, edges.ravel(), side="right").reshape(edges.shape)
    return np.concatenate([ends, np.full((len(ends), 1), len(sorted_confidence))], axis=1)


def _debiased_l2_squared_of_bins(size, gap, hits) -> np.ndarray:
    """The debiased squared L2 error, before clipping, of each row of per-bin weighted counts, gap sums and hit sums
    (``R x bins``): the bin-size-weighted sum of the debiased squared gaps (negative when chance alone explains the
    gaps)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        usable = size >= 2
        mean_hit = hits / size
        squared = (gap / size) ** 2 - mean_hit * (1.0 - mean_hit) / (size - 1.0)
        terms = np.where(usable, size / size.sum(axis=1, keepdims=True) * squared, 0.0)
    return terms.sum(axis=1)


def debiased_l2_compute(stats: dict, n_bins: int = 15, weights=None, squared: bool = False):
    """Debiased L2 calibration error (module docstring) of
    :func:`~dialshift.metrics.calibration.top_label_stats`, each instance counted ``weights[i]`` times: a float, or
    an array of ``R`` for ``R x N`` weights. With ``squared=True``: the debiased squared error before it is clipped
    at 0 (an unbiased estimate of the binned squared error, which may be negative; the error is the root of its
    positive part), the quantity the scoring's interval is computed on.

    A block of replicates is computed at once, in the order of the sorted confidences: each row's bins are runs of
    consecutive instances (:func:`_equal_mass_ends`), so its per-bin sums are differences of running sums
    (:class:`~dialshift.metrics._weighted.RunningSums`). Statistics whose confidences are sorted already are not
    permuted."""
    confidence = np.asarray(stats["confidence"], dtype=np.float64)
    correct = np.asarray(stats["correct"], dtype=np.float64)
    rows = _rows(weights, len(confidence))
    if np.all(confidence[1:] >= confidence[:-1]):  # sorted already (the scoring's bootstrap sorts its samples)
        order = None
    else:
        order = np.argsort(confidence, kind="stable")
        confidence, correct = confidence[order], correct[order]
    totals = row_totals(rows)
    values = np.empty(len(rows))
    step = max(1, BLOCK_ELEMENTS // len(confidence))
    for start in range(0, len(rows), step):
        chunk = slice(start, start + step)
        if order is None and step >= len(rows):  # one chunk: shared with the binned ECE of the same block
            sums = running_sums(rows, stats["confidence"], stats["correct"])
        else:
            sums = RunningSums(rows[chunk], order, confidence, correct)
        ends = _equal_mass_ends(confidence, sums, np.maximum(totals[chunk], 1).astype(np.int64), n_bins)
        at_ends = sums.at(ends)  # the sums over the first 0 instances are 0: not searched
        values[chunk] = _debiased_l2_squared_of_bins(*np.moveaxis(np.diff(at_ends, axis=1, prepend=0.0), 2, 0))
    if not squared:
        values = np.sqrt(np.maximum(values, 0.0))
    values[totals == 0] = np.nan  # a replicate that draws no instance
    return float(values[0]) if np.ndim(weights) != 2 else values


def smooth_ece(predictions, references, calibration_test=False, test_replicates=1000, test_seed=0):
    """Smooth ECE of the top-label prediction (Błasiok and Nakkiran, 2023; ``relplot.smECE``).

    Args:
        predictions: ``N x K`` class probabilities; references: ``N`` gold class ids.
        calibration_test: also return ``calibration_p_value`` (:func:`_with_test`).

    Returns:
        ``{"smooth_ece": float, "bandwidth": float}`` (the kernel bandwidth, the fixed point of the module doc).

    Example:
        >>> result = smooth_ece([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]], [0, 1, 1, 1])
        >>> round(result["smooth_ece"], 4), result["bandwidth"]
        (0.1316, 0.1328125)
    """
    from dialshift.metrics.calibration import top_label_stats

    stats = top_label_stats(predictions, references)
    value, bandwidth = smooth_ece_compute(stats, return_bandwidth=True)
    return _with_test({"smooth_ece": value, "bandwidth": bandwidth}, stats, calibration_test, test_replicates,
                      test_seed)


def _with_test(result: dict, stats: dict, enabled: bool, replicates: int, seed: int) -> dict:
    """``result`` with, when ``enabled``, ``calibration_p_value``: the p-value of "the model is calibrated" by
    consistency resampling of the top-label ECE over 15 equal-width bins (:mod:`dialshift.metrics.calibration_test`,
    ``replicates`` null replicates, seed ``seed``), the test the scoring reports."""
    if enabled:
        from dialshift.metrics.calibration_test import consistency_test

        result["calibration_p_value"] = consistency_test(stats, 15, replicates, seed)["p_value"]
    return result


def debiased_l2(predictions, references, n_bins=15, calibration_test=False, test_replicates=1000, test_seed=0):
    """Debiased L2 calibration error of the top-label prediction over ``n_bins`` equal-mass bins (Kumar et al., 2019;
    ``uncertainty-calibration``'s ``get_calibration_error(debias=True, mode="top-label")``). With
    ``calibration_test``, also ``calibration_p_value`` (:func:`_with_test`).

    Example:
        >>> result = debiased_l2([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]], [0, 1, 1, 1], n_bins=2)
        >>> round(result["debiased_l2"], 4)
        0.0
    """
    from dialshift.metrics._checks import check_n_bins
    from dialshift.metrics.calibration import top_label_stats

    stats = top_label_stats(predictions, references)  # bins: the default 15 equal-width ones, those of the test
    return _with_test({"debiased_l2": debiased_l2_compute(stats, check_n_bins(n_bins))}, stats, calibration_test,
                      test_replicates, test_seed)


def smooth_ece_null_mean(stats: dict, bandwidth: float | None = None) -> float:
    """The smooth ECE a calibrated model with these confidences is expected to show (its bias at calibration), at
    ``bandwidth`` (default: the point estimate's, :func:`~dialshift.metrics.smooth_calibration.smooth_ece_compute`).

    At a fixed bandwidth smECE is ``sum_t |R(t)| / sum_t D(t)`` with the smoothed residual ``R(t)`` linear in the
    residuals ``c_i - y_i``; under the null these are independent with mean 0 and variance ``c_i (1 - c_i)``, so
    ``R(t)`` has variance ``V(t) = sum_i A(t, c_i)^2 c_i (1 - c_i)`` (``A``: the smoothing operator, each instance
    read at its position) and, approximately normal, ``E|R(t)| = sqrt(2 V(t) / pi)``. The density ``D`` does not
    depend on the labels."""
    confidence = np.asarray(stats["confidence"], dtype=np.float64)
    if bandwidth is None:
        residual = confidence - np.asarray(stats["correct"], dtype=np.float64)
        bandwidth = _point_bandwidth(stats, confidence, residual)
    grid = int(max(2000, round(20 / bandwidth))) // 2 + 1
    points = int(max(round(10 / bandwidth), 200))
    operator = _smoothing_operator(grid, float(bandwidth), points)
    ones = np.ones((1, len(confidence)))
    variance = _grid_sums(confidence, confidence * (1.0 - confidence), grid, ones) @ (operator * operator)
    density = _grid_sums(confidence, np.ones_like(confidence), grid, ones) @ operator + DENSITY_FLOOR
    return float(np.sqrt(2.0 / np.pi * variance).sum() / density.sum())
