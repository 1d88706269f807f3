"""Checking a user's instances before anything is computed from them or written as a config.

:func:`invalid_rows` lists every row a scoring task could not score, with the first problem of each: an ``id`` that
is missing, null, not a string or whole number, or repeats an earlier row's; a ``context`` that is not a non-empty
list of non-empty strings (the turns, oldest first); then the task's own gold checks
(:meth:`dialshift.scoring.tasks.ScoringTask.check_instance`: a ``label`` within the candidates, ...).
:func:`check_instances` raises on the first (one line naming the row and the field) or, with ``skip=True``, returns
the rows to keep and the left-out rows counted by reason (``invalid_<field>``, ``duplicate_id``).
"""

from collections import Counter
from dataclasses import dataclass

from dialshift.errors import DialshiftError


@dataclass(frozen=True)
class InvalidRow:
    """A row that cannot be scored: its index (0-based), id, the field and the problem."""

    index: int
    id: object
    field: str
    problem: str

    @property
    def reason(self) -> str:
        """The reason code a skipped row is counted under."""
        return "duplicate_id" if self.problem.startswith("repeats") else f"invalid_{self.field}"

    def __str__(self) -> str:
        shown = f" (id {self.id!r})" if self.field != "id" and self.id is not None else ""
        return f"row {self.index + 1}{shown}: {self.field}: {self.problem}"


def _id_problem(value, seen: set) -> str | None:
    if value is None:
        return "missing or null; every row needs an id (scoring joins predictions by id)"
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return f"{value!r} is a {type(value).__name__}, not a string or whole number"
    if isinstance(value, str) and not value.strip():
        return "empty; every row needs an id (scoring joins predictions by id)"
    if value in seen:
        return "repeats an earlier row's id; ids must be unique"
    return None


def _context_problem(value) -> str | None:
    if not isinstance(value, list):
        kind = "missing or null" if value is None else f"a {type(value).__name__}"
        return f"{kind}, not a list of turns (strings, oldest first); a context stored as one string needs " \
               "--turn-separator"
    if not value:
        return "an empty list; a context has at least one turn"
    for number, turn in enumerate(value):
        if not isinstance(turn, str) or not turn.strip():
            return f"turn {number} is {turn!r}, not a non-empty string"
    return None


def invalid_rows(dataset, task: str | None, *, require_context: bool = True,
                 first_only: bool = False) -> list[InvalidRow]:
    """The rows of ``dataset`` (a ``datasets.Dataset``) that scoring task ``task`` could not score (see the module
    docstring; ``task`` None: the id and context only); ``require_context``: every row needs a ``context``;
    ``first_only``: stop at the first."""
    from dialshift.scoring.tasks import get_task

    checker = get_task(task) if task is not None else None
    names = dataset.column_names
    table = dataset.with_format("arrow")[:]  # the rows the dataset shows (a select()ed one holds more)
    columns = {name: table.column(name).to_pylist() for name in names}
    found, seen = [], set()
    for index in range(len(dataset)):
        row = {name: columns[name][index] for name in names}
        uid = row.get("id")
        problem = ("id", _id_problem(uid, seen))
        if problem[1] is None and (require_context or "context" in row):
            problem = ("context", _context_problem(row.get("context")))
        if problem[1] is None and checker is not None:
            problem = checker.check_instance(row) or (None, None)
        if isinstance(uid, (str, int)) and not isinstance(uid, bool):
            seen.add(uid)
        if problem[1] is not None:
            found.append(InvalidRow(index, uid if isinstance(uid, (str, int)) else None, *problem))
            if first_only:
                break
    return found


@dataclass(frozen=True)
class CheckedInstances:
    """What :func:`check_instances` kept: the dataset (invalid rows left out), and those rows by reason."""

    dataset: object
    invalid: dict
    first: InvalidRow | None = None

    def __str__(self) -> str:
        if not self.invalid:
            return f"all {len(self.dataset):,} rows valid"
        reasons = ", ".join(f"{reason} {count:,}" for reason, count in sorted(self.invalid.items()))
        return f"left out {sum(self.invalid.values()):,} invalid rows ({reasons}); the first: {self.first}"


def check_instances(dataset, task: str | None, *, where: str = "the input", skip: bool = False,
                    require_context: bool = True,
                    fix: str = "fix the row, or leave such rows out with --skip-invalid") -> CheckedInstances:
    """``dataset`` checked for ``task`` (:func:`invalid_rows`): an invalid row is one :class:`DialshiftError` line
    naming ``where``, the row and the field (and ``fix``), unless ``skip``, which leaves such rows out and counts
    them."""
    if len(dataset) == 0:
        raise DialshiftError(f"{where}: no rows; give at least one instance")
    found = invalid_rows(dataset, task, require_context=require_context, first_only=not skip)
    if found and not skip:
        raise DialshiftError(f"{where}: {found[0]}; {fix}")
    if not found:
        return CheckedInstances(dataset, {})
    bad = {row.index for row in found}
    kept = dataset.select([index for index in range(len(dataset)) if index not in bad])
    if len(kept) == 0:
        raise DialshiftError(f"{where}: every row is invalid ({found[0]}, ...); no instance is left to shift")
    return CheckedInstances(kept, dict(sorted(Counter(row.reason for row in found).items())), found[0])
