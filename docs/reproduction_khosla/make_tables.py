#!/usr/bin/env python
"""Every table, verdict and figure of docs/reproduction_khosla.md, from the committed run files under ``runs/``.

    python docs/reproduction_khosla/make_tables.py            # rewrite the generated part of the report
    python docs/reproduction_khosla/make_tables.py --check    # exit 1 when the report is not what this generates

Reads ``runs/<build>/<config>/seed_<s>/`` (written by ``collect.py`` from the runs of ``run_all.sh``):
``predictions.npz`` (gold labels, closed-world argmax, each method's class), from which every F1 and accuracy is
computed; ``run.json`` and ``results/<method>/<split>/results.json`` (cross-checked against the predictions and each
other; AUROC, validation accuracy and options come from them), ``command.json`` (commit, command, CPU seconds; must
name the folder's config, seed and build) and ``sha256.json`` (must list the run's prediction files). Per config it
reads ``label_counts.json`` (Table A1) and ``overlap.json`` (test utterances also in train). A missing, truncated or
inconsistent file is a one-line error naming it (exit 2); the sha256 of every run file is rendered into the report,
so ``--check`` fails when any byte of them changes. Writes the markdown between the two ``make_tables`` markers of
the report, ``summary.json`` beside this script (what ``docs/make_status.py`` renders into the README; ``--check``
compares it too) and, from the first clinc14_cov seed, the figures (not compared by ``--check``: PNG bytes depend on
the matplotlib version).

Per build and config: mean ± sample std over seeds of F1_All, F1_In, F1_Out, Acc on test and cov_test beside the
paper's bert (Tables 4 / 5) and roberta (Table A2) values; the drop test - cov_test with its verdict by
:mod:`dialshift.verdicts` (per-seed paired differences and the paper's value); AUROC; the in-scope rejection table
(closed-world accuracy without rejection against each method's rejections); then every finding's verdict with the
paper's value (table and cell), the power at the paper's effect and the seeds for power 0.8. Any mix of seed counts
per benchmark is fine: each cell states its seeds.
"""

import json
import sys
from pathlib import Path

import numpy as np

from dialshift import reports
from dialshift.across_seeds import mean_sd
from dialshift.errors import DialshiftError
from dialshift.metrics.open_world import open_world_f1
from dialshift.report_inputs import RunFileError, check_digests, field, fingerprint_table, read_npz
from dialshift.reports import remembered_verdict as verdict
from dialshift.run_files import read_json
from dialshift.verdicts import MIN_SEEDS, OUTCOMES, paired_differences

HERE = Path(__file__).resolve().parent
RUNS = HERE / "runs"
REPORT = HERE.parent / "reproduction_khosla.md"
GENERATOR = "docs/reproduction_khosla/make_tables.py"
FIGURE = HERE / "confusion_clinc14_cov_maha_seed0.png"
#: What the README's status paragraph reads (``docs/make_status.py``), written beside the report.
SUMMARY = HERE / "summary.json"
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
    """``{(build, config): {seed: seed_record(...)}}`` of every seed folder ``<build>/<config>/seed_<s>/``."""
    found = {}
    for folder in sorted(path for path in root.glob("*/*/seed_*") if path.is_dir()):
        build, config = folder.parent.parent.name, folder.parent.name
        seed = folder.name.removeprefix("seed_")
        if not seed.isdigit():
            raise RunFileError(folder, "is not named seed_<integer>; rename or remove it")
        found.setdefault((build, config), {})[int(seed)] = seed_record(folder, build, config, int(seed))
    return found


def seed_record(folder: Path, build: str, config: str, seed: int) -> dict:
    """One seed's run files, read and cross-checked: ``{"run", "command", "predictions", "metrics", "folder"}``.

    ``metrics`` (``{method: {split: {f1_all, f1_in, f1_out, accuracy}}}``) are computed from the kept predictions
    (:func:`dialshift.metrics.open_world.open_world_f1`, the in-scope classes as labels, as the scoring pipeline
    does); ``run.json`` and every ``results/<method>/<split>/results.json`` must hold the same values (AUROC and FPR,
    which need the scores that are not committed, must agree between the two), ``command.json`` must name this
    config, seed and build, and ``sha256.json`` must list the run's prediction files. Anything else is a one-line
    :class:`RunFileError` naming the file."""
    run, command = read_json(folder / "run.json"), read_json(folder / "command.json")
    predictions = read_npz(folder / "predictions.npz")
    results = field(run, ("results",), folder / "run.json")
    unknown = sorted(set(results) - set(LABELS))
    if not results or unknown:
        raise RunFileError(folder / "run.json", f"its results name no method or unknown ones {unknown}; restore it")
    names = array(predictions, "names", folder)
    oos = len(names) - 1
    metrics = {}
    for split in SPLITS:
        gold = array(predictions, f"gold/{split}", folder).astype(np.int64)
        for method in results:
            predicted = array(predictions, f"{method}/{split}", folder).astype(np.int64)
            if predicted.shape != gold.shape or predicted.min(initial=0) < 0 or predicted.max(initial=0) > oos:
                raise RunFileError(folder / "predictions.npz", f"{method}/{split} is not one class id in 0..{oos} per "
                                   "gold label; restore it from git or re-run collect.py")
            ours = open_world_f1(predicted, gold, oos_label=oos, labels=np.arange(oos))
            metrics.setdefault(method, {})[split] = ours
            recorded = field(run, ("results", method, split), folder / "run.json")
            for name, value in [*ours.items(), ("instances", len(gold))]:
                theirs = field(recorded, (name,), folder / "run.json")
                if not isinstance(theirs, int | float) or abs(theirs - value) > 1e-9:
                    raise RunFileError(folder / "run.json", f"results.{method}.{split}.{name} is {theirs!r} but the "
                                       f"kept predictions give {value!r}; restore it from git or re-run collect.py")
            path = folder / "results" / method / split / "results.json"
            scored = field(read_json(path), ("results", config), path)
            differ = sorted(name for name in set(recorded) | set(scored) if scored.get(name) != recorded.get(name))
            if differ:
                raise RunFileError(path, f"{', '.join(differ)} differ from run.json's results.{method}.{split}; "
                                   "restore it from git or re-run collect.py")
    check_command(folder, command, build, config, seed)
    check_digests(folder / "sha256.json", [f"predictions/{method}/{split}/{config}.jsonl"
                                           for method in results for split in SPLITS])
    return {"run": run, "command": command, "predictions": predictions, "metrics": metrics, "folder": folder}


def array(arrays: dict, name: str, folder: Path) -> np.ndarray:
    if name not in arrays:
        raise RunFileError(folder / "predictions.npz", f"has no {name!r} array; restore it from git or re-run "
                           "collect.py")
    return arrays[name]


def check_command(folder: Path, command: dict, build: str, config: str, seed: int) -> None:
    """``command.json`` must record this config, seed and build (``--cov-dedup none`` exactly for ``nodedup``) and
    its CPU seconds."""
    path = folder / "command.json"
    arguments = field(command, ("command",), path)
    expected = {"--config": config, "--seed": str(seed)}
    for name, value in expected.items():
        if option(command, name) != value:
            raise RunFileError(path, f"records {name} {option(command, name)} where the folder says {value}; "
                               "restore it from git or re-run collect.py")
    if build in BUILDS and ("--cov-dedup" in field(command, ("build",), path)) != (build == "nodedup"):
        raise RunFileError(path, f"its build command {command['build']} is not the {build!r} build's")
    cpu = field(command, ("cpu_seconds",), path)
    if not isinstance(cpu, int | float) or not np.isfinite(cpu) or cpu < 0 or not isinstance(arguments, list):
        raise RunFileError(path, f"cpu_seconds {cpu!r} is not a finite number of seconds; restore it from git")


def order(key) -> tuple:
    build, config = key
    base, _, rest = config.partition("_cov")
    return (base, list(BUILDS).index(build) if build in BUILDS else 9, FEW.get(rest, 9), config)


def paper_cell(table: dict, config: str, method: str) -> str:
    values = table.get(config, {}).get(method)
    return f"{values[0]:.1f} / {values[1]:.1f} → {values[2]:.1f} / {values[3]:.1f}" if values else "–"


def metric(seeds: dict, method: str, split: str, name: str) -> dict:
    """``{seed: value}`` of one metric of one method and split: computed from the kept predictions, except AUROC and
    FPR (from ``run.json``, cross-checked against ``results.json``)."""
    return {s: (seed["metrics"] if name in seed["metrics"][method][split] else seed["run"]["results"])[method][split][
        name] for s, seed in sorted(seeds.items()) if method in seed["metrics"]}


def drop(seeds: dict, method: str, name: str) -> dict:
    """``{seed: test - cov_test}`` of one metric (a paired difference: the same seed's model on both splits)."""
    test, cov = metric(seeds, method, "test", name), metric(seeds, method, "cov_test", name)
    return {s: test[s] - cov[s] for s in test if s in cov}


def in_scope(seeds: dict) -> dict:
    """``{(row, kind, split): {seed: value}}``: on the in-scope utterances, the closed-world accuracy (argmax, no
    rejection) and, per method, the share rejected and the open-world accuracy; from ``predictions.npz``."""
    rows = {}
    for s, seed in sorted(seeds.items()):
        saved = seed["predictions"]
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


def rule_cell(differences: dict, paper: float | None) -> str:
    """``mean [low, high] outcome`` in points: the rule for the paper's direction (a drop: test above cov_test) and
    the paper's value."""
    v = weigh(list(differences.values()), paper)
    return f"{points(v)} {v.outcome}"


def weigh(differences: list, paper: float | None):
    """The rule on ``differences`` whose claimed direction is ``+`` (a drop; the full config losing more): tested in
    the direction of the paper's own numbers where they give one, and without a paper value where it is 0."""
    return verdict(differences, "-" if paper is not None and paper < 0 else "+", paper or None)


def points(v) -> str:
    """A verdict's mean and 95 % interval in points (``mean (no interval)`` without one)."""
    if v.low is None:
        return f"{100 * v.mean:.1f} (no interval)"
    return f"{100 * v.mean:.1f} [{100 * v.low:.1f}, {100 * v.high:.1f}]"


def config_tables(build: str, config: str, seeds: dict) -> list[str]:
    methods = [m for m in LABELS if any(m in seed["run"]["results"] for seed in seeds.values())]
    lines = [f"### {config}{BUILDS.get(build, f', {build} build')}", "",
             "| method | seeds | test F1_All | F1_In | F1_Out | Acc | cov F1_All | F1_In | F1_Out | Acc "
             "| drop F1_All [the rule's interval] verdict | drop Acc [the rule's interval] verdict "
             "| paper bert F1_All / Acc test → cov | paper roberta (A2) |",
             "|---|---:|" + "---:|" * 10 + "---|---|"]
    for method in methods:
        cells = [mean_sd(metric(seeds, method, split, name).values(), scale=100)
                 for split in SPLITS for name in METRICS]
        cells += [rule_cell(drop(seeds, method, name), paper_drop(config, method, name)[0])
                  for name in ("f1_all", "accuracy")]
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


BENCHMARKS = {"clinc14_cov": "CLINC14-COV", "hwu12_cov": "HWU12-COV"}
COLUMN = {"f1_all": 0, "accuracy": 1}
METRIC_LABELS = {"f1_all": "F1_All", "accuracy": "Acc"}


def paper_drop(config: str, method: str, name: str) -> tuple[float | None, str]:
    """The paper's drop test − cov_test of ``name`` (a fraction) for ``method`` on ``config`` and where it stands:
    bert-base-uncased (Table 4, Table 5 for the few-shot configs), else roberta-base (Table A2); ``(None, "–")``
    when neither reports it."""
    column = COLUMN[name]
    base = config.split("_cov")[0] + "_cov"
    where = f"{BENCHMARKS[base]}{' ' + config.split('_')[-1] if config.endswith('shot') else ''}, {LABELS[method]}"
    bert = "Table 5" if config.endswith("shot") else "Table 4"
    for table, source in ((PAPER_BERT, bert), (PAPER_ROBERTA, "Table A2")):
        values = table.get(config, {}).get(method)
        if values:
            test, cov = values[column], values[column + 2]
            return (test - cov) / 100, (f"{source}, {where}: {METRIC_LABELS[name]} {test:.1f} → {cov:.1f}, "
                                        f"drop {test - cov:.1f}")
    return None, "–"


def paper_few_shot(config: str, shot: str, method: str, name: str) -> tuple[float | None, str]:
    """The paper's full drop minus its few-shot drop (same table: bert's Tables 4 and 5, else Table A2)."""
    for table, source in ((PAPER_BERT, "Tables 4, 5"), (PAPER_ROBERTA, "Table A2")):
        full, few = table.get(config, {}).get(method), table.get(shot, {}).get(method)
        if full and few:
            column = COLUMN[name]
            full_drop, few_drop = full[column] - full[column + 2], few[column] - few[column + 2]
            return (full_drop - few_drop) / 100, (f"{source}, {BENCHMARKS[config]}, {LABELS[method]}: "
                                                  f"{METRIC_LABELS[name]} drop {full_drop:.1f} full, "
                                                  f"{few_drop:.1f} {shot.split('_')[-1]}")
    return None, "–"


def finding_row(text: str, benchmark: str, method: str, v, cited: str) -> str:
    """One verdict row: the finding, where, the paper's value (cited), ours, ours / paper, the outcome, the power to
    detect the paper's effect at our spread and the seeds that would give power 0.8."""
    ratio = f"{v.mean / v.paper:.2f}" if v.paper else "–"
    power = "–" if v.power is None else f"{v.power:.2f}"
    needed = "–" if v.seeds_for_power is None else str(v.seeds_for_power)
    return (f"| {text} | {benchmark} | {method} | {cited} | {points(v)}, {v.seeds} seed{'s' * (v.seeds != 1)} | "
            f"{ratio} | **{v.outcome}** | {power} | {needed} |")


def findings(found: dict) -> list[dict]:
    """Every finding of the paper the runs test, per benchmark and method: ``{"text", "key", "method", "verdict",
    "cited"}``."""
    rows = []
    full = [key for key in sorted(found, key=order) if not key[1].endswith("shot")]
    for name in ("f1_all", "accuracy"):
        for key in full:
            seeds = found[key]
            for m in methods_of(seeds, dcloos=False):
                paper, cited = paper_drop(key[1], m, name)
                rows.append({"text": f"Every method loses {METRIC_LABELS[name]} from test to cov_test (Table 4)",
                             "key": key, "method": m, "cited": cited,
                             "verdict": weigh(list(drop(seeds, m, name).values()), paper)})
    for key in full:
        seeds = found[key]
        for m in methods_of(seeds, dcloos=False):
            rows.append({"text": "Rejection adds to the covariate damage (Figure 1): the open-world in-scope accuracy "
                                 "falls more than the closed-world accuracy", "key": key, "method": m,
                         "cited": "Figure 1 (Maha, seed 0: 2 → 24 *date* errors); no value per method",
                         "verdict": verdict(list(rejection_adds(seeds, m).values()), "+")})
    for build, config in full:
        for shot in (f"{config}_5shot", f"{config}_10shot"):
            if (build, shot) not in found:
                continue
            for name in ("accuracy", "f1_all"):
                seeds, few_seeds = found[(build, config)], found[(build, shot)]
                for m in [m for m in methods_of(few_seeds) if m in methods_of(seeds)]:
                    paper, cited = paper_few_shot(config, shot, m, name)
                    rows.append({"text": f"Few-shot loses less {METRIC_LABELS[name]} than full (Tables 4, 5): the "
                                         f"full config's drop minus {shot}'s, same seed", "key": (build, config),
                                 "method": m, "cited": cited,
                                 "verdict": weigh(paired_differences(drop(seeds, m, name), drop(few_seeds, m, name)),
                                                  paper)})
    return rows


def methods_of(seeds: dict, dcloos: bool = True) -> list[str]:
    return [m for m in LABELS if (dcloos or m != "dcloos") and any(m in seed["metrics"] for seed in seeds.values())]


def verdict_table(found: dict, rows: list[dict]) -> list[str]:
    """Every finding's verdict by the rule, one row per benchmark and method, then what was not run."""
    lines = ["| finding (paper) | benchmark | method | the paper's value | ours: mean [95 % interval], seeds (points) "
             "| ours / paper | verdict | power at the paper's effect | seeds for power 0.8 |",
             "|---|---|---|---|---|---:|---|---:|---:|"]
    lines += [finding_row(row["text"], benchmark_name(*row["key"]), LABELS[row["method"]], row["verdict"],
                          row["cited"]) for row in rows]
    for build, config in [key for key in sorted(found, key=order) if not key[1].endswith("shot")]:
        if not any((build, f"{config}{few}") in found for few in ("_5shot", "_10shot")):
            lines.append(f"| Few-shot loses less than full (Tables 4, 5): the full config's drop minus the few-shot "
                         f"config's, per seed | {benchmark_name(build, config)} | – | Tables 4, 5 | not run (no "
                         f"few-shot seeds; `run_all.sh OUT 0 9 {build}:{config}_5shot:8 {build}:{config}_10shot:8` "
                         "runs them) | – | – | – | – |")
    if not any("dcloos" in seed["metrics"] for seeds in found.values() for seed in seeds.values()):
        lines.append("| Pseudo k+1 methods drop most (DCLOOS, Table 4) | both | DCLOOS | Table 4 | not run (DCLOOS "
                     "seeds await a rerun) | – | – | – | – |")
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
        counted = {build: read_json(root / build / config / "label_counts.json")
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
                  "most once rejection is added: " + collapse_sentence(found[key][0]["predictions"]) + ".", ""]
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
                  "right: " + collapse_sentence(found[key][0]["predictions"]) + ".", ""]
    return lines


def table_a3(root: Path = RUNS) -> list[str]:
    """Table A3 from the committed ``table_a3.json`` (written by ``collect.py``)."""
    paths = sorted(root.glob("*/*/seed_*/table_a3.json"))
    if not paths:
        return ["### Table A3: not run (Maha on CLINC14-COV, seed 2)", ""]
    data = read_json(paths[0])
    for key in ("build", "config", "method", "seed", "per_outcome", "rows"):
        field(data, (key,), paths[0])
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




def outcome_counts(verdicts) -> dict:
    """``{outcome: count}`` in :data:`OUTCOMES` order, outcomes with no verdict left out."""
    counts = {}
    for v in verdicts:
        counts[v.outcome] = counts.get(v.outcome, 0) + 1
    return {o: counts[o] for o in [*OUTCOMES, *sorted(set(counts) - set(OUTCOMES))] if o in counts}


def counts_text(counts: dict) -> str:
    return ", ".join(f"{n} {outcome}" for outcome, n in counts.items())


def benchmark_label(build: str, config: str) -> str:
    """The benchmark as the summaries name it: CLINC14-COV, HWU12-COV on the paper's construction or de-duplicated."""
    base = config.split("_cov")[0] + "_cov"
    name = BENCHMARKS.get(base, config) + config.removeprefix(base)
    if config.startswith("hwu12"):
        return name + (" on the paper's construction (`--cov-dedup none`)" if build == "nodedup"
                       else " de-duplicated (default build)")
    return name + ("" if build == "default" else f" ({build} build)")


def closed_world(seeds: dict) -> dict:
    """Where a benchmark's drop comes from, on the in-scope utterances: the closed-world accuracy (argmax, no
    rejection) on test and cov_test, the rule's interval of its per-seed change under the shift and its movement
    ("rises", "falls", "does not move measurably", or undecided without an interval), and per method the fall of
    the open-world accuracy and the change of the share rejected (means over seeds)."""
    rows = in_scope(seeds)
    closed = [rows[("closed-world (argmax)", "accuracy", split)] for split in SPLITS]
    change = verdict(paired_differences(closed[1], closed[0]), "+")
    if change.low is None:
        movement = "moves by an amount the rule does not decide"
    elif change.low > 0:
        movement = "rises"
    elif change.high < 0:
        movement = "falls"
    else:
        movement = "does not move measurably"
    methods = methods_of(seeds, dcloos=False)
    return {"test": float(np.mean(list(closed[0].values()))), "cov_test": float(np.mean(list(closed[1].values()))),
            "change": change, "movement": movement,
            "fall": {m: float(np.mean(list(rows[(LABELS[m], "accuracy", "test")].values()))
                              - np.mean(list(rows[(LABELS[m], "accuracy", "cov_test")].values()))) for m in methods},
            "rejected": {m: float(np.mean(list(rows[(LABELS[m], "rejected", "cov_test")].values()))
                                  - np.mean(list(rows[(LABELS[m], "rejected", "test")].values()))) for m in methods}}


def reading_of(c: dict) -> str:
    """What the closed world's movement says about the open-world drop."""
    if c["change"].low is None:
        return (f"with no interval below {MIN_SEEDS} seeds, how much of the open-world drop is confusion between "
                "intents is not decided")
    if c["movement"] == "falls":
        return "so part of the open-world drop is confusion between intents, the rest extra rejection"
    return "so the open-world drop is extra rejection of in-scope utterances, not confusion between intents"


def closed_world_sentence(key: tuple, seeds: dict) -> str:
    """:func:`closed_world` as the report's summary states it."""
    c = closed_world(seeds)
    fall, extra = c["fall"], c["rejected"]
    low, high = min(fall, key=fall.get), max(fall, key=fall.get)
    return (f"{benchmark_label(*key)}: closed-world accuracy on the in-scope utterances (argmax, no rejection) "
            f"{c['movement']} under the shift: {100 * c['test']:.1f} → {100 * c['cov_test']:.1f} % "
            f"({change_text(c['change'])}), while the methods' open-world "
            f"in-scope accuracy falls by {100 * fall[low]:.1f} ({LABELS[low]}) to {100 * fall[high]:.1f} "
            f"({LABELS[high]}) points and the share of in-scope utterances they reject changes by "
            f"{100 * min(extra.values()):+.1f} to {100 * max(extra.values()):+.1f} points: {reading_of(c)}.")


def change_text(v) -> str:
    interval = (f" [{100 * v.low:+.2f}, {100 * v.high:+.2f}]" if v.low is not None
                else f", no interval below {MIN_SEEDS} seeds")
    return f"change per seed {100 * v.mean:+.2f} points{interval}, {v.seeds} seeds"


def status_notes(root: Path, found: dict) -> list[str]:
    """The audit's findings on the paper's HWU12-COV construction, short, for the README's status paragraph."""
    key = ("nodedup", "hwu12_cov")
    if key not in found:
        return []
    c = closed_world(found[key])
    notes = [f"on {benchmark_label(*key)} closed-world in-scope accuracy {c['movement']} under the shift "
             f"({100 * c['test']:.1f} → {100 * c['cov_test']:.1f} %), {reading_of(c)}"]
    path = root / key[0] / key[1] / "overlap.json"
    if path.is_file():
        test = field(read_json(path), ("splits", "test"), path)
        notes.append(f"{100 * test['in_train'] / max(test['in_scope'], 1):.1f} % of that construction's in-scope "
                     "test utterances are also training utterances")
    return notes


def overlap_sentence(root: Path, found: dict) -> str | None:
    """The share of in-scope test utterances whose exact text is also a training utterance, per full benchmark,
    from the committed ``overlap.json`` (``collect.py`` computes it from the build)."""
    parts = []
    for build, config in [key for key in sorted(found, key=order) if not key[1].endswith("shot")]:
        path = root / build / config / "overlap.json"
        if not path.is_file():
            continue
        data = read_json(path)
        cells = []
        for split in SPLITS:
            counted = field(data, ("splits", split), path)
            cells.append(f"{split} {counted['in_train']} of {counted['in_scope']} "
                         f"({100 * counted['in_train'] / max(counted['in_scope'], 1):.1f} %)")
        parts.append(f"{benchmark_label(build, config)}: {', '.join(cells)}")
    if not parts:
        return None
    return ("In-scope utterances whose exact text is also in the training split (`overlap.json`, computed by "
            "`collect.py` from the build the runs read): " + "; ".join(parts) + ".")


def benchmark_summaries(found: dict, rows: list[dict]) -> list[dict]:
    """Per full benchmark: its seeds, every verdict's outcome counted, and how our drops compare with the paper's."""
    summaries = []
    for key in [key for key in sorted(found, key=order) if not key[1].endswith("shot")]:
        mine = [row for row in rows if row["key"] == key]
        drops = [row["verdict"] for row in mine if row["text"].startswith("Every method") and row["verdict"].paper]
        ratios = [v.mean / v.paper for v in drops]
        inside = sum(v.low is not None and v.low <= v.paper <= v.high for v in drops)
        summaries.append({
            "name": benchmark_label(*key), "build": key[0], "config": key[1],
            "seeds": sorted({v.seeds for v in (row["verdict"] for row in mine)}),
            "cells": len(mine), "outcomes": outcome_counts(row["verdict"] for row in mine),
            "drop_cells": len(drops), "drop_ratio": [round(min(ratios), 2), round(max(ratios), 2)] if ratios else None,
            "paper_inside": inside, "intervals": sum(v.low is not None for v in drops),
            "needed": [row["verdict"].seeds_for_power for row in mine if row["verdict"].paper]})
    return summaries


def power_text(needed: list) -> str:
    """The seeds for power 0.8 over the cells with a paper value, as the summaries state them."""
    known = sorted(n for n in needed if n is not None)
    if not known:
        return "no cell with a paper value has a spread to size seeds from"
    beyond = len(needed) - len(known)
    span = f"{known[0]}" if known[0] == known[-1] else f"{known[0]} to {known[-1]} (median {int(np.median(known))})"
    return (f"seeds for power 0.8 at the paper's value: {span} over {len(known)} cells"
            + (f", beyond 1000 or not computable for {beyond}" if beyond else ""))


def summary_section(root: Path, found: dict, rows: list[dict], benchmarks: list[dict]) -> list[str]:
    """The report's summary: per benchmark the verdicts counted by outcome and the drops against the paper's, what
    the in-scope utterances show and how many test utterances are also training utterances."""
    lines = []
    for b in benchmarks:
        ratio = (f"; our drops are {b['drop_ratio'][0]:.2f} to {b['drop_ratio'][1]:.2f} x the paper's"
                 + (f", whose value lies inside our interval in {b['paper_inside']} of {b['drop_cells']} drop cells"
                    if b["intervals"] else f" (no interval below {MIN_SEEDS} seeds)")) if b["drop_ratio"] else ""
        ratio += f"; {power_text(b['needed'])}"
        lines.append(f"- **{b['name']}** ({' or '.join(map(str, b['seeds']))} seeds): {b['cells']} verdicts, "
                     f"{counts_text(b['outcomes'])}{ratio}.")
    lines += ["", *[f"- {closed_world_sentence(key, found[key])}" for key in sorted(found, key=order)
                    if not key[1].endswith("shot")]]
    overlap = overlap_sentence(root, found)
    return lines + ([f"- {overlap}"] if overlap else []) + [""]


def cost(found: dict) -> dict:
    """Seed-runs and CPU minutes of the committed runs (from each ``command.json``)."""
    commands = [seed["command"] for seeds in found.values() for seed in seeds.values()]
    return {"runs": len(commands), "cpu_minutes": round(sum(c["cpu_seconds"] for c in commands) / 60),
            "threads": " or ".join(sorted({str(c.get("threads", "?")) for c in commands})),
            "per_benchmark": {benchmark_label(*key): {"runs": len(seeds), "cpu_minutes": round(
                sum(seed["command"]["cpu_seconds"] for seed in seeds.values()) / 60)}
                for key, seeds in sorted(found.items(), key=lambda item: order(item[0]))}}


def build(root: Path = RUNS) -> tuple[str, dict]:
    """The generated part of the report and the summary the README's status paragraph is rendered from."""
    found = collect(root)
    if not found:
        raise RunFileError(root, "holds no <build>/<config>/seed_<s>/ run folder; run collect.py")
    rows = findings(found)
    benchmarks = benchmark_summaries(found, rows)
    summary = {"paper": "Khosla & Gangadharaiah (2022)", "report": "docs/reproduction_khosla.md",
               "generator": GENERATOR, "cells": len(rows), "outcomes": outcome_counts(row["verdict"] for row in rows),
               "groups": [{key: b[key] for key in ("name", "seeds", "cells", "outcomes")}
                          | {"note": (f"drops {b['drop_ratio'][0]:.2f} to {b['drop_ratio'][1]:.2f} x the paper's"
                                      if b["drop_ratio"] else None)} for b in benchmarks],
               "notes": status_notes(root, found),
               "cost": cost(found)}
    groups = {benchmark_name(*key): [root / key[0] / key[1]] for key in sorted(found, key=order)}
    lines = ["## Summary (generated)", "",
             f"Every verdict below is the rule of `dialshift.verdicts` applied to the per-seed paired differences "
             f"with the paper's value: {len(rows)} verdicts, {counts_text(summary['outcomes'])}.", "",
             *summary_section(root, found, rows, benchmarks),
             "## What ran (generated)", "", *runs_table(found), "",
             f"In all: {summary['cost']['runs']} seed-runs, {summary['cost']['cpu_minutes']} CPU minutes. Run files "
             "(every file under `runs/<build>/<config>/`; `--check` fails when any changes):", "",
             *fingerprint_table(groups, root), "",
             "## Table A1: utterances per intent (generated)", "", *table_a1(root),
             "## Tables beside Table 4 / Table 5 / Table A2 (generated)", "",
             "F1 and Acc in %, mean ± sample std over the seeds, computed from the kept predictions "
             "(`predictions.npz`; `run.json` and `results.json` must agree with them). \"drop\" = test − cov_test of "
             "the same seed's model, its mean over seeds, the 95 % interval of that mean and the outcome of the rule "
             "(`dialshift.verdicts`; the paper's direction is a drop, the paper's value is its drop in the paper "
             "columns). Paper columns: F1_All / Acc on test → on cov_test, bert-base-uncased (Tables 4, 5: 10 seeds) "
             "and roberta-base (Table A2; the paper's value where Table 4 has no row). The second table of each "
             "config takes the in-scope utterances alone.", ""]
    for key in sorted(found, key=order):
        lines += config_tables(*key, found[key])
    lines += ["## Figures 1, A1, A2 and Table A3 (generated)", "", *figures_section(found), *table_a3(root)]
    lines += ["## Verdicts (generated)", "",
              "Per finding, benchmark and method: the paper's value (table and cell), our per-seed mean with its 95 % "
              "interval, their ratio, the rule's outcome, the power to detect the paper's effect at our spread and "
              "the seeds that would give power 0.8 (`dialshift.verdicts`).", "", *verdict_table(found, rows)]
    return "\n".join(lines) + "\n", summary


def generate(root: Path = RUNS) -> str:
    """The generated part of the report (:func:`build`)."""
    return build(root)[0]


def figure(root: Path = RUNS, out: Path = HERE, found: dict | None = None) -> list[Path]:
    """Figure 1 (Maha, seed 0 of CLINC14-COV) and Figures A1/A2 (``dialshift.plots``), into ``out``."""
    found = collect(root) if found is None else found
    from dialshift.plots import open_world_confusion_figure

    written = []
    jobs = [([("default", "clinc14_cov"), ("nodedup", "clinc14_cov")], FIGURE.name, "figure1")]
    jobs += [(candidates, file, "appendix") for candidates, file in APPENDIX_FIGURES.values()]
    for candidates, file, layout in jobs:
        key = figure_source(found, candidates)
        if key:
            saved = found[key][0]["predictions"]
            written.append(open_world_confusion_figure(saved, [str(name) for name in saved["names"]], out / file,
                                            method="maha", layout=layout))
    return written


def main(argv=None) -> int:
    parser = reports.argument_parser(__doc__)
    args = parser.parse_args(argv)
    try:
        generated, summary = build(RUNS)
    except DialshiftError as error:
        print(f"make_tables.py: error: {error}", file=sys.stderr)
        return 2
    status = reports.render(REPORT, generated, GENERATOR, args.check)
    if not (args.check and status):  # one line for a check that fails
        status = reports.write_or_check(SUMMARY, json.dumps(summary, indent=1, ensure_ascii=False) + "\n",
                                        args.check, GENERATOR)
    if not args.check:
        figure(RUNS)
    return status


if __name__ == "__main__":
    sys.exit(main())
