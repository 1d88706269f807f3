"""Writing a Hub dataset folder: parquet files per config split and the card, assembled beside the target and
swapped in atomically under the folder's lock; configs kept from the old folder are checked and copied, and files
the builder did not write are carried over."""

import json
import shutil
from contextlib import contextmanager
from pathlib import Path

from tqdm.auto import tqdm

from dialshift import __version__
from dialshift.errors import DialshiftError
from dialshift.hub.card import FamilyCard, render_card
from dialshift.hub.carry import carry_over
from dialshift.hub.fingerprints import check_config_files, config_fingerprints
from dialshift.hub.layout import (
    MARKER,
    MARKER_FORMAT,
    README,
    check_config_name,
    ensure_writable,
    output_path,
    parquet_name,
    rebuild_hint,
)
from dialshift.hub.locking import folder_lock
from dialshift.hub.ownership import check_output_folder, owned_files
from dialshift.hub.reading import card_infos, folder_metadata
from dialshift.io import atomic_write, swap_folder, temporary_sibling


def write_hub_folder(
    out_dir, configs: dict, cards: list[FamilyCard], *, keep=(), metadata: dict | None = None,
    pretty_name: str = "dialshift", progress: bool = True,
) -> Path:
    """Write ``{config_name: DatasetDict}`` and the card into ``out_dir`` atomically; return the folder path.

    ``keep`` names configs of the existing ``out_dir`` to carry over unchanged: their files are checked against the
    card's fingerprint and copied, their ``dataset_info`` reused, never re-read or re-written. ``metadata`` is
    ``{config: {...}}`` (typed config and build facts) stored under the card's ``dialshift`` key, with each config's
    file fingerprints added; a kept config keeps its entry unless ``metadata`` replaces it. Configs are written in
    sorted order so the README is independent of build order. Files in ``out_dir`` the builder did not write are
    carried over; a folder it did not build is refused (:func:`check_output_folder`). The whole write holds
    :func:`folder_lock`; callers that read the folder's state to decide ``keep`` should hold it around that too.
    """
    out_dir = output_path(out_dir)
    parent = out_dir.parent
    ensure_writable(parent)
    keep = sorted(set(keep) - set(configs))
    if not configs and not keep:
        raise DialshiftError("nothing to write: no config was built")
    for name in configs:
        check_config_name(name)
    with folder_lock(out_dir):
        check_output_folder(out_dir, rebuilding=set(configs))
        owned = (owned_files(out_dir) or set()) if out_dir.is_dir() else set()
        old_infos, old_meta = (card_infos(out_dir), folder_metadata(out_dir)) if keep else ({}, {})
        for name in keep:
            if name not in old_infos:
                raise DialshiftError(f"{out_dir / README}: no dataset_info for config {name!r} to keep; "
                                     f"{rebuild_hint(out_dir, name)}")
            problems = check_config_files(out_dir, name, sorted(old_infos[name].splits),
                                          old_meta.get(name, {}).get("files"))
            if problems:
                raise DialshiftError(f"cannot keep config {name!r}: {problems[0]}")
        tmp = temporary_sibling(out_dir)
        tmp.mkdir()
        try:
            infos = {}
            with quiet_datasets():
                for name in tqdm(sorted(configs), desc="writing parquet", unit="config", disable=not progress):
                    infos[name] = _write_config(tmp, name, configs[name])
            for name in keep:
                shutil.copytree(out_dir / name, tmp / name)
                infos[name] = old_infos[name]
            meta = {name: dict(entry) for name, entry in old_meta.items() if name in keep}
            meta.update({name: dict(entry) for name, entry in (metadata or {}).items() if name in infos})
            for name in infos:
                entry = meta.setdefault(name, {})
                if name in configs or "files" not in entry:
                    entry["files"] = config_fingerprints(tmp, name, sorted(infos[name].splits))
            atomic_write(tmp / README, render_card(infos, cards, pretty_name=pretty_name, folder=tmp, metadata=meta))
            written = sorted({README} | {path for entry in meta.values() for path in entry["files"]})
            atomic_write(tmp / MARKER, json.dumps({"tool": "dialshift", "format": MARKER_FORMAT,
                                                   "version": __version__, "files": written}, indent=2) + "\n")
            if out_dir.is_dir():
                carry_over(out_dir, tmp, owned | set(written))
            swap_folder(tmp, out_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return out_dir


def _write_config(folder: Path, name: str, splits) -> "datasets.DatasetInfo":  # noqa: F821
    """Write one config's parquet files; return its ``DatasetInfo`` (features, split sizes)."""
    from datasets.info import DatasetInfo
    from datasets.splits import SplitDict, SplitInfo

    split_dict = SplitDict()
    for split, dataset in sorted(splits.items()):
        target = folder / name / parquet_name(split)
        target.parent.mkdir(parents=True, exist_ok=True)
        dataset.to_parquet(str(target))
        split_dict.add(SplitInfo(name=split, num_bytes=_arrow_nbytes(target), num_examples=len(dataset)))
    first = splits[sorted(splits)[0]]
    return DatasetInfo(features=first.features, splits=split_dict, config_name=name)


@contextmanager
def quiet_datasets():
    """Silence the per-file progress bars of ``datasets`` while we show our own."""
    import datasets

    was_enabled = not datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if was_enabled:
            datasets.enable_progress_bars()


def _arrow_nbytes(path: Path) -> int:
    """In-memory Arrow size of a written parquet file: read back, so a rewrite of the same rows is byte-identical."""
    import pyarrow.parquet as pq

    return int(pq.read_table(path).nbytes)
