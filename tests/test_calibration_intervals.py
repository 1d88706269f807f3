"""The calibration test and the calibration metrics' intervals: coverage near calibration, size, point containment."""

import numpy as np
import pytest
from test_scoring import make_folder

from benchmarks import calibration_coverage
from dialshift.metrics.calibration import bin_edges, bin_index, calibration_test
from dialshift.metrics.calibration_test import consistency_test
from dialshift.metrics.smooth_calibration import smooth_ece_null_mean
from dialshift.scoring import ScoringSettings, score_directory
from dialshift.scoring.calibration import difference_interval, metric_interval
from dialshift.scoring.report import render_markdown

#: The least coverage the quick simulation must show (its 12 test sets per row put one miss at 92 %).
COVERAGE = 0.8


def test_intervals_cover_the_truth_near_calibration():
    """A small version of benchmarks/calibration_coverage.py: a percentile interval covers 0 % for a calibrated model
    (docs/metrics.md); these must cover at least COVERAGE, and the test must keep its size."""
    summary, _ = calibration_coverage.run([3000], datasets=12, replicates=100,
                                          scenarios=["calibrated", "over-confident by 0.05"])
    for (scenario, _), row in summary.items():
        for metric in calibration_coverage.METRICS:
            assert row["coverage"][metric] >= COVERAGE, (scenario, metric, row["coverage"])
            assert row["difference"][metric] >= COVERAGE, (scenario, metric, row["difference"])
        assert row["contains_point"], scenario
    assert summary["calibrated", 3000]["rejects"] <= 0.25
    assert summary["over-confident by 0.05", 3000]["rejects"] == 1.0
    assert summary["calibrated", 3000]["upper"]["ece"] >= 0.75  # reported as upper bounds


def _scored(n, shift, seed):
    from benchmarks.calibration_coverage import _scored as scored

    rng = np.random.default_rng(seed)
    confidence = rng.uniform(0.5, 1.0, n)
    correct = rng.random(n) < confidence - shift
    stats = {"confidence": confidence, "correct": correct,
             "bin": bin_index(confidence, bin_edges(None, 15), equal_width=True)}
    return scored(stats, rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64), 200, seed)


@pytest.mark.parametrize("n", [30, 60, 300])
def test_every_interval_holds_its_point_estimate(n):
    """The issue's `0.000 [0.174, 0.521]`: small test sets gave debiased-L2 intervals excluding the estimate."""
    for seed in range(5):
        first, second = _scored(n, 0.1 * (seed % 2), seed), _scored(n, 0.0, seed + 100)
        for metric in calibration_coverage.METRICS:
            interval, kind = metric_interval(metric, first[0], first[1], first[2])
            assert kind in ("two-sided", "upper bound")
            assert 0.0 <= interval[0] <= first[0][metric] <= interval[1], (n, seed, metric, interval)
            difference = difference_interval(metric, (first[0], second[0]), (first[1], second[1]),
                                             (first[2], second[2]))
            assert difference[0] <= first[0][metric] - second[0][metric] <= difference[1]


def test_consistency_test_is_seeded_and_tells_calibrated_from_overconfident():
    rng = np.random.default_rng(0)
    probabilities = rng.dirichlet(np.ones(5), 4000)
    calibrated = np.array([rng.choice(5, p=row) for row in probabilities])
    first = calibration_test(probabilities, calibrated)
    assert first == calibration_test(probabilities, calibrated)  # same inputs and seed: the same p-value
    assert first["p_value"] > 0.01 and first["replicates"] == 1000
    sharpened = probabilities**3 / (probabilities**3).sum(axis=1, keepdims=True)  # over-confident
    assert calibration_test(sharpened, calibrated)["p_value"] < 0.01
    with pytest.raises(ValueError, match="replicates"):
        consistency_test({"confidence": np.ones(3), "correct": np.ones(3), "bin": np.zeros(3, int)}, 15, 0)


def test_smooth_ece_null_mean_matches_labels_drawn_from_the_confidences():
    from dialshift.metrics.smooth_calibration import smooth_ece_compute

    rng = np.random.default_rng(1)
    confidence = rng.uniform(0.5, 1.0, 2000)
    stats = {"confidence": confidence, "correct": rng.random(2000) < confidence}
    _, bandwidth = smooth_ece_compute(stats, return_bandwidth=True)
    drawn = [smooth_ece_compute({"confidence": confidence, "correct": rng.random(2000) < confidence},
                                bandwidth=bandwidth) for _ in range(60)]
    assert smooth_ece_null_mean(stats, bandwidth) == pytest.approx(np.mean(drawn), rel=0.1)


def test_results_hold_the_test_and_the_interval_kinds(tmp_path):
    folder, pred_dir, _, _ = make_folder(tmp_path)
    document = score_directory(pred_dir, ScoringSettings(folder, replicates=100))
    test = document["calibration_test"]["toyrank"]
    assert 0 < test["p_value"] <= 1 and test["replicates"] == 100 and "rejected at 5%" in test["calibrated"]
    assert "toyintent" not in document["calibration_test"]  # no probabilities, no test
    kinds = document["interval_kinds"]["toyrank"]
    assert set(kinds) == {"ece", "smooth_ece", "debiased_l2"}
    for metric, kind in kinds.items():
        low, high = document["intervals"]["toyrank"][metric]
        assert low <= document["results"]["toyrank"][metric] <= high
        assert kind == ("upper bound" if test["p_value"] >= 0.05 else "two-sided") or low == 0.0
    assert "debiased_l2^2" not in document["results"]["toyrank"]
    assert "debiased_l2^2" not in document["intervals"]["toyrank"]
    for entry in document["differences"].values():
        for difference in entry.values():
            assert "debiased_l2^2" not in difference["metrics"]
    markdown = render_markdown({"toy": document})
    assert "## Calibration test" in markdown and "| toyrank |" in markdown.split("## Calibration test")[1]
