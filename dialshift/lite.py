"""The lite track: a small, fixed ``lite`` split of every config, so a CPU user can make a comparable submission.

Each config's ``lite`` split holds at most :data:`LITE_SIZE` rows of its ``test`` split, chosen by the seeded hash of
the instance id (:func:`dialshift.scoring.gold.stable_key`, the key ``--max-instances`` also uses): configs that hold
the same ids keep the same ones, so the paired shift differences of the lite split stay paired, and a config holding a
subset of another's ids (``sr_K``, ``ic_KofN`` of ``dailydialog``) keeps every lite id of the other that it holds. Where the config's
task has types or classes (:attr:`~dialshift.scoring.tasks.ScoringTask.strata`: the adversarial ``type`` of pairwise
selection, the intent ``label`` of open-world intents), each stratum gets its share of the rows by largest remainder
(at least one row each while the size allows), and the ids with the smallest hash within it.

Size: a lite DailyDialog submission scores every DailyDialog response-ranking config (38 with the optional
importance configs) x 128 instances x 10 candidates = 48,640 pairs at most, about 16 minutes at the ~50 pairs/s a
MiniLM ranker scores on the 2-core CPU (14 minutes for the 33 configs of a default build; measured: 902 CPU s on one
thread, ``benchmarks/results/baselines/summary.json``).

A config with a second test split named ``<prefix>_test`` (the covariate family's ``cov_test``, its covariate-shifted
test set) gets that split's lite counterpart ``<prefix>_lite`` (``cov_lite``) by the same rule (:func:`lite_name`), so a
lite evaluation of such a config reads ``lite`` and ``cov_lite`` as a full one reads ``test`` and ``cov_test``; the
out-of-scope rows the two test splits share keep the same lite ids in both (the smallest hashes of the stratum).
"""

from collections import Counter

import numpy as np

#: The split name and its size cap.
LITE_SPLIT = "lite"
LITE_SIZE = 128
#: The seed of the id hash (fixed: every build and every user gets the same lite ids).
LITE_SEED = 0
#: The split the lite rows are drawn from.
SOURCE_SPLIT = "test"


def lite_name(split: str) -> str | None:
    """The lite counterpart of a split: ``lite`` for ``test``, ``<prefix>_lite`` for ``<prefix>_test`` (``cov_test``
    -> ``cov_lite``), None for any other split."""
    if split == SOURCE_SPLIT:
        return LITE_SPLIT
    suffix = f"_{SOURCE_SPLIT}"
    return f"{split[: -len(suffix)]}_{LITE_SPLIT}" if split.endswith(suffix) and len(split) > len(suffix) else None


def second_splits(splits, split: str) -> list[str]:
    """A config's second test splits paired with ``split``: those named ``<prefix>_<split>`` (``cov_test`` for
    ``test``, ``cov_lite`` for ``lite``; the naming of :func:`lite_name`), sorted."""
    return sorted(name for name in splits if name.endswith(f"_{split}") and len(name) > len(split) + 1)


def _quotas(counts: dict, size: int) -> dict:
    """``{stratum: rows}`` summing to ``min(size, total)``: proportional shares by largest remainder, every stratum at
    least one row while ``size`` allows, never more than it holds. Ties are broken by stratum name."""
    total = sum(counts.values())
    if total <= size:
        return dict(counts)
    names = sorted(counts)
    quota = {name: min(counts[name], 1) for name in names} if size >= len(names) else dict.fromkeys(names, 0)
    left = size - sum(quota.values())
    shares = {name: counts[name] * size / total for name in names}
    while left > 0:
        # Largest unmet share first (a stratum's share minus what it has), then the name, among strata with rows left.
        open_ = [name for name in names if quota[name] < counts[name]]
        best = max(open_, key=lambda name: (shares[name] - quota[name], -names.index(name)))
        quota[best] += 1
        left -= 1
    return quota


def lite_positions(ids, strata=None, size: int = LITE_SIZE, seed: int = LITE_SEED) -> np.ndarray:
    """Row positions (ascending) of the lite rows of a split with instance ids ``ids`` and, optionally, one stratum
    value per row (``strata``); see the module docstring."""
    from dialshift.scoring.gold import stable_key

    ids = [str(i) for i in ids]
    keys = np.array([stable_key(seed, i) for i in ids], dtype=np.uint64)
    labels = ["" for _ in ids] if strata is None else [str(value) for value in strata]
    if len(labels) != len(ids):
        raise ValueError(f"{len(labels)} strata for {len(ids)} ids")
    quota = _quotas(Counter(labels), size)
    chosen = []
    for name, rows in quota.items():
        members = np.array([position for position, label in enumerate(labels) if label == name], dtype=np.int64)
        order = np.lexsort((np.array([ids[p] for p in members]), keys[members]))
        chosen.extend(members[order[:rows]].tolist())
    return np.array(sorted(chosen), dtype=np.int64)


def task_strata(task_name: str | None) -> tuple:
    """The columns a task's lite split is stratified by (none for an unknown task)."""
    from dialshift.scoring.tasks import installed_tasks

    task = installed_tasks().get(task_name) if task_name else None
    return tuple(getattr(task, "strata", ()))


def lite_split(dataset, task_name: str | None = None, size: int = LITE_SIZE, seed: int = LITE_SEED):
    """The lite rows of ``dataset`` (a ``datasets.Dataset`` with an ``id`` column), stratified by its task's strata
    columns that the dataset has."""
    columns = [column for column in task_strata(task_name) if column in dataset.column_names]
    strata = None
    if columns:
        values = [dataset[column] for column in columns]
        strata = ["\x1f".join(str(value) for value in row) for row in zip(*values, strict=True)]
    return dataset.select(lite_positions(dataset["id"], strata, size, seed).tolist())


def with_lite(splits, task_name: str | None = None):
    """``splits`` (a ``DatasetDict`` or dict) with the lite counterpart (:func:`lite_name`) of each test split added:
    ``lite`` from ``test``, ``cov_lite`` from ``cov_test``; a lite split already there is kept, and ``splits`` is
    returned unchanged when nothing is added."""
    added = {lite_name(split): split for split in splits if lite_name(split) and lite_name(split) not in splits}
    if not added:
        return splits
    out = type(splits)(splits)
    for lite, source in added.items():
        out[lite] = lite_split(splits[source], task_name)
    return out
