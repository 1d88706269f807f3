"""How often the verdict rule of :mod:`dialshift.verdicts` decides wrongly, and how often it decides at all, measured
by simulation (``benchmarks/verdicts.py`` prints and writes the tables, ``tests/test_verdicts.py`` bounds them).

A *false decision* is an interval that excludes the true centre of the per-seed differences: a direction decided
when the true difference is 0, or a paper's value ruled out (weaker, stronger, absent) when it is the true one. The
rule's interval moves with the data (adding a constant to every difference adds it to both bounds), so one rate per
distribution and seed count covers both kinds. Every distribution has standard deviation 1 and its true centre at 0:

* ``normal``: N(0, 1);
* ``skewed``: a lognormal (sigma 0.5, skewness 1.75) minus its mean;
* ``heavy skew, median 0``: a lognormal (sigma 1, skewness 6.2) minus its median; the truth is the typical seed;
* ``heavy skew, mean 0``: the same lognormal minus its mean. Its samples of a few seeds usually miss the long tail, so
  they look like a real negative effect: the case that fools the t interval with the sign test, and that Hall's
  skewness-corrected interval of the rule is for;
* ``outlier seed``: N(0, 1) with each seed, at probability 0.1, a failed run displaced by +5, minus the mean (so the
  truth is the contaminated mean, and the other seeds sit 0.5 below it: the case that fools the t interval alone).
"""

import numpy as np

from dialshift.verdicts import rule_bounds

SEEDS = (2, 3, 5, 6, 8, 10, 15, 20, 30, 50)
FAMILIES = ("normal", "skewed", "heavy skew, median 0", "heavy skew, mean 0", "outlier seed")


def _lognormal(rng, shape, sigma: float, centre: str) -> np.ndarray:
    values = rng.lognormal(0.0, sigma, shape)
    shift = np.exp(sigma ** 2 / 2) if centre == "mean" else 1.0
    return (values - shift) / np.sqrt((np.exp(sigma ** 2) - 1) * np.exp(sigma ** 2))


def draw(family: str, draws: int, seeds: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` x ``seeds`` per-seed differences of ``family`` (sd 1, true centre 0)."""
    shape = (draws, seeds)
    if family == "normal":
        return rng.standard_normal(shape)
    if family == "skewed":
        return _lognormal(rng, shape, 0.5, "mean")
    if family == "heavy skew, median 0":
        return _lognormal(rng, shape, 1.0, "median")
    if family == "heavy skew, mean 0":
        return _lognormal(rng, shape, 1.0, "mean")
    if family == "outlier seed":
        values = rng.standard_normal(shape) + 5.0 * (rng.random(shape) < 0.1) - 0.5
        return values / np.sqrt(1 + 25 * 0.1 * 0.9)
    raise ValueError(f"unknown family {family!r}")


def t_bounds(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Student's t interval of each row's mean at 95 % (the earlier rule, for comparison)."""
    from scipy.stats import t

    n = samples.shape[1]
    half = t.ppf(0.975, n - 1) * samples.std(axis=1, ddof=1) / np.sqrt(n)
    return samples.mean(axis=1) - half, samples.mean(axis=1) + half


def false_decisions(family: str, seeds: int, draws: int, seed: int = 0) -> dict:
    """``{"rule": rate, "t": rate}``: the share of ``draws`` simulated findings whose interval excludes the truth."""
    samples = draw(family, draws, seeds, np.random.default_rng([seed, seeds, len(family)]))
    result = {}
    for name, bounds in (("rule", rule_bounds), ("t", t_bounds)):
        low, high = bounds(samples)
        result[name] = float(np.mean((low > 0) | (high < 0)))
    return result


def power(effect: float, seeds: int, draws: int, seed: int = 0) -> dict:
    """``{"rule": p, "t": p}``: the share of normal findings of true difference ``effect`` sd decided in its
    direction."""
    samples = np.random.default_rng([seed, seeds]).standard_normal((draws, seeds)) + effect
    return {name: float(np.mean(bounds(samples)[0] > 0)) for name, bounds in (("rule", rule_bounds),
                                                                             ("t", t_bounds))}
