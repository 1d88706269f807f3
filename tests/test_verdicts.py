"""The reproduction reports' verdict rule: its outcomes, its interval, power, scale safety and, by a small
simulation, its false-decision rate."""

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import t

from dialshift.errors import DialshiftError
from dialshift.verdict_simulation import FAMILIES, SEEDS, false_decisions
from dialshift.verdicts import (
    ABSENT,
    CONTRADICTED,
    NOT_DECIDABLE,
    REPRODUCED,
    STRONGER,
    UNDERPOWERED,
    WEAKER,
    interval,
    outcome_counts,
    paired_differences,
    seeds_for,
    verdict,
)

DROPS = [0.12, 0.15, 0.14, 0.13, 0.16, 0.11, 0.14, 0.13]


def test_outcomes_weigh_the_papers_value():
    assert verdict(DROPS, "+", 0.14).outcome == REPRODUCED
    assert verdict([-d for d in DROPS], "-", -0.14).outcome == REPRODUCED
    assert verdict(DROPS, "+", 0.5).outcome == WEAKER
    assert verdict(DROPS, "+", 0.05).outcome == STRONGER
    assert verdict([-d for d in DROPS], "+", 0.14).outcome == CONTRADICTED
    noise = [0.02, -0.01, 0.01, 0.0, -0.02, 0.01, -0.015, 0.005]
    assert verdict(noise, "+", 0.5).outcome == ABSENT  # holds 0, rules the paper's effect out
    assert verdict(noise, "+", 0.01).outcome == UNDERPOWERED  # holds 0 and the paper's value
    assert verdict(noise, "+").outcome == NOT_DECIDABLE  # no paper value: absent and underpowered look alike
    assert verdict(DROPS, "+").outcome == REPRODUCED and verdict(DROPS, "-").outcome == CONTRADICTED


def test_the_margin_decides_compatibility():
    mean, low, high = interval(DROPS)
    paper = high / 0.9  # 10 % above the interval's top
    assert verdict(DROPS, "+", paper, margin=0.0).outcome == WEAKER
    assert verdict(DROPS, "+", paper, margin=0.2).outcome == REPRODUCED
    with pytest.raises(DialshiftError, match="margin"):
        verdict(DROPS, "+", 0.1, margin=1.0)


def test_below_six_seeds_the_rule_decides_nothing():
    for n in (1, 2, 3, 5):
        v = verdict(DROPS[:n], "+", 0.14)
        assert v.outcome == UNDERPOWERED and v.low is None and v.high is None
        assert v.power in (None, 0.0)
    assert verdict(DROPS[:5], "+", 0.14).cell(100) == ("underpowered (14.0, 5 seeds, no interval below 6 seeds; "
                                                       "paper 14.0; power 0.00)")
    assert verdict([0.3], "+").cell(100) == "not decidable (30.0, 1 seed)"
    flat = verdict([0.1] * 7, "+", 0.1)  # equal differences: the spread, and so the interval, is unknown
    assert flat.outcome == UNDERPOWERED and flat.power is None and flat.seeds_for_power is None
    assert flat.cell(100) == "underpowered (10.0, 7 seeds, no spread: no interval; paper 10.0)"


def _hall_bounds(values, confidence=0.99):
    """Hall's skewness-corrected t interval by root finding on his transformation (not its closed-form inverse)."""
    n, mean, error = len(values), values.mean(), values.std(ddof=1) / len(values) ** 0.5
    a = np.mean((values - mean) ** 3) / np.mean((values - mean) ** 2) ** 1.5 / n ** 0.5
    quantile = t.ppf(0.5 + confidence / 2, n - 1)

    def g(mu, target):
        big_t = (mean - mu) / error
        return big_t + a * big_t ** 2 / 3 + a ** 2 * big_t ** 3 / 27 + a / 6 - target

    wide = 1e3 * (error + abs(mean))
    return brentq(g, mean - wide, mean + wide, args=(quantile,)), brentq(g, mean - wide, mean + wide,
                                                                        args=(-quantile,))


def test_interval_is_the_hull_of_the_99_t_hall_and_the_exact_median_interval():
    values = np.array([1.0, 2.0, 4.0, 3.0, 2.5, 10.0, 2.2])
    mean, low, high = interval(values)
    half = t.ppf(0.995, 6) * values.std(ddof=1) / 7 ** 0.5
    hall_low, hall_high = _hall_bounds(values)
    ordered = np.sort(values)  # n = 7: [x_(1), x_(7)] covers 1 - 2/128 >= 95 %, [x_(2), x_(6)] does not
    assert mean == pytest.approx(values.mean())
    assert low == pytest.approx(min(mean - half, hall_low, ordered[0]))
    assert high == pytest.approx(max(mean + half, hall_high, ordered[-1]))
    assert hall_high > mean + half  # a right tail: Hall's interval widens the top, where more of the tail would lie
    assert verdict(values, "+", 3.0).cell(digits=2).startswith(f"underpowered ({mean:.2f} [{low:.2f}, {high:.2f}], 7")
    assert interval(-values) == pytest.approx((-mean, -high, -low))  # mirrored data, mirrored interval


def test_a_skewed_sample_that_misses_its_tail_is_not_decided():
    # six seeds all below 0 with a tail towards 0 (the heavy skew whose truth is its mean, seen without its tail):
    # the t interval at 99 % [-0.77, -0.13] and the sign test [-0.62, -0.10] decide "-", Hall's interval reaches 0.62
    values = np.array([-0.62, -0.58, -0.55, -0.5, -0.35, -0.1])
    mean, low, high = interval(values)
    assert low < mean < 0 < high and high == pytest.approx(_hall_bounds(values)[1])
    assert verdict(values, "-").outcome == NOT_DECIDABLE and verdict(values, "-", -0.45).outcome == UNDERPOWERED
    for shifted in (values * 1e-12 + 3.0, values * 1e12 - 7e11):  # shift- and scale-equivariant
        s_mean, s_low, s_high = interval(shifted)
        scale, shift = (1e-12, 3.0) if shifted[0] > 1 else (1e12, -7e11)
        assert (s_low, s_high) == pytest.approx((low * scale + shift, high * scale + shift), rel=1e-6)


def test_power_and_seeds_for_power():
    v = verdict(DROPS, "+", 0.14)
    # an effect of 8.7 sd: six seeds decide it; not always, since a normal sample that looks skewed (1 in 4,000 here)
    # widens Hall's interval on its tail's side far enough to hold 0
    assert 0.999 <= v.power < 1.0 and v.seeds_for_power == 6
    weak = verdict([0.1, -0.1, 0.3, -0.2, 0.05, 0.2], "+", 0.05)
    assert 0.0 < weak.power < 0.3 and weak.seeds_for_power > 6
    assert seeds_for(1.0) in range(18, 23)  # an effect of one sd needs about 20 seeds under this rule
    assert verdict(DROPS, "+").power is None


@pytest.mark.parametrize("values", [[1e308, 1.5e308, 1.7e308], [1e-320, 2e-320, 3e-320],
                                    [1e308, 1.5e308, 1.7e308, -1e308, 1.2e308, -1.6e308],
                                    [1e-320, 2e-320, 3e-320, -1e-320, 5e-320, -3e-320]])
def test_overflow_and_underflow_never_reproduce(values):
    for paper in (None, values[0]):
        try:
            assert verdict(values, "+", paper).outcome != REPRODUCED
        except DialshiftError as error:  # or a refusal naming the cause
            assert "overflows float64" in str(error)


def test_the_rule_is_scale_invariant_far_from_float64s_limits():
    base = [1.0, 1.5, 1.7, 1.2, 1.4, 1.1]
    for scale in (1e300, 1e-315):
        scaled = verdict([x * scale for x in base], "+")
        assert scaled.outcome == verdict(base, "+").outcome == REPRODUCED
        assert scaled.low == pytest.approx(verdict(base, "+").low * scale, rel=1e-3)


def test_an_interval_beyond_float64_is_refused():
    with pytest.raises(DialshiftError, match="overflows float64"):
        verdict([1.7e308, -1.7e308, 1.7e308, -1.7e308, 1.7e308, 1.6e308], "+")


@pytest.mark.parametrize("family", FAMILIES)
def test_simulated_false_decision_rate_is_at_most_5_percent_in_every_case(family):
    # the benchmark's cells (20,000 draws, the same seeds): the earlier rule, without Hall's interval, breaks it for
    # the heavy skew whose truth is its mean (8.9 % at 6 seeds)
    for seeds in SEEDS:
        rates = false_decisions(family, seeds, draws=20000)
        assert rates["rule"] <= 0.05, (family, seeds, rates)


def test_the_simulation_catches_the_t_intervals_errors():
    # the check above can fail: the earlier rule (t alone) breaks it for the outlier seed at 10 seeds
    assert false_decisions("outlier seed", 10, draws=4000)["t"] > 0.08


def test_paired_differences_and_bad_input():
    assert paired_differences({0: 3.0, 1: 5.0, 2: 1.0}, {1: 4.0, 0: 1.0}) == [2.0, 1.0]
    with pytest.raises(DialshiftError, match="share no seed"):
        paired_differences({0: 1.0}, {1: 1.0})
    with pytest.raises(DialshiftError, match="direction"):
        verdict([1.0, 2.0], "up")
    with pytest.raises(DialshiftError, match="one finite difference per seed"):
        verdict([1.0, float("nan")], "+")
    with pytest.raises(DialshiftError, match="one finite difference per seed"):
        verdict(["a"], "+")
    with pytest.raises(DialshiftError, match="paper's direction"):
        verdict([1.0, 2.0], "+", -0.5)
    with pytest.raises(DialshiftError, match="finite number"):
        verdict([1.0, 2.0], "+", float("inf"))


def test_docs_verdicts_md_holds_what_the_benchmark_renders(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(root / "benchmarks" / "verdicts.py"), "--check"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_outcome_counts_follow_the_rule_s_order_then_other_names():
    counts = outcome_counts(["underpowered", "not run", "reproduced", "underpowered", "absent", "one seed: no verdict"])
    assert counts == {"reproduced": 1, "absent": 1, "underpowered": 2, "not run": 1, "one seed: no verdict": 1}
    assert list(counts) == ["reproduced", "absent", "underpowered", "not run", "one seed: no verdict"]
    assert outcome_counts([]) == {}
