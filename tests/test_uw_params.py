"""UW/KW parameters are checked before any WordNet set-up, with one line naming the parameter and what it accepts."""

import pytest

from dialshift.errors import DialshiftError
from dialshift.shifts import ImportantWord, KnownWord, UnknownWord

TEXTS = ["I have a car .", "The car is fast ."]


@pytest.fixture
def no_wordnet(monkeypatch):
    """Fail the test if anything prepares or opens WordNet."""
    import dialshift.wordnet as wordnet

    def refuse(*args, **kwargs):
        raise AssertionError("WordNet was set up before the parameters were checked")

    monkeypatch.setattr(wordnet, "prepare_wordnet", refuse)
    monkeypatch.setattr(wordnet, "load_wordnet", refuse)
    monkeypatch.setattr(wordnet, "_load", refuse)


@pytest.mark.parametrize("shift, params, expected", [
    (UnknownWord, {}, r"needs parameter 'ratio': the share of the context's words replaced, a number in \(0, 1\)"),
    (KnownWord, {}, r"needs parameter 'ratio'.*\(0, 1\)"),
    (UnknownWord, {"ratio": 1.5}, r"parameter ratio 1.5 is outside \(0, 1\)"),
    (UnknownWord, {"ratio": "0.3x"}, r"parameter ratio must be a number in \(0, 1\).*'0.3x' \(str\)"),
    (UnknownWord, {"ratio": float("nan")}, r"parameter ratio nan is outside \(0, 1\)"),
    (UnknownWord, {"ratio": True}, r"parameter ratio must be a number"),
    (UnknownWord, {"ratio": 0.3, "rounding": "up"}, r"parameter rounding must be one of floor, round, ceil, got 'up'"),
    (UnknownWord, {"ratio": 0.3, "mode": "gist"}, r"parameter mode must be one of paper, meaning, got 'gist'"),
    (UnknownWord, {"ratio": 0.3, "mode": "meaning", "unseen": "maybe"},
     r"parameter unseen must be one of required, preferred, optional, got 'maybe'"),
    (UnknownWord, {"ratio": 0.3, "unseen": "optional"}, r"parameter unseen=optional applies to mode=meaning only"),
    (UnknownWord, {"ratio": 0.3, "senses": -1}, r"parameter senses must be a whole number >= 0"),
    (UnknownWord, {"ratio": 0.3, "inflect": "yes"}, r"parameter inflect must be true or false"),
    (UnknownWord, {"ratio": 0.3, "ratoi": 0.2}, r"UnknownWord \(uw\) has no parameter .ratoi.; its parameters: "),
    (KnownWord, {"ratio": 0.3, "rule": "nearest"}, r"parameter rule must be one of random, levenshtein"),
    (KnownWord, {"ratio": 0.3, "min_count": -5}, r"parameter min_count must be a whole number >= 0, got -5"),
    (KnownWord, {"ratio": 0.3, "min_count": 2.5}, r"parameter min_count must be a whole number >= 0, got 2.5"),
])
def test_bad_or_missing_parameters_fail_before_wordnet(no_wordnet, shift, params, expected):
    with pytest.raises(DialshiftError, match=expected) as caught:
        shift.for_corpus(TEXTS, **params)
    message = str(caught.value)
    assert "\n" not in message and "__init__" not in message


@pytest.mark.parametrize("params, expected", [
    ({}, r"needs parameter 'bucket': the word-importance bucket replaced, 1 .. num_buckets"),
    ({"bucket": 6}, r"parameter bucket must be 1 .. 5, got 6"),
    ({"bucket": 0}, r"parameter bucket must be a whole number >= 1, got 0"),
])
def test_importance_parameters_are_one_line_errors(params, expected):
    with pytest.raises(DialshiftError, match=expected):
        ImportantWord.make_params(**params)


@pytest.mark.wordnet
def test_wordnet_is_opened_on_the_first_lookup_not_before(monkeypatch, tmp_path):
    import dialshift.wordnet as wordnet

    try:
        wordnet.source_dir()
    except DialshiftError:
        pytest.skip("WordNet (wordnet-base) not installed")
    opened = []
    monkeypatch.setattr(wordnet, "load_wordnet", lambda *args: opened.append(args) or pytest.fail("opened"))
    shift = UnknownWord.for_corpus(TEXTS, cache=tmp_path, ratio=0.3)
    assert opened == [] and shift.params.ratio == 0.3
    with pytest.raises(pytest.fail.Exception):
        shift.synonyms.best("automobile")  # the first word not in the cache opens WordNet
    assert len(opened) == 1


def test_the_count_base_is_a_family_option_published_only_when_not_the_default():
    from dialshift_families.dailydialog import DailyDialogOptions, declared_configs
    from dialshift_families.dailydialog.pipeline import DailyDialogShifts

    from dialshift.sources.dailydialog import Dialogue

    config = {config.name: config for config in declared_configs()}["kw_0.45"]

    dialogues = {split: [Dialogue(f"dd-{split}-00000", split, 0, ("I like cars .", "me too"), (1, 1), (0, 0))]
                 for split in ("train", "validation", "test")}
    default = DailyDialogShifts(dialogues, None, DailyDialogOptions(kw_min_count=0).shift_options(0))
    spaced = DailyDialogShifts(dialogues, None, DailyDialogOptions(kw_min_count=0,
                                                                   uw_count_base="whitespace").shift_options(0))
    assert "base" not in default.shift(config).parameters() and "count_base" not in default.options.settings()
    assert spaced.shift(config).parameters()["base"] == "whitespace"
    assert spaced.options.settings()["count_base"] == "whitespace"
    with pytest.raises(DialshiftError, match="parameter base must be one of tokens, whitespace, alnum, words"):
        UnknownWord.make_params(ratio=0.3, base="bytes")
    with pytest.raises(DialshiftError, match="base=words applies to mode=paper only"):
        UnknownWord.make_params(ratio=0.3, base="words", mode="meaning")


def test_the_ratio_base_counts_what_it_names():
    from dialshift.shifts.lexical import TokenizedContext
    from dialshift.shifts.replace import SynonymTable
    from dialshift.shifts.words import Vocabulary

    context = TokenizedContext.of(["I've got £ 330 .", "ok"])
    table = SynonymTable(None, Vocabulary.from_texts([]))
    assert [context.ratio_base(table, base) for base in ("tokens", "whitespace", "alnum", "words")] == [8, 6, 5, 4]
