"""Hostile and careless input against build / validate / push / sources / configs.

Nothing a user owns is ever deleted (each data-loss case builds a real folder with foreign files), two builds into one
folder merge (a real concurrent pair of processes), a push never deletes remote files it was not asked to (a fake Hub
API that records every operation), and every bad input ends in one line on stderr with exit status 2. Fast: the toy
family plug-in (tests/toy_family.py) stands in for the real ones.
"""

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import datasets
import pytest
from conftest import one_line_error, tree
from conftest import toy_build as build

from dialshift import hub
from dialshift.cli import main

PARQUET = "test-00000-of-00001.parquet"


@pytest.fixture(autouse=True)
def toy_family(toy_plugin, monkeypatch, tmp_path):
    data = tmp_path / "data"
    (data / "clinc150").mkdir(parents=True)
    (data / "clinc150" / "data_full.json").write_text('{"train": [["raw corpus", "keep"]]}')
    monkeypatch.setenv("DIALSHIFT_DATA_DIR", str(data))


@pytest.fixture
def built(tmp_path, capsys):
    out = tmp_path / "hub"
    assert build("--out", str(out)) == 0
    capsys.readouterr()
    return out


# ----------------------------------------------------------------------------------------------- 1. data loss


def test_build_refuses_a_users_folder_and_touches_nothing(tmp_path, capsys):
    mine = tmp_path / "mythesis"
    (mine / ".git" / "objects").mkdir(parents=True)
    (mine / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (mine / "README.md").write_text("---\nlicense: mit\n---\n# My thesis\n")
    (mine / "notes.txt").write_text("three years of notes")
    before = tree(mine)
    assert build("--config", "toy", "--out", str(mine)) == 2
    line = one_line_error(capsys, "build")
    assert "not a dialshift dataset folder" in line and ".git, README.md, notes.txt" in line
    assert tree(mine) == before and (mine / ".git" / "objects").is_dir()


@pytest.mark.parametrize("where", ["data", "data/clinc150", "."])
def test_build_refuses_the_raw_data_folder(tmp_path, capsys, where):
    data = tmp_path / "data"
    before = tree(data)
    assert build("--out", str(tmp_path / where)) == 2
    relation = {"data": "is", "data/clinc150": "is inside", ".": "contains"}[where]
    assert f"{relation} the raw data directory" in one_line_error(capsys, "build")
    assert tree(data) == before


def test_a_rebuild_carries_over_every_file_it_did_not_write(built, capsys):
    (built / "notes.txt").write_text("my notes")
    (built / ".git").mkdir()
    (built / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (built / "toy" / "NOTES.md").write_text("about toy")
    assert build("--config", "toy_swap_0.5", "--out", str(built)) == 0
    files = tree(built)
    assert files["notes.txt"] == b"my notes" and files[".git/HEAD"] == b"ref: refs/heads/main\n"
    assert files["toy/NOTES.md"] == b"about toy"
    assert main(["validate", str(built)]) == 0  # the user's files do not disturb validation


def test_an_empty_folder_is_a_fine_output(tmp_path):
    (tmp_path / "empty").mkdir()
    assert build("--out", str(tmp_path / "empty")) == 0
    assert (tmp_path / "empty" / hub.MARKER).is_file()


CHILD = textwrap.dedent("""
    import contextlib, os, signal, sys, time
    import datasets
    from dialshift.cli import main
    from dialshift.hub import locking

    barrier, me, action = sys.argv[1], sys.argv[2], sys.argv[3]
    real_lock, real_to_parquet = locking.folder_lock, datasets.Dataset.to_parquet
    calls = []

    @contextlib.contextmanager
    def lock_after_barrier(out, timeout=None):
        if not calls:  # both builds have built their configs before either asks for the lock
            calls.append(1)
            open(os.path.join(barrier, me), "w").close()
            deadline = time.time() + 120
            while len(os.listdir(barrier)) < 2 and time.time() < deadline:
                time.sleep(0.02)
        with real_lock(out, timeout):
            yield

    def to_parquet(self, *args, **kwargs):
        if action == "kill" and calls:
            os.kill(os.getpid(), signal.SIGKILL)
        if action == "slow":
            time.sleep(1.0)  # hold the lock long enough for the other build to wait on it
        return real_to_parquet(self, *args, **kwargs)

    locking.folder_lock = lock_after_barrier  # what the build calls first
    datasets.Dataset.to_parquet = to_parquet
    sys.exit(main(["build", "--family", "toyfam", "--no-progress", *sys.argv[4:]]))
""")


def start_build(tmp_path, barrier, me, action, *argv):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.Popen([sys.executable, str(script), str(barrier), me, action, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())


def test_two_concurrent_builds_into_one_folder_merge(tmp_path):
    out, barrier = tmp_path / "hub", tmp_path / "barrier"
    barrier.mkdir()
    first = start_build(tmp_path, barrier, "a", "slow", "--config", "toy", "--out", str(out))
    second = start_build(tmp_path, barrier, "b", "slow", "--config", "toy_swap_0.5", "--out", str(out))
    results = [process.communicate(timeout=300) for process in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], results
    assert any("waiting for it" in err for _, err in results), results  # one really waited for the other
    assert sorted(hub.declared_configs(out)) == ["toy", "toy_swap_0.5"]
    assert hub.validate_hub_folder(out, expected_configs={"toy", "toy_swap_0.5"}).ok


def test_a_killed_build_leaves_the_old_folder_and_the_next_build_removes_its_litter(built, tmp_path, capsys):
    before = tree(built)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    (barrier / "other").touch()  # no partner: pass the barrier at once
    victim = start_build(tmp_path, barrier, "a", "kill", "--config", "toy_swap_*", "--out", str(built))
    victim.communicate(timeout=300)
    assert victim.returncode == -signal.SIGKILL
    assert tree(built) == before
    litter = sorted(path.name for path in tmp_path.glob(".hub.tmp-*"))
    assert litter, "the kill should have left a temporary folder"
    assert build("--config", "toy", "--out", str(built)) == 0
    assert not list(tmp_path.glob(".hub.tmp-*")) and not list(tmp_path.glob(".hub.old-*"))


def test_disk_full_while_writing_is_one_line_and_keeps_the_old_folder(built, capsys, monkeypatch):
    before = tree(built)

    def disk_full(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    monkeypatch.setattr(datasets.Dataset, "to_parquet", disk_full)
    assert build("--config", "toy", "--out", str(built)) == 2
    line = one_line_error(capsys, "build")
    assert "No space left on device" in line and "-00000-of-00001.parquet" in line and "free some space" in line
    assert tree(built) == before
    assert not list(built.parent.glob(".hub.tmp-*"))


class FakeHubApi:
    """Records every call; ``list_repo_files`` answers from ``remote`` (the repository's current files)."""

    def __init__(self, remote=()):
        self.remote = list(remote)
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id))

    def list_repo_files(self, repo_id, **kwargs):
        self.calls.append(("list_repo_files", repo_id))
        return list(self.remote)

    def create_commit(self, repo_id, operations, **kwargs):
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        operations = list(operations)
        self.uploaded = {op.path_in_repo: open(op.path_or_fileobj, "rb").read()
                         for op in operations if isinstance(op, CommitOperationAdd)}
        self.deleted = sorted(op.path_in_repo for op in operations if isinstance(op, CommitOperationDelete))
        self.calls.append(("create_commit", repo_id))
        return "https://example.invalid/commit/1"


REMOTE = [".gitattributes", "README.md", f"toy/{PARQUET}", f"toy_swap_0.5/{PARQUET}", f"toy_swap_1.0/{PARQUET}",
          f"other_family/{PARQUET}"]


@pytest.fixture
def fake_api(monkeypatch):
    api = FakeHubApi(REMOTE)
    monkeypatch.setattr("dialshift.hub.push.make_api", lambda token=None: api)
    return api


def test_push_of_a_partial_folder_keeps_the_remote_configs(tmp_path, fake_api, capsys):
    out = tmp_path / "hub"
    assert build("--config", "toy", "--out", str(out)) == 0
    assert main(["push", str(out), "--repo-id", "org/dialshift"]) == 0
    assert fake_api.deleted == []
    assert sorted(fake_api.uploaded) == ["README.md", "toy/dialshift_provenance.json",
                                         "toy/lite-00000-of-00001.parquet", f"toy/{PARQUET}"]
    assert capsys.readouterr().out.strip().endswith("https://example.invalid/commit/1")


def test_push_dry_run_lists_uploads_and_deletions(tmp_path, fake_api, capsys):
    out = tmp_path / "hub"
    assert build("--config", "toy", "--out", str(out)) == 0
    capsys.readouterr()
    assert main(["push", str(out), "--repo-id", "org/dialshift", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "would upload 4 files" in printed and "would delete 0 remote files" in printed
    assert "would keep 3 remote parquet/provenance files not in this folder" in printed
    assert main(["push", str(out), "--repo-id", "org/dialshift", "--dry-run", "--delete-remote-extras"]) == 0
    printed = capsys.readouterr().out
    assert "would delete 3 remote files:" in printed and f"  other_family/{PARQUET}" in printed
    assert ".gitattributes" not in printed
    assert not hasattr(fake_api, "deleted")  # a dry run commits nothing


def test_deleting_remote_extras_needs_the_flag_and_spares_other_files(tmp_path, fake_api):
    out = tmp_path / "hub"
    assert build("--config", "toy", "--out", str(out)) == 0
    assert main(["push", str(out), "--repo-id", "org/dialshift", "--delete-remote-extras"]) == 0
    assert fake_api.deleted == [f"other_family/{PARQUET}", f"toy_swap_0.5/{PARQUET}", f"toy_swap_1.0/{PARQUET}"]


def test_deleting_remote_extras_deletes_the_provenance_of_configs_not_pushed(tmp_path, monkeypatch):
    api = FakeHubApi([*REMOTE, "other_family/dialshift_provenance.json", "toy/dialshift_provenance.json"])
    monkeypatch.setattr("dialshift.hub.push.make_api", lambda token=None: api)
    out = tmp_path / "hub"
    assert build("--config", "toy", "--out", str(out)) == 0
    assert main(["push", str(out), "--repo-id", "org/dialshift", "--delete-remote-extras"]) == 0
    assert "other_family/dialshift_provenance.json" in api.deleted and "toy/dialshift_provenance.json" in api.uploaded


def test_a_symlinked_config_folder_is_uploaded_not_deleted(built, tmp_path, fake_api):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(built / "toy_swap_0.5", elsewhere)
    (built / "toy_swap_0.5").symlink_to(elsewhere, target_is_directory=True)
    assert main(["validate", str(built)]) == 0
    assert main(["push", str(built), "--repo-id", "org/dialshift", "--delete-remote-extras"]) == 0
    assert fake_api.uploaded[f"toy_swap_0.5/{PARQUET}"] == (elsewhere / PARQUET).read_bytes()
    assert fake_api.deleted == [f"other_family/{PARQUET}"]
    # a rebuild of another config keeps it (copied into the folder) and never deletes the symlink's target
    assert build("--config", "toy", "--out", str(built)) == 0
    assert (elsewhere / PARQUET).is_file() and (built / "toy_swap_0.5" / PARQUET).is_file()


# ----------------------------------------------------------------------------------------------- 2. validation


def test_validate_catches_parquet_files_swapped_between_configs(built, capsys):
    a, b = built / "toy_swap_0.5" / PARQUET, built / "toy_swap_1.0" / PARQUET
    a_bytes, b_bytes = a.read_bytes(), b.read_bytes()
    a.write_bytes(b_bytes)
    b.write_bytes(a_bytes)  # same features, same 40 rows: only the fingerprint tells
    assert main(["validate", str(built)]) == 2
    line = one_line_error(capsys, "validate")
    assert "swapped with another config's file" in line and "dialshift build --config toy_swap_0.5" in line


@pytest.mark.parametrize("command", ["validate", "push", "build"])
def test_a_truncated_parquet_file_is_one_line_naming_the_file_and_the_fix(built, capsys, command, fake_api):
    damaged = built / "toy" / PARQUET
    damaged.write_bytes(damaged.read_bytes()[:100])
    argv = {"validate": ["validate", str(built)],
            "push": ["push", str(built), "--repo-id", "org/dialshift", "--dry-run"],
            "build": ["build", "--family", "toyfam", "--no-progress", "--config", "toy_swap_1.0", "--out",
                      str(built)]}[command]
    assert main(argv) == 2
    line = one_line_error(capsys, command)
    assert f"toy/{PARQUET}: not a readable parquet file, truncated or damaged" in line
    assert f"rebuild that config: dialshift build --config toy --out {built}" in line
    assert build("--config", "toy", "--out", str(built)) == 0  # the fix the line names works
    assert main(["validate", str(built)]) == 0


@pytest.mark.parametrize("command", ["validate", "push", "build"])
def test_a_declared_config_with_missing_files_is_one_line(built, capsys, command, fake_api):
    shutil.rmtree(built / "toy_swap_0.5")
    argv = {"validate": ["validate", str(built)],
            "push": ["push", str(built), "--repo-id", "org/dialshift", "--dry-run"],
            "build": ["build", "--family", "toyfam", "--no-progress", "--config", "toy", "--out", str(built)]}[command]
    assert main(argv) == 2
    line = one_line_error(capsys, command)
    # the first file of the config (its lite split sorts before its test split)
    assert "toy_swap_0.5/lite-00000-of-00001.parquet: file is missing" in line
    assert "dialshift build --config toy_swap_0.5" in line


@pytest.mark.parametrize("path", ["../outside/*.parquet", "/tmp/outside/*.parquet"])
@pytest.mark.parametrize("command", ["validate", "push"])
def test_data_files_outside_the_folder_are_refused(built, capsys, path, command, fake_api):
    card = built / "README.md"
    card.write_text(card.read_text().replace("path: toy/test-*", f"path: {path}", 1))
    argv = ["validate", str(built)] if command == "validate" else \
        ["push", str(built), "--repo-id", "org/dialshift", "--dry-run"]
    assert main(argv) == 2
    assert "points outside the dataset folder; a dataset folder only reads files inside itself" in \
        one_line_error(capsys, command)


# ----------------------------------------------------------------------------------------------- 3. one line


@pytest.mark.parametrize("repo_id", ["noslash", "a/b/c", "org/bad name", "/name", "org/"])
@pytest.mark.parametrize("dry_run", [True, False])
def test_push_with_a_bad_repo_id_is_one_line_before_any_work(built, capsys, repo_id, dry_run, fake_api):
    assert main(["push", str(built), "--repo-id", repo_id, *(["--dry-run"] if dry_run else [])]) == 2
    assert "--repo-id" in one_line_error(capsys, "push")
    assert fake_api.calls == []


def test_push_upload_failure_is_one_line(built, capsys, fake_api):
    def refuse(*args, **kwargs):
        raise ConnectionError("connection reset by peer\nsecond line")

    fake_api.create_commit = refuse
    assert main(["push", str(built), "--repo-id", "org/dialshift"]) == 2
    assert "upload to org/dialshift failed: ConnectionError: connection reset by peer second line" in \
        one_line_error(capsys, "push")


@pytest.mark.parametrize("command", ["build", "sources"])
def test_data_dir_pointing_at_a_file_says_so(tmp_path, capsys, command):
    a_file = tmp_path / "data.zip"
    a_file.write_bytes(b"PK")
    argv = ["build", "--family", "toyfam", "--data-dir", str(a_file)] if command == "build" else \
        ["sources", "--data-dir", str(a_file)]
    assert main(argv) == 2
    assert f"data directory {a_file} (--data-dir) is a file, not a directory" in one_line_error(capsys, command)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["build", "--family", "toyfam", "--out", "{tmp}/file"], "exists and is not a directory"),
        (["build", "--family", "toyfam", "--out", "{tmp}/file/hub"], "cannot create output directory"),
        (["validate", "{tmp}/file"], "is not a directory"),
        (["validate", "{tmp}"], "no dataset card"),
        (["push", "{tmp}/nope", "--repo-id", "org/x", "--dry-run"], "is not a directory"),
        (["sources", "nosuch"], "unknown source(s) nosuch"),
        (["configs", "--family", "nofam"], "unknown family 'nofam'"),
    ],
)
def test_careless_paths_and_names_are_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "file").write_text("x")
    assert main([arg.replace("{tmp}", str(tmp_path)) for arg in argv]) == 2
    assert message in one_line_error(capsys, argv[0])


def test_an_unreadable_card_is_one_line(built, capsys):
    (built / "README.md").write_text("---\nconfigs: [unclosed\n---\nbody\n")
    assert main(["validate", str(built)]) == 2
    assert "unreadable card front matter" in one_line_error(capsys, "validate")


def test_sources_reports_damaged_corpora_in_its_table_and_one_error_line(tmp_path, capsys):
    data = tmp_path / "bad"
    (data / "clinc150" / "data_small.json").mkdir(parents=True)  # a folder where a file belongs
    (data / "clinc150" / "data_full.json").write_text('{"train": [["a"')  # truncated JSON
    (data / "korean_chitchat" / "songys_Chatbot_data").mkdir(parents=True)
    (data / "korean_chitchat" / "songys_Chatbot_data" / "ChatbotData.csv").write_bytes(b"\xff\xfe\x00binary")
    (data / "dailydialog").write_text("a file where a folder belongs")
    names = ["clinc150_full", "clinc150_small", "chatbotdata", "dailydialog"]
    assert main(["sources", *names, "--data-dir", str(data)]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1 and "4 of 4 sources failed" in captured.err
    assert "data_full.json:1: invalid JSON" in captured.out and "not valid utf-8" in captured.out


def test_a_deeply_nested_input_is_one_line_not_a_traceback(tmp_path, capsys):
    data = tmp_path / "deep"
    (data / "clinc150").mkdir(parents=True)
    (data / "clinc150" / "data_oos_plus.json").write_text("[" * 1_000_000)
    assert main(["sources", "clinc150_oos_plus", "--data-dir", str(data)]) == 2
    one_line_error(capsys, "sources")  # the reader may report it in its table or the CLI net catches it
