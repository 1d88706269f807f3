"""Names and paths inside a Hub dataset folder: the card, the build marker, one parquet file per config split, and
the checks on an output path and a config name every writer applies."""

import os
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.io import DATASET_MARKER

README = "README.md"
#: The card's YAML key holding dialshift's own metadata: ``{version, configs: {name: {config, facts, files}}}``.
METADATA_KEY = "dialshift"
#: The file that marks a folder as written by ``dialshift build``; it lists the files the builder owns there and, from
#: format 2, the sha256 of each as written (a listed file with another checksum is not the builder's). Its name is
#: :data:`dialshift.io.DATASET_MARKER`: every writer refuses an output folder inside a dataset folder.
MARKER = DATASET_MARKER
MARKER_FORMAT = 2


def parquet_name(split: str) -> str:
    """The file name of a config's split (the one-shard layout ``DatasetDict.push_to_hub`` writes)."""
    return f"{split}-00000-of-00001.parquet"


def rebuild_hint(folder, name: str) -> str:
    """The fix for a damaged or missing config: the command that rebuilds it."""
    return f"rebuild that config: dialshift build --config {name} --out {folder}"


def output_path(out_dir) -> Path:
    """The absolute path of an output folder (a symlinked folder is followed: the build writes where it points)."""
    path = Path(out_dir).expanduser().absolute()
    return path.resolve() if path.is_symlink() else path


def ensure_writable(parent: Path) -> None:
    """Create ``parent`` when missing; refuse, in one line, a folder that cannot be created or written."""
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DialshiftError(f"cannot create output directory {parent}: {error.strerror}") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DialshiftError(f"output directory {parent} is not writable; choose another --out or fix its permissions")


def check_config_name(name: str) -> None:
    """Refuse a config name that is not one plain folder name of the dataset folder."""
    if not name or "/" in name or "\\" in name or name.startswith(".") or name in (README, MARKER):
        raise DialshiftError(f"invalid config name {name!r}: use letters, digits, '_', '.' and '-'")
