"""Leaderboard submissions: a folder or a ``.zip`` holding ``submission.json`` and ``predictions/<config>.jsonl``.

A config with a second, shifted test split (the covariate family's ``cov_test``; ``cov_lite`` on the lite track)
also needs ``predictions/<split>/<config>.jsonl``: the layout ``dialshift evaluate`` writes per split
(``OUT/msp/cov_test/predictions``), copied in as the folder ``predictions/cov_test``.

:func:`open_submission` checks everything that does not need the gold answers before any scoring: the container
(size limits, and for a zip: safe member names, no symlinks, no member outside the layout, bounded extraction), the
``submission.json`` schema and the set of prediction files. The predictions themselves (every id exactly once, no
unknown id, vector lengths, finite probabilities summing to 1) are checked by the scoring pipeline
(:mod:`dialshift.scoring`) while it reads them, before anything is written. Scores a submitter wrote are never read:
``submission.json`` may not carry any, and fields of a prediction line that the task does not read are ignored.
"""

import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from dialshift.errors import DialshiftError
from dialshift.scoring.jsonl import clip

SUBMISSION_FILE = "submission.json"
PREDICTIONS_DIR = "predictions"
#: Files a submission may hold besides its predictions: ``predictions/run.json`` (written by ``dialshift evaluate``;
#: its ``run`` block is kept as a description, its scoring settings are not used) and a README.
OPTIONAL_FILES = ("README.md", f"{PREDICTIONS_DIR}/run.json")
CONFIG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


@dataclass(frozen=True)
class Limits:
    """Size limits of a submission (bytes and counts); a file or an archive over one is refused before it is read."""

    file_bytes: int = 256 << 20
    total_bytes: int = 1 << 30
    files: int = 500
    metadata_bytes: int = 64 << 10
    #: The largest ratio of uncompressed to compressed size of a zip member (a zip bomb compresses far better).
    zip_ratio: int = 200


#: ``submission.json`` fields: name -> (type, required, description).
FIELDS = {
    "model": (str, True, "the model's name or Hub id, e.g. my-org/my-ranker"),
    "method": (str, True, "the uncertainty or training method, e.g. vanilla, ensemble"),
    "link": (str, True, "an http(s) link to the paper, code or model card"),
    "licence": (str, True, "the licence of the predictions and model, e.g. apache-2.0"),
    "dataset_revision": (dict, True, "the fingerprint of each config the predictions were made on: the "
                                     "dataset_revision object of the results.json `dialshift evaluate` or `dialshift "
                                     "score` wrote for them ({config: \"sha256:...\"})"),
    "parameters": (int, False, "the number of model parameters"),
    "seeds": (list, False, "the random seeds of the run, a list of integers"),
    "family": (str, False, "the benchmark family (default: the family of the prediction files)"),
    "configs": (list, False, "a declared subset of the family's configs (default: all of them)"),
    "track": (str, False, "full (predictions on each config's test split, the default) or lite (on its lite split, at "
                          "most 128 instances: the lite track, ranked in a table of its own)"),
    "description": (str, False, "a sentence about the submission"),
    "contact": (str, False, "who to contact"),
    "cost": ("cost", False, "what making the predictions cost: {\"pairs\": scored (context, candidate) pairs, "
                            "\"cpu_seconds\": ..., \"wall_seconds\": ...}, each a number >= 0, pairs an integer"),
}
#: The keys of ``cost`` (shown on the page beside the row).
COST_KEYS = ("pairs", "cpu_seconds", "wall_seconds")
#: Fields a submitter might use to state scores; refused, because every score is recomputed from gold.
#: The leaderboard's tracks and the dataset split each is scored on (the lite split: :mod:`dialshift.lite`).
TRACKS = {"full": "test", "lite": "lite"}
#: The folder of a second test split's predictions, ``predictions/<prefix>_<split>/`` for a track's split (``cov_test``,
#: ``cov_lite``; :func:`dialshift.lite.lite_name` names them alike); which configs need one is the dataset's business.
SPLIT_FOLDER = re.compile(rf"[a-z][a-z0-9]*_(?:{'|'.join(TRACKS.values())})")
SCORE_FIELDS = ("results", "scores", "metrics", "intervals", "differences", "eval_results", "model-index")
MAX_TEXT = 500
#: The largest ``parameters`` and ``seeds`` value accepted (a page shows them; 10**400 cannot be formatted).
MAX_INTEGER = 10**15


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be shown on the page as one line (control characters, lone surrogates), else None."""
    import unicodedata

    for character in value:
        if unicodedata.category(character) in ("Cc", "Cs", "Zl", "Zp"):
            return f"holds the control character {character!r}"
    return None


#: Fields that name a record (compared to find the record a submission replaces): normalised before comparison.
NAME_FIELDS = ("model", "method", "family")


def normalised_name(value: str) -> str:
    """``value`` as names are compared: NFC, without format characters (zero-width space, direction overrides and
    the like, Unicode category Cf) and without leading or trailing white space."""
    import unicodedata

    value = unicodedata.normalize("NFC", value)
    return "".join(c for c in value if unicodedata.category(c) != "Cf").strip()


@dataclass
class Submission:
    """A checked submission: its ``metadata`` (``submission.json``), ``files`` (``{config: predictions path}``) and
    ``run`` (``predictions/run.json``, or {}); ``root`` is the folder (an extracted zip lives in a temporary one);
    ``split_files``: ``{split: {config: path}}`` of the second test splits' folders (``predictions/cov_test/``)."""

    root: Path
    metadata: dict
    files: dict = field(default_factory=dict)
    run: dict = field(default_factory=dict)
    split_files: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------- metadata


def check_metadata(document, where: str) -> dict:
    """The ``submission.json`` object, checked against :data:`FIELDS`; one-line errors naming the field."""
    if not isinstance(document, dict):
        raise DialshiftError(f"{where}: expected a JSON object with {', '.join(n for n, f in FIELDS.items() if f[1])}")
    for name in document:
        if name in SCORE_FIELDS:
            raise DialshiftError(f"{where}: field {name!r} is not accepted: the leaderboard recomputes every score "
                                 "from gold, so a submission holds predictions only; remove it")
        if name not in FIELDS:
            raise DialshiftError(f"{where}: unknown field {clip(name, 40)!r}; the fields are {', '.join(FIELDS)}")
    for name, (kind, required, description) in FIELDS.items():
        value = document.get(name)
        if value is None:
            if required:
                raise DialshiftError(f"{where}: missing field {name!r} ({description})")
            continue
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INTEGER):
            raise DialshiftError(f"{where}: field {name!r} must be an integer from 0 to {MAX_INTEGER:.0e}, got "
                                 f"{clip(value, 40)}")
        if kind is str:
            if not isinstance(value, str) or not value.strip():
                raise DialshiftError(f"{where}: field {name!r} must be a non-empty string, got {clip(value, 40)}")
            if len(value) > MAX_TEXT or text_problem(value):
                raise DialshiftError(f"{where}: field {name!r} must be one line of at most {MAX_TEXT} printable "
                                     "characters")
        if kind is dict:
            if isinstance(value, str):
                value = {"": value}
            if not isinstance(value, dict) or not value or len(value) > 10_000 or not all(
                    isinstance(k, str) and isinstance(v, str) and 0 < len(v) <= 100 and len(k) <= 100
                    and not text_problem(k + v) for k, v in value.items()):
                raise DialshiftError(f"{where}: field {name!r} must be an object ({description})")
        if kind is list:
            item_type = int if name == "seeds" else str
            if not isinstance(value, list) or not all(
                    isinstance(v, item_type) and not isinstance(v, bool) and
                    (abs(v) <= MAX_INTEGER if item_type is int else len(v) <= MAX_TEXT and not text_problem(v))
                    for v in value) or len(value) > 1000:
                raise DialshiftError(f"{where}: field {name!r} must be a list of {item_type.__name__}s ({description})")
    for name in NAME_FIELDS:
        value = document.get(name)
        if isinstance(value, str) and normalised_name(value) != value:
            raise DialshiftError(f"{where}: field {name!r} changes when normalised (NFC, no invisible format "
                                 "characters such as a zero-width space or a direction override, no leading or "
                                 f"trailing space), so it could pose as another entry: write it as "
                                 f"{clip(normalised_name(value), 80)!r}")
    if document.get("cost") is not None:
        check_cost(document["cost"], where)
    if document.get("track", "full") not in TRACKS:
        raise DialshiftError(f"{where}: field 'track' must be one of {', '.join(TRACKS)}, got "
                             f"{clip(document['track'], 40)!r}")
    if not re.fullmatch(r"https?://[^\s<>\"']+", document["link"]):
        raise DialshiftError(f"{where}: field 'link' must be an http:// or https:// address, got "
                             f"{clip(document['link'], 60)!r}")
    return dict(document)


def cost_problem(value) -> str | None:
    """What is wrong with a ``cost`` object (see :data:`FIELDS`), else None."""
    import math

    if not isinstance(value, dict) or not value or not set(value) <= set(COST_KEYS):
        return f"must be an object with some of {', '.join(COST_KEYS)}"
    for key, number in value.items():
        whole = key == "pairs"
        if isinstance(number, bool) or not isinstance(number, int if whole else (int, float)) or \
                not math.isfinite(number) or not 0 <= number <= MAX_INTEGER:
            return f"{key!r} must be {'an integer' if whole else 'a number'} from 0 to {MAX_INTEGER:.0e}"
    return None


def check_cost(value, where: str) -> None:
    problem = cost_problem(value)
    if problem:
        raise DialshiftError(f"{where}: field 'cost' {problem} (e.g. {{\"pairs\": 42240, \"cpu_seconds\": 812.5, "
                             "\"wall_seconds\": 900.1}})")


def read_metadata(path: Path, limits: Limits) -> dict:
    if not path.is_file() or path.is_symlink():
        raise DialshiftError(f"{path}: missing; a submission needs {SUBMISSION_FILE} ({', '.join(FIELDS)}) beside "
                             f"{PREDICTIONS_DIR}/")
    if path.stat().st_size > limits.metadata_bytes:
        raise DialshiftError(f"{path}: {path.stat().st_size:,} bytes, more than the {limits.metadata_bytes:,} allowed")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        reason = getattr(error, "msg", None) or type(error).__name__
        line = f" line {error.lineno}" if isinstance(error, json.JSONDecodeError) else ""
        raise DialshiftError(f"{path}: not valid JSON ({reason}{line})") from None
    return check_metadata(document, str(path))


# ----------------------------------------------------------------------------------------------- the folder


def _allowed(relative: str) -> bool:
    if relative == SUBMISSION_FILE or relative in OPTIONAL_FILES:
        return True
    parts = PurePosixPath(relative).parts
    if len(parts) == 3 and parts[0] == PREDICTIONS_DIR and SPLIT_FOLDER.fullmatch(parts[1]):
        return parts[2] == "run.json" or _allowed(f"{PREDICTIONS_DIR}/{parts[2]}")
    return (len(parts) == 2 and parts[0] == PREDICTIONS_DIR and parts[1].endswith(".jsonl")
            and CONFIG_NAME.fullmatch(parts[1][: -len(".jsonl")]) is not None)


def _allowed_folder(relative: str) -> bool:
    parts = PurePosixPath(relative).parts
    return parts[:1] == (PREDICTIONS_DIR,) and (len(parts) == 1 or len(parts) == 2 and SPLIT_FOLDER.fullmatch(parts[1]))


def scan_folder(root: Path, limits: Limits) -> list[str]:
    """The relative paths of a submission folder's files, refusing symlinks, special files, unexpected files and
    sizes over the limits (from ``stat``, before reading anything)."""
    found, total = [], 0
    for dirpath, dirnames, filenames in os.walk(root):  # never follows symlinked folders
        here = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = here / name
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                raise DialshiftError(f"{path}: is a symbolic link; a submission holds regular files only (copy the "
                                     "file in)")
            if stat.S_ISDIR(info.st_mode):
                if not _allowed_folder(relative):
                    raise DialshiftError(f"{path}: unexpected folder; a submission holds {SUBMISSION_FILE}, "
                                         f"{PREDICTIONS_DIR}/<config>.jsonl and, for a second test split, "
                                         f"{PREDICTIONS_DIR}/<split>/<config>.jsonl (e.g. cov_test) only")
                continue
            if not stat.S_ISREG(info.st_mode):
                raise DialshiftError(f"{path}: not a regular file")
            if not _allowed(relative):
                raise DialshiftError(f"{path}: unexpected file; a submission holds {SUBMISSION_FILE}, "
                                     f"{PREDICTIONS_DIR}/<config>.jsonl and optionally {', '.join(OPTIONAL_FILES)} "
                                     "(scores are recomputed from gold: do not include results)")
            if info.st_size > limits.file_bytes:
                raise DialshiftError(f"{path}: {info.st_size:,} bytes, more than the {limits.file_bytes:,} allowed "
                                     "per file")
            total += info.st_size
            found.append(relative)
            if len(found) > limits.files:
                raise DialshiftError(f"{root}: more than {limits.files} files")
    if total > limits.total_bytes:
        raise DialshiftError(f"{root}: {total:,} bytes in all, more than the {limits.total_bytes:,} allowed")
    return found


# ----------------------------------------------------------------------------------------------- zip archives


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    if "\\" in name or "\x00" in name:
        return "has a backslash or NUL in its name"
    path = PurePosixPath(name)
    if path.is_absolute() or re.match(r"^[A-Za-z]:", name):
        return "is an absolute path"
    if ".." in path.parts:
        return "climbs out of the archive with '..'"
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    return None


#: Compression methods a submission zip may use (``zipfile`` reads no others, e.g. deflate64).
COMPRESSION = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
               zipfile.ZIP_LZMA: "lzma"}


def _layout_root(members: list[zipfile.ZipInfo]) -> str:
    """The archive's single top folder (``"name/"``) when every member lies in one, else ``""``."""
    tops = {PurePosixPath(info.filename).parts[0] for info in members if PurePosixPath(info.filename).parts}
    if len(tops) == 1:
        top = next(iter(tops))
        if top != PREDICTIONS_DIR and any(info.filename.startswith(top + "/") for info in members):
            return top + "/"
    return ""


def _check_members(archive: Path, members: list[zipfile.ZipInfo], limits: Limits) -> str:
    """Check every member's name, kind, method, flags and declared size, and the archive's layout, before a byte is
    extracted; return the top folder prefix of the submission inside the archive."""
    def refuse(info, problem):
        raise DialshiftError(f"{archive}: member {clip(info.filename, 80)!r} {problem}")

    files = [info for info in members if not info.is_dir()]
    if len(files) > limits.files:
        raise DialshiftError(f"{archive}: {len(files):,} files, more than the {limits.files} a submission may hold")
    seen, total = set(), 0
    for info in members:
        problem = _member_problem(info)
        if problem:
            refuse(info, f"{problem}; a submission zip holds relative paths to regular files only")
        name = info.filename.rstrip("/")
        if name in seen:
            refuse(info, "appears twice in the archive; keep one copy")
        seen.add(name)
        if info.is_dir():
            continue
        if info.flag_bits & 0x1:
            refuse(info, "is encrypted; zip the submission without a password")
        if info.compress_type not in COMPRESSION:
            refuse(info, f"uses compression method {info.compress_type}, which cannot be read; use deflate "
                         "(`zip` or `python -m zipfile -c`)")
        if info.file_size > limits.file_bytes:
            refuse(info, f"is {info.file_size:,} bytes, more than the {limits.file_bytes:,} allowed per file")
        if info.compress_size and info.file_size / info.compress_size > limits.zip_ratio and \
                info.file_size > (1 << 20):
            refuse(info, f"expands {info.file_size:,} bytes from {info.compress_size:,} (a zip bomb?)")
        total += info.file_size
    if total > limits.total_bytes:
        raise DialshiftError(f"{archive}: {total:,} bytes uncompressed, more than the {limits.total_bytes:,} allowed")
    root = _layout_root(members)
    for info in files:
        relative = info.filename[len(root):] if info.filename.startswith(root) else info.filename
        if not _allowed(relative):
            refuse(info, f"is not part of a submission ({SUBMISSION_FILE}, {PREDICTIONS_DIR}/<config>.jsonl and "
                         f"optionally {', '.join(OPTIONAL_FILES)}; scores are recomputed from gold: do not include "
                         "results)")
    return root


def extract_zip(archive: Path, target: Path, limits: Limits) -> Path:
    """Extract a submission zip into ``target`` after checking every member (:func:`_check_members`); return the
    submission root (the archive's single top folder when everything lies in one, else ``target``).

    The bytes that really come out are counted while extracting, per member and in all, so a member whose header
    understates its size is refused when it passes the limit, not after it is written.
    """
    try:
        handle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise DialshiftError(f"{archive}: not a readable zip archive ({clip(str(error), 80)})") from None
    with handle:
        members = handle.infolist()
        if len(members) > limits.files * 2:
            raise DialshiftError(f"{archive}: {len(members):,} members, more than {limits.files * 2} allowed")
        root = _check_members(archive, members, limits)
        total = 0
        for info in members:
            destination = target.joinpath(*PurePosixPath(info.filename).parts)
            if info.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            try:
                with handle.open(info) as source, open(destination, "xb") as sink:
                    while block := source.read(1 << 20):  # the header's size may lie: count what really comes out
                        written += len(block)
                        total += len(block)
                        if written > limits.file_bytes or written > info.file_size:
                            raise DialshiftError(f"{archive}: member {clip(info.filename, 80)!r} expands beyond the "
                                                 f"{min(limits.file_bytes, info.file_size):,} bytes its header "
                                                 "declares or the limit allows")
                        if total > limits.total_bytes:
                            raise DialshiftError(f"{archive}: more than the {limits.total_bytes:,} bytes allowed "
                                                 "in all when extracted")
                        sink.write(block)
            except (zipfile.BadZipFile, EOFError, OSError, RuntimeError, NotImplementedError, ValueError,
                    zlib.error) as error:
                reason = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise DialshiftError(f"{archive}: member {clip(info.filename, 80)!r} cannot be read "
                                     f"({clip(reason, 100)}); the archive is damaged: zip the submission "
                                     "again") from None
    return target / root if root else target


# ----------------------------------------------------------------------------------------------- opening


#: The name temporary extractions are made beside (in ``$TMPDIR``): ``.dialshift-submission.tmp-<pid>-<random>``.
SCRATCH_NAME = "dialshift-submission"


def scratch_folder() -> Path:
    """A new temporary folder for an extraction, after removing those whose process is gone (a ``leaderboard score``
    killed with SIGKILL leaves its extraction behind); both under a lock in ``$TMPDIR``, so two runs never race."""
    from filelock import FileLock

    from dialshift.io import remove_stale_temporaries, temporary_sibling

    anchor = Path(tempfile.gettempdir()) / SCRATCH_NAME
    with FileLock(str(anchor.parent / f".{SCRATCH_NAME}.lock")):
        remove_stale_temporaries(anchor)
        scratch = temporary_sibling(anchor)
        scratch.mkdir(mode=0o700)
    return scratch


@contextmanager
def open_submission(path, limits: Limits | None = None):
    """Yield the checked :class:`Submission` at ``path`` (a folder or a ``.zip``); a zip is extracted into a
    temporary folder (:func:`scratch_folder`) removed afterwards, or by the next run if this one is killed."""
    limits = limits or Limits()
    path = Path(path)
    if path.is_symlink():
        raise DialshiftError(f"{path}: is a symbolic link; pass the submission folder or zip itself")
    if not path.exists():
        raise DialshiftError(f"{path}: no such submission (a folder or .zip with {SUBMISSION_FILE} and "
                             f"{PREDICTIONS_DIR}/)")
    scratch = None
    try:
        if path.is_file():
            if not zipfile.is_zipfile(path):
                raise DialshiftError(f"{path}: not a folder or a zip archive")
            if path.stat().st_size > limits.total_bytes:
                raise DialshiftError(f"{path}: {path.stat().st_size:,} bytes, more than the {limits.total_bytes:,} "
                                     "allowed")
            scratch = scratch_folder()
            root = extract_zip(path, scratch, limits)
        else:
            root = path
        scan_folder(root, limits)
        metadata = read_metadata(root / SUBMISSION_FILE, limits)
        folder = root / PREDICTIONS_DIR
        files = {item.name[: -len(".jsonl")]: item for item in sorted(folder.glob("*.jsonl"))} \
            if folder.is_dir() else {}
        split_files = {item.name: {path.name[: -len(".jsonl")]: path for path in sorted(item.glob("*.jsonl"))}
                       for item in sorted(folder.iterdir()) if item.is_dir()} if folder.is_dir() else {}
        if not files:
            raise DialshiftError(f"{folder}: no <config>.jsonl predictions files")
        run = {}
        if (folder / "run.json").is_file():
            try:
                run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
                raise DialshiftError(f"{folder / 'run.json'}: not valid JSON ({type(error).__name__})") from None
            run = run.get("run", {}) if isinstance(run, dict) and isinstance(run.get("run"), dict) else {}
        yield Submission(root, metadata, files, run, split_files)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
