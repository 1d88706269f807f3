"""Covariate-family leaderboard submissions: `dialshift evaluate`'s open-world output submitted as is (test and
cov_test predictions), both splits scored from gold, the drop test - cov_test with its partly paired interval, the
covariate tab showing all three, and submissions lacking the cov_test half refused in one line.

Runs on the tiny covariate build of tests/test_adapters_open_world.py (its fixture and helpers)."""

import json
import shutil

import numpy as np
import pyarrow as pa
import pytest
import test_adapters_open_world
from test_adapters_open_world import CONFIGS, classifier_folder, intents, lines, read_split, submission_folder
from test_leaderboard import zip_folder

from dialshift.cli import main as cli
from tests.conftest import one_line_error

covariate_build = test_adapters_open_world.covariate_build  # the tiny covariate build (a module-scoped fixture)
REPLICATES = 20


@pytest.fixture(scope="module")
def evaluated(covariate_build, tmp_path_factory):
    """OUT of `dialshift evaluate` on both configs: OUT/msp/test and OUT/msp/cov_test."""
    root = tmp_path_factory.mktemp("evaluated")
    folder = classifier_folder(root / "clf", len(intents(covariate_build)))
    out = root / "out"
    assert cli(["evaluate", "--model-dir", str(folder), "--dataset", str(covariate_build), "--configs", *CONFIGS,
                "--bootstrap", str(REPLICATES), "--out", str(out), "--no-progress", "--no-plots"]) == 0
    return out


def score(submission, dataset, store):
    return cli(["leaderboard", "score", str(submission), "--dataset", str(dataset), "--results", str(store),
                "--bootstrap", str(REPLICATES), "--no-progress"])


def f1_all_draws(dataset, out, split, oos):
    """F1_All of hwu12_cov's ``split`` in each bootstrap replicate, computed here: the Poisson counts of each id
    (a function of the seed, the replicate and the id only) on the predictions `evaluate` wrote."""
    from dialshift.metrics import open_world_f1
    from dialshift.scoring.bootstrap import replicate_weights
    from dialshift.scoring.gold import id_keys

    rows = read_split(dataset, "hwu12_cov", split)
    predicted = {line["id"]: line["prediction"] for line in
                 lines(out / "msp" / split / "predictions" / "hwu12_cov.jsonl")}
    predictions = np.array([predicted[i] for i in rows["id"]])
    weights = replicate_weights(id_keys(pa.array(rows["id"])), range(REPLICATES), 0)
    return np.array([open_world_f1(predictions, np.array(rows["label"]), oos_label=oos, weights=row)["f1_all"]
                     for row in weights])


def test_evaluate_output_is_a_submission_scored_on_test_and_cov_test_with_the_drop_on_the_page(
        covariate_build, evaluated, tmp_path, capsys):
    from dialshift.leaderboard import family_tables, read_store
    from dialshift.scoring.bootstrap import percentile_interval

    dataset = covariate_build
    submission = submission_folder(evaluated, tmp_path / "submission")
    capsys.readouterr()
    assert score(zip_folder(submission, tmp_path / "s.zip", prefix="mine/"), dataset, tmp_path / "store") == 0
    assert "on 2 covariate configs and cov_test, full track" in capsys.readouterr().out
    (record,) = read_store(tmp_path / "store")

    # both splits scored from gold as `dialshift evaluate` scored them
    for split, results in (("test", record["results"]), ("cov_test", record["shifted_splits"]["cov_test"]["results"])):
        evaluated_results = json.loads((evaluated / "msp" / split / "results.json").read_text())
        for name in CONFIGS:
            assert results[name] == evaluated_results["results"][name]
    cov_document = json.loads((evaluated / "msp" / "cov_test" / "results.json").read_text())
    for key in ("intervals", "differences"):
        assert record["shifted_splits"]["cov_test"][key] == cov_document[key]
    assert record["shifted_splits"]["cov_test"]["differences"]["hwu12_cov_5shot"]["hwu12_cov"]["shared"] > 0

    # the drop: test - cov_test; its interval paired on the out-of-scope ids both splits hold, independent elsewhere
    test, cov = read_split(dataset, "hwu12_cov", "test"), read_split(dataset, "hwu12_cov", "cov_test")
    oos = len(intents(dataset))
    shared = set(test["id"]) & set(cov["id"])
    assert shared and shared == {i for i, label in zip(cov["id"], cov["label"], strict=True) if label == oos}
    assert set(test["id"]) - shared and set(cov["id"]) - shared  # the in-scope rows differ
    drop = record["shifted_splits"]["cov_test"]["drops"]["hwu12_cov"]
    assert drop["shared"] == len(shared)
    cov_results = record["shifted_splits"]["cov_test"]["results"]["hwu12_cov"]
    for metric in ("f1_all", "f1_in", "f1_out", "accuracy", "auroc"):
        assert drop["metrics"][metric]["value"] == pytest.approx(record["results"]["hwu12_cov"][metric]
                                                                 - cov_results[metric])
    expected = percentile_interval(f1_all_draws(dataset, evaluated, "test", oos)
                                   - f1_all_draws(dataset, evaluated, "cov_test", oos))
    assert drop["metrics"]["f1_all"]["interval"] == pytest.approx(expected, abs=1e-12)

    # the covariate tab: test, cov_test and drop columns for each headline metric, with their intervals
    (table,) = family_tables([record])
    labels = [column.label for column in table.columns]
    assert labels[5:8] == ["F1_All (hwu12_cov, test)", "F1_All (hwu12_cov, cov_test)",
                           "F1_All drop test − cov_test (hwu12_cov)"]
    keys = {column.key: column for column in table.columns}
    assert keys["f1_all|drop"].lower_is_better and not keys["fpr@95tpr|drop"].lower_is_better
    (row,) = table.rows
    assert row["cells"]["f1_all|drop"] == drop["metrics"]["f1_all"]["value"]
    assert row["intervals"]["f1_all|drop"] == drop["metrics"]["f1_all"]["interval"]
    assert row["cells"]["accuracy|second"] == cov_results["accuracy"]
    assert cli(["leaderboard", "render", str(tmp_path / "store"), "--out", str(tmp_path / "site"), "--no-plots"]) == 0
    page = (tmp_path / "site" / "index.html").read_text()
    assert "F1_All drop test − cov_test (hwu12_cov)" in page and "F1_All (hwu12_cov, cov_test)" in page
    assert f'data-key="f1_all|drop" data-value="{drop["metrics"]["f1_all"]["value"]}"' in page
    assert f"{drop['metrics']['f1_all']['value']:.4f}" in page


@pytest.mark.parametrize("case", ["no cov_test file", "no cov_test folder", "cov_lite on the full track",
                                  "an unscored config", "test predictions as cov_test", "another folder"])
def test_a_submission_without_its_cov_test_half_is_refused_in_one_line(covariate_build, evaluated, tmp_path, capsys,
                                                                        case):
    submission = submission_folder(evaluated, tmp_path / "submission", configs=["hwu12_cov"])
    predictions = submission / "predictions"
    expected = {
        "no cov_test file": f"{predictions}/cov_test/hwu12_cov.jsonl: missing; config 'hwu12_cov' is scored on 'test' "
                            "and on its shifted 'cov_test' split, so a submission holds the predictions of both (copy "
                            "in the folder OUT/msp/cov_test/predictions",
        "no cov_test folder": f"{predictions}/cov_test/hwu12_cov.jsonl: missing;",
        "cov_lite on the full track": "config 'hwu12_cov' has no 'cov_lite' split paired with 'test' in the dataset "
                                      "(its second test split: cov_test;",
        "an unscored config": f"{predictions}/cov_test/hwu12_cov_5shot.jsonl: config 'hwu12_cov_5shot' has no "
                              "predictions/hwu12_cov_5shot.jsonl in this submission",
        "test predictions as cov_test": "is not in config 'hwu12_cov' split 'cov_test' of the dataset",
        "another folder": f"{predictions}/shifted: unexpected folder;",
    }[case]
    (predictions / "hwu12_cov_5shot.jsonl").unlink()
    if case != "an unscored config":
        (predictions / "cov_test" / "hwu12_cov_5shot.jsonl").unlink()
    if case == "no cov_test file":
        (predictions / "cov_test" / "hwu12_cov.jsonl").unlink()
    elif case == "no cov_test folder":
        shutil.rmtree(predictions / "cov_test")
    elif case == "cov_lite on the full track":
        shutil.copytree(predictions / "cov_test", predictions / "cov_lite")
    elif case == "test predictions as cov_test":
        shutil.copyfile(predictions / "hwu12_cov.jsonl", predictions / "cov_test" / "hwu12_cov.jsonl")
    elif case == "another folder":
        shutil.move(predictions / "cov_test", predictions / "shifted")
    capsys.readouterr()
    assert score(submission, covariate_build, tmp_path / "store") == 2
    err = one_line_error(capsys, "leaderboard")
    assert expected in err, err
    assert not any((tmp_path / "store").rglob("*.json"))
