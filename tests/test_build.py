"""The library build entry point `dialshift.build.build`: what it returns, its options, and that the CLI and
`load_dataset` go through it (same bytes as `dialshift build`). Offline, on the toy family (tests/toy_family.py)."""

import hashlib

import pytest

from dialshift.build import BuildSummary, build
from dialshift.cli import main
from dialshift.errors import DialshiftError


@pytest.fixture
def data(toy_plugin, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


def digests(folder):
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*.parquet"))}


def test_build_returns_what_it_built_and_kept(data, tmp_path, capsys):
    out = tmp_path / "out"
    first = build("toy_swap_*", data, out, progress=False)
    assert isinstance(first, BuildSummary)
    assert first.folder == out.absolute() and first.built == ("toy_swap_0.5", "toy_swap_1.0") and first.kept == ()
    second = build(["toy"], data, out, progress=False)
    assert second.built == ("toy",) and second.kept == ("toy_swap_0.5", "toy_swap_1.0")
    assert second.configs == ("toy", "toy_swap_0.5", "toy_swap_1.0")
    assert dict(second.family_of) == dict.fromkeys(second.configs, "toyfam")
    assert capsys.readouterr().out == ""  # the library prints nothing; the CLI prints the summary
    import datasets

    assert len(datasets.load_dataset(str(out), "toy", split="test")) == 40
    third = build(["toy", "toy_swap_*"], data, out, {"toyfam": {"toy_cases": 6}}, progress=False)
    assert third.built == ("toy", "toy_swap_0.5", "toy_swap_1.0") and third.kept == ()


def test_a_folder_never_mixes_configs_built_with_other_options(data, tmp_path):
    from dialshift.hub import folder_metadata, validate_hub_folder

    out = tmp_path / "out"
    build("toy_swap_*", data, out, progress=False)
    before = {path: path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}
    for options, seed, difference in (({"toyfam": {"toy_cases": 6}}, 0, "toy_cases 40 vs 6"),
                                      (None, 1, "seed 0 vs 1")):
        with pytest.raises(DialshiftError, match=rf"holds toy_swap_0.5, toy_swap_1.0 built with other options than "
                                                 rf"this build \(folder vs this build: {difference}\)"):
            build("toy", data, out, options, seed=seed, progress=False)
        assert {path: path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()} == before
    identities = {name: entry["identity"] for name, entry in folder_metadata(out).items()}
    assert identities["toy_swap_0.5"]["options"] == {"toy_cases": 40, "toy_model": None}
    assert identities["toy_swap_0.5"]["options_digest"] != identities["toy_swap_1.0"]["options_digest"]
    other = build("toy_swap_0.5", data, tmp_path / "other", {"toyfam": {"toy_cases": 6}}, progress=False)
    assert folder_metadata(other.folder)["toy_swap_0.5"]["identity"]["options_digest"] != \
        identities["toy_swap_0.5"]["options_digest"]
    assert validate_hub_folder(out).ok
    card = out / "README.md"
    assert card.read_text().count("toy_cases: 40") == 2
    card.write_text(card.read_text().replace("toy_cases: 40", "toy_cases: 6", 1))  # one config's options edited
    problems = validate_hub_folder(out).problems
    assert any("options_digest" in line and "is not the digest of the options it records" in line for line in problems)
    assert any("family 'toyfam' has configs built with different options" in line for line in problems)


def test_the_cli_and_the_library_write_the_same_bytes(data, tmp_path, capsys):
    library = build(None, data, tmp_path / "lib", families="toyfam", seed=3, progress=False)
    assert main(["build", "--family", "toyfam", "--data-dir", str(data), "--out", str(tmp_path / "cli"), "--seed", "3",
                 "--no-progress"]) == 0
    assert f"{len(library.built)} config(s) built" in capsys.readouterr().out
    assert digests(tmp_path / "lib") == digests(tmp_path / "cli") and len(digests(tmp_path / "lib")) >= 3


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"options": {"toyfam": {"toy_case": 3}}}, r"family 'toyfam' has no option 'toy_case'; its options are"),
    ({"options": {"nofam": {}}}, r"options given for unknown family 'nofam'"),
    ({"options": {"toyfam": 3}}, r"expected a ToyOptions or a mapping, got int"),
    ({"num_proc": 0}, r"num_proc must be at least 1, got 0"),
    ({"configs": "nothing_*"}, r"nothing_\*"),
])
def test_bad_arguments_are_one_line_errors(data, tmp_path, kwargs, message):
    with pytest.raises(DialshiftError, match=message):
        build(**{"configs": "toy", "data_dir": data, "out": tmp_path / "out", "progress": False, **kwargs})
    assert not (tmp_path / "out").exists()


def test_load_dataset_builds_through_the_library(data, tmp_path, monkeypatch, capsys):
    import dialshift
    import dialshift.build

    calls = []
    real = dialshift.build.build

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DIALSHIFT_HUB_REPO", "org/not-pushed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(dialshift.build, "build", spy)
    assert len(dialshift.load_dataset("toy", data_dir=data, progress=False)["test"]) == 40
    assert len(calls) == 1 and calls[0][0][0] == ["toy"]
    assert capsys.readouterr().out == ""
