"""The raw-corpus manifest shipped with dialshift (``manifest.json``, written by ``scripts/source_manifest.py``).

One :class:`Corpus` per folder of the data directory: its licence, the public repositories and pinned commits it
comes from, and every file of the layout the readers expect with its size, sha256 and where to fetch it (a raw-file
URL at the pinned commit, or a member of an archive fetched from one). :func:`check_corpus` verifies a folder
against it; ``dialshift download`` fetches from it; ``dialshift sources`` and the dataset card show it.
"""

import functools
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

from dialshift.errors import DialshiftError
from dialshift.io import update_digest

#: Licence kinds a user must accept by name (``--accept-licence NAME``) before downloading.
NEEDS_ACCEPTANCE = ("non-commercial", "unknown")
LICENCE_KINDS = ("open", *NEEDS_ACCEPTANCE)


@dataclass(frozen=True)
class CorpusFile:
    """One file of a corpus folder: ``path`` relative to the folder, and either a ``url`` or an archive member."""

    path: str
    size: int
    sha256: str
    url: str | None = None
    archive: str | None = None
    member: str | None = None


@dataclass(frozen=True)
class Archive:
    """An archive some files of a corpus are taken from."""

    name: str
    url: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Corpus:
    """A raw corpus: the folder ``name`` of the data directory, its licence, sources and files."""

    name: str
    licence: str
    licence_kind: str
    licence_note: str
    sources: tuple[tuple[str, str], ...]
    files: tuple[CorpusFile, ...]
    archives: tuple[Archive, ...] = ()

    @property
    def needs_acceptance(self) -> bool:
        """True when the licence is non-commercial or unknown: downloading needs ``--accept-licence NAME``."""
        return self.licence_kind in NEEDS_ACCEPTANCE

    @property
    def source_text(self) -> str:
        """The repositories and short commits, e.g. ``clinc/oos-eval@828f809``."""
        return ", ".join(f"{repository}@{commit[:7]}" for repository, commit in self.sources)

    @property
    def licence_text(self) -> str:
        """The licence with the reason it needs acceptance, e.g. ``CC BY-NC-SA 4.0 (non-commercial)``."""
        return f"{self.licence} ({self.licence_kind})" if self.needs_acceptance and self.licence != self.licence_kind \
            else self.licence

    def checksums(self) -> dict[str, str]:
        """``{path: "sha256:<hex>"}`` of every file, as recorded."""
        return {item.path: f"sha256:{item.sha256}" for item in self.files}

    @property
    def digest(self) -> str:
        """:func:`checksums_digest` of the files as the manifest records them."""
        return checksums_digest({item.path: item.sha256 for item in self.files})


def checksums_digest(checksums: dict[str, str]) -> str:
    """``sha256:<hex>`` over ``path sha256`` lines (sorted by path): one checksum of a corpus folder."""
    lines = "".join(f"{path}\t{checksums[path]}\n" for path in sorted(checksums))
    return "sha256:" + hashlib.sha256(lines.encode("utf-8")).hexdigest()


def folder_checksum(data_dir, corpus: Corpus) -> dict:
    """The checksum of the files of ``corpus`` as they are under ``data_dir`` (a missing file counts as the word
    ``missing``): ``{"checksum": "sha256:...", "matches_manifest": bool}``."""
    folder = Path(data_dir) / corpus.name
    found = {item.path: update_digest(hashlib.sha256(), folder / item.path).hexdigest()
             if (folder / item.path).is_file() else "missing" for item in corpus.files}
    digest = checksums_digest(found)
    return {"checksum": digest, "matches_manifest": digest == corpus.digest}


def _relative(text, where: str) -> str:
    path = PurePosixPath(text) if isinstance(text, str) else None
    if path is None or not text or path.is_absolute() or ".." in path.parts or "\\" in text:
        raise DialshiftError(f"source manifest: {where}: {text!r} is not a relative path inside the corpus folder")
    return path.as_posix()


def _corpus(name: str, entry: dict) -> Corpus:
    try:
        if entry["licence_kind"] not in LICENCE_KINDS:
            raise DialshiftError(f"source manifest: {name}: licence_kind {entry['licence_kind']!r} is not one of "
                                 f"{', '.join(LICENCE_KINDS)}")
        archives = tuple(Archive(archive, item["url"], int(item["size"]), item["sha256"])
                         for archive, item in sorted(entry.get("archives", {}).items()))
        files = tuple(CorpusFile(path=_relative(item["path"], f"{name} file"), size=int(item["size"]),
                                 sha256=item["sha256"], url=item.get("url"), archive=item.get("archive"),
                                 member=item.get("member")) for item in entry["files"])
        sources = tuple((item["repository"], item["commit"]) for item in entry["sources"])
        corpus = Corpus(name=_relative(name, "corpus"), licence=entry["licence"], licence_kind=entry["licence_kind"],
                        licence_note=entry.get("licence_note", ""), sources=sources, files=files, archives=archives)
    except (KeyError, TypeError, ValueError) as error:
        raise DialshiftError(f"source manifest: corpus {name!r} is malformed ({type(error).__name__}: {error}); "
                             "regenerate it with scripts/source_manifest.py") from None
    known = {archive.name for archive in archives}
    for item in files:
        if (item.url is None) == (item.archive is None) or (item.archive is not None and
                                                            (item.archive not in known or not item.member)):
            raise DialshiftError(f"source manifest: {name}/{item.path} needs either a url or a known archive and "
                                 "member; regenerate it with scripts/source_manifest.py")
    return corpus


def parse_manifest(document: dict) -> dict[str, Corpus]:
    """``{name: Corpus}`` from a manifest document (what ``manifest.json`` holds)."""
    if not isinstance(document, dict) or document.get("format") != 1 or not isinstance(document.get("corpora"), dict):
        raise DialshiftError("source manifest: expected {\"format\": 1, \"corpora\": {...}}")
    return {name: _corpus(name, entry) for name, entry in sorted(document["corpora"].items())}


def load_manifest(path=None) -> dict[str, Corpus]:
    """The corpora of the manifest at ``path`` (default: the one shipped with dialshift)."""
    if path is None:
        return shipped_manifest()
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DialshiftError(f"{path}: cannot read the source manifest ({error})") from None
    return parse_manifest(document)


@functools.cache
def shipped_manifest() -> dict[str, Corpus]:
    """The corpora of the manifest shipped with dialshift."""
    text = resources.files("dialshift.sources").joinpath("manifest.json").read_text(encoding="utf-8")
    return parse_manifest(json.loads(text))


def file_problem(path: Path, item: CorpusFile) -> str | None:
    """Why the file at ``path`` is not ``item`` (missing, other size, other sha256), else None."""
    if not path.is_file():
        return "missing"
    size = path.stat().st_size
    if size != item.size:
        return f"{size:,} bytes, expected {item.size:,}"
    if update_digest(hashlib.sha256(), path).hexdigest() != item.sha256:
        return "sha256 differs from the manifest"
    return None


def check_corpus(data_dir, corpus: Corpus) -> dict[str, str]:
    """``{path: problem}`` for every file of ``corpus`` under ``data_dir/<name>`` that is missing or altered."""
    return check_folder(Path(data_dir) / corpus.name, corpus)


def check_folder(folder: Path, corpus: Corpus) -> dict[str, str]:
    """``{path: problem}`` for every file of ``corpus`` under ``folder`` that is missing or altered."""
    problems = {}
    for item in corpus.files:
        problem = file_problem(folder / item.path, item)
        if problem:
            problems[item.path] = problem
    return problems


def corpus_status(data_dir, corpus: Corpus) -> str:
    """``intact``, ``absent`` or a short description of what is missing or altered."""
    problems = check_corpus(data_dir, corpus)
    if not problems:
        return "intact"
    if len(problems) == len(corpus.files) and all(text == "missing" for text in problems.values()):
        return "absent"
    first, reason = next(iter(problems.items()))
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{len(problems)} of {len(corpus.files)} files bad: {first} {reason}{more}"


def corpus_of_path(path) -> str | None:
    """The corpus whose layout holds ``path`` (a path ending in ``<corpus>/<file of its manifest>``), else the first
    folder name on ``path`` that is a corpus, else None."""
    manifest = shipped_manifest()
    posix = Path(path).as_posix()
    for corpus in manifest.values():
        if any(posix.endswith(f"/{corpus.name}/{item.path}") or posix == f"{corpus.name}/{item.path}"
               for item in corpus.files):
            return corpus.name
    return next((part for part in reversed(Path(path).parts) if part in manifest), None)


def download_hint(path) -> str:
    """The command that fetches the corpus holding ``path``."""
    corpus = corpus_of_path(path)
    command = f"dialshift download --corpus {corpus}" if corpus else "dialshift download"
    return f"get it with `{command}` (or point --data-dir / DIALSHIFT_DATA_DIR at a folder that has it)"
