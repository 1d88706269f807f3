"""dialshift.metrics core: hand-computed values, conventions, bad input and invariants (hypothesis)."""

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
from dialshift.metrics.calibration import bin_index


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
    assert result["bin_edges"] == pytest.approx(np.linspace(0, 1, 6))


def test_ece_bin_edges_are_right_closed_with_zero_and_one_inside():
    edges = np.linspace(0, 1, 11)
    values = np.array([0.0, 1e-12, 0.1, np.nextafter(0.1, 1), 0.5, 0.9, 1.0])
    assert bin_index(values, edges, equal_width=True).tolist() == [0, 0, 0, 1, 4, 8, 9]
    # a confidence of exactly 1.0 sits in the last bin, never in a phantom 16th bin
    result = ece([[1.0, 0.0], [0.5, 0.5]], [0, 1])
    assert len(result["bin_counts"]) == 15
    assert result["bin_counts"][-1] == 1 and result["bin_counts"][7] == 1
    # argmax ties go to the first column: [0.5, 0.5] predicts class 0, so gold 1 is a miss
    assert result["ece"] == pytest.approx((0.0 + 0.5) / 2)


@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 15, 20, 100])
def test_arithmetic_binning_matches_searchsorted(n_bins):
    rng = np.random.default_rng(n_bins)
    edges = np.linspace(0, 1, n_bins + 1)
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
    monkeypatch.setattr(checks, "BLOCK_ROWS", 7)
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
    assert recall_at_k(scores, gold, k=5)["recall@5"] == 1.0
    assert list(recall_at_k(scores, gold)) == ["recall@1", "recall@2", "recall@5", "mrr"]


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
        {"das_ratio": (0.4 + 2.0) / 2, "mean_as_distractor": 0.65, "mean_as_history": 0.825, "n_dialogues": 2}
    )
    skipped = das_ratio([[0.5, 1.0], [0.3, 0.6]], [[1, 0], [0, 0]], skip_undefined=True)
    assert skipped["n_dialogues"] == 1 and skipped["das_ratio"] == 0.5


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
    with pytest.raises(ValueError, match="no out-of-scope example"):
        open_world_f1([0, 1], [0, 1], oos_label=2)
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


# ---------------------------------------------------------------- invariants (hypothesis)


@st.composite
def probability_problems(draw, max_rows=60, max_classes=6):
    n = draw(st.integers(1, max_rows))
    k = draw(st.integers(1, max_classes))
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
    problem=probability_problems(max_rows=40, max_classes=8),
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
