"""The DailyDialog card section, rendered from the facts every built config carries (kept configs included)."""

import string
from importlib import resources

from dialshift.shifts.lexical import ratio_name
from dialshift.shifts.replace import UW_RULES

from .constants import IC_WINDOW, IMPORTANCE_RATIO, NUM_BUCKETS, UW_RATIOS

#: Lee et al. (2022) Table 1: ratio -> (UW instances, UW mean targets, KW instances, KW mean targets).
PAPER_TABLE1 = {
    0.05: (5481, 3.82, 5481, 3.82), 0.10: (6229, 7.26, 6229, 7.26), 0.15: (6513, 10.63, 6512, 10.64),
    0.20: (6609, 14.20, 6611, 14.20), 0.25: (6604, 17.88, 6618, 17.85), 0.30: (6550, 21.57, 6561, 21.54),
    0.35: (6354, 25.50, 6456, 25.38), 0.40: (5831, 30.02, 6060, 29.65), 0.45: (4746, 33.30, 5137, 33.41),
    0.50: (2787, 32.99, 3130, 33.92),
}
PAPER_TABLE2 = {1: (5925, 6.58), 2: (5925, 6.98), 3: (5925, 6.98), 4: (5925, 6.98), 5: (5925, 7.39)}
PAPER_SOURCE_TEST, PAPER_IC = 6639, 2370

#: The hand-checked audit of docs/uw_audit.md (fixed numbers, not recomputed by a build): of a seeded sample
#: (``sample_replacements``, seed 0) of 40 replacements of a config's test split, how many are a plausible synonym in
#: their context: (rules, config) -> plausible count.
UW_AUDIT_SIZE, UW_AUDIT_SEED, UW_AUDIT_MEASURED = 40, 0, "2026-11-23 with dialshift 0.2.0"
UW_AUDIT = {("paper", "uw_0.30"): 2, ("sense", "uw_0.30"): 23, ("sense", "uw_0.10"): 23}

def render_section(facts: dict) -> str:
    """Markdown for the family's card section from ``{config: facts}`` (see ``config_facts``)."""
    settings = _settings(facts)
    template = resources.files("dialshift_cards").joinpath("dailydialog.md").read_text(encoding="utf-8")
    importance = sorted({fact["importance_model"] for fact in facts.values() if "importance_model" in fact})
    return string.Template(template).substitute(
        source_table=_source_table(facts),
        overlap=_overlap(facts),
        ic_truncated=_ic_truncated(facts),
        table1=_table1(facts),
        uw_rules=_uw_rules(facts),
        rules_table=_rules_table(facts),
        uw_audit=_uw_audit(),
        imp_table=_imp_table(facts),
        ic_table=_ic_sr_table(facts),
        importance_model=", ".join(importance) or "not built",
        rounding=settings["rounding"],
        vocab_case="case-sensitive" if settings["vocab_case_sensitive"] else "case-folded (lower-cased)",
        kw_rule=settings["kw_rule"],
        kw_min_count=f"{settings['kw_min_count']:,}",
        ic_selection=settings["ic_selection"],
        seed=settings["seed"],
        validation_variants="published" if any("validation" in fact["splits"] for name, fact in facts.items()
                                               if name != "dailydialog") else "not published",
        paper_source=f"{PAPER_SOURCE_TEST:,}",
        paper_ic=f"{PAPER_IC:,}",
        ic_window=IC_WINDOW,
        imp_ratio=f"{IMPORTANCE_RATIO:.2f}",
    )


def _settings(facts: dict) -> dict:
    """The rule settings stated in the card: those of the configs in the folder (the unshifted config's when they
    differ, which the card then says)."""
    distinct = {tuple(sorted(fact["settings"].items())) for fact in facts.values()}
    chosen = facts.get("dailydialog", next(iter(facts.values())))["settings"]
    if len(distinct) > 1:
        chosen = {**chosen, "rounding": f"{chosen['rounding']} (configs in this folder were built with different "
                                        "settings; each config's are in the card's `dialshift` metadata)"}
    return chosen


def _overlap(facts: dict) -> str:
    """The train/test overlap sentence, computed from the build."""
    overlap = facts.get("dailydialog", {}).get("overlap")
    if not overlap:
        return "(overlap with train: computed when the unshifted `dailydialog` config is built)"
    parts = []
    for split, item in overlap.items():
        rows = facts["dailydialog"]["in_train"].get(split, 0)
        pairs = item["pairs_in_train"]
        parts.append(f"{item['dialogues']:,} of the {item['of_dialogues']:,} {split} dialogues occur verbatim in train "
                     f"(case- and space-folded; {rows:,} {split} instances have `in_train` true"
                     + (f", {pairs:,} {split} (context, gold) pairs also occur as training pairs)" if pairs is not None
                        else ")"))
    dropped = facts["dailydialog"]["settings"].get("drop_train_overlap")
    return ("The release shares dialogues between its splits: " + "; ".join(parts) + ". "
            + ("This build left those instances out (`--dd-drop-train-overlap`)." if dropped else
               "They are kept, as in the paper (which does not mention them), and flagged by the `in_train` field; "
               "`--dd-drop-train-overlap` leaves them out of validation and test for a leak-free evaluation."))


def _ic_truncated(facts: dict) -> str:
    fact = facts.get(f"ic_0of{IC_WINDOW}")
    if not fact or "truncated" not in fact:
        return "see the `truncated_turns` field"
    return f"{fact['truncated']:,} of {_test(fact):,}, {fact['truncated'] / max(_test(fact), 1):.0%}"


def _test(fact: dict) -> int:
    return fact["splits"]["test"]["rows"]


def _source_table(facts: dict) -> str:
    if "dailydialog" not in facts:
        return "(the unshifted `dailydialog` config is not in this folder)"
    rows = ["| split | dialogues | instances |", "|---|---:|---:|"]
    for split, sizes in facts["dailydialog"]["splits"].items():
        rows.append(f"| {split} | {sizes['dialogues']:,} | {sizes['rows']:,} |")
    return "\n".join(rows)


def _table1(facts: dict) -> str:
    alternative = {ratio: facts[ratio_name("uw", ratio)]["alternative_rounding"] for ratio in UW_RATIOS
                   if "alternative_rounding" in facts.get(ratio_name("uw", ratio), {})}
    rule = next(iter(alternative.values()))["rule"] if alternative else ""
    header = ("| ratio | UW instances | paper | UW mean targets | paper "
              "| KW instances | paper | KW mean targets | paper |")
    extra = f" UW instances with {rule}() |" if alternative else ""
    rows = [header + extra, "|---:" * (9 + bool(alternative)) + "|"]
    for ratio in UW_RATIOS:
        uw, kw = facts.get(ratio_name("uw", ratio)), facts.get(ratio_name("kw", ratio))
        if uw is None and kw is None:
            continue
        paper = PAPER_TABLE1[ratio]
        cells = [f"{ratio:.2f}"]
        for fact, (count, mean) in ((uw, paper[:2]), (kw, paper[2:])):
            if fact is None:
                cells += ["-", f"{count:,}", "-", f"{mean:.2f}"]
            else:
                cells += [f"{_test(fact):,}", f"{count:,}", f"{fact['mean_replacements']:.2f}", f"{mean:.2f}"]
        if alternative:
            cells.append(f"{alternative[ratio]['count']:,}" if ratio in alternative else "-")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _word_rules(fact: dict) -> dict:
    """A word config's rules (configs built before the option existed used the paper's)."""
    return fact.get("word_rules") or {"preset": "paper", "describe": UW_RULES["paper"].describe()}


def _uw_rules(facts: dict) -> str:
    """Which word rules this folder's UW/KW/UW-imp configs were built with."""
    by_rules: dict[tuple, list[str]] = {}
    for name, fact in facts.items():
        group = name.split("_")[0] if name != "dailydialog" else None
        if group in ("uw", "kw"):
            rules = _word_rules(fact)
            by_rules.setdefault((rules["preset"], rules["describe"]), []).append(name)
    if not by_rules:
        return "Word rules: no UW/KW config is in this folder."
    label = {"paper": "the paper's rules (`--uw-rules paper`, the default)",
             "sense": "the sense-preserving rules (`--uw-rules sense`, beyond the paper)"}
    parts = [f"{label.get(preset, f'custom rules ({preset})')}: {describe}" for preset, describe in by_rules]
    if len(by_rules) == 1:
        return f"**Word rules of this folder's UW/KW configs**: {parts[0]}."
    return ("**Word rules of this folder's UW/KW configs differ**: " + "; ".join(
        f"{', '.join(sorted(names))} with {part}" for part, names in zip(parts, by_rules.values(), strict=True)) + ".")


def _rules_table(facts: dict) -> str:
    """UW test instances (and mean targets) at each ratio under the paper's and the sense-preserving rules: the
    config's own rules from its rows, the other rule set from the ``alternative_rules`` fact."""
    rows = []
    for ratio in UW_RATIOS:
        fact = facts.get(ratio_name("uw", ratio))
        if fact is None or "alternative_rules" not in fact:
            continue
        own, other = _word_rules(fact)["preset"], fact["alternative_rules"]
        cells = {own: (_test(fact), fact["mean_replacements"]), other["rules"]: (other["count"], other["mean_targets"])}
        rows.append((ratio, cells))
    if not rows:
        return "(computed when a `uw_*` config is built)"
    columns = sorted({preset for _, cells in rows for preset in cells}, key=lambda p: (p != "paper", p != "sense", p))
    header = "| ratio | paper's Table 1 | " + " | ".join(f"{p} rules: instances | mean targets" for p in columns) + " |"
    lines = [header, "|---:" * (2 + 2 * len(columns)) + "|"]
    for ratio, cells in rows:
        values = []
        for preset in columns:
            count, mean = cells.get(preset, (None, None))
            values += ["-", "-"] if count is None else [f"{count:,}", f"{mean:.2f}"]
        lines.append(f"| {ratio:.2f} | {PAPER_TABLE1[ratio][0]:,} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def _uw_audit() -> str:
    def share(rules, config):
        count = UW_AUDIT[(rules, config)]
        return f"{count} of {UW_AUDIT_SIZE} ({count / UW_AUDIT_SIZE:.1%})"

    return (f"**Audit** (a small hand-checked audit; fixed numbers measured {UW_AUDIT_MEASURED}, not recomputed by a "
            f"build): a seeded random sample of {UW_AUDIT_SIZE} replacements (`dialshift.shifts.lexical."
            f"sample_replacements`, seed {UW_AUDIT_SEED}) of the test split per rule set, each read in its utterance "
            "and judged a plausible synonym in context (same meaning, still grammatical; rare or archaic synonyms "
            f"count) or not. `uw_0.30`: **{share('paper', 'uw_0.30')}** plausible under the paper's rules (19 of the "
            f"40 targets are function words or contraction pieces), **{share('sense', 'uw_0.30')}** under the "
            f"sense-preserving rules; `uw_0.10` under the sense-preserving rules (a broader sample, since `uw_0.30` "
            f"keeps few, short instances under them): {share('sense', 'uw_0.10')}. Every item and its verdict is "
            "listed in `docs/uw_audit.md` of the dialshift repository.")


def _imp_table(facts: dict) -> str:
    rows = ["| config | importance interval | instances | paper | mean targets | paper |",
            "|---|---|---:|---:|---:|---:|"]
    for bucket in range(1, NUM_BUCKETS + 1):
        count, mean = PAPER_TABLE2[bucket]
        fact = facts.get(f"uw_imp_{bucket}")
        low, high = 100 * (bucket - 1) // NUM_BUCKETS, 100 * bucket // NUM_BUCKETS
        if fact is None:
            rows.append(f"| uw_imp_{bucket} | [{low}, {high}) | not built | {count:,} | - | {mean:.2f} |")
        else:
            rows.append(f"| uw_imp_{bucket} | [{low}, {high}) | {_test(fact):,} | {count:,} | "
                        f"{fact['mean_replacements']:.2f} | {mean:.2f} |")
    return "\n".join(rows)


def _ic_sr_table(facts: dict) -> str:
    rows = ["| config | test instances | mean context turns |", "|---|---:|---:|"]
    names = [f"ic_{k}of{IC_WINDOW}" for k in range(IC_WINDOW)] + [f"sr_{n}" for n in range(IC_WINDOW, 0, -1)]
    for name in names:
        if name in facts:
            rows.append(f"| {name} | {_test(facts[name]):,} | {facts[name]['mean_context_turns']:.2f} |")
    return "\n".join(rows)
