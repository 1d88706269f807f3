"""dialshift.metrics core: hand-computed values, conventions, bad and hostile input, invariants (hypothesis)."""

import math
import subprocess
import sys
import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dialshift.metrics import (
    attention_scores_dynamic,
    attention_scores_non_hierarchical,
    attention_scores_static,
    brier,
    das_ratio,
    ece,
    ood_detection,
    open_world_f1,
    recall_at_k,
)
from dialshift.metrics._checks import MAX_BINS, UndefinedMetricWarning
from dialshift.metrics.attention import das_stats
from dialshift.metrics.calibration import NORMS, bin_edges, bin_index


def softmax(logits):
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def sampled_labels(probabilities, rng):
    """Labels drawn from the predicted distributions: perfectly calibrated data."""
    cumulative = probabilities.cumsum(axis=1)
    draws = rng.random((len(probabilities), 1)) * cumulative[:, -1:]
    return (draws > cumulative).sum(axis=1)


# ---------------------------------------------------------------- ECE


def test_ece_hand_computed():
    # confidences 0.9 (hit), 0.8 (hit), 0.6 (miss), 0.3 (hit) in 5 equal-width bins
    predictions = [[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.6, 0.4, 0.0], [0.3, 0.3, 0.4]]
    result = ece(predictions, [0, 1, 1, 2], n_bins=5)
    assert result["bin_counts"] == [0, 1, 1, 1, 1]
    assert result["bin_accuracy"][1:] == [1.0, 0.0, 1.0, 1.0]
    assert np.isnan(result["bin_accuracy"][0]) and np.isnan(result["bin_confidence"][0])
    assert result["bin_confidence"][1:] == pytest.approx([0.4, 0.6, 0.8, 0.9])
    assert result["ece"] == pytest.approx((0.6 + 0.6 + 0.2 + 0.1) / 4)
    assert ece(predictions, [0, 1, 1, 2], n_bins=5, norm="max")["ece"] == pytest.approx(0.6)
    l2 = np.sqrt((0.36 + 0.36 + 0.04 + 0.01) / 4)
    assert ece(predictions, [0, 1, 1, 2], n_bins=5, norm="l2")["ece"] == pytest.approx(l2)
    assert result["bin_edges"] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_ece_bin_edges_are_right_closed_with_zero_and_one_inside():
    edges = bin_edges(None, 10)
    values = np.array([0.0, 1e-12, 0.1, np.nextafter(0.1, 1), 0.5, 0.9, 1.0])
    assert bin_index(values, edges, equal_width=True).tolist() == [0, 0, 0, 1, 4, 8, 9]
    # a confidence of exactly 1.0 sits in the last bin, never in a phantom 16th bin
    result = ece([[1.0, 0.0], [0.5, 0.5]], [0, 1])
    assert len(result["bin_counts"]) == 15
    assert result["bin_counts"][-1] == 1 and result["bin_counts"][7] == 1
    # argmax ties go to the first column: [0.5, 0.5] predicts class 0, so gold 1 is a miss
    assert result["ece"] == pytest.approx((0.0 + 0.5) / 2)


def exact_bin(value: float, n_bins: int) -> int:
    """The right-closed equal-width bin of ``value`` by exact rational arithmetic (slow reference).

    On the real line the bin of c is ceil(c * n) - 1 (0 for c = 0); a float equal to the float nearest an edge i / n
    lies on that edge even when it is just above the fraction, so it goes to the bin below.
    """
    index = max(0, math.ceil(Fraction(value) * n_bins) - 1)
    if index > 0 and value == float(Fraction(index, n_bins)):
        index -= 1
    return min(index, n_bins - 1)


def edge_values(n_bins: int) -> np.ndarray:
    """Every edge i / n as the nearest float and as other float computations of it, and their neighbours."""
    i = np.arange(n_bins + 1)
    repeated_sums = [sum([1 / n_bins] * k) for k in range(n_bins + 1)]  # 0.1 + 0.1 + 0.1 style
    computed = np.concatenate([i / n_bins, i * (1 / n_bins), np.linspace(0, 1, n_bins + 1), repeated_sums])
    values = np.concatenate([computed, np.nextafter(computed, 2), np.nextafter(computed, -1), [0.1 + 0.2, 0.3]])
    return np.clip(values, 0.0, 1.0)


@pytest.mark.parametrize("n_bins", range(1, 21))
def test_equal_width_bins_are_exact_on_every_edge(n_bins):
    edges = bin_edges(None, n_bins)
    assert edges.tolist() == [i / n_bins for i in range(n_bins + 1)]  # the floats nearest i / n, not linspace's
    values = np.concatenate([edge_values(n_bins), np.random.default_rng(n_bins).random(2000)])
    expected = [exact_bin(float(value), n_bins) for value in values]
    assert bin_index(values, edges, equal_width=True).tolist() == expected
    assert bin_index(values, edges).tolist() == expected  # the searchsorted path (equal-mass edges) agrees
    # classwise mode bins a 2-D block at once
    assert bin_index(values.reshape(-1, 1), edges, equal_width=True).ravel().tolist() == expected


def test_float_sum_on_an_edge_lands_where_the_exact_rule_puts_it():
    # 0.1 + 0.2 = 0.30000000000000004 is one ulp above the float 0.3 (itself just below 3/10): bins (0.3, 0.4] and
    # (0.2, 0.3]; numpy.linspace(0, 1, 11)[3] is 0.1 + 0.2, so linspace edges put both in (0.2, 0.3]
    edges = bin_edges(None, 10)
    assert bin_index(np.array([0.1 + 0.2, 0.3, 0.7, 0.1 * 7, 0.6, 0.1 * 6]), edges, equal_width=True).tolist() == [
        3, 2, 6, 7, 5, 6,
    ]
    rows = [[0.1 + 0.2, 0.25, 0.25, 0.2], [0.3, 0.25, 0.25, 0.2]]
    assert ece(rows, [0, 0], n_bins=10)["bin_counts"] == [0, 0, 1, 1, 0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 15, 20, 100])
def test_arithmetic_binning_matches_searchsorted(n_bins):
    rng = np.random.default_rng(n_bins)
    edges = bin_edges(None, n_bins)
    values = np.concatenate([rng.random(20000), edges, np.nextafter(edges, 2), np.nextafter(edges, -1)])
    values = np.clip(values, 0, 1)
    assert np.array_equal(bin_index(values, edges, equal_width=True), bin_index(values, edges))


def test_ece_equal_mass_bins_hold_equal_counts_and_keep_ties_together():
    rng = np.random.default_rng(0)
    probabilities = rng.dirichlet(np.ones(4), size=1500)
    labels = rng.integers(0, 4, 1500)
    counts = ece(probabilities, labels, n_bins=10, binning="equal_mass")["bin_counts"]
    assert sum(counts) == 1500 and max(counts) - min(counts) <= 1
    tied = np.array([[0.7, 0.3]] * 6 + [[0.6, 0.4]] * 4)
    result = ece(tied, [0] * 10, n_bins=4, binning="equal_mass")
    assert sorted(c for c in result["bin_counts"] if c) == [4, 6]


def test_ece_classwise_hand_computed():
    predictions = [[0.8, 0.2], [0.3, 0.7]]
    result = ece(predictions, [0, 0], n_bins=2, mode="classwise")
    # class 0: 0.8 (hit) in bin 1, 0.3 (hit) in bin 0 -> (0.2 + 0.7) / 2; class 1: 0.2, 0.7 never hit -> 0.45
    assert result["ece"] == pytest.approx(((0.2 + 0.7) / 2 + (0.2 + 0.7) / 2) / 2)
    assert np.array(result["bin_counts"]).shape == (2, 2)
    assert np.array(result["bin_edges"]).shape == (2, 3)


def test_ece_classwise_norms_combine_classes_as_kumar_marginal():
    # 2 equal-width bins (0, 0.5], (0.5, 1]; per class, (bin weight, |accuracy - mean forecast|):
    # class 0: 0.6 hit -> (1/2, 0.4), 0.2 miss -> (1/2, 0.2)      squared L2 0.1,  L1 0.3, max 0.4
    # class 1: 0.3 and 0.5 miss, both in (0, 0.5] -> (1, 0.4)      squared L2 0.16, L1 0.4, max 0.4
    # class 2: 0.1 miss, 0.3 hit, both in (0, 0.5] -> (1, 0.3)     squared L2 0.09, L1 0.3, max 0.3
    predictions = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]]
    result = {norm: ece(predictions, [0, 2], n_bins=2, mode="classwise", norm=norm)["ece"] for norm in NORMS}
    assert result["l1"] == pytest.approx((0.3 + 0.4 + 0.3) / 3)
    # the root of the (cell-weighted) mean of squared gaps, not the mean of the per-class roots (0.3387)
    assert result["l2"] == pytest.approx(math.sqrt((0.1 + 0.16 + 0.09) / 3))
    assert result["l2"] != pytest.approx((math.sqrt(0.1) + 0.4 + 0.3) / 3, abs=1e-3)
    assert result["max"] == pytest.approx(0.4)


def test_ece_accepts_float32_and_matches_float64():
    rng = np.random.default_rng(3)
    probabilities = softmax(rng.normal(size=(3000, 6))).astype(np.float32)
    labels = rng.integers(0, 6, 3000)
    assert ece(probabilities, labels)["ece"] == pytest.approx(ece(probabilities.astype(np.float64), labels)["ece"])


def test_ece_blocks_give_the_same_result_as_one_pass(monkeypatch):
    import dialshift.metrics._checks as checks

    rng = np.random.default_rng(4)
    probabilities = softmax(rng.normal(size=(1000, 5)) * 2)
    labels = rng.integers(0, 5, 1000)
    whole_ece, whole_brier = ece(probabilities, labels), brier(probabilities, labels)
    monkeypatch.setattr(checks, "BLOCK_VALUES", 35)  # 7 rows of 5
    blocked_ece = ece(probabilities, labels)
    for key, value in whole_ece.items():  # per-block partial sums: equal up to rounding
        np.testing.assert_allclose(blocked_ece[key], value, rtol=1e-12)
    assert brier(probabilities, labels) == pytest.approx(whole_brier, abs=1e-14)


# ---------------------------------------------------------------- Brier


def test_brier_hand_computed():
    result = brier([[1.0, 0.0], [0.5, 0.5], [0.2, 0.8]], [0, 1, 0])
    # (0) + (0.25 + 0.25) + (0.64 + 0.64) over 3 samples
    assert result["brier"] == pytest.approx((0.5 + 1.28) / 3)
    assert brier([[0.0, 1.0]], [0])["brier"] == 2.0


def test_brier_decomposition_is_exact_when_forecasts_take_bin_values():
    rng = np.random.default_rng(5)
    # three-class forecasts that are multiples of 0.1 in bins of width 0.05: each bin holds at most one value
    first = rng.integers(0, 11, 5000)
    second = (rng.random(5000) * (11 - first)).astype(int)
    probabilities = np.stack([first, second, 10 - first - second], axis=1) / 10
    labels = sampled_labels(probabilities, rng)
    result = brier(probabilities, labels, n_bins=20)
    assert result["reliability"] - result["resolution"] + result["uncertainty"] == pytest.approx(
        result["brier"], abs=1e-12
    )
    assert result["uncertainty"] == pytest.approx(sum(p * (1 - p) for p in np.bincount(labels, minlength=3) / 5000))


# ---------------------------------------------------------------- recall@k


def test_recall_at_k_hand_computed_and_ties():
    scores = [[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.4, 0.4, 0.2], [0.3, 0.3, 0.3]]
    gold = [1, 1, 0, 2]
    assert recall_at_k(scores, gold, k=[1, 2]) == pytest.approx({"recall@1": 0.25, "recall@2": 0.75, "mrr": 7 / 12})
    optimistic = recall_at_k(scores, gold, k=[1, 2], ties="optimistic")
    assert optimistic == pytest.approx({"recall@1": 0.75, "recall@2": 1.0, "mrr": (1 + 0.5 + 1 + 1) / 4})
    expected = recall_at_k(scores, gold, k=[1, 2], ties="expected")
    mrr = (1 + 0.5 + (1 + 0.5) / 2 + (1 + 1 / 2 + 1 / 3) / 3) / 4
    assert expected == pytest.approx(
        {"recall@1": (1 + 0 + 0.5 + 1 / 3) / 4, "recall@2": (1 + 1 + 1 + 2 / 3) / 4, "mrr": mrr}
    )
    assert recall_at_k(scores, gold, k=3)["recall@3"] == 1.0  # k == C is allowed
    assert list(recall_at_k(np.eye(6), range(6))) == ["recall@1", "recall@2", "recall@5", "mrr"]


@pytest.mark.parametrize("k", [4, [1, 2, 5], 10**30])
def test_recall_k_above_the_candidate_count_is_refused(k):
    with pytest.raises(ValueError, match=r"^k = \d+ is larger than the 3 candidates per example .*at most 3"):
        recall_at_k([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]], [1, 1], k=k)


def test_recall_constant_scores_get_no_credit_by_default():
    scores = np.zeros((50, 10))
    assert recall_at_k(scores, np.arange(50) % 10, k=[1, 9])["recall@9"] == 0.0


# ---------------------------------------------------------------- open-world F1 and OOD detection


def test_open_world_f1_hand_computed():
    result = open_world_f1([0, 1, 2, 2, 1], [0, 1, 1, 2, 2], oos_label=2)
    assert result == pytest.approx({"f1_all": 2 / 3, "f1_in": 0.75, "f1_out": 0.5, "accuracy": 0.6})
    # an explicit known class that never occurs has F1 0 and lowers the macro means
    wider = open_world_f1([0, 1, 2, 2, 1], [0, 1, 1, 2, 2], oos_label=2, labels=[0, 1, 5])
    assert wider["f1_in"] == pytest.approx(0.5) and wider["f1_all"] == pytest.approx(0.5)


def test_open_world_f1_without_out_of_scope_gold_warns_and_scores_f1_out_zero():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    gold, predicted = [0, 1, 1, 0, 1], [0, 1, 0, 0, 2]  # one in-scope example wrongly rejected as out-of-scope
    with pytest.warns(UndefinedMetricWarning, match=r"references contain no out-of-scope example \(oos_label=2\)"):
        result = open_world_f1(predicted, gold, oos_label=2)
    f1 = sklearn_metrics.f1_score(gold, predicted, labels=[0, 1, 2], average=None, zero_division=0)
    assert result == pytest.approx({"f1_all": f1.mean(), "f1_in": f1[:2].mean(), "f1_out": 0.0, "accuracy": 0.6})
    # nothing out-of-scope anywhere: F1_out undefined, reported as 0 (sklearn zero_division=0, TEXTOIR)
    with pytest.warns(UndefinedMetricWarning):
        result = open_world_f1([0, 1], [0, 1], oos_label=2)
    assert result == {"f1_all": 2 / 3, "f1_in": 1.0, "f1_out": 0.0, "accuracy": 1.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning when out-of-scope gold exists
        open_world_f1([0, 2], [0, 2], oos_label=2)


def test_ood_detection_hand_computed():
    result = ood_detection([0.9, 0.8, 0.3, 0.6, 0.2], [1, 1, 1, 0, 0])
    assert result["auroc"] == pytest.approx(5 / 6)
    assert result["aupr_in"] == pytest.approx((1 + 1 + 0.75) / 3)
    assert result["aupr_out"] == pytest.approx((1 + 2 / 3) / 2)
    assert result["fpr@95tpr"] == 0.5
    assert ood_detection([0.5, 0.5], [1, 0])["auroc"] == 0.5
    assert "fpr@90tpr" in ood_detection([0.5, 0.4], [1, 0], tpr_level=0.9)


# ---------------------------------------------------------------- attention scores and DAS ratio


def test_attention_scores_eq7():
    weights = [[0.1, 0.1, 0.2, 0.6], [0.2, 0.2, 0.2, 0.4]]
    assert attention_scores_non_hierarchical(weights, [2, 1, 1]) == pytest.approx([0.9, 0.6, 1.5])
    assert attention_scores_non_hierarchical(weights, [2, 1, 1], scale="as_printed") == pytest.approx(
        np.array([0.3, 0.2, 0.5]) * 4 / 3
    )
    assert attention_scores_static([0.25, 0.25, 0.5]) == pytest.approx([0.75, 0.75, 1.5])
    assert attention_scores_dynamic([[0.1, 0.2, 0.7], [0.3, 0.2, 0.5]]) == pytest.approx([0.6, 0.6, 1.8])
    # uniform attention gives every utterance 100%
    assert attention_scores_dynamic(np.full((3, 5), 0.2)) == pytest.approx(np.ones(5))


def test_das_ratio_eq8_is_a_mean_of_per_dialogue_ratios():
    scores = [[0.5, 1.0, 1.5, 9.0], [0.4, 0.8, 3.0]]
    masks = [[1, 0, 0], [0, 1]]
    result = das_ratio(scores, masks, includes_query=True)
    assert result == pytest.approx(
        {"das_ratio": (0.4 + 2.0) / 2, "mean_as_distractor": 0.65, "mean_as_history": 0.825, "n_dialogues": 2,
         "n_history_starved": 0, "history_starved": 0.0}
    )
    skipped = das_ratio([[0.5, 1.0], [0.3, 0.6]], [[1, 0], [0, 0]], skip_undefined=True)
    assert skipped["n_dialogues"] == 1 and skipped["das_ratio"] == 0.5


def test_das_stats_first_and_last_history_skip_the_distractions():
    """Tables 5-6's "1st" / "Last": the AS of the first and last original History utterance, never a distraction's;
    the scoring task averages them over the dialogues of the ratio."""
    from dialshift.scoring.tasks import get_task

    scores, masks = [[0.2, 0.7, 0.5, 0.9, 5.0], [0.6, 0.3, 4.0], [0.1, 0.4, 3.0]], [[1, 0, 0, 1], [0, 0], [1, 1]]
    stats = das_stats(scores, masks, includes_query=True)
    assert stats["first_history"][:2].tolist() == [0.7, 0.6] and stats["last_history"][:2].tolist() == [0.5, 0.3]
    assert np.isnan(stats["first_history"][2]) and np.isnan(stats["last_history"][2])
    result = get_task("attention_distribution").metrics(stats, {"includes_query": True})
    assert result["as_first_history"] == pytest.approx(0.7) and result["as_last_history"] == pytest.approx(0.5)


@pytest.mark.parametrize("history", [0.0, 1e-310])
def test_das_ratio_never_drops_a_history_starved_dialogue(history):
    """Zero History attention (ratio +inf), or so little that the ratio overflows, is the worst case: it is refused
    by default and, with skip_undefined, counted and reported as a share beside the ratio, with no RuntimeWarning."""
    scores, masks = [[0.5, 1.0], [0.9, history]], [[1, 0], [1, 0]]
    with pytest.raises(ValueError, match=r"dialogue 1 gives zero attention to every History utterance"):
        das_ratio(scores, masks)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = das_ratio(scores, masks, skip_undefined=True)
    assert result["n_history_starved"] == 1 and result["history_starved"] == 0.5
    assert result["das_ratio"] == 0.5 and result["n_dialogues"] == 1
    tiny = das_ratio([[0.5, 1.0], [0.9, 1e-12]], masks)  # finite: a rated dialogue, not a starved one
    assert tiny["n_history_starved"] == 0 and tiny["das_ratio"] == pytest.approx((0.5 + 0.9e12) / 2)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "predictions, references, message",
    [
        ([[0.5, 0.5], [np.nan, 1.0]], [0, 1], r"predictions\[1\] contains NaN or inf"),
        ([[0.5, 0.5], [np.inf, 0.0]], [0, 1], r"predictions\[1\] contains NaN or inf"),
        ([[0.5, 0.5], [1.2, -0.2]], [0, 1], r"predictions\[1\] has values outside \[0, 1\]"),
        ([[0.5, 0.5], [0.6, 0.6]], [0, 1], r"predictions\[1\] sums to 1.2"),
        ([[0.5, 0.5], [1.0]], [0, 1], r"predictions\[1\] has 1 values but predictions\[0\] has 2"),
        ([[0.5, 0.5]], [0, 1], r"predictions has 1 rows but references has 2"),
        ([[0.5, 0.5], [0.5, 0.5]], [0, 2], r"references\[1\] = 2 is out of range"),
        ([[0.5, 0.5], [0.5, 0.5]], [0, -1], r"references\[1\] = -1 is out of range"),
        ([[0.5, 0.5], [0.5, 0.5]], [0, 0.5], r"references\[1\] = 0.5 is not an integer"),
        ([], [], r"predictions is empty"),
        ([0.5, 0.5], [0, 1], r"predictions must have one row of values per example"),
    ],
)
@pytest.mark.parametrize("metric", [ece, brier])
def test_calibration_bad_input(metric, predictions, references, message):
    with pytest.raises(ValueError, match=message):
        metric(predictions, references)


def test_bad_options():
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        ece([[1.0, 0.0]], [0], n_bins=0)
    with pytest.raises(ValueError, match="binning must be one of"):
        ece([[1.0, 0.0]], [0], binning="quantile")
    with pytest.raises(ValueError, match="norm must be one of"):
        ece([[1.0, 0.0]], [0], norm="l3")
    with pytest.raises(ValueError, match="mode must be one of"):
        ece([[1.0, 0.0]], [0], mode="marginal")
    with pytest.raises(ValueError, match="k must hold positive integers"):
        recall_at_k([[1.0, 0.0]], [0], k=[0])
    with pytest.raises(ValueError, match="ties must be one of"):
        recall_at_k([[1.0, 0.0]], [0], ties="random")


def test_ranking_and_open_world_bad_input():
    with pytest.raises(ValueError, match=r"predictions\[1\] contains NaN"):
        recall_at_k([[1.0, 0.0], [np.nan, 0.0]], [0, 0])
    with pytest.raises(ValueError, match=r"references\[0\] = 3 is out of range"):
        recall_at_k([[1.0, 0.0, 2.0]], [3])
    with pytest.raises(ValueError, match="oos_label must be the integer id"):
        open_world_f1([0, 1], [0, 1])
    with pytest.raises(ValueError, match=r"predictions\[1\] = 7 is neither in labels"):
        open_world_f1([0, 7], [0, 2], oos_label=2, labels=[0, 1])
    with pytest.raises(ValueError, match=r"predictions has 2 rows but references has 3"):
        open_world_f1([0, 2], [0, 2, 1], oos_label=2)
    with pytest.raises(ValueError, match="no out-of-scope \\(0\\) example"):
        ood_detection([0.1, 0.2], [1, 1])
    with pytest.raises(ValueError, match=r"references\[1\] = 2 is out of range"):
        ood_detection([0.1, 0.2], [1, 2])
    with pytest.raises(ValueError, match=r"predictions\[0\] contains NaN"):
        ood_detection([np.nan, 0.2], [1, 0])


def test_das_ratio_bad_input():
    with pytest.raises(ValueError, match=r"dialogue 1 has no distracting utterance"):
        das_ratio([[0.5, 1.0], [0.3, 0.6]], [[1, 0], [0, 0]])
    with pytest.raises(ValueError, match=r"dialogue 0 has no History utterance"):
        das_ratio([[0.5, 1.0]], [[1, 1]])
    with pytest.raises(ValueError, match=r"attention_scores\[0\] has 2 History scores but distractor_mask\[0\] has 3"):
        das_ratio([[0.5, 1.0]], [[1, 0, 0]])
    with pytest.raises(ValueError, match=r"attention_scores\[1\] contains NaN"):
        das_ratio([[0.5, 1.0], [np.nan, 1.0]], [[1, 0], [1, 0]])
    with pytest.raises(ValueError, match=r"distractor_mask\[0\] must hold 0 .* or 1"):
        das_ratio([[0.5, 1.0]], [[2, 0]])
    with pytest.raises(ValueError, match="attention_scores has 2 dialogues but distractor_mask has 1"):
        das_ratio([[0.5, 1.0], [0.5, 1.0]], [[1, 0]])
    with pytest.raises(ValueError, match="attention_scores is empty"):
        das_ratio([], [])
    with pytest.raises(ValueError, match=r"utterance_lengths sum to 3 tokens but weights has 4 columns"):
        attention_scores_non_hierarchical([[0.25] * 4], [2, 1])
    with pytest.raises(ValueError, match=r"weights\[1\] sums to"):
        attention_scores_dynamic([[0.5, 0.5], [0.5, 0.6]])


# ---------------------------------------------------------------- hostile input: one clear ValueError line

PROBABILITIES = [[0.5, 0.5], [0.25, 0.75]]
IDS = [0, 1]
LONG = "x" * 1_000_000


class Opaque:
    """An object numpy cannot read as a number."""


# values that are bad for any numeric N x K argument (probabilities or ranking scores)
BAD_MATRICES = {
    "empty": [],
    "empty rows": [[], []],
    "scalar": 0.5,
    "3-D": [[[0.5, 0.5]], [[0.5, 0.5]]],
    "string": "0.5, 0.5",
    "dict": {"a": 1},
    "object": Opaque(),
    "generator": (row for row in PROBABILITIES),
    "string cell": [[0.5, "a"], [0.5, 0.5]],
    "numeric strings": [["0.5", "0.5"], ["0.5", "0.5"]],
    "None cell": [[0.5, None], [0.5, 0.5]],
    "NaN": [[0.5, 0.5], [np.nan, 1.0]],
    "inf": [[0.5, 0.5], [np.inf, 0.0]],
    "-inf": [[0.5, 0.5], [-np.inf, 1.0]],
    "complex": [[0.5 + 1j, 0.5], [0.5, 0.5]],
    "complex array": np.full((2, 2), 0.5, dtype=complex),
    "timedelta array": np.ones((2, 2), dtype="m8[s]"),
    "ragged": [[0.5, 0.5], [1.0]],
    "scalar row": [[0.5, 0.5], 3],
    "nested cell": [[0.5, [0.5]], [0.5, 0.5]],
    "int beyond 64 bits": [[10**30, 0], [0.5, 0.5]],
    "int beyond str limit": [[10**5000, 0], [0.5, 0.5]],
    "very long string": [[LONG, 0.5], [0.5, 0.5]],
    "too many rows": [[0.5, 0.5]] * 3,
}
# probabilities only: valid ranking scores
BAD_PROBABILITIES = {"outside [0, 1]": [[1e308, -1e308], [0.5, 0.5]], "sum not 1": [[0.6, 0.6], [0.5, 0.5]]}
# values that are bad for a list of class ids (two rows, two classes)
BAD_IDS = {
    "empty": [],
    "scalar": 0,
    "too few": [0],
    "2-D": [[0], [1]],
    "string": "01",
    "fraction": [0, 1.5],
    "NaN": [0, np.nan],
    "inf": [0, np.inf],
    "numeric string": [0, "1"],
    "None": [0, None],
    "out of range": [0, 2],
    "negative": [0, -1],
    "2**63": [0, 2**63],
    "1e300": [0, 1e300],
    "uint64 max": np.array([0, 2**64 - 1], dtype=np.uint64),
    "int beyond str limit": [0, 10**5000],
    "very long string": [LONG, 0],
    "complex": [0, 1j],
}
BAD_OPTIONS = [
    *[(ece, {"n_bins": value}, "n_bins") for value in (0, -1, 1.5, "10", True, None, np.inf, 10**12, MAX_BINS + 1)],
    *[(ece, {option: value}, option) for option in ("binning", "norm", "mode") for value in (None, 5, ["l1"], "L1")],
    *[(brier, {"n_bins": value}, "n_bins") for value in (0, 10**30)],
    *[(recall_at_k, {"k": value}, "k") for value in (0, -1, 3, 10**30, "5", 2.0, [], None, [1, None], {1: 2})],
    *[(recall_at_k, {"ties": value}, "ties") for value in (None, ["expected"], "random")],
]


def assert_one_clear_line(function, *args, name: str, **kwargs) -> str:
    """``function(*args, **kwargs)`` raises a ValueError of one short line that names ``name``, with no warning."""
    with pytest.raises(ValueError) as raised, warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning on the way is a defect too
        function(*args, **kwargs)
    message = str(raised.value)
    assert "\n" not in message and len(message) <= 300, message
    assert name in message, message
    return message


def hostile_cases():
    for metric in (ece, brier, recall_at_k):
        bad_matrices = BAD_MATRICES if metric is recall_at_k else {**BAD_MATRICES, **BAD_PROBABILITIES}
        for label, value in bad_matrices.items():
            yield pytest.param(metric, (value, IDS), {}, "predictions", id=f"{metric.__name__}-predictions-{label}")
        for label, value in BAD_IDS.items():
            yield pytest.param(
                metric, (PROBABILITIES, value), {}, "references", id=f"{metric.__name__}-references-{label}"
            )
    for function, kwargs, name in BAD_OPTIONS:
        yield pytest.param(function, (PROBABILITIES, IDS), kwargs, name, id=f"{function.__name__}-{kwargs!r:.40}")
    for label, value in BAD_IDS.items():
        if label in ("out of range", "negative"):  # any integer is a valid intent id
            continue
        yield pytest.param(open_world_f1, (value, [0, 2]), {"oos_label": 2}, "predictions", id=f"f1-pred-{label}")
        yield pytest.param(open_world_f1, ([0, 2], value), {"oos_label": 2}, "references", id=f"f1-ref-{label}")
    for value in (None, "2", 2.0, True, 10**30, [2], np.nan):
        yield pytest.param(open_world_f1, ([0, 2], [0, 2]), {"oos_label": value}, "oos_label", id=f"oos_label-{value}")
    for value in (["a"], [2], [0, 0], [[0]], [0.5]):
        kwargs = {"oos_label": 2, "labels": value}
        yield pytest.param(open_world_f1, ([0, 2], [0, 2]), kwargs, "labels", id=f"labels-{value}")
    bad_scores = {
        key: BAD_MATRICES[key]
        for key in ("empty", "string", "dict", "object", "NaN", "complex", "int beyond str limit", "very long string")
    }
    bad_scores.update({"2-D": [[0.5, 0.5]], "string cell": [0.5, "a"], "None": [0.5, None], "inf": [np.inf, 0.5]})
    bad_scores.update({"ragged": [[0.5], 0.5], "3 rows": [0.5, 0.4, 0.3]})
    for label, value in bad_scores.items():
        yield pytest.param(ood_detection, (value, [1, 0]), {}, "predictions", id=f"ood-predictions-{label}")
    for label, value in {**BAD_IDS, "no out-of-scope": [1, 1], "no in-domain": [0, 0]}.items():
        yield pytest.param(ood_detection, ([0.5, 0.4], value), {}, "references", id=f"ood-references-{label}")
    for value in ("0.9", np.nan, 0, 2, True, None, [0.9]):
        yield pytest.param(ood_detection, ([0.5, 0.4], [1, 0]), {"tpr_level": value}, "tpr_level", id=f"tpr-{value}")
    das_cases = {
        "scores int": (5, [[1, 0]], "attention_scores"),
        "scores string": ("abc", [[1, 0]], "attention_scores"),
        "scores None": (None, [[1, 0]], "attention_scores"),
        "row int": ([5], [[1, 0]], "attention_scores[0]"),
        "row string": (["ab"], [[1, 0]], "attention_scores[0]"),
        "string cell": ([[0.5, "a"]], [[1, 0]], "attention_scores[0]"),
        "numeric string cell": ([[0.5, "1"]], [[1, 0]], "attention_scores[0]"),
        "nested": ([[[0.5], [1.0]]], [[1, 0]], "attention_scores[0]"),
        "NaN": ([[0.5, np.nan]], [[1, 0]], "attention_scores[0]"),
        "negative": ([[-0.5, 1.0]], [[1, 0]], "attention_scores[0]"),
        "huge int": ([[10**400, 1.0]], [[1, 0]], "attention_scores[0]"),
        "mask 0.5": ([[0.5, 1.0]], [[0.5, 1]], "distractor_mask[0]"),
        "mask string": ([[0.5, 1.0]], [["1", 0]], "distractor_mask[0]"),
        "mask None": ([[0.5, 1.0]], [[1, None]], "distractor_mask[0]"),
        "mask dict": ([[0.5, 1.0]], {"a": 1}, "distractor_mask"),
        "length": ([[0.5, 1.0]], [[1, 0, 0]], "distractor_mask[0]"),
        "no History": ([[0.5, 1.0]], [[1, 1]], "dialogue 0"),
        "no distractor": ([[0.5, 1.0]], [[0, 0]], "dialogue 0"),
        "empty": ([], [], "attention_scores"),
        "dialogue count": ([[0.5, 1.0]], [[1, 0], [1, 0]], "attention_scores"),
    }
    for label, (scores, mask, name) in das_cases.items():
        yield pytest.param(das_ratio, (scores, mask), {}, name, id=f"das-{label}")
    for label, (function, args) in {
        "weights string": (attention_scores_static, ("abc",)),
        "weights NaN": (attention_scores_dynamic, ([[np.nan, 1.0]],)),
        "weights 3-D": (attention_scores_dynamic, ([[[1.0]]],)),
        "weights sum": (attention_scores_static, ([0.5, 0.6],)),
        "lengths fraction": (attention_scores_non_hierarchical, ([[0.5, 0.5]], [1.5, 0.5])),
        "lengths zero": (attention_scores_non_hierarchical, ([[0.5, 0.5]], [2, 0])),
        "lengths string": (attention_scores_non_hierarchical, ([[0.5, 0.5]], ["a", "b"])),
        "lengths huge": (attention_scores_non_hierarchical, ([[0.5, 0.5]], [10**30, 1])),
    }.items():
        name = "utterance_lengths" if "lengths" in label else "weights"
        yield pytest.param(function, args, {}, name, id=f"attention-{label}")


@pytest.mark.parametrize("function, args, kwargs, name", list(hostile_cases()))
def test_hostile_input_gives_one_clear_value_error(function, args, kwargs, name):
    message = assert_one_clear_line(function, *args, name=name, **kwargs)
    assert LONG not in message  # a user's value is echoed cut, never whole


def test_messages_name_the_first_bad_row_past_the_first_block(monkeypatch):
    import dialshift.metrics._checks as checks

    monkeypatch.setattr(checks, "BLOCK_VALUES", 8)  # 4 rows of 2 per block
    probabilities = np.full((20, 2), 0.5)
    probabilities[13] = [0.9, 0.9]
    assert_one_clear_line(ece, probabilities, [0] * 20, name="predictions[13] sums to 1.8")
    labels = [0] * 20
    labels[17] = 1.5
    assert_one_clear_line(brier, np.full((20, 2), 0.5), labels, name="references[17] = 1.5 is not an integer")
    assert_one_clear_line(ece, [[0.5, 0.5]] * 5 + [[0.5, None]], [0] * 6, name="predictions[5] holds a NoneType")


def test_wide_inputs_are_scored_in_bounded_memory():
    # 12 rows of 200,000 candidates: blocks adapt to the row width, so memory stays a fraction of the input (the
    # classwise ECE and the Brier decomposition also hold K x n_bins per-class sums, whatever the row count)
    rng = np.random.default_rng(0)
    probabilities = rng.random((12, 200_000))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    labels = rng.integers(0, 200_000, 12)
    for function in (ece, recall_at_k):
        tracemalloc.start()
        try:
            function(probabilities, labels, **({"k": [1, 200_000]} if function is recall_at_k else {}))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 0.5 * probabilities.nbytes, (function.__name__, peak / probabilities.nbytes)


def test_importing_the_core_loads_nothing_heavy():
    code = (
        "import sys, dialshift.metrics; "
        "print(sorted(m for m in ('torch', 'transformers', 'sklearn', 'scipy', 'evaluate', 'datasets', 'pandas') "
        "if m in sys.modules))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


# ---------------------------------------------------------------- invariants (hypothesis)


@st.composite
def probability_problems(draw, max_rows=60, max_classes=6, min_classes=1):
    n = draw(st.integers(1, max_rows))
    k = draw(st.integers(min_classes, max_classes))
    logits = draw(hnp.arrays(np.float64, (n, k), elements=st.floats(-6, 6)))
    probabilities = softmax(logits)
    labels = draw(hnp.arrays(np.int64, n, elements=st.integers(0, k - 1)))
    return probabilities, labels


@settings(max_examples=60, deadline=None)
@given(
    problem=probability_problems(),
    n_bins=st.integers(1, 20),
    binning=st.sampled_from(["equal_width", "equal_mass"]),
    norm=st.sampled_from(["l1", "l2", "max"]),
    mode=st.sampled_from(["top_label", "classwise"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_ece_range_and_order_invariance(problem, n_bins, binning, norm, mode, seed):
    probabilities, labels = problem
    result = ece(probabilities, labels, n_bins=n_bins, binning=binning, norm=norm, mode=mode)
    assert 0.0 <= result["ece"] <= 1.0
    order = np.random.default_rng(seed).permutation(len(labels))
    shuffled = ece(probabilities[order], labels[order], n_bins=n_bins, binning=binning, norm=norm, mode=mode)
    assert shuffled["ece"] == pytest.approx(result["ece"], abs=1e-12)
    assert shuffled["bin_counts"] == result["bin_counts"]


@settings(max_examples=60, deadline=None)
@given(problem=probability_problems(), seed=st.integers(0, 2**32 - 1))
def test_brier_range_and_order_invariance(problem, seed):
    probabilities, labels = problem
    result = brier(probabilities, labels)
    assert 0.0 <= result["brier"] <= 2.0 + 1e-12
    assert result["reliability"] >= 0 and result["resolution"] >= 0 and result["uncertainty"] >= 0
    order = np.random.default_rng(seed).permutation(len(labels))
    assert brier(probabilities[order], labels[order]) == pytest.approx(result, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    problem=probability_problems(max_rows=40, max_classes=8, min_classes=3),
    ties=st.sampled_from(["pessimistic", "optimistic", "expected"]),
)
def test_recall_bounds_and_tie_order(problem, ties):
    scores, gold = problem
    scores = np.round(scores, 1)  # create ties
    result = recall_at_k(scores, gold, k=[1, 2, 3], ties=ties)
    assert 0 <= result["recall@1"] <= result["recall@2"] <= result["recall@3"] <= 1
    assert result["mrr"] >= result["recall@1"] - 1e-12
    pessimistic = recall_at_k(scores, gold, k=[1, 2, 3])
    optimistic = recall_at_k(scores, gold, k=[1, 2, 3], ties="optimistic")
    for key in result:
        assert pessimistic[key] - 1e-12 <= result[key] <= optimistic[key] + 1e-12


@st.composite
def grid_forecasts(draw):
    """Forecasts that are multiples of 1/G (K classes) with gold labels, and G."""
    grid = draw(st.integers(1, 10))
    k = draw(st.integers(2, 4))
    n = draw(st.integers(1, 40))
    rows = []
    for _ in range(n):
        cuts = sorted(draw(st.lists(st.integers(0, grid), min_size=k - 1, max_size=k - 1)))
        rows.append(np.diff([0, *cuts, grid]))
    labels = draw(hnp.arrays(np.int64, n, elements=st.integers(0, k - 1)))
    return np.array(rows) / grid, labels, grid


@settings(max_examples=80, deadline=None)
@given(problem=grid_forecasts())
def test_brier_decomposition_exact_for_forecasts_on_bin_values(problem):
    probabilities, labels, grid = problem
    # bins of width 1 / (2 G): every bin holds at most one of the values j / G
    result = brier(probabilities, labels, n_bins=2 * grid)
    recomposed = result["reliability"] - result["resolution"] + result["uncertainty"]
    assert recomposed == pytest.approx(result["brier"], abs=1e-12)


def test_perfectly_calibrated_data_has_ece_near_zero():
    rng = np.random.default_rng(11)
    probabilities = softmax(rng.normal(size=(200_000, 10)) * 1.5)
    labels = sampled_labels(probabilities, rng)
    assert ece(probabilities, labels)["ece"] < 0.01
    assert ece(probabilities, labels, binning="equal_mass")["ece"] < 0.01
    assert ece(probabilities, labels, mode="classwise")["ece"] < 0.01
    # and a miscalibrated copy (sharpened) is clearly detected
    assert ece(softmax(np.log(probabilities) * 2), labels)["ece"] > 0.05
