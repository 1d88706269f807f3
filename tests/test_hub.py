"""The Hub folder writer, reader, validator and push plan, on small datasets the tests make."""

import shutil

import datasets
import pytest
from conftest import tree

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
    read_back = {name: datasets.load_dataset(str(folder), name) for name in hub.declared_configs(folder)}
    hub.write_hub_folder(folder, read_back, CARD, progress=False)
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
    # no temporary folder left behind; the (empty) lock file stays beside the folder
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted([folder.name, hub.lock_path(folder).name])


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
        "toy_shift_0.5/dialshift_provenance.json",
        "toy_source/test-00000-of-00001.parquet",
        "toy_source/train-00000-of-00001.parquet",
        "toy_source/dialshift_provenance.json",
    ]


def test_push_refuses_an_invalid_folder(folder):
    (folder / "toy_source" / "train-00000-of-00001.parquet").unlink()
    with pytest.raises(DialshiftError, match="does not validate"):
        hub.push_hub_folder(folder, "org/dialshift", api=object())


# ----------------------------------------------------------------------------------------------- safety


def test_the_folder_carries_a_marker_listing_the_files_the_builder_wrote(folder):
    marker = hub.read_marker(folder)
    assert marker["tool"] == "dialshift" and marker["format"] == hub.MARKER_FORMAT
    assert marker["files"] == ["README.md", "toy_shift_0.5/test-00000-of-00001.parquet",
                               "toy_source/test-00000-of-00001.parquet", "toy_source/train-00000-of-00001.parquet"]
    assert hub.owned_files(folder) == set(marker["files"]) | {hub.MARKER}


def test_a_rewrite_carries_over_every_file_the_builder_did_not_write(folder):
    (folder / "notes.txt").write_text("my notes")
    (folder / ".git" / "refs").mkdir(parents=True)
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "toy_source" / "notes.md").write_text("about this config")
    (folder / "drafts").mkdir()
    (folder / "link").symlink_to("notes.txt")
    hub.write_hub_folder(folder, {"other": make_configs()["toy_shift_0.5"]}, CARD, keep=["toy_source"],
                         progress=False)
    files = tree(folder)
    assert files["notes.txt"] == b"my notes" and files[".git/HEAD"] == b"ref: refs/heads/main\n"
    assert files["toy_source/notes.md"] == b"about this config"
    assert (folder / "drafts").is_dir() and (folder / ".git" / "refs").is_dir()
    assert (folder / "link").is_symlink() and (folder / "link").read_text() == "my notes"
    assert not (folder / "toy_shift_0.5").exists()  # a dropped config's files were the builder's: not carried
    assert sorted(hub.declared_configs(folder)) == ["other", "toy_source"]
    assert hub.validate_hub_folder(folder).ok


def test_a_foreign_folder_is_refused_naming_what_it_holds(tmp_path):
    mine = tmp_path / "mythesis"
    (mine / ".git").mkdir(parents=True)
    (mine / "README.md").write_text("# My thesis\n")
    (mine / "notes.txt").write_text("notes")
    before = tree(mine)
    with pytest.raises(DialshiftError, match=r"not a dialshift dataset folder .*holds \.git, README\.md, notes\.txt"):
        hub.write_hub_folder(mine, make_configs(), CARD, progress=False)
    assert tree(mine) == before


def test_an_empty_folder_is_accepted(tmp_path):
    (tmp_path / "empty").mkdir()
    hub.write_hub_folder(tmp_path / "empty", make_configs(), CARD, progress=False)
    assert hub.validate_hub_folder(tmp_path / "empty").ok


def test_a_folder_built_before_markers_is_recognised_by_its_card(folder):
    (folder / hub.MARKER).unlink()
    assert hub.owned_files(folder) == {"README.md", "toy_shift_0.5/test-00000-of-00001.parquet",
                                       "toy_source/test-00000-of-00001.parquet",
                                       "toy_source/train-00000-of-00001.parquet"}
    hub.write_hub_folder(folder, {"other": make_configs()["toy_shift_0.5"]}, CARD, keep=["toy_source"],
                         progress=False)
    assert hub.read_marker(folder) is not None


def test_the_card_records_a_fingerprint_per_file_and_keeps_it_for_kept_configs(folder):
    recorded = hub.folder_metadata(folder)["toy_source"]["files"]
    path = folder / "toy_source" / "train-00000-of-00001.parquet"
    assert recorded["toy_source/train-00000-of-00001.parquet"] == hub.file_fingerprint(path)
    hub.write_hub_folder(folder, {"other": make_configs()["toy_shift_0.5"]}, CARD, keep=["toy_source"],
                         progress=False)
    assert hub.folder_metadata(folder)["toy_source"]["files"] == recorded


def test_a_fingerprint_difference_says_what_changed(folder):
    from dialshift.hub.fingerprints import fingerprint_difference

    path = folder / "toy_source" / "train-00000-of-00001.parquet"
    recorded = hub.file_fingerprint(path)
    assert fingerprint_difference(path, recorded) is None
    data = bytearray(path.read_bytes())
    data[10] ^= 1
    path.write_bytes(bytes(data))
    assert fingerprint_difference(path, recorded) == "same size, new sha256"
    path.write_bytes(bytes(data) + b"x")
    assert fingerprint_difference(path, recorded) == f"{recorded['size'] + 1:,} bytes, recorded {recorded['size']}"


def test_a_changed_file_fails_validation_and_cannot_be_kept(folder):
    path = folder / "toy_source" / "train-00000-of-00001.parquet"
    path.write_bytes(path.read_bytes()[:-20])  # truncated: footer gone
    problems = hub.validate_hub_folder(folder).problems
    assert problems == [f"toy_source/train-00000-of-00001.parquet: not a readable parquet file, truncated or damaged "
                        f"(Parquet magic bytes not found in footer. Either the file is corrupted or this is not a "
                        f"parquet file.); rebuild that config: dialshift build --config toy_source --out {folder}"]
    with pytest.raises(DialshiftError, match=r"cannot keep config 'toy_source': toy_source/train-.*truncated.*"
                                             r"dialshift build --config toy_source"):
        hub.write_hub_folder(folder, {"other": make_configs()["toy_shift_0.5"]}, CARD, keep=["toy_source"],
                             progress=False)


@pytest.mark.parametrize("bad", ["../elsewhere/*.parquet", "/etc/*.parquet", "C:\\\\data\\\\x.parquet",
                                 "hf://datasets/x/y.parquet", "toy_source/../../z/*"])
def test_data_files_outside_the_folder_are_refused(folder, bad):
    card = folder / "README.md"
    card.write_text(card.read_text().replace("path: toy_source/test-*", f"path: '{bad}'", 1))
    for call in (hub.declared_configs, hub.validate_hub_folder, lambda f: hub.data_files(f, ["toy_source"])):
        with pytest.raises(DialshiftError, match="points outside the dataset folder; a dataset folder only reads"):
            call(folder)


def test_data_files_match_inside_the_folder(folder):
    assert hub.data_files(folder, ["toy_source"]) == {"toy_source": {
        "test": [str(folder / "toy_source" / "test-00000-of-00001.parquet")],
        "train": [str(folder / "toy_source" / "train-00000-of-00001.parquet")]}}
    assert set(hub.data_files(folder)) == set(hub.declared_configs(folder))
    shutil.rmtree(folder / "toy_shift_0.5")
    with pytest.raises(DialshiftError, match="no file matches .*rebuild that config"):
        hub.data_files(folder, ["toy_shift_0.5"])
    with pytest.raises(DialshiftError, match="no config 'nope'"):
        hub.data_files(folder, ["nope"])
    with pytest.raises(DialshiftError, match="dataset folder does not exist"):
        hub.data_files(folder / "absent")


def test_a_second_writer_waits_then_fails_with_one_line(folder, monkeypatch):
    import filelock

    monkeypatch.setattr("dialshift.hub.locking.LOCK_TIMEOUT", 0.2)
    with filelock.FileLock(hub.lock_path(folder)):  # another process's lock: a separate open file
        with pytest.raises(DialshiftError, match="another dialshift process held the lock"):
            hub.write_hub_folder(folder, make_configs(), CARD, progress=False)


def test_stale_temporaries_are_removed_under_the_lock_and_foreign_names_kept(folder):
    parent = folder.parent
    litter = [parent / ".hub.tmp-999999999-dead", parent / ".hub.old-999999999-dead"]
    for path in litter:
        (path / "toy_source").mkdir(parents=True)
    (parent / ".hub.tmp-1-cafe").write_text("half-written")
    foreign = [parent / name for name in (".other.tmp-1-x", "hub.tmp-1-x", ".hub.tmp-a1b2c3", ".hub.tmp-1-file")]
    for path in foreign:
        path.write_text("not ours")
    hub.write_hub_folder(folder, make_configs(), CARD, progress=False)
    assert not any(path.exists() for path in litter) and not (parent / ".hub.tmp-1-cafe").exists()
    assert all(path.read_text() == "not ours" for path in foreign)


def test_a_swap_killed_between_its_renames_is_undone(folder):
    before = tree(folder)
    folder.rename(folder.parent / ".hub.old-999999999-abcd")  # the state a SIGKILL between the renames leaves
    hub.write_hub_folder(folder, {"other": make_configs()["toy_shift_0.5"]}, CARD,
                         keep=["toy_source", "toy_shift_0.5"], progress=False)
    after = tree(folder)
    assert {path: data for path, data in after.items() if path.startswith("toy_")} == \
        {path: data for path, data in before.items() if path.startswith("toy_")}
    assert not (folder.parent / ".hub.old-999999999-abcd").exists()


def test_atomic_write_removes_its_own_stale_temporaries_only(tmp_path):
    import os

    from dialshift.io import atomic_write

    target = tmp_path / "state.json"
    dead = tmp_path / ".state.json.tmp-999999999-dead"
    alive = tmp_path / f".state.json.tmp-{os.getppid()}-live"
    other = tmp_path / ".other.json.tmp-999999999-dead"
    for path in (dead, alive, other):
        path.write_text("x")
    atomic_write(target, "{}")
    assert target.read_text() == "{}"
    assert not dead.exists() and alive.exists() and other.exists()
