"""Summaries across seeds: how a quantity spreads over runs that differ only in their seed.

* :func:`spread`: ``{"mean", "sd", "min", "max", "n"}`` of a list of values (missing values, None, left out; ``sd``
  the sample standard deviation, ddof 1, and 0.0 for a single value).
* :func:`spreads`: the same for every leaf of per-seed nested dicts (e.g. ``{method: {split: {metric: value}}}``).
* :func:`format_spread` and :func:`mean_sd`: the table cell ``"mean ± sd"`` (the mean alone for one seed, ``–`` for
  none).

The trainers' summaries, ``dialshift bundle report`` and the reproduction reports' ``make_tables.py`` scripts all
summarise seeds with these, so every table states the same statistic.
"""

import numpy as np

#: The cell of a quantity no seed has.
MISSING = "–"


def spread(values) -> dict:
    """``{"mean", "sd", "min", "max", "n"}`` of the values that are not None (all None but ``n`` 0 when none is)."""
    values = np.asarray([v for v in values if v is not None], dtype=np.float64)
    if not len(values):
        return {"mean": None, "sd": None, "min": None, "max": None, "n": 0}
    return {"mean": float(values.mean()), "sd": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
            "min": float(values.min()), "max": float(values.max()), "n": int(len(values))}


def spreads(per_seed) -> dict:
    """Nested dicts of the shape of each of ``per_seed`` (one per seed), every leaf the :func:`spread` of that leaf
    over the seeds; keys in order of first appearance, a leaf a seed lacks counted as missing there."""
    per_seed = list(per_seed)
    summary = {}
    for key in dict.fromkeys(key for tree in per_seed for key in tree):
        values = [tree.get(key) for tree in per_seed]
        if any(isinstance(value, dict) for value in values):
            summary[key] = spreads(value for value in values if isinstance(value, dict))
        else:
            summary[key] = spread(values)
    return summary


def format_spread(stat: dict, digits: int = 3, scale: float = 1.0) -> str:
    """``"mean ± sd"`` of a :func:`spread` (times ``scale``, ``digits`` decimals); the mean alone when ``n`` is 1."""
    if stat["mean"] is None:
        return MISSING
    if stat["n"] > 1:
        return f"{scale * stat['mean']:.{digits}f} ± {scale * stat['sd']:.{digits}f}"
    return f"{scale * stat['mean']:.{digits}f}"


def mean_sd(values, digits: int = 1, scale: float = 1.0) -> str:
    """:func:`format_spread` of the values, each multiplied by ``scale`` first (e.g. 100 for points)."""
    return format_spread(spread(None if value is None else scale * value for value in values), digits)
