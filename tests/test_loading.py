"""Loading by name: `dialshift.load_dataset` (build on demand into the cache, the Hub's files in the HF cache, a
folder), every usage line of the built card, and `evaluate.load` of a metric module from any folder. Offline, on
the toy family (tests/toy_family.py)."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dialshift
from dialshift import loading
from dialshift.cli import main
from dialshift.errors import DialshiftError

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def offline_cache(toy_plugin, tmp_path, monkeypatch):
    """The toy family installed, a fresh build cache, a raw-data folder, and an empty working folder."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("DIALSHIFT_DATA_DIR", str(data))
    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DIALSHIFT_HUB_REPO", "org/not-pushed")
    work = tmp_path / "empty"
    work.mkdir()
    monkeypatch.chdir(work)
    return tmp_path


def test_import_dialshift_stays_light():
    code = "import sys, dialshift; assert callable(dialshift.load_dataset); print('datasets' in sys.modules)"
    lazy = "import sys, dialshift; print('datasets' in sys.modules)"
    for snippet, expected in ((lazy, "False"), (code, "False")):
        result = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120)
        assert result.stdout.strip() == expected, result.stderr


def test_a_config_is_built_on_demand_once_then_read_from_the_cache(offline_cache, monkeypatch, capsys):
    data = dialshift.load_dataset("toy_swap_0.5")
    assert sorted(data) == ["lite", "test"] and len(data["test"]) == 40 and len(data["lite"]) == 40
    assert "building config 'toy_swap_0.5'" in capsys.readouterr().err
    folder = loading.cache_folder()
    assert folder.parent == offline_cache / "cache" and (folder / "toy_swap_0.5").is_dir()

    def no_build(*args, **kwargs):
        raise AssertionError("built again")

    monkeypatch.setattr(loading, "build_config", no_build)
    again = dialshift.load_dataset("toy_swap_0.5", split="test")
    assert again["id"] == data["test"]["id"]
    monkeypatch.chdir(REPO_ROOT)  # the repository root holds a `dialshift/` package folder: no confusion
    assert len(dialshift.load_dataset("toy_swap_0.5")["test"]) == 40
    with pytest.raises(DialshiftError, match="is not built"):
        dialshift.load_dataset("toy", build=False)


def test_unknown_config_and_missing_data_are_one_line(monkeypatch, offline_cache):
    with pytest.raises(DialshiftError, match=r"no dialshift config 'toy_swap_05'; did you mean toy_swap_0.5"):
        dialshift.load_dataset("toy_swap_05")
    monkeypatch.setenv("DIALSHIFT_DATA_DIR", str(offline_cache / "nowhere"))
    with pytest.raises(DialshiftError, match="data directory .* does not exist"):
        dialshift.load_dataset("toy")
    with pytest.raises(DialshiftError, match="not in the Hugging Face cache and the Hub is offline"):
        dialshift.load_dataset("toy", source="hub")


class MirrorApi:
    """A fake Hub whose commits land in a local folder: the mirror of the pushed files."""

    def __init__(self, mirror: Path):
        self.mirror = mirror

    def create_repo(self, *args, **kwargs):
        pass

    def list_repo_files(self, *args, **kwargs):
        return []

    def create_commit(self, repo_id, operations, **kwargs):
        for op in operations:
            target = self.mirror / op.path_in_repo
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(Path(op.path_or_fileobj).read_bytes())
        return "https://example.invalid/commit"


def hub_cache_snapshot(repo_id: str, mirror: Path) -> Path:
    """Put the mirror into the Hugging Face cache as the repo's snapshot (what an online load leaves there)."""
    from huggingface_hub import constants

    repo = Path(constants.HF_HUB_CACHE) / f"datasets--{repo_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(mirror, repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return repo


def pushed_toy_folder(root: Path, monkeypatch, repo_id: str) -> tuple[Path, Path]:
    """``(folder, mirror)``: the toy family built into ``root/built`` and pushed to ``repo_id`` on a fake Hub whose
    files land in ``root/mirror``."""

    folder, mirror = root / "built", root / "mirror"
    assert main(["build", "--family", "toyfam", "--no-progress", "--out", str(folder)]) == 0
    monkeypatch.setattr("dialshift.hub.push.make_api", lambda token=None: MirrorApi(mirror))
    assert main(["push", str(folder), "--repo-id", repo_id]) == 0
    return folder, mirror


def test_every_usage_line_of_the_built_card_works(offline_cache, monkeypatch):
    import datasets

    from dialshift import hub

    folder, mirror = pushed_toy_folder(offline_cache, monkeypatch, "org/dialshift-pushed")
    assert sorted(p.relative_to(mirror).as_posix() for p in mirror.rglob("*") if p.is_file()) == \
        sorted(hub.upload_plan(folder))
    cache_repo = hub_cache_snapshot("org/dialshift-pushed", mirror)
    for name, entry in hub.folder_metadata(folder).items():
        provenance = json.loads((mirror / name / "dialshift_provenance.json").read_text())
        assert provenance["config"] == name and provenance["options_digest"] == entry["identity"]["options_digest"]

    card = (folder / "README.md").read_text()
    block = re.search(r"## Usage\n\n```python\n(.*?)```", card, re.S)[1]
    lines = [line.split("#")[0].strip() for line in block.splitlines() if "load_dataset(" in line]
    assert len(lines) == 4, lines
    example = re.search(r'"(toy[^"]*)"\)', lines[0])[1]
    loaded = []
    for line in lines:
        # The Hub forms name the pushed repository. Plain `datasets` cannot read a Hub repository offline, so its
        # Hub line runs on the mirror of the pushed files (the repository's content); dialshift's Hub line runs as
        # written, reading the repository's files from the Hugging Face cache.
        plain_datasets = line.startswith("data = load_dataset(")
        code = line.replace("ORG/dialshift", str(mirror) if plain_datasets else "org/dialshift-pushed")
        code = code.replace("/path/to/built/folder", str(folder))
        namespace = {"dialshift": dialshift, "load_dataset": datasets.load_dataset}
        exec(code, namespace)
        loaded.append(namespace["data"])
    assert all(sorted(data) == ["lite", "test"] and data["test"]["id"] == loaded[-1]["test"]["id"] for data in loaded)
    # only the first line (no repository of that name anywhere) built its config; the Hub line read the HF cache
    assert sorted(hub.declared_configs(loading.cache_folder())) == [example]
    shutil.rmtree(cache_repo)
    with pytest.raises(DialshiftError, match="not in the Hugging Face cache"):
        dialshift.load_dataset("org/dialshift-pushed", example, source="hub")


def test_a_metric_module_loads_from_any_folder(tmp_path):
    code = ("import dialshift, evaluate; m = evaluate.load(dialshift.metric_path('ece')); "
            "r = m.compute(predictions=[[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], references=[0, 1, 1], n_bins=5); "
            "import json; print(json.dumps(round(r['ece'], 4)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == 0.3
    with pytest.raises(DialshiftError, match="no dialshift metric 'accuracy'"):
        dialshift.metric_path("accuracy")


def test_an_explicit_repository_or_revision_is_served_exactly_or_refused(offline_cache, capsys):
    with pytest.raises(DialshiftError) as error:
        dialshift.load_dataset("someorg/typo-repo", "toy")
    message = str(error.value)
    assert message.startswith("cannot load 'someorg/typo-repo' config 'toy': not in the Hugging Face cache and the "
                              "Hub is offline") and "\n" not in message
    assert "available: no revision of someorg/typo-repo in the Hugging Face cache" in message
    with pytest.raises(DialshiftError, match=r"^cannot load 'someorg/typo-repo' config 'uw_0.30': not in the Hugging "
                                             r"Face cache and the Hub is offline \(HF_HUB_OFFLINE\); available: "):
        dialshift.load_dataset("someorg/typo-repo", "uw_0.30")
    for call in (lambda: dialshift.load_dataset("toy", revision="deadbeef"),
                 lambda: dialshift.load_dataset("toy", repo_id="someorg/typo-repo"),
                 lambda: dialshift.load_dataset("someorg/typo-repo", "toy", source="build")):
        with pytest.raises(DialshiftError):
            call()
    assert not loading.cache_folder().exists()  # nothing was built in place of the asked data
    assert "building" not in capsys.readouterr().err


def test_a_hub_revision_is_loaded_at_that_commit_and_says_so(offline_cache, monkeypatch):
    _, mirror = pushed_toy_folder(offline_cache, monkeypatch, "org/pushed")
    hub_cache_snapshot("org/pushed", mirror)
    commit = "0123456789abcdef0123456789abcdef01234567"
    for data in (dialshift.load_dataset("org/pushed", "toy"), dialshift.load_dataset("org/pushed", "toy",
                                                                                      revision=commit)):
        description = data["test"].info.description
        assert f"from Hugging Face Hub dataset org/pushed at commit {commit}" in description
        assert f"options {loading.default_identity('toy')}" in description
    with pytest.raises(DialshiftError, match=r"at revision 'deadbeef': .*available: revisions of org/pushed in the "
                                             r"Hugging Face cache: main=0123456789ab"):
        dialshift.load_dataset("org/pushed", "toy", revision="deadbeef")
    with pytest.raises(DialshiftError, match=r"commit 0123456789ab of org/pushed has no intact config 'toy_model' "
                                             r"\(it has: toy, toy_swap_0.5, toy_swap_1.0, toy_vote\)"):
        dialshift.load_dataset("org/pushed", "toy_model")


def test_a_build_with_other_options_never_answers_a_default_request(offline_cache, capsys):
    from dialshift.build import build
    from dialshift.hub import folder_metadata

    folder = loading.cache_folder()
    build("toy", None, folder, {"toyfam": {"toy_cases": 6}}, progress=False)  # e.g. `--uw-rules sense` for uw_0.30
    data = dialshift.load_dataset("toy")
    assert len(data["test"]) == 40 and "building config 'toy'" in capsys.readouterr().err
    assert folder_metadata(folder)["toy"]["identity"]["options_digest"] == loading.default_identity("toy")
    assert "from a local build in" in data["test"].info.description
    build(["toy", "toy_swap_0.5"], None, folder, {"toyfam": {"toy_cases": 6}}, progress=False)
    with pytest.raises(DialshiftError, match=r"^the build cache .* holds toy_swap_0.5 built with other options than "
                                             r"this build .*: remove .* \(it is rebuilt on demand\)"):
        dialshift.load_dataset("toy")  # rebuilding toy alone would mix options in the folder: refused
    with pytest.raises(DialshiftError, match="is not built with the default options"):
        dialshift.load_dataset("toy", build=False)


def test_sense_rules_give_uw_configs_another_identity():
    from dialshift import registry
    from dialshift.identity import config_identity

    family = registry.families()["dailydialog"]
    (uw,) = [config for config in family.configs() if config.name == "uw_0.30"]
    sense = config_identity("dailydialog", family.options_class(uw_rules="sense"), 0, uw.to_dict())
    assert sense["options"]["uw_rules"] == "sense"
    assert sense["options_digest"] != loading.default_identity("uw_0.30")
