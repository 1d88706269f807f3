"""Ownership of output folders: the builder only replaces a folder it wrote (its marker lists the files, with the
checksum of each as it wrote it), only when every listed file still is what it wrote, and only when the folder's card
can vouch for every config the marker lists."""

import hashlib
import os
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.hub.layout import MARKER, METADATA_KEY, README, output_path, parquet_name
from dialshift.hub.marker import marker_configs, read_marker, rebuild_all_hint
from dialshift.hub.reading import declared_configs, folder_metadata, load_card, read_card

#: Foreign entries named in a refusal (the rest are counted).
SHOWN_FOREIGN = 5


def owned_files(folder) -> set[str] | None:
    """Relative paths (POSIX) of the files ``dialshift build`` wrote in ``folder``, or ``None`` if it did not build it.

    From the marker; a folder built before markers existed is recognised by the ``dialshift`` block of its card, and
    then owns its card and the parquet files its card declares.
    """
    folder = Path(folder)
    marker = read_marker(folder)
    if marker is not None:
        return {str(path) for path in marker["files"]} | {MARKER}
    return _legacy_owned_files(folder)


def _legacy_owned_files(folder: Path) -> set[str] | None:
    """What a folder built before markers existed owns: its dialshift card and the parquet files it declares."""
    if not (folder / README).is_file():
        return None
    try:
        card = read_card(folder)
        if METADATA_KEY not in card.data.to_dict():
            return None
        declared = declared_configs(folder)
    except DialshiftError:
        return None
    return {README} | {f"{name}/{parquet_name(split)}" for name, splits in declared.items() for split in splits}


def _sha256(path: Path) -> str:
    from dialshift.io import update_digest

    return update_digest(hashlib.sha256(), path).hexdigest()


def foreign_listed_files(folder, rewritten=None) -> list[str]:
    """The files the folder's marker lists as written by ``dialshift build`` that are not what it wrote, sorted: a
    rebuild would delete them, so they are the user's until proven otherwise.

    A marker of format 2 records each file's sha256; a listed file that exists with another checksum (or is not a
    plain file) is foreign. A marker of format 1 (no checksums) vouches only for the card and the parquet files
    the card declares, each parquet file matching the fingerprint the card recorded; any other listed file that
    exists is foreign (a hand-made marker listing ``notes.txt``). Missing files are not listed (nothing to lose).

    ``rewritten``: the configs the caller rebuilds or keeps (default: every config the card declares, as
    ``dialshift build`` does). Their parquet files that dialshift's card declares are not listed even when changed:
    a rebuilt config's damaged file is what ``validate`` tells the user to rebuild (the rebuild writes exactly that
    path), and a kept config's files are checked against the card's fingerprints and refused by name, never
    deleted. Only the files of a config a direct :func:`dialshift.hub.write_hub_folder` call drops are checked."""
    folder = Path(folder)
    marker = read_marker(folder)
    if marker is None:
        return []
    try:
        declared = declared_configs(folder) if METADATA_KEY in read_card(folder).data.to_dict() else {}
    except (DialshiftError, OSError):
        declared = {}
    rewritten = set(declared) if rewritten is None else set(rewritten) & set(declared)
    rebuilt = {f"{name}/{parquet_name(split)}" for name in rewritten for split in declared[name]}
    recorded = marker.get("sha256") if isinstance(marker.get("sha256"), dict) else None
    vouched: dict[str, str | None] = {}
    if recorded is None:
        legacy = _legacy_owned_files(folder) or set()
        try:
            fingerprints = {path: entry.get("sha256") for config in folder_metadata(folder).values()
                            if isinstance(config, dict) and isinstance(config.get("files"), dict)
                            for path, entry in config["files"].items() if isinstance(entry, dict)}
        except DialshiftError:
            fingerprints = {}
        vouched = {path: fingerprints.get(path) for path in legacy if path != README}
    foreign = []
    for listed in sorted({str(path) for path in marker["files"]}):
        path = folder / listed
        if listed in ("", ".", MARKER) or ".." in Path(listed).parts or Path(listed).is_absolute():
            continue  # never a file of the folder: carry_over never matches it
        if listed in rebuilt:
            continue
        if not (path.exists() or path.is_symlink()):
            continue
        if path.is_symlink() or not path.is_file():
            foreign.append(listed)
        elif recorded is not None:
            if recorded.get(listed) != _sha256(path):
                foreign.append(listed)
        elif listed == README:
            continue  # format 1: the card is checked by check_card_matches_marker (dialshift's, or refused)
        elif listed not in vouched or (vouched[listed] is not None and vouched[listed] != _sha256(path)):
            foreign.append(listed)
    return foreign


def check_not_nested(out_dir: Path) -> None:
    """Refuse an output folder inside a folder ``dialshift build`` wrote: the outer folder would then hold parquet
    files its card does not declare (``validate`` fails) and a rebuild of it would carry the inner one along."""
    for parent in out_dir.resolve().parents:
        if (parent / MARKER).is_file():
            raise DialshiftError(f"--out {out_dir} is inside {parent}, a folder dialshift built ({MARKER}): a "
                                 f"dataset folder inside another breaks the outer one; choose an --out outside it")


def check_output_folder(out_dir, *, protected=(), rebuilding=None) -> Path:
    """Refuse an output folder the builder must not replace; return its absolute path.

    Fine: a missing or empty folder, or one ``dialshift build`` wrote. Refused with one line: a file; a non-empty
    folder without the marker (naming what it holds); a folder that is, is inside or contains one of ``protected``
    (the raw data directory). With ``rebuilding`` (the configs about to be written), a marked folder must also have
    its card (:func:`check_card_matches_marker`).
    """
    out_dir = output_path(out_dir)
    real = out_dir.resolve()
    for folder in protected:
        folder = Path(folder).expanduser().resolve()
        if real == folder or folder in real.parents or real in folder.parents:
            relation = "is" if real == folder else ("is inside" if folder in real.parents else "contains")
            raise DialshiftError(f"--out {out_dir} {relation} the raw data directory {folder}; "
                                 f"choose an output folder outside it")
    if out_dir.exists() and not out_dir.is_dir():
        raise DialshiftError(f"output path {out_dir} exists and is not a directory; choose another --out")
    check_not_nested(out_dir)
    if not out_dir.is_dir():
        return out_dir
    try:
        entries = sorted(entry.name for entry in os.scandir(out_dir))
    except OSError as error:
        raise DialshiftError(f"cannot read output directory {out_dir}: {error.strerror}") from None
    if entries and owned_files(out_dir) is None:
        shown = ", ".join(entries[:SHOWN_FOREIGN]) + (f" and {len(entries) - SHOWN_FOREIGN} more"
                                                      if len(entries) > SHOWN_FOREIGN else "")
        raise DialshiftError(f"{out_dir} is not a dialshift dataset folder (no {MARKER}) and is not empty: "
                             f"it holds {shown}; dialshift never replaces a folder it did not build: "
                             f"choose a new or empty --out")
    if rebuilding is not None:
        check_card_matches_marker(out_dir, rebuilding)
    refuse_foreign_listed(out_dir, foreign_listed_files(out_dir))
    return out_dir


def refuse_foreign_listed(out_dir: Path, foreign: list[str]) -> None:
    """One line naming the ``foreign`` files the marker lists (see :func:`foreign_listed_files`), if any."""
    if foreign:
        shown = ", ".join(foreign[:SHOWN_FOREIGN]) + (f" and {len(foreign) - SHOWN_FOREIGN} more"
                                                      if len(foreign) > SHOWN_FOREIGN else "")
        them = "it" if len(foreign) == 1 else "them"
        raise DialshiftError(f"{out_dir / MARKER} lists {shown} as written by dialshift build, but "
                             f"{'it is' if len(foreign) == 1 else 'they are'} not what it wrote (another checksum, or "
                             f"a file it never recorded), so a build would delete {them}; dialshift never does: if "
                             f"{them} {'is' if len(foreign) == 1 else 'are'} yours, move {them} out of the folder; if "
                             f"dialshift's own but damaged, delete {them} (rm "
                             + " ".join(str(out_dir / path) for path in foreign[:SHOWN_FOREIGN])
                             + "); then build again")


def check_card_matches_marker(out_dir, rebuilding=()) -> None:
    """Refuse a build into a marked folder whose card cannot vouch for it (one line with the way out).

    The marker lists the configs a build wrote; the card is what a rebuild reads to keep them. A card that is
    missing, unreadable, not dialshift's (no ``dialshift`` block: the user's own README after ``rm -rf DIR/*``) or
    silent about a listed config would make the build drop those configs or overwrite the user's file, so unless
    every such config is in ``rebuilding`` the build stops. An unreadable or foreign card is never replaced."""
    out_dir = Path(out_dir)
    marker = read_marker(out_dir)
    if marker is None:
        return
    card_path = out_dir / README
    listed = marker_configs(out_dir)
    command = rebuild_all_hint(out_dir, rebuilding)
    declared: set[str] = set()
    if card_path.exists() or card_path.is_symlink():
        try:
            with open(card_path, encoding="utf-8") as handle:
                front_matter = handle.read(4) == "---\n"
            card = load_card(card_path) if front_matter else None
        except (OSError, UnicodeDecodeError) as error:
            card, problem = None, f"{card_path}: unreadable card ({error})"
        except DialshiftError as error:
            card, problem = None, str(error)
        else:
            problem = None
        if problem:
            raise DialshiftError(f"{problem}; dialshift does not replace a card it cannot read: move it aside, then "
                                 f"rebuild the configs the folder held: {command}")
        if card is None or METADATA_KEY not in card.data.to_dict():
            raise DialshiftError(f"{card_path} is not the card dialshift wrote (no `{METADATA_KEY}` block), though "
                                 f"{out_dir / MARKER} says dialshift built {out_dir}; dialshift does not replace your "
                                 f"file: move it aside and rebuild with: {command}; or, if the folder is yours now, "
                                 f"delete {out_dir / MARKER} and build into another folder")
        declared = set(declared_configs(out_dir))
    lost = sorted(listed - declared - set(rebuilding))
    if lost:
        names = ", ".join(lost[:SHOWN_FOREIGN]) + (" ..." if len(lost) > SHOWN_FOREIGN else "")
        state = "is missing" if not card_path.exists() else f"does not declare {names}"
        raise DialshiftError(f"{card_path} {state}, though {out_dir / MARKER} lists {len(lost)} config(s) dialshift "
                             f"built there ({names}): a build would drop them; restore {README} (e.g. from git or "
                             f"a backup), or rebuild them "
                             f"together: {command}; or, if you deleted them on purpose, delete {out_dir / MARKER}")
