"""Reading DailyDialog ranking configs from a Hub dataset folder.

A Hub dataset folder is ``README.md`` (YAML front matter with ``configs: [{config_name, data_files: [{split, path}]}]``)
plus the parquet files it names — exactly what ``load_dataset(folder, config)`` reads. The evaluator reads the
parquet files straight from that map (same bytes, no ``datasets`` cache), keeping only the ranking columns.
"""

import fnmatch
import hashlib
import re
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError

COLUMNS = ("id", "context", "candidates", "label")


def stable_key(seed: int, text: str) -> int:
    """A platform-independent 64-bit hash of ``(seed, text)`` (never Python's ``hash()``)."""
    return int.from_bytes(hashlib.blake2b(f"{seed}\x1f{text}".encode(), digest_size=8).digest(), "big")


def read_card_configs(folder) -> dict[str, dict[str, list[str]]]:
    """``{config_name: {split: [parquet paths]}}`` from the folder's README YAML."""
    from dialshift.hub import declared_configs

    folder = Path(folder)
    if not folder.is_dir():
        raise DialshiftError(f"{folder}: dataset folder does not exist (build one with `dialshift build`)")
    declared = declared_configs(folder)
    if not declared:
        raise DialshiftError(f"{folder / 'README.md'}: declares no configs (an empty dataset folder?)")
    result = {}
    for name, splits in declared.items():
        result[name] = {}
        for split, pattern in splits.items():
            patterns = pattern if isinstance(pattern, list) else [pattern]
            paths = [str(p) for pat in patterns for p in sorted(folder.glob(pat))]
            if not paths:
                raise DialshiftError(f"{folder}: config {name!r} split {split!r}: no file matches {pattern}")
            result[name][split] = paths
    return result


def resolve_configs(available, patterns) -> list[str]:
    """Expand shell-style ``patterns`` (``'uw_*'``, ``source``) against ``available`` names, in pattern order and
    natural order within a pattern; an unmatched pattern is an error naming what exists."""
    names: list[str] = []
    for pattern in patterns:
        matched = [name for name in available if fnmatch.fnmatchcase(name, pattern)]
        if not matched:
            shown = ", ".join(sorted(available)[:12]) + (" ..." if len(available) > 12 else "")
            raise DialshiftError(f"config pattern {pattern!r} matches no config of the dataset (it has: {shown})")
        names.extend(sorted((n for n in matched if n not in names), key=natural_key))
    return names


def natural_key(name: str):
    return [float(part) if part.replace(".", "", 1).isdigit() else part for part in re.split(r"(\d+(?:\.\d+)?)", name)]


def load_split(folder, config: str, split: str = "test", max_instances: int | None = None, seed: int = 0,
               configs: dict | None = None) -> dict[str, list]:
    """Columns ``id, context, candidates, label`` of one config split, optionally subsampled.

    Subsampling keeps the ``max_instances`` instances with the smallest :func:`stable_key` ``(seed, id)``, so the same
    ids are kept in every config that contains them, independently of row order. Rows come back sorted by id.
    """
    import pyarrow.parquet as pq

    configs = configs if configs is not None else read_card_configs(folder)
    if config not in configs:
        raise DialshiftError(f"{folder}: no config {config!r} (it has: {', '.join(sorted(configs))})")
    if split not in configs[config]:
        have = ", ".join(configs[config])
        raise DialshiftError(f"{folder}: config {config!r} has no {split!r} split (it has: {have})")
    import pyarrow as pa

    tables = []
    for path in configs[config][split]:
        try:
            tables.append(pq.read_table(path, columns=list(COLUMNS)))
        except Exception as error:  # pyarrow raises several types for bad files and missing columns
            raise DialshiftError(f"{path}: cannot read the ranking columns {COLUMNS} ({error})") from error
    table = pa.concat_tables(tables)
    ids = table.column("id").to_pylist()
    order = np.argsort(np.array([stable_key(seed, i) for i in ids], dtype=np.uint64), kind="stable")
    if max_instances is not None:
        order = order[:max_instances]
    order = sorted(order.tolist(), key=ids.__getitem__)
    table = table.take(pa.array(order, type=pa.int64()))  # only the kept rows become Python objects
    return {name: table.column(name).to_pylist() for name in COLUMNS}


def dataset_revision(folder) -> str:
    """The revision of the evaluated dataset: the Hub folder's fingerprint (sha256 over its parquet files)."""
    from dialshift.hub import folder_fingerprint

    return "sha256:" + folder_fingerprint(folder)[:16]
