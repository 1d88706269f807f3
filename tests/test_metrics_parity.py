"""Parity of dialshift.metrics with netcal, torchmetrics and scikit-learn (to 1e-9 where the conventions coincide)."""

import warnings

import numpy as np
import pytest

from dialshift.metrics import brier, ece, ood_detection, open_world_f1, recall_at_k

torch = pytest.importorskip("torch")
netcal_metrics = pytest.importorskip("netcal.metrics")
sklearn_metrics = pytest.importorskip("sklearn.metrics")
torchmetrics_ce = pytest.importorskip("torchmetrics.functional.classification.calibration_error")


def problem(seed, n=2003, k=7, temperature=1.0):
    """Probabilities with mixed over- and under-confidence, labels drawn near the predictions."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * rng.uniform(0.5, 3.0, size=(n, 1))
    probabilities = np.exp(logits / temperature)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    noisy = np.exp(logits * np.where(rng.random((n, 1)) < 0.5, 0.4, 2.5))  # under- and over-confident rows
    noisy /= noisy.sum(axis=1, keepdims=True)
    labels = (rng.random((n, 1)) > noisy.cumsum(axis=1)).sum(axis=1)
    return probabilities, np.minimum(labels, k - 1)


def netcal_measure(metric, probabilities, labels):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(metric.measure(probabilities, labels))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_ece_matches_netcal(seed, n_bins):
    # N - 1 = 2002 = 2 * 7 * 11 * 13 is coprime with every n_bins here, so no quantile edge falls on a sample and
    # netcal's left-closed bins agree with our right-closed ones
    probabilities, labels = problem(seed)
    ours = ece(probabilities, labels, n_bins=n_bins)
    assert ours["ece"] == pytest.approx(
        netcal_measure(netcal_metrics.ECE(bins=n_bins), probabilities, labels), abs=1e-9
    )
    equal_mass = ece(probabilities, labels, n_bins=n_bins, binning="equal_mass")["ece"]
    reference = netcal_measure(netcal_metrics.ECE(bins=n_bins, equal_intervals=False), probabilities, labels)
    assert equal_mass == pytest.approx(reference, abs=1e-9)
    mce = ece(probabilities, labels, n_bins=n_bins, norm="max")["ece"]
    assert mce == pytest.approx(netcal_measure(netcal_metrics.MCE(bins=n_bins), probabilities, labels), abs=1e-9)
    assert ours["ece"] != pytest.approx(equal_mass, abs=1e-6)  # the data does exercise the binning choice


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_ece_matches_torchmetrics(seed, norm):
    probabilities, labels = problem(seed, k=10)
    ours = ece(probabilities, labels, n_bins=15, norm=norm)["ece"]
    # torchmetrics' binning core on float64 confidences: identical to 1e-9
    confidences = probabilities.max(axis=1)
    hits = (probabilities.argmax(axis=1) == labels).astype(np.float64)
    core = torchmetrics_ce._ce_compute(torch.from_numpy(confidences), torch.from_numpy(hits), 15, norm=norm)
    assert ours == pytest.approx(float(core), abs=1e-9)
    # the public function casts confidences to float32, so it agrees to float32 precision only
    public = torchmetrics_ce.multiclass_calibration_error(
        torch.from_numpy(probabilities), torch.from_numpy(labels), num_classes=10, n_bins=15, norm=norm
    )
    assert ours == pytest.approx(float(public), abs=1e-5)


def test_ece_edge_cases_against_netcal_and_torchmetrics():
    # confidence exactly 1.0 and one-hot rows: netcal (which clips to [eps, 1 - eps]) agrees with us
    probabilities = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.2, 0.25, 0.55], [0.04, 0.92, 0.04], [0.65, 0.35, 0]])
    labels = np.array([0, 2, 2, 1, 1])
    ours = ece(probabilities, labels, n_bins=10)["ece"]
    assert ours == pytest.approx(netcal_measure(netcal_metrics.ECE(bins=10), probabilities, labels), abs=1e-9)
    # a confidence exactly on an interior edge: our bins are right-closed (Guo et al.), netcal's and torchmetrics'
    # left-closed, so 0.5 sits in (0.4, 0.5] for us and in [0.5, 0.6) for them
    on_edge = np.array([[0.5, 0.3, 0.2], [0.58, 0.22, 0.2], [0.1, 0.2, 0.7]])
    on_edge_labels = np.array([0, 1, 2])  # netcal needs three distinct labels to treat the input as multiclass
    assert ece(on_edge, on_edge_labels, n_bins=10)["bin_counts"][4:7] == [1, 1, 1]
    assert ece(on_edge, on_edge_labels, n_bins=10)["ece"] == pytest.approx((0.5 + 0.58 + 0.3) / 3)
    reference = netcal_measure(netcal_metrics.ECE(bins=10), on_edge, on_edge_labels)
    assert reference == pytest.approx((2 * abs(0.5 - 0.54) + 0.3) / 3)
    # torchmetrics puts 1.0 in a phantom (n_bins + 1)-th bin: with a hit at 0.95 and a miss at 1.0 it reports
    # (0.05 + 1.0) / 2 where the last bin (0.9, 1.0] gives |0.5 - 0.975| = 0.475
    edge = np.array([[0.95, 0.05], [1.0, 0.0]])
    edge_labels = np.array([0, 1])
    assert ece(edge, edge_labels, n_bins=10)["ece"] == pytest.approx(0.475)
    phantom = torchmetrics_ce._ce_compute(
        torch.tensor([0.95, 1.0], dtype=torch.float64), torch.tensor([1.0, 0.0], dtype=torch.float64), 10
    )
    assert float(phantom) == pytest.approx(0.525)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_brier_matches_sklearn(seed):
    probabilities, labels = problem(seed)
    reference = sklearn_metrics.brier_score_loss(labels, probabilities, labels=list(range(probabilities.shape[1])))
    assert brier(probabilities, labels)["brier"] == pytest.approx(reference, abs=1e-9)
    binary = probabilities[:, :2] / probabilities[:, :2].sum(axis=1, keepdims=True)
    binary_labels = labels % 2
    # sklearn halves the binary score (one-column convention); ours sums both columns, i.e. exactly twice it
    assert brier(binary, binary_labels)["brier"] == pytest.approx(
        2 * sklearn_metrics.brier_score_loss(binary_labels, binary[:, 1]), abs=1e-9
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_recall_and_mrr_match_sklearn_and_torchmetrics(seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(size=(500, 10)), 1)  # with ties
    gold = rng.integers(0, 10, 500)
    onehot = np.eye(10, dtype=int)[gold]
    optimistic = recall_at_k(scores, gold, k=[1, 2, 5], ties="optimistic")
    for k in (1, 2, 5):
        # sklearn's top_k_accuracy_score breaks ties optimistically for the gold label at the boundary... only when
        # the gold one is among them; compare with the untied scores instead
        untied = scores + rng.normal(size=scores.shape) * 1e-6
        assert recall_at_k(untied, gold, k=k)[f"recall@{k}"] == pytest.approx(
            sklearn_metrics.top_k_accuracy_score(gold, untied, k=k, labels=list(range(10))), abs=1e-9
        )
    lrap = sklearn_metrics.label_ranking_average_precision_score(onehot, scores)
    # LRAP with one relevant label is the reciprocal rank with ties counted pessimistically
    assert recall_at_k(scores, gold)["mrr"] == pytest.approx(lrap, abs=1e-9)
    assert optimistic["mrr"] >= recall_at_k(scores, gold)["mrr"]
    retrieval = pytest.importorskip("torchmetrics.functional.retrieval")
    # torchmetrics ignores a relevant item whose score is <= 0, so compare on positive untied scores
    untied = rng.random(scores.shape) + 0.01
    torch_mrr = np.mean(
        [
            float(retrieval.retrieval_reciprocal_rank(torch.from_numpy(row), torch.from_numpy(hit).bool()))
            for row, hit in zip(untied, onehot, strict=True)
        ]
    )
    assert recall_at_k(untied, gold)["mrr"] == pytest.approx(torch_mrr, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_open_world_f1_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 8, 1000)
    predicted = np.where(rng.random(1000) < 0.7, gold, rng.integers(0, 8, 1000))
    result = open_world_f1(predicted, gold, oos_label=7)
    f1 = sklearn_metrics.f1_score(gold, predicted, labels=list(range(8)), average=None, zero_division=0)
    assert result["f1_all"] == pytest.approx(f1.mean(), abs=1e-9)
    assert result["f1_in"] == pytest.approx(f1[:7].mean(), abs=1e-9)
    assert result["f1_out"] == pytest.approx(f1[7], abs=1e-9)
    assert result["accuracy"] == pytest.approx(sklearn_metrics.accuracy_score(gold, predicted), abs=1e-12)
    # oos id in the middle of the range and a known class listed but absent
    result = open_world_f1(predicted, gold, oos_label=3, labels=[0, 1, 2, 4, 5, 6, 7, 9])
    labels = [0, 1, 2, 4, 5, 6, 7, 9]
    f1_in = sklearn_metrics.f1_score(gold, predicted, labels=labels, average="macro", zero_division=0)
    assert result["f1_in"] == pytest.approx(f1_in, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ood_detection_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    in_domain = (rng.random(997) < 0.7).astype(int)
    scores = np.round(rng.normal(size=997) + in_domain, 1)  # ties included
    result = ood_detection(scores, in_domain)
    assert result["auroc"] == pytest.approx(sklearn_metrics.roc_auc_score(in_domain, scores), abs=1e-9)
    assert result["aupr_in"] == pytest.approx(sklearn_metrics.average_precision_score(in_domain, scores), abs=1e-9)
    assert result["aupr_out"] == pytest.approx(
        sklearn_metrics.average_precision_score(1 - in_domain, -scores), abs=1e-9
    )
    fpr, tpr, _ = sklearn_metrics.roc_curve(in_domain, scores, drop_intermediate=False)
    assert result["fpr@95tpr"] == pytest.approx(fpr[np.searchsorted(tpr, 0.95 - 1e-12)], abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_smooth_ece_matches_relplot(seed):
    relplot = pytest.importorskip("relplot")
    from dialshift.metrics import smooth_ece

    rng = np.random.default_rng(seed)
    n, k = [60, 400, 3000, 20000, 150, 1000][seed], [2, 5, 10][seed % 3]
    logits = rng.normal(size=(n, k)) * rng.uniform(0.3, 4.0)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = (probabilities.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1) if seed % 2 else rng.integers(0, k, n)
    confidence = probabilities.max(axis=1)
    correct = (probabilities.argmax(axis=1) == labels).astype(float)
    expected, bandwidth = relplot.smECE(confidence, correct, return_width=True)
    result = smooth_ece(probabilities, labels)
    assert result["smooth_ece"] == pytest.approx(expected, abs=1e-6)
    assert result["bandwidth"] == bandwidth


@pytest.mark.parametrize("seed", range(6))
def test_debiased_l2_matches_uncertainty_calibration(seed):
    calibration = pytest.importorskip("calibration")
    from dialshift.metrics import debiased_l2

    rng = np.random.default_rng(seed)
    n, k = [60, 400, 3000, 20000, 150, 1000][seed], [2, 5, 10][seed % 3]
    logits = rng.normal(size=(n, k)) * rng.uniform(0.3, 4.0)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = (probabilities.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1) if seed % 2 else rng.integers(0, k, n)
    expected = calibration.get_calibration_error(probabilities, labels, p=2, debias=True, mode="top-label")
    assert debiased_l2(probabilities, labels)["debiased_l2"] == pytest.approx(expected, abs=1e-6)
    bins = [15, 4, 30][seed % 3]
    expected = calibration.lower_bound_scaling_ce(probabilities, labels, p=2, debias=True, num_bins=bins,
                                                  mode="top-label")
    assert debiased_l2(probabilities, labels, n_bins=bins)["debiased_l2"] == pytest.approx(expected, abs=1e-6)
