"""The second hostile probe's findings (issue 36), each as a case of its own: nothing a user owns is moved,
overwritten or deleted; nothing wrong passes silently; every bad option is one line, never a traceback."""

import json
import re
import shutil

import pytest

from dialshift.cli import main

# ----------------------------------------------------------------------------------------------- sources


@pytest.mark.data
def test_sources_fails_when_a_corpus_file_is_not_the_pinned_one_though_it_reads(raw_data_dir, tmp_path, capsys):
    shutil.copytree(raw_data_dir / "hwu64", tmp_path / "hwu64")
    text = tmp_path / "hwu64" / "test" / "seq.in"
    body = text.read_bytes()
    index = body.index(b"a")
    text.write_bytes(body[:index] + b"e" + body[index + 1:])  # same lines, same labels: the counts still match
    assert main(["sources", "hwu64", "--data-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "all 1 sources ok" not in captured.out
    assert re.search(r"error: 1 raw corpus folder\(s\) not intact: hwu64: 1 of 10 files bad: test/seq.in sha256 "
                     r"differs.*dialshift download --corpus hwu64$", captured.err.strip())


# ----------------------------------------------------------------------------------------------- the ledger


def _cells(row: str) -> list[str]:
    """A markdown table row's cells, split on the pipes that are not escaped."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_the_ledger_escapes_a_pipe_from_a_returned_file(tmp_path):
    from dialshift.bundle.ledger import render_ledger

    folder = tmp_path / "returned" / "lee"
    folder.mkdir(parents=True)
    (folder / "lee-train-0.json").write_text(json.dumps({"started": "2026-01-01 | x", "device": "H100 | evil | y",
                                                         "seconds": 3}))
    (folder / "lee-train-0.npz").write_bytes(b"z")
    lines = render_ledger(tmp_path / "returned").splitlines()
    assert len(_cells(lines[0])) == 8
    row = _cells(lines[2])
    assert len(row) == 8 and row[3] == "H100 \\| evil \\| y" and row[2] == "2026-01-01 \\| x"


# ----------------------------------------------------------------------------------------------- the leaderboard


@pytest.fixture(scope="module")
def board_dataset(tmp_path_factory):
    from test_leaderboard import make_dataset

    return make_dataset(tmp_path_factory.mktemp("board") / "dialshift")


def _submit(folder, dataset, store, *extra, configs=None, **metadata):
    from test_leaderboard import CONFIGS, score, write_predictions

    write_predictions(folder, dataset, configs=configs or CONFIGS)
    document = json.loads((folder / "submission.json").read_text())
    if configs:
        document["configs"] = list(configs)
    document.update(metadata)
    (folder / "submission.json").write_text(json.dumps(document, ensure_ascii=False))
    return score(folder, dataset, store, *extra)


def test_a_smaller_resubmission_never_shrinks_a_record_silently(board_dataset, tmp_path, capsys):
    store = tmp_path / "store"
    assert _submit(tmp_path / "full", board_dataset, store) == 0
    (record,) = store.rglob("*.json")
    before = record.read_bytes()
    capsys.readouterr()
    assert _submit(tmp_path / "one", board_dataset, store, configs=["dailydialog"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"covers 3 configs and this submission 1: replacing it would drop uw_0.10, uw_0.20; .*--replace",
                     err) and len(err.splitlines()) == 1
    assert record.read_bytes() == before
    assert _submit(tmp_path / "again", board_dataset, store, "--replace", configs=["dailydialog"]) == 0
    assert sorted(json.loads(record.read_text())["results"]) == ["dailydialog"]
    assert _submit(tmp_path / "grow", board_dataset, store) == 0  # covering more is never refused
    assert len(json.loads(record.read_text())["results"]) == 3


@pytest.mark.parametrize("model", ["org/tiny-ranker\u200b", "org/\u202etiny-ranker", "org/tiny-ranker ",
                                   " org/tiny-ranker", "Cafe\u0301"])
def test_a_name_that_changes_under_normalisation_is_refused(board_dataset, tmp_path, capsys, model):
    store = tmp_path / "store"
    assert _submit(tmp_path / "sub", board_dataset, store, model=model) == 2
    err = capsys.readouterr().err
    assert "field 'model' changes when normalised" in err and len(err.splitlines()) == 1
    assert not store.exists() or not list(store.rglob("*.json"))


def test_a_stored_name_that_looks_the_same_is_not_a_new_entry(board_dataset, tmp_path, capsys):
    from dialshift.leaderboard.store import record_path

    store = tmp_path / "store"
    assert _submit(tmp_path / "nfc", board_dataset, store, model="Caf\u00e9") == 0
    (record,) = store.rglob("*.json")
    # a store written before names were normalised: the same record under the NFD spelling of the name
    document = json.loads(record.read_text())
    document["config"]["model_name"] = "Cafe\u0301"
    twin = record_path(store, "dailydialog", "Cafe\u0301", "vanilla")
    twin.write_text(json.dumps(document))
    record.unlink()
    assert _submit(tmp_path / "again", board_dataset, store, model="Caf\u00e9") == 2
    assert "looks the same as 'Café'" in capsys.readouterr().err
    assert [path.name for path in store.rglob("*.json")] == [twin.name]


# ----------------------------------------------------------------------------------------------- build folders


@pytest.fixture
def toy(toy_plugin, monkeypatch, tmp_path):
    """The toy family with its raw data; returns conftest's build function (``dialshift build --family toyfam``)."""
    from conftest import toy_build

    data = tmp_path / "data"
    (data / "clinc150").mkdir(parents=True)
    (data / "clinc150" / "data_full.json").write_text('{"train": [["raw corpus", "keep"]]}')
    monkeypatch.setenv("DIALSHIFT_DATA_DIR", str(data))
    return toy_build


def test_a_build_inside_a_build_folder_is_refused(toy, tmp_path, capsys):
    from conftest import one_line_error, tree

    outer = tmp_path / "hub"
    assert toy("--out", str(outer)) == 0
    before = tree(outer)
    capsys.readouterr()
    for inner in (outer / "nested", outer / "toy" / "deeper" / "x"):
        assert toy("--config", "toy", "--out", str(inner)) == 2
        assert f"is inside {outer}, a folder dialshift built" in one_line_error(capsys, "build")
    assert tree(outer) == before and main(["validate", str(outer)]) == 0


@pytest.mark.parametrize("case", ["hand-made", "stale", "edited card", "old format"])
def test_a_marker_listing_files_the_build_did_not_write_never_deletes_them(toy, tmp_path, capsys, case):
    from conftest import one_line_error, tree

    from dialshift.hub.layout import MARKER

    out = tmp_path / "hub"
    assert toy("--out", str(out)) == 0
    marker = json.loads((out / MARKER).read_text())
    if case == "hand-made":  # a marker copied in by hand, listing the user's files
        (out / "notes.txt").write_text("three years of notes")
        (out / "toy" / "mine.csv").write_text("a,b\n")
        marker["files"] += ["notes.txt", "toy/mine.csv"]
        marker["sha256"].update({"notes.txt": "0" * 64, "toy/mine.csv": "1" * 64})
        named = "notes.txt, toy/mine.csv"
    elif case == "stale":  # `rm -rf DIR/*` kept the hidden marker; the user's own table now sits at a listed path
        for path in list(out.iterdir()):
            if path.name != MARKER:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        (out / "toy").mkdir()
        (out / "toy" / "test-00000-of-00001.parquet").write_bytes(b"my own table")
        named = "toy/test-00000-of-00001.parquet"
    elif case == "edited card":  # README.md rewritten by hand: a rebuild would replace the user's edits
        card = out / "README.md"
        card.write_text(card.read_text() + "\nMy own notes on this dataset.\n")
        named = "README.md"
    else:  # format 1 (no checksums) names a file the card does not declare
        (out / "notes.txt").write_text("mine")
        marker = {key: value for key, value in marker.items() if key != "sha256"}
        marker.update(format=1, files=marker["files"] + ["notes.txt"])
        named = "notes.txt"
    (out / MARKER).write_text(json.dumps(marker))
    before = tree(out)
    capsys.readouterr()
    assert toy(*(() if case == "stale" else ("--config", "toy")), "--out", str(out)) == 2  # stale: all configs
    line = one_line_error(capsys, "build")
    assert f"lists {named} as written by dialshift build, but" in line and "never does" in line
    assert tree(out) == before


# ----------------------------------------------------------------------------------------------- results folders


def _score(predictions, dataset, out):
    return main(["score", str(predictions), "--dataset", str(dataset), "--out", str(out), "--bootstrap", "20",
                 "--no-plots", "--no-progress"])


@pytest.mark.parametrize("marker", ["attention", "one-line"])
def test_score_never_writes_over_a_users_results_in_a_folder_another_writer_marked(board_dataset, tmp_path, capsys,
                                                                                  marker):
    from conftest import tree
    from test_leaderboard import write_predictions

    from dialshift.scoring.pipeline import RESULTS_MARKER, claim_output_dir, record_output_dir

    submission = write_predictions(tmp_path / "submission", board_dataset)
    out = tmp_path / "results"
    out.mkdir()
    (out / "results.md").write_text("# my own results, typed by hand\n")
    (out / "plots").mkdir()
    (out / "plots" / "figure.png").write_bytes(b"mine")
    if marker == "attention":  # what `evaluate --attention --out OUT` does to OUT: it writes only OUT/attention
        claim_output_dir(out, "dialshift evaluate --attention", writes=("attention",))
        (out / "attention").mkdir()
        (out / "attention" / "results.json").write_text("{}")
        record_output_dir(out, ("attention",))
    else:  # the marker such a run left before markers listed files
        (out / RESULTS_MARKER).write_text("results written by `dialshift evaluate --attention`; it may write here\n")
    before = tree(out)
    assert _score(submission / "predictions", board_dataset, out) == 2
    err = capsys.readouterr().err
    assert re.search(r"holds files \.dialshift-results does not list as written by dialshift.*\(plots/figure.png, "
                     r"results.md\); dialshift never writes over them", err) and len(err.splitlines()) == 1
    assert tree(out) == before


def test_score_rewrites_its_own_results_but_not_an_edited_copy(board_dataset, tmp_path, capsys):
    from test_leaderboard import write_predictions

    submission = write_predictions(tmp_path / "submission", board_dataset)
    out = tmp_path / "results"
    assert _score(submission / "predictions", board_dataset, out) == 0
    assert _score(submission / "predictions", board_dataset, out) == 0  # its own files, unchanged: rewritten
    (out / "results.md").write_text("edited by hand\n")
    capsys.readouterr()
    assert _score(submission / "predictions", board_dataset, out) == 2
    assert "(results.md)" in capsys.readouterr().err and (out / "results.md").read_text() == "edited by hand\n"


@pytest.mark.parametrize("attention", [[], ["--attention"]])
def test_evaluate_refuses_a_folder_holding_a_users_results_before_any_work(board_dataset, tmp_path, capsys,
                                                                            attention):
    from conftest import tree

    out = tmp_path / "results"
    out.mkdir()
    (out / "results.md").write_text("# mine\n")
    before = tree(out)
    argv = ["evaluate", *attention, "--model-dir", str(tmp_path / "no-such-model"), "--dataset", str(board_dataset),
            "--out", str(out), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "holds files dialshift did not write (results.md; no .dialshift-results)" in err
    assert tree(out) == before


# ----------------------------------------------------------------------------------------------- leftovers

SLOW_VALIDATE = """
import signal, sys, time
# Ctrl-C's default, as in a terminal: a process started from a background job inherits SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
import dialshift.hub.validation as validation
original = validation._validate_config
def slow(*args, **kwargs):
    print("validating", flush=True)
    time.sleep(120)
    return original(*args, **kwargs)
validation._validate_config = slow
from dialshift.cli import main
sys.exit(main(["validate", sys.argv[1], "--partial"]))
"""


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGINT"])
def test_validate_killed_by_a_signal_leaves_no_temporary_folder(board_dataset, tmp_path, signum):
    import os
    import signal
    import subprocess
    import sys

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen([sys.executable, "-c", SLOW_VALIDATE, str(board_dataset)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "validating"
        assert list(scratch.glob("dialshift-validate-*"))  # the scratch folder validate reads the configs into
        process.send_signal(getattr(signal, signum))
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == {"SIGTERM": 143, "SIGINT": 130}[signum], err
    assert "Traceback" not in err
    assert list(scratch.glob("dialshift-validate-*")) == []


def test_evaluate_without_progress_bars_still_says_how_far_it_is(tmp_path, monkeypatch, capsys):
    from test_ranker import make_dataset_folder, run_trainer

    import dialshift.heartbeat

    folder = make_dataset_folder(tmp_path / "dialshift")
    model = tmp_path / "tiny"
    assert run_trainer("--dataset", str(folder), "--output-dir", str(model), "--model", "tiny", "--seed", "0",
                       "--max-length", "32", "--batch-size", "8", "--max-train-instances", "16", "--num-epochs", "1",
                       "--no-progress") == 0
    monkeypatch.setattr(dialshift.heartbeat, "HEARTBEAT_SECONDS", 0.0)  # every batch instead of every minute
    capsys.readouterr()
    assert main(["evaluate", "--model-dir", str(model), "--dataset", str(folder), "--configs", "dailydialog",
                 "--out", str(tmp_path / "results"), "--batch-size", "16", "--no-progress", "--no-plots"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if " pairs (" in line]
    assert lines and re.fullmatch(r"tiny: [\d,]+/[\d,]+ pairs \(\d+%\), \d+ min \d+ s elapsed", lines[0])
    assert lines[-1].startswith("tiny: ") and "(100%)" in lines[-1]


# ----------------------------------------------------------------------------------------------- options in range


@pytest.mark.parametrize("argv", [
    ["score", "p", "--dataset", "d", "--bootstrap", "1000000000000"],
    ["leaderboard", "score", "s", "--dataset", "d", "--bootstrap", "100001"],
    ["bundle", "report", "r", "--dataset", "d", "--out", "o", "--bootstrap", "10000000"],
])
def test_bootstrap_replicates_have_an_upper_bound(argv, capsys):
    with pytest.raises(SystemExit) as exit_status:
        main(argv)
    assert exit_status.value.code == 2
    assert "argument --bootstrap: must be at most 100,000" in capsys.readouterr().err


def test_build_num_proc_has_an_upper_bound(capsys):
    assert main(["build", "--num-proc", "100000", "--out", "/nonexistent/out"]) == 2
    assert "--num-proc must be from 1 to" in capsys.readouterr().err


def test_results_are_never_written_into_a_dataset_folder(board_dataset, tmp_path, capsys):
    from test_leaderboard import write_predictions

    submission = write_predictions(tmp_path / "submission", board_dataset)
    for out in (board_dataset, board_dataset / "results", board_dataset / "dailydialog" / "x"):
        assert _score(submission / "predictions", board_dataset, out) == 2
        assert f"the dataset folder {board_dataset} (dialshift built it" in capsys.readouterr().err
    assert not (board_dataset / "results").exists() and not (board_dataset / "results.md").exists()
    assert main(["validate", "--partial", str(board_dataset)]) == 0


@pytest.mark.parametrize("attention", [[], ["--attention"]])
@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--ece-bins", "20000", "must be an integer from 1 to 10,000"),
    ("--bootstrap", "1000000", "must be an integer from 1 to 100,000"),
])
def test_evaluate_checks_scoring_options_before_loading_a_model(board_dataset, tmp_path, capsys, attention, flag,
                                                                value, message):
    argv = ["evaluate", *attention, "--model-dir", str(tmp_path / "no-such-model"), "--dataset", str(board_dataset),
            "--out", str(tmp_path / "out"), flag, value, "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{flag} = {value}: {message}" in err and "no-such-model" not in err


def test_a_method_folder_rescored_by_score_is_still_dialshifts(tmp_path):
    """``score OUT/vanilla/predictions`` rewrites OUT/vanilla/results.json; the next ``evaluate --out OUT`` checks that
    file against OUT/vanilla's marker, not the stale record of OUT's."""
    from dialshift.io import foreign_files
    from dialshift.scoring.pipeline import RESULTS_MARKER, RESULTS_WRITES, claim_output_dir, record_output_dir

    out = tmp_path / "out"
    claim_output_dir(out, "dialshift evaluate", writes=(*RESULTS_WRITES, "vanilla"))
    method = claim_output_dir(out / "vanilla", "dialshift evaluate", writes=(*RESULTS_WRITES, "predictions"))
    (method / "results.json").write_text("{}")
    record_output_dir(method, (*RESULTS_WRITES, "predictions"))
    record_output_dir(out, (*RESULTS_WRITES, "vanilla"))
    (method / "results.json").write_text('{"rescored": true}')  # what `dialshift score` does, then records it
    record_output_dir(method)
    assert foreign_files(out, RESULTS_MARKER, (*RESULTS_WRITES, "vanilla")) == []
    (method / "notes.md").write_text("mine")
    assert foreign_files(out, RESULTS_MARKER, (*RESULTS_WRITES, "vanilla")) == ["vanilla/notes.md"]


@pytest.mark.parametrize("item", ["tpr_level=NaN", "tpr_level=Infinity", "tpr_level=1.5", "ece_bins=0",
                                  "ece_bins=1e400", "sum_tolerance=-1"])
def test_score_options_are_checked_when_given_not_only_when_a_task_uses_them(item):
    """Issue 36: `--option tpr_level=NaN` was accepted when no scored config's task reads tpr_level."""
    from dialshift.commands.score import parse_options
    from dialshift.errors import DialshiftError

    name = item.partition("=")[0]
    with pytest.raises(DialshiftError, match=f"--option {name}"):
        parse_options([item])
    assert parse_options(["tpr_level=0.9", "ece_bins=10", "label_name=x"]) == \
        {"tpr_level": 0.9, "ece_bins": 10, "label_name": "x"}
