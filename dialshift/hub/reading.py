"""Reading a built folder: its card, the configs it declares, their data files, and dialshift's metadata block.

:func:`data_files` is the one place that turns a card's ``data_files`` patterns into files; a pattern leaving the
folder is refused.
"""

import re
from pathlib import Path, PurePosixPath, PureWindowsPath

from dialshift.errors import DialshiftError
from dialshift.hub.layout import METADATA_KEY, README, rebuild_hint
from dialshift.hub.marker import rebuild_all_hint


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
        return load_card(path)
    except DialshiftError as error:
        raise DialshiftError(f"{error}; move it aside and rebuild the folder's configs: "
                             f"{rebuild_all_hint(folder)}") from None


#: The last card parsed, by (path, inode, size, mtime): a scoring run reads the same card several times, and parsing
#: a full build's front matter (pure-Python YAML, ~10,000 lines) costs seconds each time.
_CARD_CACHE: dict = {}


def _cache_key(path: Path) -> tuple:
    """A card file's identity for the caches: (path, inode, size, mtime)."""
    stat = path.stat()
    return str(path.absolute()), stat.st_ino, stat.st_size, stat.st_mtime_ns


def load_card(path: Path):
    import copy

    from huggingface_hub import DatasetCard

    key = _cache_key(path)
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


#: The front matter of the last card read by :func:`card_fields`, by the same key as :data:`_CARD_CACHE`.
_FIELDS_CACHE: dict = {}


def card_fields(folder) -> dict:
    """The card's front matter as a dict (``card.data.to_dict()``), parsed once per card file: **shared, read
    only** (the read-only readers below use it; :func:`read_card` gives a private copy to edit). It spares the two
    deep copies of a full build's front matter that ``read_card(folder).data.to_dict()`` makes on every call."""
    path = Path(folder) / README
    fields = None
    if path.is_file():
        key = _cache_key(path)
        if key in _FIELDS_CACHE:
            return _FIELDS_CACHE[key]
        fields = _plain_front_matter(path)
    if fields is None:
        fields = read_card(folder).data.to_dict()  # checks the folder (one clear error) and parses the card
        key = _cache_key(path)
    _FIELDS_CACHE.clear()
    _FIELDS_CACHE[key] = fields
    return fields


#: A card's front matter: a first line ``---``, the YAML, a line ``---``.
_FRONT_MATTER = re.compile(r"\A\s*---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def _plain_front_matter(path: Path) -> dict | None:
    """``DatasetCard.load(path).data.to_dict()`` for a plain card, parsed with libyaml's safe loader where PyYAML
    has it (the same constructor as ``yaml.safe_load``; a full build's front matter: 0.04 s instead of 0.27 s, and
    ``huggingface_hub``'s card module is not imported): the mapping without its null values. None where the
    library's reading could differ or fail (no front matter, not a mapping, a YAML error, the ``train-eval-index``
    fields it renames): the caller then reads the card with the library, which also words the errors."""
    import yaml

    try:
        match = _FRONT_MATTER.match(path.read_text(encoding="utf-8"))
        fields = None if match is None else yaml.load(match.group(1),
                                                      Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(fields, dict) or {"train_eval_index", "train-eval-index", "ignore_metadata_errors"} & set(fields):
        return None
    return {key: value for key, value in fields.items() if value is not None}


def declared_configs(folder) -> dict[str, dict[str, str | list[str]]]:
    """``{config: {split: data_files pattern(s)}}`` as declared in the README YAML.

    A dataset folder only reads inside itself: a ``data_files`` entry that is absolute, a URL or climbs out with
    ``..`` is refused with one line (``datasets`` would follow ``../`` out of the folder).
    """
    declared = {}
    for entry in card_fields(folder).get("configs") or []:
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
    block = card_fields(folder).get(METADATA_KEY) or {}
    return dict(block.get("configs") or {})


def folder_configs(folder) -> dict:
    """``{config: BenchmarkConfig}`` of a built folder: from its card's metadata, else from the installed families
    (loaded only for a config the card does not describe in full: loading them imports every family's plugins)."""
    from dialshift.configs import BenchmarkConfig

    stored = folder_metadata(folder)
    loaded: list = []

    def registered() -> dict:
        if not loaded:
            from dialshift.registry import all_configs

            loaded.append(all_configs())
        return loaded[0]

    result = {}
    for name in declared_configs(folder):
        if name in stored and "config" in stored[name]:
            data = stored[name]["config"]
            if "baselines" not in data and name in registered():  # a card written before configs declared baselines
                data = {**data, "baselines": registered()[name].to_dict()["baselines"]}
            result[name] = BenchmarkConfig.from_dict(data)
        elif name in registered():
            result[name] = registered()[name]
    return result


def card_infos(folder: Path) -> dict:
    from datasets.info import DatasetInfosDict

    return dict(DatasetInfosDict.from_dataset_card_data(read_card(folder).data))
