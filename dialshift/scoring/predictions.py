"""Writing predictions files: one config's predictions, one JSON line per instance, in its scoring task's fields.

Every producer of predictions (the ranker evaluation, the attention run, the trainers, the bundle report) writes through
:func:`write_predictions`, so a file holds exactly the fields its :class:`~dialshift.scoring.tasks.ScoringTask` reads
(``{"id", <field>: value, ...}``, fields in the order given) plus any ``extra`` fields the caller declares (kept for
readers, ignored by scoring). Values are converted by the field's type: list fields to lists of floats, integer fields
to ints, float fields to floats, each float rounded to ``digits[field]`` decimals when given. The file is written
atomically; a wrong field, a column of another length, a repeated id or a value outside ``bounds`` is refused with one
line before anything is written.
"""

from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError


def _converter(kind, digits: int | None):
    """The function that turns one value of ``field`` into its JSON value (``kind``: a pyarrow type, or None for an
    extra field: a list of floats for a sequence, else a float)."""
    import pyarrow as pa

    number = float if digits is None else (lambda x: round(float(x), digits))
    if kind is None:
        return lambda v: None if v is None else [number(x) for x in v] if np.ndim(v) else number(v)
    if pa.types.is_list(kind):
        return lambda v: None if v is None else [number(x) for x in v]
    if pa.types.is_integer(kind):
        return lambda v: None if v is None else int(v)
    return lambda v: None if v is None else number(v)


def write_predictions(path, task: str, ids, columns: dict, *, digits: dict | None = None,
                      bounds: dict | None = None, extra: tuple = ()) -> Path:
    """Write ``path`` (``<config>.jsonl``): line ``i`` is ``{"id": ids[i], field: columns[field][i], ...}``.

    ``task`` names the scoring task whose fields the columns must be (:func:`dialshift.scoring.tasks.get_task`);
    ``extra`` names further fields written as given. A column may be None (the field is null on every line).
    ``digits``: ``{field: decimals}`` to round floats to; ``bounds``: ``{field: (low, high)}``, each value must be in
    ``low <= value < high``. Returns the path.
    """
    import json

    from dialshift.io import atomic_write
    from dialshift.scoring.tasks import get_task

    path, ids, digits, bounds = Path(path), list(ids), digits or {}, bounds or {}
    fields = get_task(task).fields
    for name, column in columns.items():
        if name not in fields and name not in extra:
            raise DialshiftError(f"{path}: {name!r} is not a field of the {task} task (its fields: "
                                 f"{', '.join(fields)})")
        if column is not None and len(column) != len(ids):
            raise DialshiftError(f"{path}: {len(column)} values of {name!r} for {len(ids)} ids")
    if len(set(ids)) != len(ids):
        repeated = next(i for i, count in zip(*np.unique(ids, return_counts=True), strict=True) if count > 1)
        raise DialshiftError(f"{path}: the id {str(repeated)!r} occurs twice")
    for name, (low, high) in bounds.items():
        values = np.asarray(columns[name])
        outside = np.flatnonzero((values < low) | (values >= high))
        if len(outside):
            row = int(outside[0])
            raise DialshiftError(f"{path}: {name} {values[row]} of {ids[row]!r} is outside {low}..{high - 1}")
    convert = {name: _converter(fields.get(name), digits.get(name)) for name in columns}
    lines = []
    for row, instance_id in enumerate(ids):
        line = {"id": instance_id}
        for name, column in columns.items():
            line[name] = None if column is None else convert[name](column[row])
        lines.append(json.dumps(line) + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(path, "".join(lines))
