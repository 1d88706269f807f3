"""The one JSON-lines reader of dialshift's outputs (predictions files), record by record or in Arrow chunks.

* :func:`iter_jsonl` yields ``(line number, dict)`` records with one-line errors naming the file and line (bad JSON,
  a line nested too deeply for Python's parser, a line that is not an object);
* :func:`read_jsonl_chunks` parses a large file in byte blocks with ``pyarrow.json`` against a schema (C++, no Python
  object per number), so memory is bounded by the block size whatever the file size; a block Arrow refuses is
  re-read line by line to name the first bad line;
* :func:`clip` shortens user-supplied text (an id, a value) before it is echoed in an error message.
"""

import io
import json
from collections.abc import Iterator
from pathlib import Path

from dialshift.errors import DialshiftError

#: Bytes of the file parsed at a time by :func:`read_jsonl_chunks` (the memory bound of reading).
BLOCK_BYTES = 32 << 20


def clip(value, limit: int = 80) -> str:
    """``str(value)`` cut to ``limit`` characters plus ``...`` (so a huge id never floods the terminal)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def _parse_line(path, number: int, line) -> dict:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise DialshiftError(f"{path}:{number}: not valid JSON ({error.msg}, column {error.colno})") from None
    except RecursionError:
        raise DialshiftError(f"{path}:{number}: JSON nested too deeply to read (expected one flat object per "
                             "line)") from None
    except UnicodeDecodeError as error:
        raise DialshiftError(f"{path}:{number}: not valid UTF-8 ({error.reason})") from None
    if not isinstance(record, dict):
        raise DialshiftError(f"{path}:{number}: expected a JSON object per line, got {type(record).__name__}")
    return record


def iter_jsonl(path) -> Iterator[tuple[int, dict]]:
    """``(line number, record)`` for every non-blank line of a JSONL file; an empty file is an error."""
    path = Path(path)
    if not path.is_file():
        raise DialshiftError(f"{path}: no such predictions file")
    found = False
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                found = True
                yield number, _parse_line(path, number, line)
    if not found:
        raise DialshiftError(f"{path}: no records in the file")


def read_jsonl(path) -> list[tuple[int, dict]]:
    """Every record of a (small) JSONL file, as ``(line number, dict)`` pairs."""
    return list(iter_jsonl(path))


#: The longest line :func:`read_jsonl_chunks` accepts when its block is smaller (tests read in tiny blocks).
MIN_LINE_BYTES = 1 << 20


def _blocks(path: Path, block_bytes: int) -> Iterator[tuple[int, bytes]]:
    """``(first line number, bytes)`` blocks of whole lines; a line longer than ``max(block_bytes,
    MIN_LINE_BYTES)`` is refused as soon as that much of it is read, so memory stays bounded by the block."""
    line = 1
    rest = b""
    longest = max(block_bytes, MIN_LINE_BYTES)
    with path.open("rb") as handle:
        while True:
            data = handle.read(block_bytes)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # one line longer than the block: keep reading, up to the longest line accepted
                if len(data) > longest:
                    raise DialshiftError(f"{path}:{line}: line longer than {longest:,} bytes (one prediction per "
                                         "line; is the file missing its line breaks?)")
                rest = data
                continue
            block, rest = data[:cut], data[cut:]
            yield line, block
            line += block.count(b"\n")
    if rest.strip():
        yield line, rest + b"\n"


def _explain(path: Path, first_line: int, block: bytes, schema, arrow_error: Exception):
    """Re-read a block Arrow refused line by line and raise the first problem with its line number."""
    import pyarrow as pa

    for offset, line in enumerate(block.split(b"\n")):
        if not line.strip():
            continue
        number = first_line + offset
        record = _parse_line(path, number, line)
        for field in schema:
            value = record.get(field.name)
            if value is None:
                continue
            if pa.types.is_string(field.type) and not isinstance(value, str):
                raise DialshiftError(f"{path}:{number}: field {field.name!r} must be a string, got {clip(value)}")
            if pa.types.is_list(field.type) and not isinstance(value, list):
                raise DialshiftError(f"{path}:{number}: field {field.name!r} must be a list, got {clip(value)}")
            if (pa.types.is_integer(field.type) or pa.types.is_floating(field.type)) and (
                    isinstance(value, (bool, str, list, dict))):
                raise DialshiftError(f"{path}:{number}: field {field.name!r} must be a number, got {clip(value)}")
    message = str(arrow_error).splitlines()[0] if str(arrow_error) else type(arrow_error).__name__
    last = first_line + block.count(b"\n")
    raise DialshiftError(f"{path}: lines {first_line}-{last}: {clip(message, 200)}")


class Chunk:
    """A block of a JSONL file parsed into ``table`` (one row per non-blank line); :meth:`line` maps a row back."""

    def __init__(self, path: Path, first_line: int, block: bytes, table):
        self.path, self.first_line, self.block, self.table = path, first_line, block, table

    def line(self, row: int) -> int:
        """The line number of the ``row``-th record of the chunk."""
        seen = -1
        for offset, line in enumerate(self.block.split(b"\n")):
            if line.strip():
                seen += 1
                if seen == row:
                    return self.first_line + offset
        raise IndexError(row)

    def where(self, row: int) -> str:
        return f"{self.path}:{self.line(row)}"


def read_jsonl_chunks(path, schema, block_bytes: int = BLOCK_BYTES) -> Iterator[Chunk]:
    """Yield a :class:`Chunk` per block of a JSONL file, its table holding the columns of ``schema``.

    Fields not in ``schema`` are ignored; a field missing from a line is null (the caller checks what it requires).
    Memory: about ``block_bytes`` of text plus its parsed columns at a time.
    """
    import pyarrow as pa
    import pyarrow.json as pa_json

    path = Path(path)
    if not path.is_file():
        raise DialshiftError(f"{path}: no such predictions file")
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    read_options = pa_json.ReadOptions(block_size=max(1 << 20, min(block_bytes, 1 << 30)), use_threads=True)
    empty = True
    for first_line, block in _blocks(path, block_bytes):
        if not block.strip():
            continue
        try:
            table = pa_json.read_json(io.BytesIO(block), read_options=read_options, parse_options=options)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
            _explain(path, first_line, block, schema, error)
            raise  # pragma: no cover - _explain always raises
        for field in schema:  # Arrow does not check UTF-8 while parsing: a bad byte would fail later, unexplained
            if pa.types.is_string(field.type):
                try:
                    table.column(field.name).validate(full=True)
                except pa.ArrowInvalid as error:
                    _explain(path, first_line, block, schema, error)
        if table.num_rows:
            empty = False
            yield Chunk(path, first_line, block, table.select(schema.names))
    if empty:
        raise DialshiftError(f"{path}: no records in the file")
