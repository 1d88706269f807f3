#!/usr/bin/env python
"""The result tables and verdicts of docs/reproduction_lee.md, from the committed files of its CPU runs.

    python docs/reproduction_lee/make_tables.py            # rewrite the generated part of the report
    python docs/reproduction_lee/make_tables.py --check    # exit 1 when the report is not what this generates
    python docs/reproduction_lee/make_tables.py --context-turns DATASET   # recompute context_turns.json
    python docs/reproduction_lee/make_tables.py --checksums   # rewrite cpu/sha256.json (collect.py also writes it)

The CPU run on the current build (``run_all.sh``, copied by ``collect.py`` into ``cpu/``): per ranker seed the
kept predictions of every method and config, the ranker's metadata and each job's ``command.json``. From them it
computes Acc = R@1/10, Brier and ECE (:mod:`dialshift.metrics`, as ``dialshift score`` does) per seed, method and
config, the ensemble of every seed's ranker from their kept logits, and every finding's verdict by
:mod:`dialshift.verdicts` on per-seed differences measured on the ids both sides hold, weighed against the paper's
value (Tables 3-7), with its power, the seeds and instances for power 0.8 and their CPU cost, and the status
paragraph, whose every number is rendered from them; beside this script it writes ``summary.json``, the findings
counted by outcome that ``docs/make_status.py`` renders the README's status paragraph from (``--check`` compares it
too). It first verifies the run: ``cpu/sha256.json`` (its digest is in
the status paragraph), each ``run.json`` and ``command.json`` against its folder, each ``results.json`` against the
kept predictions. The earlier run (dialshift
0.1) left only ``results_n25.md`` and ``results_n150.md`` (the ``results.md`` of ``dialshift evaluate``: one ranker,
no predictions); their tables are rendered beside the paper's, without verdicts. ``context_turns.json`` (from a
DailyDialog build, by ``--context-turns``) gives each config's mean context length on its whole test split and on
the `dailydialog` test contexts with the same ids: the length confound of the UW/KW comparisons.
"""

import json
import math
import re
import sys
from pathlib import Path

import numpy as np

from dialshift import reports, run_files
from dialshift.errors import DialshiftError
from dialshift.metrics import brier, ece, recall_at_k
from dialshift.models.uncertainty import predictive
from dialshift.verdicts import (
    MARGIN,
    MAX_SEEDS,
    MEDIAN_CONFIDENCE,
    MIN_SEEDS,
    NOT_DECIDABLE,
    OUTCOMES,
    T_CONFIDENCE,
    interval,
    outcome_counts,
    verdict,
)

HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "reproduction_lee.md"
GENERATOR = "docs/reproduction_lee/make_tables.py"
RESULTS = {25: HERE / "results_n25.md", 150: HERE / "results_n150.md"}
CONTEXT_TURNS = HERE / "context_turns.json"
CPU = HERE / "cpu"
SUMMARY = HERE / "summary.json"
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
    """``{id: (scores, probabilities)}`` of one gzip-compressed predictions file (the submission format); a one-line
    error naming the file when it is missing, truncated or holds a bad row."""
    rows = {}
    for number, row in enumerate(run_files.read_jsonl_gz(path), 1):
        try:
            rows[row["id"]] = (row["scores"], row["probabilities"])
        except (KeyError, TypeError):
            raise DialshiftError(f"{path}: line {number} lacks id, scores or probabilities") from None
    return rows


def load_run(root: Path) -> dict:
    """The collected CPU run in ``root``: ``{"build": command, "labels": {config: {id: gold}}, "seeds": {seed:
    {"ranker", "train", "jobs": {job: command}, "methods": {method: {"run", "results", "predictions": {config:
    {id: ...}}}}}}}``
    plus the ``ensemble`` of every seed's vanilla logits and the ``ece_bins`` the results were scored with."""
    read = run_files.read_json
    if not (root / "labels.json").is_file():
        raise DialshiftError(f"{root}: no labels.json: not a run folder collected by collect.py")
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


def read_files(root: Path) -> list[Path]:
    """Every file of the run folder ``root`` that :func:`load_run` reads (all of it but the checksums)."""
    return sorted(path for path in root.rglob("*") if path.is_file() and path.name != run_files.MANIFEST)


def check_run(run: dict, root: Path) -> str:
    """Check the committed run against itself: every file's SHA-256 against ``sha256.json``, each ``run.json``
    against its folder (method, seed) and its ``results.json``, each scoring job's ``command.json`` against its
    seed, and every metric of each ``results.json`` against the kept predictions it was scored from. A one-line
    error on the first mismatch; else the checksums file's own digest (rendered in the report)."""
    digest = run_files.verify(root, read_files(root))
    for seed, data in run["seeds"].items():
        for job in ("train", *(name for name in data["jobs"])):
            command = data[job] if job == "train" else data["jobs"][job]
            words = json.dumps(command.get("command"))
            if f"seed_{seed}" not in words:
                raise DialshiftError(f"{root / f'seed_{seed}' / (job + '.json')}: its command is not seed {seed}'s")
        for method, found in data["methods"].items():
            folder = root / f"seed_{seed}" / method
            described = found["run"].get("run", {})
            if described.get("method") != method or described.get("seeds") != [seed]:
                raise DialshiftError(f"{folder / 'run.json'}: describes method {described.get('method')!r}, seeds "
                                     f"{described.get('seeds')!r}, not {method!r}, [{seed}]")
            sample = found["results"].get("scoring", {}).get("max_instances")
            if found["results"].get("run") != described or sample != found["run"]["scoring"]["max_instances"]:
                raise DialshiftError(f"{folder / 'results.json'}: its run or sample size differs from run.json's")
            for config, predictions in found["predictions"].items():
                ours = scores(run, predictions, config, sorted(predictions))
                theirs = found["results"].get("results", {}).get(config, {})
                for metric, key in (("Acc", "recall@1"), ("Brier", "brier"), ("ECE", "ece")):
                    if key not in theirs or abs(ours[metric] - theirs[key]) > 1e-9:
                        raise DialshiftError(f"{folder / 'results.json'}: {config} {key} is {theirs.get(key)!r}; the "
                                             f"kept predictions ({config}.jsonl.gz) give {ours[metric]!r}")
    return digest


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
    trained = sorted({seed["ranker"]["train_instances"] for seed in run["seeds"].values()})
    lines = [f"Rankers of seeds {', '.join(map(str, seeds))}, each `trainers/ranker.py` on the same "
             f"{' or '.join(map(str, trained))} training instances; the code of commit{'s' * (len(commits) > 1)} "
             f"{', '.join(f'`{c[:10]}`' for c in commits)} "
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
    def described_method(m: str) -> str:
        if m == "ensemble":
            return f"the ensemble of {len(run['seeds'])} rankers"
        return f"{counts[m]} seed" + "s" * (counts[m] != 1)

    described = "; ".join(f"{m}: {described_method(m)}" for m in methods)
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


#: The paper's table of each config family (Tables 3-7); ``dailydialog`` (their "test" row) is in every table.
PAPER_TABLES = {"uw_imp": 7, "uw": 3, "kw": 5, "ic": 4, "sr": 6}
#: The paper's training set (DailyDialog train, Lee et al. §3.5) and the instances per ranker here.
PAPER_TRAIN_INSTANCES = 76052
PAPER_SEEDS = 5
Z_POWER = 1.959964 + 0.841621  # two-sided 5 % and power 0.8: the normal approximation's sum of quantiles
#: The scoring job of each method (``seed_<s>/<job>.json``); the ensemble combines the vanilla logits.
JOB_OF = {"vanilla": "vanilla_temperature", "temperature": "vanilla_temperature", "ensemble": "vanilla_temperature",
          "dropout": "dropout"}


def paper_table(config: str) -> int:
    return next((n for prefix, n in PAPER_TABLES.items() if config.startswith(prefix)), 3)


def citation(metric: str, first: tuple, second: tuple) -> str:
    """Where the paper's value of ``first - second`` comes from: tables and cells."""
    tables = sorted({paper_table(config) for _, config in (first, second) if config != "dailydialog"} or {3})
    cells = [f"{method} {'test' if config == 'dailydialog' else config} {paper_value(method, config, metric):.3f}"
             for method, config in (first, second)]
    return f"Table{'s' * (len(tables) > 1)} {', '.join(map(str, tables))}, {metric}: {cells[0]} − {cells[1]}"


def per_instance(run: dict, predictions: dict, config: str, ids, metric: str) -> np.ndarray | None:
    """Each instance's Acc (1 when the gold candidate's score is strictly the highest: pessimistic ties) or Brier;
    None for ECE, which is not a mean over instances."""
    gold = np.asarray([run["labels"][config][i] for i in ids])
    if metric == "Acc":
        ranked = np.asarray([predictions[i][0] for i in ids], dtype=np.float64)
        top = ranked[np.arange(len(ids)), gold]
        others = np.where(np.arange(ranked.shape[1]) == gold[:, None], -np.inf, ranked)
        return (top > others.max(axis=1)).astype(float)
    if metric == "Brier":
        probabilities = np.asarray([predictions[i][1] for i in ids], dtype=np.float64)
        return ((probabilities - np.eye(probabilities.shape[1])[gold]) ** 2).sum(axis=1)
    return None


def instances_for_power(run: dict, metric: str, first: tuple, second: tuple, paper: float) -> int | None:
    """The instances per config at which instance sampling alone gives power 0.8 at the paper's effect (normal
    approximation, two-sided 5 %), from the spread of the per-instance paired differences (pooled over the seeds);
    None for ECE or sides that share no instance."""
    variances = []
    for seed in run["seeds"]:
        sides = [predictions_of(run, seed, method) for method, _ in (first, second)]
        if not all(sides) or first[1] not in sides[0] or second[1] not in sides[1]:
            continue
        ids = sorted(set(sides[0][first[1]]) & set(sides[1][second[1]]))
        values = [per_instance(run, side[config], config, ids, metric)
                  for side, (_, config) in zip(sides, (first, second), strict=True)]
        if len(ids) < 2 or values[0] is None:
            return None
        variances.append(np.var(values[0] - values[1], ddof=1))
    if not variances:
        return None
    return max(2, math.ceil((Z_POWER * math.sqrt(float(np.mean(variances))) / abs(paper)) ** 2))


def finding_results(run: dict) -> list[dict]:
    """Per finding of :data:`FINDINGS`: its per-seed differences, the paper's value and citation, the verdict (None
    for a claim of equality or a finding not run), and the instances for power 0.8."""
    results = []
    for text, metric, first, second, direction, note in FINDINGS:
        differences, shared = paired(run, metric, first, second)
        paper = paper_value(*first, metric) - paper_value(*second, metric)
        values = list(differences.values())
        result = {"text": text, "metric": metric, "first": first, "second": second, "direction": direction,
                  "note": note, "values": values, "shared": shared, "paper": paper,
                  "citation": citation(metric, first, second), "verdict": None, "instances": None}
        if values and direction is not None:
            result["verdict"] = verdict(values, direction, paper)
            result["instances"] = instances_for_power(run, metric, first, second, paper) if shared else None
        results.append(result)
    return results


def job_cpu(run: dict) -> dict:
    """Mean CPU seconds per seed of each job (``train``, ``vanilla_temperature``, ``dropout``) from ``command.json``."""
    found: dict[str, list[float]] = {}
    for data in run["seeds"].values():
        found.setdefault("train", []).append(data["train"]["cpu_seconds"])
        for job, command in data["jobs"].items():
            found.setdefault(job, []).append(command["cpu_seconds"])
    return {job: float(np.mean(values)) for job, values in found.items()}


def seed_cost(run: dict, result: dict) -> float:
    """CPU seconds of one more seed for a finding: a ranker's training and the scoring jobs of its two sides."""
    cpu = job_cpu(run)
    jobs = {JOB_OF[method] for method, _ in (result["first"], result["second"])}
    return cpu["train"] + sum(cpu.get(job, 0.0) for job in jobs)


def verdict_rows(run: dict, results: list[dict]) -> list[str]:
    lines = ["| finding (paper) | compared (first − second) | paired ids | per-seed differences | verdict by the rule "
             "(mean [interval], seeds; paper; power) | the paper's value (table, cells) | seeds for power 0.8 "
             "(CPU minutes to add them here) | instances for power 0.8 | note |",
             "|---|---|---:|---|---|---|---|---:|---|"]
    for result in results:
        metric, first, second = result["metric"], result["first"], result["second"]
        compared = (f"{metric} of {first[0]}: {first[1]} − {second[1]}" if first[0] == second[0] else
                    f"{metric} on {first[1]}: {first[0]} − {second[0]}" if first[1] == second[1] else
                    f"{metric}: {first[0]} {first[1]} − {second[0]} {second[1]}")
        note = result["note"].replace("uw_len", "*length*: the same contexts, short ones (below)")
        theirs = f"{result['paper']:+.3f} ({result['citation']})"
        values = result["values"]
        if not values:
            lines.append(f"| {result['text']} | {compared} | – | – | not run | {theirs} | – | – | {note} |")
            continue
        listed = ", ".join(f"{value:+.3f}" for value in values)
        v = result["verdict"]
        if v is None:
            mean, low, high = interval(values)
            bounds = "" if low is None else f" [{low:.3f}, {high:.3f}]"
            outcome = (f"{NOT_DECIDABLE} (a claim of equality: {mean:.3f}{bounds}, {len(values)} "
                       f"seed{'s' * (len(values) != 1)})")
            needed = "–"
        else:
            outcome = v.cell(digits=3)
            if v.seeds_for_power is None:
                needed = f"> {MAX_SEEDS:,}" if v.power is not None else "–"
            else:
                extra = max(0, v.seeds_for_power - v.seeds)
                needed = f"{v.seeds_for_power} ({extra * seed_cost(run, result) / 60:,.0f})"
        instances = "–" if result["instances"] is None else f"{result['instances']:,}"
        lines.append(f"| {result['text']} | {compared} | {result['shared'] or 'none'} | {listed} | {outcome} | "
                     f"{theirs} | {needed} | {instances} | {note} |")
    return lines


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def full_scale_cost(run: dict) -> dict:
    """The arithmetic of running the paper's scale on this CPU, from the jobs' ``command.json``: training CPU grows
    with the training instances (the same steps of 12), scoring CPU with the scored instances."""
    cpu = job_cpu(run)
    train_instances = run["seeds"][min(run["seeds"])]["ranker"]["train_instances"]
    configs = sorted(run["labels"])
    per_instance_cpu = cpu["vanilla_temperature"] / sum(len(run["labels"][c]) for c in configs)
    turns = json.loads(CONTEXT_TURNS.read_text(encoding="utf-8"))
    full_instances = sum(turns["test" if c == "dailydialog" else c]["rows"] for c in configs
                         if ("test" if c == "dailydialog" else c) in turns)
    ratio = PAPER_TRAIN_INSTANCES / train_instances
    train_hours = cpu["train"] * ratio / 3600
    score_hours = per_instance_cpu * full_instances / 3600
    return {"train_instances": train_instances, "ratio": ratio, "train_hours": train_hours,
            "per_instance": per_instance_cpu, "full_instances": full_instances, "score_hours": score_hours,
            "configs": len(configs), "total_hours": PAPER_SEEDS * (train_hours + score_hours)}


def instance_sentence(run: dict, judged: list[dict], sizes: list[int], cost: dict) -> str:
    """How many findings need more scored instances than the run's, and what scoring them costs."""
    turns = json.loads(CONTEXT_TURNS.read_text(encoding="utf-8"))
    short = [r for r in judged if r["instances"] is not None and r["instances"] > max(sizes)]
    if not short:
        return f"Instance sampling alone reaches power 0.8 within the {max(sizes)} scored instances for every finding."
    parts = []
    for r in sorted(short, key=lambda r: r["instances"]):
        rows = min(turns["test" if c == "dailydialog" else c]["rows"] for _, c in (r["first"], r["second"]))
        parts.append(f"\"{r['text']}\" {r['instances']:,} (its configs hold {rows:,}"
                     + (", too few" if r["instances"] > rows else
                        f"; {2 * r['instances'] * cost['per_instance'] * len(run['seeds']) / 60:,.0f} CPU minutes to "
                        f"score both sides for {plural(len(run['seeds']), 'seed')}") + ")")
    return (f"Instance sampling alone needs more than the {max(sizes)} scored instances per config for "
            f"{plural(len(short), 'finding')}: " + "; ".join(parts) + ".")


def status_lines(run: dict, results: list[dict], digest: str, files: int) -> list[str]:
    """The report's status paragraph: every count and number in it rendered from the run and the verdicts."""
    seeds = sorted(run["seeds"])
    dropout = sorted(s for s, data in run["seeds"].items() if "dropout" in data["methods"])
    judged = [r for r in results if r["verdict"] is not None]
    counts = {outcome: sum(r["verdict"].outcome == outcome for r in judged) for outcome in OUTCOMES}
    equality = sum(r["direction"] is None for r in results)
    listed = ", ".join(f"{n} {outcome}" for outcome, n in counts.items() if n)
    needed = sorted(r["verdict"].seeds_for_power for r in judged if r["verdict"].seeds_for_power is not None)
    beyond = sum(r["verdict"].seeds_for_power is None and r["verdict"].power is not None for r in judged)
    at_minimum = sum(n == MIN_SEEDS for n in needed)
    cpu = job_cpu(run)
    per_seed_cpu = sum(cpu.values())  # one more seed: its training and every scoring job
    largest = max((r for r in judged if r["verdict"].seeds_for_power is not None),
                  key=lambda r: r["verdict"].seeds_for_power, default=None)
    second = sorted(needed)[-2] if len(needed) > 1 else None
    cost = full_scale_cost(run)
    sizes = sorted({len(ids) for ids in run["labels"].values()})
    sentences = [
        f"The CPU run on the current build holds rankers of {plural(len(seeds), 'seed')} "
        f"({', '.join(map(str, seeds))}; MC dropout for {plural(len(dropout), 'seed')}), each trained on "
        f"{cost['train_instances']:,} instances and scored on {'/'.join(map(str, sizes))} instances per config.",
        f"By the rule of `dialshift.verdicts` ([verdicts.md](verdicts.md)), which decides nothing below "
        f"{MIN_SEEDS} seeds, its {len(results)} findings are: {listed}"
        + (f", and {equality} not decidable (a claim of equality, which the rule cannot test)" if equality else "")
        + ".",
        f"At the paper's effect and our spread across seeds, {at_minimum} of the {len(judged)} directional findings "
        f"would reach power 0.8 with {MIN_SEEDS} seeds"
        + (f", {len(needed) - at_minimum} need {needed[at_minimum]}-{needed[-1]}" if len(needed) > at_minimum else "")
        + (f", {beyond} more than {MAX_SEEDS:,}" if beyond else "")
        + f"; one more seed costs {per_seed_cpu / 60:,.1f} CPU minutes here (training "
        f"{cpu['train']:,.0f} CPU s and its scoring jobs {per_seed_cpu - cpu['train']:,.0f})"
        + (f", so the {MIN_SEEDS - len(seeds)} seeds up to {MIN_SEEDS} cost "
           f"{(MIN_SEEDS - len(seeds)) * per_seed_cpu / 60:,.0f} CPU minutes" if len(seeds) < MIN_SEEDS else "")
        + (f"{' and' if len(seeds) < MIN_SEEDS else ', so'} the {second - len(seeds)} more seeds that all findings "
           f"but one need ({second} in all) {(second - len(seeds)) * per_seed_cpu / 60:,.0f} CPU minutes"
           if second and largest and len(seeds) < second < largest["verdict"].seeds_for_power else "")
        + (f", while \"{largest['text']}\" needs {largest['verdict'].seeds_for_power} seeds "
           f"({max(0, largest['verdict'].seeds_for_power - len(seeds)) * per_seed_cpu / 3600:,.0f} CPU hours: "
           "it cannot fit)" if largest and largest["verdict"].seeds_for_power > 100 else "") + ".",
        instance_sentence(run, judged, sizes, cost),
        f"The paper's scale does not fit this CPU: a ranker on the paper's {PAPER_TRAIN_INSTANCES:,} training "
        f"instances is {cost['ratio']:,.0f} times the {cost['train_instances']:,} here, about "
        f"{cost['train_hours']:,.0f} CPU hours at the measured {job_cpu(run)['train']:,.0f} CPU s per training, and "
        f"scoring the {cost['full_instances']:,} test instances of the {cost['configs']} configs takes about "
        f"{cost['score_hours']:,.1f} CPU hours more at {cost['per_instance']:.2f} CPU s per instance, so "
        f"{PAPER_SEEDS} rankers need about {cost['total_hours']:,.0f} CPU hours, {cost['total_hours'] / 48:,.1f} "
        f"days of both cores without any other job; [`full_scale.md`](full_scale.md) plans it on a GPU.",
        f"`make_tables.py --check` verifies the {files} committed run files against `cpu/sha256.json` (digest "
        f"`{digest}`) and every metric of each `results.json` against the kept predictions."]
    return [" ".join(sentences)]


def cpu_section(run: dict, results: list[dict]) -> list[str]:
    return ["## CPU run on the current build (generated)", "", *cpu_overview(run), "### Results beside the paper", "",
            *cpu_tables(run), "### Verdicts", "",
            "By the rule of `dialshift.verdicts`, one rule for the four reports ([verdicts.md](verdicts.md)): a value "
            f"is ruled out when Student's and Hall's skewness-corrected {100 * T_CONFIDENCE:.0f} % t intervals of the "
            f"mean per-seed difference and the exact {100 * MEDIAN_CONFIDENCE:.0f} % interval of the median all "
            f"exclude it (below {MIN_SEEDS} seeds the median's interval is unbounded, so nothing is decided); the "
            f"outcome weighs the paper's value with a margin of {100 * MARGIN:.0f} % of its size (reproduced, weaker "
            "or stronger than the paper, contradicted, absent, underpowered). Power is the rule's power to decide "
            "the paper's direction at the paper's value, our spread across seeds and our number of seeds; "
            "\"seeds for power 0.8\" the fewest that reach it, with the CPU minutes of training and scoring the "
            "missing ones on this CPU (`command.json`). \"instances for power 0.8\" is the same for the sampling of "
            "instances alone "
            "(per-instance paired differences, normal approximation; not for ECE, which is not a mean over "
            "instances). Each seed's difference is measured on the ids both sides hold (`paired ids`); every seed "
            "scores the same instances, so the interval covers the spread between rankers, not the sampling of "
            "instances. The paper's value is its first − second from Tables 3-7 (different instance sets where "
            "the configs differ).", "",
            *verdict_rows(run, results), "", uw_length_note(), ""]


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


def check_statements(report: str, run: dict) -> None:
    """The hand-written code-mapping table must state the ECE bins the runs were scored with."""
    if run["ece_bins"] is not None and f"top-label ECE with **{run['ece_bins']} equal-width bins**" not in report:
        raise DialshiftError(f"{REPORT}: the code-mapping table must say \"top-label ECE with **{run['ece_bins']} "
                             f"equal-width bins**\", the bins of the runs' results.json")


def what_ran(run: dict) -> list[str]:
    """The first sentence of the report's "What ran": the seeds of the rankers and of MC dropout, from the run."""
    seeds = list(run["seeds"])
    dropout = [seed for seed, data in run["seeds"].items() if "dropout" in data["methods"]]
    without = [seed for seed in seeds if seed not in dropout]
    return ["**What ran** (the cost table below lists each job): the build, rankers of seeds "
            f"{', '.join(map(str, seeds))} and their vanilla/temperature scoring, and MC dropout of "
            + (f"seed{'s' * (len(dropout) != 1)} {', '.join(map(str, dropout))}" if dropout else "no seed")
            + (f" (none of seed{'s' * (len(without) != 1)} {', '.join(map(str, without))}, so the dropout rows rest "
               f"on {plural(len(dropout), 'seed')})" if without else "") + "."]


def summary(run: dict, results: list[dict]) -> dict:
    """What ``docs/make_status.py`` renders the README's status paragraph from (its format is in that script's
    docstring): the findings counted by outcome, a claim of equality as not decidable (as the status paragraph
    counts it), the seeds the verdicts rest on (MC dropout may have fewer) and the run's seed-runs."""
    outcomes = outcome_counts(r["verdict"].outcome if r["verdict"] else NOT_DECIDABLE for r in results)
    return {"paper": "Lee et al. (2022)", "report": "docs/reproduction_lee.md", "generator": GENERATOR,
            "cells": len(results), "outcomes": outcomes,
            "groups": [{"name": "the CPU run on the current build",
                        "seeds": sorted({r["verdict"].seeds for r in results if r["verdict"]}),
                        "cells": len(results), "outcomes": outcomes, "note": None}],
            "notes": [], "cost": {"runs": len(run["seeds"])}}


def generate(report: str) -> str:
    """The report with its two generated parts (:func:`build`)."""
    return build(report)[0]


def build(report: str) -> tuple[str, dict | None]:
    """The report with its two generated parts (the status paragraph, the tables) rendered from the committed
    files, and its :func:`summary` (None without a run)."""
    summarised = None
    if not (CPU / "labels.json").is_file():
        status = ["No run collected in `reproduction_lee/cpu/`."]
        ran = ["**What ran**: no run collected in `reproduction_lee/cpu/`."]
        lines = ["## CPU run on the current build (generated)", "", "No run collected in `reproduction_lee/cpu/`.", ""]
    else:
        run = load_run(CPU)
        digest = check_run(run, CPU)
        check_statements(report, run)
        results = finding_results(run)
        status = status_lines(run, results, digest, len(read_files(CPU)))
        lines = cpu_section(run, results)
        summarised = summary(run, results)
        ran = what_ran(run)
    lines += context_table()
    lines += ["## Earlier run: dialshift 0.1, one ranker, no predictions kept (generated)", "",
              "Each cell: ours / the paper's (Tables 3-7, bert-base-cased on the full data). Ours: one sample of n "
              "instances per config, the seed-0 ranker (vanilla, temperature, MC dropout) and the ensemble; "
              "`test` is the unshifted `dailydialog` test split (`source` in the files). One value per comparison "
              "gives no interval, so these tables decide no finding.", ""]
    for n, path in RESULTS.items():
        lines += result_tables(n, parse(path))
    report = reports.splice(report, "\n".join(status) + "\n", *reports.markers(f"{GENERATOR} (status)"), REPORT)
    report = reports.splice(report, "\n".join(ran) + "\n", *reports.markers(f"{GENERATOR} (what ran)"), REPORT)
    report = reports.splice(report, "\n".join(lines).rstrip("\n") + "\n", *reports.markers(GENERATOR), REPORT)
    return report, summarised


def main(argv=None) -> int:
    parser = reports.argument_parser(__doc__)
    parser.add_argument("--context-turns", metavar="DATASET", help="recompute context_turns.json from a DailyDialog "
                                                                    "build")
    parser.add_argument("--checksums", action="store_true", help="rewrite cpu/sha256.json from the files there "
                                                                 "(after collect.py; review the diff)")
    args = parser.parse_args(argv)
    if args.context_turns and reports.write_json(CONTEXT_TURNS, context_turns, args.context_turns):
        return 2
    try:
        if args.checksums:
            print(f"wrote {run_files.write_manifest(CPU, read_files(CPU))}")
            return 0
        expected, summarised = build(REPORT.read_text(encoding="utf-8"))
    except DialshiftError as error:
        print(f"make_tables.py: error: {error}", file=sys.stderr)
        return 2
    status = reports.write_or_check(REPORT, expected, args.check)
    if args.check and status:  # one line for a check that fails
        return status
    return reports.write_or_check_summary(SUMMARY, summarised, args.check, GENERATOR)


if __name__ == "__main__":
    sys.exit(main())
