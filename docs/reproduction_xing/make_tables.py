#!/usr/bin/env python
"""Tables 3-6 of Xing & Gulla (2022) beside ours, the unigram baseline and the verdicts, in docs/reproduction_xing.md.

    python docs/reproduction_xing/make_tables.py                    # render the committed files into the report
    python docs/reproduction_xing/make_tables.py --check            # exit 1 when the report is not what this renders
    python docs/reproduction_xing/make_tables.py --unigram DATASET  # recompute unigram.json from a distracting build

Reads the run files under ``runs/<variant>/seed_<s>/`` (``collect.py`` copies them from ``run_all.sh``'s folder:
``run.json``, ``command.json``, ``original.json``, ``results.json``) and ``unigram.json`` (the perplexity of a
context-free add-one unigram model on the same test responses, computed by ``--unigram`` with
:func:`dialshift.models.seq2seq.unigram_perplexity` on the runs' own training subsample, vocabulary and test rows),
and renders between the two ``make_tables`` markers of the report: Table 3 (perplexity, History AS and DAS ratios,
mean over seeds, the paper's row above ours), the margin of every run over the unigram, Tables 4-6 (the distractors'
and the History's average AS, and the first / last History utterance's AS), every finding's verdict by
:mod:`dialshift.verdicts` (per-seed paired differences) and what the runs cost; and the sentences with a number in
the prose above it, between the ``make_tables.py (intro)`` and ``(setting)`` markers (:func:`prose_blocks`).
"""

import json
import sys
from pathlib import Path

import numpy as np

from dialshift import reports
from dialshift.across_seeds import MISSING, spread
from dialshift.errors import DialshiftError
from dialshift.report_inputs import RunFileError, check_digests, field, fingerprint, run_files
from dialshift.reports import remembered_verdict as verdict
from dialshift.run_files import read_json
from dialshift.verdicts import MIN_SEEDS, OUTCOMES, paired_differences

HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "reproduction_xing.md"
GENERATOR = "docs/reproduction_xing/make_tables.py"
RUNS = HERE / "runs"
UNIGRAM = HERE / "unigram.json"
#: What the README's status paragraph reads (``docs/make_status.py``), written beside the report.
SUMMARY = HERE / "summary.json"
#: A model "beats the unigram by a clear margin" when its test perplexity is at most this share of the unigram's.
MARGIN = 0.8
SETS = ("random_0.5", "random_0.7", "random_1.0", "frequent_begin", "frequent_middle", "frequent_end", "rare_begin",
        "rare_middle", "rare_end")
RANDOM, FREQUENT, RARE = SETS[:3], SETS[3:6], SETS[6:]
NAMES = {"non_hier": "Non-hier", "static": "Static", "static_ui": "StaticUI", "dynamic": "Dynamic",
         "dynamic_ui": "DynamicUI", "static_ui_no_loss": "Non-atten-loss StaticUI"}
STRUCTURES = tuple(NAMES)[:5]
PROBABILITIES = ("0.0", "0.5", "0.7", "1.0")
# Table 3 of the paper, its 23 variants: perplexity, History average AS (%), then the DAS ratio of SETS.
PAPER = {
    "non_hier@0.0": (43.2, 91.3, 0.93, 0.93, 0.93, 0.75, 0.80, 0.84, 0.80, 0.92, 1.01),
    "static@0.0": (44.1, 61.4, 0.82, 0.82, 0.79, 0.37, 0.80, 1.31, 0.37, 0.77, 1.21),
    "static_ui@0.0": (44.6, 57.5, 0.79, 0.76, 0.76, 0.32, 0.75, 1.32, 0.30, 0.75, 1.22),
    "dynamic@0.0": (45.4, 81.4, 0.89, 0.89, 0.88, 0.65, 0.86, 1.02, 0.66, 0.89, 1.06),
    "dynamic_ui@0.0": (44.7, 91.6, 0.94, 0.94, 0.93, 0.72, 0.84, 0.86, 0.73, 0.93, 0.97),
    "non_hier@0.5": (43.4, 87.2, 0.84, 0.83, 0.81, 0.63, 0.74, 0.76, 0.69, 0.81, 0.86),
    "static@0.5": (44.5, 66.5, 0.70, 0.69, 0.67, 0.42, 0.78, 1.12, 0.34, 0.71, 0.99),
    "static_ui@0.5": (44.3, 47.7, 0.74, 0.74, 0.70, 0.39, 0.71, 1.08, 0.40, 0.69, 0.96),
    "dynamic@0.5": (44.6, 81.9, 0.79, 0.78, 0.77, 0.64, 0.74, 0.84, 0.61, 0.77, 0.85),
    "dynamic_ui@0.5": (43.9, 86.7, 0.82, 0.81, 0.80, 0.60, 0.84, 0.87, 0.61, 0.80, 0.83),
    "static_ui_no_loss@0.5": (44.7, 71.1, 0.73, 0.73, 0.72, 0.39, 0.68, 0.93, 0.40, 0.80, 1.11),
    "non_hier@0.7": (43.2, 86.9, 0.84, 0.82, 0.80, 0.72, 0.82, 0.82, 0.71, 0.85, 0.87),
    "static@0.7": (44.0, 57.6, 0.73, 0.72, 0.69, 0.40, 0.70, 1.08, 0.41, 0.70, 0.98),
    "static_ui@0.7": (44.9, 43.7, 0.67, 0.67, 0.65, 0.36, 0.66, 1.02, 0.36, 0.70, 0.99),
    "dynamic@0.7": (44.3, 82.0, 0.76, 0.75, 0.73, 0.58, 0.71, 0.86, 0.58, 0.73, 0.83),
    "dynamic_ui@0.7": (44.8, 85.3, 0.93, 0.93, 0.93, 0.45, 0.78, 0.80, 0.60, 0.80, 0.81),
    "static_ui_no_loss@0.7": (44.1, 55.4, 0.72, 0.70, 0.69, 0.45, 0.70, 0.98, 0.43, 0.73, 0.97),
    "non_hier@1.0": (47.3, 95.9, 0.91, 0.90, 0.90, 0.84, 0.86, 0.85, 0.85, 0.87, 0.88),
    "static@1.0": (44.0, 65.4, 0.70, 0.70, 0.68, 0.49, 0.74, 1.08, 0.46, 0.71, 0.88),
    "static_ui@1.0": (49.6, 73.5, 0.96, 0.95, 0.94, 0.66, 0.86, 1.53, 0.21, 0.86, 1.50),
    "dynamic@1.0": (44.7, 88.8, 0.79, 0.78, 0.77, 0.63, 0.75, 0.82, 0.65, 0.77, 0.82),
    "dynamic_ui@1.0": (45.2, 90.2, 0.87, 0.86, 0.85, 0.73, 0.81, 0.83, 0.75, 0.88, 0.88),
    "static_ui_no_loss@1.0": (44.1, 76.5, 0.72, 0.71, 0.69, 0.49, 0.74, 0.98, 0.49, 0.77, 0.98),
}


def label(variant: str) -> str:
    structure, probability = variant.split("@")
    return f"{NAMES[structure]} {probability}"


SET_FIELDS = ("das_ratio", "das_ratio_of_means", "mean_as_distractor", "mean_as_history_distracted", "perplexity")


def collect(root: Path | None = None) -> dict:
    """``{variant: {seed: {"run", "command", "original", "results", "folder"}}}`` of every committed run under
    ``root`` (default ``RUNS``; ``results``: the ``results`` part of its ``results.json``, keyed by the set name
    without ``ubuntu_distract_``), each checked by :func:`check_run`."""
    found = {}
    for folder in sorted(path for path in (root or RUNS).glob("*/seed_*") if path.is_dir()):
        structure, _, probability = folder.parent.name.rpartition("_p")
        seed = folder.name.removeprefix("seed_")
        if structure not in NAMES or probability not in PROBABILITIES or not seed.isdigit():
            raise RunFileError(folder, "is not <structure>_p<probability>/seed_<integer> of a variant of Table 3; "
                               "rename or remove it")
        read = {name: read_json(folder / f"{name}.json") for name in ("run", "command", "original", "results")}
        check_run(folder, read, structure, probability, int(seed))
        read["results"] = {key.removeprefix("ubuntu_distract_"): value
                           for key, value in read["results"]["results"].items()}
        found.setdefault(f"{structure}@{probability}", {})[int(seed)] = read | {"folder": folder}
    return found


def check_run(folder: Path, read: dict, structure: str, probability: str, seed: int) -> None:
    """The run files of one seed must agree with its folder and with each other: ``command.json`` and ``run.json``
    name its structure, training probability, attention loss and seed; ``results.json`` scores the nine sets with
    every field the tables read, each set's perplexity equal to ``original.json``'s; ``sha256.json`` lists the ten
    prediction files. A :class:`RunFileError` naming the file otherwise."""
    command, run = read["command"], read["run"]
    base, no_loss = structure.removesuffix("_no_loss"), structure.endswith("_no_loss")
    arguments = field(command, ("command",), folder / "command.json")
    expected = {"--seed": str(seed), "--structure": base, "--train-probability": probability}
    for name, value in expected.items():
        given = arguments[arguments.index(name) + 1] if name in arguments[:-1] else None
        if given != value:
            raise RunFileError(folder / "command.json", f"records {name} {given} where the folder says {value}; "
                               "restore it from git or re-run collect.py")
    if ("--no-attention-loss" in arguments) != no_loss:
        raise RunFileError(folder / "command.json", f"--no-attention-loss {'missing' if no_loss else 'present'} for "
                           f"{structure}; restore it from git or re-run collect.py")
    for name in ("cpu_seconds", "wall_seconds"):
        value = field(command, (name,), folder / "command.json")
        if not isinstance(value, int | float) or not np.isfinite(value) or value < 0:
            raise RunFileError(folder / "command.json", f"{name} {value!r} is not a number of seconds; restore it")
    recorded = {"seed": field(run, ("training", "seed"), folder / "run.json"),
                "structure": field(run, ("training", "structure"), folder / "run.json"),
                "train_probability": field(run, ("training", "train_probability"), folder / "run.json"),
                "no_attention_loss": field(run, ("training", "no_attention_loss"), folder / "run.json")}
    if recorded != {"seed": seed, "structure": base, "train_probability": float(probability),
                    "no_attention_loss": no_loss}:
        raise RunFileError(folder / "run.json", f"its training settings {recorded} are not those of the folder "
                           f"({structure} at {probability}, seed {seed}); restore it from git or re-run collect.py")
    field(read["original"], ("ubuntu", "perplexity"), folder / "original.json")
    field(read["original"], ("ubuntu", "mean_as_history"), folder / "original.json")
    for name in SETS:
        config = f"ubuntu_distract_{name}"
        scored = field(read["results"], ("results", config), folder / "results.json")
        for key in SET_FIELDS + ({"begin": ("as_first_history",), "end": ("as_last_history",)}
                                 .get(name.rsplit("_", 1)[-1], ())):
            value = field(scored, (key,), folder / "results.json")
            if not isinstance(value, int | float) or np.isnan(value):
                raise RunFileError(folder / "results.json", f"results.{config}.{key} is {value!r}, not a number; "
                                   "restore it from git or re-run collect.py")
        if scored["perplexity"] != field(read["original"], (config, "perplexity"), folder / "original.json"):
            raise RunFileError(folder / "results.json", f"results.{config}.perplexity differs from original.json's; "
                               "restore them from git or re-run collect.py")
    check_digests(folder / "sha256.json", ["ubuntu.jsonl", *(f"ubuntu_distract_{name}.jsonl" for name in SETS)])


def per_seed(seeds: dict, value) -> dict:
    """``{seed: value(run)}``."""
    return {seed: value(run) for seed, run in sorted(seeds.items())}


def das(seeds: dict, name: str, metric: str = "das_ratio") -> dict:
    return per_seed(seeds, lambda run: run["results"][name][metric])


def mean(values: dict, scale: float = 1.0, digits: int = 2) -> str:
    stat = spread(values.values())
    return MISSING if stat["mean"] is None else f"{scale * stat['mean']:.{digits}f}"


def table3(found: dict, unigram: dict) -> list[str]:
    lines = ["| Prob | Structure | source | seeds | Perp. | Avg. (%) | "
             + " | ".join(s.replace("_", " ") for s in SETS) + " |",
             "|---|---|---|---:|---:|---:|" + "---:|" * len(SETS)]
    for variant, paper in PAPER.items():
        structure, probability = variant.split("@")
        lines.append(f"| {probability} | {NAMES[structure]} | paper | – | {paper[0]:.1f} | {paper[1]:.1f} | "
                     + " | ".join(f"{v:.2f}" for v in paper[2:]) + " |")
        seeds = found.get(variant, {})
        if not seeds:
            lines.append(f"| {probability} | {NAMES[structure]} | ours | 0 | not run |" + " |" * (len(SETS) + 1))
            continue
        original = per_seed(seeds, lambda run: run["original"]["ubuntu"])
        lines.append(f"| {probability} | {NAMES[structure]} | ours | {len(seeds)} | "
                     f"{mean({s: o['perplexity'] for s, o in original.items()}, digits=1)} | "
                     f"{mean({s: o['mean_as_history'] for s, o in original.items()}, 100, 1)} | "
                     + " | ".join(mean(das(seeds, s)) for s in SETS) + " |")
    lines.append(f"| – | add-one unigram (no context) | ours | – | {unigram['perplexity']:.1f} | – | "
                 + " | ".join("–" for _ in SETS) + " |")
    return lines


def margin_sentence(found: dict, unigram: dict) -> str:
    ratios = [run["original"]["ubuntu"]["perplexity"] / unigram["perplexity"]
              for seeds in found.values() for run in seeds.values()]
    held = sum(r <= MARGIN for r in ratios)
    return (f"**Margin over the unigram** (the rule: a model's test perplexity at most {MARGIN} x the unigram's on "
            f"the same test responses): {held} of {len(ratios)} runs meet it; their perplexity is "
            f"{min(ratios):.2f} to {max(ratios):.2f} x the unigram's {unigram['perplexity']:.1f}.")


def ratio_of_means_table(found: dict) -> list[str]:
    """Per variant and set, the ratio of the mean distractor AS to the mean History AS (means over seeds)."""
    lines = ["| Prob | Structure | seeds | " + " | ".join(s.replace("_", " ") for s in SETS) + " |",
             "|---|---|---:|" + "---:|" * len(SETS)]
    for variant in PAPER:
        seeds = found.get(variant)
        if seeds:
            structure, probability = variant.split("@")
            lines.append(f"| {probability} | {NAMES[structure]} | {len(seeds)} | "
                         + " | ".join(mean(das(seeds, s, "das_ratio_of_means")) for s in SETS) + " |")
    return lines


def starved_sentence(found: dict) -> str:
    """How many dialogues the DAS ratios leave out because their History gets no attention (ratio +inf)."""
    shares = [values.get("history_starved", 0.0) for seeds in found.values() for run in seeds.values()
              for values in run["results"].values()]
    return (f"History-starved dialogues (History AS 0, ratio +inf, left out of the DAS ratio and counted by the "
            f"scoring task): at most {100 * max(shares):.1f} % of a set's dialogues in any run.")


def as_table(found: dict, sets, first_last: bool) -> list[str]:
    """Tables 4-6: per set the DAS ratio, the distractors' and the History's average AS (%), and for the begin /
    end sets the AS (%) of the first / last original History utterance; means over seeds."""
    head, rule = ["Prob", "Structure", "seeds"], ["---", "---", "---:"]
    for name in sets:
        short = name.split("_")[-1] if not name.startswith("random") else name.replace("_", " ")
        extra = {"begin": ["1st"], "end": ["Last"]}.get(short, []) if first_last else []
        for column in ["DAS ratio", "DAS", "Avg.", *extra]:
            head.append(f"{short}: {column}")
            rule.append("---:")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(rule) + "|"]
    for variant in PAPER:
        seeds = found.get(variant)
        if not seeds:
            continue
        structure, probability = variant.split("@")
        cells = [probability, NAMES[structure], str(len(seeds))]
        for name in sets:
            cells += [mean(das(seeds, name)), mean(das(seeds, name, "mean_as_distractor"), 100, 1),
                      mean(das(seeds, name, "mean_as_history_distracted"), 100, 1)]
            if first_last and name.endswith("_begin"):
                cells.append(mean(das(seeds, name, "as_first_history"), 100, 1))
            if first_last and name.endswith("_end"):
                cells.append(mean(das(seeds, name, "as_last_history"), 100, 1))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


ONE_SEED, NOT_RUN = "one seed: no verdict", "not run"
#: The mark of a cell whose paper numbers go against the direction the paper's text claims.
AGAINST = "†"


def test_cell(first: dict, second: dict, paper: float) -> dict:
    """The rule on ``first - second`` (per seed, paired) with the paper's value ``paper`` (its Table 3 numbers) in the
    direction of the paper's numbers (``+``, its text's, where they show no difference): ``{"outcome", "text",
    "against", "verdict"}``; ``against`` when the paper's numbers do not show its text's claim that ``first`` exceeds
    ``second`` (a difference of 0 or below). One seed gives no verdict, only its value."""
    shared = sorted(set(first) & set(second))
    against = paper <= 0
    mark = AGAINST if against else ""
    if not shared:
        return {"outcome": NOT_RUN, "text": f"{mark}not run", "against": against, "verdict": None}
    differences = paired_differences(first, second)
    if len(differences) == 1:
        return {"outcome": ONE_SEED, "against": against, "verdict": None,
                "text": f"{mark}{ONE_SEED} ({differences[0]:+.3f}, 1 seed; paper {paper:+.2f})"}
    v = verdict(differences, "-" if paper < 0 else "+", paper or None)  # a paper value of 0 gives no effect size
    interval = f" [{v.low:+.3f}, {v.high:+.3f}]" if v.low is not None else " (no interval)"
    power = "" if v.power is None else f"; power {v.power:.2f}"
    needed = "" if v.seeds_for_power is None else f", {v.seeds_for_power} seeds for 0.8"
    return {"outcome": v.outcome, "against": against, "verdict": v,
            "text": f"{mark}{v.outcome}: {v.mean:+.3f}{interval}, {v.seeds} seeds; paper {paper:+.2f}{power}{needed}"}


def paper_das(variant: str, name: str) -> float:
    return PAPER[variant][2 + SETS.index(name)]


# The findings of §5 that compare two variants' DAS ratio: (finding, first, second); each claims first > second.
COMPARISONS = [
    *((f"The attention loss at training probability 0.7 lowers the DAS ratio ({NAMES[s]})", f"{s}@0.0", f"{s}@0.7")
      for s in STRUCTURES),
    *((f"The attention loss at training probability 0.5 lowers the DAS ratio ({NAMES[s]})", f"{s}@0.0", f"{s}@0.5")
      for s in STRUCTURES),
    *((f"Training probability 1.0 is worse than 0.7 ({NAMES[s]})", f"{s}@1.0", f"{s}@0.7") for s in STRUCTURES),
    ("The gain comes from the loss, not from the inserted distractions (StaticUI at 0.7)", "static_ui_no_loss@0.7",
     "static_ui@0.7"),
    ("Distractions without the loss still beat the baseline (Non-atten-loss StaticUI 0.7 against StaticUI 0.0)",
     "static_ui@0.0", "static_ui_no_loss@0.7"),
]


def comparison_table(found: dict) -> tuple[list[str], list[dict]]:
    lines = ["| finding (paper) | first − second | " + " | ".join(s.replace("_", " ") for s in SETS) + " |",
             "|---|---|" + "---|" * len(SETS)]
    cells = []
    for text, first, second in COMPARISONS:
        row = []
        for name in SETS:
            cell = test_cell(das(found.get(first, {}), name), das(found.get(second, {}), name),
                             round(paper_das(first, name) - paper_das(second, name), 2))
            cells.append(cell | {"structures": {first.split("@")[0], second.split("@")[0]}, "set": name,
                                 "variants": (first, second)})
            row.append(cell["text"])
        lines.append(f"| {text} | {label(first)} − {label(second)} | " + " | ".join(row) + " |")
    return lines, cells


def within_table(found: dict) -> tuple[list[str], list[dict]]:
    """Findings within one variant: begin below end (per structure at 0.0), and the loss lowering History's AS."""
    lines = ["| finding (paper) | variant | compared | verdict by the rule (mean [95 % interval], seeds; paper; power, "
             "seeds for power 0.8) |", "|---|---|---|---|"]
    cells = []
    for structure in STRUCTURES:
        variant = f"{structure}@0.0"
        for kind in ("frequent", "rare"):
            seeds = found.get(variant, {})
            cell = test_cell(das(seeds, f"{kind}_end"), das(seeds, f"{kind}_begin"),
                             round(paper_das(variant, f"{kind}_end") - paper_das(variant, f"{kind}_begin"), 2))
            cells.append(cell | {"structures": {structure}, "set": f"{kind} end − begin", "variants": (variant,)})
            lines.append(f"| Distractions at the beginning get less attention than at the end | {label(variant)} | "
                         f"DAS ratio, {kind} end − {kind} begin | {cell['text']} |")
    history = {variant: per_seed(found.get(variant, {}), lambda run: 100 * run["original"]["ubuntu"]["mean_as_history"])
               for variant in ("static_ui@0.0", "static_ui@0.7")}
    cell = test_cell(history["static_ui@0.0"], history["static_ui@0.7"],
                     round(PAPER["static_ui@0.0"][1] - PAPER["static_ui@0.7"][1], 1))
    cells.append(cell | {"structures": {"static_ui"}, "set": "History AS",
                         "variants": ("static_ui@0.0", "static_ui@0.7")})
    lines.append("| The loss moves attention from History to the Query (History average AS falls, %) | StaticUI 0.0 − "
                 f"StaticUI 0.7 | original test set | {cell['text']} |")
    return lines, cells


def perplexity_row(found: dict, unigram: dict) -> list[str]:
    values = [run["original"]["ubuntu"]["perplexity"] for seeds in found.values() for run in seeds.values()]
    return [f"\"Perplexity scores of the examined 23 models are similar\" (§5.1): ours range from {min(values):.1f} to "
            f"{max(values):.1f} over {len(values)} runs (the paper's from {min(p[0] for p in PAPER.values()):.1f} to "
            f"{max(p[0] for p in PAPER.values()):.1f}), against the unigram's {unigram['perplexity']:.1f}. The rule "
            "tests directions, not equality, so this claim gets **no verdict** from it (deciding it needs an "
            "equivalence margin the paper does not give); the per-variant means are in Table 3."]


def runs_table(found: dict) -> list[str]:
    lines = ["| variant | seeds | trainer commit | CPU seconds per run (mean) | wall seconds per run (mean) "
             "| run files | sha256 of the run files (first 16 hex digits) |", "|---|---|---|---:|---:|---:|---|"]
    cpu_total, wall_total, count = 0.0, 0.0, 0
    for variant in PAPER:
        seeds = found.get(variant)
        if not seeds:
            lines.append(f"| {label(variant)} | none | – | – | – | – | – |")
            continue
        commands = [run["command"] for run in seeds.values()]
        commits = sorted({c["commit"][:7] for c in commands})
        cpu, wall = [c["cpu_seconds"] for c in commands], [c["wall_seconds"] for c in commands]
        cpu_total, wall_total, count = cpu_total + sum(cpu), wall_total + sum(wall), count + len(commands)
        folder = next(iter(seeds.values()))["folder"].parent
        files = run_files(folder)
        lines.append(f"| {label(variant)} | {', '.join(map(str, sorted(seeds)))} | {', '.join(commits)} | "
                     f"{np.mean(cpu):.0f} | {np.mean(wall):.0f} | {len(files)} | "
                     f"`{fingerprint(files, folder.parent)[:16]}` |")
    lines += ["", f"In all: {count} runs, {cpu_total / 60:.0f} CPU minutes (one torch thread each, at `nice -n 10`), "
              f"{wall_total / 60:.0f} minutes of wall time summed over the runs (three ran at a time on a shared "
              "2-core machine, so wall time is several times the CPU time). CPU seconds include predicting and "
              "scoring the ten test sets."]
    return lines


def outcome_counts(cells: list[dict]) -> dict:
    """``{outcome: count}`` in :data:`OUTCOMES` order, then one-seed and not-run cells; absent outcomes left out."""
    counts = {}
    for cell in cells:
        counts[cell["outcome"]] = counts.get(cell["outcome"], 0) + 1
    order = [*OUTCOMES, *sorted(set(counts) - {*OUTCOMES, ONE_SEED, NOT_RUN}), ONE_SEED, NOT_RUN]
    return {o: counts[o] for o in order if o in counts}


def summary(cells: list[dict]) -> str:
    counts = outcome_counts(cells)
    return ", ".join(f"{n} {kind}" for kind, n in counts.items()) + f" (of {len(cells)} cells)"


def das_range(values) -> str:
    values = list(values)
    return f"{min(values):.2f} to {max(values):.2f}"


def reading(found: dict, unigram: dict, comparisons: list[dict], within: list[dict]) -> list[str]:
    """The summary of the tables, every number and verdict rendered from them."""
    cells = comparisons + within
    perplexities = {v: np.mean([run["original"]["ubuntu"]["perplexity"] for run in seeds.values()])
                    for v, seeds in found.items()}
    ratios = [run["original"]["ubuntu"]["perplexity"] / unigram["perplexity"] for seeds in found.values()
              for run in seeds.values()]
    ours = [np.mean(list(das(seeds, name).values())) for seeds in found.values() for name in SETS]
    theirs = [value for paper in PAPER.values() for value in paper[2:]]
    even = {s: [100 * np.mean([run["original"]["ubuntu"]["mean_as_history"] for run in found[v].values()])
                for v in found if v.split("@")[0] == s] for s in STRUCTURES}
    lines = [f"- Every run's test perplexity is {min(ratios):.2f} to {max(ratios):.2f} x the unigram's "
             f"{unigram['perplexity']:.1f} (the margin line below); the variants' mean perplexities span "
             f"{min(perplexities.values()):.1f} to {max(perplexities.values()):.1f} (the paper's "
             f"{min(p[0] for p in PAPER.values()):.1f} to {max(p[0] for p in PAPER.values()):.1f}).",
             f"- Our DAS ratios (means over seeds, per variant and set) range {das_range(ours)}; the paper's Table 3 "
             f"values range {das_range(theirs)}.",
             f"- Verdicts: {summary(cells)}. A cell resting on one seed gets no verdict (its value is shown); "
             f"{sum(c['against'] for c in cells)} cells (marked {AGAINST}) test a difference that the paper's own "
             "Table 3 puts at 0 or below although its text claims the first exceeds the second; they test the "
             "direction of the paper's numbers (the text's where the numbers are equal)."]
    for structure in STRUCTURES:
        mine = [c for c in comparisons if c["structures"] == {structure}]
        lines.append(f"- {NAMES[structure]} (comparisons of two of its variants; mean History AS of its variants "
                     f"{min(even[structure]):.1f} to {max(even[structure]):.1f} %): {summary(mine)}.")
    needed = sorted(c["verdict"].seeds_for_power for c in cells
                    if c["verdict"] and c["verdict"].seeds_for_power is not None)
    sized = [c for c in cells if c["verdict"] and c["verdict"].paper is not None]
    if needed:
        lines.append(f"- Seeds that would give power 0.8 at the paper's value, at our spread: {needed[0]} to "
                     f"{needed[-1]} (median {int(np.median(needed))}) over {len(needed)} cells; more than 1000 for "
                     f"{len(sized) - len(needed)} of the {len(sized)} cells with a paper value and two or more seeds. "
                     f"Below {MIN_SEEDS} seeds the rule decides nothing; the highest power at our seeds is "
                     f"{max(c['verdict'].power for c in sized if c['verdict'].power is not None):.2f}.")
    history = within[-1]
    lines.append(f"- The attention loss and History AS (StaticUI 0.0 − 0.7, %): {history['text'].lstrip(AGAINST)}.")
    contradicted = [c for c in cells if c["outcome"] == "contradicted"]
    if contradicted:
        lines.append("- Contradicted: " + "; ".join(
            f"{' − '.join(label(v) for v in c['variants'])} on {c['set'].replace('_', ' ')} ({c['verdict'].mean:+.3f})"
            for c in contradicted) + ".")
    return lines


def setting_sentence(found: dict) -> str:
    training = next(iter(next(iter(found.values())).values()))["run"]["training"]
    return (f"Every run: {training['max_train_instances']:,} training pairs (seeded subsample by id hash, the same "
            f"for every run), {training['num_epochs']} epochs, Adam lr {training['learning_rate']}, batch "
            f"{training['batch_size']}, dim {training['dim']} x {training['layers']} layer, vocabulary "
            f"{training['vocab_size']:,}, utterances and responses cut to {training['max_utterance_tokens']} / "
            f"{training['max_response_tokens']} tokens, output bias initialised to the log unigram "
            f"(`--output-bias {training['output_bias']}`); test sets: {training['max_eval_instances']} rows each "
            f"(the same seeded id subsample in every set); bootstrap intervals: {training['replicates']} replicates.")


def prose_blocks(found: dict, unigram: dict) -> dict[str, str]:
    """The sentences with a number in the report's prose above the generated part (``{block name: text}``): what the
    committed runs are, and what the chosen setting gives on validation beside the margin rule."""
    seeds = [len(s) for s in found.values()]
    runs = [run for s in found.values() for run in s.values()]
    by_epoch = list(zip(*([step["validation_perplexity"] for step in run["run"]["history"]] for run in runs),
                        strict=True))
    ratios = [run["original"]["ubuntu"]["perplexity"] / unigram["perplexity"] for run in runs]
    intro = (f"The committed runs: {len(runs)}, of {len(found)} of these variants, "
             f"{min(seeds)}{'' if min(seeds) == max(seeds) else f' to {max(seeds)}'} training "
             f"seed{'s' * (max(seeds) > 1)} each.")
    setting = ("**Why this setting.** The model must beat a context-free add-one unigram model on the same test "
               f"responses by a clear margin, stated as a rule: test perplexity at most {MARGIN} x the unigram's "
               "(`MARGIN` in `make_tables.py`; the unigram is recomputed by `make_tables.py --unigram DATASET` on the "
               "runs' own training subsample, vocabulary and test rows). With the unigram output bias the "
               f"{len(runs)} committed runs reach a validation perplexity (each `run.json`'s history) of "
               + ", then ".join(f"{min(values):.1f} to {max(values):.1f} after epoch {epoch}"
                                for epoch, values in enumerate(by_epoch, 1))
               + f", and a test perplexity of {min(ratios):.2f} to {max(ratios):.2f} x the unigram's "
               f"{unigram['perplexity']:.1f}.")
    return {"intro": intro + "\n", "setting": setting + "\n"}


def build(root: Path | None = None) -> tuple[str, dict, dict[str, str]]:
    """The generated part of the report, the summary the README's status paragraph is rendered from, and the prose
    blocks (:func:`prose_blocks`)."""
    found = collect(root)
    if not found:
        raise RunFileError(root or RUNS, "holds no <variant>/seed_<s>/ run folder; run collect.py")
    unigram = read_json(UNIGRAM)
    seeds = sorted({len(s) for s in found.values()})
    comparisons, outcomes = comparison_table(found)
    within, more = within_table(found)
    cells = outcomes + more
    summary_data = {
        "paper": "Xing & Gulla (2022)", "report": "docs/reproduction_xing.md", "generator": GENERATOR,
        "cells": len(cells), "outcomes": outcome_counts(cells),
        "groups": [{"name": f"{len(found)} variants, comparisons of two variants' DAS ratio",
                    "seeds": sorted({c["verdict"].seeds for c in outcomes if c["verdict"]}), "cells": len(outcomes),
                    "outcomes": outcome_counts(outcomes), "note": None},
                   {"name": "findings within one variant",
                    "seeds": sorted({c["verdict"].seeds for c in more if c["verdict"]}), "cells": len(more),
                    "outcomes": outcome_counts(more), "note": None}],
        "notes": [f"{sum(c['against'] for c in cells)} of its {len(cells)} cells test a difference that the paper's "
                  "own Table 3 puts at 0 or below although its text claims the opposite"],
        "cost": {"runs": sum(map(len, found.values())), "cpu_minutes": round(sum(
            run["command"]["cpu_seconds"] for seeds in found.values() for run in seeds.values()) / 60)}}
    lines = ["## Summary (generated)", "", *reading(found, unigram, outcomes, more), "",
             "## Table 3 beside ours (generated)", "",
             f"From the run files under `reproduction_xing/runs/` ({sum(map(len, found.values()))} runs of "
             f"{len(found)} of the 23 variants, {' or '.join(map(str, seeds))} seed{'s' * (seeds != [1])} each: "
             "the table of what ran says which). "
             f"{setting_sentence(found)} "
             "Each cell of ours is the mean over the variant's seeds. DAS ratio: eq. 8, the mean over dialogues of "
             "the per-dialogue ratio; \"Perp.\" and \"Avg.\" (mean History AS, %) on the original test set. The last "
             f"row is the context-free baseline from `reproduction_xing/{UNIGRAM.name}`: {unigram['description']}",
             "", *table3(found, unigram), "", margin_sentence(found, unigram), "", starved_sentence(found), "",
             "The ratio of the mean distractor AS to the mean History AS on the same dialogues (not the paper's "
             "statistic; eq. 8's mean of per-dialogue ratios is pulled up by the few dialogues whose History gets "
             "little attention, this one is not):", "", *ratio_of_means_table(found), "",
             "## Tables 4-6: average AS of the distractors and of the History (generated)", "",
             "Per distracting set: the DAS ratio, \"DAS\" (the distracting utterances' average AS, %), \"Avg.\" (the "
             "original History utterances' average AS, %, on the same dialogues) and, for the begin / end sets, the "
             "AS (%) of the first / last original History utterance (\"1st\" / \"Last\"; the first or last History "
             "utterance that is not a distraction); means over seeds, from each run's `results.json`. The paper's "
             "Tables 4-6 hold the same DAS ratios as its Table 3 (above); their other columns are not transcribed.",
             "", "Table 4 (random sets):", "", *as_table(found, RANDOM, False), "",
             "Table 5 (frequent sets):", "", *as_table(found, FREQUENT, True), "",
             "Table 6 (rare sets):", "", *as_table(found, RARE, True), "",
             "## Verdicts (generated)", "",
             "By the rule of `dialshift.verdicts`, one rule for the four reports: per finding, the per-seed paired "
             "difference (the same seed of both variants, on the same test rows), its mean and 95 % interval across "
             "seeds, weighed against the paper's value (\"paper\": the same difference in the paper's Table 3; the "
             "module's docstring defines the outcomes), with the power to detect the paper's value at our spread and "
             "the seeds that would give power 0.8. A cell resting on one seed gets no verdict. The direction tested "
             f"is the sign of the paper's numbers; cells marked {AGAINST} are those where the paper's numbers put the "
             "difference at 0 or below although its text claims the first exceeds the second (at 0 the text's "
             "direction is tested). Every cell is one test set. The paper reads "
             "its Begin / End sets as biased by the LSTM's recency (§5.3) and draws its conclusions from the random "
             "and Middle sets.", "",
             f"Comparisons of two variants' DAS ratio ({summary(outcomes)}):", "", *comparisons, "",
             f"Within one variant ({summary(more)}):", "", *within, "",
             *perplexity_row(found, unigram), "",
             "## What ran and what it cost (generated)", "", *runs_table(found)]
    return "\n".join(lines) + "\n", summary_data, prose_blocks(found, unigram)


def generate(root: Path | None = None) -> str:
    """The generated part of the report (:func:`build`)."""
    return build(root)[0]


def compute_unigram(dataset: str, root: Path | None = None) -> dict:
    """The add-one unigram baseline on the rows the runs were trained and scored on (their ``run.json`` settings: the
    seeded training subsample builds the vocabulary and the counts, the seeded test subsample is scored), with the
    trainer's own row sampling and vocabulary."""
    from dialshift.errors import DialshiftError
    from dialshift.models.seq2seq import Vocabulary, unigram_perplexity

    sys.path.insert(0, str(HERE.parent.parent / "trainers"))
    from seq2seq import load_rows

    settings = {json.dumps({k: run["run"]["training"][k] for k in ("config", "max_train_instances", "vocab_size",
                                                                    "max_response_tokens", "max_eval_instances")},
                           sort_keys=True)
                for seeds in collect(root).values() for run in seeds.values()}
    if len(settings) != 1:
        raise DialshiftError(f"{root or RUNS}: the runs need one shared data setting for one unigram baseline, found "
                             f"{len(settings)}")
    s = json.loads(settings.pop())
    train = load_rows(dataset, s["config"], "train", s["max_train_instances"], 0)
    test = load_rows(dataset, s["config"], "test", s["max_eval_instances"], 0)
    vocab = Vocabulary.build((text for row in train for text in (*row["context"], row["response"])), s["vocab_size"])
    result = unigram_perplexity(vocab, [row["response"] for row in train], [row["response"] for row in test],
                                s["max_response_tokens"])
    return {**result, "description": (
        f"an add-one unigram distribution over the {result['vocabulary']:,}-word vocabulary, estimated on the "
        f"responses of the same {len(train):,} training pairs and scored on the same {len(test)} test responses "
        f"({result['tokens']:,} tokens: each response cut to {s['max_response_tokens']} tokens, then EOS), by "
        "`python docs/reproduction_xing/make_tables.py --unigram DATASET` on `dialshift build --family distracting "
        f"--config {s['config']}`."), "command": ["python", "docs/reproduction_xing/make_tables.py", "--unigram",
                                                  "DATASET"]}


def main(argv=None) -> int:
    parser = reports.argument_parser(__doc__)
    parser.add_argument("--unigram", metavar="DATASET", help="recompute unigram.json from a distracting build")
    args = parser.parse_args(argv)
    if args.unigram and reports.write_json(UNIGRAM, compute_unigram, args.unigram):
        return 2
    try:
        generated, summary_data, blocks = build()
    except DialshiftError as error:
        print(f"make_tables.py: error: {error}", file=sys.stderr)
        return 2
    status = reports.render(REPORT, generated, GENERATOR, args.check, blocks)
    if args.check and status:  # one line for a check that fails
        return status
    return reports.write_or_check(SUMMARY, json.dumps(summary_data, indent=1, ensure_ascii=False) + "\n",
                                  args.check, GENERATOR)


if __name__ == "__main__":
    sys.exit(main())
