"""Shared test set-up: offline Hugging Face caches per session, a headless matplotlib, the raw-data fixture."""

import os
import tempfile
from pathlib import Path

import pytest

_SESSION_HOME = tempfile.mkdtemp(prefix="dialshift-tests-hf-")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ["HF_HOME"] = _SESSION_HOME
os.environ.setdefault("MPLBACKEND", "Agg")

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def raw_data_missing() -> str | None:
    """Why the real raw corpora (``$DIALSHIFT_DATA_DIR`` or ``../shared/data``) cannot be used, or None."""
    from dialshift.sources.manifest import shipped_manifest

    path = Path(os.environ.get("DIALSHIFT_DATA_DIR", SHARED_DATA))
    if not path.is_dir():
        return f"raw data not found at {path}"
    if not any((path / corpus).is_dir() for corpus in shipped_manifest()):
        return f"no raw corpus in {path} (`dialshift download --data-dir {path}` fetches them)"
    return None


def pytest_collection_modifyitems(config, items):
    """Tests marked ``data`` skip, with the reason, on a machine without the raw corpora."""
    marked = [item for item in items if item.get_closest_marker("data")]
    reason = raw_data_missing() if marked else None
    for item in marked if reason else ():
        item.add_marker(pytest.mark.skip(reason=f"{reason} (test marked `data`)"))


@pytest.fixture(scope="session")
def raw_data_dir() -> Path:
    """The real raw corpora (``$DIALSHIFT_DATA_DIR`` or ``../shared/data``); skips the test when absent."""
    reason = raw_data_missing()
    if reason:
        pytest.skip(reason)
    return Path(os.environ.get("DIALSHIFT_DATA_DIR", SHARED_DATA))


@pytest.fixture
def no_raw_data(tmp_path_factory, monkeypatch):
    """A machine without raw corpora: no ``$DIALSHIFT_DATA_DIR``, no ``../shared/data`` and an empty cache."""
    from dialshift import data_dir

    nowhere = tmp_path_factory.mktemp("no-raw-data")
    monkeypatch.delenv("DIALSHIFT_DATA_DIR", raising=False)
    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(nowhere / "cache"))
    monkeypatch.setattr(data_dir, "_default_candidates", lambda: [nowhere / "shared" / "data", data_dir.download_dir()])
    return nowhere


def install_toy_plugin(site: Path) -> Path:
    """Write a distribution whose only content is a ``dialshift.families`` entry point to ``toy_family:ToyFamily``
    and a ``dialshift.tasks`` one to ``toy_family:ToyVote`` (tests/toy_family.py) into ``site``; put ``site`` and
    tests/ on the path to install it."""
    dist = site / "dialshift_toy_family-0.1.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: dialshift-toy-family\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[dialshift.families]\ntoyfam = toy_family:ToyFamily\n\n"
                                           "[dialshift.tasks]\ntoy_vote = toy_family:ToyVote\n")
    return site


@pytest.fixture
def toy_plugin(tmp_path_factory, monkeypatch):
    """The toy family installed as a plug-in for this test (in-process and for subprocesses via PYTHONPATH)."""
    from dialshift import registry
    from dialshift.scoring.tasks import reset_tasks

    site = install_toy_plugin(tmp_path_factory.mktemp("plugin-site"))
    monkeypatch.syspath_prepend(str(TESTS_DIR))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]))
    registry.reset()
    reset_tasks()
    yield site
    registry.reset()
    reset_tasks()


# ----------------------------------------------------------------------------------------------- hostile-case helpers


def toy_build(*argv):
    """``dialshift build`` of the toy family (the ``toy_plugin`` fixture installs it) with ``argv``; its exit status."""
    from dialshift.cli import main

    return main(["build", "--family", "toyfam", "--no-progress", *argv])


def one_line_error(capsys, command=None):
    """The one line a failed command wrote to stderr (asserted to be one, starting ``dialshift COMMAND: error:``)."""
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    if command:
        assert err[0].startswith(f"dialshift {command}: error: "), err[0]
    return err[0]


def tree(folder):
    """``{relative path: bytes}`` of every file under ``folder``, hidden ones and symlinks (as their target's
    bytes) included."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
