"""Coverage of the calibration metrics' intervals, and the size and power of the calibration test, by simulation.

Simulation with a known truth: the top-label confidence ``c`` is uniform on [0.5, 1] and the prediction is right with
probability ``a(c)``, for five calibration curves:

* ``calibrated``: ``a(c) = c``;
* ``over-confident by 0.02`` / ``0.05`` / ``0.1``: ``a(c) = c - 0.02`` / ``c - 0.05`` / ``c - 0.1``;
* ``sign-changing``: ``a(c) = c + 0.05 sin(4 pi (c - 0.5))`` (under- then over-confident, twice).

Each test set also holds a second config on the same ids, a calibrated model correlated with the first (its
confidence is the first's plus N(0, 0.05) noise, clipped to [0.5, 1], and its correctness uses the same uniform draw),
so that the paired difference ``first - second`` has the first's calibration error as its truth (0 for the
calibrated curve: two calibrated models).

Every test set is scored by the scoring path itself: the tasks' calibration metrics and their replicate quantities
(``dialshift.scoring.tasks._calibration_metrics``), the paired Poisson bootstrap weights of
``dialshift.scoring.bootstrap`` (random 64-bit ids), the consistency-resampling test
(``dialshift.scoring.tasks._calibration_test``) and the intervals of ``dialshift.scoring.calibration``. Targets:
binned ECE: the true L1 calibration error ``E|c - a(c)|``; smooth ECE: the population smooth ECE (the smECE functional
of the true curve, computed on 200,000 confidence quantiles with the correctness replaced by ``a(c)``); debiased L2:
``sqrt(E[(c - a(c))^2])``. The table gives the share of test sets whose interval holds the target, then the share
whose calibration test rejects at 5 % (the size for the calibrated curve, the power otherwise).

``--candidates`` adds the intervals that were measured and not chosen (the percentile interval, the bias-corrected
percentile interval of ECE and smooth ECE, ungated), to print only.

Run ``python benchmarks/calibration_coverage.py`` (the defaults of the committed table) or ``--quick``; the table is
printed and written into ``docs/metrics.md`` between the coverage markers (``--no-write`` to leave the doc alone).
Each (curve, n, test set) has its own seed, so the table does not depend on ``--jobs``.
"""

import argparse
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

SCENARIOS = {
    "calibrated": lambda c: c,
    "over-confident by 0.02": lambda c: c - 0.02,
    "over-confident by 0.05": lambda c: c - 0.05,
    "over-confident by 0.1": lambda c: c - 0.1,
    "sign-changing": lambda c: c + 0.05 * np.sin(4 * np.pi * (c - 0.5)),
}
METRICS = ("ece", "smooth_ece", "debiased_l2")
LABELS = {"ece": "binned ECE", "smooth_ece": "smooth ECE", "debiased_l2": "debiased L2"}
BINS = 15
BLOCK = 100
DOC = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
MARKERS = ("<!-- calibration-coverage:start -->", "<!-- calibration-coverage:end -->")


def targets(scenario: str) -> dict:
    """Each metric's true value for a calibration curve (module docstring)."""
    from dialshift.metrics.smooth_calibration import smooth_ece_compute

    curve = SCENARIOS[scenario]
    grid = 0.5 + 0.5 * (np.arange(200_000) + 0.5) / 200_000  # quantiles of U[0.5, 1]
    gap = grid - curve(grid)
    return {"ece": float(np.mean(np.abs(gap))), "smooth_ece": smooth_ece_compute({"confidence": grid,
                                                                                  "correct": curve(grid)}),
            "debiased_l2": float(np.sqrt(np.mean(gap**2)))}


def _stats(confidence, correct) -> dict:
    from dialshift.metrics.calibration import bin_edges, bin_index

    return {"confidence": confidence, "correct": correct,
            "bin": bin_index(confidence, bin_edges(None, BINS), equal_width=True)}


def _scored(stats: dict, keys, replicates: int, seed: int) -> tuple[dict, dict, dict]:
    """Point values, replicate arrays and the calibration test of one config, as the scoring pipeline makes them."""
    from dialshift.scoring.bootstrap import replicate_weights
    from dialshift.scoring.tasks import _calibration_metrics, _calibration_test

    point = _calibration_metrics(stats, BINS, auxiliary=True)
    draws: dict = {}
    for start in range(0, replicates, BLOCK):
        weights = replicate_weights(keys, range(start, min(start + BLOCK, replicates)), seed)
        for name, values in _calibration_metrics(stats, BINS, weights, auxiliary=True).items():
            draws.setdefault(name, []).extend(np.atleast_1d(values).tolist())
    test = _calibration_test(stats, {"ece_bins": BINS}, replicates, seed)
    return point, {name: np.asarray(values) for name, values in draws.items()}, test


def one_test_set(job) -> dict:
    """Intervals, interval kinds and test p-values of one simulated test set (two configs on the same ids)."""
    from dialshift.scoring import calibration
    from dialshift.scoring.bootstrap import percentile_interval

    scenario, n, index, replicates, seed, candidates = job
    rng = np.random.default_rng([seed, list(SCENARIOS).index(scenario), n, index])
    confidence = rng.uniform(0.5, 1.0, n)
    uniform = rng.random(n)
    partner = np.clip(confidence + rng.normal(0.0, 0.05, n), 0.5, 1.0)
    keys = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64)
    first = _scored(_stats(confidence, uniform < SCENARIOS[scenario](confidence)), keys, replicates, index)
    second = _scored(_stats(partner, uniform < partner), keys, replicates, index)
    outcome = {"p_value": first[2]["p_value"], "partner_p_value": second[2]["p_value"], "interval": {}, "kind": {},
               "difference": {}, "point": {}, "candidates": {}}
    for metric in METRICS:
        interval, kind = calibration.metric_interval(metric, first[0], first[1], first[2])
        outcome["interval"][metric], outcome["kind"][metric] = interval, kind
        outcome["point"][metric] = first[0][metric]
        outcome["difference"][metric] = calibration.difference_interval(
            metric, (first[0], second[0]), (first[1], second[1]), (first[2], second[2]))
        if candidates and metric in calibration.ABSOLUTE:
            draws = first[1][metric]
            low, high = percentile_interval(draws)
            bias = float(np.mean(draws)) - first[0][metric]
            outcome["candidates"][metric] = {
                "percentile": [low, high],
                "bias-corrected percentile": [max(0.0, low - 2 * bias), high - 2 * bias],
                "percentile of the difference": percentile_interval(draws - second[1][metric]),
            }
        elif candidates:
            outcome["candidates"][metric] = {"percentile": percentile_interval(first[1][metric])}
    return outcome


def _covered(interval, truth) -> bool:
    return interval is not None and interval[0] - 1e-12 <= truth <= interval[1] + 1e-12


def summarise(results: dict, truths: dict, sizes) -> dict:
    """``{(scenario, n): {"coverage": {metric: share}, "difference": {...}, "upper": {...}, "rejects", ...}}``."""
    summary = {}
    for scenario in truths:
        for n in sizes:
            sets = results[scenario, n]
            truth = truths[scenario]
            summary[scenario, n] = {
                "coverage": {m: float(np.mean([_covered(r["interval"][m], truth[m]) for r in sets])) for m in METRICS},
                "difference": {m: float(np.mean([_covered(r["difference"][m], truth[m]) for r in sets]))
                               for m in METRICS},
                "upper": {m: float(np.mean([r["kind"][m] == "upper bound" for r in sets])) for m in METRICS},
                "width": {m: float(np.mean([r["interval"][m][1] - r["interval"][m][0] for r in sets]))
                          for m in METRICS},
                "contains_point": all(r["interval"][m][0] <= r["point"][m] <= r["interval"][m][1]
                                      for r in sets for m in METRICS),
                "rejects": float(np.mean([r["p_value"] < 0.05 for r in sets])),
                "partner_rejects": float(np.mean([r["partner_p_value"] < 0.05 for r in sets])),
                "candidates": {(m, name): float(np.mean([_covered(r["candidates"][m][name], truth[m])
                                                         for r in sets]))
                               for m in METRICS for name in (sets[0]["candidates"].get(m) or {})},
            }
    return summary


def table(summary: dict, truths: dict, sizes, datasets: int, replicates: int) -> str:
    header = ["scenario", "n", *(f"{LABELS[m]}" for m in METRICS), *(f"Δ {LABELS[m]}" for m in METRICS),
              "test rejects at 5 %"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for scenario in truths:
        for n in sizes:
            row = summary[scenario, n]
            cells = [scenario, f"{n:,}"]
            for m in METRICS:
                upper = f", {100 * row['upper'][m]:.0f} % upper bounds" if row["upper"][m] else ""
                cells.append(f"{100 * row['coverage'][m]:.0f} % (width {row['width'][m]:.3f}{upper})")
            cells += [f"{100 * row['difference'][m]:.0f} %" for m in METRICS]
            cells.append(f"{100 * row['rejects']:.0f} %")
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    targets_text = "; ".join(f"{s}: " + ", ".join(f"{truths[s][m]:.4f}" for m in METRICS) for s in truths)
    lines.append(f"{datasets} simulated test sets per row, {replicates} bootstrap replicates and {replicates} "
                 f"null replicates each, {BINS} bins. Cells: the share of test sets whose 95 % interval holds the "
                 "target (mean interval width; the share reported as an upper bound because the test did not "
                 "reject), then the same for the paired difference from a correlated calibrated model on the same "
                 "ids (truth: the first model's error), then the share of test sets whose calibration test rejects "
                 f"(size on the calibrated row, power on the others). Targets (ECE, smECE, L2): {targets_text}.")
    return "\n".join(lines)


def run(sizes, datasets: int, replicates: int, seed: int = 0, jobs: int = 1, candidates: bool = False,
        scenarios=None) -> tuple[dict, dict]:
    """``(summary, truths)`` of the simulation (:func:`summarise`); ``scenarios`` restricts the curves."""
    chosen = list(scenarios or SCENARIOS)
    truths = {scenario: targets(scenario) for scenario in SCENARIOS}
    work = [(scenario, n, index, replicates, seed, candidates)
            for scenario in chosen for n in sizes for index in range(datasets)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            outcomes = list(pool.map(one_test_set, work, chunksize=2))
    else:
        outcomes = [one_test_set(job) for job in work]
    results: dict = {}
    for job, outcome in zip(work, outcomes, strict=True):
        results.setdefault(job[:2], []).append(outcome)
    truths = {scenario: truths[scenario] for scenario in chosen}
    return summarise(results, truths, sizes), truths


def write_doc(text: str, doc: Path = DOC) -> None:
    from dialshift.io import atomic_write

    start, end = MARKERS
    source = doc.read_text(encoding="utf-8")
    if start not in source or end not in source:
        raise SystemExit(f"{doc} has no {start} ... {end} markers to write the table between")
    block = f"{start}\n{text}\n{end}"
    atomic_write(doc, re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, source, flags=re.S))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=100, help="simulated test sets per (curve, n) (100)")
    parser.add_argument("--replicates", type=int, default=200, help="bootstrap and null replicates per set (200)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 3000, 30000], help="test-set sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--candidates", action="store_true", help="also print the intervals not chosen")
    parser.add_argument("--quick", action="store_true", help="20 test sets x 100 replicates at n = 3,000 (smoke)")
    parser.add_argument("--no-write", action="store_true", help=f"print the table only, do not update {DOC.name}")
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets, args.replicates, args.sizes = 20, 100, [3000]
    began = time.perf_counter()
    summary, truths = run(args.sizes, args.datasets, args.replicates, args.seed, args.jobs, args.candidates)
    text = table(summary, truths, args.sizes, args.datasets, args.replicates)
    sizes = " ".join(str(n) for n in args.sizes)
    text += (f" Regenerate with `python benchmarks/calibration_coverage.py --datasets {args.datasets} "
             f"--replicates {args.replicates} --sizes {sizes}` ({time.perf_counter() - began:.0f} s with --jobs "
             f"{args.jobs}).")
    print(text)
    if args.candidates:
        print("\ncandidates not chosen (coverage of the first config's target):")
        for (scenario, n), row in summary.items():
            print(f"  {scenario}, n = {n:,}: " + "; ".join(f"{LABELS[m]} {name} {100 * share:.0f} %"
                                                          for (m, name), share in row["candidates"].items()))
    if not args.no_write:
        write_doc(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
