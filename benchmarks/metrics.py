"""Benchmark the dialshift.metrics core against torchmetrics, netcal and scikit-learn, and the evaluate overhead.

ECE (15 equal-width bins, top label) and the multiclass Brier score on N x K float64 probabilities:

* core: ``dialshift.metrics.ece`` / ``brier`` (validation included; Brier includes its Murphy decomposition);
* torchmetrics: ``multiclass_calibration_error`` (argument validation on, as by default) on a zero-copy tensor;
* netcal: ``netcal.metrics.ECE(bins=15).measure``;
* sklearn: ``brier_score_loss(labels=...)`` (neither torchmetrics nor netcal has a multiclass Brier score);
* OOD detection on N in-domain scores (ties included): ``dialshift.metrics.ood_detection`` (AUROC, AUPR-in,
  AUPR-out and FPR@95TPR from one sort) against sklearn's ``roc_auc_score``, ``average_precision_score`` (twice) and
  ``roc_curve``, the library calls that would replace the hand-written areas;
* evaluate: ``evaluate.load("metrics/ece").compute(...)`` against the core on the same (smaller) input.

Times are the best of ``--repeats`` runs, taken round-robin across the implementations so that load from other jobs
hits them alike; "x core" is the time over the core's. The core ECE's note gives its time in *passes over the
array*: over the time of ``probs.max(axis=1)``, which reads the array once (the target: at most 1.5). "peak extra"
is the largest allocation (tracemalloc, which
numpy reports to) during one core call, relative to the input array's size.

    nice python benchmarks/metrics.py --sizes 1e6x10 1e7x10 --repeats 3
"""

import argparse
import os
import time
import tracemalloc
import warnings


def parse_size(text: str):
    rows, _, columns = text.lower().partition("x")
    return int(float(rows)), int(columns or 10)


def best_time(function, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def peak_extra_bytes(function) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        function()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def make_problem(rows: int, columns: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    probabilities = rng.standard_normal((rows, columns))
    probabilities *= 2.0
    np.exp(probabilities, out=probabilities)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    labels = rng.integers(0, columns, rows)
    return probabilities, labels


def sklearn_ood(scores, in_domain) -> dict:
    """The four values of ``dialshift.metrics.ood_detection`` from scikit-learn's functions."""
    import numpy as np
    from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

    fpr, tpr, _ = roc_curve(in_domain, scores, drop_intermediate=False)
    return {
        "auroc": roc_auc_score(in_domain, scores),
        "aupr_in": average_precision_score(in_domain, scores),
        "aupr_out": average_precision_score(1 - in_domain, -scores),
        "fpr@95tpr": fpr[np.searchsorted(tpr, 0.95 - 1e-12)],
    }


def interleaved_best_times(candidates: dict, repeats: int) -> dict:
    """Best time of each callable, running them round-robin so that load from other jobs hits all alike."""
    best = dict.fromkeys(candidates, float("inf"))
    for _ in range(repeats):
        for name, function in candidates.items():
            best[name] = min(best[name], best_time(function, 1))
    return best


def bench_size(text, args, record):
    """Time the core and the libraries on one N x K size."""
    import numpy as np

    from dialshift.metrics import brier, ece, ood_detection

    rows, columns = parse_size(text)
    size = f"{rows:.0e}x{columns}".replace("+0", "")
    probabilities, labels = make_problem(rows, columns)
    print(f"{size}: input {probabilities.nbytes / 2**20:.0f} MiB float64", flush=True)
    rng = np.random.default_rng(1)
    in_domain = (rng.random(rows) < 0.7).astype(np.int64)
    scores = np.round(rng.normal(size=rows) + in_domain, 3)  # with ties, as softmax maxima have
    candidates = {
        ("ece", "dialshift core"): lambda: ece(probabilities, labels),
        ("ece", "one pass: probs.max(axis=1)"): lambda: probabilities.max(axis=1),
        ("brier", "dialshift core"): lambda: brier(probabilities, labels),
        ("ood", "dialshift core"): lambda: ood_detection(scores, in_domain),
    }
    notes = {("ood", "dialshift core"): f"{rows:.0e} scores, all four values"}
    if "torchmetrics" not in args.skip:
        import torch
        from torchmetrics.functional.classification import multiclass_calibration_error

        tensor, target = torch.from_numpy(probabilities), torch.from_numpy(labels)
        candidates["ece", "torchmetrics"] = lambda: multiclass_calibration_error(
            tensor, target, num_classes=columns, n_bins=15
        )
        notes["ece", "torchmetrics"] = f"torch threads {torch.get_num_threads()}"
    if "netcal" not in args.skip:
        from netcal.metrics import ECE

        def netcal_ece():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ECE(bins=15).measure(probabilities, labels)

        candidates["ece", "netcal"] = netcal_ece
    if "sklearn" not in args.skip:
        from sklearn.metrics import brier_score_loss

        candidates["brier", "sklearn"] = lambda: brier_score_loss(labels, probabilities, labels=list(range(columns)))
        notes["brier", "sklearn"] = "no decomposition"
        candidates["ood", "sklearn"] = lambda: sklearn_ood(scores, in_domain)
        notes["ood", "sklearn"] = "roc_auc_score + 2 average_precision_score + roc_curve"
    if "sklearn" not in args.skip:  # same numbers, or the timing comparison is meaningless
        ours, theirs = ood_detection(scores, in_domain), sklearn_ood(scores, in_domain)
        assert all(abs(ours[key] - theirs[key]) < 1e-9 for key in ours), (ours, theirs)
    for metric in ("ece", "brier"):
        peak = peak_extra_bytes(candidates[metric, "dialshift core"])
        notes[metric, "dialshift core"] = (
            f"peak extra {peak / 2**20:.0f} MiB = {peak / probabilities.nbytes:.2f} x input"
        )
    times = interleaved_best_times(candidates, args.repeats)
    one_pass = times["ece", "one pass: probs.max(axis=1)"]
    notes["ece", "dialshift core"] += f"; {times['ece', 'dialshift core'] / one_pass:.2f} passes over the array"
    notes["ece", "one pass: probs.max(axis=1)"] = "the unit of 'passes' (reads the array once)"
    for (metric, implementation), seconds in times.items():
        record(
            size,
            metric,
            implementation,
            seconds,
            times[metric, "dialshift core"],
            notes.get((metric, implementation), ""),
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["1e6x10"], help="N x K sizes, e.g. 1e6x10 1e7x10")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; the best is kept (default: 3)")
    parser.add_argument(
        "--evaluate-rows",
        type=float,
        default=1e5,
        help="rows for the evaluate-module overhead (lists through Arrow are slow; default: 1e5)",
    )
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["torchmetrics", "netcal", "sklearn", "evaluate"],
        help="libraries to leave out",
    )
    args = parser.parse_args(argv)

    import numpy as np

    from dialshift.metrics import brier, ece

    print(f"cpu cores: {os.cpu_count()}, numpy {np.__version__}")
    rows_out = []

    def record(size, metric, implementation, seconds, core_seconds, note=""):
        rows_out.append((size, metric, implementation, seconds, seconds / core_seconds, note))
        print(
            f"  {size:>10} {metric:>6} {implementation:<24} {seconds:9.4f} s  x core {seconds / core_seconds:6.2f}"
            f"  {note}",
            flush=True,
        )

    for text in args.sizes:
        bench_size(text, args, record)

    if "evaluate" not in args.skip:
        import evaluate

        rows = int(args.evaluate_rows)
        probabilities, labels = make_problem(rows, 10)
        size = f"{rows:.0e}x10".replace("+0", "")
        for metric, function in (("ece", ece), ("brier", brier)):
            module = evaluate.load(
                os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "metrics", metric)
            )
            core_seconds = best_time(lambda f=function: f(probabilities, labels), args.repeats)
            record(size, metric, "dialshift core", core_seconds, core_seconds)
            seconds = best_time(lambda m=module: m.compute(predictions=probabilities, references=labels), args.repeats)
            record(
                size,
                metric,
                "evaluate module",
                seconds,
                core_seconds,
                f"overhead {seconds - core_seconds:.2f} s ({(seconds - core_seconds) / rows * 1e6:.1f} us/row)",
            )

    print("\n| size | metric | implementation | best time (s) | x core | note |")
    print("|---|---|---|---|---|---|")
    for size, metric, implementation, seconds, ratio, note in rows_out:
        print(f"| {size} | {metric} | {implementation} | {seconds:.4f} | {ratio:.2f} | {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
