"""Shared machinery of the raw-corpus readers: a registry, strict line reading and official-count checks.

Each reader module registers a :class:`SourceInfo`. ``load(data_dir)`` returns ``{split: [record, ...]}`` with
typed, frozen records carrying stable ids; it raises :class:`~dialshift.errors.SourceError` naming the file (and
line) when a file is missing or corrupt, and when a split's count differs from the official statistics.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dialshift.errors import SourceError


@dataclass(frozen=True)
class SourceInfo:
    """A raw corpus: where it lives under the data directory, how to read it and its official counts."""

    name: str
    path: str
    description: str
    license: str
    load: Callable[[Path], dict]
    expected: dict[str, int]
    unit: str = "records"
    count: Callable[[dict], dict[str, int]] | None = None
    notes: dict[str, str] = field(default_factory=dict)

    def counts(self, loaded: dict) -> dict[str, int]:
        """Records per split as the official statistics count them (``count`` overrides plain ``len``)."""
        if self.count is not None:
            return self.count(loaded)
        return {split: len(records) for split, records in loaded.items()}


_SOURCES: dict[str, SourceInfo] = {}


def register_source(info: SourceInfo) -> SourceInfo:
    _SOURCES[info.name] = info
    return info


def registered_sources() -> dict[str, SourceInfo]:
    return dict(_SOURCES)


def require_file(path: Path) -> Path:
    if not path.is_file():
        raise SourceError(path, "file not found; check --data-dir / DIALSHIFT_DATA_DIR (see ../shared/data/README.md)")
    return path


def read_lines(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` (1-based, newline stripped); undecodable bytes raise a SourceError at that line."""
    require_file(path)
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError as error:
                raise SourceError(path, f"not valid {encoding} ({error.reason})", line=number) from None
            yield number, text.rstrip("\r\n")


def check_count(path, what: str, actual: int, expected: int) -> None:
    """Raise when a split's count differs from the official statistics (a truncated or altered file)."""
    if actual != expected:
        raise SourceError(path, f"{what}: found {actual:,}, the official statistics say {expected:,}; "
                                "the file is truncated or altered, restore it from the source in SOURCE.md")
