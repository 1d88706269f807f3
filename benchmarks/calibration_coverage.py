"""Coverage of the 95 % bootstrap intervals of binned ECE, smooth ECE and the debiased L2 calibration error.

Simulation with a known truth: the top-label confidence ``c`` is uniform on [0.5, 1] and the prediction is right with
probability ``a(c)``, for four calibration curves:

* ``calibrated``: ``a(c) = c``;
* ``off by 0.02`` / ``off by 0.1``: ``a(c) = c - 0.02`` / ``c - 0.1`` (over-confident everywhere);
* ``sign-changing``: ``a(c) = c + 0.05 sin(4 pi (c - 0.5))`` (under- then over-confident, twice).

For each curve and test-set size ``n``, ``--datasets`` test sets are drawn; each is scored with the estimators of
the scoring tasks (``dialshift.metrics``: 15 equal-width bins for ECE, 15 equal-mass bins for the debiased L2
error) and gets the percentile bootstrap interval of ``dialshift.scoring.bootstrap`` from ``--replicates``
resamples (``n`` ids drawn with replacement, as counts: the multinomial bootstrap; the scoring bootstrap's Poisson(1)
counts per id agree with it as ``n`` grows). The table reports, per estimator, the share of test sets whose interval
covers the estimator's target and the mean estimate. Targets:

* binned ECE: the true (L1) calibration error ``E|c - a(c)|`` (0, 0.02, 0.1 and 0.1/pi);
* smooth ECE (``smooth_ece``: every replicate at its own bandwidth, relplot's search; ``smooth_ece_point``: every
  replicate at the point estimate's bandwidth, the interval the scoring tasks report): the population smooth ECE,
  i.e. the same smECE functional (kernel, bandwidth fixed point) applied to the true curve: computed by
  ``smooth_ece_compute`` on 200,000 confidences at the quantiles of U[0.5, 1] with the correctness replaced by
  ``a(c)`` (the smoothing is linear in the residuals, so this is the large-``n`` limit);
* debiased L2: the true L2 calibration error ``sqrt(E[(c - a(c))^2])`` (0, 0.02, 0.1 and 0.05/sqrt 2).

Run ``python benchmarks/calibration_coverage.py`` (the issue's 500 test sets x 1,000 replicates; hours of CPU) or
``--quick``; the table is printed and written into ``docs/metrics.md`` between the coverage markers (``--no-write``
to leave the doc alone). ``--estimators`` picks the columns; a choice other than the default three is written
between markers named after it (``<!-- calibration-coverage:smooth_ece_point:start -->``). Each (curve, n, test
set) has its own seed, so the table does not depend on ``--jobs``, and every estimator sees the same test sets and
replicates whichever are chosen.
"""

import argparse
import math
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

SCENARIOS = {
    "calibrated": lambda c: c,
    "off by 0.02": lambda c: c - 0.02,
    "off by 0.1": lambda c: c - 0.1,
    "sign-changing": lambda c: c + 0.05 * np.sin(4 * np.pi * (c - 0.5)),
}
ESTIMATORS = ("ece", "smooth_ece", "debiased_l2")
LABELS = {"ece": "binned ECE", "smooth_ece": "smooth ECE", "smooth_ece_point": "smooth ECE at the point bandwidth",
          "debiased_l2": "debiased L2"}
BLOCK = 100
DOC = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"


def markers(estimators) -> tuple[str, str]:
    """The doc markers of a table of ``estimators``: the coverage markers for the default three."""
    name = "calibration-coverage" + ("" if tuple(estimators) == ESTIMATORS else ":" + "+".join(estimators))
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def targets(scenario: str) -> dict:
    """Each estimator's true value for a calibration curve (module docstring)."""
    from dialshift.metrics.smooth_calibration import smooth_ece_compute

    curve = SCENARIOS[scenario]
    grid = 0.5 + 0.5 * (np.arange(200_000) + 0.5) / 200_000  # quantiles of U[0.5, 1]
    gap = grid - curve(grid)
    smooth = smooth_ece_compute({"confidence": grid, "correct": curve(grid)})
    return {"ece": float(np.mean(np.abs(gap))), "smooth_ece": smooth, "smooth_ece_point": smooth,
            "debiased_l2": float(np.sqrt(np.mean(gap**2)))}


def estimates(stats: dict, n_bins: int, estimators, weights=None) -> dict:
    from dialshift.metrics.calibration import ece_compute
    from dialshift.metrics.smooth_calibration import debiased_l2_compute, smooth_ece_compute

    computes = {"ece": lambda: ece_compute(stats, n_bins, weights),
                "smooth_ece": lambda: smooth_ece_compute(stats, weights),
                "smooth_ece_point": lambda: smooth_ece_compute(stats, weights, bandwidth="point"),
                "debiased_l2": lambda: debiased_l2_compute(stats, n_bins, weights)}
    return {name: computes[name]() for name in estimators}


def one_test_set(job) -> dict:
    """Point estimates and percentile intervals of one simulated test set."""
    from dialshift.metrics.calibration import bin_edges, bin_index
    from dialshift.scoring.bootstrap import percentile_interval

    scenario, n, index, replicates, n_bins, seed, estimators = job
    rng = np.random.default_rng([seed, list(SCENARIOS).index(scenario), n, index])
    confidence = rng.uniform(0.5, 1.0, n)
    correct = rng.random(n) < SCENARIOS[scenario](confidence)
    stats = {"confidence": confidence, "correct": correct,
             "bin": bin_index(confidence, bin_edges(None, n_bins), equal_width=True)}
    point = estimates(stats, n_bins, estimators)
    draws = {name: [] for name in estimators}
    for start in range(0, replicates, BLOCK):
        counts = np.stack([np.bincount(rng.integers(0, n, n), minlength=n)
                           for _ in range(min(BLOCK, replicates - start))]).astype(np.float64)
        for name, values in estimates(stats, n_bins, estimators, counts).items():
            draws[name].extend(np.atleast_1d(values).tolist())
    return {"point": point, "interval": {name: percentile_interval(np.asarray(values))
                                         for name, values in draws.items()}}


def table(results: dict, truths: dict, datasets: int, replicates: int, sizes, estimators) -> str:
    header = ["scenario", "n"] + [f"{LABELS[name]}: coverage (mean; target)" for name in estimators]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for scenario in SCENARIOS:
        for n in sizes:
            cells = [scenario, f"{n:,}"]
            for name in estimators:
                truth = truths[scenario][name]
                sets = results[scenario, n]
                covered = sum(low - 1e-12 <= truth <= high + 1e-12 for low, high in
                              (r["interval"][name] or (math.nan, math.nan) for r in sets))
                mean = np.mean([r["point"][name] for r in sets])
                cells.append(f"{100 * covered / len(sets):.0f} % ({mean:.4f}; {truth:.4f})")
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"{datasets} simulated test sets per row, {replicates} bootstrap replicates each, 15 bins; "
                 "coverage = share of test sets whose 95 % percentile interval holds the target.")
    return "\n".join(lines)


def write_doc(text: str, estimators, doc: Path = DOC) -> None:
    from dialshift.io import atomic_write

    start, end = markers(estimators)
    source = doc.read_text(encoding="utf-8")
    if start not in source or end not in source:
        raise SystemExit(f"{doc} has no {start} ... {end} markers to write the table between")
    block = f"{start}\n{text}\n{end}"
    atomic_write(doc, re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, source, flags=re.S))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=500, help="simulated test sets per (curve, n) (500)")
    parser.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates per test set (1000)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 3000, 30000], help="test-set sizes")
    parser.add_argument("--bins", type=int, default=15, help="bins of ECE and of the debiased L2 error (15)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--estimators", nargs="+", choices=list(LABELS), default=list(ESTIMATORS),
                        help="the table's columns (default: " + " ".join(ESTIMATORS) + ")")
    parser.add_argument("--quick", action="store_true", help="20 test sets x 200 replicates (a smoke run)")
    parser.add_argument("--no-write", action="store_true", help=f"print the table only, do not update {DOC.name}")
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets, args.replicates = 20, 200
    began = time.perf_counter()
    truths = {scenario: targets(scenario) for scenario in SCENARIOS}
    jobs = [(scenario, n, index, args.replicates, args.bins, args.seed, tuple(args.estimators))
            for scenario in SCENARIOS for n in args.sizes for index in range(args.datasets)]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(one_test_set, jobs, chunksize=4))
    else:
        outcomes = [one_test_set(job) for job in jobs]
    results: dict = {}
    for job, outcome in zip(jobs, outcomes, strict=True):
        results.setdefault(job[:2], []).append(outcome)
    text = table(results, truths, args.datasets, args.replicates, args.sizes, args.estimators)
    chosen = "" if tuple(args.estimators) == ESTIMATORS else " --estimators " + " ".join(args.estimators)
    text += (f" Regenerate with `python benchmarks/calibration_coverage.py --datasets {args.datasets} "
             f"--replicates {args.replicates}{chosen}` ({time.perf_counter() - began:.0f} s with --jobs {args.jobs}).")
    print(text)
    if not args.no_write:
        write_doc(text, args.estimators)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
