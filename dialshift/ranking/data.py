"""Reading response-ranking configs (``context``, ``candidates``, ``label``) from a Hub dataset folder.

A Hub dataset folder is ``README.md`` (YAML front matter with ``configs: [{config_name, data_files: [{split, path}]}]``)
plus the parquet files it names — exactly what ``load_dataset(folder, config)`` reads. The evaluator reads the
parquet files straight from that map (same bytes, no ``datasets`` cache), keeping only the ranking columns.
"""

from dialshift.errors import DialshiftError
from dialshift.scoring.gold import data_files, dataset_revision, subsample  # noqa: F401  (re-exported)

COLUMNS = ("id", "context", "candidates", "label")


#: The data files of a dataset folder (kept under this name for the trainers).
read_card_configs = data_files


def load_split(folder, config: str, split: str = "test", max_instances: int | None = None, seed: int = 0,
               configs: dict | None = None) -> dict[str, list]:
    """Columns ``id, context, candidates, label`` of one config split, optionally subsampled.

    Subsampling (:func:`dialshift.scoring.gold.subsample`) keeps the ``max_instances`` instances with the smallest
    stable hash of ``(seed, id)``, so the same ids are kept in every config that contains them, independently of row
    order. Rows come back sorted by id.
    """
    import pyarrow.parquet as pq

    configs = configs if configs is not None else data_files(folder)
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
    order = subsample(table.column("id").to_pylist(), max_instances, seed)
    table = table.take(pa.array(order, type=pa.int64()))  # only the kept rows become Python objects
    return {name: table.column(name).to_pylist() for name in COLUMNS}
