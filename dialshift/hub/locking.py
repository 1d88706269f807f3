"""The lock every writer of a folder holds, beside it: two builds into one folder wait for each other and merge."""

import sys
from contextlib import contextmanager
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.hub.layout import ensure_writable
from dialshift.io import remove_stale_temporaries, restore_interrupted_swap

#: Seconds a build waits for another build of the same folder before giving up.
LOCK_TIMEOUT = 3600.0


def lock_path(out_dir) -> Path:
    """The lock file every writer of ``out_dir`` holds: ``.<name>.lock`` beside it (not inside: the folder is
    swapped). It stays after the build (an empty file; deleting a lock file others may wait on is not safe) and may
    be deleted when no build runs."""
    out_dir = Path(out_dir)
    return out_dir.parent / f".{out_dir.name}.lock"


@contextmanager
def folder_lock(out_dir, timeout: float | None = None):
    """Hold the lock of ``out_dir`` (re-entrant within a thread). A second writer waits (saying so on stderr) up to
    ``timeout`` seconds (default :data:`LOCK_TIMEOUT`), then fails with one line. On first acquisition, a swap that
    was killed half-way is undone and stale temporary folders of ``out_dir`` are removed: holding the lock, no other
    writer can be using them."""
    from filelock import FileLock, Timeout

    out_dir = Path(out_dir)
    path = lock_path(out_dir)
    lock = FileLock(path, is_singleton=True)
    outermost = not lock.is_locked
    if outermost:
        ensure_writable(out_dir.parent)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            print(f"dialshift: {out_dir} is being written by another dialshift process; waiting for it (lock {path})",
                  file=sys.stderr)
            limit = LOCK_TIMEOUT if timeout is None else timeout
            try:
                lock.acquire(timeout=limit)
            except Timeout:
                raise DialshiftError(f"{out_dir}: another dialshift process held the lock {path} for {limit:g} s; "
                                     f"wait for it to finish and run again") from None
    else:
        lock.acquire()
    try:
        if outermost:
            restore_interrupted_swap(out_dir)
            remove_stale_temporaries(out_dir, locked=True)
        yield
    finally:
        lock.release()
