"""Fingerprints of a folder's parquet files (size and sha256), recorded in the card at build time, and the check of
a config's files against them."""

import hashlib
from pathlib import Path

from dialshift.hub.layout import parquet_name, rebuild_hint
from dialshift.io import files_digest, update_digest


def file_fingerprint(path) -> dict:
    """``{"size": bytes, "sha256": hex}`` of one file."""
    return {"size": Path(path).stat().st_size, "sha256": update_digest(hashlib.sha256(), path).hexdigest()}


def config_fingerprints(folder, name: str, splits) -> dict:
    """``{"<config>/<file>": file_fingerprint}`` for the parquet file of each split of config ``name``."""
    return {f"{name}/{parquet_name(split)}": file_fingerprint(Path(folder) / name / parquet_name(split))
            for split in splits}


def check_config_files(folder, name: str, splits, recorded: dict | None = None) -> list[str]:
    """Problems with config ``name``'s parquet files, one line each, naming the file and the fix: missing, not a
    readable parquet file (truncated, damaged), or different from the ``recorded`` fingerprint (size, sha256)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    problems = []
    for split in splits:
        relative = f"{name}/{parquet_name(split)}"
        path = folder / relative
        if not path.is_file():
            problems.append(f"{relative}: file is missing (the card declares config {name!r}); "
                            f"{rebuild_hint(folder, name)}")
            continue
        try:
            pq.read_metadata(path)
        except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ... for damaged files
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            problems.append(f"{relative}: not a readable parquet file, truncated or damaged ({reason}); "
                            f"{rebuild_hint(folder, name)}")
            continue
        expected = (recorded or {}).get(relative)
        if not expected:
            continue
        difference = fingerprint_difference(path, expected)
        if difference:
            problems.append(f"{relative}: differs from the fingerprint the card recorded at build time ({difference}): "
                            f"changed, or swapped with another config's file; {rebuild_hint(folder, name)}")
    return problems


def fingerprint_difference(path, expected: dict) -> str | None:
    """How the file ``path`` differs from its recorded fingerprint ``expected`` (``{"size", "sha256"}``), in a few
    words, or ``None`` when it matches."""
    actual = file_fingerprint(path)
    if actual == {"size": expected.get("size"), "sha256": expected.get("sha256")}:
        return None
    if actual["size"] != expected.get("size"):
        return f"{actual['size']:,} bytes, recorded {expected.get('size')}"
    return "same size, new sha256"


def folder_fingerprint(folder) -> str:
    """A sha256 over every parquet file of the folder (path and bytes): the dataset revision of a local build."""
    return files_digest(sorted(Path(folder).rglob("*.parquet")), root=folder)
