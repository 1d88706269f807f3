"""The verdict rule of the reproduction reports (``docs/reproduction_*.md``), applied by their table generators.

A paper's finding is a claimed direction of a difference (``"+"``: the first quantity is larger, e.g. test F1 minus
cov_test F1; ``"-"``: smaller). Given one paired difference per seed (the same seed's model measured both ways), the
rule is:

* **reproduced**: the mean difference has the paper's direction and its 95 % interval across seeds excludes 0;
* **not reproduced**: the mean difference has the opposite direction and its interval excludes 0;
* **not decidable**: otherwise (the interval contains 0, or there is no interval: fewer than two seeds, or per-seed
  differences that are all equal, whose spread, and with it the interval, cannot be estimated).

The interval is Student's t interval of the mean of the per-seed differences (``scipy.stats.ttest_1samp``), which
covers at its nominal level when the per-seed differences are roughly normal; with the few seeds of a CPU run that
assumption is the caveat to state beside it.
"""

from dataclasses import dataclass

import numpy as np

from dialshift.errors import DialshiftError

REPRODUCED, NOT_REPRODUCED, NOT_DECIDABLE = "reproduced", "not reproduced", "not decidable"
DIRECTIONS = ("+", "-")


@dataclass(frozen=True)
class Verdict:
    """A finding's verdict: the outcome, the mean per-seed difference, its 95 % t interval (None below two seeds or
    without spread) and the number of seeds."""

    outcome: str
    mean: float
    low: float | None
    high: float | None
    seeds: int

    def cell(self, scale: float = 1.0, digits: int = 1) -> str:
        """``outcome (mean [low, high], n seeds)``, the numbers multiplied by ``scale``."""
        if self.low is None:
            spread = ", no spread: no interval" if self.seeds > 1 else ""
            return (f"{self.outcome} ({self.mean * scale:.{digits}f}, {self.seeds} seed{'s' * (self.seeds != 1)}"
                    f"{spread})")
        return (f"{self.outcome} ({self.mean * scale:.{digits}f} [{self.low * scale:.{digits}f}, "
                f"{self.high * scale:.{digits}f}], {self.seeds} seeds)")


def interval(differences, confidence: float = 0.95) -> tuple[float, float | None, float | None]:
    """``(mean, low, high)`` of the per-seed differences: Student's t interval of the mean (None, None below two
    seeds, and when the differences are all equal: a zero-width interval from a sample without spread would not cover
    the seed-to-seed spread it is meant to)."""
    from scipy.stats import ttest_1samp

    values = np.asarray(differences, dtype=float)
    if values.ndim != 1 or not len(values) or not np.isfinite(values).all():
        raise DialshiftError(f"verdict: expected one finite difference per seed, got {values.tolist()!r}")
    if len(values) < 2:
        return float(values.mean()), None, None
    if np.all(values == values[0]):
        return float(values[0]), None, None
    ci = ttest_1samp(values, 0.0).confidence_interval(confidence)
    return float(values.mean()), float(ci.low), float(ci.high)


def verdict(differences, direction: str) -> Verdict:
    """The rule above for one finding: ``differences`` one per seed (paired), ``direction`` the paper's ("+" or
    "-")."""
    if direction not in DIRECTIONS:
        raise DialshiftError(f"verdict: direction {direction!r} must be '+' or '-'")
    mean, low, high = interval(differences)
    sign = 1.0 if direction == "+" else -1.0
    if low is None or low <= 0.0 <= high:
        outcome = NOT_DECIDABLE
    else:
        outcome = REPRODUCED if sign * mean > 0 else NOT_REPRODUCED
    return Verdict(outcome, mean, low, high, len(np.atleast_1d(differences)))


def paired_differences(first: dict, second: dict) -> list[float]:
    """``first[s] - second[s]`` for every seed ``s`` both hold (sorted); an error when they share none."""
    shared = sorted(set(first) & set(second))
    if not shared:
        raise DialshiftError("verdict: the two sides share no seed, so no paired difference exists")
    return [float(first[s]) - float(second[s]) for s in shared]
