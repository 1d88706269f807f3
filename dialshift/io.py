"""Safe file and folder writes shared by the whole package: readers never see half-written output, and an
interrupted write never costs the previous version or leaves litter that the next run does not clean.

* :func:`atomic_output`: a context manager yielding a temporary path beside the target; on success it is renamed over
  the target (``os.replace``), on failure it is removed. Use it for writers that want a path (``savefig``,
  ``to_parquet``); it is the one atomic-write routine of the package.
* :func:`atomic_write`: write text or bytes to a file atomically (on :func:`atomic_output`).
* :func:`write_json_atomic`: the same for a JSON document (indented, sorted keys, trailing newline: stable diffs).
* :func:`swap_folder`: replace a folder by a fully written staging folder with renames, so that the old folder
  survives until the new one is in place.
* :func:`temporary_sibling` / :func:`remove_stale_temporaries`: every temporary name is ``.<name>.tmp-<pid>-<random>``
  (``.<name>.old-<pid>-<random>`` for a folder being swapped out) beside its target; a later run removes the ones
  whose writer is gone (SIGKILL, power loss), and only those: it never touches a name it did not make.
"""

import hashlib
import json
import os
import secrets
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

#: The kinds of temporary names: ``tmp`` for output being written, ``old`` for a folder being swapped out.
TEMPORARY_KINDS = ("tmp", "old")
#: The marker file of a dataset folder written by ``dialshift build`` (:data:`dialshift.hub.layout.MARKER`).
DATASET_MARKER = ".dialshift-build.json"


def temporary_sibling(path, kind: str = "tmp") -> Path:
    """A fresh name ``.<name>.<kind>-<pid>-<random>`` in the same folder as ``path`` (so renames stay on one
    filesystem); ``kind`` is ``tmp`` or ``old``. Nothing is created."""
    if kind not in TEMPORARY_KINDS:
        raise ValueError(f"kind must be one of {TEMPORARY_KINDS}, got {kind!r}")
    path = Path(path)
    return path.parent / f".{path.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"


def _writer_pid(temporary: Path, target_name: str, kind: str) -> int | None:
    """The pid embedded in a name :func:`temporary_sibling` made for ``target_name`` (``<pid>-<hex token>``), else
    ``None``: any other name is someone else's."""
    prefix = f".{target_name}.{kind}-"
    if not temporary.name.startswith(prefix):
        return None
    pid, _, token = temporary.name[len(prefix):].partition("-")
    hexadecimal = bool(token) and all(character in "0123456789abcdef" for character in token)
    return int(pid) if pid.isdigit() and hexadecimal else None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def stale_temporaries(path, *, locked: bool = False, kinds=TEMPORARY_KINDS) -> list[Path]:
    """The temporary siblings of ``path`` made by :func:`temporary_sibling` (``.<name>.tmp-<pid>-<hex>``,
    ``.<name>.old-<pid>-<hex>``) whose writer (the pid in the name) is gone. With ``locked=True`` the caller holds
    the lock every writer of ``path`` takes, so every such sibling is stale. A name of any other form
    (``.<name>.tmp-mine``, ``.<name>.old-2024``) is never counted: it was not made here. ``kinds``: only these
    kinds of names (a writer that never swaps folders asks for ``("tmp",)``)."""
    path = Path(path)
    found = []
    for kind in kinds:
        for candidate in sorted(path.parent.glob(f".{glob_escape(path.name)}.{kind}-*")):
            pid = _writer_pid(candidate, path.name, kind)
            if pid is None or pid == os.getpid():
                continue
            if locked or not _process_alive(pid):  # locked: every writer of path holds the lock, so it is gone
                found.append(candidate)
    return found


def remove_stale_temporaries(path, *, locked: bool = False, kinds=TEMPORARY_KINDS) -> list[Path]:
    """Remove :func:`stale_temporaries` of ``path`` (files or folders, never following symlinks); return them."""
    removed = []
    for candidate in stale_temporaries(path, locked=locked, kinds=kinds):
        try:
            if candidate.is_dir() and not candidate.is_symlink():
                shutil.rmtree(candidate)
            else:
                candidate.unlink()
        except FileNotFoundError:  # another process cleaned it first
            continue
        removed.append(candidate)
    return removed


def glob_escape(name: str) -> str:
    """``name`` with glob metacharacters escaped (``[``, ``*``, ``?``), for use as a literal in ``Path.glob``."""
    import glob

    return glob.escape(name)


def files_digest(paths, root=None) -> str:
    """The sha256 (hex) over each file's name (relative to ``root``, else its base name) and content, in the order
    given: the one fingerprint of a set of files (a dataset folder's revision, a model folder, a bundle)."""
    digest = hashlib.sha256()
    for path in map(Path, paths):
        name = path.relative_to(root).as_posix() if root is not None else path.name
        digest.update(name.encode() + b"\0")
        update_digest(digest, path)
        digest.update(b"\0")
    return digest.hexdigest()


def update_digest(digest, path):
    """Feed the content of the file ``path`` into the ``hashlib`` object ``digest`` (in 1 MiB blocks); return it."""
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest


@contextmanager
def atomic_output(path):
    """Yield a temporary path beside ``path``; on normal exit it replaces ``path`` (``os.replace``), on an exception
    it is removed. Parent folders are created; stale temporaries of ``path`` from dead writers are removed first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    temporary = temporary_sibling(path)
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        if temporary.is_dir() and not temporary.is_symlink():
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            temporary.unlink(missing_ok=True)
        raise


def atomic_write(path, data: str | bytes) -> Path:
    """Write ``data`` (``str`` as UTF-8, or ``bytes``) to ``path`` atomically, creating parent folders."""
    path = Path(path)
    with atomic_output(path) as temporary:
        with open(temporary, "wb") as handle:  # plain open: the file gets the usual (umask) permissions
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
    return path


def write_json_atomic(path, data) -> Path:
    """Write ``data`` as JSON (indent 2, sorted keys, trailing newline) to ``path`` atomically."""
    return atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def swap_folder(staging, target) -> None:
    """Replace the folder ``target`` by the complete folder ``staging`` (same parent folder) with renames.

    The old folder is renamed to a ``.<name>.old-*`` sibling, the staging folder renamed into place, then the old one
    removed; if the second rename fails the old folder is renamed back. A kill between the two renames leaves the
    old folder under its ``.old-*`` name: :func:`restore_interrupted_swap` puts it back.
    """
    staging, target = Path(staging), Path(target)
    os.chmod(staging, _folder_mode(target))  # the folder keeps its permissions (0o700 stays 0o700)
    if not target.exists():
        os.rename(staging, target)
        return
    old = temporary_sibling(target, "old")
    os.rename(target, old)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _folder_mode(target: Path) -> int:
    """The permission bits a folder replacing ``target`` gets: ``target``'s own, else the umask's default."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o777 & ~umask


def interrupted_swaps(target) -> list[Path]:
    """The ``.<name>.old-*`` siblings of a missing ``target`` (newest first): a swap killed between its renames
    left the folder's data there."""
    target = Path(target)
    if target.exists() or target.is_symlink():
        return []
    olds = [p for p in target.parent.glob(f".{glob_escape(target.name)}.old-*")
            if _writer_pid(p, target.name, "old") is not None and p.is_dir()]
    return sorted(olds, key=lambda p: p.stat().st_mtime_ns, reverse=True)


def interrupted_swap_hint(target) -> str:
    """``"; ... holds its data ..."`` when ``target`` is missing because a swap was killed half-way, else ``""``:
    appended to a "no such folder" error so the user finds the data."""
    olds = interrupted_swaps(target)
    if not olds:
        return ""
    return (f"; a write of {target} was interrupted and {olds[0]} holds its data: `mv {olds[0]} {target}` "
            f"restores it (the next `dialshift build --out {target}` does this itself)")


def restore_interrupted_swap(target) -> Path | None:
    """If ``target`` is missing and a ``.<name>.old-*`` sibling exists (a swap killed between its renames), rename
    the newest such sibling back to ``target`` and return it. Call it holding the lock every writer of ``target``
    takes."""
    olds = interrupted_swaps(target)
    if not olds:
        return None
    os.rename(olds[0], Path(target))
    return olds[0]


# ----------------------------------------------------------------------------------------------- ownership


def check_owned_folder(path, marker: str, *, flag: str = "--out", inputs=(), legacy=(), writes=None,
                       verified: bool = False) -> Path:
    """Refuse an output folder a writer must not write into; return its absolute path. Nothing is written.

    Fine: a missing or empty folder, or one holding ``marker`` (the writer's own mark, left by
    :func:`claim_owned_folder`) or one of the ``legacy`` files (what the writer left there before markers
    existed). With ``writes`` (the names the writer puts in the folder), an unmarked folder holding none of them
    is fine too: nothing of the user's is replaced. Refused with one line: a file; a folder that is or contains one
    of ``inputs`` (the command's own input, e.g. the model being fine-tuned); any other non-empty folder, naming
    what it holds. A folder whose parent cannot be written is refused before any work.

    ``verified``: the marker is not trusted by its presence: it lists the files the writer wrote with their sha256
    (:func:`record_owned_files`), and every file under ``writes`` (everything but the marker when ``writes`` is
    None) must be listed with a matching checksum; any other is the user's, and the folder is refused naming it.
    """
    from dialshift.errors import DialshiftError

    path = Path(path).expanduser().absolute()
    real = path.resolve()
    for source in inputs:
        source = Path(source).expanduser().resolve()
        if real == source or real in source.parents:
            relation = "is" if real == source else "contains"
            raise DialshiftError(f"{flag} {path} {relation} the input {source}: writing there would replace it; "
                                 f"choose a new folder for {flag}")
    if path.exists() and not path.is_dir():
        raise DialshiftError(f"{flag} {path} is a file, not a folder; choose another {flag}")
    check_outside_datasets(path, flag)
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise DialshiftError(f"{flag} {path}: {probe} is a file, so the folder cannot be created")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise DialshiftError(f"{flag} {path}: {probe} is not writable; choose another {flag} or fix its permissions")
    if not path.is_dir():
        return path
    if verified and (path / marker).exists():
        foreign = foreign_files(path, marker, writes)
        if foreign:
            shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
            raise DialshiftError(f"{flag} {path} holds files {marker} does not list as written by dialshift, or "
                                 f"that changed since ({shown}); dialshift never writes over them: move them out "
                                 f"of the folder (or delete them if they are dialshift's, from an interrupted run), "
                                 f"or choose a new or empty {flag}")
        return path
    if any((path / name).exists() for name in (marker, *legacy)):
        return path
    entries = sorted(entry.name for entry in os.scandir(path))
    clashes = entries if writes is None else [name for name in entries if name in set(writes)]
    if clashes:
        shown = ", ".join(clashes[:5]) + (f" and {len(clashes) - 5} more" if len(clashes) > 5 else "")
        raise DialshiftError(f"{flag} {path} holds files dialshift did not write ({shown}; no {marker}); it never "
                             f"writes over them: choose a new or empty {flag}")
    return path


def check_outside_datasets(path, flag: str = "--out") -> None:
    """Refuse an output folder that is, or lies inside, a dataset folder ``dialshift build`` wrote (it holds
    ``.dialshift-build.json``): results, models or pages written there would be pushed, carried by every rebuild
    and, for a nested dataset folder, break the outer one's ``validate``."""
    from dialshift.errors import DialshiftError

    path = Path(path).expanduser().absolute()
    for folder in (path, *path.resolve().parents):
        if (folder / DATASET_MARKER).is_file():
            relation = "is" if folder == path else "is inside"
            raise DialshiftError(f"{flag} {path} {relation} the dataset folder {folder} (dialshift built it: "
                                 f"{DATASET_MARKER}); write outside it: choose another {flag}")


def claim_owned_folder(path, marker: str, description: str, **checks) -> Path:
    """:func:`check_owned_folder`, then create the folder and write ``marker`` into it (``description``, one line:
    which command writes there), so later runs of the writer may replace what it writes. Return the path. With
    ``verified=True`` the marker is a JSON document listing the files written (none yet: call
    :func:`record_owned_files` once they are)."""
    path = check_owned_folder(path, marker, **checks)
    path.mkdir(parents=True, exist_ok=True)
    if checks.get("verified"):
        if _owned_record(path / marker) is None:
            _write_owned_record(path / marker, description, {})
    elif not (path / marker).is_file():
        atomic_write(path / marker, description.rstrip("\n") + "\n")
    return path


def _owned_record(marker_path: Path) -> dict | None:
    """The JSON marker ``{"tool": "dialshift", "description", "files": {path: sha256}}``, else None (missing, or a
    marker of the older one-line form, which lists nothing)."""
    try:
        document = json.loads(marker_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(document, dict) or document.get("tool") != "dialshift" or \
            not isinstance(document.get("files"), dict):
        return None
    return document


def _write_owned_record(marker_path: Path, description: str, files: dict) -> None:
    atomic_write(marker_path, json.dumps({"tool": "dialshift", "description": description.strip(),
                                          "files": dict(sorted(files.items()))}, indent=2) + "\n")


def _files_under(folder: Path, marker: str, names) -> list[str]:
    """Relative POSIX paths of the files (symlinks included) under the top-level ``names`` of ``folder`` (every
    entry when ``names`` is None), markers named ``marker`` at any depth left out."""
    tops = [entry.name for entry in os.scandir(folder)] if names is None else \
        [name for name in names if (folder / name).exists() or (folder / name).is_symlink()]
    found = []
    for top in sorted(set(tops)):
        start = folder / top
        if start.is_symlink() or not start.is_dir():
            if top != marker:
                found.append(top)
            continue
        for dirpath, dirnames, filenames in os.walk(start):  # never follows symlinked folders
            here = Path(dirpath)
            for name in sorted(filenames + [d for d in dirnames if (here / d).is_symlink()]):
                if name != marker:
                    found.append((here / name).relative_to(folder).as_posix())
    return found


def foreign_files(folder, marker: str, names=None) -> list[str]:
    """The files under ``names`` of ``folder`` (everything when None) that ``marker`` does not list with their
    current sha256 (see :func:`record_owned_files`): the user's, or changed since dialshift wrote them."""
    folder = Path(folder)
    records: dict[Path, dict] = {}

    def owner(relative: str) -> tuple[dict, str]:
        """The record of the innermost folder holding ``marker`` (a method folder ``evaluate`` claimed inside its
        ``--out``, which ``score`` may rewrite on its own) and the path relative to it."""
        for parent in PurePosixPath(relative).parents:
            if parent != PurePosixPath(".") and (folder / parent / marker).is_file():
                if parent not in records:
                    records[parent] = (_owned_record(folder / parent / marker) or {}).get("files", {})
                return records[parent], PurePosixPath(relative).relative_to(parent).as_posix()
        return top, relative

    top = (_owned_record(folder / marker) or {}).get("files", {})
    foreign = []
    for relative in _files_under(folder, marker, names):
        full = folder / relative
        recorded, key = owner(relative)
        if full.is_symlink() or not full.is_file() or recorded.get(key) != \
                update_digest(hashlib.sha256(), full).hexdigest():
            foreign.append(relative)
    return foreign


def record_owned_files(folder, marker: str, names=None, description: str | None = None) -> None:
    """Record in ``marker`` the sha256 of every file under ``names`` of ``folder`` (everything when None): the
    files the writer wrote, which its later runs may replace. Entries of files that no longer exist are dropped."""
    folder = Path(folder)
    document = _owned_record(folder / marker) or {}
    files = {relative: digest for relative, digest in document.get("files", {}).items()
             if (folder / relative).is_file()}
    for relative in _files_under(folder, marker, names):
        full = folder / relative
        if full.is_file() and not full.is_symlink():
            files[relative] = update_digest(hashlib.sha256(), full).hexdigest()
    _write_owned_record(folder / marker, description or document.get("description") or "written by dialshift",
                        files)
