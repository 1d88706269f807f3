"""The Hub folder writer, reader, validator and push plan, on small datasets the tests make."""

import shutil

import datasets
import pytest

from dialshift import hub
from dialshift.errors import DialshiftError

CARD = [hub.FamilyCard("toy", "## Toy family\n\nBuilt for tests.", license="cc-by-4.0", languages=("en",),
                       citation="@misc{toy, title={Toy}}")]


def make_configs():
    features = datasets.Features({
        "id": datasets.Value("string"),
        "context": datasets.Sequence(datasets.Value("string")),
        "label": datasets.Value("int32"),
    })

    def split(n, prefix):
        return datasets.Dataset.from_dict(
            {"id": [f"{prefix}-{i}" for i in range(n)], "context": [["a"] * i for i in range(n)],
             "label": list(range(n))},
            features=features,
        )

    return {
        "toy_source": datasets.DatasetDict({"train": split(5, "tr"), "test": split(3, "te")}),
        "toy_shift_0.5": datasets.DatasetDict({"test": split(2, "sh")}),
    }


@pytest.fixture()
def folder(tmp_path):
    return hub.write_hub_folder(tmp_path / "hub", make_configs(), CARD, progress=False)


def test_folder_loads_offline_with_every_config(folder):
    assert sorted(datasets.get_dataset_config_names(str(folder))) == ["toy_shift_0.5", "toy_source"]
    loaded = datasets.load_dataset(str(folder), "toy_source")
    assert sorted(loaded) == ["test", "train"]
    assert loaded["train"]["id"] == [f"tr-{i}" for i in range(5)]
    assert loaded["train"].features["label"] == datasets.Value("int32")
    card = (folder / "README.md").read_text()
    assert "license: cc-by-4.0" in card and "## Toy family" in card and "@misc{toy" in card
    assert "| `toy_shift_0.5` | test 2 |" in card


def test_validator_accepts_a_written_folder(folder):
    report = hub.validate_hub_folder(folder)
    assert report.ok, report.problems
    assert ("toy_source", "train", 5) in report.rows


def test_same_inputs_give_byte_identical_files(tmp_path):
    first = hub.write_hub_folder(tmp_path / "a", make_configs(), CARD, progress=False)
    second = hub.write_hub_folder(tmp_path / "b", make_configs(), CARD, progress=False)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for path in files:
        assert (first / path).read_bytes() == (second / path).read_bytes(), path


def test_rewriting_from_read_back_configs_is_identical(folder):
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    hub.write_hub_folder(folder, hub.read_hub_configs(folder), CARD, progress=False)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_interrupted_write_leaves_previous_folder_intact(folder, monkeypatch):
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    calls = {"n": 0}
    original = datasets.Dataset.to_parquet

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(datasets.Dataset, "to_parquet", failing)
    with pytest.raises(KeyboardInterrupt):
        hub.write_hub_folder(folder, {"other": make_configs()["toy_source"]}, CARD, progress=False)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary folder left behind


def test_unwritable_output_location_is_a_clear_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(DialshiftError, match="cannot create output directory"):
        hub.write_hub_folder(blocker / "hub", make_configs(), CARD, progress=False)


def test_validator_reports_missing_split_file(folder):
    (folder / "toy_source" / "test-00000-of-00001.parquet").unlink()
    report = hub.validate_hub_folder(folder)
    assert any("toy_source/test" in problem and "missing" in problem for problem in report.problems)


def test_validator_reports_undeclared_parquet_and_missing_expected_config(folder):
    shutil.copy(folder / "toy_source" / "test-00000-of-00001.parquet", folder / "toy_source" / "extra.parquet")
    report = hub.validate_hub_folder(folder, expected_configs={"toy_source", "toy_shift_0.9"})
    assert any("extra.parquet" in problem for problem in report.problems)
    assert any(problem.startswith("toy_shift_0.9") for problem in report.problems)


def test_validator_reports_features_that_differ_from_the_card(folder):
    card = folder / "README.md"
    card.write_text(card.read_text().replace("dtype: int32", "dtype: int64", 1))
    report = hub.validate_hub_folder(folder)
    assert not report.ok
    assert any("features differ" in problem or "load_dataset failed" in problem for problem in report.problems)


def test_validator_requires_a_card(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DialshiftError, match="no dataset card"):
        hub.validate_hub_folder(tmp_path / "empty")


def test_upload_plan_lists_card_and_declared_parquet(folder):
    assert hub.upload_plan(folder) == [
        "README.md",
        "toy_shift_0.5/test-00000-of-00001.parquet",
        "toy_source/test-00000-of-00001.parquet",
        "toy_source/train-00000-of-00001.parquet",
    ]


def test_push_creates_the_repo_and_uploads_exactly_the_plan(folder):
    class FakeApi:
        def __init__(self):
            self.calls = []

        def create_repo(self, repo_id, **kwargs):
            self.calls.append(("create_repo", repo_id, kwargs))

        def upload_folder(self, **kwargs):
            self.calls.append(("upload_folder", kwargs))
            return "https://example.invalid/commit/1"

    api = FakeApi()
    assert hub.push_hub_folder(folder, "org/dialshift", api=api) == "https://example.invalid/commit/1"
    (_, repo_id, create_kwargs), (_, upload) = api.calls
    assert repo_id == "org/dialshift" and create_kwargs["repo_type"] == "dataset"
    assert upload["repo_type"] == "dataset" and upload["allow_patterns"] == hub.upload_plan(folder)


def test_push_refuses_an_invalid_folder(folder):
    (folder / "toy_source" / "train-00000-of-00001.parquet").unlink()
    with pytest.raises(DialshiftError, match="does not validate"):
        hub.push_hub_folder(folder, "org/dialshift", api=object())
