"""Reading response-ranking configs (``context``, ``candidates``, ``label``) from a Hub dataset folder.

A Hub dataset folder is ``README.md`` (YAML front matter with ``configs: [{config_name, data_files: [{split, path}]}]``)
plus the parquet files it names — exactly what ``load_dataset(folder, config)`` reads. The evaluator reads the
parquet files straight from that map (same bytes, no ``datasets`` cache), keeping only the ranking columns.

A *slim* folder (:func:`write_slim_folder`, what ``dialshift bundle`` carries to a GPU machine) holds the same
instances in a fraction of the bytes: every distinct string once in ``strings.parquet``, and per config and split
``id``, ``context`` and ``candidates`` as indices into it plus ``label`` (zstd parquet); a training split keeps only
the gold response (``candidates = [gold]``, ``label = 0``): the trainer draws its negatives from the other
instances' gold responses, so that is all it reads. :func:`load_split` reads both kinds of folder into the same
columns.
"""

import json
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.hub.reading import data_files
from dialshift.scoring.gold import dataset_revision, subsample  # noqa: F401  (re-exported)

COLUMNS = ("id", "context", "candidates", "label")
SLIM_FILE = "dialshift_slim.json"
SLIM_FORMAT = "dialshift-slim-ranking/1"
STRINGS_FILE = "strings.parquet"


def is_slim(folder) -> bool:
    return (Path(folder) / SLIM_FILE).is_file()


def read_slim_manifest(folder) -> dict:
    path = Path(folder) / SLIM_FILE
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise DialshiftError(f"{path}: unreadable slim-folder manifest ({error}); rebuild the bundle") from error
    if manifest.get("format") != SLIM_FORMAT:
        raise DialshiftError(f"{path}: unknown format {manifest.get('format')!r} (expected {SLIM_FORMAT})")
    return manifest


def read_card_configs(folder) -> dict[str, dict[str, list[str]]]:
    """``{config: {split: [parquet paths]}}`` of a Hub dataset folder (its card) or of a slim folder."""
    if is_slim(folder):
        manifest = read_slim_manifest(folder)
        return {name: {split: [str(Path(folder) / entry["path"])] for split, entry in splits.items()}
                for name, splits in manifest["configs"].items()}
    return data_files(folder)


def write_slim_folder(dataset, out, configs: dict[str, list[str]], gold_only: tuple = ("train",),
                      compression_level: int = 19) -> dict:
    """Write the ``{config: [splits]}`` of the Hub folder ``dataset`` as a slim folder ``out``; return its manifest.

    Splits in ``gold_only`` keep only the gold response of each instance. Row order, ids, contexts, candidates and
    labels are otherwise those of the source files, so :func:`load_split` returns the same columns from both.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dialshift.io import write_json_atomic

    out = Path(out)
    source = data_files(dataset)
    strings: dict[str, int] = {}

    def intern(values) -> list[int]:
        return [strings.setdefault(text, len(strings)) for text in values]

    entries: dict[str, dict] = {}
    for name, splits in configs.items():
        for split in splits:
            columns = load_split(dataset, name, split, configs=source)
            candidates, labels = columns["candidates"], columns["label"]
            if split in gold_only:
                candidates = [[c[label]] for c, label in zip(candidates, labels, strict=True)]
                labels = [0] * len(labels)
            context_type = pa.list_(pa.int32())
            table = pa.table({"id": pa.array(columns["id"], pa.string()),
                              "context": pa.array([intern(c) for c in columns["context"]], context_type),
                              "candidates": pa.array([intern(c) for c in candidates], context_type),
                              "label": pa.array(labels, pa.int32())})
            path = Path(name) / f"{split}.parquet"
            (out / name).mkdir(parents=True, exist_ok=True)
            pq.write_table(table, out / path, compression="zstd", compression_level=compression_level)
            entries.setdefault(name, {})[split] = {"path": str(path), "rows": table.num_rows,
                                                   "gold_only": split in gold_only}
    pq.write_table(pa.table({"text": pa.array(list(strings), pa.string())}), out / STRINGS_FILE, compression="zstd",
                   compression_level=compression_level)
    manifest = {"format": SLIM_FORMAT, "source": str(Path(dataset).resolve()),
                "source_revision": dataset_revision(dataset), "strings": len(strings), "configs": entries,
                "note": "ids, contexts and candidates as indices into strings.parquet; gold_only splits keep only the "
                        "gold response (candidates = [gold], label = 0)"}
    write_json_atomic(out / SLIM_FILE, manifest)
    return manifest


_STRINGS: dict[str, list[str]] = {}


def _slim_strings(folder) -> list[str]:
    import pyarrow.parquet as pq

    key = str(Path(folder).resolve())
    if key not in _STRINGS:
        _STRINGS[key] = pq.read_table(Path(folder) / STRINGS_FILE).column("text").to_pylist()
    return _STRINGS[key]


def _load_slim(folder, config: str, split: str, max_instances, seed) -> dict[str, list]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    entry = read_slim_manifest(folder)["configs"].get(config, {}).get(split)
    if entry is None:
        raise DialshiftError(f"{folder}: the slim folder has no {config!r} {split!r} split; rebuild the bundle with it")
    table = pq.read_table(Path(folder) / entry["path"])
    order = subsample(table.column("id").to_pylist(), max_instances, seed)
    table = table.take(pa.array(order, type=pa.int64()))
    strings = np.asarray(_slim_strings(folder), dtype=object)
    columns = {"id": table.column("id").to_pylist(), "label": table.column("label").to_pylist()}
    for name in ("context", "candidates"):
        column = table.column(name).combine_chunks()
        offsets = np.concatenate([[0], np.cumsum(pc.list_value_length(column).to_numpy())])
        values = strings[column.flatten().to_numpy()].tolist()
        columns[name] = [values[a:b] for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    return {name: columns[name] for name in COLUMNS}


def read_columns(folder, config: str, split: str, columns, max_instances: int | None = None, seed: int = 0,
                 files: dict | None = None, hint: str = ""):
    """The ``columns`` of one config split of a Hub dataset folder as a ``pyarrow.Table``, optionally subsampled.

    Subsampling (:func:`dialshift.scoring.gold.subsample`) keeps the ``max_instances`` instances with the smallest
    stable hash of ``(seed, id)``, so the same ids are kept in every config that contains them, independently of row
    order; rows come back sorted by id. ``hint`` ends the error for a file without those columns.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = files if files is not None else data_files(folder)
    if config not in files:
        raise DialshiftError(f"{folder}: no config {config!r} (it has: {', '.join(sorted(files))})")
    if split not in files[config]:
        have = ", ".join(files[config])
        raise DialshiftError(f"{folder}: config {config!r} has no {split!r} split (it has: {have})")
    tables = []
    for path in files[config][split]:
        try:
            tables.append(pq.read_table(path, columns=list(columns)))
        except Exception as error:  # pyarrow raises several types for bad files and missing columns
            raise DialshiftError(f"{path}: cannot read the columns {', '.join(columns)} ({error}){hint}") from error
    table = pa.concat_tables(tables)
    return table.take(pa.array(subsample(table.column("id").to_pylist(), max_instances, seed), type=pa.int64()))


def load_split(folder, config: str, split: str = "test", max_instances: int | None = None, seed: int = 0,
               configs: dict | None = None) -> dict[str, list]:
    """Columns ``id, context, candidates, label`` of one config split, optionally subsampled (see
    :func:`read_columns`). ``folder`` may be a Hub dataset folder or a slim folder."""
    if is_slim(folder):
        return _load_slim(folder, config, split, max_instances, seed)
    table = read_columns(folder, config, split, COLUMNS, max_instances, seed, configs)
    return {name: table.column(name).to_pylist() for name in COLUMNS}
