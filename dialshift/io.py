"""Small file helpers shared by the whole package.

* :func:`atomic_write`: write text or bytes to a file so that readers see either the old or the new content, never a
  half-written file (a temporary file in the same folder, then ``os.replace``).
* :func:`write_json_atomic`: the same for a JSON document (indented, sorted keys, trailing newline: stable diffs).
"""

import json
import os
from pathlib import Path


def atomic_write(path, data: str | bytes) -> Path:
    """Write ``data`` (``str`` as UTF-8, or ``bytes``) to ``path`` atomically, creating parent folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.parent / f".{path.name}.{os.getpid()}.tmp"  # same folder: the rename stays on one filesystem
    try:
        with open(temporary, "wb") as handle:  # plain open: the file gets the usual (umask) permissions
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def write_json_atomic(path, data) -> Path:
    """Write ``data`` as JSON (indent 2, sorted keys, trailing newline) to ``path`` atomically."""
    return atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
