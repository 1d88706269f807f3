"""dialshift: a benchmark suite for dialogue models under distribution shift.

The library behind the ``dialshift`` CLI: raw-corpus readers (:mod:`dialshift.sources`), seeded shift
transformations (:mod:`dialshift.shifts`), the numpy core of every metric (:mod:`dialshift.metrics`), Hub dataset
folders (:mod:`dialshift.hub`) and the models the trainers use (:mod:`dialshift.models`).
"""

__version__ = "0.2.0"

#: Names resolved on first use (PEP 562), so ``import dialshift`` stays light: ``datasets`` is imported only when
#: :func:`dialshift.load_dataset` is called.
_LAZY = {"load_dataset": "dialshift.loading", "metric_path": "dialshift.loading", "load_metric": "dialshift.loading"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dialshift' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])
