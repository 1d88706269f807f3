"""dialshift: a benchmark suite for dialogue models under distribution shift.

The library behind the ``dialshift`` CLI: raw-corpus readers (:mod:`dialshift.sources`), seeded shift
transformations (:mod:`dialshift.shifts`), the numpy core of every metric (:mod:`dialshift.metrics`), Hub dataset
folders (:mod:`dialshift.hub`) and the models the trainers use (:mod:`dialshift.models`).
"""

__version__ = "0.2.0"
