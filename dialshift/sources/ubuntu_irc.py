"""Ubuntu IRC conversations (Kummerfeld et al., ACL 2019): ``#ubuntu`` logs with manual reply-to links.

Files under ``ubuntu_irc/`` (see its ``README.md``):
- ``{train,dev,test}/LOG.raw.txt``: the log as downloaded, one IRC line per message, numbered from 0. Lines are
  ``[HH:MM] <nick> text``, actions ``[HH:MM]  * nick text``, notices ``[HH:MM] -nick:#channel- text``, relayed
  messages ``[HH:MM] (nick/#channel) text`` and system lines ``=== ...`` (joins, quits, nick changes).
- ``{split}/LOG.annotation.txt``: ``A B -`` links message ``B`` to the earlier message ``A`` it responds to
  (``A == B`` marks the start of a conversation); only messages from 1,000 on are annotated.
- ``gold.{train,dev,test}.clusters.txt``: one gold conversation per line, ``KEY:id id ...`` where ``KEY`` is the log
  name up to its first ``.`` (``2004-12-25`` for ``2004-12-25.train-c``).

Splits ``train``, ``validation`` (``dev``) and ``test``. Each :class:`Conversation` is one gold cluster; its
:class:`Message` tuple is in log order with **system lines dropped** (joins/quits are annotated but carry no
dialogue). ``reply_to`` holds the earlier messages of the same conversation a message is linked to: links to
dropped system lines and to messages before 1,000 (unannotated context, never part of a gold cluster; 826 such links)
are left out, so every ``reply_to`` id is a message of the conversation.
``addressee`` follows the usual IRC convention of addressing by name prefix: a message that starts with ``name:`` or
``name,`` where ``name`` is (case-insensitively) a nick seen in that log is addressed to that nick (spelled as the
nick first appears in the log); otherwise it is ``None``. Conversations are ordered by log file name and first
message id; ids are ``ubuntu-irc-{split}-{log key}-{first message id:04d}``.

Counting rule (reproduces the 4,284 / 175 / 293 of the data README exactly): a conversation is a gold cluster with
at least :data:`MIN_MESSAGES` = 3 annotated messages, counting system lines as the cluster files list them. After
dropping system lines 7 train and 1 test conversation keep fewer than 3 messages (4,277 / 175 / 292 have >= 3);
they are kept so the official count holds. ``read_conversations(data_dir, min_messages=1)`` gives every cluster
with at least one non-system message.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import read_lines, register_reader
from dialshift.sources.manifest import download_hint

FOLDER = "ubuntu_irc"
SPLITS = {"train": "train", "validation": "dev", "test": "test"}
MIN_MESSAGES = 3
SYSTEM_PREFIX = "==="
#: ``[HH:MM]`` then one of: ``<nick> text`` (message), `` * nick text`` (action), ``-nick:#channel- text``
#: (notice), ``(nick/#channel) text`` (relayed message).
LINE = re.compile(r"\[(?P<time>\d\d:\d\d)\] (?:<(?P<message>[^>]+)>|\s*\* (?P<action>\S+)|-(?P<notice>[^:\s]+):#\S*?-"
                  r"|\((?P<relay>[^/\s]+)/#\S*\)) ?(?P<text>.*)")
KINDS = ("message", "action", "notice", "relay")
ADDRESS = re.compile(r"\s*([^\s:,]+)\s*[:,]")


@dataclass(frozen=True)
class Message:
    """One IRC message: ``id`` is its 0-based line number in the raw log (the annotation's numbering)."""

    id: int
    time: str
    speaker: str
    addressee: str | None
    text: str
    reply_to: tuple[int, ...]
    kind: str = "message"


@dataclass(frozen=True)
class Conversation:
    """A gold conversation of one log: its messages in log order, system lines dropped."""

    id: str
    log: str
    date: str
    annotated_messages: int
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class _Line:
    kind: str
    time: str
    speaker: str
    text: str


def parse_log(path: Path) -> tuple[list[_Line | None], dict[str, str]]:
    """Every line of a raw log (a parsed message, or ``None`` for a system line) and the log's nicks.

    Nicks map lower-case -> first spelling, from speakers and system lines (joins, quits, nick changes).
    """
    lines: list[_Line | None] = []
    nicks: dict[str, str] = {}
    for number, line in read_lines(path):
        if line.startswith(SYSTEM_PREFIX):
            lines.append(None)
            words = line.split()
            names = words[1:2] + (words[-1:] if " is now known as " in line else [])
        else:
            match = LINE.fullmatch(line)
            if match is None:
                raise SourceError(path, f"not an IRC log line ([HH:MM] <nick> text or === system): {line[:60]!r}",
                                  line=number)
            kind = next(kind for kind in KINDS if match.group(kind) is not None)
            lines.append(_Line(kind, match["time"], match[kind], match["text"]))
            names = [match[kind]]
        for name in names:
            nicks.setdefault(name.lower(), name)
    return lines, nicks


def read_links(path: Path, size: int) -> dict[int, set[int]]:
    """Message -> the earlier messages it is linked to (self-links dropped)."""
    parents: dict[int, set[int]] = {}
    for number, line in read_lines(path):
        parts = line.split()
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
            raise SourceError(path, "expected a link 'A B -' (two message numbers and a dash)", line=number)
        first, second = sorted((int(parts[0]), int(parts[1])))
        if second >= size:
            raise SourceError(path, f"message {second} is beyond the {size} lines of the raw log", line=number)
        if first != second:
            parents.setdefault(second, set()).add(first)
    return parents


def _addressee(text: str, speaker: str, nicks: dict[str, str]) -> str | None:
    match = ADDRESS.match(text)
    if match is None:
        return None
    nick = nicks.get(match.group(1).lower())
    return nick if nick is not None and nick.lower() != speaker.lower() else None


def read_split(data_dir: Path, split: str, min_messages: int = MIN_MESSAGES) -> list[Conversation]:
    folder = Path(data_dir) / FOLDER / SPLITS[split]
    logs: dict[str, Path] = {}
    if not folder.is_dir():
        raise SourceError(folder, f"folder not found; {download_hint(folder)}")
    for path in sorted(folder.glob("*.raw.txt")):
        logs[path.name.split(".")[0]] = path
    clusters_path = Path(data_dir) / FOLDER / f"gold.{SPLITS[split]}.clusters.txt"
    parsed: dict[str, tuple] = {}
    conversations = []
    for number, line in read_lines(clusters_path):
        key, sep, ids = line.partition(":")
        if not sep or not ids.split() or not all(item.isdigit() for item in ids.split()):
            raise SourceError(clusters_path, "expected 'LOG:id id ...'", line=number)
        if key not in logs:
            raise SourceError(clusters_path, f"log {key!r} has no raw file in {folder}", line=number)
        ids = sorted(int(item) for item in ids.split())
        if len(ids) < min_messages:
            continue
        if key not in parsed:
            raw = logs[key]
            lines, nicks = parse_log(raw)
            links = read_links(raw.with_name(raw.name.replace(".raw.txt", ".annotation.txt")), len(lines))
            parsed[key] = (lines, links, nicks)
        lines, links, nicks = parsed[key]
        if ids[-1] >= len(lines):
            raise SourceError(clusters_path, f"message {ids[-1]} is beyond the {len(lines)} lines of {logs[key]}",
                              line=number)
        kept = [i for i in ids if lines[i] is not None]
        members = set(kept)
        messages = tuple(
            Message(id=i, time=lines[i].time, speaker=lines[i].speaker, text=lines[i].text,
                    addressee=_addressee(lines[i].text, lines[i].speaker, nicks), kind=lines[i].kind,
                    reply_to=tuple(sorted(members.intersection(links.get(i, ())))))
            for i in kept)
        if not messages:
            continue
        log = logs[key].name[: -len(".raw.txt")]
        conversations.append(Conversation(id=f"ubuntu-irc-{split}-{key}-{messages[0].id:04d}", log=log,
                                          date=key[:10], annotated_messages=len(ids), messages=messages))
    conversations.sort(key=lambda c: (c.log, c.messages[0].id))
    return conversations


def read_conversations(data_dir: Path, min_messages: int = MIN_MESSAGES) -> dict[str, list[Conversation]]:
    """Gold conversations with at least ``min_messages`` annotated messages per split."""
    return {split: read_split(Path(data_dir), split, min_messages) for split in SPLITS}


def read(data_dir: Path) -> dict[str, list[Conversation]]:
    """The conversations of >= 3 annotated messages (the data README's counting rule)."""
    return read_conversations(data_dir)


SOURCE = register_reader(
    name="ubuntu_irc",
    path=FOLDER,
    description="Ubuntu IRC #ubuntu gold conversations with reply-to links (Kummerfeld et al. 2019)",
    license="CC BY 4.0",
    read=read,
    expected={"train": 4_284, "validation": 175, "test": 293},
    unit="conversations",
    notes={"counts": "gold clusters with >= 3 annotated messages (system lines counted, then dropped)"},
)
