"""The Korean family's card section, rendered from the facts every built config carries (kept configs included)."""

import string
from importlib import resources

from .pipeline import TYPES

#: Han et al. (2021) Table 2: the paper's datasets (pairs, candidates, pos:neg, mean context turns).
PAPER_TABLE2 = {"train": ("500K", 2, "1:1", 4.6), "validation": ("10K", 10, "1:9", 4.5),
                "test": ("10K", 10, "1:9", 4.6), "adversarial": ("4,440", 2, "1:1", 2.9)}
PAPER_TRAIN_PAIRS = 500_000


def render_section(facts: dict) -> str:
    template = resources.files("dialshift_cards").joinpath("korean.md").read_text(encoding="utf-8")
    adversarial = facts.get("kor_adv") or _merged_types(facts)
    chitchat = facts.get("kor_chitchat")
    settings = chitchat["settings"] if chitchat else {"kor_split": "0.1,0.1"}
    validation, test = settings["kor_split"].split(",")
    train_pairs = chitchat["splits"]["train"]["pairs"] if chitchat else None
    return string.Template(template).substitute(
        seed=adversarial.get("seed", "-") if adversarial else "-",
        gold_first=f"{adversarial['gold_first']:,}" if adversarial else "-",
        cases=f"{adversarial['cases']:,}" if adversarial else "-",
        adv_table=_adv_table(facts),
        examples=_examples(adversarial),
        val_share=validation, test_share=test,
        chitchat_table=_chitchat_table(chitchat, adversarial),
        train_share=(f"{train_pairs:,} pairs, {train_pairs / PAPER_TRAIN_PAIRS:.1%}" if train_pairs is not None
                     else "(not built)"),
    )


def _merged_types(facts: dict) -> dict | None:
    """The adversarial facts from the per-type configs when ``kor_adv`` itself is not in the folder."""
    parts = [facts[f"kor_adv_{kind}"] for kind in TYPES if f"kor_adv_{kind}" in facts]
    if not parts:
        return None
    cases = sum(part["cases"] for part in parts)
    return {"cases": cases, "gold_first": sum(part["gold_first"] for part in parts), "seed": parts[0]["seed"],
            "per_type": {k: v for part in parts for k, v in part["per_type"].items()},
            "examples": {k: v for part in parts for k, v in part["examples"].items()},
            "mean_context_turns": sum(part["mean_context_turns"] * part["cases"] for part in parts) / max(cases, 1),
            "sessions": None}


def _adv_table(facts: dict) -> str:
    rows = ["| config | cases | paper (Table 1) | sessions | mean context turns |", "|---|---:|---:|---:|---:|"]
    whole = facts.get("kor_adv")
    if whole:
        rows.append(f"| kor_adv | {whole['cases']:,} | 2,220 | {whole['sessions']:,} | "
                    f"{whole['mean_context_turns']:.2f} |")
    for kind, paper in TYPES.items():
        fact = facts.get(f"kor_adv_{kind}")
        if fact:
            rows.append(f"| kor_adv_{kind} | {fact['cases']:,} | {paper:,} | {fact['sessions']:,} | "
                        f"{fact['mean_context_turns']:.2f} |")
        elif whole:
            rows.append(f"| (type {kind} in kor_adv) | {whole['per_type'][kind]:,} | {paper:,} | - | - |")
    return "\n".join(rows)


def _examples(adversarial: dict | None) -> str:
    if not adversarial:
        return ""
    rows = ["One case per type (the first of its file; the paper's Table 1 shows English glosses of others):", "",
            "| type | context | correct | adversarial |", "|---|---|---|---|"]
    for kind, example in adversarial["examples"].items():
        context = " / ".join(example["context"]).replace("|", "\\|")
        rows.append(f"| {kind} | {context} | {example['correct'].replace('|', '/')} | "
                    f"{example['adversarial'].replace('|', '/')} |")
    return "\n".join(rows)


def _chitchat_table(chitchat: dict | None, adversarial: dict | None) -> str:
    rows = ["| split | instances | pairs | paper pairs | candidates | pos:neg | mean context turns | paper turns "
            "| dialogues (XPersona / ChatbotData) |", "|---|---:|---:|---:|---:|---|---:|---:|---|"]
    for split in ("train", "validation", "test"):
        pairs, candidates, ratio, turns = PAPER_TABLE2[split]
        fact = chitchat["splits"].get(split) if chitchat else None
        if fact is None:
            rows.append(f"| {split} | not built | - | {pairs} | {candidates} | {ratio} | - | {turns} | - |")
            continue
        dialogues = fact["dialogues"]
        rows.append(f"| {split} | {fact['instances']:,} | {fact['pairs']:,} | {pairs} | {fact['candidates']} | "
                    f"1:{fact['candidates'] - 1} | {fact['mean_context_turns']:.2f} | {turns} | "
                    f"{dialogues['xpersona_ko']:,} / {dialogues['chatbotdata']:,} |")
    pairs, candidates, ratio, turns = PAPER_TABLE2["adversarial"]
    if adversarial:
        rows.append(f"| adversarial (kor_adv) | {adversarial['cases']:,} | {2 * adversarial['cases']:,} | {pairs} | "
                    f"2 | 1:1 | {adversarial['mean_context_turns']:.2f} | {turns} | - |")
    return "\n".join(rows)
