"""``dialshift bundle report`` for Lee et al.: predictions, ``results.json`` and the across-seed tables of the logits
the ``lee-*`` steps returned, computed here on CPU (ensembles and temperature scaling included)."""

from pathlib import Path

import numpy as np

from dialshift.across_seeds import format_spread, spread

HEADLINE = ("recall@1", "brier", "ece")


def report(paths, dataset, out, replicates: int = 1000, plots: bool = True, progress: bool = False) -> dict:
    """Predictions, ``results.json`` (through :mod:`dialshift.scoring`) and the across-seed tables of the returned
    logits: per seed vanilla, temperature (``T`` fitted here on the returned validation logits) and dropout; the
    ensemble of every seed's vanilla logits; the fp32 check. Writes ``OUT/seed<S>/<method>/``, ``OUT/ensemble/``,
    ``OUT/summary.json`` and ``OUT/results.md``; returns the summary."""
    from dialshift.bundle.report_inputs import check_ids, test_ids
    from dialshift.io import atomic_write, write_json_atomic
    from dialshift.models.uncertainty import fit_temperature, negative_log_likelihood
    from dialshift.ranking.evaluation import write_method
    from dialshift.returned import check_distinct_runs, find_returned, read_logits
    from dialshift.scoring import ScoringSettings, check_output_dir
    from dialshift.scoring.pipeline import claim_output_dir, record_output_dir
    from dialshift.scoring.report import write_report

    inputs = (*paths, dataset)
    check_output_dir(out, writes=None, inputs=inputs)  # a new, empty or earlier-written folder, before any work
    found = find_returned(paths)
    protocol = next(iter(found.values())).description["protocol"]
    configs = list(protocol["test_configs"])
    ids, candidates = test_ids(dataset, {name: protocol["max_instances"] for name in configs})
    check_ids(found, ids, dataset)
    rows = {name: len(ids[name]) for name in configs}
    loaded = {step: read_logits(entry, rows, candidates) for step, entry in found.items()}
    check_distinct_runs(found, loaded)
    steps = {step: {"description": entry.description, "arrays": loaded[step]} for step, entry in found.items()}
    out = claim_output_dir(out, "dialshift bundle report", writes=None, inputs=inputs)
    scoring = ScoringSettings(Path(dataset), split="test", replicates=replicates, seed=0,
                              options={"ece_bins": protocol["ece_bins"]}, max_instances=protocol["max_instances"],
                              sample_seed=0, progress=progress)

    def passes(arrays, method_stack):
        return {name: method_stack(arrays[f"test/{name}"]) for name in configs}

    def run(method, seeds, **extra):
        return {"model": "dialshift bundle (see bundle.json)", "method": method, "seeds": seeds,
                "source": "logits returned by the GPU bundle, combined here", **extra}

    documents: dict[str, dict[int, dict]] = {}
    temperatures, vanilla = {}, {}
    for step in sorted(steps):
        entry = steps[step]
        description, arrays = entry["description"], entry["arrays"]
        seed = description["seed"]
        folder = out / f"seed{seed}"
        if step.startswith("lee-train-"):
            vanilla[seed] = arrays
            labels = arrays["validation_labels"]
            temperature = fit_temperature(arrays["validation"], labels)
            temperatures[seed] = {"temperature": temperature, "remote": description["training"].get("temperature"),
                                  "nll": negative_log_likelihood(arrays["validation"], labels),
                                  "nll_temperature": negative_log_likelihood(arrays["validation"], labels,
                                                                             temperature)}
            documents.setdefault("vanilla", {})[seed] = write_method(
                folder / "vanilla", ids, passes(arrays, lambda x: x[None]), 1.0, run("vanilla", [seed]), scoring)
            documents.setdefault("temperature", {})[seed] = write_method(
                folder / "temperature", ids, passes(arrays, lambda x: x[None]), temperature,
                run("temperature", [seed], temperature=temperature), scoring)
        elif step.startswith("lee-dropout-"):
            documents.setdefault("dropout", {})[seed] = write_method(
                folder / "dropout", ids, passes(arrays, lambda x: x), 1.0,
                run("dropout", [seed], dropout_passes=len(description["dropout_seeds"])), scoring)
        elif step.startswith("lee-fp32-"):
            documents.setdefault("vanilla_fp32", {})[seed] = write_method(
                folder / "vanilla_fp32", ids, passes(arrays, lambda x: x[None]), 1.0,
                run("vanilla", [seed], precision="fp32"), scoring)
        write_report(folder, {m: d for m, by in documents.items() for s, d in by.items() if s == seed}, plots=plots)
    if len(vanilla) >= 2:
        members = sorted(vanilla)
        stacked = {name: np.stack([vanilla[s][f"test/{name}"] for s in members]) for name in configs}
        documents["ensemble"] = {-1: write_method(out / "ensemble", ids, stacked, 1.0, run("ensemble", members),
                                                  scoring)}
        write_report(out / "ensemble", {"ensemble": documents["ensemble"][-1]}, plots=plots)
    summary = summarise(documents, configs, temperatures, protocol)
    write_json_atomic(out / "summary.json", summary)
    atomic_write(out / "results.md", summary_markdown(summary))
    record_output_dir(out, None)
    return summary


def summarise(documents: dict, configs: list, temperatures: dict, protocol: dict) -> dict:
    """Per method and config: the headline metrics across seeds (mean, sd, min, max; the ensemble's point value and
    bootstrap interval), and the relative degradation (accuracy / accuracy on the unshifted config)."""
    unshifted = protocol["train_config"]
    table = {}
    for method, by_seed in documents.items():
        rows = {}
        for name in configs:
            row = {}
            for metric in HEADLINE:
                values = [doc["results"][name][metric] for doc in by_seed.values()]
                row[metric] = spread(values)
                if method == "ensemble":
                    row[metric]["interval"] = next(iter(by_seed.values()))["intervals"][name][metric]
            relative = [doc["results"][name]["recall@1"] / doc["results"][unshifted]["recall@1"]
                        for doc in by_seed.values() if unshifted in doc["results"]
                        and doc["results"][unshifted]["recall@1"]]
            row["relative_recall@1"] = spread(relative)
            row["instances"] = next(iter(by_seed.values()))["results"][name]["instances"]
            rows[name] = row
        table[method] = {"seeds": sorted(s for s in by_seed if s >= 0), "configs": rows}
    summary = {"protocol": protocol, "methods": table, "temperatures": temperatures}
    if "vanilla_fp32" in documents:
        seed = min(documents["vanilla_fp32"])
        fast, exact = documents["vanilla"][seed]["results"], documents["vanilla_fp32"][seed]["results"]
        summary["precision"] = {"seed": seed, "differences": {
            name: {metric: fast[name][metric] - exact[name][metric] for metric in HEADLINE} for name in configs}}
    return summary


def _cell(stat: dict) -> str:
    if stat["mean"] is not None and stat.get("interval"):
        low, high = stat["interval"]
        return f"{stat['mean']:.3f} [{low:.3f}, {high:.3f}]"
    return format_spread(stat)


def summary_markdown(summary: dict) -> str:
    """``results.md``: one table per method (mean ± sd across seeds; the ensemble with its 95% bootstrap interval),
    the relative degradation and the fp32 check."""
    methods = summary["methods"]
    lines = ["# Lee et al. at full scale: results from the returned logits", "",
             "Each cell: mean ± standard deviation across the seeds (n in the header); the ensemble is one model, "
             "with its 95% paired-bootstrap interval. Computed by `dialshift bundle report`.", ""]
    for method in ("vanilla", "temperature", "dropout", "ensemble", "vanilla_fp32"):
        if method not in methods:
            continue
        entry = methods[method]
        seeds = entry["seeds"] or "all (one ensemble)"
        lines += [f"## {method} (seeds {seeds})", "",
                  "| config | n | R@1/10 | Brier | ECE (15 bins) | R@1 / R@1 unshifted |", "|---|---|---|---|---|---|"]
        for name, row in entry["configs"].items():
            lines.append(f"| {name} | {row['instances']} | {_cell(row['recall@1'])} | {_cell(row['brier'])} | "
                         f"{_cell(row['ece'])} | {_cell(row['relative_recall@1'])} |")
        lines.append("")
    if "vanilla_fp32" in methods and "vanilla" in methods:
        lines += ["## Precision check: fast path minus fp32 (same ranker), against the spread across seeds", "",
                  "| config | metric | fast - fp32 | sd across seeds | smaller |", "|---|---|---|---|---|"]
        for name, by_metric in summary["precision"]["differences"].items():
            for metric, diff in by_metric.items():
                spread = methods["vanilla"]["configs"][name][metric]["sd"]
                smaller = "–" if methods["vanilla"]["configs"][name][metric]["n"] < 2 else \
                    ("yes" if abs(diff) < spread else "no")
                lines.append(f"| {name} | {metric} | {diff:+.4f} | {spread:.4f} | {smaller} |")
        lines += ["", f"(seed {summary['precision']['seed']})", ""]
    if summary["temperatures"]:
        lines += ["## Temperatures (fitted here on the returned validation logits)", "",
                  "| seed | T | T on the remote | NLL | NLL after T |", "|---|---|---|---|---|"]
        for seed, t in sorted(summary["temperatures"].items()):
            remote = "–" if t["remote"] is None else f"{t['remote']:.4f}"
            lines.append(f"| {seed} | {t['temperature']:.4f} | {remote} | {t['nll']:.4f} | "
                         f"{t['nll_temperature']:.4f} |")
        lines.append("")
    return "\n".join(lines)
