"""Gold answers of a built dataset folder, indexed for joining predictions by id.

A folder's ``README.md`` declares each config's data files per split (``configs: [{config_name, data_files}]``);
:func:`~dialshift.hub.reading.data_files` resolves them inside the folder and :func:`load_gold` reads the ``id``
column and the task's gold columns straight from the parquet files (the bytes ``load_dataset`` reads, no cache). Ids
are joined through 64-bit keys (``pandas.util.hash_array``: SipHash with a fixed key, the same on every platform),
kept sorted, so a join is a ``searchsorted`` and memory is 8 bytes per gold id plus the gold columns.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.hub.reading import data_files
from dialshift.scoring.jsonl import clip

#: Ids hashed per slice (bounds the Python strings alive at once).
HASH_SLICE = 1 << 20


def dataset_revision(folder) -> str:
    """The revision of a whole dataset folder: a sha256 over all its parquet files (it changes when any config is
    added or rebuilt; :func:`config_fingerprint` identifies one config's data)."""
    from dialshift.hub.fingerprints import folder_fingerprint

    return "sha256:" + folder_fingerprint(folder)[:16]


# ----------------------------------------------------------------------------------------------- fingerprints


def recorded_files(folder) -> dict:
    """``{config: {"<config>/<file>": {"size", "sha256"}}}`` the card recorded at build time ({} where none)."""
    from dialshift.hub.reading import folder_metadata

    return {name: entry.get("files") or {} for name, entry in folder_metadata(folder).items()
            if isinstance(entry, dict)}


def config_fingerprint(folder, config: str, recorded: dict | None = None) -> str:
    """The fingerprint of one config's data: a sha256 over its own files' paths (relative to the folder) and sha256s,
    as the card recorded them at build time (else hashed now). A byte-identical config has the same fingerprint in
    a one-config folder and in the full build, and a rebuild of another config leaves it unchanged."""
    import hashlib

    from dialshift.hub.fingerprints import file_fingerprint

    folder = Path(folder)
    files = (recorded if recorded is not None else recorded_files(folder)).get(config)
    if not files:
        paths = [Path(path) for paths in data_files(folder, [config])[config].values() for path in paths]
        files = {path.relative_to(folder).as_posix(): file_fingerprint(path) for path in paths}
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"{name}\0{files[name].get('sha256')}\n".encode())
    return "sha256:" + digest.hexdigest()[:16]


def hub_commit(folder) -> str | None:
    """The Hub commit of a dataset folder that is a ``huggingface_hub`` cache snapshot
    (``.../snapshots/<40 hex digits>``), else None: a local build has no Hub commit."""
    resolved = Path(folder).resolve()
    if resolved.parent.name == "snapshots" and re.fullmatch(r"[0-9a-f]{40}", resolved.name):
        return resolved.name
    return None


def config_fingerprints(folder, configs) -> dict[str, str]:
    """``{config: config_fingerprint}`` for ``configs`` (the ``dataset_revision`` of a scored document)."""
    recorded = recorded_files(folder)
    return {name: config_fingerprint(folder, name, recorded) for name in configs}


def check_config(folder, config: str, splits=None, *, recorded: dict | None = None, paths=None) -> None:
    """Refuse, in one line naming the config and the file, a config whose files differ from the fingerprints its
    card recorded at build time (changed, truncated, or swapped with another config's file). ``splits`` limits the
    check to those splits (default: every split); ``paths`` gives the files already resolved. A folder whose card
    recorded no fingerprints (built before they existed) is not checked."""
    from dialshift.hub.fingerprints import fingerprint_difference
    from dialshift.hub.layout import rebuild_hint

    folder = Path(folder)
    files = (recorded if recorded is not None else recorded_files(folder)).get(config)
    if not files:
        return
    if paths is None:
        resolved = data_files(folder, [config])[config]
        paths = [path for split, found in resolved.items() if splits is None or split in splits for path in found]
    for path in map(Path, paths):
        relative = path.relative_to(folder).as_posix() if path.is_relative_to(folder) else path.name
        expected = files.get(relative)
        if expected is None:
            raise DialshiftError(f"{folder}: config {config!r}: {relative} is not among the files its card recorded "
                                 f"at build time; {rebuild_hint(folder, config)}")
        difference = fingerprint_difference(path, expected)
        if difference:
            raise DialshiftError(f"{folder}: config {config!r}: {relative} differs from the fingerprint its card "
                                 f"recorded at build time ({difference}: changed, or swapped with another config's "
                                 f"file); {rebuild_hint(folder, config)}")


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
#: The parquet paths of a list column's elements under its name, as pyarrow writes them (``list.element`` since
#: pyarrow 13, ``list.item`` before).
LIST_ELEMENTS = ("list.element", "list.item")


def load_gold(folder, config: str, split: str, columns, *, files: dict | None = None, max_instances=None,
              sample_seed: int = 0, recorded: dict | None = None, ids: frozenset | None = None) -> Gold:
    """The ``id`` and ``columns`` of one config split (optionally only the ``ids`` it holds, then the
    :func:`subsample`), keyed for joins.

    A column named ``len(NAME)`` is the length of each row's list ``NAME`` (e.g. ``len(candidates)``, the candidate
    count predictions are checked against); it is optional: left out when the files have no ``NAME`` column.
    The files are checked against the fingerprints the card recorded (:func:`check_config`) before they are read;
    ``recorded`` passes the card's records when the caller has them.
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
    check_config(folder, config, recorded=recorded, paths=files[config][split])
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
            # a list read only for its lengths: its strings as dictionary indices where the file stored them so (the
            # same lengths without building every string; a path that matches no column is ignored)
            counted = set(lengths.values()) - set(plain)
            part = pq.read_table(path, columns=wanted, read_dictionary=[
                f"{source}.{inner}" for source in sorted(counted) for inner in LIST_ELEMENTS])
            for name, source in lengths.items():  # keep the lengths, not the lists
                part = part.append_column(name, pc.list_value_length(part.column(source)).cast(pa.int64()))
            tables.append(part.select(["id", *plain, *lengths]))
        except DialshiftError:
            raise
        except Exception as error:  # pyarrow raises several types for damaged files
            raise DialshiftError(f"{path}: cannot read parquet ({clip(str(error), 120)}); rebuild config "
                                 f"{config!r}") from None
    table = pa.concat_tables(tables)
    if ids is not None:
        table = table.filter(pc.is_in(table.column("id"), value_set=pa.array(sorted(ids), pa.string())))
        if not table.num_rows:
            raise DialshiftError(f"config {config!r} split {split!r} holds none of the {len(ids):,} ids given "
                                 "with --ids; list ids of this config")
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
