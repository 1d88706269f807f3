"""The verdict rule of the reproduction reports (``docs/reproduction_*.md``), applied by their table generators.

A paper's finding is a difference between two quantities (e.g. test F1 minus cov_test F1) with a claimed direction
(``"+"``: the first is larger; ``"-"``: smaller) and, where the paper reports both quantities, the paper's own value
of that difference. We measure one paired difference per seed (the same seed's model measured both ways).

**The interval.** A value ``v`` is *ruled out* by the seeds only when three intervals all exclude it: Student's t
interval at 99 % of the mean of the per-seed differences, Hall's skewness-corrected t interval at 99 % of the same mean,
and the exact (distribution-free, order-statistic) 95 % interval of their median, i.e. the sign test. The reported
interval ``[low, high]`` is the hull of the three (it always holds the mean, the centre of the t interval), so "the
interval excludes v" and "v is ruled out" are the same statement.

* The t interval covers at its level only for roughly normal differences: alone (at 95 %) it decides wrongly in up
  to 18 % of the simulated skewed or outlier-seed cases at 2-20 seeds (68 % at 50 seeds of a heavy skew whose truth
  is its median).
* The sign test is exact for the median of any distribution and is not pulled by one seed, but it cannot reach 5 %
  below six seeds (all of 5 seeds on one side happen by chance 2/32 = 6.25 % of the time), so **below six seeds the
  rule decides nothing**: fewer decisions, rarely wrong ones.
* Hall's interval (P. Hall, 1992, "On the removal of skewness by transformation", JRSS B 54: 221-228) is for a
  skewed distribution whose truth is its mean. Its few seeds usually miss the long tail, so their mean lies on the
  other side and their spread is small: the t interval with the sign test decided wrongly in 5.2-8.9 % of the
  simulated cases of a sigma-1 lognormal minus its mean (skewness 6.2) at 6-20 seeds. With ``T = (mean - mu) /
  (s / sqrt(n))`` and ``a`` the sample skewness over ``sqrt(n)``, Hall's monotone transformation ``g(T) = T + a T^2 / 3
  + a^2 T^3 / 27 + a / 6`` removes the skewness of T to order 1/sqrt(n); the interval is the ``mu`` with ``|g(T)|``
  within the t quantile, which widens the interval on the side of the sample's tail, where the missing seeds would
  lie. It also narrows the other side, so it joins the hull rather than replacing the t interval: the hull only widens.

Measured by ``benchmarks/verdicts.py`` (``docs/verdicts.md``, 20,000 simulated findings per case), every simulated case
(normal, skewed, heavy skew with the truth at its median or at its mean, an outlier seed; 2-50 seeds) stays at 4.9 % or
less (the heavy skew with the truth at its mean: 4.9 / 4.0 / 3.7 / 3.0 / 2.5 / 2.1 / 1.8 % at 6 / 8 / 10 / 15 / 20 / 30
/ 50 seeds). The price is power at six to ten seeds, where a few normal seeds often look skewed: for normal differences
of 1 / 2 / 3 sd, 0.13 / 0.56 / 0.80 at 6 seeds (0.19 / 0.75 / 0.98 without Hall's interval) and 0.37 / 0.91 / 0.96 at 10
seeds (0.43 / 0.98 / 1.00); 0.8 needs 20 / 9 / 7 seeds (17 / 7 / 6). Of the alternatives, measured once with the same
simulation when the rule was chosen (the benchmark does not regenerate them), a t interval at 99.8 % instead errs in
5.0-5.1 % at 9-12 seeds and one at 99.85 % stays at 4.7 % or less but has power 0.04 / 0.32 / 0.74 at 6 seeds (the same
simulation, 20,000 draws), and Hall's interval alone (without Student's) errs in 5.3 % at 6 seeds.
``tests/test_verdicts.py`` keeps every case at or under 5 %.

**The margin.** The paper's value ``p`` is *compatible* with ours when the interval does not rule out every value of
the band ``|p| (1 - margin) .. |p| (1 + margin)`` in the paper's direction (default ``margin`` 0.2: within 20 % of
the paper's effect). With the paper's direction taken as positive, the outcomes are:

* **reproduced**: the interval excludes 0 on the paper's side and reaches the band;
* **weaker than the paper**: it excludes 0 on the paper's side and lies below the band;
* **stronger than the paper**: it excludes 0 on the paper's side and lies above the band;
* **contradicted**: it excludes 0 on the opposite side;
* **absent**: it holds 0 and lies below the band (the paper's effect is ruled out at this scale);
* **underpowered**: it holds 0 and reaches the band (or there is no interval: fewer than six seeds, or per-seed
  differences that are all equal, whose spread cannot be estimated);
* **not decidable**: without a paper value (``paper=None``, the paper gives only a direction) an interval that holds
  0 cannot tell *absent* from *underpowered*.

**Power.** ``power`` is the probability that the rule decides the paper's direction when the true difference is the
paper's value, the per-seed differences are normal with our observed standard deviation, and there are as many seeds
as we ran; ``seeds_for_power`` the fewest seeds giving power 0.8 (at most :data:`MAX_SEEDS`). Both are Monte Carlo
estimates with a fixed random seed (:data:`POWER_DRAWS` draws), so they are deterministic.

**Scale.** The rule is scale-invariant and runs on the differences divided by their largest magnitude, so neither a
spread beyond float64's range (``[1e308, 1.5e308, 1.7e308]``) nor subnormal differences (``[1e-320, 2e-320]``) can
degenerate the interval; an interval whose bounds overflow when scaled back is refused with an error.
"""

from dataclasses import dataclass

import numpy as np

from dialshift.errors import DialshiftError

REPRODUCED = "reproduced"
WEAKER = "weaker than the paper"
STRONGER = "stronger than the paper"
CONTRADICTED = "contradicted"
ABSENT = "absent"
UNDERPOWERED = "underpowered"
NOT_DECIDABLE = "not decidable"
NOT_REPRODUCED = CONTRADICTED  # the earlier rule's name for the opposite direction
OUTCOMES = (REPRODUCED, WEAKER, STRONGER, CONTRADICTED, ABSENT, UNDERPOWERED, NOT_DECIDABLE)
DIRECTIONS = ("+", "-")
T_CONFIDENCE = 0.99
MEDIAN_CONFIDENCE = 0.95
MARGIN = 0.2
MIN_SEEDS = 6  # the fewest seeds at which the sign test can exclude a value at 95 %
POWER_TARGET = 0.8
POWER_DRAWS = 4000
MAX_SEEDS = 1000


@dataclass(frozen=True)
class Verdict:
    """A finding's verdict: the outcome, the mean per-seed difference, the rule's interval (None when it is
    unbounded: below six seeds, or without spread), the number of seeds, the paper's value of the difference (None
    when the paper gives only a direction), the power to detect the paper's effect at our spread and seeds, and the
    seeds giving power 0.8 (None where either cannot be computed: no paper value, fewer than two seeds, no spread;
    ``seeds_for_power`` also when more than :data:`MAX_SEEDS` would be needed)."""

    outcome: str
    mean: float
    low: float | None
    high: float | None
    seeds: int
    paper: float | None = None
    power: float | None = None
    seeds_for_power: int | None = None

    def cell(self, scale: float = 1.0, digits: int = 1) -> str:
        """``outcome (mean [low, high], n seeds; paper p; power q)``, the numbers multiplied by ``scale``."""
        plural = "s" * (self.seeds != 1)
        if self.low is None:
            if self.seeds < 2:
                why = ""
            elif self.seeds < MIN_SEEDS:
                why = f", no interval below {MIN_SEEDS} seeds"
            else:
                why = ", no spread: no interval"
            text = f"{self.outcome} ({self.mean * scale:.{digits}f}, {self.seeds} seed{plural}{why}"
        else:
            text = (f"{self.outcome} ({self.mean * scale:.{digits}f} [{self.low * scale:.{digits}f}, "
                    f"{self.high * scale:.{digits}f}], {self.seeds} seeds")
        if self.paper is not None:
            text += f"; paper {self.paper * scale:.{digits}f}"
        if self.power is not None:
            text += f"; power {self.power:.2f}"
        return text + ")"


def _values(differences) -> np.ndarray:
    try:
        values = np.asarray(differences, dtype=float)
    except (TypeError, ValueError):
        raise DialshiftError(f"verdict: expected one finite difference per seed, got {differences!r}") from None
    if values.ndim != 1 or not len(values) or not np.isfinite(values).all():
        raise DialshiftError(f"verdict: expected one finite difference per seed, got {values.tolist()!r}")
    return values


def _median_rank(n: int, confidence: float) -> int | None:
    """The 1-based rank k of the exact median interval ``[x_(k), x_(n-k+1)]`` at ``confidence`` (the largest k whose
    coverage, 1 - 2 P(Binomial(n, 1/2) < k), reaches it); None when even ``[x_(1), x_(n)]`` falls short."""
    from scipy.stats import binom

    ks = np.arange(1, n // 2 + 1)
    ok = ks[2 * binom.cdf(ks - 1, n, 0.5) <= 1 - confidence]
    return int(ok[-1]) if len(ok) else None


def _hall_inverse(y, a):
    """The T with ``g(T) = y`` for Hall's (1992) transformation of the studentised mean
    ``g(T) = T + a T^2 / 3 + a^2 T^3 / 27 + a / 6 = ((1 + a T / 3)^3 - 1) / a + a / 6`` (``a`` the sample skewness over
    sqrt(n)): ``3 (y - a/6) / (c^2 + c + 1)`` with ``c = cbrt(1 + a (y - a/6))``, which needs no division by ``a``
    (at ``a = 0`` it is ``y``); g is monotone, so the inverse is unique."""
    c = np.cbrt(1.0 + a * (y - a / 6.0))
    return 3.0 * (y - a / 6.0) / (c * c + c + 1.0)


def rule_bounds(samples: np.ndarray, t_confidence: float = T_CONFIDENCE,
                median_confidence: float = MEDIAN_CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """The rule's interval for each row of ``samples`` (rows: findings or simulated draws, columns: seeds): the hull
    of Student's t interval of the mean and Hall's skewness-corrected t interval of the mean (both at
    ``t_confidence``) and the exact interval of the median (at ``median_confidence``); ``(-inf, inf)`` where the
    median's is unbounded (fewer than :data:`MIN_SEEDS` seeds) and NaN where a row has no spread. Vectorised for the
    simulations."""
    from scipy.stats import t

    samples = np.asarray(samples, dtype=float)
    n = samples.shape[1]
    k = _median_rank(n, median_confidence) if n >= 2 else None
    low = np.full(samples.shape[0], -np.inf)
    high = np.full(samples.shape[0], np.inf)
    spread = np.ptp(samples, axis=1) > 0 if n else np.zeros(samples.shape[0], bool)
    if k is not None:
        mean = samples.mean(axis=1)
        centred = samples - mean[:, None]
        quantile = t.ppf(0.5 + t_confidence / 2, n - 1)
        error = samples.std(axis=1, ddof=1) / np.sqrt(n)
        with np.errstate(invalid="ignore", divide="ignore"):  # rows without spread: NaN, masked below
            skew = np.mean(centred ** 3, axis=1) / np.mean(centred ** 2, axis=1) ** 1.5
        a = np.where(spread, skew, 0.0) / np.sqrt(n)
        ordered = np.sort(samples, axis=1)
        # T = (mean - mu) / error, so g(T) <= quantile bounds mu below and g(T) >= -quantile above
        low = np.minimum.reduce([mean - quantile * error, mean - _hall_inverse(quantile, a) * error,
                                 ordered[:, k - 1]])
        high = np.maximum.reduce([mean + quantile * error, mean - _hall_inverse(-quantile, a) * error,
                                  ordered[:, n - k]])
    return np.where(spread, low, np.nan), np.where(spread, high, np.nan)


def _power(effect: float, seeds: int, draws: int = POWER_DRAWS) -> float:
    """P(the rule's interval lies above 0) for ``seeds`` normal differences of mean ``effect`` (in standard
    deviations) and sd 1; a fixed random seed per seed count, so the estimate is deterministic."""
    if seeds < MIN_SEEDS:
        return 0.0
    samples = np.random.default_rng(seeds).standard_normal((draws, seeds)) + effect
    low, _ = rule_bounds(samples)
    return float(np.mean(low > 0))


def seeds_for(effect: float, target: float = POWER_TARGET) -> int | None:
    """The fewest seeds (:data:`MIN_SEEDS` .. :data:`MAX_SEEDS`) whose power at ``effect`` (in standard deviations)
    reaches ``target``; None beyond :data:`MAX_SEEDS`. Doubling, then bisection."""
    if effect <= 0 or not np.isfinite(effect):
        return MIN_SEEDS if effect == np.inf else None
    low, high = MIN_SEEDS - 1, MIN_SEEDS
    while _power(effect, high) < target:
        if high >= MAX_SEEDS:
            return None
        low, high = high, min(2 * high, MAX_SEEDS)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if _power(effect, middle) >= target else (middle, high)
    return high


def interval(differences) -> tuple[float, float | None, float | None]:
    """``(mean, low, high)`` of the per-seed differences: the rule's interval (see the module's docstring); None,
    None when it is unbounded (below :data:`MIN_SEEDS` seeds) or the differences are all equal (a zero-width interval
    from a sample without spread would not cover the seed-to-seed spread it is meant to). Computed on the differences
    divided by their largest magnitude, so it neither overflows nor underflows."""
    values = _values(differences)
    scale = float(np.max(np.abs(values)))
    if scale == 0.0:
        return 0.0, None, None
    scaled = values / scale
    mean = float(scaled.mean())
    low, high = (float(b[0]) for b in rule_bounds(scaled[None, :]))
    if not np.isfinite(low) or not np.isfinite(high):
        return mean * scale, None, None
    with np.errstate(over="ignore"):
        bounds = np.array([mean, low, high]) * scale
    if not np.isfinite(bounds).all():
        raise DialshiftError(f"verdict: the interval of {values.tolist()!r} overflows float64 once scaled back; "
                             f"express the differences in other units")
    return float(bounds[0]), float(bounds[1]), float(bounds[2])


def verdict(differences, direction: str, paper: float | None = None, *, margin: float = MARGIN) -> Verdict:
    """The rule above for one finding: ``differences`` one per seed (paired), ``direction`` the paper's ("+" or
    "-"), ``paper`` the paper's value of the same difference (None when it gives only a direction), ``margin`` the
    relative band around the paper's value within which ours counts as compatible (0 <= margin < 1)."""
    if direction not in DIRECTIONS:
        raise DialshiftError(f"verdict: direction {direction!r} must be '+' or '-'")
    if not 0.0 <= margin < 1.0:
        raise DialshiftError(f"verdict: margin {margin!r} must be at least 0 and below 1 (a fraction of the paper's "
                             f"value)")
    if paper is not None:
        if not isinstance(paper, (int, float)) or not np.isfinite(paper):
            raise DialshiftError(f"verdict: the paper's value {paper!r} must be a finite number or None")
        if paper == 0 or (paper > 0) != (direction == "+"):
            raise DialshiftError(f"verdict: the paper's value {paper!r} does not have the paper's direction "
                                 f"{direction!r}")
    values = _values(differences)
    mean, low, high = interval(values)
    sign = 1.0 if direction == "+" else -1.0
    # everything in the paper's orientation from here: its effect is positive
    o_low, o_high = (None, None) if low is None else sorted((sign * low, sign * high))
    band = None if paper is None else (abs(paper) * (1 - margin), abs(paper) * (1 + margin))
    if o_low is None or o_low <= 0.0 <= o_high:
        if band is None:
            outcome = NOT_DECIDABLE
        else:
            outcome = ABSENT if o_high is not None and o_high < band[0] else UNDERPOWERED
    elif o_high < 0.0:
        outcome = CONTRADICTED
    elif band is None:
        outcome = REPRODUCED
    elif o_high < band[0]:
        outcome = WEAKER
    elif o_low > band[1]:
        outcome = STRONGER
    else:
        outcome = REPRODUCED
    power = needed = None
    if paper is not None and len(values) >= 2:
        sd = float(np.std(values / np.max(np.abs(values)), ddof=1)) if np.any(values != 0) else 0.0
        if sd > 0:
            effect = min(abs(paper) / float(np.max(np.abs(values))) / sd, 1e6)  # beyond 1e6 sd: certain
            power, needed = _power(effect, len(values)), seeds_for(effect)
    return Verdict(outcome, mean, low, high, len(values), paper, power, needed)


def paired_differences(first: dict, second: dict) -> list[float]:
    """``first[s] - second[s]`` for every seed ``s`` both hold (sorted); an error when they share none."""
    shared = sorted(set(first) & set(second))
    if not shared:
        raise DialshiftError("verdict: the two sides share no seed, so no paired difference exists")
    return [float(first[s]) - float(second[s]) for s in shared]


def outcome_counts(outcomes) -> dict:
    """``{outcome: count}`` of the outcome names ``outcomes``, in :data:`OUTCOMES` order and then any other name (a
    report's cells without a verdict) sorted; outcomes that do not occur left out."""
    counts = {}
    for outcome in outcomes:
        counts[outcome] = counts.get(outcome, 0) + 1
    return {o: counts[o] for o in [*OUTCOMES, *sorted(set(counts) - set(OUTCOMES))] if o in counts}
