"""Load a dialshift config by name: ``dialshift.load_dataset("uw_0.30")``.

Where the data comes from (``source="auto"``):

1. a local folder, when the first argument is one (``load_dataset("build/dialshift", "uw_0.30")``);
2. a Hub dataset repository named explicitly (``load_dataset("ORG/NAME", "uw_0.30")`` or ``repo_id=``), or any call
   with a ``revision``: exactly that repository at that revision, its files fetched with
   ``huggingface_hub.snapshot_download`` (offline: from the Hugging Face cache) and loaded from the snapshot. What
   cannot be served exactly is a one-line error naming what was asked and what is available; it never falls back;
3. a bare config name: the default repository (``$DIALSHIFT_HUB_REPO``, else :data:`DEFAULT_REPO`) as in 2, and when
   that fails (a note on stderr), the local build cache (``$DIALSHIFT_CACHE_DIR``, else ``~/.cache/dialshift``; one
   folder per dialshift version): a config missing there, or built there with other options than the defaults, is
   built from the raw corpora (``data_dir``, else ``$DIALSHIFT_DATA_DIR``) by :func:`dialshift.build.build` (what
   ``dialshift build`` runs), saying so on stderr. ``source="build"`` goes to the build cache directly.

Every form returns what ``datasets.load_dataset`` returns (a ``DatasetDict``, or a ``Dataset`` with ``split=``); each
split's ``info.description`` names its origin (Hub repository and commit, local build or folder), the dialshift
version that built it, the config's options digest and the checksums of the raw corpora it was built from.
The metric modules load with :func:`metric_path` (``evaluate.load(dialshift.metric_path("ece"))``) from any folder."""

import glob
import os
import sys
from pathlib import Path

from dialshift import __version__
from dialshift.errors import DialshiftError

#: The Hub repository of the published benchmark (override with ``$DIALSHIFT_HUB_REPO`` or ``repo_id=``).
DEFAULT_REPO = "dialshift/dialshift"
REPO_ENV = "DIALSHIFT_HUB_REPO"
SOURCES = ("auto", "hub", "build", "local")


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


def _folder_has(folder: Path, config: str, digest: str | None = None) -> bool:
    """True when ``folder`` is a dataset folder declaring ``config`` with intact files (fingerprints checked) and,
    when ``digest`` is given, built with the options of that digest."""
    from dialshift.hub.fingerprints import check_config_files
    from dialshift.hub.layout import README
    from dialshift.hub.reading import declared_configs, folder_metadata
    from dialshift.identity import recorded_identity

    if not (folder / README).is_file():
        return False
    declared = declared_configs(folder)
    if config not in declared:
        return False
    entry = folder_metadata(folder).get(config, {})
    if digest is not None and (recorded_identity(entry) or {}).get("options_digest") != digest:
        return False
    return not check_config_files(folder, config, sorted(declared[config]), entry.get("files"))


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


def _cached_revisions(repo: str) -> list[str]:
    """The revisions of the dataset repository ``repo`` in the Hugging Face cache: ``main=0123abc...`` for a
    branch or tag, the commit alone for a snapshot no ref names."""
    from huggingface_hub import constants

    root = Path(constants.HF_HUB_CACHE) / f"datasets--{repo.replace('/', '--')}"
    refs = {path.read_text().strip(): path.relative_to(root / "refs").as_posix()
            for path in sorted((root / "refs").rglob("*")) if path.is_file()}
    snapshots = sorted(path.name for path in (root / "snapshots").iterdir()) if (root / "snapshots").is_dir() else []
    return [f"{refs[commit]}={commit[:12]}" if commit in refs else commit[:12] for commit in snapshots]


def _available(repo: str, config: str, cache_dir) -> str:
    """What could be loaded instead of an exact request, for the error line."""
    cached = _cached_revisions(repo)
    parts = [f"revisions of {repo} in the Hugging Face cache: {', '.join(cached)}" if cached else
             f"no revision of {repo} in the Hugging Face cache"]
    folder = cache_folder(cache_dir)
    if _folder_has(folder, config):
        parts.append(f"a local build of {config!r} in {folder} (dialshift.load_dataset({config!r}, source='build'); "
                     "not the Hub's data)")
    return "; ".join(parts)


def _load_hub(repo: str, config: str, revision, cache_dir, **load_kwargs):
    """``config`` of the Hub dataset repository ``repo`` at ``revision``, exactly: its files at that commit (online,
    or offline from the Hugging Face cache), or a :class:`DialshiftError` naming what was asked and what is
    available."""
    from huggingface_hub import snapshot_download

    asked = f"{repo!r} config {config!r}" + (f" at revision {revision!r}" if revision else "")
    offline = hub_offline()
    try:
        snapshot = Path(snapshot_download(repo, repo_type="dataset", revision=revision,
                                          allow_patterns=["README.md", f"{config}/*"], local_files_only=offline))
    except Exception as error:  # no such repository or revision, unreachable Hub, not in the cache offline
        reason = "not in the Hugging Face cache and the Hub is offline (HF_HUB_OFFLINE)" if offline else \
            f"{type(error).__name__}: {' '.join(str(error).split())[:160]}"
        raise DialshiftError(f"cannot load {asked}: {reason}; available: {_available(repo, config, cache_dir)}") \
            from None
    if not _folder_has(snapshot, config):
        from dialshift.hub.layout import README
        from dialshift.hub.reading import declared_configs

        has = sorted(declared_configs(snapshot)) if (snapshot / README).is_file() else []
        raise DialshiftError(f"cannot load {asked}: commit {snapshot.name[:12]} of {repo} has no intact config "
                             f"{config!r} (it has: {', '.join(has) or 'none'})")
    data = _load_folder(snapshot, config, **load_kwargs)
    return _with_origin(data, f"Hugging Face Hub dataset {repo} at commit {snapshot.name}", snapshot, config)


def _with_origin(data, origin: str, folder: Path, config: str):
    """Write where ``data`` came from into each split's ``info.description``: ``origin``, then the config's options
    digest, the dialshift version that built it and the checksums of the raw corpora it was built from (as the
    folder's card records them)."""
    from dialshift.hub.layout import METADATA_KEY
    from dialshift.hub.reading import read_card
    from dialshift.identity import recorded_identity

    block = read_card(folder).data.to_dict().get(METADATA_KEY) or {}
    entry = (block.get("configs") or {}).get(config, {})
    identity = recorded_identity(entry)
    corpora = ", ".join(f"{name} {value.get('checksum')}" for name, value in sorted((entry.get("raw_corpora") or
                                                                                     {}).items()))
    text = (f"dialshift config {config!r} from {origin}; built by dialshift {block.get('version', 'unknown')}; "
            f"options {identity['options_digest'] if identity else 'not recorded'}; "
            f"raw corpora: {corpora or 'not recorded'}")
    for dataset in (data.values() if isinstance(data, dict) else [data]):
        dataset.info.description = text
    return data


def default_identity(config: str) -> str:
    """The options digest of ``config`` built with its family's default options and seed 0 (what a build on
    demand makes)."""
    from dialshift import registry
    from dialshift.identity import config_identity

    for family in registry.families().values():
        for declared in family.configs():
            if declared.name == config:
                return config_identity(family.name, family.options_class(), 0, declared.to_dict())["options_digest"]
    raise DialshiftError(f"no dialshift config {config!r}")


def build_config(config: str, folder: Path, *, data_dir=None, progress: bool = True) -> None:
    """Build ``config`` into ``folder`` with :func:`dialshift.build.build` (other configs there are kept)."""
    from dialshift.build import build

    print(f"dialshift: building config {config!r} from the raw corpora into {folder} (a local build, not the Hub's "
          "data; once: later loads read it)", file=sys.stderr)
    build([config], data_dir, folder, progress=progress)


def _load_built(config: str, *, data_dir, cache_dir, build: bool, progress: bool, **load_kwargs):
    """``config`` from the local build cache, built there first (default options) when it is missing or was built
    with other options."""
    from dialshift.identity import MixedOptionsError

    _known_config(config)
    folder = cache_folder(cache_dir)
    digest = default_identity(config)
    if not _folder_has(folder, config, digest):
        if not build:
            raise DialshiftError(f"config {config!r} is not built with the default options in {folder}; call with "
                                 f"build=True or run `dialshift build --config {config} --out {folder}`")
        try:
            build_config(config, folder, data_dir=data_dir, progress=progress)
        except MixedOptionsError as error:
            raise DialshiftError(f"the build cache {error}; it holds configs built with other options than the "
                                 f"defaults: remove {folder} (it is rebuilt on demand) or build elsewhere with "
                                 "`dialshift build --out DIR`") from None
    data = _load_folder(folder, config, **load_kwargs)
    return _with_origin(data, f"a local build in {folder}", folder, config)


def load_dataset(path: str, name: str | None = None, *, split=None, revision=None, repo_id: str | None = None,
                 source: str = "auto", data_dir=None, cache_dir=None, build: bool = True, progress: bool = True,
                 **kwargs):
    """Load one dialshift config, in the call style of ``datasets.load_dataset``.

    ``load_dataset("uw_0.30")`` names a config; ``load_dataset(FOLDER_OR_REPO, "uw_0.30")`` a dataset folder or Hub
    repository and a config. ``source`` is ``"auto"`` (the order in the module docstring), ``"hub"`` (the Hub or its
    cached files only) or ``"build"`` (the local build cache, building on demand; ``"local"`` is the same).
    A repository (``repo_id=`` or the first argument) or a ``revision`` asks for exactly that data: when it cannot be
    served the call fails, naming what is available; it never falls back to a local build. ``build=False`` refuses
    to build a missing config. ``split`` and other keywords (``cache_dir`` of ``datasets`` is
    ``datasets_cache_dir`` here) are passed to ``datasets.load_dataset``. Each split's ``info.description`` names
    where the data came from (Hub repository and commit, or local build), the options digest, the dialshift version
    that built it and the raw corpora's checksums.
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
        config, repo, exact = path, hub_repo(repo_id), repo_id is not None or revision is not None
    else:
        config = name
        if Path(path).expanduser().is_dir():
            folder = Path(path).expanduser()
            return _with_origin(_load_folder(folder, config, **load_kwargs), f"the folder {folder.absolute()}",
                                folder, config)
        if path_like(path):
            raise _not_a_folder(path)
        repo, exact = path, True
    if source in ("build", "local"):
        if exact:
            raise DialshiftError(f"source={source!r} builds {config!r} from the raw corpora; it takes no repository "
                                 f"or revision (asked: {repo}" + (f" at {revision}" if revision else "") + ")")
        return _load_built(config, data_dir=data_dir, cache_dir=cache_dir, build=build, progress=progress,
                           **load_kwargs)
    if exact or source == "hub":
        return _load_hub(repo, config, revision, cache_dir, **load_kwargs)
    try:
        return _load_hub(repo, config, None, cache_dir, **load_kwargs)
    except DialshiftError as error:
        print(f"dialshift: {' '.join(str(error).split(';')[0].split())} -> using the local build cache",
              file=sys.stderr)
    return _load_built(config, data_dir=data_dir, cache_dir=cache_dir, build=build, progress=progress, **load_kwargs)


def metric_path(name: str) -> str:
    """The folder of an installed metric module, for ``evaluate.load(dialshift.metric_path("ece"))`` from any folder
    (the modules shipped with dialshift are installed as ``dialshift_metrics``; plug-ins add theirs through the
    ``dialshift.metrics`` entry points, :mod:`dialshift.metrics.installed`)."""
    from dialshift.metrics.installed import metric_folder

    return str(metric_folder(name))


def load_metric(name: str, **kwargs):
    """``evaluate.load`` of a dialshift metric module by name (see :func:`metric_path`)."""
    import evaluate

    return evaluate.load(metric_path(name), **kwargs)
