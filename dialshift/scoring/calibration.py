"""Intervals for the calibration metrics that hold near calibration, and the calibration test's place in them.

A percentile bootstrap interval of binned or smooth ECE cannot hold the truth of a (nearly) calibrated model: the
statistic is biased upward (each bin's or point's sampling noise enters in absolute value) and its bootstrap
replicates are biased further. The intervals below were chosen by measuring candidates in
``benchmarks/calibration_coverage.py`` (docs/metrics.md has the table and the candidates that failed). With ``T`` the
point estimate, ``T*`` the paired Poisson bootstrap replicates (:mod:`dialshift.scoring.bootstrap`), ``q_lo``/``q_hi``
their ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles, ``h = (q_hi - q_lo) / 2``, ``b* = mean(T*) - T``
(the bootstrap's estimate of the bias) and ``B0`` the statistic expected of a calibrated model with the same
confidences (the bias at calibration, the largest bias a statistic of absolute gaps has:
:func:`~dialshift.metrics.calibration_test.consistency_test`'s ``null_mean`` for ECE,
:func:`~dialshift.metrics.smooth_calibration.smooth_ece_null_mean` for smooth ECE):

* **binned ECE, smooth ECE**: ``[T - max(b*, B0) - h, T + h]``: the bias lies between 0 and ``max(b*, B0)``;
* **debiased L2**: the debiased *squared* error ``S`` is unbiased, but its bootstrap replicates are not (their mean
  exceeds ``S`` by about one bin's sampling variance): the percentile interval of ``S* - mean(S*) + S`` (bias
  corrected), mapped through ``sqrt(max(., 0))``;
* **when the calibration test does not reject** (p-value at least ``1 - confidence``) the lower end is 0 and the
  interval is labelled an *upper bound*: the data cannot tell the model from a calibrated one, and no two-sided
  interval can then both hold the truth 0 and exclude it;
* **paired differences** ``config - base``: for ECE and smooth ECE, ``[D - max(b*_c, B0_c) + min(b*_b, B0_b) - h,
  D - min(b*_c, B0_c) + max(b*_b, B0_b) + h]`` with ``D`` the point difference and ``h`` the half-width of the
  percentile interval of the paired replicate differences (each side's bias lies between its two estimates); for
  debiased L2, the percentile interval of the difference of the bias-corrected roots (above).

Every interval is widened, if need be, to hold its point estimate. Lower ends are clipped at 0 (a calibration error is
not negative).
"""

import numpy as np

from dialshift.scoring.bootstrap import percentile_interval

#: The calibration metrics with their own intervals, and the replicate quantity of the debiased L2 error.
ABSOLUTE = ("ece", "smooth_ece")
SQUARED = {"debiased_l2": "debiased_l2^2"}
AUXILIARY = frozenset({*SQUARED.values(), "smooth_ece_bandwidth"})
TWO_SIDED, UPPER = "two-sided", "upper bound"


def _finite(values) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    return values[np.isfinite(values)]


def _bias_range(metric: str, point: float, replicates: np.ndarray, null_means: dict) -> tuple[float, float]:
    """``(low, high)`` estimates of the bias of an absolute-gap statistic: the bootstrap's and the bias at
    calibration, both at least 0."""
    bootstrap = max(0.0, float(np.mean(replicates)) - point)
    at_null = max(0.0, float(null_means.get(metric, bootstrap)))
    return min(bootstrap, at_null), max(bootstrap, at_null)


def _corrected_roots(point_squared: float, replicates: np.ndarray) -> np.ndarray:
    """The roots of the bias-corrected squared replicates ``S* - mean(S*) + S`` (module docstring)."""
    return np.sqrt(np.maximum(replicates - np.mean(replicates) + point_squared, 0.0))


def _holding(interval, point: float) -> list:
    low, high = interval
    return [float(max(0.0, min(low, point))), float(max(high, point))]


def metric_interval(metric: str, point: dict, draws: dict, test: dict | None, confidence: float = 0.95):
    """``(interval, kind)`` of a calibration ``metric`` of one config (module docstring): ``point`` and ``draws`` are
    the config's point values and replicate arrays (with :data:`AUXILIARY`), ``test`` its calibration test
    (``p_value``, ``null_means``). ``(None, None)`` when fewer than half the replicates are finite."""
    value = point.get(metric)
    if value is None or not np.isfinite(value):
        return None, None
    if metric in SQUARED:
        replicates = _finite(draws.get(SQUARED[metric], ()))
        if len(replicates) < max(2, len(draws.get(SQUARED[metric], ())) // 2):
            return None, None
        interval = percentile_interval(_corrected_roots(point[SQUARED[metric]], replicates), confidence)
    else:
        replicates = _finite(draws.get(metric, ()))
        if len(replicates) < max(2, len(draws.get(metric, ())) // 2):
            return None, None
        low, high = percentile_interval(replicates, confidence)
        half = (high - low) / 2.0
        _, most = _bias_range(metric, value, replicates, (test or {}).get("null_means", {}))
        interval = [value - most - half, value + half]
    if test is not None and test["p_value"] >= 1.0 - confidence:
        return _holding([0.0, interval[1]], value), UPPER
    return _holding(interval, value), TWO_SIDED


def difference_interval(metric: str, points: tuple, draws: tuple, tests: tuple, confidence: float = 0.95):
    """The interval of ``config - base`` for a calibration ``metric`` (module docstring); ``points``, ``draws`` and
    ``tests`` are ``(config's, base's)`` as for :func:`metric_interval`. None without enough finite replicates."""
    (point, base_point), (draw, base_draw) = points, draws
    difference = point[metric] - base_point[metric]
    if metric in SQUARED:
        key = SQUARED[metric]
        a, b = np.asarray(draw[key], dtype=np.float64), np.asarray(base_draw[key], dtype=np.float64)
        both = np.isfinite(a) & np.isfinite(b)
        if both.sum() < max(2, len(a) // 2):
            return None
        replicates = _corrected_roots(point[key], a[both]) - _corrected_roots(base_point[key], b[both])
        low, high = percentile_interval(replicates, confidence)
    else:
        a, b = np.asarray(draw[metric], dtype=np.float64), np.asarray(base_draw[metric], dtype=np.float64)
        both = np.isfinite(a) & np.isfinite(b)
        if both.sum() < max(2, len(a) // 2):
            return None
        low, high = percentile_interval(a[both] - b[both], confidence)
        half = (high - low) / 2.0
        least, most = _bias_range(metric, point[metric], a[both], (tests[0] or {}).get("null_means", {}))
        base_least, base_most = _bias_range(metric, base_point[metric], b[both], (tests[1] or {}).get("null_means", {}))
        low, high = difference - most + base_least - half, difference - least + base_most + half
    return [float(min(low, difference)), float(max(high, difference))]
