"""The reproduction reports' verdict rule."""

import pytest
from scipy.stats import t

from dialshift.errors import DialshiftError
from dialshift.verdicts import NOT_DECIDABLE, NOT_REPRODUCED, REPRODUCED, interval, paired_differences, verdict


def test_reproduced_in_the_papers_direction():
    drops = [0.12, 0.15, 0.14, 0.13, 0.16]
    assert verdict(drops, "+").outcome == REPRODUCED
    assert verdict([-d for d in drops], "-").outcome == REPRODUCED


def test_not_reproduced_in_the_opposite_direction():
    assert verdict([-0.03, -0.02, -0.025, -0.04], "+").outcome == NOT_REPRODUCED
    assert verdict([0.03, 0.02, 0.025, 0.04], "-").outcome == NOT_REPRODUCED


def test_not_decidable_when_the_interval_holds_zero_or_one_seed():
    assert verdict([0.05, -0.04, 0.02, -0.01], "+").outcome == NOT_DECIDABLE
    single = verdict([0.3], "+")
    assert single.outcome == NOT_DECIDABLE and single.low is None and single.cell(100) == "not decidable (30.0, 1 seed)"
    assert verdict([0.0, 0.0, 0.0], "+").outcome == NOT_DECIDABLE  # no spread, but the point is 0


def test_interval_is_students_t_of_the_mean():
    values = [1.0, 2.0, 4.0]
    mean, low, high = interval(values)
    half = t.ppf(0.975, 2) * (((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2) ** 0.5 / 3 ** 0.5
    assert mean == pytest.approx(7 / 3) and (low, high) == pytest.approx((7 / 3 - half, 7 / 3 + half))
    # a mean well away from 0 is not enough: two seeds far apart give an interval over 0
    assert verdict([0.01, 0.2], "+").outcome == NOT_DECIDABLE
    no_spread = verdict([0.1, 0.1, 0.1], "+")  # equal differences: the spread, and so the interval, is unknown
    assert no_spread.outcome == NOT_DECIDABLE and no_spread.low is None
    assert no_spread.cell(100) == "not decidable (10.0, 3 seeds, no spread: no interval)"


def test_paired_differences_and_bad_input():
    assert paired_differences({0: 3.0, 1: 5.0, 2: 1.0}, {1: 4.0, 0: 1.0}) == [2.0, 1.0]
    with pytest.raises(DialshiftError, match="share no seed"):
        paired_differences({0: 1.0}, {1: 1.0})
    with pytest.raises(DialshiftError, match="direction"):
        verdict([1.0, 2.0], "up")
    with pytest.raises(DialshiftError, match="one finite difference per seed"):
        verdict([1.0, float("nan")], "+")
