"""The installed ``evaluate`` metric modules: the ``dialshift.metrics`` entry-point group.

Each entry point is named after its metric and points at the package (a folder) holding the evaluate module
``<name>/<name>.py`` with its card (``README.md``) and, to publish it as a Space, ``app.py`` and
``requirements.txt``. ``pyproject.toml`` advertises the modules shipped with dialshift (``metrics/``, installed as
``dialshift_metrics``); a third-party package adds its own the same way::

    [project.entry-points."dialshift.metrics"]
    my_metric = "my_package.my_metric"

:func:`metric_names` lists them without importing anything, :func:`metric_folder` finds one's folder without
running it (``evaluate.load(dialshift.metric_path(name))`` runs it).
"""

from importlib.metadata import entry_points
from pathlib import Path

from dialshift.errors import DialshiftError

METRIC_ENTRY_POINT_GROUP = "dialshift.metrics"


def _entries() -> dict:
    found = {}
    for entry in sorted(entry_points(group=METRIC_ENTRY_POINT_GROUP), key=lambda e: e.name):
        found.setdefault(entry.name, entry)
    return found


def metric_names() -> list[str]:
    """The names of the installed metric modules, sorted."""
    return sorted(_entries())


def metric_folder(name: str) -> Path:
    """The folder of the installed metric module ``name`` (holding ``<name>.py``); one line when it is not
    installed or its entry point does not name such a folder."""
    import importlib.util

    entries = _entries()
    if name not in entries:
        raise DialshiftError(f"no dialshift metric {name!r}; the metrics are {', '.join(entries) or 'none'}")
    entry = entries[name]
    try:
        spec = importlib.util.find_spec(entry.value)
    except (ImportError, ValueError) as error:
        spec, problem = None, f"not importable ({error})"
    else:
        problem = "no such package"
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise DialshiftError(f"metric plug-in {name!r} ({entry.value}): {problem if spec is None else 'not a package'}"
                             f"; its entry point must name the package (folder) that holds {name}.py")
    folder = Path(locations[0])
    if folder.name != name or not (folder / f"{name}.py").is_file():
        raise DialshiftError(f"metric plug-in {name!r} ({entry.value}): {folder} holds no {name}.py (evaluate loads "
                             "<folder>/<folder name>.py); name the entry point after the folder, or reinstall")
    return folder
