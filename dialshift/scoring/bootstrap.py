"""Seeded percentile bootstrap intervals, paired by instance id across configs.

Poisson bootstrap (Hanley and MacGibbon, 2006; Chamandy et al., 2012): in replicate ``r`` each instance id is counted
``w`` times, ``w`` a Poisson(1) draw computed from ``(seed, r, id)`` alone: the id's 64-bit key (:func:`id_keys
<dialshift.scoring.gold.id_keys>`) and a per-replicate stream value derived from the seed are mixed by the
SplitMix64 finaliser (Steele et al., 2014) and the result is read through the Poisson(1) quantile function. So:

* a config's replicates do not depend on which other configs are scored with it, nor on file order: the same
  predictions give byte-identical intervals alone and in a full submission;
* every config that holds an id counts it the same number of times in a replicate, so the difference of two configs'
  statistics within a replicate is a paired bootstrap draw of their difference (two configs are compared on the ids
  they share, each restricted to those ids);
* a replicate's size varies around ``N`` (Poisson, standard deviation ``sqrt(N)``) where the multinomial bootstrap
  keeps it at ``N``; the two agree as ``N`` grows (the counts of ``N`` draws with replacement are asymptotically
  independent Poisson(1)). A replicate that draws none of a config's ids gives NaN.

Cost: ``O(replicates x (U + total instances))`` for ``U`` distinct ids. The statistics of a block of replicates
are small matrix products (``BLOCK`` rows), run on one BLAS thread (``threadpoolctl``): more threads gain nothing on
them, and on a machine busy with other work their synchronisation made the products many times slower. A block's
``R x N`` weights are column-major (each instance's ``R`` counts side by side): smooth ECE's sparse product and the
running sums that the debiased L2 error and the binned ECE share read them as ``N x R`` rows without a transposed
copy. Every sample's weights of a block are widened into one scratch array (fresh memory of megabytes costs a page
fault per 4 KiB on first write).
"""

from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

#: Replicates scored per call of a batched statistic (bounds the ``block x ids`` weight matrix).
BLOCK = 100


@dataclass
class Sample:
    """One config's bootstrap input: its instance keys (uint64) and a ``weights -> {metric: value}`` function;
    ``batched``: the function also takes an ``R x N`` weight matrix and returns arrays of ``R`` values."""

    keys: np.ndarray
    statistic: object
    batched: bool = False


def percentile_interval(values: np.ndarray, confidence: float = 0.95):
    """``[low, high]`` percentile interval of the finite replicate values; None when fewer than half are finite."""
    finite = values[np.isfinite(values)]
    if len(finite) < max(2, len(values) // 2):
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return [float(low), float(high)]


#: SplitMix64's increment and finaliser multipliers (Steele, Lea and Flood, 2014).
_GOLDEN, _MIX1, _MIX2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (in place; wraps modulo 2**64)."""
    x ^= x >> np.uint64(30)
    x *= _MIX1
    x ^= x >> np.uint64(27)
    x *= _MIX2
    x ^= x >> np.uint64(31)
    return x


def _poisson_thresholds() -> np.ndarray:
    """``floor(2**64 P(X <= k))`` for X ~ Poisson(1) and k = 0, 1, ... while ``P(X = k) >= 2**-64`` (60-digit decimals,
    so the same on every platform): a uniform 64-bit value ``u`` gives the count ``#{k: threshold_k <= u}``."""
    from decimal import Decimal, localcontext

    with localcontext() as context:
        context.prec = 60
        term = cumulative = Decimal(-1).exp()
        thresholds, k = [], 0
        while term * 2**64 >= 1:  # P(X = k) below 2**-64 moves no threshold
            thresholds.append(int(cumulative * 2**64))
            k += 1
            term /= k
            cumulative += term
    return np.array(thresholds, dtype=np.uint64)


_THRESHOLDS = _poisson_thresholds()
#: Counts below this are found by comparing with each threshold (P(X >= 4) = 1.9 %: the rest use a binary search).
COMPARED = 4


def replicate_weights(keys: np.ndarray, replicates: range, seed: int = 0) -> np.ndarray:
    """``len(replicates) x len(keys)`` Poisson(1) counts (float64) of the ids with 64-bit ``keys`` in the replicates
    numbered ``replicates`` (module docstring): a function of ``(seed, replicate, key)`` only."""
    return replicate_counts(keys, replicates, seed).astype(np.float64)


#: Keys mixed at a time by :func:`replicate_counts` (1 MiB of uint64: the ten passes of the mix stay in cache).
CHUNK = 1 << 17


def replicate_counts(keys: np.ndarray, replicates: range, seed: int = 0) -> np.ndarray:
    """:func:`replicate_weights` as uint8 counts (at most the number of thresholds, 21). Each replicate's keys are
    mixed and compared :data:`CHUNK` at a time in preallocated buffers: the same values as mixing the whole
    ``replicates x keys`` matrix at once, at about half the cost (its temporaries went through memory ten times)."""
    seed_state = _mix(np.array([seed], dtype=np.uint64) * _GOLDEN)
    numbers = np.arange(replicates.start, replicates.stop, dtype=np.uint64)
    streams = _mix((numbers + np.uint64(1)) * _GOLDEN + seed_state)
    keys = np.asarray(keys, dtype=np.uint64)
    counts = np.zeros((len(streams), len(keys)), dtype=np.uint8)
    size = max(1, min(CHUNK, len(keys)))
    mixed, shifted, above = np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint64), np.empty(size, bool)
    with np.errstate(over="ignore"):
        for row, stream in enumerate(streams):
            for start in range(0, len(keys), size):
                stop = min(start + size, len(keys))
                x, t, hit = mixed[: stop - start], shifted[: stop - start], above[: stop - start]
                np.bitwise_xor(keys[start:stop], stream, out=x)
                for shift, multiplier in ((_SHIFTS[0], _MIX1), (_SHIFTS[1], _MIX2), (_SHIFTS[2], None)):
                    np.right_shift(x, shift, out=t)  # SplitMix64's finaliser (:func:`_mix`), in place
                    np.bitwise_xor(x, t, out=x)
                    if multiplier is not None:
                        np.multiply(x, multiplier, out=x)
                part = counts[row, start:stop]
                for threshold in _THRESHOLDS[:COMPARED]:  # vectorised comparisons for the common counts
                    np.greater_equal(x, threshold, out=hit)
                    part += hit
                tail = np.flatnonzero(part == COMPARED)  # a search for the rest
                part[tail] = np.searchsorted(_THRESHOLDS, x[tail], side="right")
    return counts


def paired_replicates(samples: dict[str, Sample], replicates: int = 1000, seed: int = 0) -> dict:
    """``{config: {metric: array of replicate values}}`` for the paired bootstrap described in the module doc."""
    union = np.unique(np.concatenate([sample.keys for sample in samples.values()]))
    positions = {name: np.searchsorted(union, sample.keys) for name, sample in samples.items()}
    draws: dict[str, dict[str, list]] = {name: {} for name in samples}
    largest = max((len(sample.keys) for sample in samples.values()), default=0)
    scratch = np.empty(0)
    # a replicate may leave a subset empty: NaN, no warning
    with threadpool_limits(limits=1, user_api="blas"), np.errstate(divide="ignore", invalid="ignore"):
        for start in range(0, replicates, BLOCK):
            # ids x replicates: a sample's weights are whole rows of it, gathered as bytes, then widened, and
            # passed as their transpose (replicates x ids, column-major; see the module docstring)
            by_id = np.ascontiguousarray(replicate_counts(union, range(start, min(start + BLOCK, replicates)), seed).T)
            if scratch.size != largest * by_id.shape[1]:
                scratch = np.empty(largest * by_id.shape[1])
            for name, sample in samples.items():
                # widened into the same memory for every sample (fresh memory of this size costs a page fault per
                # 4 KiB on first write); each call gets a new array object, and the metrics' caches of a block
                # (row totals, running sums) are keyed by that object, so none is read after it is overwritten
                weights = scratch[: len(sample.keys) * by_id.shape[1]].reshape(len(sample.keys), by_id.shape[1])
                weights[...] = by_id[positions[name]]
                weights = weights.T
                if sample.batched:
                    for metric, values in sample.statistic(weights).items():
                        # a copy: a statistic may return a view of memory its next call reuses
                        draws[name].setdefault(metric, []).append(np.array(values, dtype=np.float64, ndmin=1))
                    continue
                values = {}
                for row in weights:
                    for metric, value in sample.statistic(row).items():
                        values.setdefault(metric, []).append(value)
                for metric, column in values.items():
                    draws[name].setdefault(metric, []).append(np.asarray(column, dtype=np.float64))
    return {name: {metric: np.concatenate(parts) for metric, parts in metrics.items()}
            for name, metrics in draws.items()}


def intervals(draws: dict, confidence: float = 0.95) -> dict:
    """``{config: {metric: [low, high] or None}}`` from :func:`paired_replicates`."""
    return {name: {metric: percentile_interval(values, confidence) for metric, values in metrics.items()}
            for name, metrics in draws.items()}


def paired_differences(points: dict, draws: dict, pairs: dict, confidence: float = 0.95) -> dict:
    """``{metric: {"value", "interval"}}`` per pair: ``pairs = {key: (config, base)}`` names two entries of ``points``
    / ``draws`` (configs, or configs restricted to the ids two configs share); the point difference
    ``config - base`` and the percentile interval of the replicate differences, for the metrics both have."""
    result = {}
    for key, (name, base) in pairs.items():
        metrics = {}
        for metric, value in points[name].items():
            if metric not in points[base] or metric not in draws[name] or metric not in draws[base]:
                continue
            difference = value - points[base][metric]
            metrics[metric] = {
                "value": float(difference) if np.isfinite(difference) else None,
                "interval": percentile_interval(draws[name][metric] - draws[base][metric], confidence),
            }
        result[key] = metrics
    return result
