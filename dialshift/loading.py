"""Load a dialshift config by name: ``dialshift.load_dataset("uw_0.30")``.

Where the data comes from, in order (``source="auto"``):

1. a local folder, when the first argument is one (``load_dataset("build/dialshift", "uw_0.30")``);
2. the Hub repository (``repo_id``, else ``$DIALSHIFT_HUB_REPO``, else :data:`DEFAULT_REPO`) when the Hub is
   reachable (``HF_HUB_OFFLINE`` unset): ``datasets.load_dataset(repo, config)``;
3. offline, the files of that repository already in the Hugging Face cache (what an earlier online load or
   ``huggingface_hub.snapshot_download`` left there);
4. the local build cache (``$DIALSHIFT_CACHE_DIR``, else ``~/.cache/dialshift``; one folder per dialshift version): a
   config missing there is built on demand from the raw corpora (``data_dir``, else ``$DIALSHIFT_DATA_DIR``) by
   :func:`dialshift.build.build` (what ``dialshift build`` runs) with a progress bar, then loaded from the folder.

Every form returns what ``datasets.load_dataset`` returns (a ``DatasetDict``, or a ``Dataset`` with ``split=``).
The metric modules load with :func:`metric_path` (``evaluate.load(dialshift.metric_path("ece"))``) from any folder.
"""

import glob
import os
import sys
from pathlib import Path

from dialshift import __version__
from dialshift.errors import DialshiftError

#: The Hub repository of the published benchmark (override with ``$DIALSHIFT_HUB_REPO`` or ``repo_id=``).
DEFAULT_REPO = "dialshift/dialshift"
REPO_ENV = "DIALSHIFT_HUB_REPO"
SOURCES = ("auto", "hub", "local")


def hub_repo(repo_id: str | None = None) -> str:
    """The Hub repository to load from: ``repo_id``, else ``$DIALSHIFT_HUB_REPO``, else :data:`DEFAULT_REPO`."""
    return repo_id or os.environ.get(REPO_ENV) or DEFAULT_REPO


def cache_folder(cache_dir=None) -> Path:
    """The local build folder of this dialshift version: ``<cache>/dialshift-<version>`` where ``<cache>`` is
    ``cache_dir``, else dialshift's cache (:func:`dialshift.data_dir.cache_dir`: ``$DIALSHIFT_CACHE_DIR``, else
    ``~/.cache/dialshift``)."""
    from dialshift.data_dir import cache_dir as default_cache

    root = cache_dir if cache_dir is not None else default_cache()
    return Path(root).expanduser().absolute() / f"dialshift-{__version__}"


def hub_offline() -> bool:
    """True when the Hugging Face libraries are told not to use the network (``HF_HUB_OFFLINE``)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_DATASETS_OFFLINE", "").upper() in ("1", "ON", "YES",
                                                                                                  "TRUE")


def _known_config(name: str) -> None:
    """Refuse a config no installed family declares, naming the closest ones."""
    import difflib

    from dialshift.registry import all_configs

    known = all_configs()
    if name not in known:
        close = difflib.get_close_matches(name, list(known), n=3)
        hint = f"did you mean {', '.join(close)}?" if close else "see `dialshift configs`"
        raise DialshiftError(f"no dialshift config {name!r}; {hint}")


def _folder_has(folder: Path, config: str) -> bool:
    """True when ``folder`` is a dataset folder declaring ``config`` with intact files (fingerprints checked)."""
    from dialshift.hub.fingerprints import check_config_files
    from dialshift.hub.layout import README
    from dialshift.hub.reading import declared_configs, folder_metadata

    if not (folder / README).is_file():
        return False
    declared = declared_configs(folder)
    if config not in declared:
        return False
    recorded = folder_metadata(folder).get(config, {}).get("files")
    return not check_config_files(folder, config, sorted(declared[config]), recorded)


def _load_folder(folder: Path, config: str, **kwargs):
    import datasets

    from dialshift.hub.layout import README
    from dialshift.hub.reading import declared_configs

    if not (folder / README).is_file():
        raise DialshiftError(f"{folder}: no {README}; pass a folder written by `dialshift build`")
    declared = declared_configs(folder)
    if config not in declared:
        raise DialshiftError(f"{folder}: no config {config!r} (it has: {', '.join(sorted(declared)) or 'none'}); "
                             f"build it with `dialshift build --config {config} --out {folder}`")
    from dialshift.scoring.gold import check_config

    check_config(folder, config)  # files swapped between configs or changed since the build: refused, not loaded
    return datasets.load_dataset(str(folder), config, **kwargs)


def path_like(text) -> bool:
    """True when ``text`` names a local path rather than a Hub repository id or a config: it is absolute, starts
    with ``.`` or ``~``, is an existing file, holds a backslash or more than one ``/``, or it is ``PARENT/NAME``
    where ``PARENT`` is a local folder holding dialshift dataset folders or ``NAME``'s lock or swap leftovers
    (``build/dialshfit`` beside ``build/dialshift``; a folder lost mid-swap). Such an argument is never looked up on
    the Hub, in the cache or in a build: a typo is an error, not other data."""
    from dialshift.hub.layout import MARKER

    text = os.fsdecode(os.fspath(text))
    if not text or text.startswith((".", "~")) or os.path.isabs(text) or "\\" in text or text.count("/") > 1:
        return True
    if os.path.lexists(text) and not os.path.isdir(text):
        return True
    head, slash, tail = text.partition("/")
    if not slash or not os.path.isdir(head):
        return False
    parent = Path(head)
    return (any(parent.glob(f".{glob.escape(tail)}.*")) or
            any((entry / MARKER).is_file() for entry in parent.iterdir() if entry.is_dir()))


def _not_a_folder(path) -> DialshiftError:
    from dialshift.io import interrupted_swap_hint

    where = Path(path).expanduser()
    what = "is a file" if where.is_file() else "does not exist"
    return DialshiftError(f"{path}: {what}; a path is loaded only from a dataset folder (the folder "
                          f"`dialshift build --out` wrote); check the path, or pass a Hub repository id ORG/NAME"
                          f"{interrupted_swap_hint(where.absolute())}")


def _hub_snapshot(repo: str, revision: str | None) -> Path | None:
    """The folder of ``repo``'s files in the Hugging Face cache, or None when it is not there."""
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo, repo_type="dataset", revision=revision, local_files_only=True))
    except Exception:  # LocalEntryNotFoundError, or a cache without this repo
        return None


def build_config(config: str, folder: Path, *, data_dir=None, progress: bool = True) -> None:
    """Build ``config`` into ``folder`` with :func:`dialshift.build.build` (other configs there are kept)."""
    from dialshift.build import build

    if progress:
        print(f"dialshift: building config {config!r} into {folder} (once; later loads read it)", file=sys.stderr)
    build([config], data_dir, folder, progress=progress)


def load_dataset(path: str, name: str | None = None, *, split=None, revision=None, repo_id: str | None = None,
                 source: str = "auto", data_dir=None, cache_dir=None, build: bool = True, progress: bool = True,
                 **kwargs):
    """Load one dialshift config, in the call style of ``datasets.load_dataset``.

    ``load_dataset("uw_0.30")`` names a config; ``load_dataset(FOLDER_OR_REPO, "uw_0.30")`` a dataset folder or Hub
    repository and a config. ``source`` is ``"auto"`` (the order in the module docstring), ``"hub"`` (the Hub or its
    cached files only) or ``"local"`` (the build cache only). ``build=False`` refuses to build a missing config.
    ``split``, ``revision`` and other keywords (``cache_dir`` of ``datasets`` is ``datasets_cache_dir`` here) are
    passed to ``datasets.load_dataset``.
    """
    if source not in SOURCES:
        raise DialshiftError(f"source={source!r}: expected one of {', '.join(SOURCES)}")
    if "datasets_cache_dir" in kwargs:
        kwargs["cache_dir"] = kwargs.pop("datasets_cache_dir")
    load_kwargs = {"split": split, **kwargs}
    if name is None:
        if path_like(path) or (Path(path) / "README.md").is_file():
            if Path(path).expanduser().is_dir():
                raise DialshiftError(f"{path}: a dataset folder needs a config name: "
                                     f"dialshift.load_dataset({os.fspath(path)!r}, CONFIG)")
            raise _not_a_folder(path)
        config, repo = path, hub_repo(repo_id)
    else:
        config = name
        if Path(path).expanduser().is_dir():
            return _load_folder(Path(path).expanduser(), config, **load_kwargs)
        if path_like(path):
            raise _not_a_folder(path)
        repo = path
    if source in ("auto", "hub"):
        if not hub_offline():
            try:
                import datasets

                return datasets.load_dataset(repo, config, revision=revision, **load_kwargs)
            except Exception as error:  # unreachable Hub, no such repository or config there
                if source == "hub":
                    raise DialshiftError(f"cannot load {repo!r} config {config!r} from the Hub: "
                                         f"{type(error).__name__}: {' '.join(str(error).split())[:200]}") from None
                print(f"dialshift: {repo} is not reachable ({type(error).__name__}); using the local build cache",
                      file=sys.stderr)
        snapshot = _hub_snapshot(repo, revision)
        if snapshot is not None and _folder_has(snapshot, config):
            return _load_folder(snapshot, config, **load_kwargs)
        if source == "hub":
            raise DialshiftError(f"{repo!r} config {config!r} is not in the Hugging Face cache and the Hub is offline "
                                 f"(HF_HUB_OFFLINE); go online once, or use source='local' to build it")
    _known_config(config)
    folder = cache_folder(cache_dir)
    if not _folder_has(folder, config):
        if not build:
            raise DialshiftError(f"config {config!r} is not built in {folder}; call with build=True or run "
                                 f"`dialshift build --config {config} --out {folder}`")
        build_config(config, folder, data_dir=data_dir, progress=progress)
    return _load_folder(folder, config, **load_kwargs)


def metric_path(name: str) -> str:
    """The folder of a dialshift metric module, for ``evaluate.load(dialshift.metric_path("ece"))`` from any folder
    (the modules are installed with the package as ``dialshift_metrics``)."""
    from importlib import resources

    from dialshift.metrics import MODULES

    if name not in MODULES:
        raise DialshiftError(f"no dialshift metric {name!r}; the metrics are {', '.join(MODULES)}")
    folder = Path(str(resources.files("dialshift_metrics").joinpath(name)))
    if not (folder / f"{name}.py").is_file():
        raise DialshiftError(f"{folder}: the metric module {name}.py is not installed; reinstall dialshift")
    return str(folder)


def load_metric(name: str, **kwargs):
    """``evaluate.load`` of a dialshift metric module by name (see :func:`metric_path`)."""
    import evaluate

    return evaluate.load(metric_path(name), **kwargs)
