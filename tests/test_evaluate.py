"""`dialshift evaluate` end to end on tiny rankers and a small synthetic Hub folder, with every method."""

import json

import numpy as np
import pytest
from test_ranker import make_dataset_folder, run_trainer

from dialshift.cli import main as cli
from dialshift.models.ranker import read_ranker_meta

pytestmark = pytest.mark.slow  # trains tiny rankers: minutes of CPU (`-m "not slow"` leaves it out)

METHODS = ["vanilla", "dropout", "ensemble", "temperature"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("evaluate")
    folder = make_dataset_folder(root / "dialshift")
    members = []
    for seed in (0, 1):
        out = root / f"tiny-{seed}"
        assert run_trainer("--dataset", str(folder), "--output-dir", str(out), "--model", "tiny", "--seed", str(seed),
                           "--max-length", "64", "--batch-size", "8", "--max-train-instances", "24",
                           "--learning-rate", "1e-3") == 0
        members.append(out)
    results = root / "results"
    argv = ["evaluate", "--model-dir", *map(str, members), "--method", *METHODS, "--dataset", str(folder),
            "--configs", "dailydialog", "uw_*", "kw_*", "ic_*", "sr_*", "--out", str(results), "--no-progress"]
    assert cli(argv) == 0
    return folder, members, results, argv


def read_predictions(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_outputs_have_the_submission_shape(setup):
    folder, _, results, _ = setup
    for method in METHODS:
        document = json.loads((results / method / "results.json").read_text())
        assert document["run"]["method"] == method and document["dialshift_version"]
        assert set(document["results"]) == {"dailydialog", "uw_0.10", "uw_0.20", "kw_0.10", "kw_0.20", "ic_0of6",
                                            "ic_1of6", "sr_2", "sr_3"}
        for config, values in document["results"].items():
            rows = read_predictions(results / method / "predictions" / f"{config}.jsonl")
            assert len(rows) == values["instances"] > 0
            probabilities = np.array([r["probabilities"] for r in rows])
            assert probabilities.shape == (len(rows), 10) and np.allclose(probabilities.sum(1), 1, atol=1e-5)
            assert all(len(r["scores"]) == 10 for r in rows)
            assert 0 <= values["recall@1"] <= 1 and 0 <= values["ece"] <= 1 and 0 <= values["brier"] <= 2
            assert set(values) == {"recall@1", "recall@2", "recall@5", "mrr", "brier", "ece", "smooth_ece",
                                   "debiased_l2", "instances"}
            assert all(interval is not None for interval in document["intervals"][config].values())
        assert document["options"]["dailydialog"]["ece_bins"] == 15  # uncertainty-calibration's get_ece default
        assert set(document["differences"]) == set(document["results"]) - {"dailydialog"}
        assert set(document["differences"]["uw_0.10"]) == {"dailydialog", "kw_0.10"}
        assert document["differences"]["ic_1of6"]["ic_0of6"]["shared"] == document["results"]["ic_1of6"]["instances"]
        assert document["configs"]["uw_0.20"]["intensity"] == 0.2
    plots = {p.name for p in (results / "plots").iterdir()}
    assert {"shift_uw_kw.png", "shift_ic_sr.png", *(f"reliability_{m}.png" for m in METHODS)} <= plots
    summary = (results / "results.md").read_text()
    assert all(m in summary for m in METHODS) and "uw_0.20" in summary and "sr_3" in summary


def test_ensemble_is_the_mean_of_its_members(setup, tmp_path):
    folder, members, results, _ = setup
    single = []
    for member in members:
        out = tmp_path / member.name
        assert cli(["evaluate", "--model-dir", str(member), "--dataset", str(folder), "--configs", "uw_0.10", "--out",
                    str(out), "--no-progress", "--no-plots"]) == 0
        rows = read_predictions(out / "vanilla" / "predictions" / "uw_0.10.jsonl")
        single.append(np.array([r["probabilities"] for r in rows]))
    ensemble = read_predictions(results / "ensemble" / "predictions" / "uw_0.10.jsonl")
    assert np.allclose(np.array([r["probabilities"] for r in ensemble]), np.mean(single, axis=0), atol=1e-6)
    variance = np.array([r["uncertainty"] for r in ensemble])
    assert np.allclose(variance, np.var(single, axis=0), atol=1e-6)


def test_temperature_rescales_the_vanilla_logits(setup):
    _, members, results, _ = setup
    document = json.loads((results / "temperature" / "results.json").read_text())
    temperature = document["run"]["temperature"]
    assert temperature > 0
    assert temperature == read_ranker_meta(members[0])["temperature"]
    vanilla = np.array([r["scores"] for r in read_predictions(results / "vanilla/predictions/dailydialog.jsonl")])
    scaled = read_predictions(results / "temperature/predictions/dailydialog.jsonl")
    assert np.allclose([r["scores"] for r in scaled], vanilla / temperature, atol=1e-4)
    assert all(r["uncertainty"] is None for r in scaled)


def test_mc_dropout_has_positive_variance_and_differs_from_vanilla(setup):
    _, _, results, _ = setup
    dropout = read_predictions(results / "dropout" / "predictions" / "dailydialog.jsonl")
    variance = np.array([r["uncertainty"] for r in dropout])
    assert variance.shape[1] == 10 and (variance >= 0).all() and variance.max() > 0
    vanilla = read_predictions(results / "vanilla" / "predictions" / "dailydialog.jsonl")
    assert not np.allclose([r["scores"] for r in dropout], [r["scores"] for r in vanilla])


def test_evaluation_is_deterministic(setup, tmp_path):
    _, _, results, argv = setup
    again = tmp_path / "again"
    assert cli([*argv[:-3], "--out", str(again), "--no-progress", "--no-plots"]) == 0
    for method in METHODS:
        for path in (results / method / "predictions").iterdir():
            assert path.read_bytes() == (again / method / "predictions" / path.name).read_bytes()
        assert (results / method / "results.json").read_bytes() == (again / method / "results.json").read_bytes()


@pytest.mark.parametrize("method", ["vanilla", "dropout"])
def test_score_reproduces_the_evaluate_results(setup, tmp_path, method):
    folder, _, results, _ = setup
    out = tmp_path / "rescored"
    assert cli(["score", str(results / method / "predictions"), "--dataset", str(folder), "--out", str(out),
                "--no-progress", "--no-plots"]) == 0
    assert (out / "results.json").read_bytes() == (results / method / "results.json").read_bytes()


def test_evaluate_out_on_a_file_fails_before_any_work(setup, tmp_path, capsys):
    folder, members, _, _ = setup
    target = tmp_path / "results.txt"
    target.write_text("mine")
    # a missing model and an unknown config too: the --out check must come first
    code = cli(["evaluate", "--model-dir", str(tmp_path / "nope"), "--dataset", str(folder), "--configs", "zz",
                "--out", str(target), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "is a file" in err and target.read_text() == "mine"


def test_identical_pairs_are_scored_once(setup):
    from dialshift.ranking.data import load_split
    from dialshift.ranking.evaluation import unique_pairs

    folder = setup[0]
    data = {name: load_split(folder, name) for name in ("dailydialog", "sr_3", "ic_0of6", "uw_0.10")}
    pairs, rows = unique_pairs(data)
    sizes = {name: len(split["id"]) * 10 for name, split in data.items()}
    # sr_3 is a subset of dailydialog and ic_0of6 deletes nothing: only uw_0.10 adds new pairs
    assert len(pairs) <= sizes["dailydialog"] + sizes["uw_0.10"] < sum(sizes.values())
    assert rows["sr_3"].max() < sizes["dailydialog"]


def test_subsample_keeps_the_same_ids_across_configs(setup):
    from dialshift.ranking.data import load_split

    folder = setup[0]
    a = load_split(folder, "dailydialog", max_instances=5, seed=3)["id"]
    b = load_split(folder, "uw_0.20", max_instances=5, seed=3)["id"]
    c = load_split(folder, "dailydialog", max_instances=5, seed=4)["id"]
    assert a == b and len(a) == 5 and a != c


@pytest.mark.parametrize("case", ["missing-model", "not-a-ranker", "unknown-config", "empty-dataset", "one-member"])
def test_bad_input_gives_a_one_line_error(setup, tmp_path, capsys, case):
    folder, members, _, _ = setup
    model_dirs, dataset, configs, method = [str(members[0])], str(folder), ["dailydialog"], "vanilla"
    if case == "missing-model":
        model_dirs = [str(tmp_path / "nope")]
    elif case == "not-a-ranker":
        (tmp_path / "plain").mkdir()
        model_dirs = [str(tmp_path / "plain")]
    elif case == "unknown-config":
        configs = ["zz_*"]
    elif case == "empty-dataset":
        (tmp_path / "empty").mkdir()
        dataset = str(tmp_path / "empty")
    else:
        method = "ensemble"
    code = cli(["evaluate", "--model-dir", *model_dirs, "--method", method, "--dataset", dataset, "--configs",
                *configs, "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("dialshift evaluate: error:") and "\n" not in err
    assert {"missing-model": "does not exist", "not-a-ranker": "not a dialshift ranker", "unknown-config": "zz_*",
            "empty-dataset": "README", "one-member": "at least two"}[case] in err
