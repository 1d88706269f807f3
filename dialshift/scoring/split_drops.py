"""The drop of each metric from a config's test split to its second, shifted test split (``test`` -> ``cov_test``).

The covariate family (Khosla and Gangadharaiah 2022) scores every config on its i.i.d. ``test`` split and on its
covariate-shifted ``cov_test`` (on the lite track ``lite`` and ``cov_lite``): what matters is the drop,
``metric(test) - metric(cov_test)``, positive when the shift hurts a higher-is-better metric. The two splits share
their out-of-scope rows (the same ids) while their in-scope rows differ by design, so the drop is not a paired
difference on shared ids (:func:`dialshift.scoring.pipeline.declared_comparisons`): the point value is the
difference of the two whole splits' metrics, and its interval is the percentile interval of the replicate
differences, where each replicate counts a shared id the same number of times in both splits (paired) and every other
id independently (an unpaired bootstrap over the rows only one split holds). Both come from the Poisson bootstrap of
:mod:`dialshift.scoring.bootstrap`, whose count of an id in a replicate depends only on ``(seed, replicate, id)``: two
scorings with the same replicates and seed give exactly these draws.

The calibration metrics' intervals are bias-bounded (:mod:`dialshift.scoring.calibration`), so a plain difference of
their draws is not one of their intervals: they get no drop here (the covariate family's task has none).
"""

import numpy as np

from dialshift.scoring import bootstrap, calibration


def split_drops(first: tuple, second: tuple, confidence: float = 0.95) -> dict:
    """``{config: {"shared", "metrics": {metric: {"value", "interval"}}}}``: for each config scored in both, the drop
    ``first - second`` of every reported metric both hold. ``first`` and ``second`` are
    :func:`~dialshift.scoring.pipeline.score_files_with_draws` results (same replicates and seed); ``shared`` counts
    the instance ids the two splits of the config hold."""
    (document, draws, keys), (other, other_draws, other_keys) = first, second
    skipped = set(calibration.AUXILIARY) | set(calibration.ABSOLUTE) | set(calibration.SQUARED)
    drops = {}
    for name in document["results"]:
        if name not in other["results"]:
            continue
        points = {"a": _points(document["results"][name], skipped), "b": _points(other["results"][name], skipped)}
        differences = bootstrap.paired_differences(points, {"a": draws[name], "b": other_draws[name]},
                                                   {name: ("a", "b")}, confidence)[name]
        drops[name] = {"shared": int(len(np.intersect1d(keys[name], other_keys[name]))), "metrics": differences}
    return drops


def _points(results: dict, skipped: set) -> dict:
    """A config's reported metrics as numbers (an undefined one as NaN, so its drop is None), without ``skipped``."""
    return {metric: np.nan if value is None else value for metric, value in results.items()
            if metric != "instances" and metric not in skipped}
