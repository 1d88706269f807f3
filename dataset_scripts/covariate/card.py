"""The covariate-shift card section, rendered from the facts every built config carries (kept configs included)."""

import string
from importlib import resources

from dialshift.configs import natural_key

from .clusters import BENCHMARKS, CLUSTERS, CORPORA

#: Table 2: benchmark -> split -> (in-scope, out-of-scope); the paper's VAL is our validation + validation_hold.
PAPER_TABLE2 = {"clinc14_cov": {"train": (1400, 0), "validation": (280, 100), "test": (420, 1000),
                                "cov_test": (420, 1000)},
                "hwu12_cov": {"train": (5055, 0), "validation": (815, 100), "test": (1028, 1000),
                              "cov_test": (1080, 1000)}}
#: Table A1 for HWU12-COV: intent -> (train, dev, test, cov-test); every CLINC14-COV intent is (100, 20, 30, 30).
PAPER_A1_HWU = {"alarm_query": (288, 36, 53, 90), "cooking_recipe": (361, 59, 91, 90),
                "qa_definition": (425, 71, 76, 90),
                "alarm_remove": (174, 24, 32, 90), "weather_query": (728, 143, 175, 90),
                "play_music": (794, 141, 195, 90), "datetime_query": (501, 81, 107, 90),
                "transport_traffic": (272, 38, 34, 90), "calendar_query": (724, 119, 145, 90),
                "takeaway_order": (290, 38, 41, 90), "alarm_set": (341, 47, 60, 90),
                "general_repeat": (157, 18, 19, 90)}
#: Licences of the corpora as found (../shared/data/README.md and each folder's SOURCE.md).
LICENCES = {"clinc": "CC BY 3.0", "hwu64": "CC BY 4.0", "massive": "CC BY 4.0", "snips": "CC0 1.0",
            "banking": "CC BY 4.0", "rostd": "**unknown** (no licence in the source repository)"}


def paper_a1(bench: str, intent: str) -> tuple:
    return (100, 20, 30, 30) if bench == "clinc14_cov" else PAPER_A1_HWU.get(intent, ("-",) * 4)


def render_section(facts: dict) -> str:
    template = resources.files("dialshift_cards").joinpath("covariate.md").read_text(encoding="utf-8")
    settings = next(iter(facts.values()))["settings"]
    return string.Template(template).substitute(
        cluster_table=_cluster_table(),
        licence_table=_licence_table(settings),
        table2=_table2(facts),
        table_a1=_table_a1(facts),
        cov_pools=_cov_pools(facts),
        dedup=_dedup(facts),
        seed=settings["seed"],
        hold_fraction=f"{settings['hold_fraction']:g}",
        dedup_rule=settings["dedup"],
        rostd=("**excluded** (`--cov-exclude-rostd`): alarm_remove, alarm_query and reminder have no cov_test "
               "utterances in this build" if settings["exclude_rostd"] else
               "included (as in the paper); `--cov-exclude-rostd` leaves it out"),
    )


def _cluster_table() -> str:
    rows = ["| # | name | members | CLINC14-COV | HWU12-COV |", "|---:|---|---|---|---|"]
    for cluster in CLUSTERS:
        cells = []
        for bench in BENCHMARKS.values():
            if cluster in bench.clusters():
                cells.append(f"class `{bench.intent(cluster)}`; cov: {', '.join(bench.cov_members(cluster)) or '-'}")
            else:
                cells.append("-")
        rows.append(f"| {cluster[0]} | {cluster[1]} | {', '.join(cluster[2])} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def _licence_table(settings: dict) -> str:
    rows = ["| corpus | dialshift source | licence | used for |", "|---|---|---|---|"]
    uses = {"clinc": "CLINC14 classes, OOS of both benchmarks, HWU12 cov_test",
            "hwu64": "HWU12 classes, CLINC14 cov_test",
            "massive": "HWU12 classes, CLINC14 cov_test", "snips": "cov_test of both",
            "banking": "CLINC14 cov_test (card_declined)",
            "rostd": "cov_test of both" + (" (excluded in this build)" if settings["exclude_rostd"] else "")}
    for corpus, info in CORPORA.items():
        rows.append(f"| {info.title} | `{info.source}` | {LICENCES[corpus]} | {uses[corpus]} |")
    return "\n".join(rows)


def _counts(fact: dict, split: str) -> tuple[int, int]:
    part = fact["splits"][split]
    return part["rows"] - part["oos"], part["oos"]


def _table2(facts: dict) -> str:
    rows = ["| config | train | validation | validation_hold | VAL (= both) | paper VAL | test | paper | cov_test "
            "| paper |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, fact in sorted(facts.items(), key=lambda item: natural_key(item[0])):
        paper = PAPER_TABLE2[fact["benchmark"]]
        cell = lambda counts: f"{counts[0]:,} ({counts[1]:,})"  # noqa: E731
        val, hold = _counts(fact, "validation"), _counts(fact, "validation_hold")
        train_paper = "-" if fact["shots"] else cell(paper["train"])
        rows.append(f"| {name} | {cell(_counts(fact, 'train'))} (paper {train_paper}) | {cell(val)} | {cell(hold)} | "
                    f"{cell((val[0] + hold[0], val[1] + hold[1]))} | {cell(paper['validation'])} | "
                    f"{cell(_counts(fact, 'test'))} | {cell(paper['test'])} | {cell(_counts(fact, 'cov_test'))} | "
                    f"{cell(paper['cov_test'])} |")
    return "\n".join(rows)


def _table_a1(facts: dict) -> str:
    parts = []
    for bench in BENCHMARKS:
        fact = facts.get(bench)
        if fact is None:
            parts.append(f"(`{bench}` is not in this folder)")
            continue
        rows = [f"**{BENCHMARKS[bench].title}** (ours / paper)", "",
                "| intent | train | validation + hold | test | cov_test |", "|---|---:|---:|---:|---:|"]
        labels = list(fact["splits"]["test"]["labels"])
        for intent in sorted(labels, key=lambda x: (x == "oos", x)):
            if intent == "oos":
                continue
            ours = [fact["splits"][s]["labels"].get(intent, 0) for s in ("train", "validation", "validation_hold",
                                                                          "test", "cov_test")]
            paper = paper_a1(bench, intent)
            rows.append(f"| {intent} | {ours[0]} / {paper[0]} | {ours[1] + ours[2]} / {paper[1]} | {ours[3]} / "
                        f"{paper[2]} | {ours[4]} / {paper[3]} |")
        parts.append("\n".join(rows))
    return "\n\n".join(parts)


def _cov_pools(facts: dict) -> str:
    rows = ["| benchmark | intent | distinct utterances available (by corpus) | left out as repeats (of an i.i.d. "
            "utterance, or within the pool) |", "|---|---|---|---:|"]
    for bench in BENCHMARKS:
        fact = facts.get(bench)
        if fact is None:
            continue
        for intent, pool in fact["cov_pool"].items():
            members = ", ".join(f"{corpus} {count:,}" for corpus, count in sorted(pool["members"].items())) or "none"
            rows.append(f"| {BENCHMARKS[bench].title} | {intent} | {pool['available']:,} ({members}) | "
                        f"{fact['cov_excluded_repeats'].get(intent, 0):,} |")
    return "\n".join(rows)


def _dedup(facts: dict) -> str:
    fact = facts.get("hwu12_cov")
    if fact is None:
        return "(computed when `hwu12_cov` is built)"
    dropped = fact["dedup_dropped"]
    if fact["settings"]["dedup"] == "none":
        return ("This build concatenates HWU64 and MASSIVE as released (`--cov-dedup none`), so many utterances "
                "occur in several splits.")
    return (f"This build dropped {dropped['test']:,} repeated test, {dropped['validation']:,} validation and "
            f"{dropped['train']:,} train utterances of HWU12-COV (each a repeat of an utterance kept in an earlier "
            "split of the priority order or, within a split, in HWU64).")
