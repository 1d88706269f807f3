#!/usr/bin/env python
"""Every table, verdict and figure of docs/reproduction_khosla.md, from the committed run files under ``runs/``.

    python docs/reproduction_khosla/make_tables.py            # rewrite the generated part of the report
    python docs/reproduction_khosla/make_tables.py --check    # exit 1 when the report is not what this generates

Reads ``runs/<build>/<config>/seed_<s>/`` (written by ``collect.py`` from the runs of ``run_all.sh``): ``run.json``
(the trainer's point metrics, options and validation accuracy), ``command.json`` (commit, command, CPU seconds) and
``predictions.npz`` (gold labels, closed-world argmax, each method's class). Writes the markdown between the two
``make_tables`` markers of the report and, from the first clinc14_cov seed, ``confusion_clinc14_cov_maha_seed0.png``
(not compared by ``--check``: PNG bytes depend on the matplotlib version).

Per build and config: mean ± sample std over seeds of F1_All, F1_In, F1_Out, Acc on test and cov_test beside the
paper's bert (Tables 4 / 5) and roberta (Table A2) values; the drop test - cov_test with its verdict by
:mod:`dialshift.verdicts` (per-seed paired differences, 95 % t interval across seeds); AUROC; the in-scope rejection
table (closed-world accuracy without rejection against each method's rejections); then every finding's verdict.
"""

import json
import sys
from pathlib import Path

import numpy as np

from dialshift import reports
from dialshift.across_seeds import mean_sd
from dialshift.verdicts import REPRODUCED, paired_differences, verdict

HERE = Path(__file__).resolve().parent
RUNS = HERE / "runs"
REPORT = HERE.parent / "reproduction_khosla.md"
GENERATOR = "docs/reproduction_khosla/make_tables.py"
FIGURE = HERE / "confusion_clinc14_cov_maha_seed0.png"
# Figures A1 and A2 of the paper (Maha, seed 0, 2 x 2 confusion matrices): (build, config, file), the first build
# present is used (HWU12-COV: the paper-faithful `--cov-dedup none` build first).
APPENDIX_FIGURES = {"A1": ([("default", "clinc14_cov"), ("nodedup", "clinc14_cov")], "figure_a1_clinc14_cov_maha.png"),
                    "A2": ([("nodedup", "hwu12_cov"), ("default", "hwu12_cov")], "figure_a2_hwu12_cov_maha.png")}
SPLITS = ("test", "cov_test")
METRICS = ("f1_all", "f1_in", "f1_out", "accuracy")
LABELS = {"msp": "MSP", "energy": "Energy", "maha": "Maha", "cosine": "Cosine", "knn": "KNN-C", "adb": "ADB",
          "dcloos": "DCLOOS"}
BUILDS = {"default": "", "nodedup": ", `--cov-dedup none` build"}
FEW = {"": 0, "_5shot": 1, "_10shot": 2}
# (test F1_All, test Acc, cov F1_All, cov Acc): bert-base-uncased (Tables 4 and 5), roberta-base (Table A2).
PAPER_BERT = {
    "clinc14_cov": {"msp": (88.5, 91.2, 72.9, 84.2), "cosine": (91.4, 94.4, 71.6, 86.0),
                    "maha": (92.4, 95.2, 73.2, 86.9), "adb": (89.1, 92.1, 71.9, 80.6),
                    "knn": (92.5, 95.2, 71.2, 86.3), "dcloos": (92.5, 95.7, 59.7, 83.2)},
    "clinc14_cov_5shot": {"msp": (79.7, 84.3, 65.8, 78.6), "cosine": (82.2, 89.0, 66.9, 82.6),
                          "maha": (84.2, 90.2, 68.5, 83.8), "adb": (80.4, 89.8, 57.0, 81.6)},
    "clinc14_cov_10shot": {"msp": (83.6, 88.1, 70.0, 82.1), "cosine": (85.6, 90.8, 69.7, 84.3),
                           "maha": (86.5, 90.9, 71.5, 84.4), "adb": (84.0, 91.0, 64.8, 83.8)},
    "hwu12_cov": {"msp": (86.9, 83.1, 80.4, 78.7), "cosine": (92.0, 90.6, 85.4, 86.6),
                  "maha": (92.3, 91.1, 84.5, 86.5), "adb": (88.8, 86.6, 84.7, 83.7), "knn": (92.1, 90.3, 84.0, 85.7),
                  "dcloos": (93.6, 93.0, 80.5, 84.1)},
    "hwu12_cov_5shot": {"msp": (69.2, 69.4, 71.9, 71.5), "cosine": (70.7, 71.9, 72.5, 73.1),
                        "maha": (73.8, 77.1, 73.7, 77.2), "adb": (63.8, 70.7, 59.4, 69.9)},
    "hwu12_cov_10shot": {"msp": (77.3, 76.3, 80.0, 78.2), "cosine": (80.9, 81.6, 81.9, 82.9),
                         "maha": (83.2, 84.2, 82.2, 84.2), "adb": (77.2, 78.9, 75.2, 79.3)},
}
# Table A1: utterances per in-scope intent (train, dev, test, cov_test); every CLINC14-COV intent has (100, 20, 30, 30).
PAPER_TABLE_A1 = {
    "clinc14_cov": dict.fromkeys(["alarm", "weather", "calendar", "recipe", "date", "repeat", "definition", "order",
                                  "traffic", "reminder", "play_music", "restaurant_reservation", "update_playlist",
                                  "card_declined"], (100, 20, 30, 30)),
    "hwu12_cov": {"alarm_query": (288, 36, 53, 90), "cooking_recipe": (361, 59, 91, 90),
                  "qa_definition": (425, 71, 76, 90), "alarm_remove": (174, 24, 32, 90),
                  "weather_query": (728, 143, 175, 90), "play_music": (794, 141, 195, 90),
                  "datetime_query": (501, 81, 107, 90), "transport_traffic": (272, 38, 34, 90),
                  "calendar_query": (724, 119, 145, 90), "takeaway_order": (290, 38, 41, 90),
                  "alarm_set": (341, 47, 60, 90), "general_repeat": (157, 18, 19, 90)},
}
PAPER_ROBERTA = {
    "clinc14_cov": {"msp": (90.0, 92.4, 73.1, 84.7), "energy": (90.0, 92.2, 73.2, 84.6),
                    "cosine": (92.5, 94.6, 73.2, 86.0), "maha": (92.5, 94.6, 73.3, 85.7),
                    "adb": (88.8, 91.0, 73.4, 80.8)},
    "clinc14_cov_5shot": {"msp": (81.6, 86.5, 66.9, 80.5), "energy": (80.1, 84.5, 66.6, 78.9),
                          "cosine": (86.8, 91.8, 71.5, 85.6), "maha": (87.6, 92.7, 70.9, 85.9),
                          "adb": (86.1, 92.0, 66.9, 84.5)},
    "clinc14_cov_10shot": {"msp": (84.2, 87.9, 68.4, 81.2), "energy": (84.0, 88.5, 70.1, 82.6),
                           "cosine": (88.7, 92.8, 71.7, 85.6), "maha": (89.0, 92.9, 72.6, 85.9),
                           "adb": (86.0, 89.7, 70.8, 83.0)},
    "hwu12_cov": {"msp": (89.4, 85.7, 81.6, 81.1), "energy": (89.9, 86.5, 80.6, 80.9),
                  "cosine": (93.4, 92.2, 83.5, 86.6), "maha": (93.8, 92.8, 82.8, 86.3),
                  "adb": (89.5, 87.9, 84.4, 84.7)},
    "hwu12_cov_5shot": {"msp": (73.3, 72.6, 73.5, 72.5), "energy": (72.9, 71.5, 73.9, 72.3),
                        "cosine": (79.7, 83.0, 78.8, 82.8), "maha": (79.9, 83.0, 77.5, 81.9),
                        "adb": (78.2, 80.7, 73.8, 79.7)},
    "hwu12_cov_10shot": {"msp": (79.0, 77.7, 79.7, 77.4), "energy": (79.2, 77.3, 80.1, 77.6),
                         "cosine": (84.8, 85.6, 83.7, 85.6), "maha": (85.3, 86.6, 83.2, 85.4),
                         "adb": (82.4, 82.6, 81.2, 83.0)},
}


def collect(root: Path = RUNS) -> dict:
    """``{(build, config): {seed: {"run": run.json, "command": command.json, "folder": Path}}}`` of every seed."""
    found = {}
    for run_json in sorted(root.glob("*/*/seed_*/run.json")):
        folder = run_json.parent
        build, config = folder.parent.parent.name, folder.parent.name
        command = folder / "command.json"
        found.setdefault((build, config), {})[int(folder.name.split("_")[1])] = {
            "run": json.loads(run_json.read_text()), "folder": folder,
            "command": json.loads(command.read_text()) if command.is_file() else {}}
    return found


def order(key) -> tuple:
    build, config = key
    base, _, rest = config.partition("_cov")
    return (base, list(BUILDS).index(build) if build in BUILDS else 9, FEW.get(rest, 9), config)


def paper_cell(table: dict, config: str, method: str) -> str:
    values = table.get(config, {}).get(method)
    return f"{values[0]:.1f} / {values[1]:.1f} → {values[2]:.1f} / {values[3]:.1f}" if values else "–"


def metric(seeds: dict, method: str, split: str, name: str) -> dict:
    """``{seed: value}`` of one metric of one method and split."""
    return {s: seed["run"]["results"][method][split][name] for s, seed in sorted(seeds.items())
            if method in seed["run"]["results"]}


def drop(seeds: dict, method: str, name: str) -> dict:
    """``{seed: test - cov_test}`` of one metric (a paired difference: the same seed's model on both splits)."""
    test, cov = metric(seeds, method, "test", name), metric(seeds, method, "cov_test", name)
    return {s: test[s] - cov[s] for s in test if s in cov}


def in_scope(seeds: dict) -> dict:
    """``{(row, kind, split): {seed: value}}``: on the in-scope utterances, the closed-world accuracy (argmax, no
    rejection) and, per method, the share rejected and the open-world accuracy; from ``predictions.npz``."""
    rows = {}
    for s, seed in sorted(seeds.items()):
        saved = np.load(seed["folder"] / "predictions.npz")
        oos = len(saved["names"]) - 1
        for split in SPLITS:
            gold = saved[f"gold/{split}"]
            inside = gold != oos
            if f"argmax/{split}" in saved:
                rows.setdefault(("closed-world (argmax)", "accuracy", split), {})[s] = \
                    float(np.mean(saved[f"argmax/{split}"][inside] == gold[inside]))
            for method in seed["run"]["results"]:
                predicted = saved[f"{method}/{split}"][inside]
                rows.setdefault((LABELS[method], "rejected", split), {})[s] = float(np.mean(predicted == oos))
                rows.setdefault((LABELS[method], "accuracy", split), {})[s] = \
                    float(np.mean(predicted == gold[inside]))
    return rows


def rule_cell(differences: dict) -> str:
    """``mean [low, high] verdict`` in points, the verdict for the paper's direction (a drop: test above cov_test)."""
    v = verdict(list(differences.values()), "+")
    if v.low is None:
        return f"{100 * v.mean:.1f} ({v.outcome})"
    return f"{100 * v.mean:.1f} [{100 * v.low:.1f}, {100 * v.high:.1f}] {v.outcome}"


def config_tables(build: str, config: str, seeds: dict) -> list[str]:
    methods = [m for m in LABELS if any(m in seed["run"]["results"] for seed in seeds.values())]
    lines = [f"### {config}{BUILDS.get(build, f', {build} build')}", "",
             "| method | seeds | test F1_All | F1_In | F1_Out | Acc | cov F1_All | F1_In | F1_Out | Acc "
             "| drop F1_All [95 % t interval] verdict | drop Acc [95 % t interval] verdict "
             "| paper bert F1_All / Acc test → cov | paper roberta (A2) |",
             "|---|---:|" + "---:|" * 10 + "---|---|"]
    for method in methods:
        cells = [mean_sd(metric(seeds, method, split, name).values(), scale=100)
                 for split in SPLITS for name in METRICS]
        cells += [rule_cell(drop(seeds, method, name)) for name in ("f1_all", "accuracy")]
        lines.append(f"| {LABELS[method]} | {len(metric(seeds, method, 'test', 'f1_all'))} | " + " | ".join(cells)
                     + f" | {paper_cell(PAPER_BERT, config, method)} | {paper_cell(PAPER_ROBERTA, config, method)} |")
    lines += ["", "AUROC (in-scope positive) test → cov_test: " + "; ".join(
        f"{LABELS[m]} {mean_sd(metric(seeds, m, 'test', 'auroc').values(), scale=100)} → "
        f"{mean_sd(metric(seeds, m, 'cov_test', 'auroc').values(), scale=100)}" for m in methods), ""]
    kinds = {"ce": [], "dcloos": []}
    for seed in seeds.values():
        kinds["dcloos" if "dcloos" in seed["run"]["results"] else "ce"].append(seed["run"]["validation_accuracy"])
    kept = [f"{name} {mean_sd(kinds[kind], scale=100)} over {len(kinds[kind])} seed{'s' * (len(kinds[kind]) != 1)}"
            for kind, name in (("ce", "cross-entropy model (in-scope)"), ("dcloos", "DCLOOS (K + 1, in-scope and oos)"))
            if kinds[kind]]
    lines += ["Validation accuracy of the kept weights: " + "; ".join(kept), ""]
    rows = in_scope(seeds)
    lines += ["In-scope utterances only (%, mean ± std over seeds): covariate shift alone (closed-world accuracy, no "
              "rejection) against both shifts (each method's rejections and open-world in-scope accuracy)", "",
              "| | rejected test | rejected cov_test | accuracy test | accuracy cov_test |",
              "|---|---:|---:|---:|---:|"]
    for name in ["closed-world (argmax)"] + [LABELS[m] for m in methods]:
        cells = [mean_sd(rows[(name, kind, split)].values(), scale=100) if (name, kind, split) in rows else "–"
                 for kind in ("rejected", "accuracy") for split in SPLITS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + [""]


def benchmark_name(build: str, config: str) -> str:
    return config + (" (`--cov-dedup none`)" if build == "nodedup" else "")


def summary(verdicts: dict) -> str:
    """``reproduced for MSP, Maha; not decidable for ...`` from ``{method label: Verdict}``."""
    groups = {}
    for label, v in verdicts.items():
        groups.setdefault(v.outcome, []).append(label)
    return "; ".join(f"**{outcome}** for {', '.join(labels)}" for outcome, labels in
                     sorted(groups.items(), key=lambda item: item[0] != REPRODUCED))


def verdict_table(found: dict) -> list[str]:
    """Every finding of the paper that the runs can test, one row per benchmark, each method's verdict by the rule."""
    lines = ["| finding (paper) | benchmark | verdict by the rule, per method | per method: mean [95 % t interval], "
             "seeds (points) |", "|---|---|---|---|"]
    findings = [
        ("Every method loses F1_All from test to cov_test (Tables 4, 5)", lambda s, m: drop(s, m, "f1_all")),
        ("Every method loses Acc from test to cov_test (Tables 4, 5)", lambda s, m: drop(s, m, "accuracy")),
        ("Rejection adds to the covariate damage (Figure 1): the in-scope accuracy of the open-world decision falls "
         "more than the closed-world accuracy", rejection_adds),
    ]
    full = [key for key in sorted(found, key=order) if not key[1].endswith("shot")]
    for text, differences in findings:
        for build, config in full:
            seeds = found[(build, config)]
            methods = [m for m in LABELS if m != "dcloos" and any(m in x["run"]["results"] for x in seeds.values())]
            results = {LABELS[m]: verdict(list(differences(seeds, m).values()), "+") for m in methods}
            numbers = "; ".join(f"{label} {v.cell(100)}" for label, v in results.items())
            lines.append(f"| {text} | {benchmark_name(build, config)} | {summary(results)} | {numbers} |")
    for build, config in full:
        few = [c for c in (f"{config}_5shot", f"{config}_10shot") if (build, c) in found]
        if not few:
            lines.append(f"| Few-shot loses less than full (Tables 4, 5): the full config's drop minus the few-shot "
                         f"config's, per seed | {benchmark_name(build, config)} | not run (no few-shot seeds; "
                         f"`run_all.sh OUT 0 9 {build}:{config}_5shot:8 {build}:{config}_10shot:8` runs them) | – |")
        for shot in few:
            for name, label in (("accuracy", "Acc"), ("f1_all", "F1_All")):
                seeds, few_seeds = found[(build, config)], found[(build, shot)]
                methods = [m for m in LABELS if any(m in x["run"]["results"] for x in few_seeds.values())
                           and any(m in x["run"]["results"] for x in seeds.values())]
                results = {LABELS[m]: verdict(paired_differences(drop(seeds, m, name), drop(few_seeds, m, name)), "+")
                           for m in methods}
                numbers = "; ".join(f"{lab} {v.cell(100)}" for lab, v in results.items())
                lines.append(f"| Few-shot loses less {label} than full (Tables 4, 5): the full config's drop minus "
                             f"{shot}'s, same seed | {benchmark_name(build, config)} | {summary(results)} | "
                             f"{numbers} |")
    if not any("dcloos" in seed["run"]["results"] for seeds in found.values() for seed in seeds.values()):
        lines.append("| Pseudo k+1 methods drop most (DCLOOS, Tables 4, 5) | both | not run (DCLOOS seeds await a "
                     "rerun) | – |")
    return lines


def rejection_adds(seeds: dict, method: str) -> dict:
    """``{seed: open-world in-scope accuracy drop - closed-world accuracy drop}``."""
    rows = in_scope(seeds)
    closed = [rows[("closed-world (argmax)", "accuracy", split)] for split in SPLITS]
    opened = [rows[(LABELS[method], "accuracy", split)] for split in SPLITS]
    return {s: (opened[0][s] - opened[1][s]) - (closed[0][s] - closed[1][s]) for s in closed[0]}


def runs_table(found: dict) -> list[str]:
    """What ran: per build and config, seeds, commit(s), threads and CPU minutes."""
    lines = ["| benchmark | seeds | trainer commit | epochs, lr | features, Cosine scoring | threads "
             "| CPU minutes per seed (total) |", "|---|---:|---|---|---|---:|---|"]
    for key in sorted(found, key=order):
        seeds = found[key]
        commands = [seed["command"] for seed in seeds.values()]
        commits = sorted({c.get("commit", "?")[:7] for c in commands})
        threads = sorted({str(c.get("threads", "?")) for c in commands})
        training = sorted({f"{option(c, '--num-epochs')}, {option(c, '--learning-rate')}" for c in commands})
        options = sorted({", ".join(seed["run"].get("options", {}).get(k, "?") for k in ("features", "cosine_scoring"))
                          for seed in seeds.values()})
        cpu = [c["cpu_seconds"] / 60 for c in commands if "cpu_seconds" in c]
        cost = f"{np.mean(cpu):.1f} ({np.sum(cpu):.0f})" if cpu else "–"
        lines.append(f"| {benchmark_name(*key)} | {', '.join(map(str, sorted(seeds)))} | {', '.join(commits)} | "
                     f"{'; '.join(training)} | {'; '.join(options)} | {', '.join(threads)} | {cost} |")
    return lines


def option(command: dict, name: str) -> str:
    """The value of ``name`` in a run's recorded command, or ``?``."""
    arguments = command.get("command", [])
    return arguments[arguments.index(name) + 1] if name in arguments[:-1] else "?"


def table_a1(root: Path = RUNS) -> list[str]:
    """Utterances per in-scope intent and split of each build beside the paper's Table A1, from the committed
    ``label_counts.json`` (dev = validation + validation_hold, which are disjoint halves)."""
    lines = []
    for config, paper in PAPER_TABLE_A1.items():
        counted = {build: json.loads((root / build / config / "label_counts.json").read_text())
                   for build in BUILDS if (root / build / config / "label_counts.json").is_file()}
        if not counted:
            continue
        builds = list(counted)
        lines += [f"**{config}** (ours by build: {' / '.join(f'`{b}`' for b in builds)}; then the paper)", "",
                  "| intent | " + " | ".join(f"{split} ours / paper" for split in ("train", "dev", "test", "cov_test"))
                  + " |", "|---|" + "---:|" * 4]
        totals = {}
        for intent in [*paper, "oos"]:
            cells = []
            for index, split in enumerate(("train", "dev", "test", "cov_test")):
                ours = [split_count(counted[b], split, intent) for b in builds]
                theirs = paper[intent][index] if intent in paper else None
                for b, value in zip(builds, ours, strict=True):
                    totals.setdefault((split, b), 0)
                    totals[(split, b)] += value if intent != "oos" else 0
                cells.append(" / ".join(map(str, ours)) + f" / {'–' if theirs is None else theirs}")
            lines.append(f"| {intent} | " + " | ".join(cells) + " |")
        lines.append("| **in-scope total** | " + " | ".join(
            " / ".join(str(totals[(split, b)]) for b in builds)
            + f" / {sum(counts[index] for counts in paper.values())}"
            for index, split in enumerate(("train", "dev", "test", "cov_test"))) + " |")
        for build in builds:
            differ = [f"{intent} {split_count(counted[build], 'train', intent)} vs {paper[intent][0]}"
                      for intent in paper if split_count(counted[build], "train", intent) != paper[intent][0]]
            lines.append(f"\nTraining utterances that differ from the paper's, build `{build}`: "
                         + ("; ".join(differ) if differ else "none") + ".")
        lines.append("")
    return lines


def split_count(counts: dict, split: str, intent: str) -> int:
    parts = ("validation", "validation_hold") if split == "dev" else (split,)
    return sum(counts[part].get(intent, 0) for part in parts)


def figure_source(found: dict, candidates) -> tuple | None:
    """The first ``(build, config)`` of ``candidates`` with a seed 0."""
    return next((key for key in candidates if 0 in found.get(key, {})), None)


def collapse_sentence(saved, method: str = "maha", top: int = 3) -> str:
    """The in-scope intents whose correct cov_test utterances fall most from the closed world (argmax, no
    rejection) to the open world (``method``), with how many of the fall are rejections: the reading of Figure 1."""
    names = [str(name) for name in saved["names"]]
    oos = len(names) - 1
    gold, closed, opened = saved["gold/cov_test"], saved["argmax/cov_test"], saved[f"{method}/cov_test"]
    rows = []
    for intent in range(oos):
        mine = gold == intent
        right_closed, right_open = int(np.sum(closed[mine] == intent)), int(np.sum(opened[mine] == intent))
        rows.append((right_closed - right_open, names[intent], right_closed, right_open, int(np.sum(mine)),
                     int(np.sum(opened[mine] == oos))))
    rows.sort(key=lambda row: (-row[0], row[1]))
    return "; ".join(f"*{name}* {closed_right} / {total} right without rejection, {open_right} / {total} with it "
                     f"({rejected} rejected)" for _, name, closed_right, open_right, total, rejected in rows[:top])


def figures_section(found: dict) -> list[str]:
    """Figure 1 and Figures A1/A2: the image links and, for each, the intents that collapse once rejection is
    added."""
    lines = []
    key = figure_source(found, [("default", "clinc14_cov"), ("nodedup", "clinc14_cov")])
    if not key:
        lines += ["### Figure 1: not run (clinc14_cov, seed 0)", ""]
    else:
        lines += [f"### Figure 1 ({benchmark_name(*key)}, Maha, seed 0)", "",
                  f"![confusion matrices, Maha]({REPORT.stem}/{FIGURE.name})", "",
                  "Left: test (open world); middle: cov_test in-scope utterances, argmax without rejection (covariate "
                  "shift alone); right: cov_test with Maha's VAL-HOLD threshold (both shifts). The intents that lose "
                  "most once rejection is added: " + collapse_sentence(np.load(found[key][0]["folder"] /
                                                                               "predictions.npz")) + ".", ""]
    for name, (candidates, file) in APPENDIX_FIGURES.items():
        key = figure_source(found, candidates)
        if not key:
            lines += [f"### Figure {name}: not run ({' or '.join(benchmark_name(*c) for c in candidates)}, seed 0)",
                      ""]
            continue
        lines += [f"### Figure {name} ({benchmark_name(*key)}, Maha, seed 0)", "",
                  f"![Figure {name}]({REPORT.stem}/{file})", "",
                  "Top: test; bottom: cov_test; left: in-scope utterances, argmax without rejection (closed world); "
                  "right: Maha with its VAL-HOLD threshold (open world). Largest falls from bottom left to bottom "
                  "right: " + collapse_sentence(np.load(found[key][0]["folder"] / "predictions.npz")) + ".", ""]
    return lines


def table_a3(root: Path = RUNS) -> list[str]:
    """Table A3 from the committed ``table_a3.json`` (written by ``collect.py``)."""
    paths = sorted(root.glob("*/*/seed_*/table_a3.json"))
    if not paths:
        return ["### Table A3: not run (Maha on CLINC14-COV, seed 2)", ""]
    data = json.loads(paths[0].read_text(encoding="utf-8"))
    lines = [f"### Table A3 ({benchmark_name(data['build'], data['config'])}, {LABELS[data['method']]}, seed "
             f"{data['seed']})", "",
             f"Up to {data['per_outcome']} correctly (✓) and {data['per_outcome']} incorrectly (✗, with the predicted "
             "intent) classified utterances per intent, drawn at random by `collect.py` (numpy `default_rng` seeded "
             "with the run's seed).", "", "| intent | test | cov_test |", "|---|---|---|"]
    for intent, splits in data["rows"].items():
        cells = ["<br>".join(row["text"].replace("|", "\\|") + (" ✓" if row["correct"] else f" ✗ ({row['predicted']})")
                             for row in splits[split]) or "–" for split in SPLITS]
        lines.append(f"| *{intent}* | " + " | ".join(cells) + " |")
    return lines + [""]


def generate(root: Path = RUNS) -> str:
    found = collect(root)
    if not found:
        raise SystemExit(f"no <build>/<config>/seed_<s>/run.json under {root}")
    lines = ["## What ran (generated)", "", *runs_table(found), "",
             "## Table A1: utterances per intent (generated)", "", *table_a1(root),
             "## Tables beside Table 4 / Table 5 / Table A2 (generated)", "",
             "F1 and Acc in %, mean ± sample std over the seeds. \"drop\" = test − cov_test of the same seed's model, "
             "its mean over seeds, the 95 % t interval of that mean and the verdict of the rule (`dialshift.verdicts`; "
             "the paper's direction is a drop). Paper columns: F1_All / Acc on test → on cov_test, bert-base-uncased "
             "(Tables 4, 5: 10 seeds) and roberta-base (Table A2). The second table of each config takes the in-scope "
             "utterances alone.", ""]
    for key in sorted(found, key=order):
        lines += config_tables(*key, found[key])
    lines += ["## Figures 1, A1, A2 and Table A3 (generated)", "", *figures_section(found), *table_a3(root)]
    lines += ["## Verdicts (generated)", "", *verdict_table(found)]
    return "\n".join(lines) + "\n"


def figure(root: Path = RUNS, out: Path = HERE) -> list[Path]:
    """Figure 1 (Maha, seed 0 of CLINC14-COV) and Figures A1/A2 (``dialshift.plots``), into ``out``."""
    found = collect(root)
    from dialshift.plots import open_world_confusion_figure

    written = []
    jobs = [([("default", "clinc14_cov"), ("nodedup", "clinc14_cov")], FIGURE.name, "figure1")]
    jobs += [(candidates, file, "appendix") for candidates, file in APPENDIX_FIGURES.values()]
    for candidates, file, layout in jobs:
        key = figure_source(found, candidates)
        if key:
            saved = np.load(found[key][0]["folder"] / "predictions.npz")
            written.append(open_world_confusion_figure(saved, [str(name) for name in saved["names"]], out / file,
                                            method="maha", layout=layout))
    return written


def main(argv=None) -> int:
    parser = reports.argument_parser(__doc__)
    args = parser.parse_args(argv)
    status = reports.render(REPORT, generate(), GENERATOR, args.check)
    if not args.check:
        figure()
    return status


if __name__ == "__main__":
    sys.exit(main())
