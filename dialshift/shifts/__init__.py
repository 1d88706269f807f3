"""Pure, seeded transformations of dialogue contexts: the public Shift API and the shifts dialshift ships.

``Shift`` subclasses have a ``name``, a ``Params`` dataclass and ``apply(dialogue, rng)`` (:mod:`.base`):

* :class:`UnknownWord`, :class:`KnownWord`, :class:`ImportantWord` (:mod:`.lexical`; rules in :mod:`.replace`,
  tokens in :mod:`.words`), Lee et al. (2022) §2.1, App. A.1, A.3, A.5;
* :class:`InsufficientContext`, :class:`SourceLength` (:mod:`.context`), Lee et al. §2.2, App. A.2, A.4;
* :class:`DistractingInsertion` (:mod:`.distraction`), Xing & Gulla §3.3, §4.

Every random choice comes from the instance's :class:`InstanceRandom` (:mod:`.seeding`).
"""

from dialshift.shifts.base import InstanceRandom, Shift, ShiftPipeline, ShiftResult, shift_dataset
from dialshift.shifts.context import InsufficientContext, SourceLength
from dialshift.shifts.distraction import DistractingInsertion, DistractionPool
from dialshift.shifts.lexical import ImportantWord, KnownWord, TokenizedContext, UnknownWord

__all__ = [
    "DistractingInsertion",
    "DistractionPool",
    "ImportantWord",
    "InstanceRandom",
    "InsufficientContext",
    "KnownWord",
    "Shift",
    "ShiftPipeline",
    "ShiftResult",
    "SourceLength",
    "TokenizedContext",
    "UnknownWord",
    "shift_dataset",
]
