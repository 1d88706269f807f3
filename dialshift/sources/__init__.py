"""Readers for the raw corpora in the data directory: one module per corpus shipped with dialshift (registered on
import), and corpus plug-ins.

``load_source(name, data_dir)`` returns ``{split: [record, ...]}``; ``sources()`` lists every corpus, shipped and
plug-in; ``recording_reads()`` collects the sources read inside a block.

A corpus plug-in is a :class:`~dialshift.sources.base.SourceInfo` (made with
:func:`~dialshift.sources.base.reader_source`: a ``read(data_dir)`` parser, the corpus's folder under the data
directory and its official counts) advertised in the ``dialshift.corpora`` entry-point group under its name, so a
family plug-in can ``load_source`` it and ``dialshift sources`` checks it::

    [project.entry-points."dialshift.corpora"]
    my_corpus = "my_package.corpus:SOURCE"
"""

import importlib
import pkgutil
from contextlib import contextmanager

from dialshift.data_dir import resolve_data_dir
from dialshift.errors import DialshiftError
from dialshift.sources.base import SourceInfo, register_source, registered_sources

CORPUS_ENTRY_POINT_GROUP = "dialshift.corpora"

_LOADED = False
_PLUGINS: set[str] = set()
_RECORDERS: list[set] = []


def _load_shipped() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name not in ("base", "manifest"):
            importlib.import_module(f"{__name__}.{info.name}")


def _load_plugins() -> None:
    """Register the corpora of the ``dialshift.corpora`` entry points (each a SourceInfo named after its entry)."""
    from importlib.metadata import entry_points

    shipped = registered_sources()
    for entry in sorted(entry_points(group=CORPUS_ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            info = entry.load()
        except Exception as error:  # a broken third-party plug-in is one line naming it
            raise DialshiftError(f"corpus plug-in {entry.name!r} ({entry.value}) failed to load: {error}") from error
        if not isinstance(info, SourceInfo) or info.name != entry.name:
            raise DialshiftError(f"corpus plug-in {entry.name!r} ({entry.value}) is not a SourceInfo named "
                                 f"{entry.name!r} (make one with dialshift.sources.base.reader_source)")
        if entry.name in shipped and shipped[entry.name] is not info:
            raise DialshiftError(f"corpus plug-in {entry.name!r} ({entry.value}) has the name of a corpus dialshift "
                                 "ships; rename it")
        register_source(info)
        _PLUGINS.add(info.name)


def sources() -> dict[str, SourceInfo]:
    """Every corpus by name: the shipped readers (imported on first use) and the corpus plug-ins."""
    global _LOADED
    if not _LOADED:
        _load_shipped()
        _load_plugins()
        _LOADED = True
    return dict(sorted(registered_sources().items()))


def plugin_sources() -> set[str]:
    """The names of the corpora registered by plug-ins (not shipped with dialshift)."""
    sources()
    return set(_PLUGINS)


def reset() -> None:
    """Forget the corpus plug-ins (tests that install one call this); the shipped readers stay registered."""
    global _LOADED
    from dialshift.sources.base import _SOURCES

    for name in _PLUGINS:
        _SOURCES.pop(name, None)
    _PLUGINS.clear()
    _LOADED = False


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
