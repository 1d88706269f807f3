#!/usr/bin/env python
"""The result tables and verdicts of docs/reproduction_lee.md, from the committed files of its CPU runs.

    python docs/reproduction_lee/make_tables.py            # rewrite the generated part of the report
    python docs/reproduction_lee/make_tables.py --check    # exit 1 when the report is not what this generates
    python docs/reproduction_lee/make_tables.py --context-turns DATASET   # recompute context_turns.json

The CPU run on the current build (``run_all.sh``, copied by ``collect.py`` into ``cpu/``): per ranker seed the
kept predictions of every method and config, the ranker's metadata and each job's ``command.json``. From them it
computes Acc = R@1/10, Brier and ECE (:mod:`dialshift.metrics`, as ``dialshift score`` does) per seed, method and
config, the ensemble of every seed's ranker from their kept logits, and every finding's verdict by
:mod:`dialshift.verdicts` on per-seed differences measured on the ids both sides hold. The earlier run (dialshift
0.1) left only ``results_n25.md`` and ``results_n150.md`` (the ``results.md`` of ``dialshift evaluate``: one ranker,
no predictions); their tables are rendered beside the paper's, without verdicts. ``context_turns.json`` (from a
DailyDialog build, by ``--context-turns``) gives each config's mean context length on its whole test split and on
the `dailydialog` test contexts with the same ids: the length confound of the UW/KW comparisons.
"""

import gzip
import json
import re
import sys
from pathlib import Path

import numpy as np

from dialshift import reports
from dialshift.metrics import brier, ece, recall_at_k
from dialshift.models.uncertainty import predictive
from dialshift.verdicts import interval, verdict

HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "reproduction_lee.md"
GENERATOR = "docs/reproduction_lee/make_tables.py"
RESULTS = {25: HERE / "results_n25.md", 150: HERE / "results_n150.md"}
CONTEXT_TURNS = HERE / "context_turns.json"
CPU = HERE / "cpu"
METHODS = ("vanilla", "temperature", "dropout", "ensemble")
METRICS = ("Acc", "Brier", "ECE")
FAMILIES = {"UW (Table 3) and KW (Table 5)": ["test", "uw_0.10", "uw_0.30", "uw_0.50", "kw_0.10", "kw_0.30",
                                               "kw_0.50"],
            "IC (Table 4) and SR (Table 6)": ["test", "ic_0of6", "ic_2of6", "ic_4of6", "ic_5of6", "sr_6", "sr_4",
                                               "sr_2"],
            "Word importance (Table 7)": ["test", "uw_imp_1", "uw_imp_3", "uw_imp_5"]}
# The paper's Tables 3-7 (bert-base-cased, full data): per config, (Acc, Brier, ECE) of vanilla, temperature scaling,
# MC dropout and the ensemble.
PAPER = {
    "test": ((0.895, 0.161, 0.035), (0.895, 0.157, 0.009), (0.889, 0.164, 0.023), (0.911, 0.133, 0.018)),
    "uw_0.10": ((0.859, 0.206, 0.041), (0.859, 0.202, 0.010), (0.855, 0.208, 0.025), (0.886, 0.166, 0.012)),
    "uw_0.30": ((0.688, 0.450, 0.115), (0.688, 0.429, 0.039), (0.671, 0.456, 0.089), (0.740, 0.362, 0.051)),
    "uw_0.50": ((0.441, 0.796, 0.259), (0.441, 0.737, 0.156), (0.424, 0.798, 0.233), (0.487, 0.699, 0.183)),
    "kw_0.10": ((0.868, 0.196, 0.037), (0.868, 0.193, 0.013), (0.859, 0.198, 0.024), (0.895, 0.154, 0.011)),
    "kw_0.30": ((0.720, 0.401, 0.100), (0.720, 0.385, 0.033), (0.714, 0.401, 0.068), (0.770, 0.320, 0.044)),
    "kw_0.50": ((0.505, 0.704, 0.213), (0.505, 0.657, 0.114), (0.491, 0.688, 0.190), (0.558, 0.602, 0.140)),
    "ic_0of6": ((0.893, 0.159, 0.033), (0.893, 0.155, 0.014), (0.886, 0.163, 0.025), (0.908, 0.134, 0.015)),
    "ic_2of6": ((0.873, 0.190, 0.047), (0.873, 0.184, 0.017), (0.867, 0.191, 0.033), (0.886, 0.162, 0.025)),
    "ic_4of6": ((0.825, 0.251, 0.063), (0.825, 0.243, 0.024), (0.824, 0.253, 0.045), (0.850, 0.218, 0.035)),
    "ic_5of6": ((0.742, 0.368, 0.093), (0.742, 0.351, 0.031), (0.738, 0.366, 0.074), (0.762, 0.323, 0.056)),
    "sr_6": ((0.908, 0.141, 0.041), (0.908, 0.139, 0.036), (0.904, 0.141, 0.033), (0.919, 0.118, 0.031)),
    "sr_4": ((0.884, 0.171, 0.040), (0.884, 0.169, 0.011), (0.873, 0.180, 0.036), (0.906, 0.135, 0.022)),
    "sr_2": ((0.887, 0.170, 0.039), (0.887, 0.166, 0.014), (0.874, 0.179, 0.034), (0.895, 0.149, 0.030)),
    "uw_imp_1": ((0.870, 0.190, 0.043), (0.870, 0.186, 0.014), (0.868, 0.194, 0.027), (0.893, 0.154, 0.018)),
    "uw_imp_3": ((0.867, 0.196, 0.041), (0.867, 0.192, 0.012), (0.862, 0.197, 0.023), (0.891, 0.157, 0.019)),
    "uw_imp_5": ((0.803, 0.285, 0.067), (0.803, 0.276, 0.014), (0.803, 0.283, 0.040), (0.842, 0.225, 0.023)),
}
# The findings the CPU run tests: (finding, metric, (method, config) of the first and of the second quantity, the
# paper's direction of first - second ("+" or "-"; None for a claim of equality), a note beside the verdict). Each
# is measured per ranker seed on the ids both sides hold; the ensemble is one aggregate of every seed's ranker, so a
# finding with the ensemble on one side pairs that one ensemble with each seed's ranker.
FINDINGS = [
    ("Accuracy falls with word replacement (Table 3)", "Acc", ("vanilla", "dailydialog"), ("vanilla", "uw_0.50"),
     "+", "uw_len"),
    ("Accuracy falls with word replacement, 30 % (Table 3)", "Acc", ("vanilla", "dailydialog"),
     ("vanilla", "uw_0.30"), "+", ""),
    ("Accuracy falls with sentence deletion (Table 4)", "Acc", ("vanilla", "ic_0of6"), ("vanilla", "ic_5of6"), "+",
     "the same instances with 6 and with 1 context turn"),
    ("ECE rises with word replacement (Table 3)", "ECE", ("vanilla", "uw_0.50"), ("vanilla", "dailydialog"), "+",
     "uw_len"),
    ("Brier rises with word replacement (Table 3)", "Brier", ("vanilla", "uw_0.50"), ("vanilla", "dailydialog"), "+",
     "uw_len; vanilla Brier sits near the uniform prediction's 0.9 on every config (under-confident rankers)"),
    ("KW keeps more accuracy than UW at the same ratio (Tables 3, 5)", "Acc", ("vanilla", "kw_0.50"),
     ("vanilla", "uw_0.50"), "+", "the same instances and target words; KW shares UW's targets by design"),
    ("Temperature scaling lowers ECE (test)", "ECE", ("vanilla", "dailydialog"), ("temperature", "dailydialog"), "+",
     "our T is far below 1 (training table): sharpening an under-confident ranker lowers its ECE whatever the shift"),
    ("Temperature scaling lowers ECE under the strongest UW shift", "ECE", ("vanilla", "uw_0.50"),
     ("temperature", "uw_0.50"), "+", ""),
    ("The ensemble is more accurate than one ranker under the strongest UW shift", "Acc", ("ensemble", "uw_0.50"),
     ("vanilla", "uw_0.50"), "+", "one ensemble of every seed's ranker against each ranker"),
    ("The ensemble is better calibrated than one ranker under the strongest UW shift (lower ECE)", "ECE",
     ("vanilla", "uw_0.50"), ("ensemble", "uw_0.50"), "+", "one ensemble of every seed's ranker against each ranker"),
    ("MC dropout is slightly less accurate than vanilla (test)", "Acc", ("vanilla", "dailydialog"),
     ("dropout", "dailydialog"), "+", ""),
    ("MC dropout lowers ECE under the strongest UW shift", "ECE", ("vanilla", "uw_0.50"), ("dropout", "uw_0.50"), "+",
     ""),
    ("SR: shorter contexts do not hurt (Table 6: flat)", "Acc", ("vanilla", "sr_6"), ("vanilla", "sr_2"), None,
     "\"flat\" is a claim of equality, which the rule (a direction) cannot decide without an equivalence margin the "
     "paper does not give; sr_6 and sr_2 hold different instances (contexts of exactly 6 and 2 turns)"),
]


def parse(path: Path) -> dict:
    """``{config: {method: {metric: value}}}`` from the tables of a ``results.md`` (``source`` read as ``test``)."""
    table, header = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or set(cells[0]) <= {"-"}:
            continue
        if cells[0] == "config":
            header = cells[1:]
            continue
        if header is None or len(cells) != len(header) + 1:
            raise SystemExit(f"{path}: the table row {line!r} does not match its header {header}")
        config = "test" if cells[0] == "source" else cells[0]
        for name, value in zip(header, cells[1:], strict=True):
            method, metric = name.split(" ")
            table.setdefault(config, {}).setdefault(method, {})[metric] = float(value)
    if not table:
        raise SystemExit(f"{path}: no result table found")
    return table


def ensemble_seeds(path: Path) -> str:
    match = re.search(r"\*\*ensemble\*\*: seeds \[([0-9, ]+)\]", path.read_text(encoding="utf-8"))
    return match.group(1) if match else "?"


def result_tables(n: int, ours: dict) -> list[str]:
    methods = [m for m in METHODS if m in ours["test"]]
    lines = [f"### n = {n} instances per config (`{RESULTS[n].name}`; ensemble of seeds {ensemble_seeds(RESULTS[n])})",
             ""]
    for family, configs in FAMILIES.items():
        lines += [f"#### {family}: ours / paper", "",
                  "| config | n | " + " | ".join(f"{m} {metric}" for m in methods for metric in METRICS) + " |",
                  "|---|---|" + "---|" * (len(methods) * len(METRICS))]
        for config in configs:
            if config not in ours:
                continue
            cells = [f"{ours[config][m][metric]:.3f} / {PAPER[config][METHODS.index(m)][METRICS.index(metric)]:.3f}"
                     for m in methods for metric in METRICS]
            lines.append(f"| {config} | {n} | " + " | ".join(cells) + " |")
        lines.append("")
    averages = "; ".join(f"{m} " + " / ".join(f"{sum(row[m][x] for row in ours.values()) / len(ours):.3f}"
                                                 for x in METRICS) for m in methods)
    lines += [f"Averages over the {len(ours)} configs (Acc / Brier / ECE): {averages}.", ""]
    return lines


def read_predictions(path: Path) -> dict:
    """``{id: (scores, probabilities)}`` of one gzip-compressed predictions file (the submission format)."""
    rows = {}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            rows[row["id"]] = (row["scores"], row["probabilities"])
    return rows


def load_run(root: Path) -> dict:
    """The collected CPU run in ``root``: ``{"build": command, "labels": {config: {id: gold}}, "seeds": {seed: {"ranker",
    "train", "jobs": {job: command}, "methods": {method: {"run", "results", "predictions": {config: {id: ...}}}}}}}``
    plus the ``ensemble`` of every seed's vanilla logits and the ``ece_bins`` the results were scored with."""
    def read(path):
        return json.loads(path.read_text(encoding="utf-8"))

    run = {"build": read(root / "build.json"), "labels": read(root / "labels.json"), "seeds": {}}
    for seed_dir in sorted(root.glob("seed_*"), key=lambda path: int(path.name.removeprefix("seed_"))):
        seed = {"ranker": read(seed_dir / "ranker.json"), "train": read(seed_dir / "train.json"),
                "jobs": {path.stem: read(path) for path in sorted(seed_dir.glob("*.json"))
                         if path.stem not in ("ranker", "train")}, "methods": {}}
        for method in METHODS:
            if (seed_dir / method / "results.json").is_file():
                seed["methods"][method] = {
                    "run": read(seed_dir / method / "run.json"), "results": read(seed_dir / method / "results.json"),
                    "predictions": {path.name.removesuffix(".jsonl.gz"): read_predictions(path)
                                    for path in sorted((seed_dir / method).glob("*.jsonl.gz"))}}
        run["seeds"][int(seed_dir.name.removeprefix("seed_"))] = seed
    run["ensemble"], run["ece_bins"] = ensemble(run), ece_bins(run)
    return run


def ensemble(run: dict) -> dict:
    """``{config: {id: (scores, probabilities)}}`` of the ensemble of every seed's ranker (mean softmax of the kept
    vanilla logits, as ``dialshift evaluate --method ensemble`` combines them); empty below two seeds."""
    members = [seed["methods"]["vanilla"]["predictions"] for seed in run["seeds"].values()
               if "vanilla" in seed["methods"]]
    if len(members) < 2:
        return {}
    combined = {}
    for config in members[0]:
        ids = sorted(set.intersection(*(set(member[config]) for member in members)))
        passes = np.asarray([[member[config][i][0] for i in ids] for member in members])
        result = predictive(passes)
        combined[config] = {i: (s, p) for i, s, p in zip(ids, result["scores"], result["probabilities"], strict=True)}
    return combined


def predictions_of(run: dict, seed: int, method: str) -> dict | None:
    """``{config: {id: (scores, probabilities)}}`` of a method for one seed (the ensemble: the same for every seed)."""
    if method == "ensemble":
        return run["ensemble"] or None
    found = run["seeds"][seed]["methods"].get(method)
    return found["predictions"] if found else None


def ece_bins(run: dict) -> int | None:
    """The ECE bins ``dialshift evaluate`` scored with (one value across every results file; None without one)."""
    bins = {options["ece_bins"] for seed in run["seeds"].values() for method in seed["methods"].values()
            for options in method["results"]["options"].values()}
    if len(bins) > 1:
        raise SystemExit(f"{CPU}: the results files use different ECE bins {sorted(bins)}; collect one run")
    return bins.pop() if bins else None


def scores(run: dict, predictions: dict, config: str, ids) -> dict:
    """Acc (R@1/10, pessimistic ties, ranked by the scores), Brier and ECE of the instances ``ids`` of one config,
    by :mod:`dialshift.metrics` as ``dialshift score`` computes them."""
    rows = [predictions[i] for i in ids]
    ranked = np.asarray([row[0] for row in rows], dtype=np.float64)
    probabilities = np.asarray([row[1] for row in rows], dtype=np.float64)
    gold = np.asarray([run["labels"][config][i] for i in ids])
    return {"Acc": recall_at_k(ranked, gold, k=(1,))["recall@1"], "Brier": brier(probabilities, gold)["brier"],
            "ECE": ece(probabilities, gold, n_bins=run["ece_bins"])["ece"]}


def per_seed(run: dict, method: str, config: str) -> dict:
    """``{seed: metrics}`` of a method on every instance of a config it predicted."""
    found = {}
    for seed in run["seeds"]:
        predictions = predictions_of(run, seed, method)
        if predictions and config in predictions:
            found[seed] = scores(run, predictions[config], config, sorted(predictions[config]))
    return found


def paired(run: dict, metric: str, first: tuple, second: tuple) -> tuple[dict, int]:
    """Per seed, ``metric`` of ``first`` minus that of ``second`` (each ``(method, config)``) on the ids both hold,
    and how many ids that is (the same for every seed). Sides that share no id (SR configs hold contexts of different
    lengths, so different instances) are each measured on all their instances, and the count is 0."""
    differences, shared = {}, set()
    for seed in run["seeds"]:
        sides = [predictions_of(run, seed, method) for method, _ in (first, second)]
        if not all(sides) or first[1] not in sides[0] or second[1] not in sides[1]:
            continue
        ids = sorted(set(sides[0][first[1]]) & set(sides[1][second[1]]))
        values = [scores(run, side[config], config, ids or sorted(side[config]))[metric]
                  for side, (_, config) in zip(sides, (first, second), strict=True)]
        differences[seed], shared = values[0] - values[1], shared | {len(ids)}
    return differences, (shared.pop() if len(shared) == 1 else 0)


def paper_value(method: str, config: str, metric: str) -> float:
    return PAPER["test" if config == "dailydialog" else config][METHODS.index(method)][METRICS.index(metric)]


def cpu_overview(run: dict) -> list[str]:
    seeds = list(run["seeds"])
    commits = sorted({run["build"]["commit"], *(seed["train"]["commit"] for seed in run["seeds"].values()),
                      *(job["commit"] for seed in run["seeds"].values() for job in seed["jobs"].values())})
    jobs = [("build", "-", run["build"])] + [(name, seed, command) for seed, data in run["seeds"].items()
                                            for name, command in [("train", data["train"]), *data["jobs"].items()]]
    threads = sorted({command["threads"] for _, _, command in jobs})
    lines = [f"Rankers of seeds {', '.join(map(str, seeds))}, each `trainers/ranker.py` on the same 144 training "
             f"instances; the code of commit{'s' * (len(commits) > 1)} {', '.join(f'`{c[:10]}`' for c in commits)} "
             f"(copied out with `git archive` by `run_all.sh`), {', '.join(map(str, threads))} torch thread per "
             "process at `nice -n 10`. Cost per job (`command.json`; the CPU was shared with other jobs, so wall "
             "times are long and only the CPU seconds measure the work):", "",
             "| job | seed | wall s | CPU s |", "|---|---|---:|---:|"]
    for name, seed, command in jobs:
        lines.append(f"| {name} | {seed} | {command['wall_seconds']:,.0f} | {command['cpu_seconds']:,.0f} |")
    total = sum(command["cpu_seconds"] for _, _, command in jobs)
    lines += [f"| **total** | | | **{total:,.0f}** ({total / 60:.0f} CPU minutes) |", "",
              "Training (`ranker.json`: the selected step, validation R@1/10 on 100 validation instances at each "
              "evaluation, the temperature fitted there):", "",
              "| seed | validation R@1/10 by step | selected step | NLL before / after T | T |",
              "|---|---|---:|---|---:|"]
    for seed, data in run["seeds"].items():
        ranker = data["ranker"]
        history = ", ".join(f"{row['step']}: {row['validation_recall@1']:.2f}" for row in ranker["history"])
        validation = ranker["validation"]
        lines.append(f"| {seed} | {history} | {ranker['selected_step']} | {validation['nll']:.3f} / "
                     f"{validation['nll_temperature']:.3f} | {ranker['temperature']:.3f} |")
    return lines + [""]


def cpu_tables(run: dict) -> list[str]:
    methods = [m for m in METHODS if any(per_seed(run, m, "dailydialog").values())]
    counts = {m: len(per_seed(run, m, "dailydialog")) for m in methods}
    described = "; ".join(f"{m}: {'the ensemble of ' + str(len(run['seeds'])) + ' rankers' if m == 'ensemble' else str(counts[m]) + ' seed' + 's' * (counts[m] != 1)}"
                          for m in methods)
    lines = [f"Each cell: ours (mean ± standard deviation over the seeds) / the paper's; {described}. `n`: the "
             "instances per config (the same ids wherever a config holds them).", ""]
    for family, configs in FAMILIES.items():
        present = [c if c != "test" else "dailydialog" for c in configs
                   if (c if c != "test" else "dailydialog") in run["labels"]]
        if len(present) < 2:
            continue
        lines += [f"#### {family}: ours / paper", "",
                  "| config | n | " + " | ".join(f"{m} {metric}" for m in methods for metric in METRICS) + " |",
                  "|---|---|" + "---|" * (len(methods) * len(METRICS))]
        for config in present:
            cells = []
            for method in methods:
                values = per_seed(run, method, config)
                for metric in METRICS:
                    if not values:
                        cells.append("–")
                        continue
                    seed_values = [row[metric] for row in values.values()]
                    spread = f" ± {np.std(seed_values, ddof=1):.3f}" if method != "ensemble" and len(values) > 1 else ""
                    cells.append(f"{np.mean(seed_values):.3f}{spread} / {paper_value(method, config, metric):.3f}")
            lines.append(f"| {config} | {len(run['labels'][config])} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def uw_length_note() -> str:
    """The context-length confound of the UW comparisons, from ``context_turns.json``."""
    turns = json.loads(CONTEXT_TURNS.read_text(encoding="utf-8"))
    return (f"**Context length beside the UW verdicts.** uw_0.50 keeps {turns['uw_0.50']['rows']:,} of the "
            f"{turns['test']['rows']:,} test contexts, and they are short: {turns['uw_0.50']['mean_turns']:.2f} "
            f"turns on average against {turns['test']['mean_turns']:.2f} over the whole test split "
            "(`context_turns.json`). The rows marked *length* pair each uw_0.50 instance with the same `dailydialog` "
            "context before replacement, so length does not confound them, but they measure the effect of "
            "replacement on short contexts only; the paper's own difference compares two different instance sets "
            "and carries the confound.")


def verdict_rows(run: dict) -> list[str]:
    lines = ["| finding (paper) | compared (first − second) | paired ids | per-seed differences | verdict by the rule "
             "(mean [95 % t interval], seeds) | paper | note |", "|---|---|---:|---|---|---:|---|"]
    for text, metric, first, second, direction, note in FINDINGS:
        differences, shared = paired(run, metric, first, second)
        compared = (f"{metric} of {first[0]}: {first[1]} − {second[1]}" if first[0] == second[0] else
                    f"{metric} on {first[1]}: {first[0]} − {second[0]}" if first[1] == second[1] else
                    f"{metric}: {first[0]} {first[1]} − {second[0]} {second[1]}")
        theirs = paper_value(*first, metric) - paper_value(*second, metric)
        note = note.replace("uw_len", "*length*: the same contexts, short ones (below)")
        if not differences:
            lines.append(f"| {text} | {compared} | – | – | not decidable (not run) | {theirs:+.3f} | {note} |")
            continue
        values = list(differences.values())
        if direction is None:
            mean, low, high = interval(values)
            bounds = "" if low is None else f" [{low:.3f}, {high:.3f}]"
            outcome = (f"not decidable (a claim of equality: {mean:.3f}{bounds}, {len(values)} "
                       f"seed{'s' * (len(values) != 1)})")
        else:
            outcome = verdict(values, direction).cell(digits=3)
        listed = ", ".join(f"{value:+.3f}" for value in values)
        lines.append(f"| {text} | {compared} | {shared or 'none'} | {listed} | {outcome} | {theirs:+.3f} | {note} |")
    return lines


def cpu_section() -> list[str]:
    if not (CPU / "labels.json").is_file():
        return ["## CPU run on the current build (generated)", "", "No run collected in `reproduction_lee/cpu/`.", ""]
    run = load_run(CPU)
    return ["## CPU run on the current build (generated)", "", *cpu_overview(run), "### Results beside the paper", "",
            *cpu_tables(run), "### Verdicts", "",
            "By the rule of `dialshift.verdicts`, one rule for the four reports: the paper's direction with a 95 % t "
            "interval of the per-seed paired differences excluding 0 is reproduced, the opposite direction with such "
            "an interval not reproduced, anything else not decidable. Each seed's difference is measured on the ids "
            "both sides hold (`paired ids`). Every seed scores the same instances, so the interval covers the spread "
            "between rankers, not the sampling of instances (the bootstrap intervals in each `results.json` cover "
            "that); with few seeds the t interval also rests on roughly normal per-seed differences. \"paper\" is "
            "the paper's first − second from Tables 3-7 (different instance sets where the configs differ).", "",
            *verdict_rows(run), "", uw_length_note(), ""]


def context_turns(dataset: str) -> dict:
    """Per config of :data:`FAMILIES` in ``dataset`` (``test`` = `dailydialog`): test rows, their mean context turns,
    and the mean turns of the `dailydialog` test contexts with the same ids."""
    from dialshift.ranking.data import data_files, read_columns

    files = data_files(dataset)

    def turns(config):
        table = read_columns(dataset, config, "test", ["id", "context"], files=files).to_pydict()
        return dict(zip(table["id"], map(len, table["context"]), strict=True))

    unshifted = turns("dailydialog")
    result = {}
    for config in dict.fromkeys(c for configs in FAMILIES.values() for c in configs):
        if config != "test" and config not in files:
            continue
        mine = unshifted if config == "test" else turns(config)
        shared = [unshifted[i] for i in mine if i in unshifted]
        result[config] = {"rows": len(mine), "mean_turns": float(np.mean(list(mine.values()))),
                          "shared_with_dailydialog": len(shared),
                          "dailydialog_mean_turns_on_shared": float(np.mean(shared)) if shared else None}
    return result


def context_table() -> list[str]:
    data = json.loads(CONTEXT_TURNS.read_text(encoding="utf-8"))
    lines = ["Context length per config (whole test split, from `reproduction_lee/context_turns.json`): a shifted "
             "config holds a subset of the `dailydialog` test contexts (the same ids), and where that subset is "
             "shorter, comparing it with the whole test split confounds the shift with context length.", "",
             "| config | test rows | mean context turns | rows shared with `dailydialog` | their mean turns there |",
             "|---|---:|---:|---:|---:|"]
    for config, row in data.items():
        there = row["dailydialog_mean_turns_on_shared"]
        lines.append(f"| {config} | {row['rows']:,} | {row['mean_turns']:.2f} | {row['shared_with_dailydialog']:,} | "
                     + ("–" if there is None else f"{there:.2f}") + " |")
    return lines + [""]


def generate() -> str:
    lines = cpu_section() + context_table()
    lines += ["## Earlier run: dialshift 0.1, one ranker, no predictions kept (generated)", "",
              "Each cell: ours / the paper's (Tables 3-7, bert-base-cased on the full data). Ours: one sample of n "
              "instances per config, the seed-0 ranker (vanilla, temperature, MC dropout) and the ensemble; "
              "`test` is the unshifted `dailydialog` test split (`source` in the files). One value per comparison "
              "gives no interval, so these tables decide no finding.", ""]
    for n, path in RESULTS.items():
        lines += result_tables(n, parse(path))
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv=None) -> int:
    parser = reports.argument_parser(__doc__)
    parser.add_argument("--context-turns", metavar="DATASET", help="recompute context_turns.json from a DailyDialog "
                                                                    "build")
    args = parser.parse_args(argv)
    if args.context_turns and reports.write_json(CONTEXT_TURNS, context_turns, args.context_turns):
        return 2
    return reports.render(REPORT, generate(), GENERATOR, args.check)


if __name__ == "__main__":
    sys.exit(main())
