"""``dialshift shift`` and ``write_custom_folder`` on a folder they wrote before, on bad instances and on bad
parameters: configs are added and replaced, foreign folders refused, every instance checked before the shift (one
line naming the row and field, or ``--skip-invalid``), and no parameter gives a traceback."""

import json

import pytest
from datasets import Dataset, load_dataset

from dialshift.cli import main as cli
from dialshift.custom import custom_config, write_custom_folder
from dialshift.errors import DialshiftError
from dialshift.hub import folder_configs
from dialshift.shifts import InsufficientContext, SourceLength, shift_dataset

CANDIDATES = [f"answer {k} ." for k in range(10)]
TURNS = [["hello there .", "hi , how are you ?"], ["one .", "two .", "three ."], ["a b .", "c d .", "e f .", "g ."]]


def rows(n=9):
    return [{"id": f"t{k}", "context": TURNS[k % 3], "candidates": CANDIDATES, "label": k % 10} for k in range(n)]


def write_jsonl(path, items):
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return str(path)


def shift(tmp_path, *args, source="test.jsonl"):
    return cli(["shift", str(tmp_path / source), *args])


def test_two_runs_into_one_folder_give_both_configs_and_the_folder_validates_and_loads(tmp_path, capsys):
    write_jsonl(tmp_path / "test.jsonl", rows())
    out = str(tmp_path / "mine")
    assert shift(tmp_path, "--shift", "ic", "--param", "deleted=1", "--param", "window=2", "--name", "my_ic",
                 "--source-name", "my_test", "--out", out) == 0
    assert shift(tmp_path, "--shift", "sr", "--param", "turns=3", "--name", "my_sr", "--source-name", "my_test",
                 "--out", out) == 0
    assert set(folder_configs(out)) == {"my_test", "my_ic", "my_sr"}
    assert folder_configs(out)["my_sr"].baselines[0].config == "my_test"
    # a third run replaces a config of the same name and keeps the others
    assert shift(tmp_path, "--shift", "ic", "--param", "deleted=0", "--param", "window=3", "--name", "my_ic",
                 "--source-name", "my_test", "--out", out) == 0
    configs = folder_configs(out)
    assert set(configs) == {"my_test", "my_ic", "my_sr"} and configs["my_ic"].parameters["window"] == 3
    capsys.readouterr()
    assert cli(["validate", out]) == 0
    assert "3 configs valid" in capsys.readouterr().out
    assert len(load_dataset(out, "my_sr", split="test")) == 3
    assert len(load_dataset(out, "my_ic", split="test")) == 6
    assert load_dataset(out, "my_test", split="test")["id"] == [f"t{k}" for k in range(9)]


def test_write_custom_folder_adds_to_its_own_folder(tmp_path):
    data = Dataset.from_list(rows())
    folder = tmp_path / "lib"
    write_custom_folder(folder, {"base": data}, [custom_config("base", task="response_ranking", description="b")])
    shifted = shift_dataset(data, SourceLength(turns=2))
    write_custom_folder(folder, {"my_sr": shifted},
                        [custom_config("my_sr", task="response_ranking", description="s", shift=SourceLength(turns=2),
                                       baseline="base")])
    assert set(folder_configs(folder)) == {"base", "my_sr"}
    assert len(load_dataset(str(folder), "base", split="test")) == 9


def test_foreign_folders_are_refused_before_the_shift(tmp_path, capsys):
    write_jsonl(tmp_path / "test.jsonl", rows())
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    args = ["--shift", "sr", "--param", "turns=2", "--name", "a", "--source-name", "b"]
    assert shift(tmp_path, *args, "--out", str(foreign)) == 2
    error = capsys.readouterr().err
    assert "not a dialshift dataset folder" in error and "notes.txt" in error and "Traceback" not in error
    assert (foreign / "notes.txt").read_text() == "mine" and sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    # a folder of another family (written by `dialshift build`) is not mixed with custom configs
    from dialshift.hub.card import FamilyCard
    from dialshift.hub.writing import write_hub_folder

    built = tmp_path / "built"
    config = custom_config("other", task="response_ranking", description="x").to_dict()
    write_hub_folder(built, {"other": {"test": Dataset.from_list(rows())}}, [FamilyCard("toy", "## toy")],
                     metadata={"other": {"config": {**config, "family": "toy"}, "facts": {}}}, progress=False)
    assert shift(tmp_path, *args, "--out", str(built)) == 2
    assert "holds configs of family toy" in capsys.readouterr().err
    with pytest.raises(DialshiftError, match="holds configs of family toy"):
        write_custom_folder(built, {"a": Dataset.from_list(rows())},
                            [custom_config("a", task="response_ranking", description="a")])


BAD_ROWS = [
    ({"id": None}, "row 2: id: missing or null"),
    ({"id": "t0"}, "row 2: id: repeats an earlier row's id"),
    ({"context": ["fine .", ""]}, "row 2 (id 't1'): context: turn 1 is ''"),
    ({"context": []}, "row 2 (id 't1'): context: an empty list"),
    ({"label": 15}, "row 2 (id 't1'): label: 15 is not an index of the 10 candidates (0 .. 9)"),
    ({"label": None}, "row 2 (id 't1'): label: missing or null"),
    ({"candidates": ["only one"]}, "row 2 (id 't1'): candidates: ['only one'] is not a list of at least two"),
]


@pytest.mark.parametrize(("change", "says"), BAD_ROWS)
def test_every_instance_is_checked_before_the_shift(tmp_path, capsys, monkeypatch, change, says):
    items = rows(4)
    items[1] = {**items[1], **change}
    write_jsonl(tmp_path / "test.jsonl", items)
    monkeypatch.setattr("dialshift.shifts.shift_dataset", lambda *a, **k: pytest.fail("shift computed"))
    out = tmp_path / "out"
    args = ["--shift", "sr", "--param", "turns=2", "--name", "a", "--source-name", "b", "--out", str(out)]
    assert shift(tmp_path, *args) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("dialshift shift: error: ") and "\n" not in error, error
    assert says in error and "--skip-invalid" in error and not out.exists()
    monkeypatch.undo()
    assert shift(tmp_path, *args, "--skip-invalid") == 0
    printed = capsys.readouterr().out
    assert "left out 1 invalid rows" in printed
    stored = folder_configs(out)
    assert len(load_dataset(str(out), "b", split="test")) == 3 and sum(stored["a"].parameters["invalid"].values()) == 1


def test_write_custom_folder_refuses_rows_that_cannot_be_scored(tmp_path):
    items = rows(3)
    items[2]["label"] = 12
    with pytest.raises(DialshiftError, match=r"config 'mine' split 'test': row 3 \(id 't2'\): label: 12 is not"):
        write_custom_folder(tmp_path / "f", {"mine": Dataset.from_list(items)},
                            [custom_config("mine", task="response_ranking", description="d")])
    assert not (tmp_path / "f").exists()
    with pytest.raises(DialshiftError, match="give the datasets as a mapping by config name"):
        write_custom_folder(tmp_path / "f", [Dataset.from_list(rows(2))], [])
    with pytest.raises(DialshiftError, match="config name 3: give a string"):
        custom_config(3, task="response_ranking", description="d")
    with pytest.raises(DialshiftError, match="'x' names itself as its baseline"):
        custom_config("x", task="response_ranking", description="d", shift=SourceLength(turns=1), baseline="x")


@pytest.mark.parametrize(("params", "says"), [
    (["--param", "deleted=1.5"], "parameter deleted='1.5': expected a whole number"),
    (["--param", "deleted=nan"], "parameter deleted='nan': expected a whole number"),
    (["--param", "deleted=1", "--param", "windw=3"], "--shift ic has no parameter 'windw'; its parameters: deleted"),
    (["--param", "deleted=1", "--param", "selection=most"], "selection='most': must be one of at_least, exactly"),
    (["--param", "deleted=6"], "--shift ic: IC deletes 0 .. 5 of 6 turns, got 6"),
    (["--param", "deleted=-1"], "parameter deleted=-1: out of range: int >= 0"),
    (["--param", "deleted"], "--param 'deleted': expected NAME=VALUE"),
    ([], "--shift ic needs --param deleted=VALUE"),
    (["--param", "deleted=1", "--param", "deleted=2"], "--param deleted is given twice"),
])
def test_bad_parameters_are_one_line_before_anything_is_read(tmp_path, capsys, monkeypatch, params, says):
    monkeypatch.setattr("dialshift.commands.shift.load_rows", lambda *a, **k: pytest.fail("input read"))
    assert shift(tmp_path, "--shift", "ic", *params, "--name", "a", "--source-name", "b",
                 "--out", str(tmp_path / "o")) == 2
    error = capsys.readouterr().err.strip()
    assert says in error and "\n" not in error, error


def test_names_and_word_shift_parameters_are_checked_before_wordnet(tmp_path, capsys, monkeypatch):
    write_jsonl(tmp_path / "test.jsonl", rows())
    monkeypatch.setattr("dialshift.wordnet.load_wordnet", lambda *a, **k: pytest.fail("WordNet loaded"))
    base = ["--train", str(tmp_path / "test.jsonl"), "--out", str(tmp_path / "o")]
    assert shift(tmp_path, "--shift", "ic", "--param", "deleted=1", "--name", "x", "--source-name", "x",
                 "--out", str(tmp_path / "o")) == 2
    assert "--name and --source-name are both 'x'" in capsys.readouterr().err
    for params, says in ((["ratio=1.5"], "ratio=1.5: out of range: float in (0, 1)"),
                         (["ratio=0.3", "senses=-1"], "senses=-1: out of range"),
                         (["ratio=0.3", "inflect=maybe"], "inflect='maybe': expected true or false"),
                         (["ratio=0.3", "rounding=up"], "rounding='up': must be one of floor, round")):
        flags = [item for value in params for item in ("--param", value)]
        assert shift(tmp_path, "--shift", "uw", *flags, "--name", "a", "--source-name", "b", *base) == 2
        assert says in capsys.readouterr().err
    assert shift(tmp_path, "--shift", "kw", "--param", "ratio=0.3", "--param", "rule=near", "--name", "a",
                 "--source-name", "b", *base) == 2
    assert "rule='near': must be one of random, levenshtein" in capsys.readouterr().err
    assert shift(tmp_path, "--shift", "sr", "--param", "turns=2", "--name", "a/b", "--source-name", "b",
                 "--out", str(tmp_path / "o")) == 2
    assert "invalid config name 'a/b'" in capsys.readouterr().err


def test_shift_dataset_on_empty_and_wrong_inputs():
    empty = Dataset.from_list(rows(1)).select([])
    shifted, report = shift_dataset(empty, InsufficientContext(deleted=1, window=2), return_report=True)
    assert len(shifted) == 0 and report.rows == 0 and report.shifted == 0
    assert {"context", "replacements", "shift", "label"} <= set(shifted.column_names)
    assert "skip_reason" not in shifted.column_names
    kept = shift_dataset(empty, SourceLength(turns=1), keep_unchanged=True)
    assert "skip_reason" in kept.column_names
    with pytest.raises(DialshiftError, match="no 'id' column \\(it has no columns\\)"):
        shift_dataset(Dataset.from_dict({}), SourceLength(turns=1))
    with pytest.raises(DialshiftError, match="takes a datasets.Dataset, got list"):
        shift_dataset(rows(2), SourceLength(turns=1))
    with pytest.raises(DialshiftError, match="takes a dialshift Shift, got str"):
        shift_dataset(Dataset.from_list(rows(2)), "ic")
    with pytest.raises(DialshiftError, match="seed must be a whole number"):
        shift_dataset(Dataset.from_list(rows(2)), SourceLength(turns=1), seed=-1)


def test_input_files_that_are_empty_or_mixed_with_a_separator(tmp_path, capsys):
    (tmp_path / "empty.jsonl").write_text("")
    args = ["--shift", "sr", "--param", "turns=2", "--name", "a", "--source-name", "b", "--out", str(tmp_path / "o")]
    assert shift(tmp_path, *args, source="empty.jsonl") == 2
    assert "empty.jsonl: empty file" in capsys.readouterr().err
    write_jsonl(tmp_path / "test.jsonl", rows(3))  # contexts already lists: --turn-separator leaves them
    assert shift(tmp_path, *args, "--turn-separator", "||") == 0
    assert len(load_dataset(str(tmp_path / "o"), "a", split="test")) == 1
    assert shift(tmp_path, *args, "--turn-separator", " ") == 2
    assert "--turn-separator ' ': give the text between turns" in capsys.readouterr().err
    write_jsonl(tmp_path / "floats.jsonl", [{**rows(1)[0], "id": 1.5}])
    assert shift(tmp_path, *args, source="floats.jsonl") == 2
    assert "row 1: id: 1.5 is a float, not a string or whole number" in capsys.readouterr().err
