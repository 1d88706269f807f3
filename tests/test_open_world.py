"""Open-world decision methods, threshold selection and the open-world trainer (tiny model)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from dialshift.errors import DialshiftError
from dialshift.models.open_world import METHODS, Method, Outputs, decide, fit_methods, select_threshold

# ----------------------------------------------------------------------------------------------- thresholds


def test_select_threshold_known_answer():
    # in-scope scores 0.9 (correct), 0.8 (correct), 0.4 (wrong class); OOS 0.5, 0.3
    scores, correct, oos = [0.9, 0.8, 0.4, 0.5, 0.3], [1, 1, 0, 0, 0], [0, 0, 0, 1, 1]
    # t=0.8: Acc_in 2/3 + Recall_out 2/2 = 1.667, the maximum; t=0.5 gives 2/3 + 1/2
    assert select_threshold(scores, correct, oos) == 0.8


def test_select_threshold_ties_go_to_the_smallest_and_inf_rejects_all():
    assert select_threshold([0.5, 0.5, 0.1], [1, 1, 0], [0, 0, 1]) == 0.5  # 0.5 and nothing between: accept more
    # every in-scope prediction wrong: rejecting everything (t = inf) maximises Recall_out at no cost
    assert select_threshold([0.9, 0.2], [0, 0], [0, 1]) == pytest.approx(0.9)  # ties: 0.9 and inf; smallest wins
    assert select_threshold([0.1, 0.9], [0, 0], [0, 1]) == np.inf


def test_select_threshold_refuses_one_sided_holds():
    with pytest.raises(DialshiftError, match="in-scope and out-of-scope"):
        select_threshold([0.1, 0.2], [1, 1], [0, 0])
    with pytest.raises(DialshiftError, match="NaN"):
        select_threshold([np.nan, 0.2], [1, 0], [0, 1])


def test_decide():
    assert decide(np.array([0, 1, 2]), np.array([0.9, 0.1, 0.5]), 0.5, 3).tolist() == [0, 3, 2]


# ----------------------------------------------------------------------------------------------- methods


def blobs(seed=0, n=40):
    """Two well-separated classes in 4-d, and OOS points far from both."""
    rng = np.random.default_rng(seed)
    centres = np.array([[5.0, 0, 0, 0], [0, 5.0, 0, 0]])
    labels = np.repeat([0, 1], n)
    features = centres[labels] + rng.normal(0, 0.3, (2 * n, 4))
    logits = np.stack([features[:, 0], features[:, 1]], axis=1)
    oos = np.array([[0, 0, 5.0, 0], [0, 0, 0, 5.0], [0, 0, -5.0, 0], [0, 0, 0, -5.0]]) + rng.normal(0, 0.3, (4, 4))
    return Outputs(logits, features), labels, Outputs(oos[:, :2] * 0 + 0.1, oos)


@pytest.mark.parametrize("name", METHODS)
def test_every_method_separates_blobs(name):
    train, labels, oos = blobs()
    hold_x = Outputs(np.concatenate([train.logits[::4], oos.logits]), np.concatenate([train.features[::4],
                                                                                     oos.features]))
    hold_y = np.concatenate([labels[::4], [2] * 4])
    method = fit_methods([name], train, labels, hold_x, hold_y, 2, seed=0, adb_epochs=60)[name]
    test, test_labels, test_oos = blobs(seed=1)
    predictions, scores = method.predict(test, 2)
    assert (method.classes_and_scores(test)[0] == test_labels).mean() >= 0.95
    # thresholds sit at the lowest accepted hold score; ADB's radius at the median distance (its loss's balance)
    assert (predictions == test_labels).mean() >= (0.3 if name == "adb" else 0.8)
    oos_predictions, oos_scores = method.predict(test_oos, 2)
    if name in ("maha", "cosine", "knn", "adb"):  # feature-space methods see the OOS points as far away
        assert (oos_predictions == 2).all()
        assert oos_scores.max() < np.median(scores)
    assert method.own_rule == (name == "adb")


def test_mahalanobis_and_cosine_scores_by_hand():
    features = np.array([[1.0, 0], [3, 0], [0, 1], [0, 3]])
    labels = np.array([0, 0, 1, 1])
    train = Outputs(np.zeros((4, 2)), features)
    cosine = Method("cosine", 2).fit(train, labels)
    _, score = cosine.classes_and_scores(Outputs(np.zeros((1, 2)), np.array([[1.0, 1.0]])))
    assert score[0] == pytest.approx(np.sqrt(0.5))
    maha = Method("maha", 2).fit(train, labels)
    # class means (2,0), (0,2); within-class deviations +-1 on one axis each: covariance diag(0.5, 0.5)
    _, score = maha.classes_and_scores(Outputs(np.zeros((1, 2)), np.array([[2.0, 1.0]])))
    assert score[0] == pytest.approx(-2.0)


def test_adb_radius_grows_to_cover_its_class():
    train, labels, _ = blobs()
    state = Method("adb", 2).fit(train, labels, adb_epochs=80).state
    distances = np.linalg.norm(train.features - state["centroids"][labels], axis=1)
    for k in (0, 1):  # the boundary loss balances points inside and outside: the radius sits near the median
        assert np.quantile(distances[labels == k], 0.2) < state["radii"][k] < distances[labels == k].max() * 1.5


def test_unknown_method_and_uncalibrated_predict():
    train, labels, _ = blobs()
    with pytest.raises(DialshiftError, match="unknown open-world method 'odist'"):
        fit_methods(["odist"], train, labels, train, labels, 2)
    with pytest.raises(DialshiftError, match="calibrate"):
        Method("msp", 2).fit(train, labels).predict(train, 2)


# ----------------------------------------------------------------------------------------------- predictions files


def test_write_predictions_refuses_unknown_labels(tmp_path):
    sys.path.insert(0, "trainers")
    from open_world import write_predictions

    path = write_predictions(tmp_path / "c.jsonl", ["a", "b"], np.array([0, 2]), np.array([0.5, 0.1]), 3)
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"id": "a", "prediction": 0, "score": 0.5}, {"id": "b", "prediction": 2, "score": 0.1}]
    with pytest.raises(DialshiftError, match=r"prediction 7 of 'b' is not a label id \(0..2\)"):
        write_predictions(tmp_path / "d.jsonl", ["a", "b"], np.array([0, 7]), np.array([0.5, 0.1]), 3)


# ----------------------------------------------------------------------------------------------- the trainer


@pytest.fixture(scope="module")
def covariate_folder(raw_data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("cov") / "hub"
    subprocess.run([sys.executable, "-m", "dialshift", "build", "--family", "covariate", "--config",
                    "clinc14_cov_5shot", "--data-dir", str(raw_data_dir), "--out", str(out), "--no-progress"],
                   check=True, capture_output=True)
    return out


@pytest.mark.data
def test_trainer_runs_every_method_on_the_tiny_model(covariate_folder, tmp_path):
    sys.path.insert(0, "trainers")
    from open_world import main

    out = tmp_path / "run"
    assert main(["--dataset", str(covariate_folder), "--config", "clinc14_cov_5shot", "--output-dir", str(out),
                 "--model", "tiny", "--num-seeds", "2", "--max-steps", "2", "--no-progress", "--replicates", "5",
                 "--adb-epochs", "3", "--eval-batch-size", "256"]) == 0
    summary = json.loads((out / "summary.json").read_text())["summary"]["clinc14_cov_5shot"]
    assert set(summary) == set(METHODS)
    for method in METHODS:
        for split in ("test", "cov_test"):
            assert summary[method][split]["f1_all"]["n"] == 2
            assert 0 <= summary[method][split]["accuracy"]["mean"] <= 1
    assert (out / "confusion_clinc14_cov_5shot.png").stat().st_size > 10_000
    lines = (out / "clinc14_cov_5shot" / "seed_0" / "predictions" / "maha" / "cov_test" / "clinc14_cov_5shot.jsonl")
    assert len(lines.read_text().splitlines()) == 1420
    assert not list((out / "clinc14_cov_5shot" / "seed_0" / "model").glob("*.safetensors"))


@pytest.mark.data
def test_scoring_refuses_missing_ids(covariate_folder, tmp_path):
    from dialshift.scoring import ScoringSettings, score_files

    path = tmp_path / "clinc14_cov_5shot.jsonl"
    path.write_text(json.dumps({"id": "clinc150-full-oos_test-00000", "prediction": 0, "score": 1.0}) + "\n")
    with pytest.raises(DialshiftError, match="have no prediction") as error:
        score_files({"clinc14_cov_5shot": path}, ScoringSettings(covariate_folder, split="cov_test", replicates=5))
    assert "\n" not in str(error.value)
    path.write_text(json.dumps({"id": "clinc150-full-test-00000", "prediction": 0, "score": 1.0}) + "\n")
    with pytest.raises(DialshiftError, match="is not in config 'clinc14_cov_5shot' split 'cov_test'"):
        score_files({"clinc14_cov_5shot": path}, ScoringSettings(covariate_folder, split="cov_test", replicates=5))


@pytest.mark.data
def test_trainer_names_a_missing_config(covariate_folder, tmp_path, capsys):
    sys.path.insert(0, "trainers")
    from open_world import main

    assert main(["--dataset", str(covariate_folder), "--config", "hwu12_cov", "--output-dir", str(tmp_path),
                 "--model", "tiny", "--no-progress"]) == 2
    assert "no config 'hwu12_cov'" in capsys.readouterr().err
