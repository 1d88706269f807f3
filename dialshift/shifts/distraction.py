"""Distracting insertion (Xing and Gulla 2022, §3.3-§3.4, §4.4): utterances irrelevant to a dialogue are inserted
into its *History* (every context turn before the last one, the *Query*), and the result records which turns were
inserted (:attr:`~dialshift.shifts.base.ShiftResult.inserted_mask`), so a model's attention to them can be compared
with its attention to the original History (the DAS ratio, :func:`dialshift.metrics.das_ratio`).

Two sources of distractions, one rule for where they go:

* **random**: utterances drawn uniformly from a :class:`DistractionPool` (a corpus's training dialogues), never from
  the dialogue being shifted (same pool dialogue id) and never equal to one of its turns;
* **fixed sentences** (the paper's *frequent* and *rare* sets): the same ``count`` sentences in every dialogue;
  :func:`frequent_sentences` and :func:`rare_sentences` build them from a training split's word counts.

Each of the ``count`` distractions is kept with probability ``probability`` (the paper's inserting probability,
drawn independently per distraction); when none is kept, :meth:`DistractingInsertion.apply` returns
``Skipped("nothing_inserted")`` (the instance has nothing to measure). ``position="random"`` inserts each kept
distraction at a uniform slot of the History (slots 0..h before, between and after the h History turns, all before
the Query), one after the other; ``begin`` / ``middle`` / ``end`` insert the kept distractions as one block (a
complete turn) at slot 0, ``h // 2`` or ``h``. Every draw comes from the instance's stream ``rng(shift.key)`` in a
fixed order, so the same inputs give the same result whatever else is drawn.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.shifts.base import InstanceRandom, Shift, ShiftResult, Skipped, digest
from dialshift.text import tokenize

POSITIONS = ("random", "begin", "middle", "end")

#: Candidate frequent-word sentence pairs, in order of preference (the paper's pair first, §4.4).
FREQUENT_PAIRS = (
    ("why should i help you ?", "i have my right ."),
    ("what do you want from me ?", "i do not know what to say ."),
    ("can you tell me that again ?", "i will think about it ."),
)
#: The rare-word frames (the paper's "would you have lunch?" / "I should have lunch"): frequent frame words, one rare
#: noun ``{word}`` drawn from :data:`RARE_NOUNS`.
RARE_FRAMES = ("would you have {word} ?", "i should have {word} .")
RARE_NOUNS = (
    "lunch", "breakfast", "picnic", "sandwich", "dessert", "pancakes", "umbrella", "violin", "giraffe", "elephant",
    "pineapple", "lemonade", "spaghetti", "omelette", "croissant", "tortilla", "kangaroo", "penguin", "trombone",
    "saxophone", "harmonica", "cathedral", "lighthouse", "volcano", "meadow", "orchard", "zebra", "walrus",
)


def normalise(text: str) -> str:
    """The comparison form of an utterance: its tokens joined by single spaces."""
    return " ".join(tokenize(text))


def word_counts(utterances: Iterable[str]) -> Counter:
    """Token counts of ``utterances`` (:func:`tokenize`)."""
    counts: Counter = Counter()
    for text in utterances:
        counts.update(tokenize(text))
    return counts


@dataclass(frozen=True)
class DistractingSentences:
    """A pair (or more) of fixed distracting sentences and the evidence of the rule that chose them."""

    kind: str  # "frequent" or "rare"
    sentences: tuple[str, ...]
    rule: str
    word_counts: dict  # word -> count in the training split (the words the rule checked)
    rejected: tuple[str, ...] = ()  # candidates passed over, with the reason


def frequent_sentences(counts: Counter, corpus: set[str], top: int = 200) -> DistractingSentences:
    """The first pair of :data:`FREQUENT_PAIRS` whose every token is among the ``top`` most frequent training tokens
    and neither sentence of which occurs as an utterance of the corpus (``corpus``: normalised utterances)."""
    ranked = {word for word, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]}
    rejected = []
    for pair in FREQUENT_PAIRS:
        missing = sorted({word for sentence in pair for word in tokenize(sentence)} - ranked)
        present = [sentence for sentence in pair if normalise(sentence) in corpus]
        if not missing and not present:
            words = {word: counts[word] for sentence in pair for word in tokenize(sentence)}
            return DistractingSentences("frequent", pair, f"every token among the {top} most frequent training "
                                        "tokens; neither sentence an utterance of the corpus", words, tuple(rejected))
        rejected.append(f"{' / '.join(pair)}: " + (f"not frequent: {', '.join(missing)}" if missing
                                                   else f"occurs in the corpus: {present[0]}"))
    raise DialshiftError(f"no frequent-word sentence pair fits this corpus ({'; '.join(rejected)}); pass a larger "
                         "frequent-word list size")


def rare_sentences(counts: Counter, corpus: set[str], max_count: int = 5) -> DistractingSentences:
    """:data:`RARE_FRAMES` filled with the first noun of :data:`RARE_NOUNS` that occurs in the training split at
    least once and at most ``max_count`` times, and whose sentences are not utterances of the corpus."""
    rejected = []
    for word in RARE_NOUNS:
        if not 1 <= counts[word] <= max_count:
            rejected.append(f"{word} ({counts[word]}x)")
            continue
        pair = tuple(frame.format(word=word) for frame in RARE_FRAMES)
        if any(normalise(sentence) in corpus for sentence in pair):
            rejected.append(f"{word} (a sentence occurs in the corpus)")
            continue
        words = {token: counts[token] for sentence in pair for token in tokenize(sentence)}
        return DistractingSentences("rare", pair, f"the first candidate noun seen 1..{max_count} times in training, "
                                    f"in the frames {' / '.join(RARE_FRAMES)}", words, tuple(rejected))
    raise DialshiftError(f"no candidate noun occurs 1..{max_count} times in the training split ({', '.join(rejected)});"
                         " pass a larger rare-word count")


class DistractionPool:
    """Utterances of a corpus's (training) dialogues to draw random distractions from, uniformly over utterances.

    ``dialogues``: ``(dialogue id, utterances)`` pairs. :meth:`draw` never returns an utterance of the dialogue
    ``exclude`` names, nor one whose normalised text is in ``avoid``.
    """

    MAX_TRIES = 1000

    def __init__(self, dialogues: Iterable[tuple[str, Sequence[str]]]):
        self.ids: list[str] = []
        self.texts: list[str] = []
        owners: list[int] = []
        for number, (dialogue_id, utterances) in enumerate(dialogues):
            self.ids.append(str(dialogue_id))
            for text in utterances:
                self.texts.append(text)
                owners.append(number)
        if not self.texts:
            raise DialshiftError("the distraction pool is empty: pass training dialogues with utterances")
        self.owners = np.asarray(owners, dtype=np.int64)
        self._normal: list[str | None] = [None] * len(self.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def _normalised(self, index: int) -> str:
        if self._normal[index] is None:
            self._normal[index] = normalise(self.texts[index])
        return self._normal[index]

    def draw(self, generator: np.random.Generator, exclude: str | None = None, avoid: set[str] = frozenset()) -> int:
        """The index of a random utterance (see the class docstring); its text is ``pool.texts[index]``."""
        for _ in range(self.MAX_TRIES):
            index = int(generator.integers(len(self.texts)))
            if self.ids[self.owners[index]] != exclude and self._normalised(index) not in avoid:
                return index
        raise DialshiftError(f"no distraction found in {self.MAX_TRIES} draws: the pool ({len(self.ids)} dialogues) "
                             f"is almost all dialogue {exclude!r} or its utterances")


@dataclass(frozen=True)
class DistractingInsertionParams:
    """``count`` distractions, each kept with ``probability``, inserted at ``position`` (see the module doc);
    dialogues with fewer than ``min_history`` History turns are left out."""

    count: int = 2
    probability: float = 1.0
    position: str = "random"
    min_history: int = 1

    def __post_init__(self):
        if self.count < 1:
            raise DialshiftError(f"distracting insertion needs count >= 1, got {self.count}")
        if not 0.0 < self.probability <= 1.0:
            raise DialshiftError(f"inserting probability must be in (0, 1], got {self.probability}")
        if self.position not in POSITIONS:
            raise DialshiftError(f"unknown insertion position {self.position!r}; one of {', '.join(POSITIONS)}")
        if self.min_history < 1:
            raise DialshiftError(f"min_history must be at least 1 (a History turn to compare with), got "
                                 f"{self.min_history}")


class DistractingInsertion(Shift):
    """Insert distracting utterances into a dialogue's History (see the module docstring).

    Resources (exactly one of ``pool`` / ``sentences``): ``pool`` a :class:`DistractionPool` (random distractions),
    ``sentences`` the fixed distracting sentences (at least ``count``; the first ``count`` are used, in order).
    ``dialogue_id`` maps an instance id to the pool dialogue id to exclude (default: the instance id itself);
    ``stream`` names the random stream (default ``distract_<source>_<position>_<probability>``), so a different
    ``stream`` gives another draw of the same shift.
    """

    name = "distract"
    Params = DistractingInsertionParams

    def __init__(self, params=None, *, pool: DistractionPool | None = None, sentences: Sequence[str] | None = None,
                 dialogue_id: Callable[[str], str] | None = None, stream: str | None = None, **kwargs):
        super().__init__(params, **kwargs)
        if (pool is None) == (sentences is None):
            raise DialshiftError("DistractingInsertion needs exactly one of pool= (random distractions) or "
                                 "sentences= (fixed distracting sentences)")
        if sentences is not None and len(sentences) < self.params.count:
            raise DialshiftError(f"DistractingInsertion: {len(sentences)} sentences given, count is "
                                 f"{self.params.count}")
        self.pool = pool
        self.sentences = tuple(sentences[: self.params.count]) if sentences is not None else None
        self.dialogue_id = dialogue_id or (lambda instance_id: instance_id)
        source = "random" if pool is not None else "fixed"
        self._stream = stream or f"distract_{source}_{self.params.position}_{self.params.probability:g}"

    @property
    def key(self) -> str:
        return self._stream

    @staticmethod
    def slot(position: str, history: int, generator: np.random.Generator) -> int:
        """The History slot (0 .. ``history``) a block goes to; ``random`` draws it uniformly."""
        if position == "random":
            return int(generator.integers(history + 1))
        return {"begin": 0, "middle": history // 2, "end": history}[position]

    def resource_digest(self) -> str:
        if self.pool is not None:
            return digest("pool", self.pool.ids, self.pool.texts, self.pool.owners.tolist())
        return digest("sentences", self.sentences)

    def transform(self, dialogue: tuple[str, ...], rng: InstanceRandom) -> ShiftResult | Skipped:
        params = self.params
        if len(dialogue) < params.min_history + 1:
            return Skipped("too_few_turns", f"{len(dialogue)} turns; needs {params.min_history} History turn(s) "
                                            "and the Query")
        generator = rng(self.key)
        kept = generator.random(params.count) < params.probability
        if self.pool is not None:
            avoid = {normalise(text) for text in dialogue}
            exclude = self.dialogue_id(rng.instance_id)
            texts = [self.pool.texts[self.pool.draw(generator, exclude, avoid)] for _ in range(params.count)]
        else:
            texts = list(self.sentences)
        history = [(text, 0) for text in dialogue[:-1]]
        if params.position == "random":
            fractions = generator.random(params.count)  # a uniform slot of the History as it is at insertion
            for text, keep, fraction in zip(texts, kept, fractions, strict=True):
                if keep:
                    history.insert(int(fraction * (len(history) + 1)), (text, 1))
        else:
            block = [(text, 1) for text, keep in zip(texts, kept, strict=True) if keep]
            at = self.slot(params.position, len(history), generator)
            history[at:at] = block
        if not kept.any():
            return Skipped("nothing_inserted", f"none of the {params.count} distractions was kept "
                                               f"(probability {params.probability:g})")
        return ShiftResult(tuple(text for text, _ in history) + (dialogue[-1],),
                           inserted_mask=tuple(flag for _, flag in history) + (0,))
