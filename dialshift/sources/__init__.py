"""Readers for the raw corpora in the data directory (one module per corpus, registered on import).

``load_source(name, data_dir)`` returns ``{split: [record, ...]}``; ``sources()`` lists every registered corpus.
"""

import importlib
import pkgutil

from dialshift.data_dir import resolve_data_dir
from dialshift.errors import DialshiftError
from dialshift.sources.base import SourceInfo, registered_sources

_LOADED = False


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
    return known[name].load(resolve_data_dir(data_dir))
