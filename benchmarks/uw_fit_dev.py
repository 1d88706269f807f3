"""Benchmark: how well the contextual check's fit separates plausible replacements from the others, on every judged one.

    python benchmarks/uw_fit_dev.py [--fit minilm|FOLDER]

Reads every judged table of the meaning-keeping Unknown Word mode (``benchmarks/uw_meaning_sample.md`` now and in
the commits of :data:`HISTORY`, read with ``git show``: run it in a clone), scores each replacement with
:class:`dialshift.shifts.fit.ContextFit` in the utterance the judge read (the marked word put back, the other
replacements of that utterance left in) and prints, per group of samples, the ROC AUC of the fit for "plausible" and
the share plausible per fit band, then the current file's samples as drawn with the Wilson 95 % interval of their
share plausible. The groups: the samples judged **before the check existed** (the fit thresholds
``fit_min`` and ``fit_prefer`` were set on them, with the rows they keep on Ubuntu IRC), the samples of the check's
first state (seeds 8 and 9 of commit 855098d: read to set round 4) and those of round 4 (seeds 10 and 11 of commit
2a47988: drawn and judged once, after the rules were final). A replacement judged in several tables (the same
context drawn again, or a table carried into a later version of the file) counts once per group.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = "benchmarks/uw_meaning_sample.md"
#: Commits whose version of the sample file holds judged tables that the current file no longer carries.
HISTORY = ("b332b49", "a9b4b92", "c7ceee9", "a0fb9b7", "f91c77c")
#: Fit bands of the printed table (the lower bound is in the band).
BANDS = (-1.0, 0.25, 0.5, 0.7, 0.8, 0.9)
MARK = re.compile(r"\[(\S+) -> (\S+)\]")


def judged_tables(text: str) -> list[tuple[str, list[dict]]]:
    """The ``## `` sections of a sample file with their judged rows (``plausible`` yes or no)."""
    tables, title = [], None
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            tables.append((title, []))
        elif title is not None and line.startswith("| ") and line[2:3].isdigit():
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            if len(cells) >= 7 and cells[5] in ("yes", "no") and MARK.search(cells[4]):
                tables[-1][1].append({"id": cells[1], "turn_index": cells[2], "utterance": cells[4],
                                      "plausible": cells[5] == "yes"})
    return [(title, rows) for title, rows in tables if rows]


#: The groups, in the printed order: the commit a table's title names, and the group's label.
GROUPS = (("", "before the check (seeds 0-7, DailyDialog): thresholds set"),
          ("commit 855098d", "first check (855098d), seeds 8-9: read to set round 4"),
          ("commit 2a47988", "round 4 (2a47988), seeds 10-11: fresh"))


def group_of(title: str) -> str:
    """Which group a table belongs to (see the module docstring)."""
    return next((label for commit, label in reversed(GROUPS) if commit in title))


def collect() -> dict[str, dict]:
    """Every judged replacement once per group: ``{group: {key: row}}``."""
    sources = [(rev, subprocess.run(["git", "show", f"{rev}:{SAMPLES}"], cwd=ROOT, check=True, capture_output=True,
                                    text=True).stdout) for rev in HISTORY]
    sources.append(("working tree", (ROOT / SAMPLES).read_text(encoding="utf-8")))
    groups: dict[str, dict] = {label: {} for _, label in GROUPS}
    for _, text in sources:
        for title, rows in judged_tables(text):
            group = groups[group_of(title)]
            for row in rows:
                original, replacement = MARK.search(row["utterance"]).groups()
                group.setdefault((row["id"], row["turn_index"], original, replacement), row)
    return groups


def item(row: dict) -> tuple[tuple[str, ...], int, str]:
    """The judged utterance as the check reads it: its tokens with the marked word back, the word's index and the
    replacement."""
    from dialshift.shifts.words import tokenize

    text = row["utterance"]
    found = MARK.search(text)
    before = tokenize(text[:found.start()])
    return (*before, found.group(1), *tokenize(text[found.end():])), len(before), found.group(2)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", default="minilm", help="the check's encoder: minilm (default) or a model folder")
    args = parser.parse_args(argv)
    from sklearn.metrics import roc_auc_score

    from dialshift.shifts.fit import ContextFit

    scorer = ContextFit(args.fit)
    bands = [f"[{low:g}, {high:g})" for low, high in zip(BANDS, BANDS[1:], strict=False)] + [f"[{BANDS[-1]:g}, 1]"]
    print(f"Fit ({args.fit}) of every judged replacement of the meaning mode: ROC AUC for plausible, and plausible / "
          "judged per fit band")
    print()
    print("| samples | judged | plausible | ROC AUC | " + " | ".join(bands) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(bands))
    for group, rows in collect().items():
        rows = list(rows.values())
        fits = scorer.scores([item(row) for row in rows])
        plausible = [row["plausible"] for row in rows]
        auc = roc_auc_score(plausible, fits) if 0 < sum(plausible) < len(plausible) else float("nan")
        cells = []
        for low, high in zip(BANDS, (*BANDS[1:], 1.0001), strict=True):
            inside = [ok for ok, fit in zip(plausible, fits, strict=True) if low <= fit < high]
            cells.append(f"{sum(inside)} / {len(inside)}" if inside else "-")
        print(f"| {group} | {len(rows)} | {sum(plausible) / len(rows):.0%} | {auc:.2f} | " + " | ".join(cells) + " |")
    print()
    print_samples()
    return 0


def print_samples() -> None:
    """The judged tables of the current sample file as drawn (a context drawn twice counts twice), the seeds of one
    set of rules together, with the Wilson 95 % interval of their share plausible."""
    from scipy.stats import binomtest

    rules: dict[str, list] = {}
    for title, rows in judged_tables((ROOT / SAMPLES).read_text(encoding="utf-8")):
        found = re.search(r"`ratio=0.3`, (.*), sample seed (\d+)", title)
        rules.setdefault(found[1], []).append((found[2], sum(row["plausible"] for row in rows), len(rows)))
    print("| rules (`benchmarks/uw_meaning_sample.md`) | plausible, as drawn | Wilson 95 % |")
    print("|---|---:|---:|")
    for name, counts in rules.items():
        plausible, judged = sum(k for _, k, _ in counts), sum(n for _, _, n in counts)
        low, high = binomtest(plausible, judged).proportion_ci(method="wilson")
        seeds = " + ".join(f"{k} (seed {seed})" for seed, k, _ in counts)
        print(f"| {name} | {seeds} = {plausible} of {judged} | {low:.0%}-{high:.0%} |")

if __name__ == "__main__":
    sys.exit(main())
