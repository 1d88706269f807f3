"""The one predictions writer: a config's predictions in its scoring task's fields, typed, rounded, checked."""

import json

import numpy as np
import pytest

from dialshift.errors import DialshiftError
from dialshift.scoring.predictions import write_predictions


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_fields_are_typed_and_rounded_in_the_order_given(tmp_path):
    path = write_predictions(tmp_path / "c.jsonl", "response_ranking", ["a", "b"],
                             {"scores": np.array([[1.23456789, -2.0], [0.5, 0.25]], dtype=np.float32),
                              "probabilities": [[0.123456789, 0.876543211], [0.5, 0.5]], "uncertainty": None},
                             digits={"probabilities": 3}, extra=("uncertainty",))
    assert path.read_text().splitlines()[0] == (
        '{"id": "a", "scores": [1.2345678806304932, -2.0], "probabilities": [0.123, 0.877], "uncertainty": null}')
    assert lines(path)[1] == {"id": "b", "scores": [0.5, 0.25], "probabilities": [0.5, 0.5], "uncertainty": None}


def test_integer_and_float_fields(tmp_path):
    path = write_predictions(tmp_path / "c.jsonl", "open_world_intent", ["a", "b"],
                             {"prediction": np.array([0, 2]), "score": np.array([0.5, 1])})
    assert path.read_text() == ('{"id": "a", "prediction": 0, "score": 0.5}\n'
                                '{"id": "b", "prediction": 2, "score": 1.0}\n')


def test_an_extra_field_takes_lists_and_numbers(tmp_path):
    path = write_predictions(tmp_path / "c.jsonl", "attention_distribution", ["a"],
                             {"attention_scores": [[0.123456789, 1]], "note": [3]}, digits={"note": 1},
                             extra=("note",))
    assert lines(path) == [{"id": "a", "attention_scores": [0.123456789, 1.0], "note": 3.0}]


@pytest.mark.parametrize(("columns", "kwargs", "message"), [
    ({"prediction": [0, 1], "scores": [[1.0], [2.0]]}, {},
     r"'scores' is not a field of the open_world_intent task \(its fields: prediction, score\)"),
    ({"prediction": [0, 1, 2]}, {}, "3 values of 'prediction' for 2 ids"),
    ({"prediction": [0, 7]}, {"bounds": {"prediction": (0, 3)}}, r"prediction 7 of 'b' is outside 0..2"),
    ({"prediction": [-1, 0]}, {"bounds": {"prediction": (0, 3)}}, r"prediction -1 of 'a' is outside 0..2"),
])
def test_bad_columns_are_refused_and_nothing_is_written(tmp_path, columns, kwargs, message):
    path = tmp_path / "c.jsonl"
    with pytest.raises(DialshiftError, match=message) as error:
        write_predictions(path, "open_world_intent", ["a", "b"], columns, **kwargs)
    assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)
    assert not path.exists()


def test_a_repeated_id_is_refused(tmp_path):
    with pytest.raises(DialshiftError, match="the id 'b' occurs twice"):
        write_predictions(tmp_path / "c.jsonl", "open_world_intent", ["b", "a", "b"], {"prediction": [0, 1, 2]})
    assert not (tmp_path / "c.jsonl").exists()


def test_an_unknown_task_is_refused(tmp_path):
    with pytest.raises(DialshiftError, match="no_such_task"):
        write_predictions(tmp_path / "c.jsonl", "no_such_task", ["a"], {"prediction": [0]})
