"""Measure the verdict rule of dialshift.verdicts by simulation: its false-decision rate per distribution of the
per-seed differences and seed count, beside the earlier rule (Student's t interval at 95 % alone), its power at a few
effect sizes, and the seeds it needs for power 0.8. Writes the tables into docs/verdicts.md (between its markers).

A false decision is an interval that excludes the true centre (see dialshift/verdict_simulation.py for the
distributions); power is the share of normal findings of true difference d standard deviations decided in d's
direction. Everything is seeded, so the same --draws give the same bytes.

    nice python benchmarks/verdicts.py                 # 20,000 draws per cell, writes docs/verdicts.md (~1 CPU-minute)
    nice python benchmarks/verdicts.py --quick         # 2,000 draws, prints only
    nice python benchmarks/verdicts.py --check         # exit 1 when docs/verdicts.md differs from what it renders
"""

import argparse
import sys
from pathlib import Path

from dialshift.reports import markers, splice, write_or_check
from dialshift.verdict_simulation import FAMILIES, SEEDS, false_decisions, power
from dialshift.verdicts import MAX_SEEDS, seeds_for

DOC = Path(__file__).resolve().parent.parent / "docs" / "verdicts.md"
GENERATOR = "benchmarks/verdicts.py"
EFFECTS = (0.5, 1.0, 2.0, 3.0)
THRESHOLD = 0.05


def false_decision_table(draws: int) -> list[str]:
    lines = ["| per-seed differences | " + " | ".join(f"{n} seeds" for n in SEEDS) + " |",
             "|---|" + "---:|" * len(SEEDS)]
    for family in FAMILIES:
        cells = []
        for n in SEEDS:
            rates = false_decisions(family, n, draws)
            flag = " **over 5 %**" if rates["rule"] > THRESHOLD else ""
            cells.append(f"{100 * rates['rule']:.1f}{flag} ({100 * rates['t']:.1f})")
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    return lines


def power_table(draws: int) -> list[str]:
    lines = ["| true difference (sd) | " + " | ".join(f"{n} seeds" for n in SEEDS) + " | seeds for power 0.8 |",
             "|---|" + "---:|" * (len(SEEDS) + 1)]
    for effect in EFFECTS:
        cells = [f"{power(effect, n, draws)['rule']:.2f} ({power(effect, n, draws)['t']:.2f})" for n in SEEDS]
        needed = seeds_for(effect)
        lines.append(f"| {effect:g} | " + " | ".join(cells) + f" | {needed if needed else f'> {MAX_SEEDS}'} |")
    return lines


def render(draws: int) -> str:
    return "\n".join([
        f"False-decision rate in % of the rule (of Student's t at 95 % alone, the earlier rule, in brackets), "
        f"{draws:,} simulated findings per cell; a cell over 5 % is marked:", "",
        *false_decision_table(draws), "",
        f"Power (share of findings decided in the true direction) of the rule (t alone in brackets) for normal "
        f"per-seed differences, {draws:,} simulated findings per cell, and the seeds the rule needs for power 0.8 "
        f"(`dialshift.verdicts.seeds_for`):", "",
        *power_table(draws), ""]) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 draws per cell; print, write nothing")
    parser.add_argument("--draws", type=int, default=20000, help="simulated findings per cell (default 20,000)")
    parser.add_argument("--check", action="store_true", help="compare docs/verdicts.md instead of writing it")
    args = parser.parse_args(argv)
    if args.draws < 100:
        parser.error("--draws must be at least 100")
    generated = render(2000 if args.quick else args.draws)
    print(generated, end="")
    if args.quick:
        return 0
    expected = splice(DOC.read_text(encoding="utf-8"), generated, *markers(GENERATOR), DOC)
    return write_or_check(DOC, expected, args.check, GENERATOR)


if __name__ == "__main__":
    sys.exit(main())
