"""Fetch the raw corpora from their original public sources: ``dialshift download``.

Every file comes from the raw-file URL of its repository at the commit the manifest pins
(:mod:`dialshift.sources.manifest`), or out of an archive fetched that way, and is checked against the manifest's size
and sha256 before it is used. The files a corpus lacks (missing, or failing their check) are fetched into a staging
folder beside ``<data dir>/<corpus>`` and moved to their manifest paths only when every one of them is intact: a
failed or interrupted download leaves the corpus folder as it was and no partial file. Nothing but the manifest's
paths is ever written, moved or removed (a file of yours named like a corpus folder is refused, never renamed). A
corpus that is already intact is verified and not fetched again. Corpora whose licence is non-commercial or unknown
are fetched only when accepted by name.

``mirror`` (``--mirror URL``, else ``$DIALSHIFT_DOWNLOAD_MIRROR``) replaces ``https://raw.githubusercontent.com`` in
every URL: a server laid out as ``OWNER/REPO/COMMIT/PATH`` (a copy of the sources, or a test server).
"""

import hashlib
import http.client
import math
import os
import shutil
import sys
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dialshift import __version__
from dialshift.data_dir import ENV_VAR, download_dir
from dialshift.errors import DialshiftError
from dialshift.io import remove_stale_temporaries, temporary_sibling
from dialshift.sources.manifest import Corpus, CorpusFile, check_corpus, file_problem, shipped_manifest

RAW_BASE = "https://raw.githubusercontent.com"
MIRROR_ENV = "DIALSHIFT_DOWNLOAD_MIRROR"
#: Seconds a connection or a read may stall before the download fails.
DEFAULT_TIMEOUT = 60.0
#: The longest stall accepted (a day); longer values overflow the socket's timer.
MAX_TIMEOUT = 86400.0
BLOCK = 1 << 16


@dataclass(frozen=True)
class CorpusResult:
    """What :func:`download` did for one corpus: ``fetched`` files (0 when it was already intact) and bytes."""

    name: str
    folder: Path
    fetched: int
    bytes: int


def target_dir(data_dir=None) -> Path:
    """Where to write: ``data_dir``, else ``$DIALSHIFT_DATA_DIR``, else :func:`dialshift.data_dir.download_dir`."""
    chosen = data_dir if data_dir is not None else os.environ.get(ENV_VAR)
    path = Path(chosen).expanduser() if chosen else download_dir()
    if path.exists() and not path.is_dir():
        raise DialshiftError(f"data directory {path} is a file; choose a folder with --data-dir")
    return path.absolute()


def check_timeout(timeout) -> float:
    """``timeout`` if it is a number of seconds in (0, :data:`MAX_TIMEOUT`]; else a one-line error."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or not 0 < timeout <= MAX_TIMEOUT:
        raise DialshiftError(f"--timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, got "
                             f"{timeout!r}")
    return float(timeout)


def check_mirror(mirror, where: str = "--mirror") -> str | None:
    """``mirror`` if it is an ``http://``, ``https://`` or ``file://`` address (None stays None); else a one-line
    error naming ``where`` (the flag or :data:`MIRROR_ENV`)."""
    if mirror is None:
        return None
    from urllib.parse import urlsplit

    problem = None
    try:
        parts = urlsplit(mirror) if isinstance(mirror, str) else None
        port = parts.port if parts else None  # raises ValueError for a port out of range or not a number
    except ValueError as error:
        parts, problem = None, str(error)
    if parts is None or problem or parts.scheme not in ("http", "https", "file") \
            or (parts.scheme != "file" and not parts.hostname) or (parts.scheme == "file" and not parts.path) \
            or parts.query or parts.fragment or any(c.isspace() or not c.isprintable() for c in mirror):
        raise DialshiftError(f"{where} {str(mirror)[:200]!r} is not a mirror address: give an http://, https:// or "
                             "file:// URL of a server laid out as OWNER/REPO/COMMIT/PATH, e.g. "
                             "http://127.0.0.1:8000" + (f" ({problem})" if problem else ""))
    del port
    return mirror


def source_url(url: str, mirror: str | None) -> str:
    """``url`` with :data:`RAW_BASE` replaced by ``mirror`` (when given)."""
    if not mirror:
        return url
    if not url.startswith(RAW_BASE + "/"):
        raise DialshiftError(f"source manifest URL {url} does not start with {RAW_BASE}; a mirror cannot serve it")
    return mirror.rstrip("/") + url[len(RAW_BASE):]


def licence_line(corpus: Corpus) -> str:
    """One line: the corpus, its licence and where it comes from."""
    note = f"; {corpus.licence_note}" if corpus.licence_note else ""
    return f"{corpus.name}: licence {corpus.licence_text}{note}; source {corpus.source_text}"


def _fetch(url: str, destination: Path, size: int, sha256: str, timeout: float, bar) -> None:
    """Stream ``url`` into the new file ``destination``; raise when it is not exactly ``size`` bytes with ``sha256``.
    The caller removes ``destination`` on failure (it lies in a staging folder)."""
    digest, written = hashlib.sha256(), 0
    request = urllib.request.Request(url, headers={"User-Agent": f"dialshift/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response, open(destination, "xb") as sink:
            while block := response.read(BLOCK):
                written += len(block)
                if written > size:
                    raise DialshiftError(f"{url}: more than the {size:,} bytes the manifest records; the source "
                                         "changed or the mirror serves another file")
                digest.update(block)
                sink.write(block)
                bar.update(len(block))
    except urllib.error.HTTPError as error:
        raise DialshiftError(f"{url}: HTTP {error.code} {error.reason}") from None
    except http.client.IncompleteRead as error:
        raise DialshiftError(f"{url}: the connection closed after {written + len(error.partial):,} of {size:,} "
                             "bytes (truncated response)") from None
    except TimeoutError:
        raise DialshiftError(f"{url}: no data for {timeout:g} s (timed out); try again or raise --timeout") from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            raise DialshiftError(f"{url}: no answer for {timeout:g} s (timed out); try again or raise --timeout") \
                from None
        raise DialshiftError(f"{url}: cannot connect ({error.reason})") from None
    except (http.client.HTTPException, ConnectionError) as error:
        raise DialshiftError(f"{url}: {type(error).__name__} ({error})") from None
    if written != size:
        raise DialshiftError(f"{url}: {written:,} bytes, the manifest records {size:,} (truncated response)")
    if digest.hexdigest() != sha256:
        raise DialshiftError(f"{url}: sha256 {digest.hexdigest()[:16]}... differs from the manifest's "
                             f"{sha256[:16]}... (corrupted, or not the pinned file)")


def _extract(archive_path: Path, archive_name: str, item: CorpusFile, destination: Path) -> None:
    """Copy the member ``item.member`` of the (already verified) archive to ``destination``, reading at most one
    byte more than the manifest's size and checking size and sha256. The destination comes from the manifest, never
    from the member's name."""
    try:
        with zipfile.ZipFile(archive_path) as archive, archive.open(item.member) as source:
            data = source.read(item.size + 1)
    except KeyError:
        raise DialshiftError(f"{archive_name}: has no member {item.member!r}") from None
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, ValueError) as error:
        raise DialshiftError(f"{archive_name}: member {item.member!r} cannot be read ({error})") from None
    if len(data) != item.size or hashlib.sha256(data).hexdigest() != item.sha256:
        raise DialshiftError(f"{archive_name}: member {item.member!r} is not the file the manifest records "
                             f"({len(data):,} bytes; expected {item.size:,} with sha256 {item.sha256[:16]}...)")
    with open(destination, "xb") as sink:
        sink.write(data)


def _fill(corpus: Corpus, staging: Path, wanted: list[CorpusFile], mirror, timeout, progress) -> int:
    """Fetch every ``wanted`` file into ``staging``; return the bytes fetched."""
    from tqdm import tqdm

    archives = {archive.name: archive for archive in corpus.archives}
    needed = sorted({item.archive for item in wanted if item.archive})
    total = sum(item.size for item in wanted if item.url) + sum(archives[name].size for name in needed)
    with tqdm(total=total, unit="B", unit_scale=True, desc=corpus.name, disable=None if progress else True,
              file=sys.stderr) as bar:
        fetched_archives = {}
        for name in needed:
            archive = archives[name]
            path = staging / f".download-{name}"
            _fetch(source_url(archive.url, mirror), path, archive.size, archive.sha256, timeout, bar)
            fetched_archives[name] = path
        for item in wanted:
            destination = staging / item.path
            destination.parent.mkdir(parents=True, exist_ok=True)
            if item.url:
                _fetch(source_url(item.url, mirror), destination, item.size, item.sha256, timeout, bar)
            else:
                _extract(fetched_archives[item.archive], item.archive, item, destination)
        for path in fetched_archives.values():
            path.unlink()
    return total


def download_corpus(corpus: Corpus, root: Path, *, mirror=None, timeout=DEFAULT_TIMEOUT,
                    progress=True) -> CorpusResult:
    """Make ``root/<corpus>`` hold every file of ``corpus`` intact, fetching only what is missing or altered.

    The files are fetched and checked in a staging folder beside ``root/<corpus>``; only when all of them are
    intact is each moved to its manifest path (one rename per file). Nothing else in the corpus folder is moved,
    copied or removed, and a path that is not the manifest's kind (a file of yours named like the corpus folder, a
    folder where the manifest has a file) is refused, never replaced. A new corpus folder gets the umask's mode."""
    folder = root / corpus.name
    check_corpus_paths(corpus, folder)
    # only its own staging folders: it never swaps a corpus folder, so a `.<corpus>.old-*` (an earlier version
    # renamed a file of yours to such a name) is not its to remove
    remove_stale_temporaries(folder, kinds=("tmp",))
    wanted = [item for item in corpus.files if file_problem(folder / item.path, item)]
    if not wanted:
        return CorpusResult(corpus.name, folder, 0, 0)
    staging = temporary_sibling(folder)
    try:
        staging.mkdir(parents=True)
        fetched = _fill(corpus, staging, wanted, mirror, timeout, progress)
        for item in wanted:
            problem = file_problem(staging / item.path, item)
            if problem:
                raise DialshiftError(f"{corpus.name}/{item.path}: {problem} after the download")
        check_corpus_paths(corpus, folder)  # again: nothing of the user's may have appeared meanwhile
        for item in wanted:
            target = folder / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / item.path, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return CorpusResult(corpus.name, folder, len(wanted), fetched)


def check_corpus_paths(corpus: Corpus, folder: Path) -> None:
    """Refuse, in one line, a corpus folder path that is not a folder (a file or dangling link of the user's named
    like the corpus) or a manifest file path that is a folder: ``download`` never moves or removes them."""
    if (folder.exists() or folder.is_symlink()) and not folder.is_dir():
        raise DialshiftError(f"{folder} exists and is not a folder, so the {corpus.name} corpus cannot be written "
                             f"there; dialshift does not move or remove it: move it aside, or use another --data-dir")
    for item in corpus.files:
        path = folder / item.path
        for parent in Path(item.path).parents[:-1]:  # the folders on the way, not the corpus folder itself
            if (folder / parent).exists() and not (folder / parent).is_dir():
                raise DialshiftError(f"{folder / parent} is not a folder, but the {corpus.name} corpus needs the "
                                     f"folder {parent}; dialshift does not move or remove it: move it aside")
        if path.is_dir():
            raise DialshiftError(f"{path} is a folder, where the {corpus.name} corpus has the file {item.path}; "
                                 f"dialshift does not move or remove it: move it aside")


def select_corpora(names: Iterable[str] | None, manifest: dict[str, Corpus]) -> list[Corpus]:
    """The corpora named (all when ``names`` is empty; a string is one name), refusing unknown names."""
    names = list(dict.fromkeys([names] if isinstance(names, str) else (names or manifest)))
    unknown = [name for name in names if name not in manifest]
    if unknown:
        raise DialshiftError(f"unknown corpus {', '.join(map(repr, unknown))}; the corpora are "
                             f"{', '.join(manifest)}")
    return [manifest[name] for name in names]


def download(corpora: Iterable[str] | None = None, data_dir=None, *, accept: Iterable[str] = (), mirror=None,
             timeout: float = DEFAULT_TIMEOUT, manifest: dict[str, Corpus] | None = None, progress: bool = True,
             log=None) -> list[CorpusResult]:
    """Fetch the named corpora (default: all) into ``data_dir`` (see :func:`target_dir`) and verify them.

    Each corpus's licence line goes to ``log`` (default: stderr) first. A corpus that must be fetched and whose
    licence is non-commercial or unknown needs its name in ``accept``; otherwise nothing is fetched and a
    :class:`DialshiftError` names the corpora to accept. Returns one :class:`CorpusResult` per corpus.
    """
    if log is None:
        def log(line):
            print(line, file=sys.stderr)
    manifest = shipped_manifest() if manifest is None else manifest
    chosen = select_corpora(corpora, manifest)
    accept = set(accept)
    unknown = sorted(accept - set(manifest))
    if unknown:
        raise DialshiftError(f"--accept-licence names unknown corpus {', '.join(map(repr, unknown))}; the corpora "
                             f"are {', '.join(manifest)}")
    check_timeout(timeout)
    mirror = check_mirror(mirror) if mirror else check_mirror(os.environ.get(MIRROR_ENV) or None, MIRROR_ENV)
    root = target_dir(data_dir)
    pending = [corpus for corpus in chosen if check_corpus(root, corpus)]
    for corpus in chosen:
        log(licence_line(corpus))
    refused = [corpus for corpus in pending if corpus.needs_acceptance and corpus.name not in accept]
    if refused:
        raise DialshiftError("; ".join(f"{corpus.name} is {corpus.licence_text}" for corpus in refused)
                             + ": read its licence, then pass " + " ".join(f"--accept-licence {corpus.name}"
                                                                           for corpus in refused)
                             + " to download it (nothing was downloaded)")
    root.mkdir(parents=True, exist_ok=True)
    return [download_corpus(corpus, root, mirror=mirror, timeout=timeout, progress=progress) for corpus in chosen]
