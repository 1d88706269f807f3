"""The CLI's build / validate / configs / push commands, driven through a toy family registered by the test."""

import datasets
import pytest
from conftest import one_line_error

from dialshift import registry
from dialshift.cli import main


@pytest.fixture(autouse=True)
def toy_family(toy_plugin, monkeypatch, tmp_path):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("DIALSHIFT_DATA_DIR", str(tmp_path / "data"))


def build(*argv):
    """``dialshift build`` of the toy family only (the installed families are found too)."""
    return main(["build", "--family", "toyfam", "--no-progress", *argv])


def test_the_toy_family_is_found_through_its_entry_point_only(toy_plugin):
    assert "toyfam" in registry.families() and "dailydialog" in registry.families()
    assert registry.get_family("toyfam").config("toy_swap_0.5").group.name == "swap"


def test_the_toy_task_is_found_through_its_entry_point_only(toy_plugin, capsys):
    from dialshift.leaderboard.export import eval_results
    from dialshift.scoring import get_task, installed_tasks

    assert list(installed_tasks()) == ["attention_distribution", "open_world_intent", "pairwise_selection",
                                      "response_ranking", "toy_vote"]
    task = get_task("toy_vote")
    assert task.info("error_rate").higher_is_better is False and task.label("agreement") == "Agreement"
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "toy_vote                id, vote (candidate index)" in capsys.readouterr().out
    record = {"results": {"toy_vote": {"agreement": 0.5, "instances": 4}}, "options": {},
              "configs": {"toy_vote": registry.get_family("toyfam").config("toy_vote").to_dict()},
              "config": {"model_name": "m", "method": "x", "link": "https://example.org/m"}}
    (entry,) = [e for e in eval_results(record, "org/ds") if e.metric_type == "agreement"]
    assert entry.task_type == task.hub_task_type and entry.metric_name == "Agreement"


def test_configs_lists_every_config(capsys):
    assert main(["configs", "--family", "toyfam"]) == 0
    out = capsys.readouterr().out
    assert "toy_swap_0.5" in out and "toyfam" in out and "5 configs in 1 families" in out


def test_build_then_validate(tmp_path, capsys):
    out = tmp_path / "hub"
    assert build("--out", str(out)) == 0
    summary = capsys.readouterr().out
    assert "4 config(s) built" in summary and "toy_swap_1.0" in summary
    assert sorted(datasets.get_dataset_config_names(str(out))) == ["toy", "toy_swap_0.5", "toy_swap_1.0", "toy_vote"]
    assert main(["validate", str(out)]) == 0
    assert "4 configs valid" in capsys.readouterr().out
    swapped = datasets.load_dataset(str(out), "toy_swap_1.0")["test"]["label"]
    assert swapped == [1] * 40


def test_the_card_stores_typed_configs_and_facts(tmp_path):
    from dialshift.hub import folder_configs, folder_metadata, read_card

    out = tmp_path / "hub"
    assert build("--out", str(out)) == 0
    configs = folder_configs(out)
    assert configs["toy_swap_0.5"] == registry.get_family("toyfam").config("toy_swap_0.5")
    assert folder_metadata(out)["toy_swap_1.0"]["facts"] == {"cases": 40, "swapped": 40}
    assert "toy_swap_1.0 (40 swapped)" in read_card(out).text


def test_rebuilding_one_config_keeps_the_others_without_rewriting_them(tmp_path, capsys):
    out = tmp_path / "hub"
    assert build("--out", str(out)) == 0
    kept_file = out / "toy" / "test-00000-of-00001.parquet"
    before = (kept_file.read_bytes(), kept_file.stat().st_mtime_ns)
    rebuilt = out / "toy_swap_0.5" / "test-00000-of-00001.parquet"
    rebuilt_before = rebuilt.stat().st_mtime_ns
    assert build("--out", str(out), "--config", "toy_swap_0.5", "--seed", "7") == 2  # would mix seeds: refused
    assert "(folder vs this build: seed 0 vs 7)" in capsys.readouterr().err
    assert build("--out", str(out), "--config", "toy_swap_0.5") == 0
    assert "(kept)" in capsys.readouterr().out
    assert rebuilt.stat().st_mtime_ns != rebuilt_before
    assert (kept_file.read_bytes(), kept_file.stat().st_mtime_ns) == before  # copied, not re-written
    from dialshift.hub import folder_metadata

    assert set(folder_metadata(out)) == {"toy", "toy_swap_0.5", "toy_swap_1.0", "toy_vote"}  # kept: their facts
    assert main(["validate", str(out)]) == 0


def test_family_options_reach_the_builder(tmp_path):
    out = tmp_path / "hub"
    assert build("--out", str(out), "--toy-model", "m", "--toy-cases", "5") == 0
    assert "toy_model" in datasets.get_dataset_config_names(str(out))
    assert len(datasets.load_dataset(str(out), "toy")["test"]) == 5


def test_validate_flags_a_missing_required_config(tmp_path, capsys):
    out = tmp_path / "hub"
    assert build("--out", str(out), "--config", "toy") == 0
    assert main(["validate", str(out)]) == 2
    assert "toy_swap_0.5: expected config is not in the folder" in capsys.readouterr().out
    assert main(["validate", "--partial", str(out)]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["build", "--config", "nope_*"], "config pattern 'nope_*' matches nothing"),
        (["build", "--family", "nofam"], "unknown family 'nofam'"),
        (["build", "--num-proc", "0"], "--num-proc must be from 1 to"),
        (["build", "--family", "toyfam", "--data-dir", "/nonexistent/data"],
         "data directory /nonexistent/data does not exist"),
        (["validate", "/nonexistent/folder"], "is not a directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in one_line_error(capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--model-dir", "m", "--dataset", "d", "--out", "o", "--batch-size", "0"],
        ["evaluate", "--model-dir", "m", "--dataset", "d", "--out", "o", "--ece-bins", "-2"],
        ["bundle", "create", "--dataset", "d", "--out", "o", "--max-eval-instances", "0"],
        ["leaderboard", "score", "s", "--dataset", "d", "--bootstrap", "0"],
        ["score", "p", "--dataset", "d", "--bootstrap", "0"],
        ["plot", "reliability", "p.jsonl", "--out", "o.png", "--n-bins", "0"],
    ],
)
def test_positive_integer_options_are_checked_by_the_shared_type(argv, capsys):
    flag, value = argv[-2:]
    with pytest.raises(SystemExit) as exit_status:
        main(argv)
    assert exit_status.value.code == 2
    assert f"argument {flag}: must be at least 1, got {value}" in capsys.readouterr().err


def test_build_refuses_to_replace_a_foreign_folder(tmp_path, capsys):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert build("--out", str(foreign)) == 2
    assert "not a dialshift dataset folder" in one_line_error(capsys)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_build_into_an_unwritable_location(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert build("--out", str(blocker / "hub")) == 2
    assert "cannot create output directory" in one_line_error(capsys)


def test_push_dry_run_lists_the_upload(tmp_path, capsys):
    out = tmp_path / "hub"
    assert build("--out", str(out)) == 0
    capsys.readouterr()
    assert main(["push", str(out), "--repo-id", "org/dialshift", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    # the card, 8 parquet (each config's test and lite splits) and 4 provenance files
    assert "would upload 13 files to datasets/org/dialshift" in printed
    assert "toy_swap_0.5/test-00000-of-00001.parquet" in printed and "toy_swap_0.5/dialshift_provenance.json" in printed


def test_score_and_plots_work_for_the_plug_in_family(tmp_path, capsys):
    """Issue 8: a family that is only an entry point gets build, validate, score and plots with no other edit."""
    import json

    out = tmp_path / "hub"
    assert build("--out", str(out)) == 0
    predictions = tmp_path / "predictions"
    predictions.mkdir()
    for name in ("toy", "toy_swap_0.5", "toy_swap_1.0"):
        rows = datasets.load_dataset(str(out), name)["test"]
        # a model that always picks the first candidate: right on `toy`, wrong on every swapped case
        lines = [json.dumps({"id": uid, "scores": [1.0, 0.0], "probabilities": [0.8, 0.2]}) for uid in rows["id"]]
        (predictions / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    votes = datasets.load_dataset(str(out), "toy_vote")["test"]["id"]  # the toy task, also a plug-in only
    (predictions / "toy_vote.jsonl").write_text("".join(json.dumps({"id": uid, "vote": 0}) + "\n" for uid in votes))
    results = tmp_path / "results"
    assert main(["score", str(predictions), "--dataset", str(out), "--out", str(results), "--bootstrap", "50",
                 "--no-progress"]) == 0
    document = json.loads((results / "results.json").read_text())
    assert document["results"]["toy"]["accuracy"] == 1.0 and document["results"]["toy_swap_1.0"]["accuracy"] == 0.0
    assert document["configs"]["toy_swap_0.5"]["group"]["name"] == "swap"
    assert document["differences"]["toy_swap_1.0"]["toy"]["metrics"]["accuracy"]["value"] == -1.0
    assert document["results"]["toy_vote"]["agreement"] == 1.0 and document["results"]["toy_vote"]["error_rate"] == 0
    assert "| Agreement ↑ | Error rate ↓ |" in (results / "results.md").read_text()
    assert (results / "results.md").is_file() and (results / "plots" / "shift_toy_swap.png").stat().st_size > 1000
    assert main(["plot", "curves", str(results / "results.json"), "--out", str(tmp_path / "curves.png")]) == 0
    assert (tmp_path / "curves.png").stat().st_size > 1000
