"""A dataset folder reduced to some of its configs: what the Han and Xing bundles carry as ``data/``."""

import shutil
from pathlib import Path

from dialshift.errors import DialshiftError


def copy_configs(dataset, out: Path, names) -> dict:
    """Copy the data files of the configs ``names`` of the built folder ``dataset`` into ``out`` with a card that
    declares only them (so the trainers read ``out`` as the dataset folder); return ``{config: {split: rows}}``."""
    import pyarrow.parquet as pq

    from dialshift.hub.layout import README
    from dialshift.hub.reading import data_files, read_card

    names = list(names)
    card = read_card(dataset)
    declared = {entry["config_name"] for entry in card.data.configs or []}
    missing = [name for name in names if name not in declared]
    if missing:
        raise DialshiftError(f"{dataset}: no config {', '.join(map(repr, missing))}; build it first")
    files = data_files(dataset, names)
    rows = {}
    for name, splits in files.items():
        rows[name] = {}
        for split, paths in splits.items():
            rows[name][split] = 0
            for path in map(Path, paths):
                target = out / path.relative_to(Path(dataset))
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                rows[name][split] += pq.ParquetFile(path).metadata.num_rows
    card.data.configs = [entry for entry in card.data.configs if entry["config_name"] in names]
    card.data.dataset_info = [entry for entry in card.data.dataset_info or [] if entry.get("config_name") in names]
    block = card.data.get("dialshift") or {}
    block["configs"] = {name: entry for name, entry in (block.get("configs") or {}).items() if name in names}
    card.save(str(out / README))
    return rows
