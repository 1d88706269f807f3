"""Pure shift logic on hand-made dialogues with a fake WordNet: rules, counting, dropping, KW, IC/SR, importance."""

from collections import Counter

import numpy as np
import pytest
from dialshift_families.dailydialog import declared_configs
from dialshift_families.dailydialog.pipeline import DailyDialogShifts, ShiftOptions

from dialshift.configs import BenchmarkConfig
from dialshift.errors import DialshiftError
from dialshift.ranking.instances import draw_candidates
from dialshift.registry import select_configs
from dialshift.shifts.context import delete_turns, ic_eligible, sr_eligible
from dialshift.shifts.replace import (
    KnownWords,
    SynonymTable,
    bucket_targets,
    importance_buckets,
    ratio_targets,
    select_targets,
    target_count,
)
from dialshift.shifts.seeding import instance_rng, stable_hash
from dialshift.shifts.words import (
    Vocabulary,
    is_number,
    is_word,
    match_case,
    normalized_levenshtein,
    substitute,
    token_spans,
    tokenize,
)
from dialshift.sources.dailydialog import Dialogue

CONFIGS = {config.name: config for config in declared_configs()}


class FakeSynset:
    def __init__(self, names):
        self.names = names

    def lemma_names(self):
        return list(self.names)


class FakeWordNet:
    """``synsets(word)`` from a dict: word -> list of synsets (lists of lemma names)."""

    def __init__(self, table):
        self.table = table
        self.calls = Counter()

    def synsets(self, word):
        self.calls[word] += 1
        return [FakeSynset(names) for names in self.table.get(word, [])]


WORDNET = FakeWordNet({
    "car": [["car", "auto", "automobile", "motorcar"], ["car", "railcar", "railway_car"]],
    "big": [["big", "large"], ["big", "bad"]],
    "house": [["house", "home"]],
    "two": [["two", "2", "II", "deuce"]],
    "computer": [["computer", "data-processor", "computing_machine", "reckoner"]],
    "go": [["go", "spell", "tour", "turn"]],
    "run": [["run", "zz", "yy"]],
    "the": [],
    "dozen": [["twelve", "12", "xii", "dozen"], ["dozen", "large_indefinite_quantity"]],
    "i": [["one", "1", "I", "ane", "unity"], ["iodine", "iodin", "I", "atomic_number_53"]],
    "m": [["thousand", "one_thousand", "m", "chiliad", "grand"], ["meter", "m", "metre"]],
})
TRAIN = Vocabulary.from_texts(["The car is big .", "I go home , my Home .", "tour the town"])


def table():
    return SynonymTable(WORDNET, TRAIN)


# --- tokens and words -------------------------------------------------------------------------------------------

def test_tokenize_counts_punctuation_and_contraction_pieces():
    assert tokenize("I've got £ 330 .") == ["I", "'", "ve", "got", "£", "330", "."]


def test_substitute_changes_only_the_replaced_tokens():
    text = "Hey man , you wanna buy it ?"
    spans = token_spans(text)
    assert substitute(text, spans, {1: "homo", 6: "IT"}) == "Hey homo , you wanna buy IT ?"
    assert substitute(text, spans, {}) == text


def test_words_and_numbers():
    assert is_word("house") and is_word("I")
    assert not is_word("330") and not is_word("two") and not is_word(",") and not is_word("3pm")
    assert is_number("Hundred") and is_number("1st") and not is_number("none")


def test_normalized_levenshtein_yujian_bo():
    assert normalized_levenshtein("kitten", "sitting") == pytest.approx(2 * 3 / (6 + 7 + 3))
    assert normalized_levenshtein("Car", "car") == 0.0
    assert normalized_levenshtein("a", "b") == pytest.approx(2 / 3)


def test_match_case():
    assert match_case("I", "iodine") == "Iodine"
    assert match_case("USA", "america") == "AMERICA"
    assert match_case("car", "Auto") == "Auto"


def test_vocabulary_case_folding():
    assert "home" in TRAIN and "HOME" in TRAIN and TRAIN.count("home") == 2
    sensitive = Vocabulary.from_texts(["Home home"], case_sensitive=True)
    assert sensitive.count("Home") == 1 and "HOME" not in sensitive


# --- synonym rules ----------------------------------------------------------------------------------------------

def test_rule_1_numbers_are_never_synonyms_nor_targets():
    synonyms = table()
    assert synonyms.best("two") is None  # a number target
    assert synonyms.valid("two") == []  # the number sense {two, 2, II, deuce} is skipped whole
    assert SynonymTable(WORDNET, TRAIN, exclude_number_senses=False).valid("two") == ["II", "deuce"]


@pytest.mark.parametrize(("word", "valid"), [("dozen", []), ("I", ["iodin", "iodine"]), ("m", ["meter", "metre"])])
def test_rule_1_number_senses_are_skipped(word, valid):
    """Issue 9: ``I -> ane``, ``m -> chiliad``, ``dozen -> xii`` were number senses leaking through rule 1."""
    assert table().valid(word) == valid
    assert table().best(word) in (valid or [None])


@pytest.mark.parametrize(("lemma", "numeral"), [("12", True), ("1,000", True), ("1st", True), ("twelve", True),
                                                 ("one_thousand", True), ("twenty-one", True), ("xii", False),
                                                 ("atomic_number_53", False), ("I", False), ("ane", False)])
def test_is_numeral(lemma, numeral):
    from dialshift.shifts.words import is_numeral

    assert is_numeral(lemma) is numeral


def test_rule_2_multiword_and_hyphenated_lemmas_are_excluded():
    assert table().valid("computer") == ["reckoner"]


def test_rule_3_training_words_are_excluded_case_insensitively():
    synonyms = table()
    assert synonyms.valid("house") == []  # "home" occurs in training (as "home" and "Home")
    assert synonyms.best("house") is None
    assert "tour" not in synonyms.valid("go")  # in training


def test_rule_4_farthest_normalised_levenshtein_with_alphabetical_ties():
    synonyms = table()
    # car -> auto 0.727, automobile 0.870, motorcar 0.625, railcar 0.571 (railway_car fails rule 2)
    assert synonyms.valid("car") == ["auto", "automobile", "motorcar", "railcar"]
    assert synonyms.best("car") == "automobile"
    # big -> large 0.667, bad 0.5
    assert synonyms.best("Big") == "large" and synonyms.replace("Big") == "Large"
    # go -> spell 0.833 beats turn 0.8 (tour is a training word)
    assert synonyms.best("go") == "spell"
    # run -> zz and yy tie at 0.75: the alphabetically first wins
    assert normalized_levenshtein("run", "zz") == normalized_levenshtein("run", "yy") == 0.75
    assert synonyms.best("run") == "yy"


def test_synonym_table_looks_each_word_up_once():
    wordnet = FakeWordNet(WORDNET.table)
    synonyms = SynonymTable(wordnet, TRAIN)
    synonyms.precompute(["car", "Car", "big"])
    for _ in range(3):
        synonyms.best("CAR")
    assert wordnet.calls["car"] == 1


# --- target counting and selection ------------------------------------------------------------------------------

def test_target_count_floor_and_round():
    assert target_count(19, 0.05) == 0 and target_count(20, 0.05) == 1
    assert target_count(30, 0.1) == 3  # 0.1 * 30 = 3.0000000000000004 or 2.9999..., never 2
    assert target_count(10, 0.05, "round") == 0 and target_count(11, 0.05, "round") == 1


@pytest.mark.parametrize("ratio", [0.0, 1.0, 1.5, -0.1])
def test_ratio_outside_unit_interval_is_an_error(ratio):
    with pytest.raises(DialshiftError, match="outside"):
        target_count(10, ratio)


def test_select_targets_skips_words_without_synonym_and_drops_when_too_few():
    replaceable = [False, True, False, True, True]
    assert select_targets([0, 1, 2, 3, 4], replaceable, 2, required=2) == [1, 3]
    assert select_targets([4, 0, 1], replaceable, 2, required=2) == [1, 4]
    assert select_targets([0, 2, 3], replaceable, 2, required=2) is None


def test_ratio_targets_counts_drops_and_is_seeded():
    replaceable = [True] * 6 + [False] * 4
    rng = lambda: instance_rng(0, "uw_0.30", "dd-test-00000-t01")  # noqa: E731
    targets = ratio_targets(20, replaceable, 0.30, rng())  # n = 6, exactly the 6 replaceable words
    assert targets == [0, 1, 2, 3, 4, 5]
    assert ratio_targets(20, replaceable, 0.35, rng()) is None  # n = 7 > 6 replaceable: dropped
    assert ratio_targets(19, replaceable, 0.05, rng()) is None  # n = 0: dropped
    first, second = ratio_targets(40, [True] * 10, 0.1, rng()), ratio_targets(40, [True] * 10, 0.1, rng())
    assert first == second and len(first) == 4


def test_stable_hash_and_instance_rng_are_process_independent():
    import hashlib

    assert stable_hash("uw_0.30") == int.from_bytes(hashlib.sha256(b"uw_0.30").digest()[:8], "little")
    draws = [instance_rng(0, "uw_0.30", "dd-test-00001-t01").integers(1 << 30) for _ in range(2)]
    assert draws[0] == draws[1] != instance_rng(0, "kw_0.30", "dd-test-00001-t01").integers(1 << 30)


# --- known words ------------------------------------------------------------------------------------------------

def test_known_word_threshold_is_strictly_more_than_min_count():
    vocabulary = Vocabulary(Counter({"the": 5001, "you": 9000, "cat": 5000, "s": 8000, "don": 6000, ".": 9999}))
    known = KnownWords(vocabulary, min_count=5000)
    assert known.words == ["the", "you"]  # 5,000 is not "more than 5,000"; contraction pieces and punctuation out


def test_known_word_random_rule_never_returns_the_target():
    vocabulary = Vocabulary(Counter({"the": 6000, "you": 9000, "and": 7000}))
    known = KnownWords(vocabulary, min_count=5000, rule="random")
    rng = np.random.default_rng(0)
    picks = {known.choose("You", rng) for _ in range(50)}
    assert picks == {"The", "And"}


def test_known_word_levenshtein_rule_and_bad_rule():
    vocabulary = Vocabulary(Counter({"the": 6000, "you": 9000, "and": 7000}))
    known = KnownWords(vocabulary, min_count=5000, rule="levenshtein")
    # then -> the 0.25, you 0.727, and 0.727: tie broken alphabetically
    assert known.choose("Then", np.random.default_rng(0)) == "And"
    with pytest.raises(DialshiftError, match="KW rule"):
        KnownWords(vocabulary, rule="nearest")
    with pytest.raises(DialshiftError, match="fewer than 2"):
        KnownWords(vocabulary, min_count=8000)


# --- importance buckets -----------------------------------------------------------------------------------------

def test_importance_buckets_rank_tokens_into_five_shares():
    scores = [[0.9, 0.1, 0.5], [0.3, 0.2, 0.8, 0.0, 0.6, 0.4, 0.7]]  # 10 tokens, 2 per bucket
    buckets = importance_buckets(scores)
    # ranks: 0.0 0.1 | 0.2 0.3 | 0.4 0.5 | 0.6 0.7 | 0.8 0.9
    assert buckets == [[5, 1, 3], [2, 2, 5, 1, 4, 3, 4]]
    flat = [b for row in buckets for b in row]
    assert Counter(flat) == {1: 2, 2: 2, 3: 2, 4: 2, 5: 2}
    tied = importance_buckets([[1.0] * 5])
    assert tied == [[1, 2, 3, 4, 5]]  # ties: earlier token is less important
    with pytest.raises(DialshiftError, match="NaN"):
        importance_buckets([[float("nan"), 1.0]])


def test_bucket_targets_take_every_replaceable_word_of_the_bucket():
    word_buckets = [1, 1, 2, 3, 1]
    assert bucket_targets(word_buckets, [True, False, True, True, True], 1) == [0, 4]
    assert bucket_targets(word_buckets, [False, True, True, True, False], 1) == [1]
    assert bucket_targets(word_buckets, [False, True, True, True, False], 5) is None


# --- IC / SR ----------------------------------------------------------------------------------------------------

def test_ic_deletes_the_first_k_of_the_last_six_turns():
    context = [f"u{i}" for i in range(8)]
    kept, deleted = delete_turns(context, 2)
    assert kept == ["u4", "u5", "u6", "u7"] and deleted == ["u2", "u3"]
    assert delete_turns(context, 0) == (context[2:], [])
    with pytest.raises(DialshiftError):
        delete_turns(context, 6)
    with pytest.raises(DialshiftError):
        delete_turns(context[:5], 1)


def test_ic_and_sr_selection():
    assert ic_eligible(6) and ic_eligible(9) and not ic_eligible(5)
    assert ic_eligible(6, selection="exactly") and not ic_eligible(7, selection="exactly")
    with pytest.raises(DialshiftError):
        ic_eligible(6, selection="most")
    assert sr_eligible(3, 3) and not sr_eligible(4, 3)


# --- ranking candidates -----------------------------------------------------------------------------------------

def test_candidates_exclude_own_dialogue_and_duplicates():
    pool = ["a", "b", "gold", "c", "d", "e", "f", "g", "h", "i", "j", "k", "gold", "b"]
    owner = [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]
    for seed in range(20):
        candidates, label = draw_candidates("gold", 0, pool, owner, np.random.default_rng(seed))
        assert len(candidates) == 10 and candidates[label] == "gold"
        assert len(set(candidates)) == 10 and "a" not in candidates
    again = draw_candidates("gold", 0, pool, owner, np.random.default_rng(3))
    assert again == draw_candidates("gold", 0, pool, owner, np.random.default_rng(3))


def test_a_split_too_small_for_nine_negatives_is_an_error():
    from dialshift.ranking.instances import ranking_instances

    tiny = [dialogue("test", 0, "a", "b"), dialogue("test", 1, "c", "d", "e")]
    with pytest.raises(DialshiftError, match="too small"):
        ranking_instances(tiny, seed=0)


# --- config names -----------------------------------------------------------------------------------------------

def test_typed_configs_carry_their_shift():
    names = list(CONFIGS)
    assert names[:2] == ["dailydialog", "uw_0.05"] and "uw_0.50" in names and "kw_0.25" in names
    assert "uw_imp_5" in names and "ic_5of6" in names and "sr_1" in names and len(names) == 38
    assert CONFIGS["dailydialog"].group is None and CONFIGS["dailydialog"].splits == ("train", "validation", "test")
    assert (CONFIGS["uw_0.30"].group.name, CONFIGS["uw_0.30"].intensity, CONFIGS["uw_0.30"].parameters) == (
        "uw", 0.3, {"ratio": 0.3})
    assert CONFIGS["uw_0.30"].group.figure == CONFIGS["kw_0.30"].group.figure == "uw_kw"
    assert (CONFIGS["ic_2of6"].intensity_label, CONFIGS["sr_4"].intensity_label) == ("2/6", "2/6")
    assert CONFIGS["uw_imp_3"].optional and not CONFIGS["uw_0.30"].optional
    assert all(config.task == "response_ranking" for config in CONFIGS.values())
    assert BenchmarkConfig.from_dict(CONFIGS["ic_2of6"].to_dict()) == CONFIGS["ic_2of6"]


@pytest.mark.parametrize("pattern", ["uw_1.5", "kw_0", "ic_6of6", "uw_imp_0", "UW_0.30", "foo", "source"])
def test_unknown_config_is_a_one_line_error(pattern):
    with pytest.raises(DialshiftError) as error:
        select_configs(["dailydialog"], [pattern])
    assert "\n" not in str(error.value) and pattern in str(error.value)


# --- the pipeline on hand-made dialogues ------------------------------------------------------------------------

def dialogue(split, index, *turns):
    return Dialogue(f"dd-{split}-{index:05d}", split, index, tuple(turns), (1,) * len(turns), (0,) * len(turns))


def toy_dialogues():
    train = [dialogue("train", 0, "The car is big .", "I go home , my Home ."), dialogue("train", 1, "tour the town",
                                                                                        "yes")]
    test = [
        dialogue("test", 0, "My car is big .", "A big house ?", "Yes , a big car .", "Go !"),
        dialogue("test", 1, "The computer is two .", "Go home .", "Car car car car ."),
        dialogue("test", 2, "Hello there .", "Hi .", "Bye .", "See you .", "Later .", "Ok .", "Fine .", "Done ."),
    ]
    test += [dialogue("test", 3 + k, f"Filler number {k} .", f"Reply {k} .") for k in range(5)]
    validation = [dialogue("validation", 0, "a .", "b .")]
    return {"train": train, "validation": validation, "test": test}


def shifts(**options):
    return DailyDialogShifts(toy_dialogues(), WORDNET, ShiftOptions(kw_min_count=0, **options))


def test_source_rows_have_every_turn_after_the_first():
    rows = shifts().rows(CONFIGS["dailydialog"])
    assert [row["id"] for row in rows][:3] == ["dd-test-00000-t01", "dd-test-00000-t02", "dd-test-00000-t03"]
    assert len(rows) == 3 + 2 + 7 + 5
    assert all(row["candidates"][row["label"]] == toy_dialogues()["test"][int(row["dialogue_id"][-5:])].turns[
        row["turn"]] for row in rows)
    assert all(row["context_turns"] == row["turn"] and row["replacements"] == [] for row in rows)


def test_uw_rows_record_and_apply_replacements():
    pipeline = shifts()
    rows = pipeline.rows(CONFIGS["uw_0.20"])
    by_id = {row["id"]: row for row in rows}
    # dd-test-00000-t03: context "My car is big . | A big house ? | Yes , a big car ." = 5+4+6 = 15 tokens -> n = 3;
    # replaceable words: car, big, big, big, car (house's synonym is a training word)
    row = by_id["dd-test-00000-t03"]
    assert len(row["replacements"]) == 3
    for item in row["replacements"]:
        turn_tokens = tokenize(pipeline.source_rows("test")[2]["context"][item["turn"]])
        assert turn_tokens[item["index"]] == item["original"]
        assert tokenize(row["context"][item["turn"]])[item["index"]] == item["replacement"]
        assert item["replacement"].lower() == pipeline.synonyms.best(item["original"]).lower()
    # dd-test-00000-t01: "My car is big ." = 5 tokens -> n = floor(1.0) = 1
    assert len(by_id["dd-test-00000-t01"]["replacements"]) == 1
    # dialogue 2 has no replaceable word at all: every instance is dropped
    assert not any(row["dialogue_id"] == "dd-test-00002" for row in rows)


def test_kw_uses_the_uw_targets_and_known_words():
    pipeline = shifts()
    uw = {row["id"]: row for row in pipeline.rows(CONFIGS["uw_0.30"])}
    kw = {row["id"]: row for row in pipeline.rows(CONFIGS["kw_0.30"])}
    assert uw.keys() == kw.keys() and uw
    for uid in uw:
        positions = [(item["turn"], item["index"], item["original"]) for item in uw[uid]["replacements"]]
        assert positions == [(item["turn"], item["index"], item["original"]) for item in kw[uid]["replacements"]]
        for item in kw[uid]["replacements"]:
            assert item["replacement"].lower() in pipeline.known.words
            assert item["replacement"].lower() != item["original"].lower()


def test_shift_of_an_instance_does_not_depend_on_other_instances():
    full = shifts().rows(CONFIGS["uw_0.20"])
    dialogues = toy_dialogues()
    dialogues["test"] = dialogues["test"][:1] + dialogues["test"][3:]  # dialogues 1 and 2 removed
    alone = DailyDialogShifts(dialogues, WORDNET, ShiftOptions(kw_min_count=0)).rows(CONFIGS["uw_0.20"])
    common = {row["id"]: row["replacements"] for row in alone}
    assert common and all(row["replacements"] == common[row["id"]] for row in full if row["id"] in common)


def test_seed_changes_the_draws():
    first = [row["replacements"] for row in shifts(seed=0).rows(CONFIGS["uw_0.20"])]
    assert first == [row["replacements"] for row in shifts(seed=0).rows(CONFIGS["uw_0.20"])]
    candidates = [row["candidates"] for row in shifts(seed=1).rows(CONFIGS["dailydialog"])]
    assert candidates != [row["candidates"] for row in shifts(seed=0).rows(CONFIGS["dailydialog"])]


def test_ic_and_sr_rows():
    pipeline = shifts()
    ic = pipeline.rows(CONFIGS["ic_4of6"])
    assert [row["id"] for row in ic] == ["dd-test-00002-t06", "dd-test-00002-t07"]
    last_six = ["Hi .", "Bye .", "See you .", "Later .", "Ok .", "Fine ."]
    assert ic[1]["context"] == last_six[4:] and ic[1]["deleted_turns"] == last_six[:4]
    source = {row["id"]: row for row in pipeline.source_rows("test")}
    assert ic[1]["context_turns"] == 2
    assert (ic[1]["candidates"], ic[1]["label"]) == (source[ic[1]["id"]]["candidates"], source[ic[1]["id"]]["label"])
    exactly = shifts(ic_selection="exactly").rows(CONFIGS["ic_0of6"])
    assert [row["id"] for row in exactly] == ["dd-test-00002-t06"]
    sr = pipeline.rows(CONFIGS["sr_2"])
    assert {row["id"] for row in sr} == {"dd-test-00000-t02", "dd-test-00001-t02", "dd-test-00002-t02"}
    assert all({**row, "shift": None} == source[row["id"]] for row in sr)  # unchanged but for how it was made
    assert all(row["shift"]["name"] == "sr" and source[row["id"]]["shift"] is None for row in sr)
    assert all(row["deleted_turns"] == [] for row in sr)


def test_importance_configs_reuse_the_uw_replacement_with_a_bucket_selector():
    pipeline = shifts()

    def scorer(contexts):
        """A fake attention that spreads the replaceable words evenly over the importance ranking."""
        scores = []
        for context in contexts:
            flat = [(t, i) for t, turn in enumerate(context) for i in range(len(turn))]
            good = [(t, i) for t, i in flat if is_word(context[t][i]) and pipeline.synonyms.replaceable(context[t][i])]
            ranks = {position: (k * 2 + 1) * len(flat) // (2 * len(good)) for k, position in enumerate(good)}
            free = iter(sorted(set(range(len(flat))) - set(ranks.values())))
            ranks.update({position: next(free) for position in flat if position not in ranks})
            scores.append([[float(ranks[(t, i)]) for i in range(len(turn))] for t, turn in enumerate(context)])
        return scores

    with pytest.raises(DialshiftError, match="importance-model"):
        pipeline.rows(CONFIGS["uw_imp_1"])
    pipeline.set_importance("test", scorer)
    per_bucket = [pipeline.rows(CONFIGS[f"uw_imp_{b}"]) for b in range(1, 6)]
    ids = [[row["id"] for row in rows] for rows in per_bucket]
    assert all(bucket_ids == ids[0] for bucket_ids in ids)  # one instance set for all five buckets
    source = {row["id"]: row for row in pipeline.source_rows("test")}
    assert ids[0]
    for b, rows in enumerate(per_bucket, start=1):
        for row in rows:
            context = [tokenize(turn) for turn in source[row["id"]]["context"]]
            buckets = importance_buckets(scorer([context])[0])
            assert row["replacements"]
            for item in row["replacements"]:
                assert buckets[item["turn"]][item["index"]] == b
                assert item["replacement"].lower() == pipeline.synonyms.best(item["original"]).lower()
            replaceable_in_bucket = [(t, i) for t, turn in enumerate(context) for i, token in enumerate(turn)
                                     if buckets[t][i] == b and is_word(token) and pipeline.synonyms.replaceable(token)]
            assert [(item["turn"], item["index"]) for item in row["replacements"]] == replaceable_in_bucket
    with pytest.raises(DialshiftError, match="shape"):
        pipeline.set_importance("test", lambda contexts: [[[0.0]]])


# --- sense-preserving word rules (beyond the paper) -------------------------------------------------------------

class FakeLemma:
    def __init__(self, name, count):
        self._name, self._count = name, count

    def name(self):
        return self._name

    def count(self):
        return self._count


class FakeSenseSynset(FakeSynset):
    """A synset with a part of speech and SemCor-style counts: ``(pos, {lemma: count})``."""

    def __init__(self, pos, counts):
        super().__init__(list(counts))
        self._pos, self._lemmas = pos, [FakeLemma(name, count) for name, count in counts.items()]

    def pos(self):
        return self._pos

    def lemmas(self):
        return self._lemmas


class FakeSenseWordNet(FakeWordNet):
    def synsets(self, word):
        self.calls[word] += 1
        return [FakeSenseSynset(pos, counts) for pos, counts in self.table.get(word, [])]

    def morphy(self, word, pos=None):
        return None


_CAR = [("n", {"car": 71, "auto": 2, "automobile": 15, "motorcar": 1}), ("n", {"car": 2, "railcar": 0})]
SENSE_WORDNET = FakeSenseWordNet({
    "car": _CAR,
    "cars": _CAR,  # NLTK's morphology maps cars -> car; the fake lists the synsets directly
    "like": [("n", {"like": 0, "ilk": 1}), ("v", {"wish": 31, "care": 7, "like": 76})],
    "oh": [("n", {"Ohio": 9, "OH": 0, "Buckeye_State": 0})],
    "the": [("n", {"the": 0, "thebe": 0})],
    "did": [("v", {"do": 90, "perform": 20})],
    "don": [("n", {"don": 1, "father": 2})],
    "s": [("n", {"s": 1, "second": 10})],
    "sue": [("v", {"sue": 5, "litigate": 1})],
    "dozen": [("n", {"twelve": 1, "12": 6, "xii": 0, "dozen": 15}), ("n", {"dozen": 0, "bakers": 0})],
    "amazed": [("v", {"amaze": 10, "astonish": 3, "astound": 1}), ("v", {"amaze": 1, "baffle": 0})],
})
SENSE_TRAIN = Vocabulary.from_texts(["my car is an auto , motorcars are fine .", "I like it , do you care ?"])


def sense_table(**rules):
    from dialshift.shifts.replace import WordRules

    return SynonymTable(SENSE_WORDNET, SENSE_TRAIN).with_rules(WordRules(**rules))


def test_word_rules_default_to_the_papers_and_name_their_presets():
    from dialshift.shifts.replace import UW_RULES, WordRules

    assert WordRules() == UW_RULES["paper"] and WordRules().preset == "paper"
    assert UW_RULES["sense"] == WordRules(content_words=True, senses=1, inflect=True)
    assert WordRules(senses=2).preset == "custom"
    with pytest.raises(DialshiftError, match="senses must be a whole number"):
        WordRules(senses=-1)
    table = SynonymTable(SENSE_WORDNET, SENSE_TRAIN)
    assert table.with_rules(WordRules()) is table
    assert table.with_rules(UW_RULES["sense"]) is table.with_rules(UW_RULES["sense"]) is not table


def test_content_word_rule_skips_stop_words_contraction_pieces_and_their_inflections():
    from dialshift.shifts.senses import is_content_word

    paper, content = sense_table(), sense_table(content_words=True)
    for word in ("the", "s", "don", "did"):  # each has a valid synonym under the paper's rules
        assert paper.replaceable(word) and not content.replaceable(word), word
    assert content.replaceable("car") and content.best("car") == paper.best("car")
    assert not is_content_word("got") and not is_content_word("t") and is_content_word("evening", "n")


def test_content_word_rule_skips_capitalised_words_inside_a_sentence():
    from dialshift.shifts.lexical import TokenizedContext

    context = TokenizedContext.of(["Sue , I told Sue .", "sue them"])
    assert context.words() == ["Sue", "I", "told", "Sue", "sue", "them"]
    assert context.replaceable(sense_table()) == [True, False, False, True, True, False]
    assert context.replaceable(sense_table(content_words=True)) == [True, False, False, False, True, False]


def test_sense_rule_keeps_the_most_frequent_senses_of_the_likely_part_of_speech():
    from dialshift.shifts.senses import likely_pos, top_senses, word_senses

    assert sense_table().valid("car") == ["automobile", "motorcar", "railcar"]
    assert sense_table(senses=1).valid("car") == ["automobile", "motorcar"]  # railcar: second sense
    assert sense_table(senses=2).valid("car") == ["automobile", "motorcar", "railcar"]
    senses = word_senses(SENSE_WORDNET, "like")
    assert likely_pos(senses, "like") == "v" and [s.count for s in senses] == [76, 0]
    assert [s.pos for s in top_senses(senses, "n", 1)] == ["n"]
    assert sense_table().valid("like") == ["ilk", "wish"] and sense_table(senses=1).valid("like") == ["wish"]
    # lemminflect's dictionary has no noun, verb, adjective or adverb reading of "oh": no likely part of speech
    assert sense_table().replaceable("oh") and not sense_table(senses=1).replaceable("oh")
    # the most frequent sense is a number sense: no synonym, not the rarer sense's
    assert sense_table().valid("dozen") == ["bakers"] and sense_table(senses=1).valid("dozen") == []


def test_inflection_rule_reinflects_the_synonym_and_checks_rule_3_on_the_form():
    assert sense_table().valid("cars") == ["automobile", "motorcar", "railcar"]  # the paper keeps the lemma
    # motorcars is a training word; automobiles is not
    assert sense_table(senses=1, inflect=True).valid("cars") == ["automobiles"]
    assert sense_table(senses=1, inflect=True).valid("amazed") == ["astonished", "astounded"]
    assert sense_table(inflect=True).valid("car") == sense_table().valid("car")  # a base form keeps the lemma


def test_word_shifts_take_the_rules_as_parameters():
    from dialshift.shifts import KnownWord, UnknownWord
    from dialshift.shifts.base import InstanceRandom
    from dialshift.shifts.replace import UW_RULES

    table = SynonymTable(SENSE_WORDNET, SENSE_TRAIN)
    paper = UnknownWord(ratio=0.3, synonyms=table)
    sense = UnknownWord(ratio=0.3, synonyms=table, content_words=True, senses=1, inflect=True)
    assert paper.synonyms is table and sense.synonyms.rules == UW_RULES["sense"]
    assert sense.parameters() == {"ratio": 0.3, "rounding": "floor", "content_words": True, "senses": 1,
                                  "inflect": True}
    dialogue = ["the cars , the cars !"]  # 6 tokens: n = 1 target
    result = sense.apply(dialogue, InstanceRandom(0, "x"))
    assert [(r.original, r.replacement) for r in result.replacements] == [("cars", "automobiles")]
    known = KnownWord(ratio=0.3, synonyms=table, content_words=True, senses=1, inflect=True, min_count=0)
    kw = known.apply(dialogue, InstanceRandom(0, "x"))
    assert [(r.turn, r.index) for r in kw.replacements] == [(r.turn, r.index) for r in result.replacements]


@pytest.mark.wordnet
def test_sense_counts_read_once_equal_nltk_lemma_count():
    from pathlib import Path

    if not Path("/usr/share/wordnet/cntlist.rev").is_file():
        pytest.skip("wordnet-base (with cntlist.rev) not installed")
    from dialshift.shifts.senses import lemma_count, likely_pos, word_senses
    from dialshift.wordnet import load_wordnet

    wordnet = load_wordnet()
    lemmas = [lemma for word in ("car", "like", "run", "magazine", "well") for synset in wordnet.synsets(word)
              for lemma in synset.lemmas()]
    assert [lemma_count(wordnet, lemma) for lemma in lemmas] == [lemma.count() for lemma in lemmas]
    assert any(lemma.count() for lemma in lemmas)
    assert likely_pos(word_senses(wordnet, "like"), "like") == "v"
    assert likely_pos(word_senses(wordnet, "cars"), "cars") == "n"
