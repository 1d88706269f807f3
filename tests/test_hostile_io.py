"""Hostile and careless input against the writers and readers of folders: rebuilds of damaged dataset folders,
`score`/`evaluate`/trainer outputs over what the user owns, path-like arguments to `dialshift.load_dataset`, and
one-line errors (exit 2) for bad trainer and plot arguments.

Each data-loss case builds a real folder with `dialshift build` (the toy family plug-in, tests/toy_family.py, stands
in for the real families: the same builder code, seconds instead of minutes) and damages it the way a user would.
"""

import os
import re
import shutil
import stat

import pytest
from conftest import one_line_error, tree
from conftest import toy_build as build

import dialshift
from dialshift import hub, loading
from dialshift.cli import main
from dialshift.errors import DialshiftError

PARQUET = "test-00000-of-00001.parquet"


@pytest.fixture(autouse=True)
def toy_family(toy_plugin, monkeypatch, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("DIALSHIFT_DATA_DIR", str(data))
    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DIALSHIFT_HUB_REPO", "org/not-pushed")


@pytest.fixture
def built(tmp_path, capsys):
    """A real folder holding two configs, toy and toy_swap_0.5."""
    out = tmp_path / "hub"
    assert build("--config", "toy", "--config", "toy_swap_0.5", "--out", str(out)) == 0
    capsys.readouterr()
    return out


# ----------------------------------------------------------------------------------------------- rebuilds


def test_a_rebuild_without_the_card_refuses_instead_of_dropping_configs(built, capsys):
    (built / "README.md").unlink()
    before = tree(built)
    assert build("--config", "toy_swap_1.0", "--out", str(built)) == 2
    line = one_line_error(capsys, "build")
    assert "README.md is missing" in line and "toy, toy_swap_0.5" in line
    assert f"--config toy --config toy_swap_0.5 --config toy_swap_1.0 --out {built}" in line
    assert tree(built) == before
    # the advice works: rebuilding them together gives a whole folder again
    assert build("--config", "toy", "--config", "toy_swap_0.5", "--config", "toy_swap_1.0", "--out", str(built)) == 0
    assert sorted(hub.declared_configs(built)) == ["toy", "toy_swap_0.5", "toy_swap_1.0"]


def test_a_card_lacking_one_configs_entry_refuses_instead_of_dropping_it(built, capsys):
    card = hub.read_card(built)
    card.data["configs"] = [entry for entry in card.data["configs"] if entry["config_name"] != "toy_swap_0.5"]
    card.data["dataset_info"] = [entry for entry in card.data["dataset_info"] if entry["config_name"] != "toy_swap_0.5"]
    card.save(built / "README.md")
    assert "toy_swap_0.5" not in hub.declared_configs(built)
    before = tree(built)
    assert build("--config", "toy", "--out", str(built)) == 2
    line = one_line_error(capsys, "build")
    assert "does not declare toy_swap_0.5" in line and "restore README.md" in line
    assert tree(built) == before and (built / "toy_swap_0.5" / PARQUET).is_file()


def test_after_rm_rf_the_users_new_readme_is_never_replaced(built, capsys):
    for path in built.iterdir():  # `rm -rf DIR/*`: the hidden marker survives
        if not path.name.startswith("."):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    assert (built / hub.MARKER).is_file()
    (built / "README.md").write_text("# My own project\n\nnotes I care about\n")
    before = tree(built)
    assert build("--config", "toy", "--out", str(built)) == 2
    line = one_line_error(capsys, "build")
    assert "is not the card dialshift wrote" in line and hub.MARKER in line
    assert tree(built) == before
    # without the user's README the marker alone still does not vouch for the configs it lists
    (built / "README.md").unlink()
    assert build("--config", "toy", "--out", str(built)) == 2
    assert "delete" in one_line_error(capsys, "build")


def test_an_unreadable_card_gives_advice_that_works(built, capsys):
    (built / "README.md").write_text("---\nconfigs: [unclosed\n---\nbody\n")
    assert main(["validate", str(built)]) == 2
    line = one_line_error(capsys, "validate")
    assert "unreadable card front matter" in line and "move it aside" in line
    command = line.split("rebuild the folder's configs: ")[1]
    assert command == f"dialshift build --config toy --config toy_swap_0.5 --out {built}"
    assert build("--config", "toy", "--out", str(built)) == 2  # the unreadable card is never replaced
    assert "cannot read" in one_line_error(capsys, "build")
    os.rename(built / "README.md", built / "README.broken")
    assert main(command.split()[1:] + ["--no-progress"]) == 0
    assert hub.validate_hub_folder(built).ok
    assert (built / "README.broken").is_file()


def test_a_rebuild_keeps_the_folders_permissions(built):
    os.chmod(built, 0o700)
    assert build("--config", "toy", "--out", str(built)) == 0
    assert stat.S_IMODE(built.stat().st_mode) == 0o700


def test_stale_cleanup_removes_only_names_it_made(built):
    parent = built.parent
    ours = [parent / ".hub.tmp-999999999-0a1b2c3d", parent / ".hub.old-999999999-deadbeef"]
    users = [parent / ".hub.tmp-mine", parent / ".hub.old-2024-backup", parent / ".hub.tmp-1-notes.txt"]
    for path in ours + users:
        (path / "toy").mkdir(parents=True)
        (path / "toy" / "data.txt").write_text("x")
    assert build("--config", "toy", "--out", str(built)) == 0
    assert not any(path.exists() for path in ours)
    assert all((path / "toy" / "data.txt").read_text() == "x" for path in users)


def test_a_swap_killed_between_its_renames_names_the_folder_holding_the_data(built, capsys):
    old = built.parent / ".hub.old-999999999-0a1b2c3d"
    os.rename(built, old)  # the state a SIGKILL between the swap's two renames leaves
    assert main(["validate", str(built)]) == 2
    line = one_line_error(capsys, "validate")
    assert str(old) in line and f"mv {old} {built}" in line
    with pytest.raises(DialshiftError, match=r"\.hub\.old-999999999-0a1b2c3d holds its data"):
        dialshift.load_dataset(str(built), "toy")
    assert build("--config", "toy_swap_1.0", "--out", str(built)) == 0  # restored, then merged
    assert sorted(hub.declared_configs(built)) == ["toy", "toy_swap_0.5", "toy_swap_1.0"]


# ----------------------------------------------------------------------------------------------- loading


@pytest.mark.parametrize("kind", ["missing", "file", "typo", "dotted", "home", "absolute"])
def test_a_path_like_argument_never_falls_back_to_a_build(built, tmp_path, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")

    def no_build(*args, **kwargs):
        raise AssertionError("a path-like argument was answered by a build")

    monkeypatch.setattr(loading, "build_config", no_build)
    path = {"missing": str(tmp_path / "nowhere"), "file": "afile", "typo": None, "dotted": "./hbu",
            "home": "~/no-such-dialshift-folder", "absolute": "/no/such/folder"}[kind]
    if kind == "typo":  # build/ holds the dataset folder dialshift: build/dialshfit is a typo of it
        (tmp_path / "build").mkdir()
        built.rename(tmp_path / "build" / "dialshift")
        path = "build/dialshfit"
    with pytest.raises(DialshiftError, match="a path is loaded only from a dataset folder") as error:
        dialshift.load_dataset(path, "toy")
    assert "\n" not in str(error.value)
    with pytest.raises(DialshiftError):
        dialshift.load_dataset(path)
    assert not loading.cache_folder().exists()


def test_a_hub_repo_id_and_a_config_name_are_not_path_like(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dialshift").mkdir()  # a folder named like the org (the repository root has a package folder)
    assert not loading.path_like("dialshift/dialshift")
    assert not loading.path_like("org/name") and not loading.path_like("uw_0.30")
    assert loading.path_like("a/b/c") and loading.path_like("./x") and loading.path_like("~/x")


# ----------------------------------------------------------------------------------------------- writers' outputs


def toy_predictions(folder, built):
    """A submission folder for the configs of ``built``: always the first candidate."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    for name in hub.declared_configs(built):
        ids = [f"toy-{k:03d}" for k in range(40)]
        lines = [json.dumps({"id": uid, "scores": [1.0, 0.0]}) for uid in ids]
        (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def score(predictions, built, *argv):
    return main(["score", str(predictions), "--dataset", str(built), "--bootstrap", "20", "--no-plots",
                 "--no-progress", *argv])


def test_score_never_writes_over_the_users_results(built, tmp_path, capsys):
    predictions = toy_predictions(tmp_path / "submission", built)
    mine = tmp_path / "mine"
    (mine / "plots").mkdir(parents=True)
    (mine / "results.md").write_text("my hand-written results\n")
    (mine / "results.json").write_text('{"mine": true}\n')
    (mine / "plots" / "shift_toy_swap.png").write_bytes(b"my figure")
    before = tree(mine)
    assert score(predictions, built, "--out", str(mine)) == 2
    line = one_line_error(capsys, "score")
    assert "results.json, results.md" in line and "never writes over them" in line
    assert tree(mine) == before
    # a new folder, then the same folder again (its marker says dialshift wrote it)
    assert score(predictions, built, "--out", str(tmp_path / "new")) == 0
    assert score(predictions, built, "--out", str(tmp_path / "new")) == 0
    # the default --out (the predictions folder itself) holds only the predictions: fine, then marked
    assert score(predictions, built) == 0 and score(predictions, built) == 0
    assert (predictions / "results.json").is_file()


def test_evaluate_never_writes_over_the_users_results(built, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.md").write_text("my notes\n")
    assert main(["evaluate", "--model-dir", str(tmp_path / "nomodel"), "--dataset", str(built), "--out", str(mine),
                 "--no-progress"]) == 2
    assert "never writes over them" in one_line_error(capsys, "evaluate")
    assert (mine / "results.md").read_text() == "my notes\n"


@pytest.fixture(scope="module")
def ranker_dataset(tmp_path_factory):
    from test_ranker import make_dataset_folder

    return make_dataset_folder(tmp_path_factory.mktemp("ranker-data") / "dialshift")


def train_ranker(dataset, output_dir, *argv):
    import trainers.ranker as ranker

    return ranker.main(["--dataset", str(dataset), "--output-dir", str(output_dir), "--max-length", "32",
                        "--batch-size", "4", "--max-steps", "1", "--no-progress", *argv])


def test_a_trainer_never_writes_over_its_input_or_a_foreign_model(ranker_dataset, tmp_path, capsys):
    model = tmp_path / "runs" / "seed0"
    assert train_ranker(ranker_dataset, model, "--model", "tiny") == 0
    capsys.readouterr()
    before = tree(model)
    for output in (model, model.parent):  # the input itself, or a folder holding it
        assert train_ranker(ranker_dataset, output, "--model", str(model)) == 2
        line = one_line_error(capsys)
        assert "the input" in line and "would replace it" in line
    assert tree(model) == before
    foreign = tmp_path / "downloaded"  # someone else's model folder
    foreign.mkdir()
    (foreign / "config.json").write_text('{"model_type": "bert"}')
    (foreign / "model.safetensors").write_bytes(b"weights")
    assert train_ranker(ranker_dataset, foreign, "--model", "tiny") == 2
    assert "config.json, model.safetensors" in one_line_error(capsys)
    assert (foreign / "model.safetensors").read_bytes() == b"weights"
    assert train_ranker(ranker_dataset, model, "--model", "tiny") == 0  # its own folder again: fine


def test_a_truncated_model_is_one_line(ranker_dataset, tmp_path, capsys):
    model = tmp_path / "seed0"
    assert train_ranker(ranker_dataset, model, "--model", "tiny") == 0
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    capsys.readouterr()
    assert main(["evaluate", "--model-dir", str(model), "--dataset", str(ranker_dataset), "--out",
                 str(tmp_path / "out"), "--no-progress"]) == 2
    assert "truncated or damaged" in one_line_error(capsys, "evaluate")
    assert train_ranker(ranker_dataset, tmp_path / "again", "--model", str(model)) == 2
    assert "truncated or damaged" in one_line_error(capsys)


def test_trainer_predictions_never_go_into_an_input_or_a_users_folder(tmp_path, capsys):
    """debias --predictions and seq2seq --predictions-dir follow the --output-dir rule, checked before training."""
    import trainers.debias as debias
    import trainers.seq2seq as seq2seq

    dataset, model = tmp_path / "dataset", tmp_path / "model"
    dataset.mkdir()
    (dataset / "README.md").write_text("the user's card")
    users = tmp_path / "mine"
    (users / "kor_adv").mkdir(parents=True)
    (users / "kor_adv" / "kor_adv.jsonl").write_text("the user's predictions")
    debias_argv = ["--dataset", str(dataset), "--output-dir", str(model), "--model", "tiny", "--no-progress"]
    for predictions, expected in ((model, "is the input"), (dataset, "is the input"), (users, "kor_adv")):
        assert debias.main([*debias_argv, "--predictions", str(predictions)]) == 2
        line = one_line_error(capsys)
        assert line.startswith(f"trainers/debias.py: error: --predictions {predictions}") and expected in line, line
    model.mkdir()
    (model / "original.json").write_text("{}")
    seq2seq_argv = ["--dataset", str(dataset), "--predict-only", str(model), "--predict", "ubuntu*"]
    for predictions, expected in ((model, "is the input"), (dataset, "is the input"), (users, "kor_adv")):
        assert seq2seq.main([*seq2seq_argv, "--predictions-dir", str(predictions)]) == 2
        line = one_line_error(capsys)
        assert line.startswith(f"trainers/seq2seq.py: error: --predictions-dir {predictions}") and expected in line
    assert (users / "kor_adv" / "kor_adv.jsonl").read_text() == "the user's predictions"
    assert not (model / "predictions").exists() and (dataset / "README.md").read_text() == "the user's card"


@pytest.mark.parametrize("trainer, argv, flag", [
    ("ranker", ["--seed", "-1"], "--seed"),
    ("ranker", ["--learning-rate", "-1"], "--learning-rate"),
    ("ranker", ["--learning-rate", "nan"], "--learning-rate"),
    ("ranker", ["--max-length", "0"], "--max-length"),
    ("debias", ["--max-length", "0"], "--max-length"),
    ("open_world", ["--max-length", "0"], "--max-length"),
    ("seq2seq", ["--dropout", "2.0"], "--dropout"),
    ("seq2seq", ["--train-probability", "inf"], "--train-probability"),
])
def test_bad_trainer_arguments_are_usage_errors(tmp_path, capsys, trainer, argv, flag):
    import importlib

    module = importlib.import_module(f"trainers.{trainer}")
    with pytest.raises(SystemExit) as exit_:
        module.parse_args(["--dataset", str(tmp_path), "--output-dir", str(tmp_path / "o"), *argv])
    assert exit_.value.code == 2
    assert f"argument {flag}" in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_bogus_device_is_a_usage_error(built, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--model-dir", str(tmp_path), "--dataset", str(built), "--out", str(tmp_path / "o"),
              "--device", "bogus"])
    assert exit_.value.code == 2
    assert "argument --device: not a torch device: 'bogus'" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- plots


def test_plot_refuses_an_unknown_image_format_before_any_work(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["plot", "curves", str(tmp_path / "missing.json"), "--out", str(tmp_path / "x.xyz")])
    assert exit_.value.code == 2
    assert "unsupported image format 'xyz'" in capsys.readouterr().err
    assert not (tmp_path / "x.xyz").exists()


def test_math_markup_in_labels_is_drawn_as_text(tmp_path, capsys):
    from test_plots import ranking_predictions, write_predictions, write_results

    probabilities, labels = ranking_predictions()
    predictions = tmp_path / "$x$" / "predictions" / "uw_0.30.jsonl"
    predictions.parent.mkdir(parents=True)
    write_predictions(predictions, probabilities, labels)
    out = tmp_path / "r.png"
    assert main(["plot", "reliability", str(predictions), "--out", str(out), "--titles", r"$\foo{$"]) == 0
    assert main(["plot", "reliability", str(predictions), "--out", str(out)]) == 0  # the title from the path
    write_results(tmp_path / "a" / "results.json", "vanilla", {"dailydialog": (0.9, 0.1, 0.03),
                                                               "uw_0.05": (0.8, 0.2, 0.05)})
    assert main(["plot", "curves", str(tmp_path / "a" / "results.json"), "--out", str(out), "--names", "$a_{$",
                 "--title", r"$\frac{$", "--xlabel", "$$$", "--x-labels", "$0$", "a$"]) == 0
    assert out.stat().st_size > 1000


def test_binary_input_to_plot_curves_is_one_line(tmp_path, capsys):
    binary = tmp_path / "results.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary")
    assert main(["plot", "curves", str(binary), "--out", str(tmp_path / "c.png")]) == 2
    assert "not a results.json file" in one_line_error(capsys, "plot")
    assert main(["plot", "curves", str(tmp_path), "--out", str(tmp_path / "c.png")]) == 2  # a folder
    assert "cannot read" in one_line_error(capsys, "plot")


# ----------------------------------------------------------------------------------------------- silent wrongs


def test_a_negative_kw_min_count_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["build", "--config", "kw_0.10", "--kw-min-count", "-5", "--out", str(tmp_path / "hub")])
    assert exit_.value.code == 2
    assert "argument --kw-min-count: must be 0 or more, got -5" in capsys.readouterr().err
    assert not (tmp_path / "hub").exists()


@pytest.mark.parametrize("options, expected", [
    ({"dailydialog": {"kw_min_count": -5}}, "option kw_min_count=-5 of family 'dailydialog': must be 0 or more"),
    ({"dailydialog": {"kw_min_count": 2.5}}, "kw_min_count=2.5 of family 'dailydialog': expected int, got float"),
    ({"dailydialog": {"kw_rule": "nearest"}}, "kw_rule='nearest' of family 'dailydialog': must be one of"),
    ({"distracting": {"distract_rare_max": 0}}, "distract_rare_max=0 of family 'distracting': must be at least 1"),
    ({"distracting": {"redraw_seed": -1}}, "redraw_seed=-1 of family 'distracting': must be an integer in 0.."),
])
def test_the_build_api_refuses_what_the_command_line_refuses(tmp_path, options, expected):
    from dialshift.build import build as build_api

    family = next(iter(options))
    with pytest.raises(DialshiftError, match=re.escape(expected)):
        build_api(families=family, options=options, out=tmp_path / "hub", progress=False)
    assert not (tmp_path / "hub").exists()


@pytest.mark.parametrize("argv, flag", [
    (["build", "--seed", "-1"], "--seed"),
    (["build", "--seed", "4294967296"], "--seed"),
    (["leaderboard", "score", "sub", "--dataset", "ds", "--bootstrap-seed", "-1"], "--bootstrap-seed"),
    (["leaderboard", "score", "sub", "--dataset", "ds", "--bootstrap", "0"], "--bootstrap"),
    (["bundle", "report", "back", "--dataset", "ds", "--out", "o", "--bootstrap", "-1"], "--bootstrap"),
    (["bundle", "create", "--dataset", "ds", "--out", "o", "--seeds", "0"], "--seeds"),
])
def test_seeds_and_replicate_counts_are_checked_by_their_types(argv, flag, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert f"argument {flag}: must be" in capsys.readouterr().err.strip().splitlines()[-1]


def test_the_build_api_refuses_a_seed_numpy_cannot_take(tmp_path):
    from dialshift.build import build as build_api

    for seed in (-1, 2**32, True, 1.5):
        with pytest.raises(DialshiftError, match="seed must be an integer in 0..4294967295"):
            build_api(families="toyfam", seed=seed, out=tmp_path / "hub", progress=False)


def test_one_nan_validation_logit_does_not_change_the_temperature_silently():
    import numpy as np

    from dialshift.models.uncertainty import fit_temperature

    rng = np.random.default_rng(0)
    logits, labels = rng.normal(size=(50, 10)) * 3, rng.integers(0, 10, 50)
    assert 0.01 < fit_temperature(logits, labels) < 100
    logits[17, 3] = np.nan
    with pytest.raises(DialshiftError, match=r"1 of 50 validation instances have a non-finite logit \(first: row 17\)"):
        fit_temperature(logits, labels)
