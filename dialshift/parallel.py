"""The one parallelism mechanism of dialshift's builders: an ordered map over forked worker processes.

Workers are forked, so they share the parent's precomputed tables (vocabularies, synonym tables, source rows) without
pickling them; results come back in input order, so a parallel build is byte-identical to a serial one.
"""

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

_SHARED: dict = {}


@contextmanager
def shared(**objects):
    """Make ``objects`` visible to forked workers through :func:`get_shared` for the duration of the block."""
    _SHARED.update(objects)
    try:
        yield
    finally:
        for name in objects:
            _SHARED.pop(name, None)


def get_shared(name: str):
    """An object published by :func:`shared` in the parent (inside a worker or in serial runs alike)."""
    return _SHARED[name]


def fork_map(function: Callable, items: Iterable, num_proc: int = 1, initializer: Callable | None = None) -> Iterator:
    """``map(function, items)`` in input order, in ``num_proc`` forked processes when ``num_proc > 1``.

    ``function`` and ``initializer`` must be module-level functions (they are pickled by reference).
    """
    items = list(items)
    if num_proc <= 1 or len(items) <= 1:
        yield from map(function, items)
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(min(num_proc, len(items)), initializer=initializer) as pool:
        yield from pool.imap(function, items)
