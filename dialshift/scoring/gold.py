"""Gold answers of a built dataset folder, indexed for joining predictions by id.

A folder's ``README.md`` declares each config's data files per split (``configs: [{config_name, data_files}]``);
:func:`data_files` resolves them inside the folder and :func:`load_gold` reads the ``id`` column and the task's gold
columns straight from the parquet files (the bytes ``load_dataset`` reads, no cache). Ids are joined through 64-bit
keys (``pandas.util.hash_array``: SipHash with a fixed key, the same on every platform), kept sorted, so a join is a
``searchsorted`` and memory is 8 bytes per gold id plus the gold columns.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.scoring.jsonl import clip

#: Ids hashed per slice (bounds the Python strings alive at once).
HASH_SLICE = 1 << 20


def data_files(folder) -> dict[str, dict[str, list[str]]]:
    """``{config: {split: [parquet paths]}}`` from the folder's README YAML (paths inside the folder only)."""
    from dialshift.hub import declared_configs

    folder = Path(folder)
    if not folder.is_dir():
        raise DialshiftError(f"{folder}: dataset folder does not exist (build one with `dialshift build`)")
    declared = declared_configs(folder)
    if not declared:
        raise DialshiftError(f"{folder / 'README.md'}: declares no configs (an empty dataset folder?)")
    root = folder.resolve()
    result = {}
    for name, splits in declared.items():
        result[name] = {}
        for split, pattern in splits.items():
            patterns = pattern if isinstance(pattern, list) else [pattern]
            for item in patterns:
                if Path(item).is_absolute() or ".." in Path(item).parts:
                    raise DialshiftError(f"{folder / 'README.md'}: config {name!r} split {split!r} names {item!r}, "
                                         "outside the folder; a dataset folder only reads inside itself")
            paths = [str(p) for pat in patterns for p in sorted(folder.glob(pat)) if p.resolve().is_relative_to(root)]
            if not paths:
                raise DialshiftError(f"{folder}: config {name!r} split {split!r}: no file matches {pattern} "
                                     f"(rebuild that config with `dialshift build --config {name}`)")
            result[name][split] = paths
    return result


def dataset_revision(folder) -> str:
    """The revision of a dataset folder: its fingerprint (sha256 over its parquet files)."""
    from dialshift.hub import folder_fingerprint

    return "sha256:" + folder_fingerprint(folder)[:16]


def id_keys(ids) -> np.ndarray:
    """64-bit keys of string ids (a pyarrow array or a list), hashed a slice at a time."""
    import pandas as pd

    parts = []
    for start in range(0, len(ids), HASH_SLICE):
        piece = ids[start : start + HASH_SLICE]
        values = piece.to_numpy(zero_copy_only=False) if hasattr(piece, "to_numpy") else np.asarray(piece, object)
        parts.append(pd.util.hash_array(values.astype(object), categorize=False))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


def stable_key(seed: int, text: str) -> int:
    """A platform-independent 64-bit hash of ``(seed, text)``: the subsampling key of :func:`subsample`."""
    from dialshift.shifts.seeding import stable_hash

    return stable_hash(f"{seed}\x1f{text}")


def subsample(ids: list[str], max_instances: int | None, seed: int) -> np.ndarray:
    """Row positions of the ``max_instances`` ids with the smallest :func:`stable_key` ``(seed, id)``, in id order.

    The same ids are kept in every config that contains them, whatever the row order.
    """
    order = np.argsort(np.array([stable_key(seed, i) for i in ids], dtype=np.uint64), kind="stable")
    if max_instances is not None:
        order = order[:max_instances]
    return np.asarray(sorted(order.tolist(), key=ids.__getitem__), dtype=np.int64)


@dataclass
class Gold:
    """One config split's gold rows, sorted by id key: ``keys`` (uint64), ``ids`` and ``columns`` (pyarrow arrays;
    string columns dictionary-encoded over the whole split)."""

    config: str
    split: str
    keys: np.ndarray
    ids: object
    columns: dict

    def __len__(self) -> int:
        return len(self.keys)

    def describe(self) -> str:
        return f"config {self.config!r} split {self.split!r}"


LENGTH = re.compile(r"len\((\w+)\)")


def load_gold(folder, config: str, split: str, columns, *, files: dict | None = None, max_instances=None,
              sample_seed: int = 0) -> Gold:
    """The ``id`` and ``columns`` of one config split (optionally the :func:`subsample`), keyed for joins.

    A column named ``len(NAME)`` is the length of each row's list ``NAME`` (e.g. ``len(candidates)``, the candidate
    count predictions are checked against); it is optional: left out when the files have no ``NAME`` column.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    files = files if files is not None else data_files(folder)
    if config not in files:
        raise DialshiftError(f"{folder}: no config {config!r} (it has: {', '.join(sorted(files))})")
    if split not in files[config]:
        raise DialshiftError(f"{folder}: config {config!r} has no {split!r} split (it has: "
                             f"{', '.join(files[config])})")
    lengths = {name: LENGTH.fullmatch(name)[1] for name in columns if LENGTH.fullmatch(name)}
    plain = [name for name in columns if name not in lengths]
    tables = []
    for path in files[config][split]:
        try:
            names = pq.read_schema(path).names
            lengths = {name: source for name, source in lengths.items() if source in names}
            wanted = ["id", *plain, *sorted(set(lengths.values()) - set(plain))]
            missing = [name for name in wanted if name not in names]
            if missing:
                raise DialshiftError(f"{path}: no gold column {missing[0]!r} (columns: {', '.join(names)}); is "
                                     f"config {config!r} built for this task?")
            part = pq.read_table(path, columns=wanted)
            for name, source in lengths.items():  # keep the lengths, not the lists
                part = part.append_column(name, pc.list_value_length(part.column(source)).cast(pa.int64()))
            tables.append(part.select(["id", *plain, *lengths]))
        except DialshiftError:
            raise
        except Exception as error:  # pyarrow raises several types for damaged files
            raise DialshiftError(f"{path}: cannot read parquet ({clip(str(error), 120)}); rebuild config "
                                 f"{config!r}") from None
    table = pa.concat_tables(tables)
    if max_instances is not None:
        table = table.take(pa.array(subsample(table.column("id").to_pylist(), max_instances, sample_seed)))
    ids = table.column("id").combine_chunks()
    keys = id_keys(ids)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    repeated = np.flatnonzero(keys[1:] == keys[:-1])
    if len(repeated):
        raise DialshiftError(f"{folder}: config {config!r} split {split!r} has the id "
                             f"{clip(ids[int(order[repeated[0]])].as_py())!r} twice")
    take = pa.array(order)
    gold_columns = {}
    for name in [*plain, *(name for name in lengths if all(name in t.column_names for t in tables))]:
        column = table.column(name).combine_chunks()
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            column = pc.dictionary_encode(column)
        gold_columns[name] = column.take(take)
    return Gold(config, split, keys, ids.take(take), gold_columns)
