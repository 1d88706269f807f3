"""The public Shift API: a shift is a small class with a name, a parameters dataclass and ``apply(dialogue, rng)``.

``dialogue`` is a dialogue context, a sequence of turns (strings, oldest first); ``rng`` is the instance's
:class:`InstanceRandom`, whose named streams are seeded by (global seed, stream key, instance id), so an instance's
shift never depends on which other instances exist or their order (HELM's perturbations seed the same way).
``apply`` returns a :class:`ShiftResult` (the new context and a record of every change), or ``None`` when the shift does
not apply to this dialogue (the instance is left out of the shifted config).

Any corpus works: see the README ("Shifting your own dialogues") for UW and IC applied to a ``load_dataset`` corpus.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import ClassVar

import numpy as np

from dialshift.shifts.seeding import instance_rng


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
class NoParams:
    """Parameters of a shift that has none."""


class Shift(ABC):
    """Base class: subclasses set ``name`` and ``Params`` and implement :meth:`apply`.

    ``self.params`` is the frozen parameters dataclass; resources a shift needs (a vocabulary, a synonym table, word
    scores) are constructor arguments, not parameters.
    """

    name: ClassVar[str] = ""
    Params: ClassVar[type] = NoParams

    def __init__(self, params=None, **kwargs):
        if params is not None and kwargs:
            raise TypeError(f"{type(self).__name__}: pass params or keyword parameters, not both")
        self.params = params if params is not None else self.Params(**kwargs)

    @property
    def key(self) -> str:
        """The name of this shift's main random stream (a config-style name such as ``uw_0.30``)."""
        return self.name

    @abstractmethod
    def apply(self, dialogue: Sequence[str], rng: InstanceRandom) -> ShiftResult | None:
        """The shifted dialogue, or None when the shift does not apply to it."""

    def parameters(self) -> dict:
        return asdict(self.params)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.parameters().items())
        return f"{type(self).__name__}({shown})"


@dataclass
class ShiftPipeline:
    """Apply ``shift`` to the ``context`` column of ``datasets`` rows (a ``Dataset.map``-ready, batched function;
    :func:`shift_dataset` is the convenient form).

    Rows the shift does not apply to get ``keep = False``; kept rows get the shifted ``context`` and the change record
    (``replacements``, ``deleted_turns``, ``truncated_turns``, ``inserted_mask``).
    """

    shift: Shift
    seed: int = 0
    id_column: str = "id"
    context_column: str = "context"
    keep_column: str = "keep"
    _fields: tuple = field(default=("replacements", "deleted_turns", "truncated_turns", "inserted_mask"), init=False)

    def __call__(self, batch: dict) -> dict:
        out = {self.keep_column: [], **{name: [] for name in self._fields}}
        contexts = []
        for uid, context in zip(batch[self.id_column], batch[self.context_column], strict=True):
            result = self.shift.apply(context, InstanceRandom(self.seed, str(uid)))
            out[self.keep_column].append(result is not None)
            record = (result or ShiftResult(tuple(context))).record()
            contexts.append(record["context"])
            for name in self._fields:
                out[name].append(record[name])
        return {**batch, self.context_column: contexts, **out}


def change_features():
    """The ``datasets`` features of the change record a shifted row carries."""
    from datasets import List, Value

    return {"replacements": List({"turn": Value("int32"), "index": Value("int32"), "original": Value("string"),
                                  "replacement": Value("string")}),
            "deleted_turns": List(Value("string")),
            "truncated_turns": List(Value("string")),
            "inserted_mask": List(Value("int8"))}


def shift_dataset(dataset, shift: Shift, seed: int = 0, *, id_column: str = "id", context_column: str = "context",
                  num_proc: int | None = None, batch_size: int = 1000):
    """A ``datasets.Dataset`` of dialogues shifted by ``shift``: rows the shift does not apply to are left out, kept
    rows get the shifted context and the change record (``replacements``, ``deleted_turns``, ``truncated_turns``,
    ``inserted_mask``).
    Each row is seeded by ``(seed, shift's stream keys, row id)``, so the result does not depend on batching or on
    ``num_proc``."""
    from datasets import Features, Value

    for column in (id_column, context_column):
        if column not in dataset.column_names:
            raise ValueError(f"the dataset has no {column!r} column (it has {', '.join(dataset.column_names)}); "
                             f"pass {'id_column' if column == id_column else 'context_column'}=")
    pipeline = ShiftPipeline(shift, seed, id_column, context_column, keep_column="__keep__")
    features = Features({**dataset.features, **change_features(), "__keep__": Value("bool")})
    shifted = dataset.map(pipeline, batched=True, batch_size=batch_size, features=features, num_proc=num_proc,
                          desc=f"{shift!r}")
    return shifted.filter(lambda keep: keep, input_columns="__keep__", batched=False).remove_columns("__keep__")
