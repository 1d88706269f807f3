"""Shifts applied to a ``datasets.Dataset``: :func:`shift_dataset` (and the ``Dataset.map``-ready
:class:`ShiftPipeline` behind it).

Every output row gets the shifted ``context``, the change record (``replacements``, ``deleted_turns``,
``truncated_turns``, ``inserted_mask``) and a ``shift`` column saying how it was made (the shift's name, stream key,
parameters as JSON and seed; :meth:`~dialshift.shifts.base.Shift.describe`), as HELM's perturbation description.
Rows the shift does not apply to are left out and counted by reason (:class:`ShiftReport`); with
``keep_unchanged=True`` they stay, unchanged, with the reason in ``skip_reason``. Like HELM's ``DataAugmenter``,
``include_original=True`` keeps each original row before its shifted rows (``shift`` is null on it) and
``seeds_per_instance=N`` draws N shifted rows per instance with seeds ``seed .. seed + N - 1`` (their ids become
``<id>@<seed>``, so ids stay unique).

Speed: ``datasets`` fingerprints the map by the shift's :meth:`~dialshift.shifts.base.Shift.fingerprint` (name,
parameters and resource digests), never by pickling its resources (a WordNet synonym table), and with ``num_proc``
the workers are forked with the shift in memory (its synonym table filled once, before the fork) instead of
receiving a pickled copy each. A word shift's synonym table is filled before the map in any case, so a table with
a disk cache (:mod:`dialshift.shifts.table_cache`) is written once per call.
"""

import logging
from collections import Counter
from dataclasses import dataclass, field

from dialshift.errors import DialshiftError
from dialshift.shifts.base import InstanceRandom, Shift, ShiftResult, Skipped, check_context, digest

logger = logging.getLogger(__name__)

CHANGE_FIELDS = ("replacements", "deleted_turns", "truncated_turns", "inserted_mask")


def change_features() -> dict:
    """The ``datasets`` features of the change record a shifted row carries."""
    from datasets import List, Value

    return {"replacements": List({"turn": Value("int32"), "index": Value("int32"), "original": Value("string"),
                                  "replacement": Value("string")}),
            "deleted_turns": List(Value("string")),
            "truncated_turns": List(Value("string")),
            "inserted_mask": List(Value("int8"))}


def shift_feature():
    """The ``datasets`` feature of the ``shift`` column (:meth:`~dialshift.shifts.base.Shift.describe`)."""
    from datasets import Value

    return {"name": Value("string"), "key": Value("string"), "parameters": Value("string"), "seed": Value("int64")}


def split_turns(text: str, separator: str) -> list[str]:
    """A context stored as one string, cut at ``separator``; turns are stripped and empty ones dropped."""
    return [turn.strip() for turn in text.split(separator) if turn.strip()]


@dataclass
class ShiftPipeline:
    """Apply ``shift`` to the ``context`` column of ``datasets`` rows (a batched ``Dataset.map`` function; see the
    module docstring for the options). Every output row has ``skip_reason`` (null unless the shift did not apply)."""

    shift: Shift
    seed: int = 0
    id_column: str = "id"
    context_column: str = "context"
    turn_separator: str | None = None
    include_original: bool = False
    seeds_per_instance: int = 1
    _empty: dict = field(default_factory=lambda: ShiftResult(()).record(), init=False, repr=False)

    def seeds(self) -> list[int]:
        return [self.seed + k for k in range(self.seeds_per_instance)]

    def context_of(self, value, uid):
        if self.turn_separator is not None and isinstance(value, str):
            return split_turns(value, self.turn_separator)
        return check_context(value, uid)

    def __call__(self, batch: dict) -> dict:
        added = (*CHANGE_FIELDS, "shift", "skip_reason")  # replaced when the rows were shifted before
        names = [name for name in batch if name not in added]
        out = {name: [] for name in (*names, *added)}

        def emit(index, uid, context, record, description, reason):
            for name in names:
                out[name].append(batch[name][index])
            out[self.id_column][-1] = uid
            out[self.context_column][-1] = list(context)
            for name in CHANGE_FIELDS:
                out[name].append(record[name])
            out["shift"].append(description)
            out["skip_reason"].append(reason)

        descriptions = {seed: self.shift.describe(seed) for seed in self.seeds()}
        for index, (uid, value) in enumerate(zip(batch[self.id_column], batch[self.context_column], strict=True)):
            turns = check_context(self.context_of(value, uid), uid)
            if self.include_original:
                emit(index, str(uid) if self.seeds_per_instance > 1 else uid, turns, self._empty, None, None)
            for seed in self.seeds():
                result = self.shift.apply(turns, InstanceRandom(seed, str(uid)))
                row_id = f"{uid}@{seed}" if self.seeds_per_instance > 1 else uid
                description = descriptions[seed]
                if isinstance(result, Skipped):
                    emit(index, row_id, turns, self._empty, description, result.reason)
                else:
                    emit(index, row_id, result.context, result.record(), description, None)
        return out


@dataclass
class ShiftReport:
    """What :func:`shift_dataset` did: input rows, shifted rows, originals kept, and skips by reason."""

    shift: str
    rows: int
    shifted: int
    skipped: dict
    originals: int = 0
    kept_unchanged: bool = False

    def __str__(self) -> str:
        reasons = ", ".join(f"{reason} {count:,}" for reason, count in sorted(self.skipped.items()))
        what = "kept unchanged, flagged in skip_reason" if self.kept_unchanged else "left out"
        line = f"{self.shift}: {self.shifted:,} shifted rows from {self.rows:,} rows"
        if self.skipped:
            line += f"; {sum(self.skipped.values()):,} not shifted, {what} ({reasons})"
        return line + (f"; {self.originals:,} originals kept" if self.originals else "")


#: Pipelines of the running ``shift_dataset`` calls, by fingerprint: forked map workers find theirs here.
_PIPELINES: dict[str, ShiftPipeline] = {}


@dataclass(frozen=True)
class SharedPipeline:
    """A :class:`ShiftPipeline` by reference: pickles as its key, so forked workers use the parent's shift and its
    filled tables instead of unpickling a copy each."""

    key: str

    def __call__(self, batch: dict) -> dict:
        if self.key not in _PIPELINES:
            raise DialshiftError("shift_dataset with num_proc > 1 needs forked worker processes (Linux's default)")
        return _PIPELINES[self.key](batch)


def _output_features(dataset, pipeline: ShiftPipeline):
    from datasets import Features, List, Value

    features = dict(dataset.features)
    features[pipeline.context_column] = List(Value("string"))
    if pipeline.seeds_per_instance > 1:
        features[pipeline.id_column] = Value("string")
    return Features({**features, **change_features(), "shift": shift_feature(), "skip_reason": Value("string")})


def _whole(value) -> bool:
    import numbers

    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_arguments(dataset, shift, seed, seeds_per_instance, num_proc, batch_size) -> None:
    """One line for an argument of the wrong kind, before any work."""
    from datasets import Dataset

    from dialshift.arguments import MAX_SEED

    if not isinstance(dataset, Dataset):
        raise DialshiftError(f"shift_dataset takes a datasets.Dataset, got {type(dataset).__name__} (e.g. "
                             "Dataset.from_list(rows), or dataset_dict['test'])")
    if not isinstance(shift, Shift):
        raise DialshiftError(f"shift_dataset takes a dialshift Shift, got {type(shift).__name__} (e.g. "
                             "InsufficientContext(deleted=1))")
    if not _whole(seed) or not 0 <= seed <= MAX_SEED:
        raise DialshiftError(f"seed must be a whole number in 0..{MAX_SEED}, got {seed!r}")
    if not _whole(seeds_per_instance) or seeds_per_instance < 1:
        raise DialshiftError(f"seeds_per_instance must be at least 1, got {seeds_per_instance!r}")
    if num_proc is not None and (not _whole(num_proc) or num_proc < 1):
        raise DialshiftError(f"num_proc must be None or at least 1, got {num_proc!r}")
    if not _whole(batch_size) or batch_size < 1:
        raise DialshiftError(f"batch_size must be at least 1, got {batch_size!r}")


def _check_columns(dataset, id_column: str, context_column: str, turn_separator: str | None) -> None:
    from datasets import Value

    for column, argument in ((id_column, "id_column"), (context_column, "context_column")):
        if column not in dataset.column_names:
            held = ", ".join(dataset.column_names) or "no columns"
            raise DialshiftError(f"the dataset has no {column!r} column (it has {held}); pass {argument}=")
    if dataset.features[context_column] == Value("string") and turn_separator is None and len(dataset):
        raise DialshiftError(f"instance {dataset[0][id_column]!r}: the {context_column!r} column holds one string per "
                             "context, not a list of turns; pass turn_separator= (e.g. ' __eou__ ' or '\\n') to "
                             "split it into turns")


def shift_dataset(dataset, shift: Shift, seed: int = 0, *, id_column: str = "id", context_column: str = "context",
                  turn_separator: str | None = None, keep_unchanged: bool = False, include_original: bool = False,
                  seeds_per_instance: int = 1, num_proc: int | None = None, batch_size: int = 1000,
                  return_report: bool = False):
    """A ``datasets.Dataset`` of the dialogues of ``dataset`` shifted by ``shift`` (see the module docstring).

    Each row is seeded by ``(seed, the shift's stream keys, row id)``, so the result does not depend on batching or
    on ``num_proc``. A context given as one string is split at ``turn_separator`` (else refused). When rows are left
    out, one log line (logger ``dialshift.shifts.dataset``) counts them by reason; ``return_report=True`` returns
    ``(dataset, ShiftReport)``.
    """
    _check_arguments(dataset, shift, seed, seeds_per_instance, num_proc, batch_size)
    _check_columns(dataset, id_column, context_column, turn_separator)
    pipeline = ShiftPipeline(shift, seed, id_column, context_column, turn_separator, include_original,
                             seeds_per_instance)
    if len(dataset) == 0:  # datasets' map adds no column to an empty dataset: the empty result, typed
        from datasets import Dataset

        features = _output_features(dataset, pipeline)
        if not keep_unchanged:
            del features["skip_reason"]
        empty = Dataset.from_dict({name: [] for name in features}, features=features)
        report = ShiftReport(repr(shift), 0, 0, {}, 0, keep_unchanged)
        return (empty, report) if return_report else empty
    fingerprint = digest("shift_dataset", dataset._fingerprint, shift.fingerprint(), seed, id_column, context_column,
                         turn_separator, include_original, seeds_per_instance)
    function = pipeline
    # every lookup table filled once up front (and written to its disk cache, when it has one), before any fork
    shift.prepare((pipeline.context_of(value, uid)
                   for uid, value in zip(dataset[id_column], dataset[context_column], strict=True)), num_proc or 1)
    if num_proc is not None and num_proc > 1:
        _PIPELINES[fingerprint] = pipeline
        function = SharedPipeline(fingerprint)
    try:
        mapped = dataset.map(function, batched=True, batch_size=batch_size,
                             features=_output_features(dataset, pipeline), num_proc=num_proc,
                             new_fingerprint=fingerprint, desc=f"{shift!r}")
    finally:
        _PIPELINES.pop(fingerprint, None)
    report = _report(mapped, shift, len(dataset), keep_unchanged)
    if report.skipped and not keep_unchanged:
        logger.warning("%s", report)
        import pyarrow.compute as pc

        kept = pc.indices_nonzero(pc.is_null(mapped.data.column("skip_reason"))).to_pylist()
        mapped = mapped.select(kept, new_fingerprint=digest(fingerprint, "applied"))
    if not keep_unchanged:
        mapped = mapped.remove_columns("skip_reason", new_fingerprint=digest(fingerprint, "no skip_reason"))
    return (mapped, report) if return_report else mapped


def _report(mapped, shift: Shift, rows: int, keep_unchanged: bool) -> ShiftReport:
    reasons = Counter(reason for reason in mapped.data.column("skip_reason").to_pylist() if reason is not None)
    originals = mapped.data.column("shift").null_count
    shifted = len(mapped) - originals - sum(reasons.values())
    return ShiftReport(repr(shift), rows, shifted, dict(sorted(reasons.items())), originals, keep_unchanged)
