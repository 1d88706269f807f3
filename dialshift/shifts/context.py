"""Insufficient Context (IC) and its source-length control (SR) (Lee et al. 2022, §2.2, App. A.2, A.4).

IC takes instances whose context has (at least, see ``selection``) ``window`` = 6 turns, keeps the last 6 turns
and deletes the first ``k`` of them (``ic_{k}of6``): the turns closest to the response survive. SR keeps the
instances whose *real* context length is ``L`` turns, unchanged (``sr_{L}``).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from dialshift.errors import DialshiftError
from dialshift.shifts.base import InstanceRandom, Shift, ShiftResult, Skipped

IC_SELECTIONS = ("at_least", "exactly")


def ic_eligible(context_turns: int, window: int = 6, selection: str = "at_least") -> bool:
    """Whether an instance enters the IC configs: ``at_least`` window turns (the last ``window`` are used;
    the paper's 2,370 instances can only be counted this way) or ``exactly`` window turns."""
    if selection not in IC_SELECTIONS:
        raise DialshiftError(f"unknown IC selection {selection!r}; choose one of {', '.join(IC_SELECTIONS)}")
    return context_turns >= window if selection == "at_least" else context_turns == window


def delete_turns(context: Sequence[str], k: int, window: int = 6) -> tuple[list[str], list[str]]:
    """``(kept, deleted)``: the last ``window`` turns of ``context`` with their first ``k`` deleted (oldest first)."""
    if not 0 <= k < window:
        raise DialshiftError(f"IC deletes 0 .. {window - 1} of {window} turns, got {k}")
    if len(context) < window:
        raise DialshiftError(f"IC needs a context of at least {window} turns, got {len(context)}")
    last = list(context[-window:])
    return last[k:], last[:k]


def sr_eligible(context_turns: int, length: int) -> bool:
    """SR: the real context length is exactly ``length`` turns."""
    if length < 1:
        raise DialshiftError(f"SR context length must be at least 1, got {length}")
    return context_turns == length


@dataclass(frozen=True)
class InsufficientContextParams:
    deleted: int
    window: int = 6
    selection: str = "at_least"

    def __post_init__(self):
        if not 0 <= self.deleted < self.window:
            raise DialshiftError(f"IC deletes 0 .. {self.window - 1} of {self.window} turns, got {self.deleted}")
        if self.selection not in IC_SELECTIONS:
            raise DialshiftError(f"unknown IC selection {self.selection!r}; choose one of {', '.join(IC_SELECTIONS)}")


class InsufficientContext(Shift):
    """``ic_{deleted}of{window}``: keep the last ``window`` turns, delete the oldest ``deleted`` of them. Turns before
    the window are reported as ``truncated_turns``. Contexts shorter than the window (or, with ``selection="exactly"``,
    of another length) are left out."""

    name = "ic"
    Params = InsufficientContextParams

    @property
    def key(self) -> str:
        return f"ic_{self.params.deleted}of{self.params.window}"

    def transform(self, dialogue: tuple[str, ...], rng: InstanceRandom | None = None) -> ShiftResult | Skipped:
        params = self.params
        if not ic_eligible(len(dialogue), params.window, params.selection):
            if len(dialogue) < params.window:
                return Skipped("too_few_turns", f"{len(dialogue)} turns, the window is {params.window}")
            return Skipped("wrong_length", f"{len(dialogue)} turns, selection 'exactly' takes {params.window}")
        kept, deleted = delete_turns(dialogue, params.deleted, params.window)
        return ShiftResult(tuple(kept), deleted_turns=tuple(deleted),
                           truncated_turns=tuple(dialogue[: len(dialogue) - params.window]))


@dataclass(frozen=True)
class SourceLengthParams:
    turns: int

    def __post_init__(self):
        if self.turns < 1:
            raise DialshiftError(f"SR context length must be at least 1, got {self.turns}")


class SourceLength(Shift):
    """``sr_{turns}``: the control of IC, a filter: contexts whose real length is ``turns``, unchanged.

    This is the paper's *source-length selection* (Lee et al. App. A.4, called "sentence removal" in its tables):
    no turn is removed; deleting turns is :class:`InsufficientContext`."""

    name = "sr"
    Params = SourceLengthParams

    @property
    def key(self) -> str:
        return f"sr_{self.params.turns}"

    def transform(self, dialogue: tuple[str, ...], rng: InstanceRandom | None = None) -> ShiftResult | Skipped:
        if sr_eligible(len(dialogue), self.params.turns):
            return ShiftResult(dialogue)
        return Skipped("wrong_length", f"{len(dialogue)} turns, SR selects {self.params.turns}")
