"""Which counting rule reproduces Lee et al.'s Table 1? Instance counts of every ``uw_*``/``kw_*`` ratio under
alternative rules, beside the paper's (issue 32, item 4).

A UW/KW instance is kept when ``n = rounding(ratio x base) > 0`` and at least ``n`` of its words are eligible targets.
The paper leaves three things open, each a dimension here (:data:`BASES`, :data:`ROUNDINGS`, :data:`ELIGIBILITY`):

* the **base** the ratio multiplies: bert-style tokens (every ``\\w+`` run and every other non-space character, the
  build's rule), whitespace-separated tokens (DailyDialog's text is pre-tokenised with spaces, so ``I've`` is one),
  ``\\w+`` runs only (punctuation not counted), or alphabetic words only;
* the **rounding**: floor (the build's), round (Python's, half to even) or ceil;
* which words are **eligible**: a word with a valid unknown synonym under rules 1-4 (the build's), the same with a
  case-sensitive training vocabulary, or without the number-sense exclusion of rule 1; and for KW, any word with a
  single-word WordNet synonym whether or not it occurs in training (KW replaces by known words, so rule 3 may not
  have applied to its targets: the paper's KW keeps more instances than its UW at every ratio from 0.20).

:func:`counting_table` computes every combination from one pass over the test instances (the synonym tables are the
build's, filled once); :func:`best_rules` ranks them by their mean absolute relative error against Table 1.
``python -m dialshift_families.dailydialog.counting`` prints the comparison (``--write`` puts it into
``docs/uw_audit.md`` between its markers).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dialshift.shifts.lexical import TokenizedContext
from dialshift.shifts.replace import SynonymTable, rule_not_number, rule_single_word, target_count
from dialshift.shifts.words import Vocabulary, is_number, is_word

from .card import PAPER_TABLE1
from .constants import UW_RATIOS

BASES = {
    "tokens": "bert-style tokens (\\w+ runs and every other non-space character)",
    "whitespace": "whitespace-separated tokens",
    "alnum": "\\w+ runs only (punctuation not counted)",
    "words": "alphabetic words only",
}
ROUNDINGS = ("floor", "round", "ceil")
ELIGIBILITY = {
    "paper": "a valid unknown synonym (rules 1-4, case-folded vocabulary)",
    "case_sensitive": "rules 1-4 with a case-sensitive vocabulary",
    "number_senses": "rules 1-4 without the number-sense exclusion",
    "any_synonym": "any single-word WordNet synonym (rule 3 not applied; KW only)",
}
_ALNUM = re.compile(r"\w+")


@dataclass(frozen=True)
class InstanceCounts:
    """What decides whether one test instance is kept: its size under each base and its eligible words."""

    bases: dict
    eligible: dict


def instance_counts(context: TokenizedContext, tables: dict) -> InstanceCounts:
    words = context.words()
    bases = {"tokens": context.num_tokens, "whitespace": sum(len(turn.split()) for turn in context.turns),
             "alnum": sum(len(_ALNUM.findall(turn)) for turn in context.turns), "words": len(words)}
    eligible = {}
    for name, table in tables.items():
        if name == "any_synonym":
            eligible[name] = sum(not is_number(word) and any_synonym(table, word) for word in words)
        else:
            eligible[name] = sum(context.replaceable(table))
    return InstanceCounts(bases, eligible)


def any_synonym(table: SynonymTable, word: str) -> bool:
    """Rules 1 and 2 only: the word has a single-word, non-number WordNet synonym (known or not)."""
    key = word.lower()
    if key not in table.any_cache:
        table.any_cache[key] = any(rule_not_number(name) and rule_single_word(name) for name in table.candidates(key))
    return table.any_cache[key]


def eligibility_tables(shifts) -> dict:
    """The synonym table behind each eligibility rule, over the build's WordNet and training split."""
    paper = shifts.synonyms.with_rules(shifts.options.word_rules)
    texts = [turn for dialogue in shifts.dialogues["train"] for turn in dialogue.turns]
    cased = SynonymTable(paper.wordnet, Vocabulary.from_texts(texts, case_sensitive=True))
    numbers = SynonymTable(paper.wordnet, paper.vocabulary, exclude_number_senses=False)
    anything = SynonymTable(paper.wordnet, paper.vocabulary)
    anything.any_cache = {}
    return {"paper": paper, "case_sensitive": cased, "number_senses": numbers, "any_synonym": anything}


def counting_table(shifts, ratios: Iterable[float] = UW_RATIOS) -> dict:
    """``{(base, rounding, eligibility): {ratio: (instances, mean targets)}}`` over the test split."""
    tables = eligibility_tables(shifts)
    instances = [instance_counts(TokenizedContext.of(row["context"]), tables) for row in shifts.source_rows("test")]
    result = {}
    for base in BASES:
        for rounding in ROUNDINGS:
            for eligibility in ELIGIBILITY:
                per_ratio = {}
                for ratio in ratios:
                    kept = targets = 0
                    for item in instances:
                        n = target_count(item.bases[base], ratio, rounding)
                        if n > 0 and item.eligible[eligibility] >= n:
                            kept, targets = kept + 1, targets + n
                    per_ratio[ratio] = (kept, targets / max(kept, 1))
                result[(base, rounding, eligibility)] = per_ratio
    return result


def relative_error(counts: dict, column: int) -> float:
    """Mean absolute relative error of a rule's instance counts against Table 1 column ``column`` (0 UW, 2 KW)."""
    errors = [abs(kept - PAPER_TABLE1[ratio][column]) / PAPER_TABLE1[ratio][column]
              for ratio, (kept, _) in counts.items()]
    return sum(errors) / len(errors)


def best_rules(table: dict, column: int, top: int = 5) -> list[tuple]:
    """The ``top`` rules closest to Table 1's UW (``column`` 0) or KW (2) counts; KW may use ``any_synonym``, UW not."""
    candidates = [(relative_error(counts, column), rule) for rule, counts in table.items()
                  if column == 2 or rule[2] != "any_synonym"]
    return sorted(candidates)[:top]


def render(table: dict, build_rule: tuple) -> str:
    """Markdown: the build's rule and the closest rules beside Table 1, UW then KW."""
    lines = []
    for column, label in ((0, "UW"), (2, "KW")):
        ranked = best_rules(table, column)
        rules = [build_rule] + [rule for _, rule in ranked if rule != build_rule][:3]
        header = " | ".join(f"{'/'.join(rule)}" for rule in rules)
        lines += [f"**{label}** instances per ratio (rule = base/rounding/eligibility; the first is the build's; "
                  "mean absolute relative error against Table 1 in the last row):", "",
                  f"| ratio | paper | {header} |", "|---:" * (2 + len(rules)) + "|"]
        for ratio in table[build_rule]:
            cells = [f"{table[rule][ratio][0]:,} ({table[rule][ratio][1]:.2f})" for rule in rules]
            paper = PAPER_TABLE1[ratio]
            lines.append(f"| {ratio:.2f} | {paper[column]:,} ({paper[column + 1]:.2f}) | " + " | ".join(cells) + " |")
        lines.append("| error | - | " + " | ".join(f"{relative_error(table[rule], column):.1%}" for rule in rules)
                     + " |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


MARKERS = ("<!-- counting-rules:begin (python -m dialshift_families.dailydialog.counting --write) -->",
           "<!-- counting-rules:end -->")


def main(argv=None) -> int:
    import argparse
    from pathlib import Path

    from dialshift.data_dir import resolve_data_dir
    from dialshift.sources import dailydialog
    from dialshift.wordnet import load_wordnet

    from .pipeline import DailyDialogShifts, ShiftOptions

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", help="raw data directory (default: $DIALSHIFT_DATA_DIR or ../shared/data)")
    parser.add_argument("--write", metavar="FILE", nargs="?", const="docs/uw_audit.md",
                        help="replace the text between the counting-rules markers of FILE (default docs/uw_audit.md)")
    args = parser.parse_args(argv)
    shifts = DailyDialogShifts(dailydialog.read(resolve_data_dir(args.data_dir)), load_wordnet(), ShiftOptions())
    shifts.warm()
    text = render(counting_table(shifts), ("tokens", "floor", "paper"))
    if args.write:
        path = Path(args.write)
        page = path.read_text(encoding="utf-8")
        begin, end = page.index(MARKERS[0]) + len(MARKERS[0]), page.index(MARKERS[1])
        path.write_text(page[:begin] + "\n" + text + page[end:], encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
