"""Hostile and careless input to `dialshift score` and `dialshift leaderboard`: no record lost, no invalid prediction
scored, no traceback. Each case reproduces a probe finding (see docs/safety.md, "Scoring and the leaderboard")."""

import copy
import json
import shutil
import zipfile

import pytest
from test_leaderboard import make_dataset, one_line_error, score, write_predictions

from dialshift.cli import main
from dialshift.leaderboard.store import read_store, record_path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("hostile") / "dialshift")


@pytest.fixture
def submission(tmp_path, dataset):
    return write_predictions(tmp_path / "submission", dataset)


def _meta(folder, **changes):
    path = folder / "submission.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))
    return folder


# ----------------------------------------------------------------------------------------------- record identity


@pytest.mark.parametrize("first, second", [
    (("org/ranker", "vanilla"), ("org-ranker", "vanilla")),
    (("org/ranker", "../vanilla"), ("org/ranker", "vanilla")),
    (("모델", "vanilla"), ("模型", "vanilla")),
    (("m" * 80 + "-one", "vanilla"), ("m" * 80 + "-two", "vanilla")),
], ids=["slash-vs-dash", "dotdot-method", "no-latin-letters", "shared-80-characters"])
def test_two_submissions_whose_names_slug_alike_are_two_records(first, second, submission, dataset, tmp_path,
                                                               capsys):
    store = tmp_path / "store"
    for model, method in (first, second):
        _meta(submission, model=model, method=method)
        assert score(submission, dataset, store) == 0
        assert "new record" in capsys.readouterr().out
    stored = {(r["config"]["model_name"], r["config"]["method"]) for r in read_store(store)}
    assert stored == {first, second}
    assert all(path.parent == store / "dailydialog" for path in store.rglob("*.json"))


def test_the_same_model_and_method_replace_their_record_and_say_so(submission, dataset, tmp_path, capsys):
    store = tmp_path / "store"
    assert score(submission, dataset, store) == 0
    capsys.readouterr()
    assert score(submission, dataset, store) == 0
    assert "replaced the earlier record of this model and method" in capsys.readouterr().out
    assert len(read_store(store)) == 1


def test_a_store_written_under_the_old_names_still_reads_and_migrates(submission, dataset, tmp_path, capsys):
    store = tmp_path / "store"
    assert score(submission, dataset, store) == 0
    new = record_path(store, "dailydialog", "org/tiny-ranker", "vanilla")
    old = store / "dailydialog" / "org-tiny-ranker__vanilla.json"
    new.rename(old)
    other = json.loads(old.read_text())
    other["config"]["model_name"] = "org-tiny-ranker"  # another submission that had the same old name
    shutil.copyfile(old, store / "dailydialog" / "keep.json")
    (store / "dailydialog" / "keep.json").write_text(json.dumps(other))
    assert sorted(r["config"]["model_name"] for r in read_store(store)) == ["org-tiny-ranker", "org/tiny-ranker"]
    capsys.readouterr()
    assert score(submission, dataset, store) == 0
    assert "replaced the earlier record" in capsys.readouterr().out
    assert new.is_file() and not old.exists() and (store / "dailydialog" / "keep.json").is_file()
    assert len(read_store(store)) == 2


def test_an_old_name_holding_another_submission_is_not_overwritten(submission, dataset, tmp_path, capsys):
    store = tmp_path / "store"
    _meta(submission, model="org-tiny-ranker")
    assert score(submission, dataset, store) == 0
    record_path(store, "dailydialog", "org-tiny-ranker", "vanilla").rename(
        store / "dailydialog" / "org-tiny-ranker__vanilla.json")
    _meta(submission, model="org/tiny-ranker")
    assert score(submission, dataset, store) == 0
    assert {r["config"]["model_name"] for r in read_store(store)} == {"org-tiny-ranker", "org/tiny-ranker"}


# ----------------------------------------------------------------------------------------------- predictions


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    from test_scoring import make_folder

    return make_folder(tmp_path_factory.mktemp("toy"))


def _score_rows(toy, tmp_path, capsys, config, change, *options):
    """Score the toy predictions of ``config`` after ``change(rows)``; return (exit status, stderr)."""
    folder, _, predictions, _ = toy
    rows = copy.deepcopy(predictions[config])
    change(rows)
    target = tmp_path / "predictions"
    target.mkdir(exist_ok=True)
    (target / f"{config}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    code = main(["score", str(target), "--dataset", str(folder), "--out", str(tmp_path / "out"), "--no-progress",
                 "--no-plots", "--bootstrap", "20", *(f"--option={o}" for o in options)])
    return code, capsys.readouterr().err.strip()


def _set(row, **values):
    return lambda rows: rows[row].update(values)


@pytest.mark.parametrize("config, change, expected", [
    ("toypairs", lambda rows: [row.update(scores=[*row["scores"], 0.0]) for row in rows],
     ":1: scores[0] has 3 values but the instance has 2 candidates"),
    ("toypairs", lambda rows: [row.update(scores=None, prediction=2 if i == 3 else 0) for i, row in enumerate(rows)],
     ":4: prediction[3] = 2 is not a response index of the instance (0 .. 1)"),
    ("toypairs", lambda rows: [row.update(scores=None, prediction=-1 if i == 3 else 0)
                               for i, row in enumerate(rows)], ":4: prediction[3] = -1"),
    ("toypairs", _set(2, scores=[float("nan"), 0.1]), ":3: scores[2] holds NaN or inf"),
    ("toyintent", _set(6, score=float("nan")), ":7: score[6] holds NaN or inf"),
    ("toyintent", _set(6, score=float("inf")), ":7: score[6] holds NaN or inf"),
    ("toyintent", _set(1, prediction=-3), ":2: prediction[1] = -3 is not a label id"),
    ("toydistract", lambda rows: rows[5].update(attention_scores=[1e308] * len(rows[5]["attention_scores"])),
     ":6: attention_scores[5] holds a value too large"),
    ("toydistract", lambda rows: rows[5]["attention_scores"].__setitem__(0, float("inf")),
     ":6: attention_scores[5] holds NaN or inf"),
    ("toydistract", lambda rows: [row.update(log_likelihood=5.0 if i == 2 else -3.0, tokens=4)
                                  for i, row in enumerate(rows)], ":3: log_likelihood[2] = 5.0 is out of range"),
    ("toydistract", lambda rows: [row.update(log_likelihood=-5.0, tokens=-3 if i == 8 else 4)
                                  for i, row in enumerate(rows)], ":9: tokens[8] = -3 is out of range"),
    ("toydistract", lambda rows: [row.update(log_likelihood=-5.0, tokens=4) for row in rows[1:]],
     ":1: log_likelihood[0] is missing"),
], ids=["pairwise-third-score", "pairwise-prediction-2", "pairwise-prediction-negative", "pairwise-nan-score",
        "open-world-nan", "open-world-inf", "open-world-negative-label", "attention-1e308", "attention-inf",
        "positive-log-likelihood", "negative-tokens", "log-likelihood-on-some-lines"])
def test_an_invalid_prediction_is_refused_with_its_line(toy, tmp_path, capsys, config, change, expected):
    code, err = _score_rows(toy, tmp_path, capsys, config, change)
    assert code == 2 and err.startswith("dialshift score: error:") and "\n" not in err, err
    assert expected in err, err
    assert not (tmp_path / "out" / "results.json").exists()


def test_eleven_values_for_ten_candidates_are_refused_not_relabelled(submission, dataset, tmp_path, capsys):
    path = submission / "predictions" / "uw_0.10.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:  # every line consistent with the others: only the dataset knows there are 10 candidates
        row["probabilities"] = [p * 10 / 11 for p in row["probabilities"]] + [1 / 11]
        row["scores"] = [*row["scores"], -9.0]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert score(submission, dataset, tmp_path / "store") == 2
    err = one_line_error(capsys)
    assert "uw_0.10.jsonl:1: probabilities[0] has 11 values but the instance has 10 candidates" in err
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").rglob("*.json"))


@pytest.mark.parametrize("config, option, expected", [
    ("toyrank", "ece_bin=10", "--option 'ece_bin': no scoring task has this option; the options are ece_bins, "),
    ("toyrank", "ece_bins=0", "--option ece_bins = 0: must be an integer from 1 to 10,000"),
    ("toyrank", "ece_bins=-1", "--option ece_bins = -1: must be an integer from 1 to 10,000"),
    ("toyrank", "ece_bins=40000", "--option ece_bins = 40000: must be an integer from 1 to 10,000"),
    ("toyrank", "ece_bins=1.5", "must be an integer"),
    ("toyrank", "ks=0", "--option ks = 0: must be a positive integer or a list of them"),
    ("toyrank", "ks=[1, \"x\"]", "must be a positive integer or a list of them"),
    ("toyintent", "tpr_level=1.5", "--option tpr_level = 1.5: must be a number strictly between 0 and 1"),
    ("toydistract", "skip_undefined=3", "--option skip_undefined = 3: must be true or false"),
    ("toyintent", "oos_label=-2", "--option oos_label = -2: must be an integer of at least 0"),
])
def test_a_bad_option_is_refused_in_one_line(toy, tmp_path, capsys, config, option, expected):
    code, err = _score_rows(toy, tmp_path, capsys, config, lambda rows: None, option)
    assert code == 2 and err.startswith("dialshift score: error:") and "\n" not in err, err
    assert expected in err, err


def test_ks_given_as_one_integer_is_one_cut_off(toy, tmp_path, capsys):
    code, err = _score_rows(toy, tmp_path, capsys, "toyrank", lambda rows: None, "ks=5", "ece_bins=10")
    assert code == 0, err
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["options"]["toyrank"]["ks"] == [5] and "recall@5" in document["results"]["toyrank"]


# ----------------------------------------------------------------------------------------------- files and archives


def test_a_non_utf8_byte_in_an_id_is_one_line(submission, dataset, tmp_path, capsys):
    path = submission / "predictions" / "uw_0.10.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"dd-002"', b'"dd-\xff02"')
    path.write_bytes(b"\n".join(lines))
    assert score(submission, dataset, tmp_path / "store") == 2
    assert "uw_0.10.jsonl:3: not valid UTF-8" in one_line_error(capsys)
    assert main(["score", str(submission / "predictions"), "--dataset", str(dataset), "--out", str(tmp_path / "o"),
                 "--no-progress"]) == 2
    assert "uw_0.10.jsonl:3: not valid UTF-8" in capsys.readouterr().err


def test_a_line_longer_than_the_block_is_refused_in_bounded_memory(tmp_path):
    import tracemalloc

    import pyarrow as pa

    from dialshift.errors import DialshiftError
    from dialshift.scoring.jsonl import read_jsonl_chunks

    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "' + b"x" * (16 << 20) + b'"}\n')
    tracemalloc.start()
    try:
        with pytest.raises(DialshiftError, match=r"long.jsonl:2: line longer than 1,048,576 bytes"):
            list(read_jsonl_chunks(path, pa.schema([("id", pa.string())]), block_bytes=1 << 19))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20, peak  # a few blocks, not the 16 MiB line


def _zip(tmp_path, members, name="sub.zip", method=zipfile.ZIP_DEFLATED):
    archive = tmp_path / name
    with zipfile.ZipFile(archive, "w", method) as handle:
        for member, data in members:
            handle.writestr(member, data)
    return archive


def _submission_members(submission):
    return [(path.relative_to(submission).as_posix(), path.read_bytes())
            for path in sorted(submission.rglob("*")) if path.is_file()]


def _patch_central(archive, member: str, offset: int, value: bytes, local_offset: int | None = None):
    """Overwrite a field of ``member``'s central directory entry (and of its local header)."""
    data = bytearray(archive.read_bytes())
    name = member.encode()
    central = data.find(b"PK\x01\x02")
    while central != -1:
        length = int.from_bytes(data[central + 28:central + 30], "little")
        if bytes(data[central + 46:central + 46 + length]) == name:
            data[central + offset:central + offset + len(value)] = value
            if local_offset is not None:
                local = int.from_bytes(data[central + 42:central + 46], "little")
                data[local + local_offset:local + local_offset + len(value)] = value
            break
        central = data.find(b"PK\x01\x02", central + 4)
    archive.write_bytes(bytes(data))
    return archive


def _encrypted(submission, tmp_path):
    return _patch_central(_zip(tmp_path, _submission_members(submission)), "submission.json", 8, b"\x01\x00", 6)


def _bad_crc(submission, tmp_path):
    return _patch_central(_zip(tmp_path, _submission_members(submission)), "predictions/uw_0.10.jsonl", 16,
                          b"\x00\x00\x00\x00", 14)


def _understated(submission, tmp_path):
    return _patch_central(_zip(tmp_path, _submission_members(submission)), "predictions/uw_0.10.jsonl", 24,
                          (100).to_bytes(4, "little"), 22)


def _deflate64(submission, tmp_path):
    return _patch_central(_zip(tmp_path, _submission_members(submission)), "predictions/uw_0.10.jsonl", 10,
                          b"\x09\x00", 8)


def _twice(submission, tmp_path):
    import warnings

    members = _submission_members(submission)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        return _zip(tmp_path, [*members, members[-1]])


@pytest.mark.parametrize("make, expected", [
    (_encrypted, "member 'submission.json' is encrypted; zip the submission without a password"),
    (_bad_crc, "member 'predictions/uw_0.10.jsonl' cannot be read (Bad CRC-32"),
    (_understated, "member 'predictions/uw_0.10.jsonl' "),  # zipfile stops at the declared size: a CRC error
    (_deflate64, "member 'predictions/uw_0.10.jsonl' uses compression method 9, which cannot be read"),
    (_twice, "member 'submission.json' appears twice in the archive"),
], ids=["encrypted", "bad-crc", "understated-size", "deflate64", "duplicate-member"])
def test_a_damaged_zip_is_one_line_naming_the_member(make, expected, submission, dataset, tmp_path, capsys):
    assert score(make(submission, tmp_path), dataset, tmp_path / "store") == 2
    err = one_line_error(capsys)
    assert expected in err and "dialshift-submission" not in err, err


def test_too_many_members_are_refused_before_anything_is_extracted(tmp_path):
    from dialshift.errors import DialshiftError
    from dialshift.leaderboard.submission import Limits, extract_zip

    archive = _zip(tmp_path, [(f"predictions/c{i}.jsonl", b"x" * 1024) for i in range(989)],
                   method=zipfile.ZIP_STORED)
    target = tmp_path / "target"
    target.mkdir()
    with pytest.raises(DialshiftError, match="989 files, more than the 500 a submission may hold"):
        extract_zip(archive, target, Limits())
    assert not any(target.iterdir())
    stray = _zip(tmp_path, [("submission.json", b"{}"), ("notes/big.bin", b"x" * 4096)], name="stray.zip")
    with pytest.raises(DialshiftError, match="member 'notes/big.bin' is not part of a submission"):
        extract_zip(stray, target, Limits())
    assert not any(target.iterdir())


def test_an_extraction_left_by_a_killed_run_is_removed_by_the_next(submission, dataset, tmp_path, monkeypatch):
    import subprocess
    import sys
    import tempfile

    from test_leaderboard import zip_folder

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = scratch / f".dialshift-submission.tmp-{int(gone.stdout)}-0badc0de"
    (stale / "predictions").mkdir(parents=True)
    (stale / "predictions" / "big.jsonl").write_text("x" * 1000)
    mine = scratch / "dialshift-submission-notes"  # not a name dialshift makes: kept
    mine.mkdir()
    assert score(zip_folder(submission, tmp_path / "s.zip"), dataset, tmp_path / "store") == 0
    assert not stale.exists() and mine.is_dir()
    assert [p.name for p in scratch.iterdir() if p.name.startswith(".dialshift-submission.tmp")] == []


# ----------------------------------------------------------------------------------------------- the page


def render(store, site, *extra):
    return main(["leaderboard", "render", str(store), "--out", str(site), *extra])


def _files(folder):
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def test_math_markup_in_a_name_is_shown_as_text_on_the_page_and_plots(submission, dataset, tmp_path, capsys):
    _meta(submission, model=r"$\foo{$ <b>bold</b>", method="$x$")
    store, site = tmp_path / "store", tmp_path / "site"
    assert score(submission, dataset, store) == 0
    assert render(store, site) == 0, capsys.readouterr().err
    page = (site / "index.html").read_text()
    assert r"$\foo{$ &lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page
    assert any(path.suffix == ".png" for path in site.rglob("*"))


@pytest.mark.parametrize("field, value, expected", [
    ("parameters", "1" + "0" * 400, "field 'parameters' must be an integer from 0 to 1e+15"),
    ("parameters", "1e400", "field 'parameters' must be an integer from 0 to 1e+15"),
    ("seeds", "[1e400]", "field 'seeds' must be a list of ints"),
    ("model", "\"a\\u0007b\"", "field 'model' must be one line of at most 500 printable characters"),
])
def test_a_number_or_text_the_page_cannot_show_is_refused_at_score(field, value, expected, submission, dataset,
                                                                   tmp_path, capsys):
    path = submission / "submission.json"
    text = json.dumps({**json.loads(path.read_text()), field: "PLACEHOLDER"})
    path.write_text(text.replace('"PLACEHOLDER"', value))
    assert score(submission, dataset, tmp_path / "store") == 2
    assert expected in one_line_error(capsys)
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").rglob("*.json"))


def _scored_site(submission, dataset, tmp_path):
    store, site = tmp_path / "store", tmp_path / "site"
    assert score(submission, dataset, store) == 0
    assert render(store, site, "--no-plots") == 0
    return store, site


def test_a_failed_render_leaves_the_old_page_whole(submission, dataset, tmp_path, capsys, monkeypatch):
    store, site = _scored_site(submission, dataset, tmp_path)
    assert render(store, site) == 0
    before = _files(site)
    assert any(name.startswith("plots/") for name in before)
    _meta(submission, model="second")
    assert score(submission, dataset, store) == 0

    def broken(*args, **kwargs):
        raise RuntimeError("plotting failed")

    monkeypatch.setattr("dialshift.leaderboard.render._plot_record", broken)
    with pytest.raises(RuntimeError):
        render(store, site)
    assert _files(site) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


def test_a_bad_record_in_the_store_is_one_line_and_the_page_stays(submission, dataset, tmp_path, capsys):
    store, site = _scored_site(submission, dataset, tmp_path)
    before = _files(site)
    path = next(store.rglob("*.json"))
    record = json.loads(path.read_text())
    for change, expected in ((lambda r: r["config"].pop("model_name"), "field 'config.model_name' is missing"),
                             (lambda r: r["config"].update(parameters=10**400), "field 'config.parameters'"),
                             (lambda r: r.pop("configs"), "field 'configs' (the typed configs) is missing"),
                             (lambda r: r["results"]["uw_0.10"].update(ece="high"),
                              "field 'results.uw_0.10.ece' is not a finite number")):
        broken = copy.deepcopy(record)
        change(broken)
        path.write_text(json.dumps(broken))
        capsys.readouterr()
        assert render(store, site, "--no-plots") == 2
        assert expected in one_line_error(capsys)
        assert _files(site) == before
        assert main(["leaderboard", "export", str(path), "--dataset-id", "org/dialshift"]) == 2
        assert expected in one_line_error(capsys)


def test_render_never_deletes_a_store_or_files_it_did_not_write(submission, dataset, tmp_path, capsys):
    site = tmp_path / "site"
    store = site / "results"  # the store kept where the page puts its copies
    assert score(submission, dataset, store) == 0
    records = _files(store)
    assert render(store, site, "--no-plots") == 2
    assert "holding the results store" in one_line_error(capsys)
    assert _files(store) == records

    store, site = _scored_site(submission, dataset, tmp_path / "b")
    notes = site / "results" / "notes.txt"
    notes.write_text("mine")
    assert render(store, site, "--no-plots") == 2
    assert "results/notes.txt was not written by `leaderboard render`" in one_line_error(capsys)
    assert notes.read_text() == "mine"

    inside = store / "site"
    assert render(store, inside, "--no-plots") == 2
    assert "inside the results store" in one_line_error(capsys)
    assert not inside.exists() and len(read_store(store)) == 1


# ----------------------------------------------------------------------------------------------- gold fingerprints


def _swap_parquet(dataset, tmp_path, first="uw_0.10", second="uw_0.20"):
    swapped = tmp_path / "swapped"
    shutil.copytree(dataset, swapped)
    a, b = (swapped / name / "test-00000-of-00001.parquet" for name in (first, second))
    data = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(data)
    return swapped


def test_swapped_parquet_files_are_refused_by_score_leaderboard_and_load_dataset(submission, dataset, tmp_path,
                                                                                  capsys):
    import dialshift
    from dialshift.errors import DialshiftError

    swapped = _swap_parquet(dataset, tmp_path)
    assert main(["score", str(submission / "predictions"), "--dataset", str(swapped), "--out", str(tmp_path / "o"),
                 "--no-progress", "--bootstrap", "5"]) == 2
    err = capsys.readouterr().err
    assert "config 'uw_0.10': uw_0.10/test-00000-of-00001.parquet differs from the fingerprint" in err
    assert not (tmp_path / "o" / "results.json").exists()
    assert score(submission, dataset, tmp_path / "ok") == 0  # the intact dataset scores
    assert score(submission, swapped, tmp_path / "store") == 2
    assert "differs from the fingerprint its card recorded" in one_line_error(capsys)
    with pytest.raises(DialshiftError, match="config 'uw_0.20': uw_0.20/test-00000-of-00001.parquet differs"):
        dialshift.load_dataset(str(swapped), "uw_0.20")


def test_a_config_fingerprint_is_its_own_files_not_the_folders(dataset, tmp_path):
    from dialshift.scoring.gold import config_fingerprints

    alone = tmp_path / "alone"
    shutil.copytree(dataset, alone)
    shutil.rmtree(alone / "uw_0.20")  # the other configs' files are gone: uw_0.10 is byte-identical
    full = config_fingerprints(dataset, ["uw_0.10", "uw_0.20"])
    assert config_fingerprints(alone, ["uw_0.10"])["uw_0.10"] == full["uw_0.10"] != full["uw_0.20"]


def test_a_submission_made_on_another_build_of_a_config_is_refused(submission, dataset, tmp_path, capsys):
    revision = json.loads((submission / "submission.json").read_text())["dataset_revision"]
    _meta(submission, dataset_revision={**revision, "uw_0.20": "sha256:0123456789abcdef"})
    assert score(submission, dataset, tmp_path / "store") == 2
    assert "config 'uw_0.20': the predictions were made on data with fingerprint sha256:0123456789abcdef" in \
        one_line_error(capsys)
    _meta(submission, dataset_revision={k: v for k, v in revision.items() if k != "uw_0.10"})
    assert score(submission, dataset, tmp_path / "store") == 2
    assert "dataset_revision has no fingerprint for config 'uw_0.10'" in one_line_error(capsys)
    _meta(submission, dataset_revision="sha256:0000")
    assert score(submission, dataset, tmp_path / "store") == 2
    assert "cannot be checked per config" in one_line_error(capsys)
    _meta(submission, dataset_revision=revision)
    assert score(submission, dataset, tmp_path / "store") == 0
    record = read_store(tmp_path / "store")[0]
    assert record["config"]["dataset_revision"] == revision and record["config"]["dataset_commit"] is None


def test_model_index_names_a_revision_only_for_a_hub_commit(submission, dataset, tmp_path, capsys):
    import yaml

    store = tmp_path / "store"
    assert score(submission, dataset, store) == 0
    path = next(store.rglob("*.json"))
    assert main(["leaderboard", "export", str(path), "--dataset-id", "org/dialshift"]) == 0
    entries = yaml.safe_load(capsys.readouterr().out)["model-index"][0]["results"]
    assert all("revision" not in entry["dataset"] for entry in entries)  # a local build has no Hub commit
    record = json.loads(path.read_text())
    record["config"]["dataset_commit"] = "a" * 40
    path.write_text(json.dumps(record))
    assert main(["leaderboard", "export", str(path), "--dataset-id", "org/dialshift"]) == 0
    entries = yaml.safe_load(capsys.readouterr().out)["model-index"][0]["results"]
    assert {entry["dataset"]["revision"] for entry in entries} == {"a" * 40}
