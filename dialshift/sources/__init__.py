"""Readers for the raw corpora in the data directory (one module per corpus, registered on import).

``load_source(name, data_dir)`` returns ``{split: [record, ...]}``; ``sources()`` lists every registered corpus;
``recording_reads()`` collects the sources read inside a block.
"""

import importlib
import pkgutil
from contextlib import contextmanager

from dialshift.data_dir import resolve_data_dir
from dialshift.errors import DialshiftError
from dialshift.sources.base import SourceInfo, registered_sources

_LOADED = False
_RECORDERS: list[set] = []


def sources() -> dict[str, SourceInfo]:
    """Every registered corpus by name, importing the reader modules on first use."""
    global _LOADED
    if not _LOADED:
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if info.name not in ("base", "manifest"):
                importlib.import_module(f"{__name__}.{info.name}")
        _LOADED = True
    return dict(sorted(registered_sources().items()))


def load_source(name: str, data_dir=None) -> dict:
    known = sources()
    if name not in known:
        raise DialshiftError(f"unknown source {name!r}; known sources: {', '.join(known)}")
    for used in _RECORDERS:
        used.add(name)
    return known[name].load(resolve_data_dir(data_dir))


@contextmanager
def recording_reads():
    """Yield a set that collects the name of every source :func:`load_source` reads inside the ``with`` block (a
    build records which raw corpora its configs came from)."""
    used: set[str] = set()
    _RECORDERS.append(used)
    try:
        yield used
    finally:
        _RECORDERS.remove(used)
