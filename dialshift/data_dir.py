"""Where dialshift reads and caches: the raw corpora (``--data-dir``, else ``$DIALSHIFT_DATA_DIR``, else
``../shared/data`` if it exists, else ``<cache>/data``, where ``dialshift download`` writes by default) and its cache
(``$DIALSHIFT_CACHE_DIR``, else ``$XDG_CACHE_HOME/dialshift``, i.e.
``~/.cache/dialshift``: the prepared WordNet, configs built on demand by :func:`dialshift.load_dataset`)."""

import os
from pathlib import Path

from dialshift.errors import DialshiftError

ENV_VAR = "DIALSHIFT_DATA_DIR"
CACHE_DIR_ENV = "DIALSHIFT_CACHE_DIR"


def cache_dir() -> Path:
    """dialshift's cache directory: ``$DIALSHIFT_CACHE_DIR``, else ``$XDG_CACHE_HOME/dialshift`` (``~/.cache``)."""
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(os.environ.get(CACHE_DIR_ENV) or xdg / "dialshift").expanduser()


def download_dir() -> Path:
    """Where ``dialshift download`` puts the raw corpora when neither ``--data-dir`` nor ``$DIALSHIFT_DATA_DIR`` is
    given: ``<cache>/data``."""
    return cache_dir() / "data"


def _default_candidates():
    here = Path(__file__).resolve().parent.parent  # the repository root in a source checkout
    return [Path.cwd() / ".." / "shared" / "data", here / ".." / "shared" / "data", download_dir()]


def find_data_dir(data_dir=None) -> Path | None:
    """:func:`resolve_data_dir`, except that None is returned when no folder was named (neither ``data_dir`` nor
    ``$DIALSHIFT_DATA_DIR``) and none of the defaults exists: the caller looks again when it needs the corpora."""
    if data_dir is None and os.environ.get(ENV_VAR) is None:
        return next((candidate.resolve() for candidate in _default_candidates() if candidate.is_dir()), None)
    return resolve_data_dir(data_dir)


def resolve_data_dir(data_dir=None) -> Path:
    """Return the raw-data directory, or raise a :class:`DialshiftError` that says how to point at it."""
    if data_dir is None:
        data_dir = os.environ.get(ENV_VAR)
    if data_dir is not None:
        path = Path(data_dir).expanduser()
        source = "--data-dir" if os.environ.get(ENV_VAR) != str(data_dir) else f"${ENV_VAR}"
        if path.exists() and not path.is_dir():
            raise DialshiftError(f"data directory {path} ({source}) is a file, not a directory; point {source} at the "
                                 f"folder that holds the raw corpora")
        if not path.is_dir():
            raise DialshiftError(f"data directory {path} does not exist ({source}); fetch the raw corpora into it "
                                 f"with `dialshift download --data-dir {path}`, or point {source} at them")
        return path.resolve()
    for candidate in _default_candidates():
        if candidate.is_dir():
            return candidate.resolve()
    raise DialshiftError(f"no raw data directory found; fetch the raw corpora with `dialshift download` (into "
                         f"{download_dir()}), or pass --data-dir DIR / set {ENV_VAR}=DIR")
