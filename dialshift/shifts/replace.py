"""Unknown Word (UW) and Known Word (KW) replacement (Lee et al. 2022, §2.1, App. A.1, A.3, A.5).

One piece of code replaces words; only the *target selector* differs between configs:

* :func:`ratio_targets` (UW/KW ``*_{ratio}``): ``n = floor(ratio x tokens in the context)`` targets (``round``
  selectable); the context's words are visited in a seeded random order and the first ``n`` that have a valid
  unknown synonym become targets (a word without one is skipped: "we look for another target word"); fewer than
  ``n`` such words, or ``n = 0``, drops the instance.
* :func:`bucket_targets` (``uw_imp_{b}``): tokens ranked by an importance score, cut into five 20 % buckets; every
  word of bucket ``b`` with a valid unknown synonym is a target.

The synonym of a word (:class:`SynonymTable`) follows the paper's rules, applied to the lemma names of all WordNet
synsets of the word (every part of speech, NLTK's morphological lookup) other than the word itself:
(1) not a number, (2) a single alphabetic token (no multi-word ``_`` lemma, no hyphen), (3) not in the training
vocabulary, (4) the farthest normalised Levenshtein distance from the word among the rest (ties: alphabetical).
A known word (:class:`KnownWords`) is a word seen more than 5,000 times in the training split.

:class:`WordRules` adds three optional rules beyond the paper (all off by default; :data:`UW_RULES` names the presets
``paper`` and ``sense``): targets restricted to content words, synonyms drawn only from the word's ``senses`` most
frequent senses of its likely part of speech, and synonyms re-inflected like the word (:mod:`dialshift.shifts.senses`).
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from itertools import chain, repeat
from typing import NamedTuple

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.shifts import senses as sense_rules
from dialshift.shifts.base import ParameterError
from dialshift.shifts.words import Vocabulary, is_number, is_numeral, is_word, match_case, normalized_levenshtein

Position = tuple[int, int]  # (turn index in the context, token index in the turn)
ROUNDING = {"floor": math.floor, "round": round, "ceil": math.ceil}
#: The nudge that keeps float error from moving a whole product across an integer (0.1 x 30 = 3.0000000000000004).
_NUDGE = {"floor": 1e-9, "round": 0.0, "ceil": -1e-9}
KW_RULES = ("random", "levenshtein")
#: The KW threshold of Lee et al. App. A.3: a known word occurs more than this many times in training.
KW_MIN_COUNT = 5000


class Replacement(NamedTuple):
    """One replaced word: ``turn`` indexes the context, ``index`` the token in that turn."""

    turn: int
    index: int
    original: str
    replacement: str


def check_ratio(ratio: float) -> float:
    """``ratio`` when it is a number in (0, 1), else one :class:`DialshiftError` line naming the parameter."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)):
        raise ParameterError(f"parameter ratio must be a number in (0, 1) (the share of words replaced, e.g. 0.3), "
                             f"got {ratio!r} ({type(ratio).__name__})")
    if not 0 < ratio < 1:
        raise ParameterError(f"parameter ratio {ratio} is outside (0, 1) (the share of words replaced); use e.g. "
                             "0.05 ... 0.50")
    return ratio


def check_choice(name: str, value, choices) -> None:
    """One :class:`DialshiftError` line naming parameter ``name`` when ``value`` is not one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ParameterError(f"parameter {name} must be one of {', '.join(choices)}, got {value!r}")


def target_count(num_tokens: int, ratio: float, rounding: str = "floor") -> int:
    """How many targets a context of ``num_tokens`` tokens gets at ``ratio`` (a tiny epsilon absorbs 0.1*30=2.99..)."""
    check_ratio(ratio)
    check_choice("rounding", rounding, ROUNDING)
    return int(ROUNDING[rounding](ratio * num_tokens + _NUDGE[rounding]))


# --- rules ------------------------------------------------------------------------------------------------------

def rule_not_number(candidate: str) -> bool:
    """Rule 1: numbers are never synonyms (``2 -> two``); number targets are excluded by ``is_word``."""
    return not is_number(candidate)


def rule_single_word(candidate: str) -> bool:
    """Rule 2: one alphabetic token: no multi-word lemma (``data_processor``), no hyphen, no other punctuation."""
    return candidate.isalpha()


@dataclass(frozen=True, kw_only=True)
class WordRules:
    """Optional target and synonym rules beyond Lee et al.; the defaults are the paper's rules.

    ``content_words``: only content words are targets (:func:`dialshift.shifts.senses.is_content_word`: no stop word,
    contraction piece or inflection of a stop word; and no capitalised word inside a sentence, a likely name, see
    :meth:`dialshift.shifts.lexical.TokenizedContext.replaceable`). ``senses``: synonyms come only from the word's
    ``senses`` most frequent WordNet senses of its likely part of speech (0 = every synset of every part of speech,
    the paper's rule). ``inflect``: a synonym takes the word's inflection (``cars -> automobiles``; a synonym
    lemminflect cannot inflect, or whose lemma is a training word, is skipped). ``unseen`` (``mode="meaning"`` only,
    :data:`UNSEEN`): whether the synonym must be unseen in training (``required``), is taken unseen when a suitable
    one is (``preferred``, the default) or is simply the most common suitable one (``optional``). Shift parameter
    dataclasses inherit these fields, so every word shift takes them.
    """

    content_words: bool = False
    senses: int = 0
    inflect: bool = False
    mode: str = field(default="paper", repr=False)
    unseen: str = field(default=None, repr=False, metadata={
        "help": "mode=meaning only: the synonym must be unseen in training (required), is unseen when a suitable "
                "one is (preferred, the default) or is the most common suitable one (optional)"})

    def __post_init__(self):
        if not isinstance(self.senses, int) or isinstance(self.senses, bool) or self.senses < 0:
            raise ParameterError(f"parameter senses must be a whole number >= 0 (0 = every sense, the paper's rule), "
                                 f"got {self.senses!r}")
        for name in ("content_words", "inflect"):
            if not isinstance(getattr(self, name), bool):
                raise ParameterError(f"parameter {name} must be true or false, got {getattr(self, name)!r}")
        check_choice("mode", self.mode, MODES)
        if self.mode == "meaning":  # the meaning mode implies these rules (meaning.py)
            object.__setattr__(self, "content_words", True)
            object.__setattr__(self, "inflect", True)
            object.__setattr__(self, "senses", self.senses or 1)
            object.__setattr__(self, "unseen", self.unseen or DEFAULT_UNSEEN)
            check_choice("unseen", self.unseen, UNSEEN)
        elif self.unseen is not None:
            raise ParameterError(f"parameter unseen={self.unseen} applies to mode=meaning only; mode=paper always "
                                 "takes an unseen synonym (drop unseen, or add mode=meaning)")

    def word_rules(self) -> "WordRules":
        """These rules alone (without a subclass's other parameters)."""
        return WordRules(content_words=self.content_words, senses=self.senses, inflect=self.inflect, mode=self.mode,
                         unseen=self.unseen)

    def public_parameters(self) -> dict:
        """The parameters as a shift publishes them (``Shift.parameters``): every field, but those added after the
        first published rows (:data:`LATER_DEFAULTS`) only when they differ from their default, so rows made before
        they existed keep their bytes."""
        parameters = asdict(self)
        for name, default in LATER_DEFAULTS.items():
            if parameters.get(name, object()) == default:
                del parameters[name]
        return parameters

    def key(self) -> str:
        """What decides a table of these rules (for digests; the paper's mode as before the mode existed)."""
        rules = self.word_rules()
        return repr(rules) if rules.mode == "paper" else f"{rules!r}[mode={rules.mode},unseen={rules.unseen}]"

    @property
    def preset(self) -> str:
        """``paper``, ``sense`` or ``custom``: the name of these rules in :data:`UW_RULES`."""
        return next((name for name, rules in UW_RULES.items() if rules == self.word_rules()), "custom")

    def describe(self) -> str:
        """One line for cards and logs, e.g. ``content words, top-1 sense of the likely POS, re-inflected``."""
        parts = ["content words only" if self.content_words else "any word",
                 f"top-{self.senses} sense{'s' * (self.senses > 1)} of the likely part of speech" if self.senses
                 else "every sense of every part of speech",
                 "re-inflected" if self.inflect else "synonym lemma as in WordNet"]
        if self.mode == "meaning":
            parts.append(f"meaning mode (strict content words, part of speech from the context, the most common "
                         f"synonym of a clear dominant sense, unseen {self.unseen}, ratio over content words)")
        return ", ".join(parts)


#: ``mode`` of the word rules: ``paper`` (Lee et al.'s rules with the options above) or ``meaning`` (a meaning-keeping
#: Unknown Word for users' corpora, :mod:`dialshift.shifts.meaning`).
MODES = ("paper", "meaning")
#: ``unseen`` of the meaning mode (:mod:`dialshift.shifts.meaning`): the synonym must be unseen in the training texts
#: (``required``: a true unknown word, but often a rare one), is the most common unseen suitable synonym when there is
#: one and else the most common seen one (``preferred``), or is the most common suitable synonym (``optional``).
UNSEEN = ("required", "preferred", "optional")
DEFAULT_UNSEEN = "preferred"
#: What a ratio counts (``base`` of the UW/KW parameters; :meth:`dialshift.shifts.lexical.TokenizedContext.ratio_base`):
#: bert-style tokens (the build's rule), whitespace-separated tokens, ``\w+`` runs (no punctuation) or alphabetic
#: words. The meaning mode counts content words instead.
BASES = ("tokens", "whitespace", "alnum", "words")
#: Parameters added after rows were first published, with the default under which they are left out of a row's
#: ``shift`` description.
LATER_DEFAULTS = {"mode": "paper", "base": "tokens", "unseen": None, "fit": None, "fit_min": None,
                  "fit_prefer": None}

#: Named rule sets: ``paper`` (Lee et al. as stated, the default) and ``sense`` (the sense-preserving variant).
UW_RULES = {
    "paper": WordRules(),
    "sense": WordRules(content_words=True, senses=1, inflect=True),
}


class SynonymTable:
    """The valid unknown synonym of each word, from WordNet, computed once per word and reused across configs.

    ``rules`` (:class:`WordRules`) defaults to the paper's; :meth:`with_rules` gives the table of other rules over the
    same WordNet and vocabulary (made once, then shared).
    """

    def __init__(self, wordnet, vocabulary: Vocabulary, exclude_number_senses: bool = True,
                 rules: WordRules = WordRules()):
        self.wordnet = wordnet
        self.vocabulary = vocabulary
        self.exclude_number_senses = exclude_number_senses
        self.rules = rules.word_rules()
        self._best: dict[str, str | None] = {}
        self._variants: dict[WordRules, SynonymTable] = {self.rules: self}
        self._senses: dict[str, list] = {}  # word -> its ranked senses, shared by the variants
        self.store = None  # a TableCache (dialshift.shifts.table_cache.attach), shared by the variants
        self.turns: dict[str, tuple] = {}  # the meaning mode's per-turn choices (lexical.meaning_turn)

    def with_rules(self, rules: WordRules) -> "SynonymTable":
        """The table of ``rules`` over this table's WordNet and vocabulary (this table when the rules are its own)."""
        rules = rules.word_rules()
        if rules not in self._variants:
            variant = SynonymTable(self.wordnet, self.vocabulary, self.exclude_number_senses, rules)
            variant._variants, variant._senses, variant.store = self._variants, self._senses, self.store
            if self.store is not None:
                from dialshift.shifts.table_cache import load_into

                load_into(variant)
            self._variants[rules] = variant
        return self._variants[rules]

    def candidates(self, word: str) -> list[str]:
        """Lemma names of every synset of ``word`` except the word itself, sorted and de-duplicated; synsets that are
        number senses (a lemma of theirs is a numeral, e.g. {twelve, 12, xii, dozen} or {one, 1, I, ane, ...}) are
        skipped, since rule 1 excludes synonyms of numbers (``dozen -> xii``, ``I -> ane``, ``m -> chiliad``)."""
        lower = word.lower()
        names = {name for synset in self.wordnet.synsets(lower) if not self.number_sense(synset)
                 for name in synset.lemma_names()}
        return sorted(name for name in names if name.lower() != lower)

    def number_sense(self, synset) -> bool:
        """A number sense: a synset with a numeral among its lemmas (rule 1 takes no synonym from it)."""
        return self.exclude_number_senses and any(is_numeral(name) for name in synset.lemma_names())

    def sense_candidates(self, word: str) -> list[str]:
        """Candidates under the optional rules: lemma names of the word's senses (its ``senses`` most frequent of the
        likely part of speech, or all), number senses skipped, each re-inflected like the word when ``inflect`` is
        on (a synonym with no inflected form, or whose lemma is a training word, is dropped: ``autos`` is not unknown
        when ``auto`` is known); sorted and de-duplicated, the word itself excluded."""
        lower = word.lower()
        senses = self.senses(lower)
        if self.rules.senses:
            senses = sense_rules.top_senses(senses, sense_rules.likely_pos(senses, lower), self.rules.senses)
        names = set()
        for sense in senses:
            if self.number_sense(sense.synset):
                continue
            tag = sense_rules.penn_tag(lower, sense.pos, sense.lemma) if self.rules.inflect else None
            for name in sense.synset.lemma_names():
                if name.lower() in (lower, sense.lemma.lower()) or not rule_single_word(name):
                    continue
                form = sense_rules.inflect(name, tag) if self.rules.inflect else name
                if form is not None and (form == name or name not in self.vocabulary):  # rule 3: lemma and form
                    names.add(form)
        return sorted(name for name in names if name.lower() != lower)

    def content_word(self, word: str) -> bool:
        """The content-word rule: :func:`dialshift.shifts.senses.is_content_word` with the word's likely part of
        speech."""
        lower = word.lower()
        if lower in sense_rules.stop_words():
            return False
        return sense_rules.is_content_word(lower, sense_rules.likely_pos(self.senses(lower), lower))

    def senses(self, word: str) -> list:
        """The ranked WordNet senses of a lower-case word (:func:`dialshift.shifts.senses.word_senses`), cached."""
        if word not in self._senses:
            self._senses[word] = sense_rules.word_senses(self.wordnet, word)
        return self._senses[word]

    def valid(self, word: str) -> list[str]:
        """Candidates passing rules 1-3 (and, with them on, the content-word, sense and inflection rules)."""
        rules = self.rules
        if rules.content_words and not self.content_word(word):
            return []
        candidates = self.sense_candidates(word) if (rules.senses or rules.inflect) else self.candidates(word)
        return [name for name in candidates
                if rule_not_number(name) and rule_single_word(name) and name not in self.vocabulary]

    def entry(self, word: str):
        """The table's answer for a word, computed once: under the paper's mode (and its options) the synonym or
        None (rule 4: the valid candidate farthest from the word by normalised Levenshtein distance); under the
        meaning mode the word's record (:func:`dialshift.shifts.meaning.word_entry`)."""
        key = word.lower()
        if key not in self._best:
            if self.rules.mode == "meaning":
                from dialshift.shifts.meaning import word_entry

                self._best[key] = word_entry(self, key)
            else:
                valid = self.valid(key) if not is_number(key) else []
                self._best[key] = min(valid, key=lambda name: (-normalized_levenshtein(key, name), name.lower(), name),
                                      default=None)
        return self._best[key]

    def best(self, word: str) -> str | None:
        """The synonym of ``word`` out of context (the meaning mode: that of its only or dominant reading), or None."""
        found = self.entry(word)
        if isinstance(found, dict):
            readings = found["synonyms"]
            pos = next(iter(readings)) if len(readings) == 1 else found["dominant"]
            return readings.get(pos) if found["content"] and pos is not None else None
        return found

    def precompute(self, words: Sequence[str], num_proc: int = 1) -> int:
        """Fill the table for ``words`` (lower-cased), in ``num_proc`` forked processes when > 1; returns how many
        words were new."""
        from dialshift.parallel import fork_map, shared

        todo = sorted({word.lower() for word in words} - self._best.keys())
        if num_proc > 1 and len(todo) > 1000:
            chunks = [todo[k::num_proc * 4] for k in range(num_proc * 4)]
            with shared(synonym_table=self):
                for part in fork_map(_best_of, chunks, num_proc, initializer=_own_file_handles):
                    self._best.update(part)
        for word in todo:
            self.entry(word)
        if self.store is not None:
            from dialshift.shifts.table_cache import save_from

            save_from(self)
        return len(todo)

    def replaceable(self, word: str) -> bool:
        return self.best(word) is not None

    def replace(self, word: str) -> str:
        return match_case(word, self.best(word))


def _own_file_handles() -> None:
    """A forked worker must not share NLTK's open WordNet data files (and their seek offsets) with its parent."""
    from dialshift.parallel import get_shared
    from dialshift.wordnet import LazyWordNet

    wordnet = get_shared("synonym_table").wordnet
    if isinstance(wordnet, LazyWordNet):
        wordnet = wordnet.reader
    if hasattr(wordnet, "_data_file_map"):
        wordnet._data_file_map = {}
    if hasattr(wordnet, "_key_count_file"):  # the sense frequencies (cntlist.rev) of Lemma.count()
        wordnet._key_count_file = None


def _best_of(words: list[str]) -> dict[str, str | None]:
    from dialshift.parallel import get_shared

    table = get_shared("synonym_table")
    return {word: table.entry(word) for word in words}


@dataclass
class KnownWords:
    """Known words (seen more than ``min_count`` times in training) and the KW rule that picks one for a target.

    ``random``: uniform among the known words other than the target (seeded per instance); ``levenshtein``: the
    known word farthest from the target by normalised Levenshtein distance (ties alphabetical), like UW's rule 4.
    """

    vocabulary: Vocabulary
    min_count: int = KW_MIN_COUNT
    rule: str = "random"
    words: list[str] = field(init=False)

    def __post_init__(self):
        if self.rule not in KW_RULES:
            raise DialshiftError(f"unknown KW rule {self.rule!r}; choose one of {', '.join(KW_RULES)}")
        self.words = self.vocabulary.frequent_words(self.min_count)
        if len(self.words) < 2:
            raise DialshiftError(f"fewer than 2 known words occur more than min_count={self.min_count:,} times in "
                                 f"the training texts ({len(self.vocabulary.counts):,} distinct tokens); pass a "
                                 "smaller min_count (KnownWord(min_count=...), --kw-min-count) for a small corpus")
        self._farthest: dict[str, str] = {}
        self._rank = {known: rank for rank, known in enumerate(self.words)}

    def choose(self, word: str, rng: np.random.Generator) -> str:
        key = word.lower()
        if self.rule == "levenshtein":
            if key not in self._farthest:
                self._farthest[key] = min((known for known in self.words if known != key),
                                          key=lambda known: (-normalized_levenshtein(key, known), known))
            return match_case(word, self._farthest[key])
        skip = self._rank.get(key, len(self.words))  # the target itself is not a candidate
        pick = int(rng.bit_generator.random_raw()) % (len(self.words) - (skip < len(self.words)))
        return match_case(word, self.words[pick + (pick >= skip)])


# --- target selection -------------------------------------------------------------------------------------------
# A context's candidate targets are its words (``is_word``) in reading order; ``replaceable[k]`` says whether word
# ``k`` has a valid synonym. Selectors return indices into that list (sorted), or None when the instance is dropped.

def word_positions(turns: Sequence[Sequence[str]]) -> list[Position]:
    """``(turn, index)`` of every word of a context, in reading order."""
    return list(chain.from_iterable(zip(repeat(t), word_indices(tuple(tokens))) for t, tokens in enumerate(turns)))


@lru_cache(maxsize=1 << 14)
def word_indices(tokens: tuple[str, ...]) -> tuple[int, ...]:
    """The indices of the words of one turn's tokens (cached: the contexts of one dialogue share their turns)."""
    return tuple(i for i, token in enumerate(tokens) if is_word(token))


def select_targets(order: Sequence[int], replaceable: Sequence[bool], n: int, required: int) -> list[int] | None:
    """Walk ``order`` and keep the first ``n`` replaceable words; None when fewer than ``max(required, 1)``."""
    chosen = []
    for k in order:
        if len(chosen) == n:
            break
        if replaceable[k]:
            chosen.append(int(k))
    return sorted(chosen) if len(chosen) >= max(required, 1) else None


def ratio_targets(num_tokens: int, replaceable: Sequence[bool], ratio: float, rng: np.random.Generator,
                  rounding: str = "floor", preferred: Sequence[bool] | None = None) -> list[int] | None:
    """UW/KW: ``n = floor(ratio x num_tokens)`` targets among the words, visited in a seeded random order; with
    ``preferred`` (one flag per word), the preferred replaceable words first, each group in that order."""
    n = target_count(num_tokens, ratio, rounding)
    if n == 0 or sum(replaceable) < n:
        return None
    order = rng.permutation(len(replaceable))  # the first n replaceable words in this order (select_targets, in numpy)
    eligible = order[np.asarray(replaceable, dtype=bool)[order]]
    if preferred is not None:
        eligible = eligible[np.argsort(~np.asarray(preferred, dtype=bool)[eligible], kind="stable")]
    return np.sort(eligible[:n]).tolist()


def importance_buckets(scores: Sequence[Sequence[float]], num_buckets: int = 5) -> list[list[int]]:
    """Bucket (1 = least important) of every token: tokens ranked by score (ties: earlier first), ``num_buckets``
    equal shares of the ranking (bucket ``b`` holds ranks ``[(b-1)/B, b/B)`` of the context's tokens)."""
    flat = [(float(score), t, i) for t, row in enumerate(scores) for i, score in enumerate(row)]
    if any(math.isnan(score) for score, _, _ in flat):
        raise DialshiftError("word importance scores contain NaN; check the importance model")
    total = len(flat)
    buckets = [[0] * len(row) for row in scores]
    for rank, (_, t, i) in enumerate(sorted(flat)):
        buckets[t][i] = rank * num_buckets // total + 1
    return buckets


def bucket_targets(word_buckets: Sequence[int], replaceable: Sequence[bool], bucket: int) -> list[int] | None:
    """Importance selection: every replaceable word whose importance bucket is ``bucket`` (None if there is none)."""
    order = [k for k, b in enumerate(word_buckets) if b == bucket]
    return select_targets(order, replaceable, len(order), required=1)


def make_replacements(turns, positions: Sequence[Position], targets: Sequence[int],
                      replace: Callable[[str], str]) -> list[Replacement]:
    return [Replacement(t, i, turns[t][i], replace(turns[t][i])) for t, i in (positions[k] for k in targets)]
