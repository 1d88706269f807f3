"""Pure, seeded transformations of dialogue contexts: the public Shift API and the shifts dialshift ships.

``Shift`` subclasses have a ``name``, a ``Params`` dataclass and ``apply(dialogue, rng)``, which returns the shifted
context or :class:`Skipped` with the reason (:mod:`.base`); :func:`shift_dataset` applies one to a ``datasets.Dataset``
(:mod:`.dataset`). The shifts:

* :class:`UnknownWord`, :class:`KnownWord`, :class:`ImportantWord` (:mod:`.lexical`; rules in :mod:`.replace`,
  tokens in :mod:`.words`), Lee et al. (2022) §2.1, App. A.1, A.3, A.5; ``mode="meaning"`` is the meaning-keeping
  variant for users' corpora (:mod:`.meaning`), and :meth:`UnknownWord.for_corpus` keeps its synonym table on disk
  (:mod:`.table_cache`);
* :class:`InsufficientContext` (turn deletion) and :class:`SourceLength` (the ``sr_*`` source-length *selection*, no
  turn removed) (:mod:`.context`), Lee et al. §2.2, App. A.2, A.4;
* :class:`DistractingInsertion` (:mod:`.distraction`), Xing & Gulla §3.3, §4.

Every random choice comes from the instance's :class:`InstanceRandom` (:mod:`.seeding`).
"""

from dialshift.shifts.base import (
    SKIP_REASONS,
    InstanceRandom,
    Shift,
    ShiftResult,
    Skipped,
    check_context,
    shift_from_description,
)
from dialshift.shifts.context import InsufficientContext, SourceLength
from dialshift.shifts.dataset import ShiftPipeline, ShiftReport, shift_dataset
from dialshift.shifts.distraction import DistractingInsertion, DistractionPool
from dialshift.shifts.lexical import ImportantWord, KnownWord, TokenizedContext, UnknownWord

__all__ = [
    "SKIP_REASONS",
    "DistractingInsertion",
    "DistractionPool",
    "ImportantWord",
    "InstanceRandom",
    "InsufficientContext",
    "KnownWord",
    "Shift",
    "ShiftPipeline",
    "ShiftReport",
    "ShiftResult",
    "Skipped",
    "SourceLength",
    "TokenizedContext",
    "UnknownWord",
    "check_context",
    "shift_dataset",
    "shift_from_description",
]
