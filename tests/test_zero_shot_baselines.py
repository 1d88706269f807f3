"""benchmarks/zero_shot_baselines.py's submission writer on a tiny lite dataset: a reproducible lite-track zip that
`dialshift leaderboard score` accepts, whose cost the page shows beside the row; a malformed cost is refused."""

import importlib.util
import json
import zipfile
from pathlib import Path

import pytest
from test_leaderboard import CONFIGS, ROWS, one_line_error, write_predictions

from dialshift.cli import main
from dialshift.scoring.gold import config_fingerprints

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "zero_shot_baselines.py"
COST = {"pairs": len(CONFIGS) * ROWS * 10, "cpu_seconds": 812.5, "wall_seconds": 901.0}


def load_script():
    spec = importlib.util.spec_from_file_location("zero_shot_baselines", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lite_dataset(tmp_path_factory):
    """DailyDialog-named response-ranking configs with a test and a lite split (the same 30 rows)."""
    import datasets

    from dialshift.hub import write_hub_folder
    from dialshift.registry import all_configs

    registered, built = all_configs(), {}
    for index, name in enumerate(CONFIGS):
        rows = datasets.Dataset.from_dict({
            "id": [f"dd-{k:03d}" for k in range(ROWS)], "context": [[f"turn {k}"] for k in range(ROWS)],
            "candidates": [[f"c{j}" for j in range(10)] for _ in range(ROWS)],
            "label": [(k * 7 + index) % 10 for k in range(ROWS)]})
        built[name] = datasets.DatasetDict({"test": rows, "lite": rows})
    metadata = {name: {"config": registered[name].to_dict(), "facts": {}} for name in CONFIGS}
    return write_hub_folder(tmp_path_factory.mktemp("lite") / "dialshift", built, [], metadata=metadata,
                            progress=False)


def method_folder(tmp_path, dataset) -> Path:
    """What `dialshift evaluate` leaves in OUT/vanilla: predictions, run.json (a local model path) and results.json."""
    folder = tmp_path / "vanilla"
    write_predictions(folder, dataset)
    (folder / "submission.json").unlink()
    (folder / "predictions" / "run.json").write_text(json.dumps(
        {"run": {"model": "/home/someone/models/e5", "model_dirs": ["/home/someone/models/e5"],
                 "adapter": {"model_type": "bi-encoder"}}, "scoring": {}}))
    (folder / "results.json").write_text(json.dumps(
        {"dataset_revision": {**config_fingerprints(dataset, CONFIGS), "other": "sha256:0"}}))
    return folder


def test_the_baseline_submission_is_reproducible_scored_and_shows_its_cost(lite_dataset, tmp_path, capsys):
    script = load_script()
    spec = script.MODELS["e5"]
    folder = method_folder(tmp_path, lite_dataset)
    first = script.write_submission(folder, tmp_path / "a" / "e5__dailydialog.zip", spec, 117_653_760, COST)
    second = script.write_submission(folder, tmp_path / "b" / "e5__dailydialog.zip", spec, 117_653_760, COST)
    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first) as archive:
        assert sorted(archive.namelist()) == ["predictions/dailydialog.jsonl", "predictions/run.json",
                                              "predictions/uw_0.10.jsonl", "predictions/uw_0.20.jsonl",
                                              "submission.json"]
        metadata = json.loads(archive.read("submission.json"))
        run = json.loads(archive.read("predictions/run.json"))
    assert metadata["track"] == "lite" and metadata["method"] == "zero-shot bi-encoder" and metadata["cost"] == COST
    assert set(metadata["dataset_revision"]) == set(CONFIGS)  # only the configs submitted
    assert run["run"]["model_dirs"] == [spec["source"]] == [run["run"]["model"]]  # no local path in the submission

    store, site = tmp_path / "store", tmp_path / "site"
    assert main(["leaderboard", "score", str(first), "--dataset", str(lite_dataset), "--results", str(store),
                 "--bootstrap", "20", "--no-progress"]) == 0
    (record,) = list(store.rglob("*.json"))
    config = json.loads(record.read_text())["config"]
    assert config["track"] == "lite" and config["cost"] == COST
    assert main(["leaderboard", "render", str(store), "--out", str(site), "--no-plots"]) == 0
    page = (site / "index.html").read_text()
    assert "Cost (CPU s)" in page and "Cost (pairs)" in page and ">812<" in page.replace(" ", "") and "900" in page
    capsys.readouterr()


@pytest.mark.parametrize("cost, message", [
    ({"pairs": -1}, "'pairs' must be an integer"),
    ({"pairs": 1.5}, "'pairs' must be an integer"),
    ({"cpu_seconds": "fast"}, "'cpu_seconds' must be a number"),
    ({"gpu_hours": 1}, "must be an object with some of pairs, cpu_seconds, wall_seconds"),
])
def test_a_malformed_cost_is_refused_with_one_line(lite_dataset, tmp_path, capsys, cost, message):
    submission = write_predictions(tmp_path / "submission", lite_dataset)
    metadata = json.loads((submission / "submission.json").read_text())
    (submission / "submission.json").write_text(json.dumps({**metadata, "track": "lite", "cost": cost}))
    assert main(["leaderboard", "score", str(submission), "--dataset", str(lite_dataset), "--results",
                 str(tmp_path / "store"), "--bootstrap", "20", "--no-progress"]) == 2
    line = one_line_error(capsys)
    assert "field 'cost'" in line and message in line, line
    assert not (tmp_path / "store").exists()


BASELINES = SCRIPT.parent / "results" / "baselines"


def test_the_committed_baselines_agree_with_their_records_and_render(tmp_path, capsys):
    """Each committed submission opens as a lite-track submission (layout, limits, submission.json checked), holds
    at most 128 predictions per config and exactly the pairs its cost declares; the store's records are its scores
    (same configs, same cost, no record problem) and render as ranked lite rows with the cost beside them."""
    from dialshift.leaderboard.store import read_store, record_problem
    from dialshift.leaderboard.submission import open_submission

    records = {(r["config"]["model_name"], r["config"]["family"]): r for r in read_store(BASELINES / "store")}
    archives = sorted((BASELINES / "submissions").glob("*.zip"))
    assert len(archives) == len(records) == 4  # minilm and e5 on dailydialog, e5 on korean, the trained ranker
    for archive in archives:
        with open_submission(archive) as submission:
            metadata = submission.metadata
            lines = {name: path.read_text().splitlines() for name, path in submission.files.items()}
        assert metadata["track"] == "lite"
        assert metadata["method"] == ("vanilla (trained ranker)" if archive.stem.startswith("ranker__")
                                      else "zero-shot bi-encoder")
        assert all(len(rows) <= 128 for rows in lines.values())
        assert metadata["cost"]["pairs"] == sum(len(json.loads(line)["probabilities"])
                                                for rows in lines.values() for line in rows)
        record = records[metadata["model"], archive.stem.split("__")[1]]
        assert record_problem(record) is None and record["config"]["cost"] == metadata["cost"]
        assert set(record["results"]) == set(lines) == set(record["config"]["family_configs"])
    summary = json.loads((BASELINES / "summary.json").read_text())
    assert {(row["model"], row["family"]) for row in summary["rows"]} == set(records)
    assert main(["leaderboard", "render", str(BASELINES / "store"), "--out", str(tmp_path / "site"), "--no-plots"]) == 0
    page = (tmp_path / "site" / "index.html").read_text()
    assert page.count("42,240") == 3 and "3,328" in page and "lite track" in page
    capsys.readouterr()
