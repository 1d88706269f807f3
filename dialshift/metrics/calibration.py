"""Calibration metrics: expected calibration error (ECE) and the Brier score with its Murphy decomposition.

Conventions (also stated in the metric cards ``metrics/ece/README.md`` and ``metrics/brier/README.md``):

* ``predictions`` is an ``N x K`` array of class probabilities (rows in [0, 1] summing to 1 within 1e-4);
  ``references`` the gold class ids. A ranking task with ``K`` candidates is a ``K``-class prediction (Lee et al.).
* Bins: ``n_bins`` bins over [0, 1]. Bins are right-closed, ``(lo, hi]`` (Guo et al., 2017), except the first,
  which also holds 0; so a confidence of exactly 1.0 lies in the last bin and 0.0 in the first. Equal-width edges
  are ``i / n_bins`` for ``i = 0 .. n_bins``, each the float nearest the exact fraction (Python's ``i / n``; not
  ``numpy.linspace``, whose interior edges can be one ulp off, e.g. its 3/10 edge is ``0.1 + 0.2``). A confidence
  ``c`` lies in bin ``i`` when ``edge[i] < c <= edge[i + 1]``, compared exactly: this is the exact rule
  ``ceil(c * n_bins) - 1`` except that a float equal to an edge (the float nearest ``i / n_bins``, which may lie
  just above the fraction) counts as lying on that edge, so ``0.1`` is in ``(0, 0.1]`` and ``0.1 + 0.2`` (one ulp
  above the float ``0.3``) in ``(0.3, 0.4]``. This is the rule of the reference implementation of Kumar et al.
  (2019), ``uncertainty-calibration``'s ``get_ece``: ``numpy.searchsorted`` on the edges ``i * 1.0 / n``.
  Equal-mass edges are the ``n_bins + 1`` quantiles of the confidences (``numpy.quantile``, linear interpolation)
  with the outer edges set to 0 and 1, with the same right-closed rule. Ties in confidence never straddle a bin
  edge, so the result does not depend on the order of the samples.
* Top-label mode: confidence = the largest probability of a row, prediction = its column (the first one on ties),
  hit = prediction equals the gold id. Classwise mode (Kull et al., 2019): every column ``k`` is binned on its own
  with hit = (gold id == k).
* Norms: ``l1`` = sum over bins of (bin size / N) * |accuracy - confidence|; ``l2`` = the square root of the
  same weighted sum of squared gaps (the root of the weighted mean of squared gaps, no debiasing); ``max`` = the
  largest gap over non-empty bins (the MCE). In classwise mode every (class, bin) cell is weighted by
  (bin size / N) / K, so the norms combine the classes as the ``marginal`` mode of Kumar et al. (2019) does:
  ``l1`` = the mean over classes of the per-class ECE, ``l2`` = the square root of the mean over classes of the
  per-class *squared* L2 errors (not the mean of their roots), ``max`` = the largest per-class MCE.
"""

import numpy as np

from dialshift.metrics._checks import (
    as_array,
    as_class_ids,
    check_choice,
    check_n_bins,
    check_probabilities,
    check_same_length,
    row_blocks,
)
from dialshift.metrics._weighted import as_weights, running_sums, weighted_bincount, weighted_mean, weighted_sums

BINNINGS = ("equal_width", "equal_mass")
NORMS = ("l1", "l2", "max")
MODES = ("top_label", "classwise")


def bin_edges(confidences: np.ndarray, n_bins: int, binning: str = "equal_width") -> np.ndarray:
    """The ``n_bins + 1`` bin edges over [0, 1] for ``confidences`` (see the module docstring)."""
    if binning == "equal_width":
        # IEEE division is correctly rounded: edge i is the float nearest i / n_bins, exactly 0 and 1 at the ends
        return np.arange(n_bins + 1, dtype=np.float64) / n_bins
    edges = np.quantile(confidences, np.linspace(0.0, 1.0, n_bins + 1))
    edges[0], edges[-1] = 0.0, 1.0
    return edges


def bin_index(values: np.ndarray, edges: np.ndarray, equal_width: bool = False) -> np.ndarray:
    """Bin of each value for right-closed bins ``(edges[i], edges[i + 1]]``, the first bin also holding 0.

    With ``equal_width=True`` (``edges`` from :func:`bin_edges`, the floats nearest ``i / n``) the bin is first
    estimated arithmetically as ``floor(v * n)``, which the rounding of ``v * n`` can put at most one bin off the
    exact ``ceil(v * n) - 1`` of the right-closed rule (and exactly one off on an edge), and then corrected by
    comparing ``v`` exactly with the two edges around the estimate. This is several times faster than
    ``numpy.searchsorted`` and gives the same result (tested against an exact ``fractions.Fraction`` reference on
    every edge ``i / n`` for ``n`` up to 20 and its neighbouring floats).
    """
    last = len(edges) - 2
    if not equal_width:
        index = np.searchsorted(edges, values, side="left")
        index -= 1
        np.clip(index, 0, last, out=index)
        return index
    index = (values * (last + 1)).astype(np.intp)  # floor for values >= 0; one bin off at most
    np.minimum(index, last, out=index)
    # correct against the actual edges: right-closed bins, and v * n can round across an integer
    index -= values <= edges[index]
    index += values > edges[index + 1]
    np.maximum(index, 0, out=index)  # 0.0 belongs to the first bin
    return index


def binned_sums(confidences: np.ndarray, hits: np.ndarray, edges: np.ndarray, equal_width: bool = False):
    """Per-bin sample counts, sums of confidences and sums of hits (float64 arrays of length ``len(edges) - 1``)."""
    state = binned_state(bin_index(confidences, edges, equal_width), confidences, hits, len(edges) - 1)
    return state["count"], state["confidence"], state["hit"]


def binned_state(bins, confidences, hits, n_bins: int, weights=None) -> dict:
    """The additive state of a binned calibration metric: per bin, the (weighted) count, the sum of the gaps
    ``confidence - hit``, the sum of confidences and the sum of hits (arrays of ``n_bins``, or ``R x n_bins`` for
    ``R x N`` weights; see :mod:`dialshift.metrics._weighted`). States of batches add up."""
    confidences = np.asarray(confidences, dtype=np.float64)
    hits = np.asarray(hits, dtype=np.float64)
    return {
        "count": weighted_bincount(bins, None, n_bins, weights),
        "gap": weighted_bincount(bins, confidences - hits, n_bins, weights),
        "confidence": weighted_bincount(bins, confidences, n_bins, weights),
        "hit": weighted_bincount(bins, hits, n_bins, weights),
    }


def calibration_error(counts: np.ndarray, gap_sums: np.ndarray, norm: str = "l1"):
    """Calibration error from per-bin counts and gap sums (``sum(confidence - hit)``) with the ``l1``, ``l2`` or
    ``max`` norm; rows of ``R x n_bins`` arrays are scored separately (an array of ``R`` is returned).

    ``l1`` = sum over bins of ``|gap sum| / total`` (= the bin-size-weighted mean of ``|accuracy - confidence|``);
    ``l2`` = the root of the bin-size-weighted mean of the squared per-bin gaps; ``max`` = the largest per-bin gap.
    """
    counts, gap_sums = np.asarray(counts, dtype=np.float64), np.asarray(gap_sums, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if norm == "l1":
            value = np.abs(gap_sums).sum(axis=-1) / counts.sum(axis=-1)
        else:
            gaps = np.zeros(np.broadcast_shapes(counts.shape, gap_sums.shape))
            np.divide(np.abs(gap_sums), counts, out=gaps, where=counts > 0)
            if norm == "max":
                value = gaps.max(axis=-1)
            else:
                value = np.sqrt(np.sum(counts * gaps**2, axis=-1) / counts.sum(axis=-1))
    return float(value) if np.ndim(value) == 0 else value


def classwise_error(counts: np.ndarray, gap_sums: np.ndarray, norm: str = "l1"):
    """Classwise calibration error from ``K x n_bins`` per-(class, bin) counts and gap sums (module doc, Norms).

    ``l1``: mean over classes of the per-class ECE; ``l2``: square root of the mean over classes of the per-class
    squared L2 error, i.e. of the mean over all (class, bin) cells weighted by (bin size / N) / K of the squared gap;
    ``max``: the largest per-class MCE.
    """
    errors = np.atleast_1d(calibration_error(counts, gap_sums, norm))
    if norm == "max":
        return float(errors.max())
    if norm == "l2":
        return float(np.sqrt(np.mean(errors**2)))
    return float(errors.mean())


def _bin_means(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    means = np.full(sums.shape, np.nan)
    np.divide(sums, counts, out=means, where=counts > 0)
    return means


def _checked_inputs(predictions, references):
    probabilities = as_array(predictions, "predictions", ndim=2)
    labels = as_class_ids(references, "references", n_classes=probabilities.shape[1])
    check_same_length(probabilities, labels, "predictions", "references")
    return probabilities, labels


def check_inputs(predictions, references):
    """Validate ``predictions`` (N x K probabilities) and ``references`` (gold ids) as :func:`ece` and :func:`brier` do.

    Raises the same one-line ValueError as the metrics; used by their evaluate modules before evaluate casts the
    inputs to its Arrow features (which would truncate a label of 1.5 to 1).
    """
    probabilities, labels = _checked_inputs(predictions, references)
    for start, stop in row_blocks(*probabilities.shape):
        check_probabilities(np.asarray(probabilities[start:stop], dtype=np.float64), "predictions", start)


def _top_label_blocks(predictions, references):
    """Validated ``(start, stop, confidences, hits)`` of the top-label prediction, one row block at a time."""
    probabilities, labels = _checked_inputs(predictions, references)
    for start, stop in row_blocks(*probabilities.shape):
        block = np.asarray(probabilities[start:stop], dtype=np.float64)
        check_probabilities(block, "predictions", start)
        predicted = block.argmax(axis=1)
        yield start, stop, block[np.arange(stop - start), predicted], predicted == labels[start:stop]


def top_label_confidences(predictions, references):
    """Validated ``(confidences, hits)`` of the top-label prediction of every row (float64, bool)."""
    parts = list(_top_label_blocks(predictions, references))
    return np.concatenate([part[2] for part in parts]), np.concatenate([part[3] for part in parts])


def top_label_stats(predictions, references, n_bins: int = 15) -> dict:
    """Per-instance statistics of the top-label calibration metrics (the ``_update`` of :func:`ece`,
    :func:`~dialshift.metrics.smooth_calibration.smooth_ece` and
    :func:`~dialshift.metrics.smooth_calibration.debiased_l2`): ``confidence`` (float64), ``correct`` (bool) and
    ``bin``, the equal-width right-closed bin of the confidence (int64, so any number of bins fits)."""
    confidence, correct = top_label_confidences(predictions, references)  # validates
    return {"confidence": confidence, "correct": correct,
            "bin": bin_index(confidence, bin_edges(None, check_n_bins(n_bins)), equal_width=True)}


def top_label_state(stats: dict, n_bins: int, weights=None) -> dict:
    """:func:`binned_state` of :func:`top_label_stats`, each instance counted ``weights[i]`` times."""
    return binned_state(stats["bin"], stats["confidence"], stats["correct"], n_bins, weights)


def ece_compute(stats: dict, n_bins: int = 15, weights=None, norm: str = "l1"):
    """Top-label equal-width ECE of :func:`top_label_stats` with each instance counted ``weights[i]`` times (the
    ``_compute`` of :func:`ece`): a float, or an array of ``R`` for ``R x N`` weights."""
    bins = np.asarray(stats["bin"])
    if np.ndim(weights) == 2 and np.all(bins[1:] >= bins[:-1]):
        # a block of replicates over instances in bin order (the scoring's bootstrap sorts them by confidence): each
        # bin is a run of consecutive instances, its count and gap sum differences of running sums at fixed ends,
        # shared with the debiased L2 error of the block
        sums = running_sums(as_weights(weights, len(bins)), stats["confidence"], stats["correct"])
        at_ends = np.diff(sums.at_fixed(np.searchsorted(bins, np.arange(n_bins + 1))), axis=1)
        return calibration_error(at_ends[..., 0], at_ends[..., 1], norm)
    confidence = np.asarray(stats["confidence"], dtype=np.float64)
    gaps = confidence - np.asarray(stats["correct"], dtype=np.float64)
    if np.ndim(weights) == 2:  # a block of replicates: counts and gap sums from one product
        sums = weighted_sums([stats["bin"], np.asarray(stats["bin"]) + n_bins], [None, gaps], 2 * n_bins, weights)
        return calibration_error(sums[:, :n_bins], sums[:, n_bins:], norm)
    return calibration_error(weighted_bincount(stats["bin"], None, n_bins, weights),
                             weighted_bincount(stats["bin"], gaps, n_bins, weights), norm)


def reliability_bins(state: dict, n_bins: int) -> dict:
    """Reliability-diagram bins of an equal-width :func:`binned_state`: ``bin_edges``, ``bin_counts`` and the
    per-bin mean ``bin_confidence``/``bin_accuracy`` (NaN for an empty bin), as lists."""
    return {
        "bin_edges": bin_edges(None, n_bins).tolist(),
        "bin_counts": state["count"].astype(np.int64).tolist(),
        "bin_confidence": _bin_means(state["confidence"], state["count"]).tolist(),
        "bin_accuracy": _bin_means(state["hit"], state["count"]).tolist(),
    }


def classwise_binned_sums(probabilities, labels, n_bins: int):
    """Per (class, equal-width bin): forecast counts, forecast sums and hit sums, as ``K x n_bins`` arrays.

    Validates ``probabilities`` block by block on the way. Shared by the classwise ECE and the Brier decomposition.
    """
    n, n_classes = probabilities.shape
    edges = bin_edges(None, n_bins)
    offsets = np.arange(n_classes) * n_bins
    size = n_classes * n_bins
    counts, forecast_sums, hit_sums = np.zeros(size), np.zeros(size), np.zeros(size)
    for start, stop in row_blocks(n, n_classes):
        block = np.asarray(probabilities[start:stop], dtype=np.float64)
        check_probabilities(block, "predictions", start)
        rows = np.arange(stop - start)
        index = bin_index(block, edges, equal_width=True)
        index += offsets
        counts += np.bincount(index.ravel(), minlength=size)
        forecast_sums += np.bincount(index.ravel(), weights=block.ravel(), minlength=size)
        hit_sums += np.bincount(index[rows, labels[start:stop]], minlength=size)
    shape = (n_classes, n_bins)
    return counts.reshape(shape), forecast_sums.reshape(shape), hit_sums.reshape(shape)


def ece(predictions, references, n_bins=15, binning="equal_width", norm="l1", mode="top_label",
        calibration_test=False, test_replicates=1000, test_seed=0):
    """Expected calibration error (Naeini et al., 2015; Guo et al., 2017) with its reliability-diagram bins.

    Args:
        predictions: ``N x K`` class probabilities (list of rows, numpy array or CPU tensor).
        references: ``N`` gold class ids in ``[0, K)``.
        n_bins: number of confidence bins.
        binning: ``"equal_width"`` or ``"equal_mass"`` (quantile edges).
        norm: ``"l1"`` (ECE), ``"l2"`` (RMS calibration error) or ``"max"`` (maximum calibration error).
        mode: ``"top_label"`` (the confidence of the predicted class) or ``"classwise"`` (every class binned on
            its own, errors combined over classes as the module docstring says under Norms).
        calibration_test: also return ``calibration_p_value``, the p-value of "the model is calibrated" by
            consistency resampling of the top-label ECE over ``n_bins`` equal-width bins
            (:mod:`dialshift.metrics.calibration_test`, ``test_replicates`` null replicates, seed ``test_seed``).

    Returns:
        ``{"ece": float, "bin_counts", "bin_confidence", "bin_accuracy", "bin_edges"}``: per-bin sample counts,
        mean confidences and accuracies (NaN for empty bins) and the bin edges, as lists; in classwise mode each
        per-bin entry is a list of ``K`` rows, one per class.

    Raises:
        ValueError: NaN/inf, values outside [0, 1], rows not summing to 1, class ids out of range, length or shape
            mismatch, empty input, or a bad option; the message names the argument and the first offending row.

    Example:
        >>> result = ece([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], [0, 1, 1], n_bins=5)
        >>> round(result["ece"], 4)
        0.3
        >>> result["bin_counts"]
        [0, 0, 1, 1, 1]
    """
    n_bins = check_n_bins(n_bins)
    check_choice(binning, "binning", BINNINGS)
    check_choice(norm, "norm", NORMS)
    check_choice(mode, "mode", MODES)
    if mode == "top_label" and binning == "equal_width":
        # the state of each row block (binned while it is in cache) is added up: no N-sized intermediate arrays
        state = None
        for _, _, confidences, hits in _top_label_blocks(predictions, references):
            stats = {"confidence": confidences, "correct": hits,
                     "bin": bin_index(confidences, bin_edges(None, n_bins), equal_width=True)}
            part = top_label_state(stats, n_bins)
            state = part if state is None else {key: state[key] + part[key] for key in state}
        edges = bin_edges(None, n_bins)
        value = calibration_error(state["count"], state["gap"], norm)
    elif mode == "top_label":
        confidences, hits = top_label_confidences(predictions, references)
        edges = bin_edges(confidences, n_bins, binning)
        state = binned_state(bin_index(confidences, edges), confidences, hits, n_bins)
        value = calibration_error(state["count"], state["gap"], norm)
    else:
        probabilities, labels = _checked_inputs(predictions, references)
        n_classes = probabilities.shape[1]
        if binning == "equal_width":
            counts, confidence_sums, hit_sums = classwise_binned_sums(probabilities, labels, n_bins)
            edges = np.tile(bin_edges(None, n_bins), (n_classes, 1))
        else:  # quantile edges per class: one column at a time
            check_inputs(probabilities, labels)
            per_class = []
            for k in range(n_classes):
                column = np.asarray(probabilities[:, k], dtype=np.float64)
                class_edges = bin_edges(column, n_bins, binning)
                per_class.append((class_edges, *binned_sums(column, labels == k, class_edges)))
            edges, counts, confidence_sums, hit_sums = (np.stack(parts) for parts in zip(*per_class, strict=True))
        state = {"count": counts, "confidence": confidence_sums, "hit": hit_sums}
        value = classwise_error(counts, confidence_sums - hit_sums, norm)
    result = {
        "ece": value,
        "bin_counts": state["count"].astype(np.int64).tolist(),
        "bin_confidence": _bin_means(state["confidence"], state["count"]).tolist(),
        "bin_accuracy": _bin_means(state["hit"], state["count"]).tolist(),
        "bin_edges": edges.tolist(),
    }
    if calibration_test:
        result["calibration_p_value"] = _calibration_test(predictions, references, n_bins, test_replicates,
                                                          test_seed)["p_value"]
    return result


def brier_stats(predictions, references) -> np.ndarray:
    """Per-instance Brier score ``sum_k (p_k - onehot_k)^2`` (the ``_update`` of :func:`brier`; validates)."""
    probabilities, labels = _checked_inputs(predictions, references)
    parts = []
    for start, stop in row_blocks(*probabilities.shape):
        block = np.asarray(probabilities[start:stop], dtype=np.float64)
        check_probabilities(block, "predictions", start)
        gold = block[np.arange(stop - start), labels[start:stop]]
        parts.append(np.einsum("ij,ij->i", block, block) - 2.0 * gold + 1.0)
    return np.concatenate(parts)


def brier_compute(stats: np.ndarray, weights=None):
    """Brier score of :func:`brier_stats` with each instance counted ``weights[i]`` times (``R x N``: an array)."""
    return weighted_mean(stats, weights)


def brier(predictions, references, n_bins=15):
    """Multiclass Brier score (Brier, 1950) and its Murphy (1973) decomposition.

    ``brier`` is the mean over samples of the sum over classes of ``(p_k - onehot_k)^2`` (range [0, 2]; the
    convention of Lee et al. 2022 and of ``sklearn.metrics.brier_score_loss`` for more than two classes).

    The decomposition is computed per class and summed over classes. The forecasts ``p_k`` of each class are put in
    ``n_bins`` equal-width right-closed bins over [0, 1] (as :func:`ece`); with ``n_kb`` forecasts in bin ``b``,
    mean forecast ``f_kb``, observed frequency ``o_kb`` and base rate ``o_k``:
    ``reliability = sum n_kb (f_kb - o_kb)^2 / N``, ``resolution = sum n_kb (o_kb - o_k)^2 / N`` and
    ``uncertainty = sum_k o_k (1 - o_k)``. ``brier = reliability - resolution + uncertainty`` holds exactly when
    the forecasts inside each bin are equal; otherwise it is off by the within-bin variance terms of Stephenson et
    al. (2008).

    Example:
        >>> result = brier([[1.0, 0.0], [0.5, 0.5]], [0, 1])
        >>> result["brier"]
        0.25
        >>> round(result["reliability"] - result["resolution"] + result["uncertainty"], 12)
        0.25
    """
    n_bins = check_n_bins(n_bins)
    probabilities, labels = _checked_inputs(predictions, references)
    n = len(probabilities)
    value = brier_compute(brier_stats(probabilities, labels))
    counts, forecast_sums, hit_sums = classwise_binned_sums(probabilities, labels, n_bins)
    base_rate = hit_sums.sum(axis=1) / n
    filled = counts > 0
    mean_forecast = forecast_sums[filled] / counts[filled]
    frequency = hit_sums[filled] / counts[filled]
    base = np.broadcast_to(base_rate[:, None], counts.shape)[filled]
    return {
        "brier": value,
        "reliability": float(np.sum(counts[filled] * (mean_forecast - frequency) ** 2) / n),
        "resolution": float(np.sum(counts[filled] * (frequency - base) ** 2) / n),
        "uncertainty": float(np.sum(base_rate * (1.0 - base_rate))),
    }


def calibration_test(predictions, references, n_bins=15, replicates=1000, seed=0) -> dict:
    """p-value of "the model is calibrated" (top label) by consistency resampling of the binned ECE over
    ``n_bins`` equal-width bins (:mod:`dialshift.metrics.calibration_test`); the dict of its ``consistency_test``.

    Example:
        >>> result = calibration_test([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]], [0, 1, 1, 1], n_bins=5)
        >>> 0 < result["p_value"] <= 1, result["replicates"]
        (True, 1000)
    """
    from dialshift.metrics.calibration_test import consistency_test

    n_bins = check_n_bins(n_bins)
    return consistency_test(top_label_stats(predictions, references, n_bins), n_bins, replicates, seed)


_calibration_test = calibration_test  # ece() has an argument of that name
