"""Hostile and careless input to `dialshift score` and `dialshift leaderboard`: no record lost, no invalid prediction
scored, no traceback. Each case reproduces a probe finding (see docs/safety.md, "Scoring and the leaderboard")."""

import json
import shutil

import pytest
from test_leaderboard import make_dataset, score, write_predictions

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
