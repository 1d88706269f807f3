"""The across-seed summary every table uses: mean, sample sd, min, max and count, and its cell."""

import numpy as np
import pytest

from dialshift.across_seeds import format_spread, mean_sd, spread, spreads


def test_spread_is_the_sample_statistic_without_missing_values():
    assert spread([0.5, None, 0.7, 0.9]) == {"mean": pytest.approx(0.7), "sd": pytest.approx(0.2), "min": 0.5,
                                             "max": 0.9, "n": 3}
    assert spread([0.25]) == {"mean": 0.25, "sd": 0.0, "min": 0.25, "max": 0.25, "n": 1}
    assert spread([None]) == {"mean": None, "sd": None, "min": None, "max": None, "n": 0}
    values = np.random.default_rng(0).random(7)
    assert spread(values)["sd"] == float(np.std(values, ddof=1))


def test_spreads_keeps_the_shape_and_the_first_seen_order():
    first = {"maha": {"test": {"f1": 0.5, "acc": 0.6}}, "msp": {"test": {"f1": 0.1}}}
    second = {"msp": {"test": {"f1": 0.3, "acc": 0.4}}, "maha": {"test": {"f1": 0.7, "acc": None}}}
    summary = spreads([first, second])
    assert list(summary) == ["maha", "msp"] and list(summary["msp"]["test"]) == ["f1", "acc"]
    assert summary["maha"]["test"]["f1"] == spread([0.5, 0.7])
    assert summary["maha"]["test"]["acc"] == spread([0.6])  # None and absent values are not counted
    assert summary["msp"]["test"]["acc"] == spread([0.4])


def test_cells():
    assert format_spread(spread([0.5, 0.7])) == "0.600 ± 0.141"
    assert format_spread(spread([0.5, 0.7]), digits=1, scale=100) == "60.0 ± 14.1"
    assert format_spread(spread([0.5])) == "0.500"
    assert format_spread(spread([])) == "–"
    assert mean_sd([0.5, 0.7]) == "0.6 ± 0.1"
    # scaled before the statistic, as the reproduction tables print points: 100 * 0.8574 + 100 * 0.0336 halves to
    # 44.55 (shown 44.6), while 100 * the mean of the fractions is 44.549999... (shown 44.5)
    assert mean_sd([0.8574, 0.0336], scale=100) == "44.6 ± 58.3"
    assert format_spread(spread([0.8574, 0.0336]), digits=1, scale=100) == "44.5 ± 58.3"
