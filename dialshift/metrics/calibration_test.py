"""A test of "the model is calibrated": consistency resampling of the binned ECE.

Consistency resampling (Bröcker and Smith, 2007; Vaicenavicius et al., 2019): if the model is calibrated, a
prediction of confidence ``c`` is right with probability ``c``, so test sets of labels drawn from the model's own
confidences show how large the statistic gets by chance alone. The p-value is ``(1 + #{null statistic >= observed})
/ (1 + replicates)`` (Davison and Hinkley, 1997, eq. 4.11; never 0).

The statistic is the top-label binned ECE (:func:`binned_ece`, the value of
:func:`dialshift.metrics.calibration.ece_compute`) (equal-width,
right-closed bins): of the three calibration estimators it had the most power in ``benchmarks/calibration_coverage.py``
(docs/metrics.md), and it depends on the labels only through each bin's number of right predictions. Under the null
that number is a sum of independent Bernoulli(``c_i``) draws; it is drawn as a Binomial(``n_b``, mean confidence of the
bin): the same mean, a variance larger by ``sum (c_i - mean)^2``, at most ``(1/n_bins)^2 / 12`` per instance (a
slightly conservative test: its size is measured, not assumed), at the cost of one draw per bin and replicate instead of
one per instance. Confidences are not redrawn: the test is conditional on them, as the bins are.

The draws come from ``numpy.random.default_rng([seed, digest])`` where ``digest`` is a hash of the statistics, so the
same predictions and seed give the same p-value, alone or beside other configs.

This module needs only the per-instance statistics; :func:`dialshift.metrics.calibration.calibration_test` computes
them from predictions, and :func:`dialshift.metrics.smooth_calibration.smooth_ece_null_mean` gives smooth ECE's bias
at calibration.
"""

import hashlib

import numpy as np

from dialshift.metrics._weighted import weighted_bincount

#: Null replicates of the test unless told otherwise.
REPLICATES = 1000


def _seed_digest(stats: dict) -> int:
    digest = hashlib.blake2b(digest_size=8)
    for name in ("confidence", "correct", "bin"):
        digest.update(np.ascontiguousarray(stats[name]).tobytes())
    return int.from_bytes(digest.digest(), "little")


def ece_null(stats: dict, n_bins: int = 15, replicates: int = REPLICATES, seed: int = 0) -> np.ndarray:
    """``replicates`` values of the binned ECE of :func:`~dialshift.metrics.calibration.top_label_stats` when the
    labels are drawn from the model's own confidences (module docstring)."""
    confidence = np.asarray(stats["confidence"], dtype=np.float64)
    counts = weighted_bincount(stats["bin"], None, n_bins)
    confidence_sums = weighted_bincount(stats["bin"], confidence, n_bins)
    filled = counts > 0
    rng = np.random.default_rng([int(seed), _seed_digest(stats)])
    hits = rng.binomial(counts[filled].astype(np.int64), confidence_sums[filled] / counts[filled],
                        size=(int(replicates), int(filled.sum())))
    return np.abs(confidence_sums[filled] - hits).sum(axis=1) / counts.sum()


def binned_ece(stats: dict, n_bins: int = 15) -> float:
    """The observed statistic: the binned top-label ECE of the statistics, ``sum_b |sum c - sum y| / n`` (the value of
    :func:`~dialshift.metrics.calibration.ece_compute`, computed here as :func:`ece_null` computes its replicates)."""
    confidence = np.asarray(stats["confidence"], dtype=np.float64)
    counts = weighted_bincount(stats["bin"], None, n_bins)
    gaps = weighted_bincount(stats["bin"], confidence - np.asarray(stats["correct"], dtype=np.float64), n_bins)
    return float(np.abs(gaps).sum() / counts.sum())


def consistency_test(stats: dict, n_bins: int = 15, replicates: int = REPLICATES, seed: int = 0) -> dict:
    """Consistency-resampling test of calibration (module docstring) of top-label statistics.

    Returns ``{"p_value", "statistic": "ece", "observed", "null_mean", "replicates"}``: ``null_mean`` is the binned
    ECE expected of a calibrated model with these confidences (the statistic's bias at calibration).
    """
    if int(replicates) < 1:
        raise ValueError(f"replicates must be a positive integer, got {replicates!r}")
    observed = binned_ece(stats, n_bins)
    null = ece_null(stats, n_bins, replicates, seed)
    # a null value equal to the observed one up to rounding counts as at least as large
    exceed = int(np.count_nonzero(null >= observed - 1e-12))
    return {"p_value": (1 + exceed) / (1 + len(null)), "statistic": "ece", "observed": float(observed),
            "null_mean": float(null.mean()), "replicates": int(replicates)}
