"""Rows of CLINC14-COV and HWU12-COV from the raw corpora (Khosla & Gangadharaiah 2022, §2).

Every random choice is a ranking by :func:`~dialshift.shifts.seeding.stable_hash` of ``(seed, purpose, record id)``:
a record's fate does not depend on the order or presence of the others, and a rebuild is byte-identical.
"""

import re
from collections import Counter
from dataclasses import dataclass, field

from dialshift.errors import DialshiftError
from dialshift.shifts.seeding import stable_hash

from .clusters import ABSENT, CORPORA, Benchmark, check_clusters, split_member

OOS = "oos"
OOS_SOURCE = "clinc150_full"
#: Splits of the i.i.d. corpora, in the priority that global de-duplication keeps a repeated utterance in.
IID_PRIORITY = ("test", "validation", "train")
SPLITS = ("train", "validation", "validation_hold", "test", "cov_test")
DEDUP_RULES = ("global", "none")


def normalise(text: str) -> str:
    """The de-duplication key: lower-cased, every non-alphanumeric run turned into one space, stripped."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def rank_key(seed: int, purpose: str, record_id: str) -> int:
    return stable_hash(f"{seed}\x1f{purpose}\x1f{record_id}")


def take_ranked(records: list, count: int, seed: int, purpose: str) -> list:
    """The ``count`` records with the smallest hash of ``(seed, purpose, id)``, in that order."""
    return sorted(records, key=lambda r: rank_key(seed, purpose, r["id"]))[:count]


@dataclass
class Sources:
    """The raw corpora, loaded once per build, and the in-scope intents each one has."""

    loaded: dict = field(default_factory=dict)  # corpus -> {split: [IntentExample]}
    oos: dict = field(default_factory=dict)  # split -> CLINC out-of-scope records

    @classmethod
    def load(cls, data_dir, corpora) -> "Sources":
        from dialshift.sources import load_source, sources

        result = cls()
        for corpus in corpora:
            result.loaded[corpus] = load_source(CORPORA[corpus].source, data_dir)
        clinc = result.loaded.get("clinc") or load_source(OOS_SOURCE, data_dir)
        result.oos = {"validation": clinc["oos_validation"], "test": clinc["oos_test"]}
        intents = {corpus: {r.label for split in CORPORA[corpus].splits for r in data[split] if not r.is_ood}
                   for corpus, data in result.loaded.items()}
        paths = {corpus: sources()[CORPORA[corpus].source].path for corpus in result.loaded}
        check_clusters(intents, paths)
        return result

    def records(self, member: str, splits=None):
        """``(split, record)`` of every in-scope record of a member, in the corpus's split and file order."""
        corpus, intent = split_member(member)
        if member in ABSENT:
            return
        data = self.loaded[corpus]
        for split in splits or CORPORA[corpus].splits:
            for record in data[split]:
                if record.label == intent and not record.is_ood:
                    yield split, record


def row(record, corpus: str, split: str, label: str, cluster: int) -> dict:
    return {"id": record.id, "text": record.text.strip(), "label": label, "source": corpus,
            "source_label": record.label, "source_split": split, "cluster": cluster}


@dataclass(frozen=True)
class BuildSettings:
    seed: int = 0
    hold_fraction: float = 0.5
    dedup: str = "global"
    exclude_rostd: bool = False


def build_benchmark(bench: Benchmark, sources: Sources, settings: BuildSettings) -> tuple[dict, dict]:
    """``({split: [row]}, facts)`` of the full-data config of ``bench``."""
    if settings.dedup not in DEDUP_RULES:
        raise DialshiftError(f"--cov-dedup {settings.dedup!r}: choose one of {', '.join(DEDUP_RULES)}")
    if not 0.0 < settings.hold_fraction < 1.0:
        raise DialshiftError(f"--cov-hold-fraction {settings.hold_fraction}: must be strictly between 0 and 1")
    clusters = bench.clusters()
    # i.i.d. rows: priority order test > validation > train, corpora in the benchmark's order (HWU64 before MASSIVE)
    iid: dict[str, list[dict]] = {split: [] for split in IID_PRIORITY}
    seen: set[str] = set()
    iid_texts: set[str] = set()
    dropped: Counter = Counter()
    for split in IID_PRIORITY:
        for cluster in clusters:
            label = bench.intent(cluster)
            for member in bench.iid_members(cluster):
                corpus = split_member(member)[0]
                for _, record in sources.records(member, (split,)):
                    key = normalise(record.text)
                    iid_texts.add(key)
                    if settings.dedup == "global" and key in seen:
                        dropped[split] += 1
                        continue
                    seen.add(key)
                    iid[split].append(row(record, corpus, split, label, cluster[0]))
    for split in IID_PRIORITY:
        iid[split].sort(key=lambda r: r["id"])
    # out-of-scope: CLINC's validation (100) and test (1,000) OOS queries
    oos = {split: [row(r, "clinc", f"oos_{split}", OOS, -1) for r in records]
           for split, records in sources.oos.items()}
    # VAL-HOLD: per class (oos included), the hold_fraction of validation with the smallest hash
    by_label: dict[str, list[dict]] = {}
    for item in iid["validation"] + oos["validation"]:
        by_label.setdefault(item["label"], []).append(item)
    hold_ids = {item["id"] for items in by_label.values()
                for item in take_ranked(items, round(len(items) * settings.hold_fraction), settings.seed, "hold")}
    validation = [item for item in iid["validation"] + oos["validation"] if item["id"] not in hold_ids]
    hold = [item for item in iid["validation"] + oos["validation"] if item["id"] in hold_ids]
    # cov-test: per class, cov_per_intent utterances of the other members, none repeating an i.i.d. utterance
    cov, pools, excluded = [], {}, Counter()
    for cluster in clusters:
        label = bench.intent(cluster)
        candidates = [(record.id, split_member(member)[0], split, record) for member in bench.cov_members(cluster)
                      if not (member.startswith("rostd:") and settings.exclude_rostd)
                      for split, record in sources.records(member)]
        pool, keys = [], set()
        for _, corpus, split, record in sorted(candidates, key=lambda item: item[0]):  # a repeat keeps the smallest id
            key = normalise(record.text)
            if key in iid_texts or key in keys:
                excluded[label] += 1
                continue
            keys.add(key)
            pool.append(row(record, corpus, split, label, cluster[0]))
        pools[label] = {"available": len(pool), "members": Counter(item["source"] for item in pool)}
        chosen = take_ranked(pool, bench.cov_per_intent, settings.seed, f"cov/{bench.name}/{label}")
        cov.extend(sorted(chosen, key=lambda r: r["id"]))
    rows = {"train": iid["train"], "validation": validation, "validation_hold": hold,
            "test": iid["test"] + oos["test"], "cov_test": cov + oos["test"]}
    facts = {"dedup_dropped": {split: dropped[split] for split in IID_PRIORITY},
             "cov_pool": {label: {"available": value["available"], "members": dict(value["members"])}
                          for label, value in pools.items()},
             "cov_excluded_repeats": dict(excluded)}
    return rows, facts


def few_shot(rows: dict, shots: int, seed: int) -> dict:
    """The same splits with ``shots`` training utterances per class (nested: the 5-shot set is in the 10-shot set)."""
    by_label: dict[str, list[dict]] = {}
    for item in rows["train"]:
        by_label.setdefault(item["label"], []).append(item)
    chosen = {item["id"] for items in by_label.values() for item in take_ranked(items, shots, seed, "shots")}
    return {**rows, "train": [item for item in rows["train"] if item["id"] in chosen]}
