"""Open-world decision methods, threshold selection and the open-world trainer (tiny model)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import f1_score

from dialshift.errors import DialshiftError
from dialshift.models.open_world import METHODS, Method, Outputs, convex_pairs, decide, fit_methods, select_threshold

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
    dropout = [features + rng.normal(0, 0.3, features.shape) for _ in range(3)]  # what dropout does to distances
    return Outputs(logits, features, dropout_features=dropout), labels, Outputs(oos[:, :2] * 0 + 0.1, oos)


@pytest.mark.parametrize("name", METHODS)
def test_every_method_separates_blobs(name):
    train, labels, _ = blobs()
    held, held_labels, oos = blobs(seed=3)  # not the training points: nearest-neighbour Cosine scores those 1.0
    hold_x = Outputs(np.concatenate([held.logits[::4], oos.logits]), np.concatenate([held.features[::4],
                                                                                    oos.features]))
    hold_y = np.concatenate([held_labels[::4], [2] * 4])
    method = fit_methods([name], train, labels, hold_x, hold_y, 2, seed=0, adb_epochs=60)[name]
    test, test_labels, test_oos = blobs(seed=1)
    predictions, scores = method.predict(test, 2)
    assert (method.classes_and_scores(test)[0] == test_labels).mean() >= 0.95
    # thresholds sit at the lowest accepted hold score; ADB's radius at the median distance of the dropout features
    assert (predictions == test_labels).mean() >= 0.8
    oos_predictions, oos_scores = method.predict(test_oos, 2)
    if name in ("maha", "cosine", "knn", "adb"):  # feature-space methods see the OOS points as far away
        assert (oos_predictions == 2).all()
        assert oos_scores.max() < np.median(scores)
    assert method.own_rule == (name == "adb")  # DCLOOS (own rule too) is tested below


def test_mahalanobis_and_cosine_scores_by_hand():
    features = np.array([[1.0, 0], [3, 0], [0, 1], [0, 3]])
    labels = np.array([0, 0, 1, 1])
    train = Outputs(np.zeros((4, 2)), features)
    cosine = Method("cosine", 2).fit(train, labels, cosine_scoring="centroid")
    _, score = cosine.classes_and_scores(Outputs(np.zeros((1, 2)), np.array([[1.0, 1.0]])))
    assert score[0] == pytest.approx(np.sqrt(0.5))
    maha = Method("maha", 2).fit(train, labels)
    # class means (2,0), (0,2); within-class deviations +-1 on one axis each: covariance diag(0.5, 0.5)
    _, score = maha.classes_and_scores(Outputs(np.zeros((1, 2)), np.array([[2.0, 1.0]])))
    assert score[0] == pytest.approx(-2.0)


def test_cosine_nearest_neighbour_against_centroid():
    # class 0 holds two directions 90 degrees apart: its centroid lies between them, away from both
    features = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])
    train = Outputs(np.zeros((3, 2)), features)
    labels = np.array([0, 0, 1])
    probe = Outputs(np.zeros((2, 2)), np.array([[2.0, 0, 0], [1.0, 1.0, 0]]))
    nearest = Method("cosine", 2).fit(train, labels)  # the default, as the method's released code
    assert nearest.state["scoring"] == "nearest"
    assert nearest.classes_and_scores(probe)[1] == pytest.approx([1.0, np.sqrt(0.5)])
    centroid = Method("cosine", 2).fit(train, labels, cosine_scoring="centroid")
    assert centroid.classes_and_scores(probe)[1] == pytest.approx([np.sqrt(0.5), 1.0])
    with pytest.raises(DialshiftError, match="cosine_scoring 'medoid'"):
        Method("cosine", 2).fit(train, labels, cosine_scoring="medoid")


def test_adb_radius_sits_at_the_median_distance_of_what_it_is_trained_on():
    train, labels, _ = blobs()
    clean = Outputs(train.logits, train.features)  # no dropout passes: eval-mode distances
    state = Method("adb", 2).fit(clean, labels, adb_epochs=80).state
    distances = np.linalg.norm(train.features - state["centroids"][labels], axis=1)
    for k in (0, 1):  # the boundary loss balances points inside and outside
        assert np.quantile(distances[labels == k], 0.3) < state["radii"][k] < np.quantile(distances[labels == k], 0.7)
    assert state["dropout_passes"] == 0 and state["epochs_run"] == 80 and state["validation_f1"] is None


def test_adb_trained_on_dropout_features_accepts_most_training_utterances():
    train, labels, _ = blobs()
    clean = Outputs(train.logits, train.features)
    method = Method("adb", 2).fit(train, labels, adb_epochs=80)
    assert method.state["dropout_passes"] == 3
    accepted = (method.predict(clean, 2)[0] == labels).mean()
    # eval-mode features lie well inside the dropout-trained boundary (here 84 %; chi-square: P(X4 < 2 median) = 0.85)
    assert accepted >= 0.8
    assert (Method("adb", 2).fit(clean, labels, adb_epochs=80).predict(clean, 2)[0] == labels).mean() <= 0.6


def test_adb_early_stopping_keeps_the_best_validation_epoch():
    train, labels, _ = blobs()
    validation, validation_labels, _ = blobs(seed=2)
    state = Method("adb", 2).fit(train, labels, validation=(validation, validation_labels), adb_epochs=300,
                                 adb_patience=5, adb_lr=0.5).state
    assert state["epochs_run"] < 300  # the macro-F1 plateaus once the boundaries enclose the class
    assert state["epochs_run"] - state["kept_epoch"] == 5
    classes, scores = Method("adb", 2, state=state).classes_and_scores(validation)
    kept_f1 = f1_score(validation_labels, np.where(scores >= 0, classes, 2), average="macro")
    assert state["validation_f1"] == pytest.approx(kept_f1)


def test_outputs_refuse_dropout_passes_of_another_shape():
    with pytest.raises(DialshiftError, match=r"dropout pass 0 has shape \(2, 3\)"):
        Outputs(np.zeros((2, 2)), np.zeros((2, 4)), dropout_features=[np.zeros((2, 3))])


def test_knn_neighbours_capped_below_the_smallest_class():
    train, labels, _ = blobs(n=5)
    assert Method("knn", 2).fit(train, labels, knn_neighbors=20).state["n_neighbors"] == 4
    assert Method("knn", 2).fit(*blobs(n=40)[:2], knn_neighbors=20).state["n_neighbors"] == 20
    with pytest.raises(DialshiftError, match="smallest class: 1"):
        Method("knn", 2).fit(Outputs(np.zeros((3, 2)), np.zeros((3, 2))), np.array([0, 1, 1]))


def test_convex_pairs_mix_two_different_classes():
    labels = np.array([0, 0, 0, 1, 2])
    first, second, weight = convex_pairs(labels, 50, np.random.default_rng(0))
    assert len(first) == len(second) == len(weight) == 50
    assert (labels[first] != labels[second]).all()
    assert ((weight >= 0) & (weight <= 1)).all()
    again = convex_pairs(labels, 50, np.random.default_rng(0))
    assert all((a == b).all() for a, b in zip((first, second, weight), again, strict=True))
    assert [len(a) for a in convex_pairs(np.array([3, 3, 3]), 10, np.random.default_rng(0))] == [0, 0, 0]


def test_dcloos_rejects_where_the_oos_logit_wins():
    # K = 2 in-scope classes + oos: the third logit wins on the second and third rows
    logits = np.array([[3.0, 1.0, 0.0], [1.0, 0.5, 2.0], [0.0, 0.0, 0.1]])
    method = fit_methods(["dcloos"], Outputs(logits, np.zeros((3, 2))), np.array([0, 1, 0]),
                         Outputs(logits, np.zeros((3, 2))), np.array([0, 2, 2]), 2)["dcloos"]
    predictions, scores = method.predict(Outputs(logits, np.zeros((3, 2))), 2)
    assert predictions.tolist() == [0, 2, 2]
    assert scores == pytest.approx([3.0, -1.0, -0.1])
    assert method.own_rule and method.threshold is None


def test_unknown_method_and_uncalibrated_predict():
    train, labels, _ = blobs()
    with pytest.raises(DialshiftError, match="unknown open-world method 'odist'"):
        fit_methods(["odist"], train, labels, train, labels, 2)
    with pytest.raises(DialshiftError, match="calibrate"):
        Method("msp", 2).fit(train, labels).predict(train, 2)


# ----------------------------------------------------------------------------------------------- the trainer


def test_dropout_passes_are_seeded_and_leave_the_callers_random_stream_alone():
    import torch

    from dialshift.models.backbones import load_backbone
    from dialshift.models.intent_encoder import IntentEncoder

    model, tokenizer, _ = load_backbone("tiny", 0, num_labels=3)
    encoder, texts = IntentEncoder(tokenizer, 16), ["set an alarm", "what is the weather", "play some jazz"]
    torch.manual_seed(123)
    state = torch.get_rng_state()
    first = encoder.outputs(model, texts, 2, "cpu", dropout_passes=2, seed=7)
    assert torch.equal(torch.get_rng_state(), state)
    assert not model.training and len(first.dropout_features) == 2
    assert not np.allclose(first.dropout_features[0], first.features)  # dropout was active
    again = encoder.outputs(model, texts, 2, "cpu", dropout_passes=2, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(first.dropout_features, again.dropout_features, strict=True))
    assert np.array_equal(first.features, encoder.outputs(model, texts, 2, "cpu").features)


def test_mean_features_average_the_last_layer_over_real_tokens():
    import torch

    from dialshift.models.backbones import load_backbone
    from dialshift.models.intent_encoder import IntentEncoder

    model, tokenizer, _ = load_backbone("tiny", 0, num_labels=3)
    texts = ["set an alarm", "what is the weather like in the south of france today"]
    mean = IntentEncoder(tokenizer, 32, "mean").outputs(model, texts, 2, "cpu")  # one batch: the short text is padded
    with torch.no_grad():
        alone = model(**tokenizer([texts[0]], return_tensors="pt"), output_hidden_states=True)
    assert mean.features[0] == pytest.approx(alone.hidden_states[-1][0].mean(dim=0).numpy(), abs=1e-5)
    pooler = IntentEncoder(tokenizer, 32).outputs(model, texts, 2, "cpu")
    assert np.array_equal(mean.logits, pooler.logits) and not np.allclose(mean.features, pooler.features)
    with pytest.raises(DialshiftError, match="features 'cls'"):
        IntentEncoder(tokenizer, 32, "cls")


@pytest.fixture(scope="module")
def covariate_folder(raw_data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("cov") / "hub"
    subprocess.run([sys.executable, "-m", "dialshift", "build", "--family", "covariate", "--config",
                    "clinc14_cov_5shot", "--data-dir", str(raw_data_dir), "--out", str(out), "--no-progress"],
                   check=True, capture_output=True)
    return out


@pytest.mark.data
@pytest.mark.slow
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
    run_json = out / "clinc14_cov_5shot" / "seed_0" / "run.json"
    fitted = json.loads(run_json.read_text())["fitted"]
    assert json.loads(run_json.read_text())["options"] == {"features": "pooler", "cosine_scoring": "nearest"}
    assert fitted["adb"]["dropout_passes"] == 5 and 1 <= fitted["adb"]["kept_epoch"] <= fitted["adb"]["epochs_run"] <= 3
    assert fitted["knn"]["n_neighbors"] == 4  # 5 training utterances per intent
    # a re-run with --resume-from-checkpoint latest keeps the finished seeds and trains only the new one
    before = run_json.stat().st_mtime_ns
    assert main(["--dataset", str(covariate_folder), "--config", "clinc14_cov_5shot", "--output-dir", str(out),
                 "--model", "tiny", "--num-seeds", "3", "--max-steps", "2", "--no-progress", "--replicates", "5",
                 "--adb-epochs", "3", "--eval-batch-size", "256", "--resume-from-checkpoint", "latest"]) == 0
    assert run_json.stat().st_mtime_ns == before
    summary = json.loads((out / "summary.json").read_text())["summary"]["clinc14_cov_5shot"]
    assert summary["maha"]["test"]["f1_all"]["n"] == 3


@pytest.mark.data
def test_trainer_dcloos_objective_on_the_tiny_model(covariate_folder, tmp_path):
    sys.path.insert(0, "trainers")
    from open_world import main

    outliers = tmp_path / "outliers.txt"
    outliers.write_text("How are you ? __eou__ Fine , thanks . __eou__\nwhat a lovely day\n\n", encoding="utf-8")
    out = tmp_path / "run"
    assert main(["--dataset", str(covariate_folder), "--config", "clinc14_cov_5shot", "--output-dir", str(out),
                 "--model", "tiny", "--num-seeds", "1", "--max-steps", "2", "--no-progress", "--replicates", "5",
                 "--objective", "dcloos", "--dcloos-outliers", str(outliers), "--eval-batch-size", "256"]) == 0
    run = json.loads((out / "clinc14_cov_5shot" / "seed_0" / "run.json").read_text())
    assert set(run["results"]) == {"dcloos"}
    model = json.loads((out / "clinc14_cov_5shot" / "seed_0" / "model" / "dialshift_model.json").read_text())
    assert model["open_domain_outliers"] == 3
    assert (out / "confusion_clinc14_cov_5shot.png").exists()


def test_dcloos_outliers_errors(tmp_path):
    from dialshift.models.open_world_data import read_outlier_utterances

    assert read_outlier_utterances("none") == []
    with pytest.raises(DialshiftError, match="is not a file"):
        read_outlier_utterances(str(tmp_path / "missing.txt"))
    (tmp_path / "empty.txt").write_text(" __eou__ \n", encoding="utf-8")
    with pytest.raises(DialshiftError, match="holds no utterance"):
        read_outlier_utterances(str(tmp_path / "empty.txt"))
    (tmp_path / "binary.txt").write_bytes(b"ok\n\xff\xfe")
    with pytest.raises(DialshiftError, match="is not UTF-8 text"):
        read_outlier_utterances(str(tmp_path / "binary.txt"))


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
    with pytest.raises(SystemExit):
        main(["--dataset", str(covariate_folder), "--output-dir", str(tmp_path), "--num-seeds", "2",
              "--resume-from-checkpoint", str(tmp_path)])
    assert "use 'latest'" in capsys.readouterr().err
