"""The meaning-keeping Unknown Word mode (``mode="meaning"``) and the synonym table's disk cache, on a fake WordNet."""

import json

import pytest
from test_shifts import FakeSenseWordNet

from dialshift.shifts import InstanceRandom, KnownWord, UnknownWord, shift_from_description
from dialshift.shifts import meaning as meaning_rules
from dialshift.shifts.lexical import TokenizedContext
from dialshift.shifts.replace import SynonymTable, WordRules
from dialshift.shifts.table_cache import TableCache, attach, table_key
from dialshift.shifts.words import Vocabulary

_CAR = [("n", {"car": 71, "auto": 2, "automobile": 15, "motorcar": 1})]
WORDNET = FakeSenseWordNet({
    "car": _CAR, "cars": _CAR,
    "fancy": [("n", {"fancy": 0, "whim": 2}), ("v", {"fancy": 76, "wish": 31, "care": 7})],
    "like": [("v", {"like": 76, "wish": 31})],
    "the": [("n", {"the": 0, "thebe": 0})],
    "did": [("v", {"do": 90, "perform": 20})],
    "saw": [("n", {"saw": 5, "adage": 1})],
    "don": [("n", {"don": 1, "father": 2})],
    "you": [("n", {"you": 0, "thou": 1})],
    "yeah": [("r", {"yeah": 1, "yea": 0})],
    "pc": [("n", {"pc": 3, "microcomputer": 1})],
    "happy": [("a", {"happy": 40, "felicitous": 2, "glad": 30})],
    "dozen": [("n", {"twelve": 1, "12": 6, "dozen": 15})],
    "dress": [("v", {"dress": 12, "clothe": 3, "garb": 1}), ("n", {"dress": 10, "frock": 2})],
})
TRAIN = Vocabulary.from_texts(["my auto is a car , I care about it , glad , yes ."])
WORDS = ["cars", "fancy", "like", "the", "did", "saw", "don", "you", "yeah", "pc", "happy", "dozen", "car"]


def meaning(**params):
    return UnknownWord(synonyms=SynonymTable(WORDNET, TRAIN), mode="meaning", fit="none", **params)


def replaced(shift, text, uid="x"):
    result = shift.apply([text], InstanceRandom(0, uid))
    return [(item.original, item.replacement) for item in result.replacements] if result else result


def test_meaning_mode_replaces_only_content_words():
    """Pronouns, auxiliaries (and words whose lemma is one), determiners, contraction pieces, fillers and words under
    three letters are never targets, though the paper's rules replace them all."""
    shift = meaning(ratio=0.9, rounding="ceil")
    context = TokenizedContext.of(["The car , you saw , did - don ' t yeah PC like ?"])
    choices = dict(zip(context.words(), context.choices(shift.synonyms), strict=True))
    assert {word for word, choice in choices.items() if choice is not None} == {"car"}
    assert choices["car"] == "automobile"  # "the car" is a noun; "auto" is a training word
    paper = SynonymTable(WORDNET, TRAIN)
    assert all(paper.replaceable(word) for word in ("the", "you", "did", "saw", "don", "yeah", "pc", "like"))


def test_meaning_mode_takes_the_part_of_speech_from_the_context_and_inflects():
    shift = meaning(ratio=0.5, rounding="ceil")
    assert replaced(shift, "I fancy cars") == [("fancy", "wish")]  # a verb after "I": its most frequent verb sense
    assert replaced(shift, "cars are fine") == [("cars", "automobiles")]  # inflected like the word
    assert replaced(shift, "the dress is red") == [("dress", "frock")]  # a noun after "the"
    assert replaced(shift, "we dress") == [("dress", "clothe")]  # a verb after "we"
    assert not replaced(shift, "dress")  # no cue, and neither reading holds 70 % of the uses: no target
    assert not replaced(shift, "a dozen eggs")  # the top sense is a number sense: no synonym


def test_meaning_mode_counts_the_ratio_over_content_words():
    text = "oh , the car , you know , is it the car or not , is it ?"  # 18 tokens, 2 content words
    context = TokenizedContext.of([text])
    shift = meaning(ratio=0.5)
    assert context.ratio_base(shift.synonyms) == 2 and context.num_tokens == 18
    assert replaced(shift, text) == [("car", "automobile")]  # ceil (the mode's default) of 0.5 x 2 = 1 target
    paper = UnknownWord(synonyms=SynonymTable(WORDNET, TRAIN), ratio=0.5)
    assert paper.apply([text], InstanceRandom(0, "x")).reason == "below_ratio"  # needs 9 of 18 tokens


def test_meaning_mode_is_a_published_parameter_and_the_paper_rows_keep_their_bytes():
    table = SynonymTable(WORDNET, TRAIN)
    paper = UnknownWord(synonyms=table, ratio=0.3)
    shift = UnknownWord(synonyms=table, ratio=0.3, mode="meaning", fit="none")
    assert "mode" not in paper.parameters()  # as before the mode existed: published uw_* rows are unchanged
    assert paper.parameters()["rounding"] == "floor"
    assert shift.parameters() == {"ratio": 0.3, "rounding": "ceil", "content_words": True, "senses": 1,
                                  "inflect": True, "mode": "meaning", "unseen": "preferred", "fit": "none"}
    assert "unseen" not in paper.parameters() and "unseen" not in repr(paper)
    assert paper.fingerprint() != shift.fingerprint() and "mode='meaning'" in repr(shift)
    rebuilt = shift_from_description(shift.describe(0), synonyms=table)
    assert rebuilt.params == shift.params and rebuilt.synonyms is shift.synonyms
    known = KnownWord(synonyms=table, ratio=0.5, mode="meaning", fit="none", min_count=0, rounding="ceil")
    kw = known.apply(["cars are fine"], InstanceRandom(0, "x"))
    assert [(r.turn, r.index) for r in kw.replacements] == [(0, 0)]  # UW's content-word target


def test_the_table_is_cached_on_disk_by_its_inputs(tmp_path):
    wordnet = FakeSenseWordNet(WORDNET.table)
    for rules in (WordRules(), WordRules(mode="meaning")):
        first = attach(SynonymTable(wordnet, TRAIN, rules=rules), tmp_path)
        assert first.precompute(WORDS) == len(WORDS)
        path = TableCache(tmp_path).path(table_key(first))
        assert json.loads(path.read_text())["key"] == table_key(first)
        before = sum(wordnet.calls.values())
        second = attach(SynonymTable(wordnet, TRAIN, rules=rules), tmp_path)
        assert second.precompute(WORDS) == 0 and sum(wordnet.calls.values()) == before  # WordNet not read again
        assert [second.best(word) for word in WORDS] == [first.best(word) for word in WORDS]
    other = SynonymTable(wordnet, Vocabulary.from_texts(["my car"]))
    assert table_key(other) != table_key(first)  # another vocabulary: another table
    assert len(list(tmp_path.glob("*.json"))) == 2 and not list(tmp_path.glob("*tmp*"))


def test_a_damaged_cache_file_is_ignored_and_rewritten(tmp_path, caplog):
    table = attach(SynonymTable(FakeSenseWordNet(WORDNET.table), TRAIN), tmp_path)
    table.precompute(WORDS)
    path = TableCache(tmp_path).path(table_key(table))
    path.write_text('{"key": "trun')
    again = attach(SynonymTable(FakeSenseWordNet(WORDNET.table), TRAIN), tmp_path)
    assert "ignoring the unreadable UW table cache" in caplog.text
    assert again.precompute(WORDS) == len(WORDS) and json.loads(path.read_text())["key"] == table_key(table)


@pytest.mark.parametrize("mode", ["paper", "meaning"])
def test_shift_dataset_output_is_the_same_with_and_without_the_cache(tmp_path, mode):
    from datasets import Dataset

    from dialshift.shifts import shift_dataset

    rows = Dataset.from_list([{"id": f"r{k}", "context": ["I like cars", "the happy car did it"][: 1 + k % 2]}
                              for k in range(6)])
    outputs = []
    for cache in (False, tmp_path, tmp_path):
        shift = UnknownWord.for_corpus(["my auto is a car , I care about it , glad , yes ."], wordnet=WORDNET,
                                       cache=cache, ratio=0.3, mode=mode, rounding="ceil")
        outputs.append(shift_dataset(rows, shift).to_list())
    assert outputs[0] == outputs[1] == outputs[2] and outputs[0]


def test_the_judged_sample_states_what_its_verdicts_count():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "benchmarks" / "uw_meaning_sample.md").read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert len(sections) == 8  # Ubuntu IRC: seeds 10, 11 (round 4), 8, 9 (first check), 4, 5 (fit=none), 2, 3
    counts = {}
    for section in sections:
        heading = section.splitlines()[0]
        stated = re.search(r"sample seed (\d+).*: (\d+) of (\d+) plausible", heading)
        rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
        verdicts = [line.split("|")[-3].strip() for line in rows]
        reasons = [line.split("|")[-2].strip() for line in rows]
        assert set(verdicts) <= {"yes", "no"} and len(rows) == int(stated[3])
        assert verdicts.count("yes") == int(stated[2])
        assert all(reason for verdict, reason in zip(verdicts, reasons, strict=True) if verdict == "no")
        counts[int(stated[1])] = int(stated[2])
    for first, second in ((2, 3), (4, 5), (8, 9), (10, 11)):  # the summary table states the same counts
        together = counts[first] + counts[second]
        assert f"**{counts[first]} + {counts[second]} of 100 ({together} %)**" in text


@pytest.mark.parametrize("unseen, happy, fancy", [
    ("preferred", "glad", "wish"),  # felicitous (2) is not half as used as glad (30); wish (31) is, next to care (40)
    ("required", "felicitous", "wish"),  # a true unknown word, however rare
    ("optional", "glad", "care"),  # the most used in the sense, seen in training or not
])
def test_the_unseen_rule_picks_among_the_synonyms_of_the_dominant_sense(unseen, happy, fancy):
    wordnet = FakeSenseWordNet({**WORDNET.table, "fancy": [("v", {"fancy": 76, "wish": 31, "care": 40})]})
    shift = UnknownWord(synonyms=SynonymTable(wordnet, TRAIN), mode="meaning", fit="none", unseen=unseen, ratio=0.5)
    assert shift.parameters()["unseen"] == unseen
    assert replaced(shift, "they are happy .") == [("happy", happy)]  # "glad" and "care" are training words
    assert replaced(shift, "we fancy it") == [("fancy", fancy)]
    assert replaced(shift, "cars are fine") == [("cars", "automobiles")]  # "auto" (2) is seen, "motorcar" (1) rare


def test_only_a_clear_dominant_sense_gives_synonyms_and_a_synonym_must_be_its_own_word():
    """No target where the reading's top sense is rare or under a third of its uses (``start``), where the synonym
    is rarely used in that sense (``remove -> take``), is a derivation of the word (``communication ->
    communicating``) or is too rare there (``motorcar``); such words are not counted by the ratio either."""
    wordnet = FakeSenseWordNet({
        **WORDNET.table,
        "start": [("v", {"start": 10, "begin": 30}), ("v", {"start": 10, "commence": 6}), ("v", {"start": 10})],
        "remove": [("v", {"remove": 50, "take": 9})],
        "take": [("v", {"take": 900}), ("v", {"remove": 50, "take": 9})],
        "communication": [("n", {"communication": 20, "communicating": 5})],
        "folder": [("n", {"folder": 2, "pamphlet": 4})],
        "motorcar": [("n", {"motorcar": 1, "car": 71})],
    })
    table = SynonymTable(wordnet, TRAIN).with_rules(WordRules(mode="meaning"))
    for word in ("start", "remove", "communication", "folder", "motorcar"):
        entry = table.entry(word)
        assert entry["content"] and not any(entry["synonyms"].values()) and not entry["substitutable"], word
    assert table.entry("car")["synonyms"] == {"n": "automobile"}


def test_a_verb_form_read_two_ways_takes_a_synonym_with_one_form_for_both():
    """``traveled`` is a past tense and a participle: ``went``/``gone`` would be wrong in one of them; ``journeyed``
    fits both."""
    travel = [("v", {"travel": 10, "go": 5, "journey": 3})]
    wordnet = FakeSenseWordNet({"traveled": travel, "travels": travel})
    table = SynonymTable(wordnet, TRAIN).with_rules(WordRules(mode="meaning"))
    assert table.entry("traveled")["synonyms"] == {"v": "journeyed"}
    assert table.entry("travels")["synonyms"] == {"v": "goes"}


def test_phrases_addressees_and_jargon_are_no_targets(monkeypatch):
    """A verb before a particle (``dress up``), a word of a fixed phrase, the nickname a message is addressed to and
    the corpus's jargon (far more frequent in its training split than in SemCor) are left alone."""
    from collections import Counter

    shift = meaning(ratio=0.5, rounding="ceil")
    assert not replaced(shift, "we dress up")  # the phrasal verb 'dress up'
    assert not replaced(shift, "car : hello")  # an addressee
    assert replaced(shift, "hello , car") == [("car", "automobile")]
    monkeypatch.setattr(meaning_rules, "COLLOCATIONS", frozenset({("red", "dress")}))
    assert not replaced(meaning(ratio=0.5, rounding="ceil"), "a red dress")
    wordnet = FakeSenseWordNet({**WORDNET.table, "kernel": [("n", {"kernel": 3, "meat": 2})]})
    help_channel = Vocabulary(Counter({"kernel": 5000, "car": 10, "the": 200000}))
    shift = UnknownWord(synonyms=SynonymTable(wordnet, help_channel), mode="meaning", fit="none", ratio=0.5)
    assert replaced(shift, "the kernel and the car") == [("car", "automobile")]  # kernel: jargon, not counted
    small = Vocabulary(Counter({"kernel": 50, "car": 1}))  # under MIN_KEYNESS_TOKENS: says nothing about jargon
    shift = UnknownWord(synonyms=SynonymTable(wordnet, small), mode="meaning", fit="none", ratio=0.9)
    assert sorted(replaced(shift, "the kernel and the car")) == [("car", "automobile"), ("kernel", "meat")]


class PhraseWordNet(FakeSenseWordNet):
    """A fake WordNet that also lists multiword lemmas (``all_lemma_names``) and verb frames per lemma."""

    def __init__(self, table, phrases=(), frames=None):
        super().__init__(table)
        self.phrases, self.frames = list(phrases), frames or {}

    def all_lemma_names(self):
        return iter(sorted({name for synsets in self.table.values() for _, counts in synsets for name in counts}
                           | set(self.phrases)))

    def synsets(self, word):
        synsets = super().synsets(word)
        for synset in synsets:
            for lemma in synset.lemmas():
                lemma.frame_ids = (lambda ids: lambda: ids)(self.frames.get(lemma.name(), []))
        return synsets


def test_a_word_of_a_wordnet_multiword_lemma_with_its_neighbours_is_no_target():
    """``hard drive``, ``no matter``: the word keeps no meaning of its own there (also inflected: ``hard drives``)."""
    table = {**WORDNET.table, "hard": [("a", {"hard": 30, "difficult": 20})], "drives": [("n", {"drive": 5})],
             "matter": [("n", {"matter": 30, "affair": 10})]}
    shift = UnknownWord(synonyms=SynonymTable(PhraseWordNet(table, ["hard_drive", "no_matter"]), TRAIN),
                        mode="meaning", fit="none", ratio=0.9)
    assert replaced(shift, "a hard task") == [("hard", "difficult")]
    assert replaced(shift, "clone hard drives").reason == "too_few_tokens"  # not counted either
    assert replaced(shift, "no matter what").reason == "too_few_tokens"
    assert replaced(shift, "this matter") == [("matter", "affair")]


def test_a_synonym_whose_own_most_frequent_sense_is_the_shared_one_comes_first():
    """``guess -> reckon``: *think* is used more in the sense, but it first means something else."""
    guess = ("v", {"guess": 20, "think": 30, "reckon": 5})
    table = {"guess": [guess], "think": [("v", {"think": 50}), guess], "reckon": [guess]}
    shift = UnknownWord(synonyms=SynonymTable(PhraseWordNet(table), TRAIN), mode="meaning", fit="none",
                        ratio=0.5)
    assert replaced(shift, "I guess so") == [("guess", "reckon")]


def test_a_verb_before_to_or_an_object_pronoun_takes_a_synonym_with_that_verb_frame():
    """WordNet's verb frames: ``want to -> desire to`` (28: to INFINITIVE), not ``aid to``; ``help them -> aid them``
    (9: somebody), not ``tell us -> say us`` (``tell`` takes no person in that sense)."""
    table = {"want": [("v", {"want": 50, "desire": 20})], "help": [("v", {"help": 50, "aid": 20})],
             "tell": [("v", {"tell": 50, "state": 30})]}
    frames = {"want": [8, 28], "desire": [8, 28], "help": [8, 9, 28], "aid": [8, 9], "tell": [8, 26],
              "state": [8, 26]}
    shift = UnknownWord(synonyms=SynonymTable(PhraseWordNet(table, frames=frames), TRAIN), mode="meaning", fit="none",
                        ratio=0.5)
    assert replaced(shift, "we want to go") == [("want", "desire")]
    assert replaced(shift, "we help to go").reason == "too_few_tokens"
    assert replaced(shift, "they help them") == [("help", "aid")]
    assert replaced(shift, "please tell us").reason == "too_few_tokens"
    assert replaced(shift, "they tell stories") == [("tell", "state")]


def test_a_verb_before_a_thing_or_an_ing_form_takes_a_synonym_with_that_verb_frame():
    """``ask the question`` is not the sense whose frames take no thing (5, 8, 11, ...); ``stops working -> halts
    working`` fails frame 33 (VERB-ing); without a complement both are replaced."""
    table = {"ask": [("v", {"ask": 50, "inquire": 20})], "stops": [("v", {"stop": 50, "halt": 20})]}
    frames = {"ask": [2, 14], "inquire": [2, 14], "stop": [1, 2], "halt": [1, 2]}
    shift = UnknownWord(synonyms=SynonymTable(PhraseWordNet(table, frames=frames), TRAIN), mode="meaning", fit="none",
                        ratio=0.5)
    assert replaced(shift, "please ask the question").reason == "too_few_tokens"
    assert replaced(shift, "please ask politely") == [("ask", "inquire")]
    assert replaced(shift, "it stops working").reason == "too_few_tokens"
    assert replaced(shift, "it stops .") == [("stops", "halts")]


def test_a_noun_next_to_a_word_that_can_only_be_a_noun_is_part_of_a_compound():
    table = {**WORDNET.table, "manager": [("n", {"manager": 30, "director": 10})], "folder": [("n", {"folder": 5})]}
    shift = UnknownWord(synonyms=SynonymTable(PhraseWordNet(table), TRAIN), mode="meaning", fit="none",
                        ratio=0.5)
    assert replaced(shift, "the folder manager").reason == "too_few_tokens"
    assert replaced(shift, "the manager") == [("manager", "director")]


@pytest.mark.parametrize("negation", ["don't", "dont"])
def test_a_negation_before_a_word_reads_it_as_a_verb(negation):
    assert replaced(meaning(ratio=0.5), f"they {negation} dress") == [("dress", "clothe")]


def test_a_cold_call_with_the_disk_cache_filled_reads_no_wordnet_nor_its_libraries(tmp_path):
    """A fresh process whose table is all on disk gives the same rows without importing scikit-learn (the stop list)
    or lemminflect (both only fill the table) and without opening WordNet; another code version misses the cache."""
    import subprocess
    import sys
    from pathlib import Path

    from dialshift.shifts import table_cache

    texts, rows = ["my auto is a car , I care about it , glad , yes ."], [["I fancy cars", "the happy car did it"]]
    shift = UnknownWord.for_corpus(texts, wordnet=WORDNET, cache=tmp_path, ratio=0.5, mode="meaning")
    shift.prepare(rows)  # fills the table and writes it (shift_dataset does this)
    expected = [shift.apply(row, InstanceRandom(0, f"r{k}")).context for k, row in enumerate(rows)]
    script = (
        "import sys, json\n"
        "from test_uw_meaning import WORDNET\n"
        "from dialshift.shifts import InstanceRandom, UnknownWord\n"
        f"shift = UnknownWord.for_corpus({texts!r}, wordnet=WORDNET, cache={str(tmp_path)!r}, ratio=0.5, "
        "mode='meaning')\n"
        f"turns = [shift.apply(row, InstanceRandom(0, f'r{{k}}')).context for k, row in enumerate({rows!r})]\n"
        "print(json.dumps([turns, sum(WORDNET.calls.values()), "
        "[name for name in ('sklearn', 'lemminflect', 'nltk') if name in sys.modules]]))\n")
    tests = Path(__file__).resolve().parent
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={**__import__("os").environ, "PYTHONPATH": str(tests)}, cwd=tests.parent)
    turns, wordnet_calls, imported = json.loads(found.stdout)
    assert [tuple(turn) for turn in turns] == expected and expected[0] != tuple(rows[0])
    assert wordnet_calls == 0 and imported == []
    before = table_key(shift.synonyms)
    table_cache.code_digest.cache_clear()
    try:
        original = table_cache.FORMAT
        table_cache.FORMAT = original + 1  # another layout or code version: another key, the old file not read
        assert table_key(shift.synonyms) != before
    finally:
        table_cache.FORMAT = original
        table_cache.code_digest.cache_clear()
