"""The distracting family's card section, rendered from the facts every built config carries (kept configs too)."""

import string
from importlib import resources


def _first(facts: dict, key: str, default="n/a"):
    for fact in facts.values():
        if key in fact:
            return fact[key]
    return default


def _ubuntu_source(facts: dict) -> str:
    fact = facts.get("ubuntu")
    if fact is None:
        return "Not built in this folder."
    if fact["source"].startswith("lowe_csv"):
        return (f"Built from Lowe et al.'s Ubuntu Dialogue Corpus CSV (`{fact['source'].split(':', 1)[1]}`, "
                "`--ubuntu-csv`): rows with label 1 of train.csv and the ground-truth rows of valid.csv / test.csv; "
                "a context's `__eot__`-separated turns are its utterances (the `__eou__` parts of one turn joined by "
                "a space); single-turn contexts are left out.")
    return ("Built from the disentangled `#ubuntu` IRC conversations of Kummerfeld et al. (2019) (gold conversations "
            "of at least 3 annotated messages, the corpus's own train / dev / test logs), the same channel Lowe et "
            "al.'s Ubuntu Dialogue Corpus (the paper's data, not obtainable here) was extracted from. Each "
            "conversation's messages, in log order, become utterances: system lines are dropped by the reader; a "
            "leading addressee prefix (`nick: ...` or `nick, ...` naming a nick of the log) is removed; every URL "
            "becomes the token `__url__`; consecutive messages of one speaker are joined into one utterance (a "
            "space between); messages left empty are dropped.")


def _ubuntu_table(facts: dict) -> str:
    fact = facts.get("ubuntu")
    if fact is None:
        return ""
    processing = fact["processing"]
    keys = list(next(iter(processing.values())))
    lines = ["| | " + " | ".join(processing) + " |", "|---|" + "---:|" * len(processing)]
    for key in keys:
        lines.append(f"| {key.replace('_', ' ')} | " + " | ".join(f"{processing[s][key]:,}" for s in processing)
                     + " |")
    rows = fact["splits"]
    lines.append("| **rows (pairs) published** | " + " | ".join(f"{rows[s]['rows']:,}" for s in processing if s in rows)
                 + " |")
    return "\n".join(lines)


def _sentences_table(facts: dict) -> str:
    lines = ["| corpus | kind | sentences | rule | token counts in training |", "|---|---|---|---|---|"]
    seen = set()
    for fact in facts.values():
        if "sentences" not in fact:
            continue
        kind = "frequent" if "most frequent" in fact["rule"] else "rare"
        key = (fact["corpus"], kind)
        if key in seen:
            continue
        seen.add(key)
        counts = ", ".join(f"{word} {count:,}" for word, count in fact["word_counts"].items())
        passed = f" (passed over: {'; '.join(fact['rejected'])})" if fact["rejected"] else ""
        lines.append(f"| {fact['corpus']} | {kind} | {' / '.join(fact['sentences'])} | {fact['rule']}{passed} | "
                     f"{counts} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def _shifted_table(facts: dict) -> str:
    lines = ["| config | rows | dialogues | of test pairs | mean distractions | mean context utterances |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, fact in facts.items():
        if "min_history" not in fact:
            continue
        test = fact["splits"]["test"]
        lines.append(f"| `{name}` | {test['rows']:,} | {test['dialogues']:,} | {fact['test_pairs']:,} | "
                     f"{fact['mean_distractors']:.2f} | {fact['mean_context_turns']:.2f} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def render_section(facts: dict) -> str:
    template = resources.files("dialshift_cards").joinpath("distracting.md").read_text(encoding="utf-8")
    rules = {"frequent_top": "N", "rare_max": "N"}
    for fact in facts.values():
        if "sentences" in fact and "most frequent" in fact["rule"]:
            rules["frequent_top"] = fact["rule"].split("among the ")[1].split(" ")[0]
        elif "sentences" in fact:
            rules["rare_max"] = fact["rule"].split("1..")[1].split(" ")[0]
    return string.Template(template).substitute(
        window=_first(facts, "window"),
        seed=_first(facts, "seed"),
        redraw=_first(facts, "redraw_seed", "n/a (no random set built)"),
        ubuntu_source=_ubuntu_source(facts),
        ubuntu_table=_ubuntu_table(facts),
        sentences_table=_sentences_table(facts),
        shifted_table=_shifted_table(facts),
        **rules,
    )
