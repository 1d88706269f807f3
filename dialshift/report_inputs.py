"""Reading the committed run files of a reproduction report (``docs/reproduction_*/runs/``) so that a table generator
fails in one line on a damaged file, and fingerprinting them so that its ``--check`` fails when any byte changes.
JSON and gzip files are read by :mod:`dialshift.run_files`; this module adds ``.npz`` archives, nested fields, the
``sha256.json`` of files that are not committed, and fingerprints of whole run folders.

A generator computes its tables from some of the files it reads and cross-checks others against them; the files it
cannot cross-check (command lines, checksums of files that are not committed) are covered by :func:`fingerprint`,
rendered into the report: the sha256 of every run file, so an altered file no longer matches the committed report.
"""

import hashlib
import zipfile
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.run_files import read_json

HEX_DIGEST = frozenset("0123456789abcdef")


class RunFileError(DialshiftError):
    """A committed run file is missing, unreadable or disagrees with another; the message names it and the fix."""

    def __init__(self, path, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path


def read_npz(path: Path, fix: str = "restore it from git or re-run collect.py") -> dict:
    """Every array of the ``.npz`` archive at ``path``, loaded (no pickles); a :class:`RunFileError` naming it when it
    is missing, truncated or not an archive."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise RunFileError(path, f"missing; {fix}") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile) as error:
        raise RunFileError(path, f"not a readable .npz archive (truncated or damaged: {error}); {fix}") from None


def field(value, keys: tuple, path: Path):
    """``value[k0][k1]...``; a :class:`RunFileError` naming ``path`` and the first missing key."""
    for index, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            where = "".join(f"[{k!r}]" for k in keys[:index + 1])
            raise RunFileError(path, f"has no {where}; restore it from git or re-run collect.py")
        value = value[key]
    return value


def check_digests(path: Path, expected_names, fix: str = "restore it from git or re-run collect.py") -> dict:
    """The ``{file: sha256}`` of a ``sha256.json`` at ``path``, which must list exactly ``expected_names`` (the
    prediction files of the run), each with a 64-digit lower-case hex digest."""
    digests = read_json(path)
    if not isinstance(digests, dict):
        raise RunFileError(path, f"must map each prediction file to its sha256; {fix}")
    missing, extra = sorted(set(expected_names) - set(digests)), sorted(set(digests) - set(expected_names))
    if missing or extra:
        raise RunFileError(path, f"lists {extra or 'no extra files'} beyond and lacks {missing or 'no files'} of the "
                                 f"run's prediction files; {fix}")
    for name, digest in digests.items():
        if not isinstance(digest, str) or len(digest) != 64 or not set(digest) <= HEX_DIGEST:
            raise RunFileError(path, f"{name}: {digest!r} is not a sha256 digest; {fix}")
    return digests


def fingerprint(files, root: Path) -> str:
    """The sha256 of the named files' relative paths (to ``root``) and bytes, in sorted order: one digest that changes
    when any of them changes, is added or is removed."""
    digest = hashlib.sha256()
    for path in sorted(Path(p) for p in files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def run_files(folder: Path) -> list[Path]:
    """Every file under ``folder`` (recursively, sorted), hidden files included."""
    return sorted(path for path in Path(folder).rglob("*") if path.is_file())


def fingerprint_table(groups: dict, root: Path, name: str = "benchmark") -> list[str]:
    """A markdown table: per group (``{label: folder}``) the number of run files and the first 16 hex digits of
    their :func:`fingerprint` (paths relative to ``root``)."""
    lines = [f"| {name} | run files | sha256 of the run files (first 16 hex digits) |", "|---|---:|---|"]
    for label, folders in groups.items():
        files = [path for folder in folders for path in run_files(folder)]
        lines.append(f"| {label} | {len(files)} | `{fingerprint(files, root)[:16]}` |")
    return lines
