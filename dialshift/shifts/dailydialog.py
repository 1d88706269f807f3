"""The DailyDialog shift pipeline: config names, the tables computed once, and the rows of every config.

:class:`DailyDialogShifts` reads nothing itself: it takes the dialogues of the three splits and a WordNet reader,
computes once the training vocabulary, the known-word list, the source ranking instances, the tokens of every
utterance and (lazily, cached per word) the synonym table, then produces the rows of any config with
:meth:`DailyDialogShifts.rows`. Rows of shifted configs keep the source instance's ``id``, ``candidates`` and
``label``; only ``context`` and the metadata (``replacements``, ``deleted_turns``) change. Every random choice is
drawn from ``instance_rng(seed, key, instance id)``; UW and KW at one ratio share the target key ``uw_{ratio}``, so
their targets are the same words, and KW draws its known words from a second generator keyed by its own name.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

from dialshift.errors import DialshiftError
from dialshift.shifts.context import delete_turns, ic_eligible, sr_eligible
from dialshift.shifts.ranking import ranking_instances
from dialshift.shifts.replace import (
    KnownWords,
    SynonymTable,
    bucket_targets,
    check_ratio,
    importance_buckets,
    make_replacements,
    ratio_targets,
    word_positions,
)
from dialshift.shifts.seeding import instance_rng
from dialshift.shifts.words import Vocabulary, is_word, substitute, token_spans, tokenize

UW_RATIOS = tuple(round(0.05 * step, 2) for step in range(1, 11))
IC_WINDOW = 6
IMPORTANCE_RATIO = 0.20
NUM_BUCKETS = 5


@dataclass(frozen=True)
class ConfigSpec:
    """A parsed config name: ``kind`` in source/uw/kw/ic/sr/uw_imp and its parameter."""

    name: str
    kind: str
    value: float | int | None = None


def ratio_name(prefix: str, ratio: float) -> str:
    return f"{prefix}_{ratio:.2f}" if round(ratio, 2) == ratio else f"{prefix}_{ratio!r}"


def config_names(with_importance: bool = True) -> list[str]:
    names = ["source"]
    names += [ratio_name("uw", ratio) for ratio in UW_RATIOS]
    names += [ratio_name("kw", ratio) for ratio in UW_RATIOS]
    if with_importance:
        names += [f"uw_imp_{bucket}" for bucket in range(1, NUM_BUCKETS + 1)]
    names += [f"ic_{k}of{IC_WINDOW}" for k in range(IC_WINDOW)]
    names += [f"sr_{length}" for length in range(IC_WINDOW, 0, -1)]
    return names


_PATTERNS = [
    ("uw_imp", re.compile(r"uw_imp_(\d+)")),
    ("uw", re.compile(r"uw_(\d*\.\d+|\d+)")),
    ("kw", re.compile(r"kw_(\d*\.\d+|\d+)")),
    ("ic", re.compile(r"ic_(\d+)of(\d+)")),
    ("sr", re.compile(r"sr_(\d+)")),
]


def parse_config(name: str) -> ConfigSpec:
    """Parse a DailyDialog config name; a malformed name or an out-of-range parameter is a one-line error."""
    if name == "source":
        return ConfigSpec(name, "source")
    for kind, pattern in _PATTERNS:
        match = pattern.fullmatch(name)
        if not match:
            continue
        if kind in ("uw", "kw"):
            return ConfigSpec(name, kind, check_ratio(float(match.group(1))))
        if kind == "uw_imp":
            bucket = int(match.group(1))
            if not 1 <= bucket <= NUM_BUCKETS:
                raise DialshiftError(f"{name}: importance bucket must be 1 .. {NUM_BUCKETS}")
            return ConfigSpec(name, kind, bucket)
        if kind == "ic":
            k, window = int(match.group(1)), int(match.group(2))
            if window != IC_WINDOW or k >= window:
                raise DialshiftError(f"{name}: IC configs are ic_0of{IC_WINDOW} ... ic_{IC_WINDOW - 1}of{IC_WINDOW}")
            return ConfigSpec(name, kind, k)
        length = int(match.group(1))
        if length < 1:
            raise DialshiftError(f"{name}: SR context length must be at least 1")
        return ConfigSpec(name, kind, length)
    raise DialshiftError(f"malformed DailyDialog config name {name!r}; expected source, uw_<ratio>, kw_<ratio>, "
                         f"uw_imp_<1-{NUM_BUCKETS}>, ic_<k>of{IC_WINDOW} or sr_<turns> (e.g. uw_0.30)")


@dataclass(frozen=True)
class ShiftOptions:
    """Every rule parameter of the family (stated in the card)."""

    seed: int = 0
    rounding: str = "floor"
    vocab_case_sensitive: bool = False
    kw_rule: str = "random"
    kw_min_count: int = 5000
    ic_selection: str = "at_least"


class DailyDialogShifts:
    """The tables every config shares (vocabulary, synonyms, known words, tokens, source rows) and the rows of each."""

    def __init__(self, dialogues: dict, wordnet, options: ShiftOptions = ShiftOptions()):
        for split in ("train", "test"):
            if split not in dialogues:
                raise DialshiftError(f"the DailyDialog {split} split is missing; all three official splits are needed")
        self.dialogues = dialogues
        self.options = options
        self.vocabulary = Vocabulary.from_texts((turn for dialogue in dialogues["train"] for turn in dialogue.turns),
                                                case_sensitive=options.vocab_case_sensitive)
        self.synonyms = SynonymTable(wordnet, self.vocabulary)
        self.known = KnownWords(self.vocabulary, options.kw_min_count, options.kw_rule)
        self._source: dict[str, list[dict]] = {}
        self._tokens: dict[str, dict[str, list]] = {}
        self._buckets: dict[str, list] = {}

    # --- precomputed tables ------------------------------------------------------------------------------------

    def source_rows(self, split: str, part: int = 0, parts: int = 1) -> list[dict]:
        """The ranking instances of a split (cached), or of part ``part`` of ``parts`` equal dialogue ranges."""
        if parts > 1:
            total = len(self.dialogues[split])
            return self._with_metadata(ranking_instances(self.dialogues[split], self.options.seed,
                                                         start=part * total // parts, stop=(part + 1) * total // parts))
        if split not in self._source:
            self._source[split] = self._with_metadata(ranking_instances(self.dialogues[split], self.options.seed))
        return self._source[split]

    @staticmethod
    def _with_metadata(rows: list[dict]) -> list[dict]:
        for row in rows:
            row.update(context_turns=len(row["context"]), replacements=[], deleted_turns=[])
        return rows

    def tokens(self, split: str) -> dict[str, "DialogueTokens"]:
        """``{dialogue_id: DialogueTokens}`` for one split (tokenised, and words looked up in WordNet, once)."""
        if split not in self._tokens:
            self._tokens[split] = {dialogue.id: DialogueTokens.build(dialogue.turns, self.synonyms.replaceable)
                                   for dialogue in self.dialogues[split]}
        return self._tokens[split]

    def warm(self, splits=("test",), num_proc: int = 1) -> int:
        """Look every word of these splits up in WordNet once (in ``num_proc`` forked processes), then tokenise the
        splits; call it before forking config workers. Returns the number of distinct words."""
        words = sorted({token.lower() for split in splits for dialogue in self.dialogues[split]
                        for turn in dialogue.turns for token in tokenize(turn) if is_word(token)})
        self.synonyms.precompute(words, num_proc)
        for split in splits:
            self.tokens(split)
        return len(words)

    # --- configs -----------------------------------------------------------------------------------------------

    def rows(self, spec: ConfigSpec, split: str = "test", part: int = 0, parts: int = 1) -> list[dict]:
        """The rows of one config on one split (in source order; dropped instances left out); ``part``/``parts``
        split the source config into dialogue ranges (for parallel builds)."""
        if spec.kind == "source":
            return self.source_rows(split, part, parts)
        source = self.source_rows(split)
        if spec.kind in ("uw", "kw"):
            return [row for row in (self._ratio_row(spec, split, base) for base in source) if row is not None]
        if spec.kind == "uw_imp":
            return self._importance_rows(spec, split)
        if spec.kind == "ic":
            kept = [base for base in source if ic_eligible(base["context_turns"], IC_WINDOW, self.options.ic_selection)]
            return [self._ic_row(base, spec.value) for base in kept]
        return [base for base in source if sr_eligible(base["context_turns"], spec.value)]

    def _replacer(self, spec: ConfigSpec, uid: str) -> Callable[[str], str]:
        if spec.kind == "kw":
            rng = instance_rng(self.options.seed, ratio_name("kw", spec.value), uid)
            return lambda word: self.known.choose(word, rng)
        return self.synonyms.replace

    def _shifted(self, base: dict, dialogue: "DialogueTokens", targets: list[int], replace) -> dict:
        replacements = make_replacements(dialogue.tokens, dialogue.positions, targets, replace)
        per_turn: dict[int, dict[int, str]] = {}
        for item in replacements:
            per_turn.setdefault(item.turn, {})[item.index] = item.replacement
        context = [substitute(text, dialogue.spans[t], per_turn[t]) if t in per_turn else text
                   for t, text in enumerate(base["context"])]
        return {**base, "context": context, "replacements": [item._asdict() for item in replacements]}

    def _ratio_row(self, spec: ConfigSpec, split: str, base: dict) -> dict | None:
        dialogue = self.tokens(split)[base["dialogue_id"]]
        turn = base["turn"]
        rng = instance_rng(self.options.seed, ratio_name("uw", spec.value), base["id"])
        targets = ratio_targets(dialogue.tokens_before[turn], dialogue.replaceable[: dialogue.words_before[turn]],
                                spec.value, rng, self.options.rounding)
        if targets is None:
            return None
        return self._shifted(base, dialogue, targets, self._replacer(spec, base["id"]))

    def _ic_row(self, base: dict, k: int) -> dict:
        kept, deleted = delete_turns(base["context"], k, IC_WINDOW)
        return {**base, "context": kept, "context_turns": len(kept), "deleted_turns": deleted}

    # --- word importance (App. A.5) ------------------------------------------------------------------------------

    def contexts(self, split: str) -> list[list[list[str]]]:
        """Every instance's context as turns of tokens (what the importance scorer receives)."""
        tokens = self.tokens(split)
        return [list(tokens[row["dialogue_id"]].tokens[: row["turn"]]) for row in self.source_rows(split)]

    def set_importance(self, split: str, scorer: Callable[[list], list]) -> None:
        """Score every instance's context tokens once with ``scorer(contexts) -> scores`` (same nested shape)."""
        contexts = self.contexts(split)
        scores = scorer(contexts)
        if len(scores) != len(contexts) or any(
            len(score) != len(context) or any(len(s) != len(t) for s, t in zip(score, context, strict=True))
            for score, context in zip(scores, contexts, strict=True)
        ):
            raise DialshiftError("the word-importance scorer returned scores whose shape differs from the contexts "
                                 "(one float per token of every turn expected)")
        self._buckets[split] = [importance_buckets(score, NUM_BUCKETS) for score in scores]

    def importance_ready(self, split: str) -> bool:
        return split in self._buckets

    def _importance_rows(self, spec: ConfigSpec, split: str) -> list[dict]:
        if split not in self._buckets:
            raise DialshiftError(f"{spec.name} needs word-importance scores: pass --importance-model DIR")
        rows, tokens = [], self.tokens(split)
        for base, buckets in zip(self.source_rows(split), self._buckets[split], strict=True):
            dialogue = tokens[base["dialogue_id"]]
            words = dialogue.words_before[base["turn"]]
            word_buckets = [buckets[t][i] for t, i in dialogue.positions[:words]]
            replaceable = dialogue.replaceable[:words]
            per_bucket = [bucket_targets(word_buckets, replaceable, b) for b in range(1, NUM_BUCKETS + 1)]
            if any(targets is None for targets in per_bucket):  # one instance set for all five buckets
                continue
            rows.append(self._shifted(base, dialogue, per_bucket[spec.value - 1], self.synonyms.replace))
        return rows


@dataclass(frozen=True)
class DialogueTokens:
    """One dialogue tokenised once: tokens and spans per turn, its words in reading order and whether each has a
    valid synonym, and prefix counts so the context of the response at turn ``T`` is ``turns[:T]``."""

    tokens: tuple[tuple[str, ...], ...]
    spans: tuple[tuple[tuple[int, int], ...], ...]
    positions: tuple[tuple[int, int], ...]
    replaceable: tuple[bool, ...]
    words_before: tuple[int, ...]
    tokens_before: tuple[int, ...]

    @classmethod
    def build(cls, turns, replaceable: Callable[[str], bool]) -> "DialogueTokens":
        tokens = tuple(tuple(tokenize(turn)) for turn in turns)
        positions = tuple(word_positions(tokens))
        words_before, tokens_before = [0], [0]
        for turn in tokens:
            words_before.append(words_before[-1] + sum(1 for token in turn if is_word(token)))
            tokens_before.append(tokens_before[-1] + len(turn))
        return cls(tokens, tuple(tuple(token_spans(turn)) for turn in turns), positions,
                   tuple(replaceable(tokens[t][i]) for t, i in positions), tuple(words_before), tuple(tokens_before))
