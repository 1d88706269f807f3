"""The public Shift API: a shift is a small class with a name, a parameters dataclass and ``apply(dialogue, rng)``.

``dialogue`` is a dialogue context, a sequence of turns (strings, oldest first); ``rng`` is the instance's
:class:`InstanceRandom`, whose named streams are seeded by (global seed, stream key, instance id), so an instance's
shift never depends on which other instances exist or their order (HELM's perturbations seed the same way).
``apply`` checks the context (:func:`check_context`: a sequence of strings, not one string, not empty; the error
names the instance id), then returns a :class:`ShiftResult` (the new context and a record of every change) or a
:class:`Skipped` with the reason the shift does not apply to this dialogue (:data:`SKIP_REASONS`). A subclass
implements :meth:`Shift.transform` on the checked turns; a shift that declares ``languages`` (those using English
WordNet: ``("en",)``) skips a context written mostly in another script with the reason ``unsupported_language``.

Every shifted row can say how it was made: :meth:`Shift.describe` gives the shift's name, stream key, parameters and
seed (the ``shift`` column, as HELM's perturbation description), and :func:`shift_from_description` rebuilds the
shift from it given the same resources. Applying shifts to a ``datasets.Dataset`` is :mod:`.dataset`.

Any corpus works: see the README ("Shifting your own dialogues").
"""

import dataclasses
import hashlib
import json
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.shifts.seeding import instance_rng


class ParameterError(DialshiftError, TypeError):
    """A missing, unknown or bad shift parameter: one line naming it and what it accepts. It is a ``TypeError`` too,
    like the ``__init__() missing ...`` it replaces, so callers that catch that keep working."""


#: Why a shipped shift did not apply to a dialogue (the ``reason`` of :class:`Skipped`; a new shift may add its own).
SKIP_REASONS = {
    "too_few_turns": "the context has fewer turns than the shift needs",
    "wrong_length": "the context does not have the number of turns the shift selects",
    "too_few_tokens": "ratio x context tokens rounds to 0 target words",
    "no_eligible_word": "no word of the context has a valid replacement",
    "below_ratio": "fewer replaceable words than ratio x context tokens",
    "empty_bucket": "a word-importance bucket has no replaceable word",
    "nothing_inserted": "no distraction was kept (each is kept with the inserting probability)",
    "unsupported_language": "the context is written in a script the shift's language does not use",
}


@dataclass(frozen=True)
class InstanceRandom:
    """An instance's random streams: ``rng(key)`` is a fresh ``numpy`` generator seeded by (seed, key, instance id)."""

    seed: int
    instance_id: str

    def __call__(self, key: str) -> np.random.Generator:
        return instance_rng(self.seed, key, self.instance_id)


@dataclass(frozen=True)
class ShiftResult:
    """A shifted context and what changed: replaced words (``turn``, ``index`` of the token, ``original``,
    ``replacement``), turns deleted by the shift, and turns removed outside the shift's own deletion (e.g. older turns
    cut by a window). ``inserted_mask`` has one flag per turn of ``context`` (1 = inserted by the shift, e.g. a
    distracting utterance) when the shift inserts turns, and is empty otherwise."""

    context: tuple[str, ...]
    replacements: tuple = ()
    deleted_turns: tuple[str, ...] = ()
    truncated_turns: tuple[str, ...] = ()
    inserted_mask: tuple[int, ...] = ()

    def record(self) -> dict:
        """The row fields dialshift publishes for a shifted instance."""
        return {"context": list(self.context),
                "replacements": [item._asdict() if hasattr(item, "_asdict") else dict(item)
                                 for item in self.replacements],
                "deleted_turns": list(self.deleted_turns), "truncated_turns": list(self.truncated_turns),
                "inserted_mask": list(self.inserted_mask)}


@dataclass(frozen=True)
class Skipped:
    """Why a shift did not apply: a ``reason`` code (:data:`SKIP_REASONS`) and a human ``detail``. It is falsy, so
    ``if result:`` keeps only shifted dialogues."""

    reason: str
    detail: str = ""

    def __bool__(self) -> bool:
        return False


def check_context(context, instance_id) -> tuple[str, ...]:
    """``context`` as a tuple of turns, or one :class:`DialshiftError` line naming the instance and the fix."""
    where = f"instance {instance_id!r}"
    if isinstance(context, str):
        raise DialshiftError(f"{where}: the context is one string ({context[:40]!r}...), not a list of turns; split "
                             "it into turns first (e.g. text.split(' __eou__ ')), or give shift_dataset "
                             "turn_separator=")
    if not isinstance(context, Sequence) or isinstance(context, bytes):
        raise DialshiftError(f"{where}: the context is a {type(context).__name__}, not a list of turns (strings, "
                             "oldest first)")
    if not context:
        raise DialshiftError(f"{where}: the context is empty; a context has at least one turn (drop such rows "
                             "first)")
    for number, turn in enumerate(context):
        if not isinstance(turn, str):
            raise DialshiftError(f"{where}: turn {number} is {turn!r} ({type(turn).__name__}), not a string; "
                                 "every turn must be text (drop or fill missing turns first)")
    return tuple(context)


#: Unicode scripts (the first word of a letter's Unicode name) each language's text is written in.
LANGUAGE_SCRIPTS = {"en": ("LATIN",)}


@lru_cache(maxsize=1 << 16)
def _script_counts(turn: str) -> tuple[tuple[str, int], ...]:
    """How many letters of each script a turn has (computed once per distinct turn; ASCII text is all Latin)."""
    if turn.isascii():
        letters = sum(char.isalpha() for char in turn)
        return (("LATIN", letters),) if letters else ()
    counts: dict[str, int] = {}
    for char in turn:
        if char.isalpha():
            script = unicodedata.name(char, "UNKNOWN").split()[0]
            counts[script] = counts.get(script, 0) + 1
    return tuple(counts.items())


def foreign_script(turns: Sequence[str], languages: Sequence[str]) -> str | None:
    """The script most of the letters of ``turns`` are written in when it is not one of ``languages``' scripts
    (``HANGUL``, ``CJK``, ``CYRILLIC`` ...), else None (also when there are no letters)."""
    allowed = {script for language in languages for script in LANGUAGE_SCRIPTS.get(language, ())}
    counts: dict[str, int] = {}
    for turn in turns:
        for script, count in _script_counts(turn):
            counts[script] = counts.get(script, 0) + count
    if not counts:
        return None
    native = sum(counts.get(script, 0) for script in allowed)
    if 2 * native >= sum(counts.values()):
        return None
    return max(sorted(counts), key=lambda script: counts[script])


def digest(*parts) -> str:
    """A short, stable sha256 hex digest of JSON-able ``parts`` (sorted keys)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class NoParams:
    """Parameters of a shift that has none."""


class Shift(ABC):
    """Base class: subclasses set ``name`` and ``Params`` and implement :meth:`transform`.

    ``self.params`` is the frozen parameters dataclass; resources a shift needs (a vocabulary, a synonym table, word
    scores) are constructor arguments, not parameters, and :meth:`resource_digest` names them for fingerprints.
    ``languages`` (ISO codes) are the languages a shift supports (None: any text).
    """

    name: ClassVar[str] = ""
    Params: ClassVar[type] = NoParams
    languages: ClassVar[tuple[str, ...] | None] = None

    def __init__(self, params=None, **kwargs):
        if params is not None and kwargs:
            raise TypeError(f"{type(self).__name__}: pass params or keyword parameters, not both")
        self.params = params if params is not None else self.make_params(**kwargs)

    @classmethod
    def make_params(cls, **kwargs):
        """``Params(**kwargs)``, or one :class:`DialshiftError` line naming the missing or unknown parameter and what
        it accepts (a field's ``metadata["help"]``) instead of Python's ``__init__() missing ...``. Call it before
        any expensive set-up; the parameters dataclass checks values and ranges itself."""
        fields = {item.name: item for item in dataclasses.fields(cls.Params)}
        unknown = sorted(set(kwargs) - set(fields))
        if unknown:
            raise ParameterError(f"{cls.__name__} ({cls.name}) has no parameter {unknown[0]!r}; its parameters: "
                                 f"{', '.join(fields) or 'none'}")
        missing = [name for name, item in fields.items() if name not in kwargs and item.init
                   and item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING]
        if missing:
            help_text = fields[missing[0]].metadata.get("help")
            raise ParameterError(f"{cls.__name__} ({cls.name}) needs parameter {missing[0]!r}"
                                 + (f": {help_text}" if help_text else ""))
        return cls.Params(**kwargs)

    @property
    def key(self) -> str:
        """The name of this shift's main random stream (a config-style name such as ``uw_0.30``)."""
        return self.name

    def apply(self, dialogue: Sequence[str], rng: InstanceRandom | None = None) -> "ShiftResult | Skipped":
        """The shifted dialogue, or :class:`Skipped` with the reason the shift does not apply to it."""
        turns = check_context(dialogue, rng.instance_id if rng is not None else None)
        if self.languages is not None:
            script = foreign_script(turns, self.languages)
            if script is not None:
                return Skipped("unsupported_language", f"mostly {script} letters; {type(self).__name__} supports "
                                                       f"{', '.join(self.languages)} only")
        return self.transform(turns, rng)

    @abstractmethod
    def transform(self, turns: tuple[str, ...], rng: InstanceRandom | None) -> "ShiftResult | Skipped":
        """:meth:`apply` on a checked context (a tuple of strings, at least one)."""

    def parameters(self) -> dict:
        return asdict(self.params)

    def prepare(self, dialogues, num_proc: int = 1) -> None:
        """Fill any lookup table for these dialogues (lists of turns), in ``num_proc`` processes, before worker
        processes are forked, so they share it; the default does nothing."""
        return None

    def resource_digest(self) -> str:
        """A digest of the resources that decide this shift's output beside its parameters (a vocabulary, a synonym
        table's WordNet, a pool); empty for a shift that has none."""
        return ""

    def describe(self, seed: int) -> dict:
        """How a row was made (the ``shift`` column): name, stream key, parameters (JSON) and seed."""
        return {"name": self.name, "key": self.key, "parameters": json.dumps(self.parameters(), sort_keys=True),
                "seed": int(seed)}

    def fingerprint(self) -> str:
        """A stable digest of everything that decides this shift's output: name, key, parameters, resources."""
        if getattr(self, "_fingerprint", None) is None:
            self._fingerprint = digest(type(self).__module__, type(self).__qualname__, self.key, self.parameters(),
                                       self.resource_digest())
        return self._fingerprint

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.parameters().items())
        return f"{type(self).__name__}({shown})"


def shift_classes() -> dict[str, type]:
    """Every loaded :class:`Shift` subclass with a name, by name."""
    found, todo = {}, list(Shift.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.name:
            found.setdefault(cls.name, cls)
    return found


def shift_from_description(description, **resources) -> Shift:
    """The shift a row's ``shift`` description (:meth:`Shift.describe`) names, rebuilt with ``resources`` (the
    constructor arguments that are not parameters: ``synonyms=``, ``pool=`` ...); apply it with
    ``InstanceRandom(description["seed"], row id)``."""
    classes = shift_classes()
    name = description["name"]
    if name not in classes:
        raise DialshiftError(f"no shift named {name!r} is loaded (known: {', '.join(sorted(classes))})")
    shift = classes[name](**json.loads(description["parameters"]), **resources)
    if shift.key != description["key"]:
        raise DialshiftError(f"the rebuilt {name} shift has stream key {shift.key!r}, the description "
                             f"{description['key']!r}: pass the same resources (e.g. stream=)")
    return shift
