"""The public Shift API at its boundary: checked contexts, skip reasons, shift_dataset's options, the ``shift``
column and the fingerprint ``datasets`` caches by (fake WordNet; no corpus)."""

import json
import logging
import re

import pytest
from datasets import Dataset
from test_shifts import FakeWordNet  # noqa: I001

from dialshift.errors import DialshiftError
from dialshift.shifts import (
    DistractingInsertion,
    ImportantWord,
    InstanceRandom,
    InsufficientContext,
    KnownWord,
    SourceLength,
    UnknownWord,
    shift_dataset,
    shift_from_description,
)
from dialshift.shifts.dataset import SharedPipeline, ShiftPipeline
from dialshift.shifts.replace import SynonymTable
from dialshift.shifts.words import Vocabulary

WORDNET = FakeWordNet({"car": [["car", "automobile"]], "big": [["big", "large"]], "house": [["house", "domicile"]],
                       "example": [["example", "illustration"]], "com": [["com", "commercial"]],
                       "https": [["https", "secure"]], "see": [["see", "view"]], "red": [["red", "crimson"]]})
TRAIN = Vocabulary.from_texts(["the is a it ?", ". , yes very"] * 3000)


def synonyms():
    return SynonymTable(WORDNET, TRAIN)


def uw(ratio=0.3, table=None):
    return UnknownWord(ratio=ratio, synonyms=table or synonyms())


R = InstanceRandom(0, "row-7")


# --- the boundary ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("context", "says"), [
    ("the car is big .", "is one string"),
    (["the car", None], "turn 1 is None"),
    (["the car", 3], "turn 1 is 3 (int)"),
    ([], "the context is empty"),
    (7, "is a int, not a list of turns"),
])
def test_bad_contexts_are_one_error_naming_the_instance(context, says):
    for shift in (uw(), InsufficientContext(deleted=1, window=2), DistractingInsertion(sentences=["x ."] * 2),
                  SourceLength(turns=1)):
        with pytest.raises(DialshiftError, match=rf"^instance 'row-7': .*{re.escape(says)}") as error:
            shift.apply(context, R)
        assert "\n" not in str(error.value)


def test_a_string_context_says_how_to_split_it():
    with pytest.raises(DialshiftError, match="split it into turns.*turn_separator="):
        uw().apply("the car is big .", R)


def test_unscored_context_in_importance_names_the_instance():
    shift = ImportantWord(bucket=1, synonyms=synonyms(), scores={("a b",): [[0.1, 0.2]]})
    with pytest.raises(DialshiftError, match="^instance 'row-7': the context has no word-importance scores"):
        shift.apply(["the car is big"], R)


def test_english_wordnet_shifts_report_other_scripts():
    assert UnknownWord.languages == ("en",) and ImportantWord.languages == ("en",) and KnownWord.languages == ("en",)
    assert InsufficientContext.languages is None
    for context in (["안녕하세요 반갑습니다", "네 car"], ["你好，今天天气很好", "是的"]):
        result = uw().apply(context, R)
        assert not result and result.reason == "unsupported_language"
    assert uw(0.2).apply(["the big car is red", "café au lait car house"], R)  # Latin letters: English rules apply


def test_urls_and_addresses_are_never_replaced():
    text = "see https://example.com/car or www . example.com , the big red car house"
    result = uw(0.2).apply([text], R)
    assert result.context[0].startswith("see https://example.com/car or www . example.com , ") or \
        result.context[0].startswith("view https://example.com/car or www . example.com , ")
    assert all(item.original not in ("https", "example", "com") for item in result.replacements)


# --- skip reasons ----------------------------------------------------------------------------------------------

def test_every_shift_says_why_it_did_not_apply():
    table = synonyms()
    cases = [
        (uw(0.3, table), ["it ."], "too_few_tokens"),
        (uw(0.3, table), ["the is a it ? yes"], "no_eligible_word"),
        (uw(0.5, table), ["the car is a it ?"], "below_ratio"),
        (KnownWord(ratio=0.5, synonyms=table, min_count=10), ["the car is a it ?"], "below_ratio"),
        (InsufficientContext(deleted=1, window=3), ["a", "b"], "too_few_turns"),
        (InsufficientContext(deleted=1, window=2, selection="exactly"), ["a", "b", "c"], "wrong_length"),
        (SourceLength(turns=2), ["a"], "wrong_length"),
        (DistractingInsertion(sentences=["x ."] * 2), ["q"], "too_few_turns"),
        (ImportantWord(bucket=1, synonyms=table, scores={("the car is big",): [[0.1, 0.2, 0.3, 0.4]]}),
         ["the car is big"], "empty_bucket"),
    ]
    for shift, context, reason in cases:
        result = shift.apply(context, R)
        assert not result and result.reason == reason, (shift, result)
    assert uw(0.3, table).apply(["the big car ."], R)  # and a ShiftResult is truthy


# --- shift_dataset ---------------------------------------------------------------------------------------------

CORPUS = {"id": ["a", "b", "c", "d"],
          "context": [["the car is big .", "yes , a big house ."], ["it ."], ["the red car ?", "yes .", "a car ."],
                      ["the is a it ?", "yes"]]}


def test_shift_dataset_counts_drops_by_reason_and_logs_them(caplog):
    with caplog.at_level(logging.WARNING, logger="dialshift.shifts.dataset"):
        shifted, report = shift_dataset(Dataset.from_dict(CORPUS), uw(), seed=3, return_report=True)
    assert shifted["id"] == ["a", "c"]
    assert report.rows == 4 and report.shifted == 2 and report.skipped == {"no_eligible_word": 1, "too_few_tokens": 1}
    assert "2 not shifted, left out (no_eligible_word 1, too_few_tokens 1)" in caplog.text
    assert "skip_reason" not in shifted.column_names
    first = shifted[0]
    assert first["shift"] == {"name": "uw", "key": "uw_0.30", "seed": 3,
                              "parameters": json.dumps(uw().parameters(), sort_keys=True)}
    assert first["context"] == list(uw().apply(CORPUS["context"][0], InstanceRandom(3, "a")).context)


def test_keep_unchanged_include_original_and_seeds_per_instance():
    data = Dataset.from_dict(CORPUS)
    kept = shift_dataset(data, uw(), keep_unchanged=True)
    assert kept["id"] == CORPUS["id"] and kept["skip_reason"] == [None, "too_few_tokens", None, "no_eligible_word"]
    assert kept["context"][1] == CORPUS["context"][1]
    both, report = shift_dataset(data, uw(), include_original=True, seeds_per_instance=2, seed=5, return_report=True)
    assert both["id"] == ["a", "a@5", "a@6", "b", "c", "c@5", "c@6", "d"]
    assert [row and row["seed"] for row in both["shift"]] == [None, 5, 6, None, None, 5, 6, None]
    assert both["context"][0] == CORPUS["context"][0] and both["context"][1] != CORPUS["context"][0]
    assert both["context"][2] == list(uw().apply(CORPUS["context"][0], InstanceRandom(6, "a")).context)
    assert report.originals == 4 and report.shifted == 4 and report.skipped == {"too_few_tokens": 2,
                                                                                "no_eligible_word": 2}
    with pytest.raises(DialshiftError, match="seeds_per_instance must be at least 1"):
        shift_dataset(data, uw(), seeds_per_instance=0)


def test_shifted_rows_can_be_shifted_again():
    once = shift_dataset(Dataset.from_dict(CORPUS), InsufficientContext(deleted=0, window=1))
    twice = shift_dataset(once, uw(0.2), keep_unchanged=True)
    assert twice["id"] == CORPUS["id"] and twice["truncated_turns"] == [[]] * 4
    assert [row["name"] for row in twice["shift"]] == ["uw"] * 4


def test_string_contexts_need_a_turn_separator():
    data = Dataset.from_dict({"id": [1, 2], "context": ["a __eou__ b __eou__ c", "x"]})
    with pytest.raises(DialshiftError, match="^instance 1: the 'context' column holds one string.*turn_separator="):
        shift_dataset(data, InsufficientContext(deleted=1, window=2))
    shifted = shift_dataset(data, InsufficientContext(deleted=1, window=2), turn_separator="__eou__")
    assert shifted["context"] == [["c"]] and shifted["deleted_turns"] == [["b"]]
    assert shifted["truncated_turns"] == [["a"]]


def test_fingerprint_is_cheap_stable_and_names_what_decides_the_output(monkeypatch):
    import datasets.arrow_dataset
    import datasets.fingerprint

    original = datasets.fingerprint.update_fingerprint

    def hashed(fingerprint, transform, arguments):
        assert not any(isinstance(value, ShiftPipeline) for value in arguments.values()), \
            "datasets hashed (pickled) the shift instead of using its fingerprint"
        return original(fingerprint, transform, arguments)

    monkeypatch.setattr(datasets.fingerprint, "update_fingerprint", hashed)
    monkeypatch.setattr(datasets.arrow_dataset, "update_fingerprint", hashed)
    one, two = uw(), uw()
    one.synonyms.precompute(["car", "big", "house"])  # a filled table fingerprints as an empty one
    assert one.fingerprint() == two.fingerprint()
    assert uw(0.2).fingerprint() != one.fingerprint()
    other = UnknownWord(ratio=0.3, synonyms=SynonymTable(WORDNET, Vocabulary.from_texts(["the car"])))
    assert other.fingerprint() != one.fingerprint()
    data = Dataset.from_dict(CORPUS)
    assert shift_dataset(data, one)._fingerprint == shift_dataset(data, two)._fingerprint
    assert shift_dataset(data, one, seed=1)._fingerprint != shift_dataset(data, one)._fingerprint


def test_workers_get_the_shift_by_reference_and_agree_with_one_process():
    import pickle

    assert len(pickle.dumps(SharedPipeline("k" * 32))) < 200
    data = Dataset.from_dict({"id": [f"r{k}" for k in range(40)],
                              "context": [["the car is big .", f"a red house {k} ."] for k in range(40)]})
    table = synonyms()
    single = shift_dataset(data, uw(table=table))
    parallel = shift_dataset(data, uw(table=table), num_proc=2, batch_size=8)
    assert single.to_dict() == parallel.to_dict()


def test_a_row_is_regenerated_from_its_shift_column():
    table = synonyms()
    data = Dataset.from_dict(CORPUS)
    for shift, resources in ((uw(0.3, table), {"synonyms": table}),
                             (KnownWord(ratio=0.3, synonyms=table, min_count=10), {"synonyms": table}),
                             (InsufficientContext(deleted=1, window=2), {}),
                             (DistractingInsertion(sentences=["x .", "y ."]), {"sentences": ["x .", "y ."]})):
        for row in shift_dataset(data, shift, seed=2):
            again = shift_from_description(row["shift"], **resources)
            result = again.apply(CORPUS["context"][CORPUS["id"].index(row["id"])],
                                 InstanceRandom(row["shift"]["seed"], row["id"]))
            assert list(result.context) == row["context"]
    with pytest.raises(DialshiftError, match="no shift named 'nope'"):
        shift_from_description({"name": "nope", "key": "", "parameters": "{}", "seed": 0})
