"""Word-level shifts of Lee et al. (2022): Unknown Word (UW), its Known Word control (KW) and UW by word importance.

All three replace target words of the context and differ only in how targets are selected and what replaces them:

* :class:`UnknownWord` (``uw_<ratio>``): ``n = floor(ratio x context tokens)`` targets among the words that have a
  valid unknown WordNet synonym, visited in a seeded random order (stream ``uw_<ratio>``); each becomes that synonym
  (rules in :mod:`dialshift.shifts.replace`). A context with fewer replaceable words than ``n`` (or ``n = 0``) is
  skipped (reasons ``below_ratio``, ``no_eligible_word``, ``too_few_tokens``).
* :class:`KnownWord` (``kw_<ratio>``): the same targets as ``uw_<ratio>`` (same stream), each replaced by a word seen
  often in training (rule ``random``: drawn from stream ``kw_<ratio>``; ``levenshtein``: the farthest).
* :class:`ImportantWord` (``uw_imp_<bucket>``): every replaceable word in one word-importance bucket (1 = least
  important fifth of the context's tokens) becomes its unknown synonym; an instance enters only if every bucket has a
  target, so the five configs share one instance set.

Tokens are cut by :func:`dialshift.shifts.words.tokenize`; a context is tokenised once per distinct turn text. Words
inside a URL, web address or e-mail address (:func:`dialshift.shifts.words.protected_spans`) are never targets. The
three shifts use English WordNet: they declare ``languages = ("en",)`` and skip a context written mostly in another
script (reason ``unsupported_language``) instead of finding no English word in it.

Every parameters dataclass here extends :class:`~dialshift.shifts.replace.WordRules`: keyword-only
``content_words``, ``senses`` and ``inflect`` (default: the paper's rules) choose the sense-preserving variant, e.g.
``UnknownWord(ratio=0.3, synonyms=table, content_words=True, senses=1, inflect=True)``; the shift then uses
``synonyms.with_rules(...)``, the table of those rules over the same WordNet and vocabulary. KW with the same rules
has the same (content-word) targets as UW.
"""

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate, chain
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.shifts.base import InstanceRandom, ParameterError, Shift, ShiftResult, Skipped, digest
from dialshift.shifts.meaning import context_choice, glued, is_clear, is_counted
from dialshift.shifts.replace import (
    BASES,
    KW_MIN_COUNT,
    KW_RULES,
    ROUNDING,
    KnownWords,
    Replacement,
    SynonymTable,
    WordRules,
    bucket_targets,
    check_choice,
    check_ratio,
    importance_buckets,
    make_replacements,
    ratio_targets,
    target_count,
    word_indices,
    word_positions,
)
from dialshift.shifts.table_cache import synonym_table_digest
from dialshift.shifts.words import (
    Vocabulary,
    is_name_like,
    is_word,
    protected_spans,
    substitute,
    token_spans,
    tokenize,
)

_WORD_CHAR = re.compile(r"\w")
#: The meaning mode's contextual check (:mod:`dialshift.shifts.fit`): its encoder, the fit under which a synonym does
#: not fit its context, and the fit from which a word is a preferred target. On the replacements judged before the
#: check (``python benchmarks/uw_fit_dev.py``) 30 % of those fitting under 0.25 were plausible, and a higher
#: ``fit_min`` leaves Ubuntu IRC's test contexts at the 90 % bar of rows kept (0.3: 3,578 of 3,975,
#: ``benchmarks/uw_meaning.py --fit-min 0.3``); 83-93 % of those fitting 0.7 or more were plausible; 0.8 was set
#: after fresh samples 8 and 9 (10 of 18 plausible at 0.75-0.8; ``benchmarks/uw_meaning_sample.md``).
DEFAULT_FIT, FIT_MIN, FIT_PREFER = "minilm", 0.25, 0.8


def ratio_name(prefix: str, ratio: float) -> str:
    """``uw_0.30``: the config-style name of a ratio shift (two decimals when exact)."""
    return f"{prefix}_{ratio:.2f}" if round(ratio, 2) == ratio else f"{prefix}_{ratio!r}"


@lru_cache(maxsize=1 << 16)
def _tokenized(text: str) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...], frozenset[int]]:
    spans = token_spans(text)
    guarded = protected_spans(text)
    inside = frozenset(k for k, (start, end) in enumerate(spans)
                       if any(start < stop and begin < end for begin, stop in guarded))
    return tuple(tokenize(text)), tuple(spans), inside


def meaning_turn(synonyms: SynonymTable, text: str) -> tuple:
    """Under the meaning mode, one turn's replacement of each word (None: no target), how many of its words the
    ratio counts, whether each word is a target and whether its reading has a clear most frequent sense
    (:func:`dialshift.shifts.meaning.is_clear`); all depend on the turn's text alone, so they are computed once per
    distinct turn (a dialogue's prefixes share their turns)."""
    found = synonyms.turns.get(text)
    if found is None:
        tokens, spans, inside = _tokenized(text)
        entries = [synonyms.entry(token) if is_word(token) else None for token in tokens]
        choices, clear, counted = [], [], 0
        for index, entry in enumerate(entries):
            if entry is None:
                continue
            choice = None
            if index not in inside and not glued(text, spans[index]):
                choice = context_choice(tokens, index, entry, entries)
                counted += is_counted(tokens, index, entry, entries)
            choices.append(choice)
            clear.append(choice is not None and is_clear(tokens, index, entry))
        found = synonyms.turns[text] = (tuple(choices), counted, tuple(choice is not None for choice in choices),
                                        tuple(clear))
    return found


def prepare_synonyms(synonyms: SynonymTable, dialogues, num_proc: int = 1) -> None:
    """Look every word of ``dialogues`` up in ``synonyms`` once (in ``num_proc`` forked processes)."""
    turns = set()
    for dialogue in dialogues:  # a dialogue's prefixes repeat its turns
        turns.update(dialogue)
    tokens = set(chain.from_iterable(_tokenized(turn)[0] for turn in turns))
    synonyms.precompute(sorted(token for token in tokens if is_word(token)), num_proc)


@dataclass(frozen=True)
class TokenizedContext:
    """A context cut into tokens once: tokens and spans per turn, the ``(turn, index)`` of every word, and the
    ``(turn, index)`` of the tokens inside a URL or address (never targets)."""

    turns: tuple[str, ...]
    tokens: tuple[tuple[str, ...], ...]
    spans: tuple[tuple[tuple[int, int], ...], ...]
    positions: tuple[tuple[int, int], ...]
    protected: frozenset = frozenset()

    @classmethod
    def of(cls, turns: Sequence[str]) -> "TokenizedContext":
        cut = [_tokenized(text) for text in turns]
        tokens = tuple(t for t, _, _ in cut)
        protected = frozenset((t, k) for t, (_, _, inside) in enumerate(cut) for k in inside)
        return cls(tuple(turns), tokens, tuple(s for _, s, _ in cut), tuple(word_positions(tokens)), protected)

    @property
    def num_tokens(self) -> int:
        return sum(len(turn) for turn in self.tokens)

    def words(self) -> list[str]:
        return [self.tokens[t][i] for t, i in self.positions]

    def replaceable(self, synonyms: SynonymTable) -> list[bool]:
        """Whether each word (in :attr:`positions` order) can be a target: it has a valid synonym and, under the
        content-word rule, is not a capitalised word inside a sentence (a likely name: ``Jack``, ``Sue``)."""
        names = synonyms.rules.content_words
        return [(t, i) not in self.protected and synonyms.replaceable(self.tokens[t][i])
                and not (names and is_name_like(self.tokens[t], i)) for t, i in self.positions]

    def choices(self, synonyms: SynonymTable) -> list[str | None]:
        """The replacement of each word (in :attr:`positions` order) in this context, None for a word that is no
        target: the table's synonym cased like the word (:meth:`replaceable`), or under the meaning mode the synonym
        of the word's reading in its context (:func:`dialshift.shifts.meaning.context_choice`)."""
        if synonyms.rules.mode == "meaning":
            return list(chain.from_iterable(meaning_turn(synonyms, text)[0] for text in self.turns))
        return [synonyms.replace(self.tokens[t][i]) if ok else None
                for ok, (t, i) in zip(self.replaceable(synonyms), self.positions, strict=True)]

    def ratio_base(self, synonyms: SynonymTable, base: str = "tokens") -> int:
        """What a ratio counts: the context's tokens (``base``, :data:`~dialshift.shifts.replace.BASES`: bert-style
        tokens, whitespace-separated tokens, ``\\w+`` runs or words), or under the meaning mode its content words
        that are not likely names nor inside a URL or address (:func:`dialshift.shifts.meaning.is_counted`)."""
        if synonyms.rules.mode == "meaning":
            return sum(meaning_turn(synonyms, text)[1] for text in self.turns)
        if base == "whitespace":
            return sum(len(turn.split()) for turn in self.turns)
        if base == "alnum":
            return sum(bool(_WORD_CHAR.match(token)) for turn in self.tokens for token in turn)
        if base == "words":
            return len(self.positions)
        return self.num_tokens

    def replace(self, targets: Sequence[int], replace: Callable[[str], str] | Sequence[str | None]) -> ShiftResult:
        """Replace the words at ``targets`` (indices into :attr:`positions`) and keep everything else verbatim;
        ``replace`` maps a word to its replacement, or is the replacement of every word (:meth:`choices`)."""
        if callable(replace):
            replacements = make_replacements(self.tokens, self.positions, targets, replace)
        else:
            replacements = [Replacement(t, i, self.tokens[t][i], replace[k])
                            for k, (t, i) in ((k, self.positions[k]) for k in targets)]
        per_turn: dict[int, dict[int, str]] = {}
        for item in replacements:
            per_turn.setdefault(item.turn, {})[item.index] = item.replacement
        context = tuple(substitute(text, self.spans[t], per_turn[t]) if t in per_turn else text
                        for t, text in enumerate(self.turns))
        return ShiftResult(context, tuple(replacements))


@dataclass(frozen=True)
class RatioParams(WordRules):
    ratio: float = field(metadata={"help": "the share of the context's words replaced, a number in (0, 1), e.g. 0.3"})
    rounding: str = field(default=None, metadata={
        "help": f"targets = rounding(ratio x base, or x content words in mode=meaning): {', '.join(ROUNDING)} "
                "(default floor, the paper's; ceil in mode=meaning, so a short context gets one target)"})
    base: str = field(default="tokens", metadata={
        "help": f"what the ratio counts in mode=paper: {', '.join(BASES)} (tokens: the build's rule)"})
    fit: str = field(default=None, metadata={
        "help": "mode=meaning only: the encoder that checks each synonym in its context (dialshift.shifts.fit): "
                "minilm (unset: the default; the [train] extra), a model folder, or none (no check)"})
    fit_min: float = field(default=None, metadata={
        "help": f"with fit: a synonym whose fit is under this is no target (unset: {FIT_MIN})"})
    fit_prefer: float = field(default=None, metadata={
        "help": f"with fit: targets are drawn first among words whose synonym fits this well (unset: {FIT_PREFER})"})

    def __post_init__(self):
        super().__post_init__()
        check_ratio(self.ratio)
        if self.rounding is None:
            object.__setattr__(self, "rounding", "ceil" if self.mode == "meaning" else "floor")
        check_choice("rounding", self.rounding, ROUNDING)
        check_choice("base", self.base, BASES)
        if self.mode == "meaning" and self.base != "tokens":
            raise ParameterError(f"parameter base={self.base} applies to mode=paper only; mode=meaning counts the "
                                 "context's content words")
        self.check_fit()

    def check_fit(self) -> None:
        """Resolve and check ``fit``, ``fit_min`` and ``fit_prefer`` (mode=meaning only; the thresholds only with a
        model), before anything is loaded."""
        thresholds = {"fit_min": self.fit_min, "fit_prefer": self.fit_prefer}
        if self.mode != "meaning":
            given = [name for name, value in {"fit": self.fit, **thresholds}.items() if value is not None]
            if given:
                raise ParameterError(f"parameter {given[0]} applies to mode=meaning only (drop it, or add "
                                     "mode=meaning)")
            return
        fit = DEFAULT_FIT if self.fit is None else self.fit
        if not isinstance(fit, str) or not fit.strip():
            raise ParameterError(f"parameter fit must be minilm, none or a model folder, got {self.fit!r}")
        object.__setattr__(self, "fit", fit)
        if fit == "none":
            given = [name for name, value in thresholds.items() if value is not None]
            if given:
                raise ParameterError(f"parameter {given[0]} applies with a fit model only; fit=none checks nothing")
            return
        from dialshift.shifts.fit import check_available

        try:
            check_available(fit)
        except DialshiftError as error:
            raise ParameterError(str(error)) from None
        defaults = {"fit_min": FIT_MIN, "fit_prefer": FIT_PREFER}
        for name, value in thresholds.items():
            value = defaults[name] if value is None else value
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1 <= value <= 1:
                raise ParameterError(f"parameter {name} must be a cosine similarity in [-1, 1], got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.fit_min > self.fit_prefer:
            raise ParameterError(f"parameter fit_min ({self.fit_min}) must not exceed fit_prefer ({self.fit_prefer})")


class UnknownWord(Shift):
    """``UnknownWord(ratio=0.3, synonyms=SynonymTable(...))``; see :meth:`for_corpus` to build one from your data.

    ``mode="meaning"`` (:mod:`dialshift.shifts.meaning`) keeps the meaning on a user's corpus: content words only,
    the part of speech from the context, the most common synonym of a clear most frequent sense (an unseen one when
    it is about as common: ``unseen="preferred"``; ``required`` or ``optional``), inflected to fit, and the ratio
    counted over content words. The default ``mode="paper"`` is Lee et al.'s rules (the
    published ``uw_*`` configs).
    """

    name = "uw"
    Params = RatioParams
    languages = ("en",)

    def __init__(self, params=None, *, synonyms: SynonymTable, **kwargs):
        super().__init__(params, **kwargs)
        self.synonyms = synonyms.with_rules(self.params)
        self._fitted: dict[str, tuple] = {}  # turn text -> its record under the contextual check (fitted_turns)
        self._fit = None

    @classmethod
    def for_corpus(cls, training_texts: Iterable[str], case_sensitive: bool = False, wordnet=None, cache=True,
                   **params):
        """A shift whose "unknown" means unseen in ``training_texts`` (WordNet 3.0 from :mod:`dialshift.wordnet`,
        read only when a word is not in the table's disk cache; ``cache=False`` keeps no cache, ``cache=PATH`` puts
        it there instead of ``<dialshift cache>/uw_tables``, :mod:`dialshift.shifts.table_cache`). The parameters
        are checked first, before anything is read."""
        from dialshift.shifts.table_cache import attach
        from dialshift.wordnet import lazy_wordnet

        checked = cls.make_params(**params)
        vocabulary = Vocabulary.from_texts(training_texts, case_sensitive=case_sensitive)
        table = SynonymTable(wordnet or lazy_wordnet(), vocabulary)
        if cache is not False:
            table = attach(table, None if cache is True else cache)
        return cls(checked, synonyms=table)

    @property
    def key(self) -> str:
        return ratio_name("uw", self.params.ratio)

    def parameters(self) -> dict:
        return self.params.public_parameters()

    def targets(self, context: TokenizedContext, rng: InstanceRandom,
                choices: Sequence[str | None] | None = None) -> list[int] | Skipped:
        """The targets (indices into the context's words) or why there are none; ``choices`` are the context's
        :meth:`TokenizedContext.choices` when already computed."""
        if self.params.mode == "meaning":  # each turn's targets, computed once per distinct turn
            return self.meaning_select(self.fitted_turns(context.turns), rng)
        if choices is None:
            replaceable = context.replaceable(self.synonyms)
        else:
            replaceable = [choice is not None for choice in choices]
        return self.select(context.ratio_base(self.synonyms, self.params.base), replaceable, rng)

    def select(self, base: int, replaceable: Sequence[bool], rng: InstanceRandom,
               preferred: Sequence[bool] | None = None) -> list[int] | Skipped:
        """The targets among words whose ``replaceable`` flags are given, for a ratio ``base``, or why none; the
        ``preferred`` words first (the contextual check's)."""
        params = self.params
        unit = "content words" if params.mode == "meaning" else "tokens"
        needed, found = target_count(base, params.ratio, params.rounding), sum(replaceable)
        if needed == 0:
            return Skipped("too_few_tokens", f"{base} {unit} x {params.ratio} rounds to 0 targets")
        if found == 0:
            return Skipped("no_eligible_word", f"none of the {len(replaceable)} words has an unknown synonym")
        if found < needed:
            return Skipped("below_ratio", f"{found} replaceable words, {needed} needed")
        return ratio_targets(base, replaceable, params.ratio, rng(self.key), params.rounding, preferred)

    def replacer(self, rng: InstanceRandom, choices: Sequence[str | None] | None = None) -> Callable | Sequence:
        """The replacement of each target: the word's synonym (the table's, or ``choices``, those in this context)."""
        return self.synonyms.replace if choices is None else choices

    def resource_digest(self) -> str:
        fit = self.context_fit()
        table = synonym_table_digest(self.synonyms)
        return table if fit is None else digest(table, fit.fingerprint())

    def prepare(self, dialogues, num_proc: int = 1) -> None:
        dialogues = list(dialogues)
        prepare_synonyms(self.synonyms, dialogues, num_proc)
        if self.params.mode == "meaning":  # every turn's synonyms scored in context in one batched pass
            self.fitted_turns(sorted({turn for dialogue in dialogues for turn in dialogue}))

    def context_fit(self):
        """The contextual check's scorer (:class:`~dialshift.shifts.fit.ContextFit`), or None without one; its disk
        cache is the synonym table's folder's ``fit`` subfolder."""
        fit = self.params.fit if self.params.mode == "meaning" else None
        if fit in (None, "none"):
            return None
        if self._fit is None:
            from dialshift.shifts.fit import context_fit

            store = self.synonyms.store
            self._fit = context_fit(fit, None if store is None else str(Path(store.directory) / "fit"))
        return self._fit

    def fitted_turns(self, texts: Sequence[str]) -> list[tuple]:
        """Each turn's record under the meaning mode and the contextual check: its replacement per word (None: no
        target), how many of its words the ratio counts, whether each word is a target and whether it is a preferred
        one (None without a check). A synonym whose fit (:mod:`dialshift.shifts.fit`) is under ``fit_min`` does not
        fit its context: its word is no target and not counted; a word whose synonym fits at least ``fit_prefer``
        and whose reading has a clear most frequent sense (:func:`dialshift.shifts.meaning.clear_sense`) is
        preferred. The turns not seen before are scored together, in one batched pass."""
        new = [text for text in dict.fromkeys(texts) if text not in self._fitted]
        fit = self.context_fit() if new else None
        if new and fit is None:
            self._fitted.update((text, (*meaning_turn(self.synonyms, text)[:3], None)) for text in new)
        elif new:
            records = {text: meaning_turn(self.synonyms, text) for text in new}
            items, owners = [], []
            for text, (choices, _, _, _) in records.items():
                tokens = _tokenized(text)[0]
                for k, index in enumerate(word_indices(tokens)):
                    if choices[k] is not None:
                        items.append((tokens, index, choices[k]))
                        owners.append((text, k))
            scores = dict(zip(owners, fit.scores(items), strict=True))
            low, high = self.params.fit_min, self.params.fit_prefer
            for text, (choices, counted, _, clear) in records.items():
                fits = [scores.get((text, k)) for k in range(len(choices))]
                kept = tuple(None if score is None or score < low else choice
                             for choice, score in zip(choices, fits, strict=True))
                counted -= sum(score is not None and score < low for score in fits)
                self._fitted[text] = (kept, counted, tuple(choice is not None for choice in kept),
                                      tuple(score is not None and score >= high and sure
                                            for score, sure in zip(fits, clear, strict=True)))
        return [self._fitted[text] for text in texts]

    def meaning_select(self, records: Sequence[tuple], rng: InstanceRandom) -> list[int] | Skipped:
        """:meth:`select` from a context's turn records (:meth:`fitted_turns`): their counts, target flags and, with
        the contextual check, preferred flags."""
        preferred = None if not records or records[0][3] is None else \
            list(chain.from_iterable(record[3] for record in records))
        return self.select(sum(record[1] for record in records),
                           list(chain.from_iterable(record[2] for record in records)), rng, preferred)

    def transform(self, dialogue: tuple[str, ...], rng: InstanceRandom) -> ShiftResult | Skipped:
        context = TokenizedContext.of(dialogue)
        if self.params.mode == "paper":  # the published configs' path: synonyms looked up only for the targets
            targets = self.targets(context, rng)
            return targets if isinstance(targets, Skipped) else context.replace(targets, self.replacer(rng))
        return self.meaning_transform(dialogue, rng)

    def meaning_transform(self, dialogue: tuple[str, ...], rng: InstanceRandom) -> ShiftResult | Skipped:
        """:meth:`transform` under the meaning mode, from each turn's record (:func:`meaning_turn`, computed once per
        distinct turn): the same result as :meth:`TokenizedContext.replace` of :meth:`targets`, without cutting the
        whole context again for every prefix of a dialogue."""
        records = self.fitted_turns(dialogue)
        targets = self.meaning_select(records, rng)
        if isinstance(targets, Skipped):
            return targets
        choices = list(chain.from_iterable(record[0] for record in records))
        replace = self.replacer(rng, choices)
        starts = list(accumulate((len(record[0]) for record in records), initial=0))
        per_turn: dict[int, dict[int, str]] = {}
        replacements = []
        for k in targets:
            turn = bisect_right(starts, k) - 1
            tokens = _tokenized(dialogue[turn])[0]
            index = word_indices(tokens)[k - starts[turn]]
            word = tokens[index]
            new = replace(word) if callable(replace) else replace[k]
            replacements.append(Replacement(turn, index, word, new))
            per_turn.setdefault(turn, {})[index] = new
        context = tuple(substitute(text, _tokenized(text)[1], per_turn[t]) if t in per_turn else text
                        for t, text in enumerate(dialogue))
        return ShiftResult(context, tuple(replacements))


@dataclass(frozen=True)
class KnownParams(RatioParams):
    rule: str = field(default="random", metadata={"help": f"how the known word is chosen: {', '.join(KW_RULES)}"})
    min_count: int = field(default=KW_MIN_COUNT, metadata={
        "help": "a known word occurs more than this many times in training, a whole number >= 0"})

    def __post_init__(self):
        super().__post_init__()
        check_choice("rule", self.rule, KW_RULES)
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, int) or self.min_count < 0:
            raise ParameterError(f"parameter min_count must be a whole number >= 0, got {self.min_count!r}")


class KnownWord(UnknownWord):
    """The KW control: UW's targets at the same ratio, replaced by known words (``known``: the word list)."""

    name = "kw"
    Params = KnownParams

    def __init__(self, params=None, *, synonyms: SynonymTable, known: KnownWords | None = None, **kwargs):
        super().__init__(params, synonyms=synonyms, **kwargs)
        self.known = known or KnownWords(synonyms.vocabulary, self.params.min_count, self.params.rule)

    @property
    def key(self) -> str:
        return ratio_name("uw", self.params.ratio)  # the targets are UW's

    def replacer(self, rng: InstanceRandom, choices: Sequence | None = None) -> Callable[[str], str]:
        generator = rng(ratio_name("kw", self.params.ratio))
        return lambda word: self.known.choose(word, generator)

    def resource_digest(self) -> str:
        return digest(super().resource_digest(), self.known.words, self.known.rule)


@dataclass(frozen=True)
class ImportanceParams(WordRules):
    bucket: int = field(metadata={"help": "the word-importance bucket replaced, 1 .. num_buckets"})
    num_buckets: int = field(default=5, metadata={"help": "how many importance buckets, a whole number >= 1"})

    def __post_init__(self):
        super().__post_init__()
        for name in ("num_buckets", "bucket"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ParameterError(f"parameter {name} must be a whole number >= 1, got {value!r}")
        if self.bucket > self.num_buckets:
            raise ParameterError(f"parameter bucket must be 1 .. {self.num_buckets}, got {self.bucket}")


class ImportantWord(Shift):
    """UW restricted to one word-importance bucket; ``scores`` maps a context (tuple of turns) to one score per token
    of every turn (e.g. :func:`dialshift.models.importance.word_importance`)."""

    name = "uw_imp"
    Params = ImportanceParams
    languages = ("en",)

    def __init__(self, params=None, *, synonyms: SynonymTable, scores: Mapping[tuple, Sequence], **kwargs):
        super().__init__(params, **kwargs)
        self.synonyms = synonyms.with_rules(self.params)
        self.scores = scores

    @property
    def key(self) -> str:
        return f"uw_imp_{self.params.bucket}"

    def parameters(self) -> dict:
        return self.params.public_parameters()

    def prepare(self, dialogues, num_proc: int = 1) -> None:
        prepare_synonyms(self.synonyms, dialogues, num_proc)

    def resource_digest(self) -> str:
        scores = sorted((list(context), [list(map(float, turn)) for turn in values])
                        for context, values in self.scores.items())
        return digest(synonym_table_digest(self.synonyms), scores)

    def transform(self, dialogue: tuple[str, ...], rng: InstanceRandom) -> ShiftResult | Skipped:
        context = TokenizedContext.of(dialogue)
        scores = self.scores.get(dialogue)
        if scores is None:
            where = f"instance {rng.instance_id!r}" if rng is not None else "a context"
            raise DialshiftError(f"{where}: the context has no word-importance scores (scores= maps each context, a "
                                 f"tuple of turns, to one score per token); score every context first")
        buckets = importance_buckets(scores, self.params.num_buckets)
        word_buckets = [buckets[t][i] for t, i in context.positions]
        meaning = self.params.mode == "meaning"
        choices = context.choices(self.synonyms) if meaning else None
        replaceable = [c is not None for c in choices] if meaning else context.replaceable(self.synonyms)
        per_bucket = [bucket_targets(word_buckets, replaceable, b) for b in range(1, self.params.num_buckets + 1)]
        empty = [b for b, targets in enumerate(per_bucket, 1) if targets is None]
        if empty:
            return Skipped("empty_bucket", f"importance bucket(s) {', '.join(map(str, empty))} have no replaceable "
                                           "word")
        return context.replace(per_bucket[self.params.bucket - 1], choices if meaning else self.synonyms.replace)


def sample_replacements(rows: Iterable[Mapping], size: int = 40, seed: int = 0) -> list[dict]:
    """A seeded uniform sample of ``size`` replacements of shifted rows (``id``, ``context``, ``replacements``), in
    row order: the items of a hand-checked audit (``docs/uw_audit.md``). Each item has the row ``id``, the
    replacement's ``turn``/``index``/``original``/``replacement`` and ``utterance``, the shifted turn with the
    replaced token marked ``[original -> replacement]``."""
    import numpy as np

    rows = list(rows)
    items = [(r, k) for r, row in enumerate(rows) for k in range(len(row["replacements"]))]
    if not items:
        return []
    picks = sorted(np.random.default_rng(seed).choice(len(items), size=min(size, len(items)), replace=False).tolist())
    sample = []
    for r, k in (items[p] for p in picks):
        row, item = rows[r], rows[r]["replacements"][k]
        text = row["context"][item["turn"]]
        marked = substitute(text, token_spans(text), {item["index"]: f"[{item['original']} -> {item['replacement']}]"})
        sample.append({"id": row["id"], **{key: item[key] for key in ("turn", "index", "original", "replacement")},
                       "utterance": marked})
    return sample
