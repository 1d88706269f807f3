"""Progress for long loops: a tqdm bar, or with progress bars off (``--no-progress``, a log file) a one-line
heartbeat on stderr every :data:`HEARTBEAT_SECONDS`, so a run of many minutes never looks hung."""

import sys
import time

#: Seconds between two heartbeat lines when progress bars are off.
HEARTBEAT_SECONDS = 60.0


class Heartbeat:
    """The part of tqdm's interface the loops use (``update``, a context manager), printing at most one line per
    ``interval`` seconds: ``DESC: DONE/TOTAL UNITs (P%), M min S s elapsed``."""

    def __init__(self, total: int, desc: str, unit: str, interval: float | None = None, stream=None):
        self.total, self.desc, self.unit, self.done = total, desc, unit, 0
        self.interval = HEARTBEAT_SECONDS if interval is None else interval
        self.stream = stream
        self.start = self.last = time.monotonic()

    def update(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            elapsed = int(now - self.start)
            share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
            print(f"{self.desc}: {self.done:,}/{self.total:,} {self.unit}s{share}, {elapsed // 60} min "
                  f"{elapsed % 60} s elapsed", file=self.stream or sys.stderr, flush=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        return None


def progress_bar(total: int, desc: str, unit: str, progress: bool):
    """A tqdm bar when ``progress``, else a :class:`Heartbeat`."""
    if progress:
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit)
    return Heartbeat(total, desc, unit)
