"""The build marker: ``.dialshift-build.json`` lists the files ``dialshift build`` wrote in a folder, so a rebuild
knows which files it owns and which configs it must keep."""

import json
from pathlib import Path, PurePosixPath

from dialshift.hub.layout import MARKER


def read_marker(folder) -> dict | None:
    """The folder's build marker (``{"tool", "format", "version", "files"}``), or ``None`` when it has none."""
    path = Path(folder) / MARKER
    if not path.is_file():
        return None
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(marker, dict) or marker.get("tool") != "dialshift" or not isinstance(marker.get("files"), list):
        return None
    return marker


def marker_configs(folder) -> set[str]:
    """The configs whose files the folder's build marker lists (empty without a marker)."""
    marker = read_marker(folder)
    return {PurePosixPath(path).parts[0] for path in (marker or {}).get("files", ())
            if len(PurePosixPath(path).parts) > 1}


def rebuild_all_hint(folder, configs=()) -> str:
    """The command that rebuilds every config the folder's marker lists (and ``configs``): plain
    ``dialshift build --out DIR`` when that is every config, else one ``--config`` per config."""
    from dialshift.registry import all_configs

    names = sorted(marker_configs(folder) | set(configs))
    everything = {name for name, config in all_configs().items() if not config.optional}
    if not names or everything <= set(names):
        return f"dialshift build --out {folder}"
    return "dialshift build " + " ".join(f"--config {name}" for name in names) + f" --out {folder}"
