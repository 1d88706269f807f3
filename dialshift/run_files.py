"""Reading and checking the committed run files of a reproduction report (``docs/reproduction_*/``).

A report's table generator reads JSON files and gzip-compressed predictions; every read here gives a one-line
:class:`~dialshift.errors.DialshiftError` naming the file (missing, not JSON, a truncated or corrupt ``.gz``)
instead of a traceback. A run folder's ``sha256.json`` records the SHA-256 of every file the generator reads;
:func:`verify` compares them with what is there (a changed, missing or unlisted file is an error) and returns the
manifest's own digest, which the report renders, so changing a file *and* its recorded checksum still changes the
report and fails ``--check``.
"""

import gzip
import hashlib
import json
import zlib
from pathlib import Path

from dialshift.errors import DialshiftError

MANIFEST = "sha256.json"


def read_json(path: Path):
    """The parsed JSON of ``path``; a one-line error when it is missing or not JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DialshiftError(f"{path}: missing (a committed run file the report reads; restore it with git)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DialshiftError(f"{path}: not a readable JSON file ({error})") from None


def read_gzip_text(path: Path) -> str:
    """The text of a gzip-compressed file; a one-line error when it is missing, truncated or corrupt."""
    try:
        return gzip.decompress(Path(path).read_bytes()).decode("utf-8")
    except FileNotFoundError:
        raise DialshiftError(f"{path}: missing (a committed run file the report reads; restore it with git)") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise DialshiftError(f"{path}: truncated or corrupt gzip file ({error})") from None


def read_jsonl_gz(path: Path) -> list[dict]:
    """The rows of a gzip-compressed JSON-lines file; a one-line error naming the file and line on a bad row."""
    rows = []
    for number, line in enumerate(read_gzip_text(path).splitlines(), 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise DialshiftError(f"{path}: line {number} is not JSON ({error})") from None
    return rows


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_manifest(root: Path, paths) -> Path:
    """Write ``root/sha256.json``: ``{path relative to root: sha256}`` of ``paths`` (sorted, one line each)."""
    root = Path(root)
    listed = {Path(p).resolve().relative_to(root.resolve()).as_posix(): sha256(p) for p in paths}
    target = root / MANIFEST
    target.write_text(json.dumps(dict(sorted(listed.items())), indent=0) + "\n", encoding="utf-8")
    return target


def verify(root: Path, paths) -> str:
    """Compare the files ``paths`` under ``root`` (those the generator reads) with ``root/sha256.json``: an error
    naming the first file that is missing, changed, or read but not listed; else the manifest's own SHA-256 (first
    12 hex digits)."""
    root = Path(root)
    recorded = read_json(root / MANIFEST)
    if not isinstance(recorded, dict):
        raise DialshiftError(f"{root / MANIFEST}: expected {{path: sha256}}")
    for relative, digest in sorted(recorded.items()):
        path = root / relative
        if not path.is_file():
            raise DialshiftError(f"{path}: listed in {root / MANIFEST} but missing (restore it with git)")
        if sha256(path) != digest:
            raise DialshiftError(f"{path}: its SHA-256 differs from {root / MANIFEST}: the committed run file was "
                                 f"changed (restore it, or re-collect the run and rewrite the checksums)")
    for path in paths:
        relative = Path(path).resolve().relative_to(root.resolve()).as_posix()
        if relative not in recorded:
            raise DialshiftError(f"{path}: read by the report but not listed in {root / MANIFEST}")
    return sha256(root / MANIFEST)[:12]
