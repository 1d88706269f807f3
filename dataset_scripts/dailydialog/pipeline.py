"""The DailyDialog shift pipeline: tables computed once, then the rows of any config through the public Shift API.

:class:`DailyDialogShifts` reads nothing itself: it takes the dialogues of the three splits and a WordNet reader,
computes once the training vocabulary, the known-word list, the source ranking instances and (lazily, cached per word)
the synonym table, and produces the rows of a config by applying the config's :class:`~dialshift.shifts.Shift` to
every source instance's context with that instance's :class:`~dialshift.shifts.InstanceRandom`. Rows of shifted
configs keep the source instance's ``id``, ``candidates`` and ``label``; only ``context``, the change record
(``replacements``, ``deleted_turns``) and ``shift`` (the shift's name, stream key, parameters and seed, from which
:func:`~dialshift.shifts.shift_from_description` rebuilds it; null on the unshifted config) differ.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass

from dialshift.configs import BenchmarkConfig
from dialshift.errors import DialshiftError
from dialshift.ranking.instances import ranking_instances
from dialshift.shifts import (
    ImportantWord,
    InstanceRandom,
    InsufficientContext,
    KnownWord,
    Shift,
    SourceLength,
    TokenizedContext,
    UnknownWord,
)
from dialshift.shifts.lexical import KW_MIN_COUNT
from dialshift.shifts.replace import KnownWords, SynonymTable, WordRules
from dialshift.shifts.words import Vocabulary, is_word, tokenize

#: The stream key of the source instances' negatives and gold positions (the config's name in dialshift 0.1; kept so
#: every published row stays byte-identical).
NEGATIVES_KEY = "source"


@dataclass(frozen=True)
class ShiftOptions:
    """Every rule parameter of the family (stated in the card). ``content_words``, ``senses`` and ``inflect`` are
    the UW/KW/UW-imp word rules (:class:`~dialshift.shifts.replace.WordRules`; default: the paper's)."""

    seed: int = 0
    rounding: str = "floor"
    count_base: str = "tokens"
    vocab_case_sensitive: bool = False
    kw_rule: str = "random"
    kw_min_count: int = KW_MIN_COUNT
    ic_selection: str = "at_least"
    drop_train_overlap: bool = False
    content_words: bool = False
    senses: int = 0
    inflect: bool = False

    @property
    def word_rules(self) -> WordRules:
        return WordRules(content_words=self.content_words, senses=self.senses, inflect=self.inflect)

    def settings(self) -> dict:
        """The options as the card states them (``count_base`` only when it is not the default ``tokens``, so cards
        of builds made before the option existed keep their bytes)."""
        settings = asdict(self)
        if settings["count_base"] == "tokens":
            del settings["count_base"]
        return settings


def fold(dialogue) -> tuple[str, ...]:
    """A dialogue's turns case- and space-folded: the key of the train/test overlap check."""
    return tuple(" ".join(turn.lower().split()) for turn in dialogue.turns)


class DailyDialogShifts:
    """The tables every config shares (vocabulary, synonyms, known words, source rows) and the rows of each config."""

    def __init__(self, dialogues: dict, wordnet, options: ShiftOptions = ShiftOptions()):
        for split in ("train", "test"):
            if split not in dialogues:
                raise DialshiftError(f"the DailyDialog {split} split is missing; all three official splits are needed")
        self.dialogues = dialogues
        self.options = options
        self.vocabulary = Vocabulary.from_texts((turn for dialogue in dialogues["train"] for turn in dialogue.turns),
                                                case_sensitive=options.vocab_case_sensitive)
        self.synonyms = SynonymTable(wordnet, self.vocabulary, rules=options.word_rules)
        self._known: KnownWords | None = None
        self._source: dict[str, list[dict]] = {}
        self._scores: dict[tuple, list] = {}
        self.train_dialogues = {fold(dialogue) for dialogue in dialogues["train"]}

    @property
    def known(self) -> KnownWords:
        if self._known is None:
            self._known = KnownWords(self.vocabulary, self.options.kw_min_count, self.options.kw_rule)
        return self._known

    # --- precomputed tables ------------------------------------------------------------------------------------

    def source_rows(self, split: str, part: int = 0, parts: int = 1) -> list[dict]:
        """The ranking instances of a split (cached), or of part ``part`` of ``parts`` equal dialogue ranges."""
        if parts > 1:
            total = len(self.dialogues[split])
            return self._with_metadata(split, ranking_instances(
                self.dialogues[split], self.options.seed, NEGATIVES_KEY, start=part * total // parts,
                stop=(part + 1) * total // parts))
        if split not in self._source:
            self._source[split] = self._with_metadata(
                split, ranking_instances(self.dialogues[split], self.options.seed, NEGATIVES_KEY))
        return self._source[split]

    def _with_metadata(self, split: str, rows: list[dict]) -> list[dict]:
        """Add the change record (empty) and ``in_train``; with ``drop_train_overlap``, leave out validation/test
        instances whose dialogue occurs in train."""
        overlapping = {dialogue.id for dialogue in self.dialogues[split] if fold(dialogue) in self.train_dialogues}
        for row in rows:
            row.update(context_turns=len(row["context"]), replacements=[], deleted_turns=[], truncated_turns=[],
                       in_train=row["dialogue_id"] in overlapping, shift=None)
        if self.options.drop_train_overlap and split != "train":
            rows = [row for row in rows if not row["in_train"]]
        return rows

    def warm(self, splits=("test",), num_proc: int = 1) -> int:
        """Look every word of these splits up in WordNet once (in ``num_proc`` forked processes); call it before
        forking config workers. Returns the number of distinct words."""
        words = sorted({token.lower() for split in splits for dialogue in self.dialogues[split]
                        for turn in dialogue.turns for token in tokenize(turn) if is_word(token)})
        self.synonyms.precompute(words, num_proc)
        return len(words)

    # --- configs -----------------------------------------------------------------------------------------------

    def shift(self, config: BenchmarkConfig) -> Shift | None:
        """The Shift of a config (None for the unshifted ``dailydialog`` config)."""
        group, params, options = config.group, config.parameters, self.options
        rules = asdict(options.word_rules)
        if group is None:
            return None
        if group.name == "uw":
            return UnknownWord(ratio=params["ratio"], rounding=options.rounding, base=options.count_base,
                               synonyms=self.synonyms, **rules)
        if group.name == "kw":
            return KnownWord(ratio=params["ratio"], rounding=options.rounding, base=options.count_base,
                             rule=options.kw_rule,
                             min_count=options.kw_min_count, synonyms=self.synonyms, known=self.known, **rules)
        if group.name == "uw_imp":
            if not self._scores:
                raise DialshiftError(f"{config.name} needs word-importance scores: pass --importance-model DIR")
            return ImportantWord(bucket=params["bucket"], synonyms=self.synonyms, scores=self._scores, **rules)
        if group.name == "ic":
            return InsufficientContext(deleted=params["deleted"], window=params["window"],
                                       selection=options.ic_selection)
        if group.name == "sr":
            return SourceLength(turns=params["turns"])
        raise DialshiftError(f"{config.name}: no DailyDialog shift for group {group.name!r}")

    def rows(self, config: BenchmarkConfig, split: str = "test", part: int = 0, parts: int = 1) -> list[dict]:
        """The rows of one config on one split (in source order; instances the shift does not apply to left out);
        ``part``/``parts`` split the unshifted config into dialogue ranges (for parallel builds)."""
        shift = self.shift(config)
        if shift is None:
            return self.source_rows(split, part, parts)
        rows, description = [], shift.describe(self.options.seed)
        for base in self.source_rows(split):
            result = shift.apply(base["context"], InstanceRandom(self.options.seed, base["id"]))
            if result:  # else Skipped: the reason the shift did not apply
                change = {key: value for key, value in result.record().items() if key in base}  # this family's fields
                rows.append({**base, **change, "context_turns": len(result.context), "shift": description})
        return rows

    # --- word importance (App. A.5) ------------------------------------------------------------------------------

    def contexts(self, split: str) -> list[list[list[str]]]:
        """Every instance's context as turns of tokens (what the importance scorer receives)."""
        return [list(TokenizedContext.of(row["context"]).tokens) for row in self.source_rows(split)]

    def set_importance(self, split: str, scorer: Callable[[list], list]) -> None:
        """Score every instance's context tokens once with ``scorer(contexts) -> scores`` (same nested shape)."""
        contexts = self.contexts(split)
        scores = scorer([[list(turn) for turn in context] for context in contexts])
        if len(scores) != len(contexts) or any(
            len(score) != len(context) or any(len(s) != len(t) for s, t in zip(score, context, strict=True))
            for score, context in zip(scores, contexts, strict=True)
        ):
            raise DialshiftError("the word-importance scorer returned scores whose shape differs from the contexts "
                                 "(one float per token of every turn expected)")
        for row, score in zip(self.source_rows(split), scores, strict=True):
            self._scores[tuple(row["context"])] = score
