"""The CLI's build / validate / configs / push commands, driven through a toy family registered by the test."""

import datasets
import pytest

from dialshift import registry
from dialshift.cli import main


class ToyFamily(registry.Family):
    name = "toyfam"
    description = "a family for CLI tests"
    license = "cc-by-4.0"
    citation = "@misc{toyfam}"

    def configs(self):
        return [registry.ConfigInfo(f"toy_{k}", self.name, f"toy config {k}") for k in ("a", "b", "model")]

    def optional(self, config_name):
        return config_name == "toy_model"

    def add_build_arguments(self, parser):
        parser.add_argument("--toy-model", metavar="DIR", help="needed for toy_model")

    def build(self, config_names, context):
        built = {}
        for name in config_names:
            if name == "toy_model" and not context.options.get("toy_model"):
                continue
            rows = {"id": [f"{name}-{i}" for i in range(3)], "seed": [context.seed] * 3}
            built[name] = datasets.DatasetDict({"test": datasets.Dataset.from_dict(rows)})
        return built

    def card_section(self, built, context):
        return "## Toy\n\n" + ", ".join(sorted(built))


@pytest.fixture(autouse=True)
def toy_family(monkeypatch, tmp_path):
    monkeypatch.setattr(registry, "_FAMILIES", {"toyfam": ToyFamily()})
    monkeypatch.setattr(registry, "_DISCOVERED", True)
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("DIALSHIFT_DATA_DIR", str(tmp_path / "data"))


def one_line_error(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_configs_lists_every_config(capsys):
    assert main(["configs"]) == 0
    out = capsys.readouterr().out
    assert "toy_a" in out and "toyfam" in out and "3 configs in 1 families" in out


def test_build_then_validate(tmp_path, capsys):
    out = tmp_path / "hub"
    assert main(["build", "--out", str(out), "--no-progress"]) == 0
    summary = capsys.readouterr().out
    assert "2 config(s) built" in summary and "toy_a" in summary
    assert sorted(datasets.get_dataset_config_names(str(out))) == ["toy_a", "toy_b"]
    assert main(["validate", str(out)]) == 0
    assert "2 configs valid" in capsys.readouterr().out


def test_rebuilding_one_config_keeps_the_others(tmp_path, capsys):
    out = tmp_path / "hub"
    assert main(["build", "--out", str(out), "--no-progress"]) == 0
    assert main(["build", "--out", str(out), "--config", "toy_b", "--seed", "7", "--no-progress"]) == 0
    assert "(kept)" in capsys.readouterr().out
    assert datasets.load_dataset(str(out), "toy_b")["test"]["seed"] == [7, 7, 7]
    assert datasets.load_dataset(str(out), "toy_a")["test"]["seed"] == [0, 0, 0]


def test_family_options_reach_the_builder(tmp_path):
    out = tmp_path / "hub"
    assert main(["build", "--out", str(out), "--toy-model", "m", "--no-progress"]) == 0
    assert "toy_model" in datasets.get_dataset_config_names(str(out))


def test_validate_flags_a_missing_required_config(tmp_path, capsys):
    out = tmp_path / "hub"
    assert main(["build", "--out", str(out), "--config", "toy_a", "--no-progress"]) == 0
    assert main(["validate", str(out)]) == 2
    assert "toy_b: expected config is not in the folder" in capsys.readouterr().out
    assert main(["validate", "--partial", str(out)]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["build", "--config", "nope_*"], "unknown config 'nope_*'"),
        (["build", "--family", "nofam"], "unknown family 'nofam'"),
        (["build", "--num-proc", "0"], "--num-proc must be at least 1"),
        (["build", "--data-dir", "/nonexistent/data"], "data directory /nonexistent/data does not exist"),
        (["validate", "/nonexistent/folder"], "is not a directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in one_line_error(capsys)


def test_build_refuses_to_replace_a_foreign_folder(tmp_path, capsys):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["build", "--out", str(foreign)]) == 2
    assert "not a dialshift dataset folder" in one_line_error(capsys)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_build_into_an_unwritable_location(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["build", "--out", str(blocker / "hub"), "--no-progress"]) == 2
    assert "cannot create output directory" in one_line_error(capsys)


def test_push_dry_run_lists_the_upload(tmp_path, capsys):
    out = tmp_path / "hub"
    assert main(["build", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["push", str(out), "--repo-id", "org/dialshift", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "would upload 3 files to datasets/org/dialshift" in printed
    assert "toy_a/test-00000-of-00001.parquet" in printed
