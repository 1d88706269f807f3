"""Shared machinery of the raw-corpus readers: a registry, strict line reading and official-count checks.

Each reader module registers a :class:`SourceInfo`. ``load(data_dir)`` returns ``{split: [record, ...]}`` with
typed, frozen records carrying stable ids; it raises :class:`~dialshift.errors.SourceError` naming the file (and
line) when a file is missing or corrupt, and when a split's count differs from the official statistics.

Reading and counting are two steps. A module writes a plain ``read(data_dir)`` that only parses (so tests can point
it at a few fixture lines) and registers it with :func:`register_reader`, whose ``load`` is ``read`` followed by
:meth:`SourceInfo.check_counts`. ``dialshift sources`` calls ``read`` and compares the counts itself, so it can show
the counts it found next to the error.

Strict readers for the file formats the corpora use: :func:`read_lines` (text), :func:`read_parallel`
(line-parallel files such as ``seq.in``/``label``), :func:`read_tsv`, :func:`read_csv`, :func:`read_json` and
:func:`read_jsonl`. Each names the file and line of the first problem.
"""

import csv
import json
from collections.abc import Callable, Iterator, Sequence
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
    read: Callable[[Path], dict] | None = None

    def counts(self, loaded: dict) -> dict[str, int]:
        """Records per split as the official statistics count them (``count`` overrides plain ``len``)."""
        if self.count is not None:
            return self.count(loaded)
        return {split: len(records) for split, records in loaded.items()}

    def count_mismatches(self, loaded: dict) -> list[tuple[str, int, int]]:
        """``(key, found, expected)`` for every official count that ``loaded`` does not reproduce."""
        found = self.counts(loaded)
        return [(key, found.get(key, 0), want) for key, want in self.expected.items() if found.get(key, 0) != want]

    def check_counts(self, loaded: dict, data_dir: Path) -> None:
        """Raise a :class:`SourceError` naming this corpus's path on the first count that differs from ``expected``."""
        for key, found, want in self.count_mismatches(loaded):
            what = f"{key} {self.unit}" if key in loaded else key
            check_count(Path(data_dir) / self.path, what, found, want)


_SOURCES: dict[str, SourceInfo] = {}


def register_source(info: SourceInfo) -> SourceInfo:
    _SOURCES[info.name] = info
    return info


def registered_sources() -> dict[str, SourceInfo]:
    return dict(_SOURCES)


def reader_source(*, read: Callable[[Path], dict], **fields) -> SourceInfo:
    """A corpus parsed by ``read(data_dir)`` whose ``load`` also checks the official counts, not registered (a
    corpus plug-in's entry point names one; see :mod:`dialshift.sources`).

    ``fields`` are the other :class:`SourceInfo` fields (``name``, ``path``, ``expected``, ...).
    """

    def load(data_dir: Path) -> dict:
        loaded = read(Path(data_dir))
        info.check_counts(loaded, data_dir)
        return loaded

    info = SourceInfo(load=load, read=read, **fields)
    return info


def register_reader(*, read: Callable[[Path], dict], **fields) -> SourceInfo:
    """Register a corpus parsed by ``read(data_dir)`` (:func:`reader_source`) among the shipped readers."""
    return register_source(reader_source(read=read, **fields))


def require_file(path: Path) -> Path:
    if not path.is_file():
        from dialshift.sources.manifest import download_hint

        raise SourceError(path, f"file not found; {download_hint(path)}")
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


def read_parallel(paths: Sequence[Path]) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Yield ``(line_number, (line_of_file_1, line_of_file_2, ...))`` over line-parallel files.

    When one file ends before the others the error names both files and the first line that is missing.
    """
    readers = [read_lines(path) for path in paths]
    number = 0
    while True:
        rows = [next(reader, None) for reader in readers]
        if all(row is None for row in rows):
            return
        number += 1
        if any(row is None for row in rows):
            short = paths[rows.index(None)]
            long = paths[next(i for i, row in enumerate(rows) if row is not None)]
            raise SourceError(short, f"ends before line {number} of {long}; line-parallel files must have the same "
                                     "number of lines (one was truncated or edited)", line=number)
        yield number, tuple(line for _, line in rows)


def split_fields(path: Path, number: int, line: str, fields: int) -> tuple[str, ...]:
    """Split one tab-separated line that must have exactly ``fields`` fields."""
    parts = tuple(line.split("\t"))
    if len(parts) != fields:
        raise SourceError(path, f"expected {fields} tab-separated fields, found {len(parts)}", line=number)
    return parts


def read_tsv(path: Path, fields: int) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Yield ``(line_number, fields)`` of a tab-separated file that must have exactly ``fields`` fields per line."""
    for number, line in read_lines(path):
        yield number, split_fields(path, number, line, fields)


def read_csv(path: Path, columns: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line_number, row)`` of a CSV file with a header of exactly ``columns`` (quoted newlines allowed).

    ``line_number`` is the physical line where the row starts.
    """
    lines = read_lines(path)
    reader = csv.reader((line + "\n" for _, line in lines), strict=True)
    try:
        header = next(reader, None)
        if header != list(columns):
            raise SourceError(path, f"expected the header {','.join(columns)}, found {header}", line=1)
        start = reader.line_num + 1
        for row in reader:
            if len(row) != len(columns):
                raise SourceError(path, f"expected {len(columns)} comma-separated fields, found {len(row)}", line=start)
            yield start, dict(zip(columns, row, strict=True))
            start = reader.line_num + 1
    except csv.Error as error:
        raise SourceError(path, f"malformed CSV ({error})", line=reader.line_num) from None


def read_json(path: Path):
    """Parse a JSON file; invalid bytes or syntax raise a SourceError at the offending line."""
    require_file(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise SourceError(path, f"not valid utf-8 ({error.reason})", line=line) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SourceError(path, f"invalid JSON ({error.msg}, column {error.colno})", line=error.lineno) from None
    except RecursionError:
        raise SourceError(path, "invalid JSON (nested too deeply)") from None


def read_jsonl(path: Path) -> Iterator[tuple[int, object]]:
    """Yield ``(line_number, value)`` for a JSON-lines file; empty or invalid lines raise at that line."""
    for number, line in read_lines(path):
        if not line.strip():
            raise SourceError(path, "empty line in a JSON-lines file", line=number)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise SourceError(path, f"invalid JSON ({error.msg}, column {error.colno})", line=number) from None
        except RecursionError:
            raise SourceError(path, "invalid JSON (nested too deeply)", line=number) from None
        yield number, value


def require_fields(path: Path, value, fields: dict[str, type], line: int | None = None, where: str = "") -> dict:
    """Check that ``value`` is an object with each field of the given type; return it."""
    prefix = f"{where}: " if where else ""
    if not isinstance(value, dict):
        raise SourceError(path, f"{prefix}expected a JSON object, found {type(value).__name__}", line=line)
    for name, kind in fields.items():
        if name not in value:
            raise SourceError(path, f"{prefix}missing field {name!r}", line=line)
        if not isinstance(value[name], kind) or (kind is int and isinstance(value[name], bool)):
            raise SourceError(path, f"{prefix}field {name!r} should be {kind.__name__}, found "
                                    f"{type(value[name]).__name__}", line=line)
    return value


def require_strings(path: Path, value, what: str, line: int | None = None, length: int | None = None) -> tuple:
    """Check that ``value`` is a list of strings (of ``length`` items when given); return it as a tuple."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SourceError(path, f"{what} should be a list of strings", line=line)
    if length is not None and len(value) != length:
        raise SourceError(path, f"{what} should have {length} items, found {len(value)}", line=line)
    return tuple(value)


@dataclass(frozen=True, kw_only=True)
class IntentExample:
    """One labelled utterance of an intent-classification corpus.

    ``label`` is the fine intent exactly as released (``alarm_query``, ``alarm/set_alarm``, ``oos``, ...);
    ``coarse_label`` the domain/scenario where the corpus defines one (else ``None``); ``is_ood`` marks
    out-of-scope / out-of-domain examples; ``original_label`` keeps the intent an example had before a corpus
    variant relabelled it as out-of-scope; ``source_id`` is the corpus's own id where it has one.
    """

    id: str
    text: str
    label: str
    coarse_label: str | None = None
    is_ood: bool = False
    original_label: str | None = None
    source_id: str | None = None


def label_count(*splits: str, key: str = "intents") -> Callable[[dict], dict[str, int]]:
    """A ``count`` function: records per split plus the number of distinct in-scope labels over ``splits``."""

    def count(loaded: dict) -> dict[str, int]:
        counts = {split: len(records) for split, records in loaded.items()}
        counts[key] = len({r.label for split in splits for r in loaded.get(split, ()) if not r.is_ood})
        return counts

    return count


def read_seq_label(folder: Path, prefix: str, split: str, *, ood_labels: frozenset[str] = frozenset(),
                   coarse: Callable[[str], str | None] | None = None, original: bool = False) -> list[IntentExample]:
    """Read a jianguoz/DNNC-format split folder: line-parallel ``seq.in`` (utterance) and ``label`` files.

    Record ids are ``{prefix}-{split}-{line index:05d}`` (0-based). Labels in ``ood_labels`` are marked ``is_ood``;
    ``coarse(label)`` gives the coarse label; ``original=True`` also reads the parallel ``label_original`` file into
    ``original_label``. Utterances are kept verbatim; labels are stripped of surrounding whitespace.
    """
    paths = [folder / "seq.in", folder / "label"] + ([folder / "label_original"] if original else [])
    records = []
    for number, (text, label, *rest) in read_parallel(paths):
        label = label.strip()
        if not label:
            raise SourceError(paths[1], "empty label", line=number)
        records.append(IntentExample(
            id=f"{prefix}-{split}-{number - 1:05d}", text=text, label=label,
            coarse_label=coarse(label) if coarse else None, is_ood=label in ood_labels,
            original_label=rest[0].strip() if rest else None))
    return records
