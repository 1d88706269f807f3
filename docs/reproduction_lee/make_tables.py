#!/usr/bin/env python
"""The result tables and verdicts of docs/reproduction_lee.md, from the committed result files of its CPU runs.

    python docs/reproduction_lee/make_tables.py            # rewrite the generated part of the report
    python docs/reproduction_lee/make_tables.py --check    # exit 1 when the report is not what this generates
    python docs/reproduction_lee/make_tables.py --context-turns DATASET   # recompute context_turns.json

Reads ``results_n25.md`` and ``results_n150.md`` (the ``results.md`` that ``dialshift evaluate`` wrote for the runs
of the report: Acc = R@1/10, Brier, ECE per config and method, one sample of 25 / 150 instances per config) and
renders, between the two ``make_tables`` markers of the report, each beside the paper's Tables 3-7 and every finding's
verdict by :mod:`dialshift.verdicts`. The rule needs one paired difference per ranker seed; these files hold one
ranker (seed 0; the ensemble is one aggregate of seeds 0-2) and no predictions, so every verdict rests on one value
and the rule can only say "not decidable". Each verdict row names the run that would decide it. ``context_turns.json``
(from a DailyDialog build, by ``--context-turns``) gives each config's mean context length on its whole test split
and on the `dailydialog` test contexts with the same ids: the length confound of the UW/KW comparisons.
"""

import json
import re
import sys
from pathlib import Path

import numpy as np

from dialshift import reports
from dialshift.verdicts import verdict

HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "reproduction_lee.md"
GENERATOR = "docs/reproduction_lee/make_tables.py"
RESULTS = {25: HERE / "results_n25.md", 150: HERE / "results_n150.md"}
CONTEXT_TURNS = HERE / "context_turns.json"
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
# The run that would decide every finding: kept predictions, several ranker seeds, paired per seed.
DECIDING_RUN = ("rankers of seeds 0-4, `dialshift evaluate` with predictions kept on the same instances of every "
                "config compared")
# (finding, n, method, metric, first config, second config, the paper's direction of first - second, why the
# committed files cannot decide it beyond the one seed, the run that would).
FINDINGS = [
    ("Accuracy falls with word replacement (Table 3)", 150, "vanilla", "Acc", "test", "uw_0.50", "+",
     "the two samples are different instances, and uw_0.50 holds only a subset of the test contexts, shorter on "
     "average, which confounds replacement with context length", "ranker seeds 0-4 with predictions kept on "
     "`dailydialog` and uw_0.50, paired on the ids they share (the same contexts with and without replacement; "
     "`dialshift score` pairs declared baselines this way)"),
    ("Accuracy falls with sentence deletion (Table 4)", 150, "vanilla", "Acc", "ic_0of6", "ic_5of6", "+",
     "every IC config holds the same instances, so a paired test exists, but the predictions were not kept",
     DECIDING_RUN),
    ("ECE rises with word replacement (Table 3)", 150, "vanilla", "ECE", "uw_0.50", "test", "+",
     "these rankers are under-confident (T < 1), so ECE tracks accuracy, not over-confidence; different samples",
     "a ranker trained for a full epoch (GPU), seeds 0-4"),
    ("Brier rises with word replacement (Table 3)", 150, "vanilla", "Brier", "uw_0.50", "test", "+",
     "vanilla Brier sits at the uniform prediction's 0.9 on every config", "a ranker trained for a full epoch (GPU)"),
    ("The ensemble is more accurate than one ranker under the strongest UW shift", 150, ("ensemble", "vanilla"),
     "Acc", "uw_0.50", "uw_0.50", "+", "one ensemble of three rankers against one ranker", DECIDING_RUN
     + ", ensembles drawn from disjoint seeds"),
    ("The ensemble is better calibrated than one ranker under the strongest UW shift (lower ECE)", 150,
     ("vanilla", "ensemble"), "ECE", "uw_0.50", "uw_0.50", "+", "under-confident rankers; one ensemble",
     "a ranker trained for a full epoch (GPU), ensembles from disjoint seeds"),
    ("Temperature scaling lowers ECE (test)", 150, ("vanilla", "temperature"), "ECE", "test", "test", "+",
     "any T < 1 lowers the ECE of an under-confident ranker, whatever the shift", "a ranker trained for a full epoch"),
    ("KW keeps more accuracy than UW at the same ratio (Tables 3, 5)", 150, "vanilla", "Acc", "kw_0.50", "uw_0.50",
     "+", "different instance samples; KW shares UW's targets by design", DECIDING_RUN + " (paired on the ids "
     "kw_0.50 and uw_0.50 share)"),
    ("Replacing more important words hurts more (Table 7)", 150, "vanilla", "Acc", "uw_imp_1", "uw_imp_5", "+",
     "the seed-0 ranker's attention after 12 steps is a weak importance signal", DECIDING_RUN),
    ("SR: shorter contexts do not hurt (Table 6: flat)", 150, "vanilla", "Acc", "sr_6", "sr_2", None,
     "the rule tests a direction; \"flat\" is a claim of equality, which needs an equivalence margin the paper does "
     "not give", DECIDING_RUN + ", with a stated equivalence margin"),
    ("MC dropout is slightly less accurate than vanilla (test)", 25, ("vanilla", "dropout"), "Acc", "test", "test",
     "+", "25 instances, one ranker", DECIDING_RUN),
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


def value(table: dict, method: str, metric: str, config: str) -> float:
    return table[config][method][metric]


def verdict_rows(tables: dict) -> list[str]:
    lines = ["| finding (paper) | compared | ours (n) | paper | verdict by the rule | why the committed files cannot "
             "decide it | the run that would |", "|---|---|---:|---:|---|---|---|"]
    for text, n, method, metric, first, second, direction, why, run in FINDINGS:
        table = tables[n]
        methods = method if isinstance(method, tuple) else (method, method)
        ours = value(table, methods[0], metric, first) - value(table, methods[1], metric, second)
        theirs = PAPER[first][METHODS.index(methods[0])][METRICS.index(metric)] - \
            PAPER[second][METHODS.index(methods[1])][METRICS.index(metric)]
        compared = f"{metric}: {methods[0]} {first} − {methods[1]} {second}" if methods[0] != methods[1] else \
            f"{metric} of {methods[0]}: {first} − {second}"
        if direction is None:
            outcome = f"not decidable (a claim of equality: {ours:+.3f}, 1 seed)"
        else:
            outcome = verdict([ours], direction).cell(digits=3).replace("(", f"(paper's direction {direction}; ", 1)
        lines.append(f"| {text} | {compared} | {ours:+.3f} ({n}) | {theirs:+.3f} | {outcome} | {why} | {run} |")
    return lines


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
    tables = {n: parse(path) for n, path in RESULTS.items()}
    lines = ["## Results beside the paper (generated)", "",
             "Each cell: ours / the paper's (Tables 3-7, bert-base-cased on the full data). Ours: one sample of n "
             "instances per config, the seed-0 ranker (vanilla, temperature, MC dropout) and the ensemble; "
             "`test` is the unshifted `dailydialog` test split (`source` in the files, from dialshift 0.1).", ""]
    for n, table in tables.items():
        lines += result_tables(n, table)
    lines += context_table()
    lines += ["## Verdicts (generated)", "",
              "By the rule of `dialshift.verdicts`, one rule for the four reports: the paper's direction with a 95 % "
              "t interval of the per-seed paired differences excluding 0 is reproduced, the opposite direction with "
              "such an interval not reproduced, anything else not decidable. The committed files hold one value per "
              "comparison (one ranker seed; the ensemble is one aggregate), so no interval exists and every verdict "
              "is not decidable; \"ours\" and \"paper\" are first − second.", "", *verdict_rows(tables)]
    return "\n".join(lines) + "\n"


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
