"""Hub dataset folders: write, read back, validate and push.

A folder holds one sub-folder of parquet files per config (``<config>/<split>-00000-of-00001.parquet``, the layout
``DatasetDict.push_to_hub`` produces) and a ``README.md`` whose YAML declares ``configs`` (data files per split) and
``dataset_info`` (features and split sizes per config), the licences and task tags, followed by a card body rendered
from ``hub_cards/dataset_card.md``. Such a folder loads offline with ``datasets.load_dataset(folder, config)`` and
uploads unchanged to the Hub.

Safety rules (docs/safety.md):

* The builder only replaces what it owns. It marks its folders with ``.dialshift-build.json`` (the files it wrote),
  refuses any other non-empty folder, and carries every file it did not write (notes, ``.git/``) into the new folder.
* Writes are atomic: the new folder is assembled beside the target and swapped in by renames (:mod:`dialshift.io`),
  so an interrupted build leaves the previous folder intact; the next build removes the leftovers.
* Writers of one folder take a lock beside it (``.<name>.lock``) and read the folder's state only under it, so two
  builds into one folder merge instead of losing a config.
* The card records a fingerprint (size, sha256) of every parquet file; ``validate`` and a rebuild check it.
* A card's ``data_files`` only name files inside the folder; a push never deletes remote files unless asked to.

The same inputs give byte-identical files.
"""

import hashlib
import json
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath, PureWindowsPath

from tqdm.auto import tqdm

from dialshift import __version__
from dialshift.errors import DialshiftError
from dialshift.io import (
    atomic_write,
    files_digest,
    remove_stale_temporaries,
    restore_interrupted_swap,
    swap_folder,
    temporary_sibling,
    update_digest,
)

README = "README.md"
CARD_TEMPLATE = "dataset_card.md"
SECTION_START = "<!-- dialshift:family {name} -->"
SECTION_END = "<!-- dialshift:end {name} -->"
#: The card's YAML key holding dialshift's own metadata: ``{version, configs: {name: {config, facts, files}}}``.
METADATA_KEY = "dialshift"
#: The file that marks a folder as written by ``dialshift build``; it lists the files the builder owns there.
MARKER = ".dialshift-build.json"
MARKER_FORMAT = 1
#: Seconds a build waits for another build of the same folder before giving up.
LOCK_TIMEOUT = 3600.0
#: Foreign entries named in a refusal (the rest are counted).
SHOWN_FOREIGN = 5


def parquet_name(split: str) -> str:
    return f"{split}-00000-of-00001.parquet"


def rebuild_hint(folder, name: str) -> str:
    """The fix for a damaged or missing config: the command that rebuilds it."""
    return f"rebuild that config: dialshift build --config {name} --out {folder}"


@dataclass
class FamilyCard:
    """What a family contributes to the card: its section of the body and its YAML metadata."""

    name: str
    section: str
    license: str = ""
    languages: tuple = ()
    task_categories: tuple = ()
    citation: str = ""


# ----------------------------------------------------------------------------------------------- ownership


def output_path(out_dir) -> Path:
    """The absolute path of an output folder (a symlinked folder is followed: the build writes where it points)."""
    path = Path(out_dir).expanduser().absolute()
    return path.resolve() if path.is_symlink() else path


def read_marker(folder) -> dict | None:
    """The folder's build marker (``{"tool", "format", "version", "files"}``), or ``None`` when it has none."""
    path = Path(folder) / MARKER
    if not path.is_file():
        return None
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(marker, dict) or marker.get("tool") != "dialshift" or not isinstance(marker.get("files"), list):
        return None
    return marker


def owned_files(folder) -> set[str] | None:
    """Relative paths (POSIX) of the files ``dialshift build`` wrote in ``folder``, or ``None`` if it did not build it.

    From the marker; a folder built before markers existed is recognised by the ``dialshift`` block of its card, and
    then owns its card and the parquet files its card declares.
    """
    folder = Path(folder)
    marker = read_marker(folder)
    if marker is not None:
        return {str(path) for path in marker["files"]} | {MARKER}
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
    return out_dir


def marker_configs(folder) -> set[str]:
    """The configs whose files the folder's build marker lists (empty without a marker)."""
    marker = read_marker(folder)
    return {PurePosixPath(path).parts[0] for path in (marker or {}).get("files", ())
            if len(PurePosixPath(path).parts) > 1}


def rebuild_all_hint(folder, configs=()) -> str:
    """The command that rebuilds every config the folder's marker lists (and ``configs``): plain
    ``dialshift build --out DIR`` when that is every config, else one ``--config`` per config."""
    from dialshift.registry import all_configs

    names = sorted(marker_configs(folder) | set(configs))
    everything = {name for name, config in all_configs().items() if not config.optional}
    if not names or everything <= set(names):
        return f"dialshift build --out {folder}"
    return "dialshift build " + " ".join(f"--config {name}" for name in names) + f" --out {folder}"


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
            card = _load_card(card_path) if front_matter else None
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


def lock_path(out_dir) -> Path:
    """The lock file every writer of ``out_dir`` holds: ``.<name>.lock`` beside it (not inside: the folder is
    swapped). It stays after the build (an empty file; deleting a lock file others may wait on is not safe) and may
    be deleted when no build runs."""
    out_dir = Path(out_dir)
    return out_dir.parent / f".{out_dir.name}.lock"


@contextmanager
def folder_lock(out_dir, timeout: float | None = None):
    """Hold the lock of ``out_dir`` (re-entrant within a thread). A second writer waits (saying so on stderr) up to
    ``timeout`` seconds (default :data:`LOCK_TIMEOUT`), then fails with one line. On first acquisition, a swap that
    was killed half-way is undone and stale temporary folders of ``out_dir`` are removed: holding the lock, no other
    writer can be using them."""
    from filelock import FileLock, Timeout

    out_dir = Path(out_dir)
    path = lock_path(out_dir)
    lock = FileLock(path, is_singleton=True)
    outermost = not lock.is_locked
    if outermost:
        _ensure_writable(out_dir.parent)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            print(f"dialshift: {out_dir} is being written by another dialshift process; waiting for it (lock {path})",
                  file=sys.stderr)
            limit = LOCK_TIMEOUT if timeout is None else timeout
            try:
                lock.acquire(timeout=limit)
            except Timeout:
                raise DialshiftError(f"{out_dir}: another dialshift process held the lock {path} for {limit:g} s; "
                                     f"wait for it to finish and run again") from None
    else:
        lock.acquire()
    try:
        if outermost:
            restore_interrupted_swap(out_dir)
            remove_stale_temporaries(out_dir, locked=True)
        yield
    finally:
        lock.release()


def _carry_over(old: Path, new: Path, owned: set[str]) -> None:
    """Put every file of ``old`` that the builder did not write into ``new`` at the same relative path (hard links,
    else copies; symlinks stay symlinks; empty folders are kept). Nothing in ``old`` changes."""
    owned_dirs = {PurePosixPath(path).parts[0] for path in owned if len(PurePosixPath(path).parts) > 1}
    for dirpath, dirnames, filenames in os.walk(old):  # never follows symlinked folders
        here = Path(dirpath)
        relative_dir = here.relative_to(old)
        if relative_dir != Path(".") and not dirnames and not filenames:
            (new / relative_dir).mkdir(parents=True, exist_ok=True)
        for name in filenames + [name for name in dirnames if (here / name).is_symlink()]:
            relative = (relative_dir / name).as_posix()
            if relative in owned or (relative in owned_dirs and (here / name).is_symlink()):
                continue
            target = new / relative
            if target.exists() or target.is_symlink():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = here / name
            if source.is_symlink():
                os.symlink(os.readlink(source), target)
                continue
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)


# ----------------------------------------------------------------------------------------------- writing


def write_hub_folder(
    out_dir, configs: dict, cards: list[FamilyCard], *, keep=(), metadata: dict | None = None,
    pretty_name: str = "dialshift", progress: bool = True,
) -> Path:
    """Write ``{config_name: DatasetDict}`` and the card into ``out_dir`` atomically; return the folder path.

    ``keep`` names configs of the existing ``out_dir`` to carry over unchanged: their files are checked against the
    card's fingerprint and copied, their ``dataset_info`` reused, never re-read or re-written. ``metadata`` is
    ``{config: {...}}`` (typed config and build facts) stored under the card's ``dialshift`` key, with each config's
    file fingerprints added; a kept config keeps its entry unless ``metadata`` replaces it. Configs are written in
    sorted order so the README is independent of build order. Files in ``out_dir`` the builder did not write are
    carried over; a folder it did not build is refused (:func:`check_output_folder`). The whole write holds
    :func:`folder_lock`; callers that read the folder's state to decide ``keep`` should hold it around that too.
    """
    out_dir = output_path(out_dir)
    parent = out_dir.parent
    _ensure_writable(parent)
    keep = sorted(set(keep) - set(configs))
    if not configs and not keep:
        raise DialshiftError("nothing to write: no config was built")
    for name in configs:
        _check_config_name(name)
    with folder_lock(out_dir):
        check_output_folder(out_dir, rebuilding=set(configs))
        owned = (owned_files(out_dir) or set()) if out_dir.is_dir() else set()
        old_infos, old_meta = (_card_infos(out_dir), folder_metadata(out_dir)) if keep else ({}, {})
        for name in keep:
            if name not in old_infos:
                raise DialshiftError(f"{out_dir / README}: no dataset_info for config {name!r} to keep; "
                                     f"{rebuild_hint(out_dir, name)}")
            problems = check_config_files(out_dir, name, sorted(old_infos[name].splits),
                                          old_meta.get(name, {}).get("files"))
            if problems:
                raise DialshiftError(f"cannot keep config {name!r}: {problems[0]}")
        tmp = temporary_sibling(out_dir)
        tmp.mkdir()
        try:
            infos = {}
            with _quiet_datasets():
                for name in tqdm(sorted(configs), desc="writing parquet", unit="config", disable=not progress):
                    infos[name] = _write_config(tmp, name, configs[name])
            for name in keep:
                shutil.copytree(out_dir / name, tmp / name)
                infos[name] = old_infos[name]
            meta = {name: dict(entry) for name, entry in old_meta.items() if name in keep}
            meta.update({name: dict(entry) for name, entry in (metadata or {}).items() if name in infos})
            for name in infos:
                entry = meta.setdefault(name, {})
                if name in configs or "files" not in entry:
                    entry["files"] = config_fingerprints(tmp, name, sorted(infos[name].splits))
            atomic_write(tmp / README, render_card(infos, cards, pretty_name=pretty_name, folder=tmp, metadata=meta))
            written = sorted({README} | {path for entry in meta.values() for path in entry["files"]})
            atomic_write(tmp / MARKER, json.dumps({"tool": "dialshift", "format": MARKER_FORMAT,
                                                   "version": __version__, "files": written}, indent=2) + "\n")
            if out_dir.is_dir():
                _carry_over(out_dir, tmp, owned | set(written))
            swap_folder(tmp, out_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return out_dir


def _write_config(folder: Path, name: str, splits) -> "datasets.DatasetInfo":  # noqa: F821
    """Write one config's parquet files; return its ``DatasetInfo`` (features, split sizes)."""
    from datasets.info import DatasetInfo
    from datasets.splits import SplitDict, SplitInfo

    split_dict = SplitDict()
    for split, dataset in sorted(splits.items()):
        target = folder / name / parquet_name(split)
        target.parent.mkdir(parents=True, exist_ok=True)
        dataset.to_parquet(str(target))
        split_dict.add(SplitInfo(name=split, num_bytes=_arrow_nbytes(target), num_examples=len(dataset)))
    first = splits[sorted(splits)[0]]
    return DatasetInfo(features=first.features, splits=split_dict, config_name=name)


def _card_infos(folder: Path) -> dict:
    from datasets.info import DatasetInfosDict

    return dict(DatasetInfosDict.from_dataset_card_data(read_card(folder).data))


@contextmanager
def _quiet_datasets():
    """Silence the per-file progress bars of ``datasets`` while we show our own."""
    import datasets

    was_enabled = not datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if was_enabled:
            datasets.enable_progress_bars()


def _ensure_writable(parent: Path) -> None:
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DialshiftError(f"cannot create output directory {parent}: {error.strerror}") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DialshiftError(f"output directory {parent} is not writable; choose another --out or fix its permissions")


def _check_config_name(name: str) -> None:
    if not name or "/" in name or "\\" in name or name.startswith(".") or name in (README, MARKER):
        raise DialshiftError(f"invalid config name {name!r}: use letters, digits, '_', '.' and '-'")


# ----------------------------------------------------------------------------------------------- fingerprints


def file_fingerprint(path) -> dict:
    """``{"size": bytes, "sha256": hex}`` of one file."""
    return {"size": Path(path).stat().st_size, "sha256": update_digest(hashlib.sha256(), path).hexdigest()}


def config_fingerprints(folder, name: str, splits) -> dict:
    """``{"<config>/<file>": file_fingerprint}`` for the parquet file of each split of config ``name``."""
    return {f"{name}/{parquet_name(split)}": file_fingerprint(Path(folder) / name / parquet_name(split))
            for split in splits}


def check_config_files(folder, name: str, splits, recorded: dict | None = None) -> list[str]:
    """Problems with config ``name``'s parquet files, one line each, naming the file and the fix: missing, not a
    readable parquet file (truncated, damaged), or different from the ``recorded`` fingerprint (size, sha256)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    problems = []
    for split in splits:
        relative = f"{name}/{parquet_name(split)}"
        path = folder / relative
        if not path.is_file():
            problems.append(f"{relative}: file is missing (the card declares config {name!r}); "
                            f"{rebuild_hint(folder, name)}")
            continue
        try:
            pq.read_metadata(path)
        except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ... for damaged files
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            problems.append(f"{relative}: not a readable parquet file, truncated or damaged ({reason}); "
                            f"{rebuild_hint(folder, name)}")
            continue
        expected = (recorded or {}).get(relative)
        if not expected:
            continue
        actual = file_fingerprint(path)
        if actual != {"size": expected.get("size"), "sha256": expected.get("sha256")}:
            resized = actual["size"] != expected.get("size")
            what = f"{actual['size']:,} bytes, recorded {expected.get('size')}" if resized else "same size, new sha256"
            problems.append(f"{relative}: differs from the fingerprint the card recorded at build time ({what}): "
                            f"changed, or swapped with another config's file; {rebuild_hint(folder, name)}")
    return problems


# ----------------------------------------------------------------------------------------------- the card


def render_card(infos: dict, cards: list[FamilyCard], *, folder: Path, pretty_name: str = "dialshift",
                metadata: dict | None = None) -> str:
    """The README for ``folder`` (whose parquet files are written), from ``{config: DatasetInfo}``: YAML (licences,
    tags, ``configs``, ``dataset_info``, the ``dialshift`` metadata block) and the body from ``hub_cards``."""
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    from dialshift.provenance import INSTALL_COMMAND, corpus_rows

    licenses = sorted({card.license for card in cards if card.license})
    card_data = DatasetCardData(
        pretty_name=pretty_name,
        license=licenses[0] if len(licenses) == 1 else (licenses or None),
        language=sorted({language for card in cards for language in card.languages}) or None,
        task_categories=sorted({task for card in cards for task in card.task_categories}) or None,
        tags=["dialogue", "distribution-shift", "calibration", "robustness", "dialshift"],
    )
    metadata_configs = MetadataConfigs()
    ordered = DatasetInfosDict()
    for name in sorted(infos):
        splits = sorted(infos[name].splits)
        metadata_configs[name] = {"data_files": [{"split": split, "path": f"{name}/{split}-*"} for split in splits]}
        ordered[name] = infos[name]
    metadata_configs.to_dataset_card_data(card_data)
    ordered.to_dataset_card_data(card_data)
    if metadata:
        card_data[METADATA_KEY] = {"version": __version__,
                                   "configs": {name: metadata[name] for name in sorted(metadata)}}

    sections = [
        SECTION_START.format(name=card.name) + "\n" + card.section.strip() + "\n" + SECTION_END.format(name=card.name)
        for card in sorted(cards, key=lambda c: c.name)
        if card.section.strip()
    ]
    rows = [
        (name, ", ".join(f"{split} {infos[name].splits[split].num_examples:,}" for split in sorted(infos[name].splits)))
        for name in sorted(infos)
    ]
    template = resources.files("dialshift_cards").joinpath(CARD_TEMPLATE).read_text(encoding="utf-8")
    card = DatasetCard.from_template(
        card_data,
        template_str=template,
        pretty_name=pretty_name,
        version=__version__,
        config_rows=rows,
        family_sections="\n\n".join(sections),
        citations=[card.citation.strip() for card in sorted(cards, key=lambda c: c.name) if card.citation.strip()],
        fingerprint=folder_fingerprint(folder),
        install=INSTALL_COMMAND,
        raw_corpora=corpus_rows(metadata or {}),
    )
    return str(card).rstrip("\n") + "\n"


def _arrow_nbytes(path: Path) -> int:
    """In-memory Arrow size of a written parquet file: read back, so a rewrite of the same rows is byte-identical."""
    import pyarrow.parquet as pq

    return int(pq.read_table(path).nbytes)


def folder_fingerprint(folder) -> str:
    """A sha256 over every parquet file of the folder (path and bytes): the dataset revision of a local build."""
    return files_digest(sorted(Path(folder).rglob("*.parquet")), root=folder)


# ----------------------------------------------------------------------------------------------- reading


def read_card(folder):
    """The folder's README as a ``huggingface_hub.DatasetCard``; a clear error when it is missing or unreadable."""
    from dialshift.io import interrupted_swap_hint

    if not Path(folder).is_dir():
        raise DialshiftError(f"{folder} is not a directory; pass the folder `dialshift build --out` wrote"
                             f"{interrupted_swap_hint(folder)}")
    path = Path(folder) / README
    if not path.is_file():
        raise DialshiftError(f"{path}: no dataset card; is {folder} a folder written by `dialshift build`?")
    try:
        return _load_card(path)
    except DialshiftError as error:
        raise DialshiftError(f"{error}; move it aside and rebuild the folder's configs: "
                             f"{rebuild_all_hint(folder)}") from None


#: The last card parsed, by (path, inode, size, mtime): a scoring run reads the same card several times, and parsing
#: a full build's front matter (pure-Python YAML, ~10,000 lines) costs seconds each time.
_CARD_CACHE: dict = {}


def _load_card(path: Path):
    import copy

    from huggingface_hub import DatasetCard

    stat = path.stat()
    key = (str(path.absolute()), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if key in _CARD_CACHE:
        return copy.deepcopy(_CARD_CACHE[key])  # a copy: callers may edit and save theirs
    try:
        card = DatasetCard.load(path)
    except Exception as error:  # the YAML parser's errors vary by version
        reason = " ".join(str(error).split())[:200]
        raise DialshiftError(f"{path}: unreadable card front matter ({reason})") from None
    _CARD_CACHE.clear()
    _CARD_CACHE[key] = card
    return copy.deepcopy(card)


def declared_configs(folder) -> dict[str, dict[str, str | list[str]]]:
    """``{config: {split: data_files pattern(s)}}`` as declared in the README YAML.

    A dataset folder only reads inside itself: a ``data_files`` entry that is absolute, a URL or climbs out with
    ``..`` is refused with one line (``datasets`` would follow ``../`` out of the folder).
    """
    card = read_card(folder)
    declared = {}
    for entry in card.data.to_dict().get("configs") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("config_name"), str):
            raise DialshiftError(f"{Path(folder) / README}: a `configs` entry has no config_name: {entry!r:.80}")
        name = entry["config_name"]
        files = entry.get("data_files") or []
        if isinstance(files, (str, list)) and all(isinstance(item, str) for item in _as_list(files)):
            files = [{"split": "train", "path": files}]
        splits = {}
        for item in files:
            if not isinstance(item, dict) or "path" not in item:
                raise DialshiftError(f"{Path(folder) / README}: config {name!r}: a data_files entry has no path: "
                                     f"{item!r:.80}")
            split = str(item.get("split", "train"))
            for pattern in _as_list(item["path"]):
                _check_inside(folder, name, split, pattern)
            splits[split] = item["path"]
        declared[name] = splits
    return declared


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def _check_inside(folder, name: str, split: str, pattern) -> None:
    """Refuse a ``data_files`` pattern that could read outside the dataset folder."""
    text = str(pattern)
    posix, windows = PurePosixPath(text.replace("\\", "/")), PureWindowsPath(text)
    if not text or "://" in text or posix.is_absolute() or windows.is_absolute() or windows.drive \
            or ".." in posix.parts:
        raise DialshiftError(f"{Path(folder) / README}: config {name!r} split {split!r}: data_files path {text!r} "
                             f"points outside the dataset folder; a dataset folder only reads files inside itself "
                             f"(write it relative, e.g. {name}/{split}-*)")


def data_files(folder, configs=None) -> dict[str, dict[str, list[str]]]:
    """``{config: {split: [parquet paths]}}``: the card's ``data_files`` patterns matched inside ``folder``, for every
    config it declares or only ``configs``.

    The one place that turns a card's patterns into files: a missing folder, a card declaring nothing, patterns
    leaving the folder, an unknown config and a split whose pattern matches no file are each refused with one line
    naming the fix.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DialshiftError(f"{folder}: dataset folder does not exist (build one with `dialshift build`)")
    declared = declared_configs(folder)
    if not declared:
        raise DialshiftError(f"{folder / README}: declares no configs (an empty dataset folder?)")
    names = list(declared) if configs is None else list(configs)
    for name in names:
        if name not in declared:
            raise DialshiftError(f"{folder / README}: no config {name!r} (it declares: {', '.join(sorted(declared))})")
    root = folder.resolve()
    result = {}
    for name in names:
        result[name] = {}
        for split, patterns in declared[name].items():
            paths = [str(path) for pattern in _as_list(patterns) for path in sorted(folder.glob(str(pattern)))
                     if path.is_file() and path.resolve().is_relative_to(root)]
            if not paths:
                raise DialshiftError(f"{folder}: config {name!r} split {split!r}: no file matches {patterns!r}; "
                                     f"{rebuild_hint(folder, name)}")
            result[name][split] = paths
    return result


def folder_metadata(folder) -> dict:
    """``{config: {"config": ..., "facts": ...}}`` from the card's ``dialshift`` block ({} for a folder without one)."""
    if not (Path(folder) / README).is_file():
        return {}
    block = read_card(folder).data.to_dict().get(METADATA_KEY) or {}
    return dict(block.get("configs") or {})


def folder_configs(folder) -> dict:
    """``{config: BenchmarkConfig}`` of a built folder: from its card's metadata, else from the installed families."""
    from dialshift.configs import BenchmarkConfig
    from dialshift.registry import all_configs

    stored = folder_metadata(folder)
    registered = all_configs()
    result = {}
    for name in declared_configs(folder):
        if name in stored and "config" in stored[name]:
            data = stored[name]["config"]
            if "baselines" not in data and name in registered:  # a card written before configs declared baselines
                data = {**data, "baselines": registered[name].to_dict()["baselines"]}
            result[name] = BenchmarkConfig.from_dict(data)
        elif name in registered:
            result[name] = registered[name]
    return result


# ----------------------------------------------------------------------------------------------- validating


@dataclass
class ValidationReport:
    folder: Path
    rows: list = field(default_factory=list)  # (config, split, num_rows)
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def validate_hub_folder(folder, *, cache_dir=None, expected_configs=None, progress: bool = False) -> ValidationReport:
    """Check that every declared config loads with ``datasets.load_dataset`` and matches its declaration.

    Checks: the card exists with a body; its ``data_files`` stay inside the folder (else one-line error); every
    config declared under ``configs`` has ``dataset_info`` with the same splits; every split's file is present, is a
    readable parquet file and matches the size and sha256 the card recorded at build time (so files swapped between
    configs are caught); the loaded features and row counts equal the declared ones; no parquet file is left
    undeclared; and every config in ``expected_configs`` (e.g. a family's list) is present. Each problem is one line
    naming the file and the fix.
    """
    import datasets
    from datasets.info import DatasetInfosDict

    from dialshift.identity import identity_problems

    folder = Path(folder).expanduser().absolute()
    report = ValidationReport(folder)
    card = read_card(folder)
    if not card.text.strip():
        report.problems.append(f"{README}: the card has no body")
    declared = declared_configs(folder)
    if not declared:
        report.problems.append(f"{README}: declares no configs")
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    recorded = folder_metadata(folder)
    report.problems.extend(f"{README}: {problem}" for problem in identity_problems(recorded))
    for missing in sorted(set(expected_configs or ()) - set(declared)):
        report.problems.append(f"{missing}: expected config is not in the folder")
    file_problems = {name: check_config_files(folder, name, sorted(files), recorded.get(name, {}).get("files"))
                     for name, files in sorted(declared.items())}
    if not any(file_problems.values()):  # datasets raises on a missing data file: list only a complete folder
        try:
            listed = set(datasets.get_dataset_config_names(str(folder)))
        except Exception as error:  # datasets' errors vary by version
            listed = set(declared)
            report.problems.append(f"{README}: datasets cannot list the configs ({type(error).__name__}: "
                                   f"{str(error).splitlines()[0] if str(error) else ''})")
        for name in sorted(set(declared) - listed):
            report.problems.append(f"{name}: not listed by datasets.get_dataset_config_names")

    cache = Path(cache_dir) if cache_dir else Path(tempfile.mkdtemp(prefix="dialshift-validate-"))
    try:
        iterator = sorted(declared.items())
        iterator = tqdm(iterator, desc="validating", unit="config", disable=not progress)
        for name, files in iterator:
            report.problems.extend(file_problems[name] or
                                   _validate_config(folder, name, files, infos.get(name), cache, report.rows))
    finally:
        if not cache_dir:
            shutil.rmtree(cache, ignore_errors=True)
    known = {folder / name / parquet_name(split) for name, files in declared.items() for split in files}
    for path in sorted(folder.rglob("*.parquet")):
        if path not in known:
            report.problems.append(f"{path.relative_to(folder)}: parquet file not declared in {README}")
    return report


def _parquet_features(path: Path):
    import datasets
    import pyarrow.parquet as pq

    return datasets.Features.from_arrow_schema(pq.read_schema(path))


def _validate_config(folder: Path, name: str, files: dict, info, cache: Path, rows: list) -> list[str]:
    """Load one config whose files :func:`check_config_files` accepted and compare it with its declaration."""
    import datasets

    problems = []
    if info is None:
        return [f"{name}: no dataset_info entry in {README}; {rebuild_hint(folder, name)}"]
    declared_splits = set(info.splits or {})
    if declared_splits != set(files):
        problems.append(f"{name}: data_files splits {sorted(files)} differ from dataset_info splits "
                        f"{sorted(declared_splits)}")
    for split in sorted(files):
        if info.features is not None and _parquet_features(folder / name / parquet_name(split)) != info.features:
            problems.append(f"{name}/{split}: the parquet file's features differ from the declaration in {README}")
    if problems:
        return problems
    try:
        with _quiet_datasets():
            loaded = datasets.load_dataset(str(folder), name, cache_dir=str(cache))
    except Exception as error:
        return [f"{name}: load_dataset failed: {type(error).__name__}: {str(error).splitlines()[0]}"]
    for split in sorted(files):
        if split not in loaded:
            problems.append(f"{name}/{split}: split missing after loading")
            continue
        dataset = loaded[split]
        rows.append((name, split, len(dataset)))
        if info.features is not None and dataset.features != info.features:
            problems.append(f"{name}/{split}: features differ from the declaration in {README}")
        expected = info.splits[split].num_examples
        if expected != len(dataset):
            problems.append(f"{name}/{split}: {len(dataset):,} rows, the card declares {expected:,}")
    return problems


# ----------------------------------------------------------------------------------------------- pushing


def upload_plan(folder) -> list[str]:
    """The exact files :func:`push_hub_folder` uploads (relative paths): the card, the provenance file
    (:mod:`dialshift.provenance`, written at push time) and the declared parquet files."""
    from dialshift.provenance import PROVENANCE_FILE

    folder = Path(folder)
    files = [README, PROVENANCE_FILE]
    for name, splits in sorted(declared_configs(folder).items()):
        files.extend(f"{name}/{parquet_name(split)}" for split in sorted(splits))
    return files


def check_repo_id(repo_id: str) -> str:
    """Refuse a repository id that is not ``ORG/NAME`` (one line), before any work."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise DialshiftError(f"--repo-id {repo_id!r:.80} must look like ORG/NAME, e.g. my-org/dialshift")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        reason = str(error).splitlines()[0][:160]
        raise DialshiftError(f"--repo-id {repo_id!r:.80} is not a valid Hub repository id ({reason})") from None
    return repo_id


def make_api(token=None):
    """The Hub client (tests replace this function with a fake)."""
    from huggingface_hub import HfApi

    return HfApi(token=token)


@dataclass
class PushPlan:
    """What a push does: ``uploads`` (local relative paths = paths in the repo), ``deletions`` (remote paths, only
    with ``delete_remote_extras``), ``kept_remote`` (remote parquet files not in the folder, left alone) and
    ``remote_error`` (why the remote files could not be listed, else ``None``)."""

    uploads: list
    deletions: list = field(default_factory=list)
    kept_remote: list = field(default_factory=list)
    remote_error: str | None = None


def push_plan(folder, repo_id: str, *, api, revision=None, delete_remote_extras: bool = False,
              strict: bool = True) -> PushPlan:
    """Compare the folder's :func:`upload_plan` with the remote repository's files.

    Remote parquet files the folder does not have are kept unless ``delete_remote_extras``; other remote files
    (``.gitattributes``, images) are never deleted. A repository or branch that does not exist yet has no files.
    With ``strict=False`` a failure to list the remote files is recorded in ``remote_error`` instead of raised.
    """
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    plan = PushPlan(uploads=upload_plan(folder))
    try:
        remote = api.list_repo_files(repo_id, repo_type="dataset", revision=revision)
    except (RepositoryNotFoundError, RevisionNotFoundError):
        remote = []
    except Exception as error:  # offline, network, auth
        if strict:
            raise
        plan.remote_error = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        return plan
    extras = sorted(path for path in remote if path.endswith(".parquet") and path not in plan.uploads)
    if delete_remote_extras:
        plan.deletions = extras
    else:
        plan.kept_remote = extras
    return plan


def push_hub_folder(folder, repo_id: str, *, token=None, private: bool = False, revision=None, api=None,
                    delete_remote_extras: bool = False) -> str:
    """Validate the folder, then upload its card and declared parquet files as a dataset repo in one commit; return
    the commit URL.

    Files are uploaded by their declared paths, so a symlinked config folder is uploaded like any other. Remote
    files the folder does not have are kept; with ``delete_remote_extras`` the remote parquet files not in the
    folder are deleted in the same commit.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    check_repo_id(repo_id)
    folder = Path(folder)
    report = validate_hub_folder(folder)
    if not report.ok:
        raise DialshiftError(f"{folder} does not validate ({report.problems[0]}); run `dialshift validate {folder}`")
    api = api or make_api(token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    plan = push_plan(folder, repo_id, api=api, revision=revision, delete_remote_extras=delete_remote_extras,
                     strict=delete_remote_extras)
    from dialshift.provenance import PROVENANCE_FILE, provenance_bytes

    with tempfile.TemporaryDirectory(prefix="dialshift-push-") as scratch:
        written = Path(scratch) / PROVENANCE_FILE
        written.write_bytes(provenance_bytes(folder_metadata(folder)))
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(written if path == PROVENANCE_FILE
                                                                                 else folder / path))
                      for path in plan.uploads]
        operations += [CommitOperationDelete(path_in_repo=path) for path in plan.deletions]
        commit = api.create_commit(
            repo_id=repo_id,
            repo_type="dataset",
            revision=revision,
            operations=operations,
            commit_message=f"dialshift {__version__}: {len(declared_configs(folder))} configs",
        )
    return str(getattr(commit, "commit_url", commit))


# ----------------------------------------------------------------------------------------------- Spaces

#: The name of the leaderboard Space (in the organisation of the dataset repository).
LEADERBOARD_SPACE = "dialshift-leaderboard"
#: The files of a metric module folder that make its Space (``<name>.py`` is added per metric).
METRIC_SPACE_FILES = ("README.md", "app.py", "requirements.txt")
LEADERBOARD_SPACE_FILES = ("README.md", "app.py", "requirements.txt")


@dataclass
class SpacePlan:
    """One Space to publish: ``repo_id`` and ``files`` (``{path in the repo: local path or bytes}``)."""

    repo_id: str
    files: dict


def _requirements(path: Path, wheel: Path | None) -> bytes:
    """A Space's requirements with ``dialshift`` pinned to what is pushed (keeping an ``[extra]``): the wheel uploaded
    beside them (``./dialshift-X-py3-none-any.whl``), else this dialshift version from the index."""
    lines = path.read_text(encoding="utf-8").splitlines()
    pinned = f"./{wheel.name}" if wheel is not None else None
    for number, line in enumerate(lines):
        name, bracket, extra = line.strip().partition("[")
        if name == "dialshift":
            extra = bracket + extra
            lines[number] = f"{pinned}{extra}" if pinned else f"dialshift{extra}=={__version__}"
    return ("\n".join(lines) + "\n").encode()


def space_plans(org: str, *, wheel=None, results=None) -> list[SpacePlan]:
    """The six metric Spaces (``ORG/<metric>``) and the leaderboard Space (``ORG/dialshift-leaderboard``) with
    their files, from the installed ``dialshift_metrics`` and ``dialshift_cards/leaderboard``; ``wheel`` (a built
    dialshift wheel) is uploaded into each Space and named in its requirements; ``results`` (a results store) is
    uploaded into the leaderboard Space as ``results/``."""
    from dialshift.metrics import MODULES

    wheel = Path(wheel) if wheel else None
    if wheel is not None and (not wheel.is_file() or not wheel.name.startswith("dialshift-")
                              or wheel.suffix != ".whl"):
        raise DialshiftError(f"--wheel {wheel}: not a dialshift wheel file (build one with `python -m build`)")
    plans = []
    metrics_root = Path(str(resources.files("dialshift_metrics")))
    for name in MODULES:
        folder = metrics_root / name
        files = {f"{name}.py": folder / f"{name}.py"}
        files.update({item: folder / item for item in METRIC_SPACE_FILES})
        plans.append(SpacePlan(f"{org}/{name}", files))  # evaluate.load("ORG/<name>") reads <name>.py
    folder = Path(str(resources.files("dialshift_cards").joinpath("leaderboard")))
    files = {item: folder / item for item in LEADERBOARD_SPACE_FILES}
    if results is not None:
        results = Path(results)
        if not results.is_dir():
            raise DialshiftError(f"--leaderboard-results {results}: no such results folder")
        for path in sorted(results.rglob("*.json")):
            if path.is_file() and not path.is_symlink():
                files[f"results/{path.relative_to(results).as_posix()}"] = path
    plans.append(SpacePlan(f"{org}/{LEADERBOARD_SPACE}", files))
    for plan in plans:
        missing = [str(path) for path in plan.files.values() if not Path(path).is_file()]
        if missing:
            raise DialshiftError(f"{missing[0]}: a file of Space {plan.repo_id} is not installed; reinstall dialshift")
        plan.files = {item: (_requirements(path, wheel) if item == "requirements.txt" else path)
                      for item, path in plan.files.items()}
        if wheel is not None:
            plan.files[wheel.name] = wheel
    return plans


def push_spaces(plans: list[SpacePlan], *, api, private: bool = False) -> list[str]:
    """Upload each Space's files in one commit per Space (creating the Space with the Gradio SDK when missing);
    remote files are never deleted. Returns the commit URLs."""
    from huggingface_hub import CommitOperationAdd

    urls = []
    for plan in plans:
        check_repo_id(plan.repo_id)
        api.create_repo(plan.repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=source if isinstance(source, bytes)
                                         else str(source)) for path, source in sorted(plan.files.items())]
        commit = api.create_commit(repo_id=plan.repo_id, repo_type="space", operations=operations,
                                   commit_message=f"dialshift {__version__}")
        urls.append(str(getattr(commit, "commit_url", commit)))
    return urls
