#!/usr/bin/env python
"""Tables 3-4 of Han et al. (2021) beside ours and the verdicts by the rule, written into docs/reproduction_han.md.

    python docs/reproduction_han/make_tables.py            # render the committed runs/ into the report
    python docs/reproduction_han/make_tables.py --check    # exit 1 when the report is not what this renders
    python docs/reproduction_han/make_tables.py --dataset KOR_DS --run baseline=P0 --run +deb=P1 [...]  # collect
    python docs/reproduction_han/make_tables.py --dataset KOR_DS --rerank baseline=MODEL_DIR [...]  # real-env proxy
    python docs/reproduction_han/make_tables.py --checksums   # after --rerank: rewrite the sha256.json files

With no ``--run``, the runs committed under ``runs/<variant>/seed_<s>/`` are rendered between the ``make_tables``
markers of the report (seed 0 alone, then seeds 0 and 1), with every verdict by :mod:`dialshift.verdicts` (per-seed
paired differences between two variants, weighed against the paper's own difference, with the power and the seeds
for power 0.8), the status paragraph and the readings beside the tables (the seed-0 and two-seed readings, the
adversarial ECE, Interrogative Word, the real-environment proxy and its cost, the runs' CPU seconds and the
throughput of ``benchmark_cpu*.json``), whose every number is rendered from these files; beside this script it
writes ``summary.json``, the findings counted by outcome that ``docs/make_status.py`` renders the README's status
paragraph from (``--check`` compares it too). ``--check`` first
verifies the committed files: ``runs/sha256.json`` and ``real_env/sha256.json`` (whose digests the status paragraph
shows), each run's ``run.json`` and ``command.json`` against its folder, and each ``results.json`` against the kept
predictions. With ``--run NAME=DIR`` (``NAME`` a Table 3 variant; one ``--run`` per seed), the prediction folders of
``trainers/debias.py --predictions`` (``DIR/kor_adv``, ``DIR/kor_chitchat``, scored: ``results.json`` in each, and
the runner's ``DIR/command.json``) are copied into ``runs/`` with the gold candidates from ``--dataset``, and
``runs/sha256.json`` is rewritten. A variant
with several seeds is shown as mean ± sd over its seeds. Paired differences (variant - baseline, +UMS+deb - +UMS) are
per-case differences of correctness (averaged over a variant's seeds) on the same cases, with a 95 % percentile
bootstrap interval (scipy, 1,000 resamples, seed 0).

The real-environment proxy (``real_env/``): ``dialshift retrieve`` wrote ``real_env/candidates.jsonl.gz`` (a
bi-encoder's top 10 over the ``kor_chitchat`` utterance pool plus the gold, per test context) with its ``run.json``
and ``command.json``. ``--rerank NAME=MODEL_DIR`` (a ``trainers/debias.py`` model folder; NAME its Table 3 row)
scores those candidates with the model and writes ``real_env/rerank/<NAME>-seed<S>/``: ``predictions.jsonl.gz`` (the
scores of each instance's candidates), ``run.json`` (the model's description) and ``command.json`` (the commit and
command of the re-ranking and, from ``MODEL_DIR/command.json``, of the training). With no arguments those files give
the real-environment table: Precision@1 against the gold (the only candidate known to be a sensible reply), how
often the chosen response repeats a context turn, and the verdicts on the paper's real-environment differences.
"""

import argparse
import gzip
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import bootstrap

from dialshift import reports, run_files
from dialshift.across_seeds import mean_sd
from dialshift.errors import DialshiftError
from dialshift.verdicts import MAX_SEEDS, MIN_SEEDS, OUTCOMES, outcome_counts, verdict

TYPES = ["repetition", "negation", "tense", "subject_object", "lexical_contradiction", "interrogative_word", "topic"]
TYPE_NAMES = {"repetition": "Repetition", "negation": "Negation", "tense": "Tense", "subject_object": "Subject-Object",
              "lexical_contradiction": "Lexical Contradiction", "interrogative_word": "Interrogative Word",
              "topic": "Topic"}
PAPER_TABLE3 = {"baseline": ("86.4 ± 0.5", "39.4 ± 1.7"), "+deb": ("85.4 ± 0.7", "43.5 ± 2.3"),
                "+UMS": ("87.5 ± 0.7", "42.9 ± 2.5"), "+UMS+deb": ("87.0 ± 0.7", "47.2 ± 2.1")}
PAPER_TABLE4 = {"baseline": [12.9, 36.1, 41.8, 55.0, 41.1, 46.1, 50.7],
                "+deb": [26.2, 40.6, 43.0, 56.2, 43.9, 45.5, 51.8],
                "+UMS": [26.2, 34.5, 45.3, 61.2, 41.6, 46.4, 51.1],
                "+UMS+deb": [40.0, 38.5, 46.9, 63.9, 43.3, 45.9, 52.8]}
HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "reproduction_han.md"
RUNS = HERE / "runs"
SUMMARY = HERE / "summary.json"
GENERATOR = "docs/reproduction_han/make_tables.py"
#: the report's blocks: which committed seeds each one renders
BLOCKS = {"seed 0": (0,), "two seeds": (0, 1)}
CONFIGS = ("kor_adv", "kor_chitchat")
#: folder name of each Table 3 variant under ``runs/``
SLUGS = {"baseline": "baseline", "+deb": "deb", "+UMS": "ums", "+UMS+deb": "ums_deb"}
REAL_ENV = HERE / "real_env"
#: Table 3's real-environment column (Precision@1, %, mean ± sd over 10 seeds; human-labelled candidates).
PAPER_REAL_ENV = {"baseline": "36.2 ± 0.9", "+deb": "36.5 ± 0.6", "+UMS": "38.8 ± 0.6", "+UMS+deb": "40.4 ± 0.7"}
VARIANTS = ("baseline", "+deb", "+UMS", "+UMS+deb")
COMPARISONS = [("+deb", "baseline"), ("+UMS", "baseline"), ("+UMS+deb", "baseline"), ("+UMS+deb", "+UMS")]


def correctness(folder: Path, config: str, labels: dict) -> dict:
    """``{id: 1.0 if the gold candidate has the highest score else 0.0}`` of one predictions file."""
    result = {}
    for line in read_text(folder / config / f"{config}.jsonl").splitlines():
        row = json.loads(line)
        result[row["id"]] = float(int(np.argmax(row["scores"])) == labels[row["id"]])
    return result


def paired(a: dict, b: dict, ids=None) -> dict:
    """Mean per-case difference a - b (points of P@1) over the shared ids and its 95 % bootstrap interval."""
    ids = sorted(set(a) & set(b) if ids is None else ids)
    diff = np.array([a[i] - b[i] for i in ids])
    ci = bootstrap((diff,), np.mean, n_resamples=1000, method="percentile", random_state=0).confidence_interval
    return {"difference": 100 * diff.mean(), "low": 100 * ci.low, "high": 100 * ci.high, "cases": len(ids)}


def read_text(path: Path) -> str:
    """A predictions file, or its gzip-compressed copy (``PATH.gz``) as committed under ``runs/`` (a one-line error
    when it is missing, truncated or corrupt)."""
    if path.exists():
        return path.read_text(encoding="utf-8")
    return run_files.read_gzip_text(path.with_name(path.name + ".gz"))


def dataset_labels(dataset) -> dict:
    """``{config: {id: index of the gold candidate}}`` of the ``kor_adv`` and ``kor_chitchat`` test splits."""
    from dialshift.ranking.data import load_split

    return {config: {i: int(label) for i, label in zip(split["id"], split["label"], strict=True)}
            for config in CONFIGS for split in [load_split(dataset, config, "test", None, 0)]}


def collect(dataset, runs: dict, out: Path) -> dict:
    """Copy the prediction folders ``{name: [folder per seed]}`` of ``trainers/debias.py --predictions`` into
    ``out/<variant>/seed_<s>/``: per config the predictions (gzip, no timestamp: the same bytes for the same run),
    ``results.json`` and ``run.json``, and the folder's ``command.json`` (commit, command, threads, CPU seconds); the
    gold candidate of every test case goes to ``out/labels.json``. Returns ``{name: [copied folder per seed]}``."""
    from dialshift.errors import DialshiftError
    from dialshift.io import write_json_atomic

    for name, folders in runs.items():  # every folder checked before anything is copied
        for folder in map(Path, folders):
            if name not in SLUGS:
                raise DialshiftError(f"--run {name}={folder}: NAME must be one of {list(SLUGS)}")
            missing = [f for f in ("command.json", *(f"{c}/{n}" for c in CONFIGS
                                                     for n in (f"{c}.jsonl", "results.json", "run.json")))
                       if not (folder / f).is_file()]
            if missing:
                raise DialshiftError(f"{folder}: missing {', '.join(missing)} (a folder of trainers/debias.py "
                                     "--predictions with the runner's command.json)")
    copied = {}
    for name, folders in runs.items():
        for folder in map(Path, folders):
            seed = json.loads((folder / CONFIGS[0] / "run.json").read_text())["run"]["seeds"][0]
            target = out / SLUGS[name] / f"seed_{seed}"
            for config in CONFIGS:
                (target / config).mkdir(parents=True, exist_ok=True)
                data = (folder / config / f"{config}.jsonl").read_bytes()
                (target / config / f"{config}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
                for file_name in ("results.json", "run.json"):
                    (target / config / file_name).write_bytes((folder / config / file_name).read_bytes())
            (target / "command.json").write_bytes((folder / "command.json").read_bytes())
            copied.setdefault(name, []).append(target)
    write_json_atomic(out / "labels.json", dataset_labels(dataset))
    run_files.write_manifest(out, [p for p in out.rglob("*") if p.is_file() and p.name != run_files.MANIFEST])
    return copied


def committed_runs(seeds=None, out: Path | None = None) -> dict:
    """``{name: [folder per seed]}`` of the runs committed under ``runs/`` (variants in Table 3's order; only
    ``seeds`` when given)."""
    out = RUNS if out is None else out
    runs = {}
    for name, slug in SLUGS.items():
        folders = sorted((out / slug).glob("seed_*"), key=lambda f: int(f.name.split("_")[1]))
        folders = [f for f in folders if seeds is None or int(f.name.split("_")[1]) in seeds]
        if folders:
            runs[name] = folders
    return runs


def from_predictions(labels: dict, runs: dict) -> dict:
    """``{"runs", "table", "differences"}`` from the scored prediction folders ``{name: [folder per seed]}`` and the
    gold candidates ``{config: {id: index}}``."""
    table, correct = {}, {}
    for name, folders in runs.items():
        seeds = []
        for folder in map(Path, folders):
            adv, chit = (run_files.read_json(folder / config / "results.json") for config in labels)
            a, c = adv["results"]["kor_adv"], chit["results"]["kor_chitchat"]
            seeds.append({"in_domain": 100 * c["recall@1"], "adversarial": 100 * a["accuracy"],
                          "adversarial_ece": a.get("ece"), "types": {t: 100 * a[f"accuracy/{t}"] for t in TYPES},
                          "in_domain_interval": [100 * x for x in chit["intervals"]["kor_chitchat"]["recall@1"]],
                          "adversarial_interval": [100 * x for x in adv["intervals"]["kor_adv"]["accuracy"]],
                          "in_domain_instances": c["instances"]})
        table[name] = {"seeds": seeds, **{key: float(np.mean([s[key] for s in seeds]))
                                          for key in ("in_domain", "adversarial")},
                       "types": {t: float(np.mean([s["types"][t] for s in seeds])) for t in TYPES}}
        if all(s["adversarial_ece"] is not None for s in seeds):
            table[name]["adversarial_ece"] = float(np.mean([s["adversarial_ece"] for s in seeds]))
        # several seeds: per case, the fraction of the seeds' models that were right
        per_seed = [{config: correctness(folder, config, labels[config]) for config in labels}
                    for folder in map(Path, folders)]
        correct[name] = {config: {i: float(np.mean([s[config][i] for s in per_seed])) for i in per_seed[0][config]}
                         for config in labels}
    differences = {}
    for a, b in [(a, b) for a, b in COMPARISONS if a in runs and b in runs]:
        adv_a, adv_b = correct[a]["kor_adv"], correct[b]["kor_adv"]
        entry = {"in_domain": paired(correct[a]["kor_chitchat"], correct[b]["kor_chitchat"]),
                 "adversarial": paired(adv_a, adv_b)}
        for t in TYPES:
            entry[t] = paired(adv_a, adv_b, [i for i in adv_a if i.startswith(f"koradvmrs-{t}-")])
        differences[f"{a} - {b}"] = entry
    root = HERE.parent.parent
    shown = {name: [str(Path(f).resolve().relative_to(root)) if Path(f).resolve().is_relative_to(root) else str(f)
                    for f in folders] for name, folders in runs.items()}
    return {"runs": shown, "table": table, "differences": differences}


def render(data: dict) -> list[str]:
    """Table 3, Table 4 and the paired differences of :func:`from_predictions`'s result as markdown lines."""
    table, runs = data["table"], data["runs"]

    def cell(name, key, digits):
        seeds = table[name]["seeds"]
        if len(seeds) == 1:
            low, high = seeds[0][f"{key}_interval"]
            return f"{seeds[0][key]:.1f} [{low:.{digits}f}, {high:.{digits}f}]"
        return f"{mean_sd([s[key] for s in seeds])} ({len(seeds)} seeds)"

    instances = {s["in_domain_instances"] for t in table.values() for s in t["seeds"]}
    lines = ["### Table 3 beside ours (Precision@1, %)", "",
             f"| method | in-domain (paper) | in-domain (ours, n={'/'.join(map(str, sorted(instances)))}) | "
             "adversarial (paper) | adversarial (ours, n=2,220) | adversarial ECE (ours) |",
             "|---|---:|---:|---:|---:|---:|"]
    for name in runs:
        paper = PAPER_TABLE3.get(name, ("-", "-"))
        ece = table[name].get("adversarial_ece")
        lines.append(f"| {name} | {paper[0]} | {cell(name, 'in_domain', 0)} | {paper[1]} | "
                     f"{cell(name, 'adversarial', 1)} | {'-' if ece is None else f'{ece:.3f}'} |")
    lines += ["", "### Table 4 beside ours (Precision@1 %, paper / ours)", "",
              "| method | " + " | ".join(TYPE_NAMES[t] for t in TYPES) + " |", "|---|" + "---:|" * len(TYPES)]
    for name in runs:
        paper = PAPER_TABLE4.get(name, [None] * len(TYPES))
        cells = [f"{p if p is not None else '-'} / {table[name]['types'][t]:.1f}" for p, t in zip(paper, TYPES,
                                                                                                  strict=True)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if data["differences"]:
        lines += ["", "### Paired differences (points of P@1, 95 % bootstrap interval over the same cases)", "",
                  "| comparison | in-domain | adversarial | Repetition | Interrogative Word |",
                  "|---|---:|---:|---:|---:|"]
    for key, entry in data["differences"].items():
        cells = [entry[k] for k in ("in_domain", "adversarial", "repetition", "interrogative_word")]
        lines.append(f"| {key.replace(' - ', ' − ')} | " + " | ".join(
            f"{d['difference']:+.1f} [{d['low']:+.1f}, {d['high']:+.1f}]" for d in cells) + " |")
    return lines


#: The paper's findings: (text, variant a, variant b, quantity, the paper's a - b in points). The direction the rule
#: tests is the sign of the paper's difference (Tables 3 and 4, means over 10 seeds).
FINDINGS = [
    ("UMS raises adversarial P@1 on the baseline", "+UMS", "baseline", "adversarial", 42.9 - 39.4),
    ("Debiasing raises adversarial P@1 on the baseline", "+deb", "baseline", "adversarial", 43.5 - 39.4),
    ("Debiasing raises adversarial P@1 on UMS", "+UMS+deb", "+UMS", "adversarial", 47.2 - 42.9),
    ("The gain is large on Repetition (baseline)", "+deb", "baseline", "repetition", 26.2 - 12.9),
    ("The gain is large on Repetition (UMS)", "+UMS+deb", "+UMS", "repetition", 40.0 - 26.2),
    ("A small in-domain cost (baseline)", "+deb", "baseline", "in_domain", 85.4 - 86.4),
    ("A small in-domain cost (UMS)", "+UMS+deb", "+UMS", "in_domain", 87.0 - 87.5),
    ("No gain on Interrogative Word (baseline; paper -0.6)", "+deb", "baseline", "interrogative_word", 45.5 - 46.1),
    ("UMS and deb together beat deb alone adversarially", "+UMS+deb", "+deb", "adversarial", 47.2 - 43.5),
]


def seed_values(data: dict, name: str, quantity: str) -> list[float]:
    seeds = data["table"][name]["seeds"]
    return [s["types"][quantity] if quantity in TYPES else s[quantity] for s in seeds]


def paper_cell(name: str, quantity: str) -> float:
    """The paper's value of ``quantity`` for a variant (Table 3: in-domain, adversarial; Table 4: a type)."""
    if quantity in TYPES:
        return PAPER_TABLE4[name][TYPES.index(quantity)]
    return float(PAPER_TABLE3[name][0 if quantity == "in_domain" else 1].split()[0])


def citation(a: str, b: str, quantity: str) -> str:
    table = 4 if quantity in TYPES else 3
    column = TYPE_NAMES.get(quantity, quantity.replace("_", "-"))
    return f"Table {table}, {column}: {a} {paper_cell(a, quantity):.1f} − {b} {paper_cell(b, quantity):.1f}"


Z_POWER = 1.959964 + 0.841621  # two-sided 5 % and power 0.8: the normal approximation's sum of quantiles


def cases_for_power(labels: dict, runs: dict, a: str, b: str, quantity: str, paper: float) -> int | None:
    """The test cases at which case sampling alone gives power 0.8 at the paper's effect (normal approximation,
    two-sided 5 %), from the spread of the per-case paired differences of correctness (pooled over the seeds)."""
    config = "kor_chitchat" if quantity == "in_domain" else "kor_adv"
    variances = []
    for fa, fb in zip(runs[a], runs[b], strict=True):
        ca, cb = (correctness(Path(f), config, labels[config]) for f in (fa, fb))
        ids = [i for i in sorted(set(ca) & set(cb)) if quantity in ("in_domain", "adversarial")
               or i.startswith(f"koradvmrs-{quantity}-")]
        if len(ids) < 2:
            return None
        variances.append(np.var([100 * (ca[i] - cb[i]) for i in ids], ddof=1))
    return max(2, math.ceil((Z_POWER * math.sqrt(float(np.mean(variances))) / abs(paper)) ** 2))


def run_cpu(runs: dict) -> float:
    """Mean CPU seconds of one run (training and scoring of one variant and seed), from the ``command.json`` files."""
    return float(np.mean([run_files.read_json(Path(f) / "command.json")["cpu_seconds"]
                          for folders in runs.values() for f in folders]))


def finding_results(data: dict, labels: dict, runs: dict) -> list[dict]:
    """Per finding: the per-seed differences (seed i of a minus seed i of b), the verdict with the paper's value, and
    the cases for power 0.8."""
    results = []
    for text, a, b, quantity, paper in FINDINGS:
        differences = [x - y for x, y in zip(seed_values(data, a, quantity), seed_values(data, b, quantity),
                                             strict=True)]
        results.append({"text": text, "a": a, "b": b, "quantity": quantity, "paper": paper,
                        "differences": differences, "verdict": verdict(differences, "+" if paper > 0 else "-", paper),
                        "citation": citation(a, b, quantity),
                        "cases": cases_for_power(labels, runs, a, b, quantity, paper)})
    return results


def seeds_cell(v, per_seed_cpu: float) -> str:
    """Seeds for power 0.8 and the CPU minutes of the missing ones (two variants per seed)."""
    if v.seeds_for_power is None:
        return f"> {MAX_SEEDS:,}" if v.power is not None else "–"
    return f"{v.seeds_for_power} ({max(0, v.seeds_for_power - v.seeds) * 2 * per_seed_cpu / 60:,.0f})"


def verdict_lines(results: list[dict], per_seed_cpu: float) -> list[str]:
    """One row per finding: the per-seed differences, the verdict of :mod:`dialshift.verdicts` with the paper's value
    and power, the seeds and cases for power 0.8."""
    lines = ["| finding (paper, a − b in points) | ours: per-seed a − b | verdict by the rule (mean [interval], seeds; "
             "paper; power) | the paper's value (table, cells) | seeds for power 0.8 (CPU minutes to add them) | "
             "cases for power 0.8 |", "|---|---|---|---|---|---:|"]
    for r in results:
        cases = "–" if r["cases"] is None else f"{r['cases']:,}"
        lines.append(f"| {r['text']} ({r['a']} − {r['b']}: {r['paper']:+.1f}) | "
                     f"{' / '.join(f'{d:+.1f}' for d in r['differences'])} | {r['verdict'].cell()} | "
                     f"{r['paper']:+.1f} ({r['citation']}) | {seeds_cell(r['verdict'], per_seed_cpu)} | {cases} |")
    return lines


# ----------------------------------------------------------------------------------------------- real environment


def git_commit() -> str:
    """The commit of this checkout, with ``+uncommitted`` when tracked files differ from it."""
    root = HERE.parent.parent
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True,
                           text=True).stdout.strip()
    return (commit or "unknown") + ("+uncommitted" if dirty else "")


def rerank(dataset, models: list[tuple[str, str]], folder: Path = REAL_ENV, batch_size: int = 64) -> list[Path]:
    """Score the retrieved candidates of ``folder`` with each ``(name, model_dir)``; write ``folder/rerank/<name>-
    seed<S>/`` (predictions, run.json, command.json). Returns the folders written."""
    sys.path.insert(0, str(HERE.parent.parent))
    from tqdm.auto import tqdm

    from dialshift.errors import DialshiftError
    from dialshift.io import atomic_write, write_json_atomic
    from dialshift.ranking.retrieval import load_candidates
    from trainers.debias import instance_scores, load_model

    commit = git_commit()  # once, before any model: the code this run imported
    summary = json.loads((folder / "run.json").read_text(encoding="utf-8"))["retrieval"]
    split = load_candidates(dataset, folder, summary)
    written = []
    for name, model_dir in tqdm(models, desc="re-ranking", unit="model"):
        started, cpu = time.time(), resource.getrusage(resource.RUSAGE_SELF)
        model, encoder, meta = load_model(model_dir)
        if meta.get("variant") != name:
            raise DialshiftError(f"--rerank {name}={model_dir}: the model is a {meta.get('variant')!r} model; name it "
                                 "by its variant")
        scores = instance_scores(model, encoder, split, batch_size)
        out = folder / "rerank" / f"{name}-seed{meta['seed']}"
        out.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps({"id": i, "scores": [round(float(x), 5) for x in row]}) + "\n"
                        for i, row in zip(split["id"], scores, strict=True))
        atomic_write(out / "predictions.jsonl.gz", gzip.compress(lines.encode(), compresslevel=9, mtime=0))
        keep = ("variant", "seed", "backbone", "train_rows", "train_pairs", "max_length", "selected_step",
                "history", "biased_model", "dialshift_version")
        write_json_atomic(out / "run.json", {key: meta.get(key) for key in keep})
        usage = resource.getrusage(resource.RUSAGE_SELF)
        training = Path(model_dir) / "command.json"
        write_json_atomic(out / "command.json", {
            "commit": commit, "threads": int(os.environ.get("OMP_NUM_THREADS", "0")) or None,
            "command": ["python", "docs/reproduction_han/make_tables.py", "--dataset", "DS", "--rerank",
                        f"{name}=M/{Path(model_dir).name}"],
            "wall_seconds": round(time.time() - started, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime - cpu.ru_utime - cpu.ru_stime, 1),
            "training": json.loads(training.read_text(encoding="utf-8")) if training.is_file() else None})
        written.append(out)
    return written


def real_env_runs(folder: Path | None = None) -> dict[str, list[dict]]:
    """``{variant: [{"seed", "scores": {id: [...]}, "run", "command"}]}`` of the committed re-rankings, seeds in
    order."""
    folder = REAL_ENV if folder is None else folder
    runs: dict[str, list[dict]] = {}
    for run in sorted((folder / "rerank").glob("*/run.json")):
        description = run_files.read_json(run)
        if run.parent.name != f"{description.get('variant')}-seed{description.get('seed')}":
            raise DialshiftError(f"{run}: describes {description.get('variant')!r} seed {description.get('seed')!r}, "
                                 f"not the folder's {run.parent.name}")
        rows = run_files.read_jsonl_gz(run.parent / "predictions.jsonl.gz")
        runs.setdefault(description["variant"], []).append({
            "seed": description["seed"], "run": description,
            "command": run_files.read_json(run.parent / "command.json"),
            "scores": {row["id"]: row["scores"] for row in rows}})
    return {name: sorted(runs[name], key=lambda r: r["seed"]) for name in VARIANTS if name in runs}


def chosen(scores: dict, candidates: dict) -> dict[str, int]:
    """``{id: index of the highest-scored candidate}`` (ties: the first)."""
    return {i: int(np.argmax(scores[i])) for i in candidates}


def real_env_lines(folder: Path | None = None, found: dict | None = None, facts: dict | None = None) -> list[str]:
    """The retrieval's summary, the real-environment table beside the paper's, paired differences and verdicts
    (each comparison's ``(per-seed differences, Verdict)`` also put in ``found``; the numbers the reading below the
    table quotes in ``facts``, for :func:`real_env_reading`)."""
    found = {} if found is None else found
    facts = {} if facts is None else facts
    folder = REAL_ENV if folder is None else folder
    summary = run_files.read_json(folder / "run.json")["retrieval"]
    rows = {row["id"]: row for row in run_files.read_jsonl_gz(folder / "candidates.jsonl.gz")}
    runs = real_env_runs(folder)
    ranks = np.array([row["gold_pool_rank"] for row in rows.values()])
    k, n = summary["k"], len(rows)
    repeated = [x for r in rows.values() for j, x in enumerate(r["repeats_context"]) if j != r["label"]]
    lines = ["| retrieval | value |", "|---|---:|",
             f"| pool: distinct utterances of `{summary['config']}` ({', '.join(summary['pool_splits'])}) | "
             f"{summary['pool_size']:,} |",
             f"| test contexts (seeded subsample of the {summary['split_instances']:,} of `{summary['split']}`) | "
             f"{n:,} ({100 * n / summary['split_instances']:.1f} %) |",
             f"| candidates per context (top {k} retrieved, the gold excluded, + the gold) | "
             f"{summary['candidates_per_instance']} |",
             f"| the bi-encoder ranks the gold in its top {k} over the pool | {100 * np.mean(ranks <= k):.1f} % |",
             f"| median rank of the gold over the pool | {np.median(ranks):,.0f} |",
             f"| retrieved candidates that repeat a context turn | {100 * np.mean(repeated):.1f} % |",
             f"| contexts with at least one such candidate | "
             f"{100 * np.mean([any(r['repeats_context']) for r in rows.values()]):.1f} % |", ""]

    def correct(choice):
        return {i: float(choice[i] == rows[i]["label"]) for i in rows}

    def repeats(choice):
        return {i: float(rows[i]["repeats_context"][choice[i]]) for i in rows}

    bi_encoder = chosen({i: r["cosine"] for i, r in rows.items()}, rows)
    lines += [f"| method | real env. P@1 (paper, human labels, 10 candidates) | P@1 against the gold (ours, n={n}, "
              f"{k + 1} candidates, chance {100 / (k + 1):.1f}) | chosen response repeats a context turn (ours) | "
              "validation P@1 at selection (ours, n=50) | seeds |", "|---|---:|---:|---:|---:|---|"]
    alone = 100 * np.mean(list(correct(bi_encoder).values()))
    facts.update(k=k, contexts=n, split_instances=summary["split_instances"], pool=summary["pool_size"],
                 gold_in_top=100 * np.mean(ranks <= k), median_rank=float(np.median(ranks)),
                 with_repeat=100 * np.mean([any(r["repeats_context"]) for r in rows.values()]),
                 alone=alone, alone_repeats=100 * np.mean(list(repeats(bi_encoder).values())),
                 precision={}, repeats={}, bias_accuracy={}, cases={}, retrieval=run_files.read_json(
                     folder / "command.json"), runs=runs)
    lines.append(f"| bi-encoder alone (cosine; reference) | - | {alone:.1f} "
                 f"| {100 * np.mean(list(repeats(bi_encoder).values())):.1f} % | - | - |")
    per_seed, per_case = {}, {}
    for name, seeds in runs.items():
        choices = [chosen(seed["scores"], rows) for seed in seeds]
        per_seed[name] = [100 * np.mean(list(correct(c).values())) for c in choices]
        per_case[name] = {i: float(np.mean([correct(c)[i] for c in choices])) for i in rows}
        repeat = [100 * np.mean(list(repeats(c).values())) for c in choices]
        facts["precision"][name], facts["repeats"][name] = float(np.mean(per_seed[name])), float(np.mean(repeat))
        facts["bias_accuracy"][name] = [100 * seed["run"]["biased_model"]["train_accuracy"] for seed in seeds
                                        if seed["run"].get("biased_model")]
        validation = [100 * seed["run"]["history"][-1]["validation_precision@1"] for seed in seeds]
        lines.append(f"| {name} | {PAPER_REAL_ENV[name]} | {mean_sd(per_seed[name])} | {mean_sd(repeat)} % | "
                     f"{mean_sd(validation)} | {', '.join(str(seed['seed']) for seed in seeds)} |")
    pairs = [(a, b) for a, b in COMPARISONS + [("+UMS+deb", "+deb")] if a in runs and b in runs]
    if pairs:
        lines += ["", "| comparison | paper (points, Table 3 Real Env.) | ours per seed | paired over contexts, seeds "
                      "averaged (95 % bootstrap) | verdict by the rule (mean [interval], seeds; paper; power) | seeds "
                      "for power 0.8 (CPU minutes to add them) |", "|---:|---:|---|---:|---|---|"]
    per_seed_cpu = float(np.mean([(seed["command"].get("training") or {}).get("cpu_seconds", 0.0)
                                  + seed["command"]["cpu_seconds"] for seeds in runs.values() for seed in seeds]))
    for a, b in pairs:
        paper = float(PAPER_REAL_ENV[a].split()[0]) - float(PAPER_REAL_ENV[b].split()[0])
        common = min(len(per_seed[a]), len(per_seed[b]))
        differences = [x - y for x, y in zip(per_seed[a][:common], per_seed[b][:common], strict=True)]
        case = paired(per_case[a], per_case[b])
        result = verdict(differences, "+" if paper > 0 else "-", paper)
        found[f"{a} − {b}"] = (differences, result)
        facts["cases"][f"{a} − {b}"] = case
        lines.append(f"| {a} − {b} | {paper:+.1f} ({a} {PAPER_REAL_ENV[a].split()[0]} − {b} "
                     f"{PAPER_REAL_ENV[b].split()[0]}) | {' / '.join(f'{d:+.1f}' for d in differences)} | "
                     f"{case['difference']:+.1f} [{case['low']:+.1f}, {case['high']:+.1f}] | {result.cell()} | "
                     f"{seeds_cell(result, per_seed_cpu)} |")
    lines += ["", "| run | training commit | training threads, CPU s | re-ranking commit | re-ranking CPU s |",
              "|---|---|---|---|---:|"]
    for name, seeds in runs.items():
        for seed in seeds:
            command, training = seed["command"], seed["command"].get("training") or {}
            lines.append(f"| {name} seed {seed['seed']} | `{str(training.get('commit', '-'))[:10]}` | "
                         f"{training.get('threads', '-')}, {training.get('cpu_seconds', '-')} | "
                         f"`{command['commit'][:10]}` | {command['cpu_seconds']} |")
    return lines


def real_env_reading(facts: dict, found: dict) -> list[str]:
    """What the real-environment proxy shows, and its cost, from the numbers :func:`real_env_lines` put in
    ``facts`` (the paper's values cited from its Tables 2 and 3)."""
    k, precision, repeats = facts["k"], facts["precision"], facts["repeats"]
    shown = [name for name in VARIANTS if name in precision]
    paper = [float(PAPER_REAL_ENV[name].split()[0]) for name in shown]
    lines = [
        "What the proxy shows:", "",
        "- **The retrieval brings the adversarial case the paper describes.** e5, not trained for replies, retrieves "
        f"what resembles the context, not what answers it. Its top {k} hold the gold for {facts['gold_in_top']:.1f} % "
        f"of the contexts (median rank {facts['median_rank']:,.0f} of {facts['pool']:,}), and "
        + ("every context gets" if facts["with_repeat"] == 100 else f"{facts['with_repeat']:.1f} % of the contexts get")
        + " at least one of its own turns back among its candidates. Ranked by cosine alone, the chosen \"response\" "
        f"repeats a context turn {facts['alone_repeats']:.0f} % of the time, so the bi-encoder alone scores "
        f"{facts['alone']:.1f} against the gold.",
        f"- **Our rankers {'beat' if min(precision.values()) > 100 / (k + 1) else 'do not all beat'} chance but stay "
        f"far below the paper.** They reach {value_range(precision.values(), 1, ' %')} Precision@1 against the gold "
        f"(chance {100 / (k + 1):.1f} %), against the paper's {value_range(paper, 1, ' %')} with human labels and 4.4 "
        "positives per 10 (Tables 3 and 2). The two figures are not on one scale: ours counts only the gold as right, "
        "theirs every sensible reply. Our rankers choose a repetition of the context for "
        f"{value_range(repeats.values(), 0, ' %')} of the contexts."]
    for key, (differences, result) in found.items():
        a, b = key.split(" − ")
        case = facts["cases"][key]
        decided = result.outcome not in ("underpowered", "not decidable")
        accuracy = facts["bias_accuracy"].get(a, [])
        lines.append(
            f"- **{'Debiasing on the baseline' if key == '+deb − baseline' else key}: "
            f"{plural(result.seeds, 'seed')} {'give ' + result.outcome if decided else 'decide nothing'}.** The "
            f"paper's {result.paper:+.1f} points (Table 3 Real Env.) becomes "
            f"{' / '.join(f'{d:+.1f}' for d in differences)} over our seeds. Averaged over seeds and paired over the "
            f"{case['cases']} contexts, it is {case['difference']:+.1f} [{case['low']:+.1f}, {case['high']:+.1f}]; "
            "the rule's verdict, power and the seeds it would need are in the comparison table above. "
            f"{a} chooses a context repetition {'more' if repeats[a] > repeats[b] else 'less'} often than {b} "
            f"({repeats[a]:.1f} against {repeats[b]:.1f} %)."
            + (f" At {2 * facts['runs'][a][0]['run']['train_rows']:,} pairs the biased model stays near its random "
               f"initialisation (its training accuracy, `biased_model` in each run.json: "
               f"{' / '.join(f'{x:.1f}' for x in accuracy)} % at seeds "
               f"{', '.join(str(seed['seed']) for seed in facts['runs'][a])}), so {a} has no overlap bias to remove."
               if accuracy else ""))
    missing = [name for name in VARIANTS if name not in precision]
    if missing:
        real = {name: float(PAPER_REAL_ENV[name].split()[0]) for name in VARIANTS}
        lines[-1] += (f" The {', '.join(missing)} rows, where the paper sees its larger real-environment gains "
                      f"({real['+UMS+deb'] - real['+UMS']:+.1f} with debiasing, {real['+UMS'] - real['baseline']:+.1f} "
                      "from UMS; Table 3 Real Env.), were not run.")
    retrieval, runs = facts["retrieval"], [seed for seeds in facts["runs"].values() for seed in seeds]
    training = [seed["command"]["training"] for seed in runs if seed["command"].get("training")]
    steps = [retrieval] + training + [seed["command"] for seed in runs]
    total = sum(step["cpu_seconds"] for step in steps)
    lines += ["", "Cost (1 thread, `nice -n 10`, on the 2 shared cores, so wall times are "
              f"{value_range([step['wall_seconds'] / step['cpu_seconds'] for step in steps], 0)} times the CPU times; "
              f"all from the `command.json` files): the retrieval {retrieval['cpu_seconds']:.0f} CPU s "
              f"({retrieval['wall_seconds'] / 60:.0f} min wall; embedding the pool is nearly all of it), each training "
              f"{value_range([step['cpu_seconds'] for step in training], 0)} CPU s, each re-ranking of the "
              f"{facts['contexts'] * (k + 1):,} (context, candidate) pairs "
              f"{value_range([seed['command']['cpu_seconds'] for seed in runs], 0)} CPU s; {total:,.0f} CPU s "
              f"({total / 60:.0f} core-minutes) in all. The {facts['contexts']} contexts "
              f"({100 * facts['contexts'] / facts['split_instances']:.1f} % of the test split) are what the budget "
              f"allowed for {len(runs)} re-rankings. The whole pool was embedded because its size sets how hard the "
              "retrieval's negatives are."]
    return lines


def splice(report: str, name: str, lines: list[str]) -> str:
    """``report`` with the block ``name`` replaced by ``lines``."""
    return reports.splice(report, "\n".join(lines) + "\n", *reports.markers(f"{GENERATOR} ({name})"), REPORT)


def check_runs(labels: dict, runs: dict) -> dict:
    """Check the committed files against themselves: every file of ``runs/`` and ``real_env/`` against their
    ``sha256.json``, each run's ``run.json`` and ``command.json`` against its folder (variant, seed, flags), and the
    P@1 of every ``results.json`` against the kept predictions. A one-line error on the first mismatch; else
    ``{folder name: (files checked, the checksums file's digest)}``."""
    digests = {}
    for root in (RUNS, REAL_ENV):
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != run_files.MANIFEST)
        digests[root.name] = (len(files), run_files.verify(root, files))
    for name, folders in runs.items():
        for folder in map(Path, folders):
            seed = int(folder.name.split("_")[1])
            command = run_files.read_json(folder / "command.json").get("command", [])
            given = command[command.index("--seed") + 1:][:1] if "--seed" in command else []
            if given != [str(seed)] or ("--debias" in command) != ("deb" in name) or \
                    ("--ums" in command) != ("UMS" in name):
                raise DialshiftError(f"{folder / 'command.json'}: its command is not {name} seed {seed}'s")
            for config in CONFIGS:
                described = run_files.read_json(folder / config / "run.json")
                results = run_files.read_json(folder / config / "results.json")
                if described.get("run", {}).get("method") != name or described["run"].get("seeds") != [seed] or \
                        results.get("run") != described["run"]:
                    raise DialshiftError(f"{folder / config / 'run.json'}: describes {described.get('run')}, not "
                                         f"{name} seed {seed} as its folder and results.json")
                correct = correctness(folder, config, labels[config])
                scored = results["results"][config]
                key = "accuracy" if config == "kor_adv" else "recall@1"
                checks = [(key, list(correct))]
                if config == "kor_adv":
                    checks += [(f"accuracy/{t}", [i for i in correct if i.startswith(f"koradvmrs-{t}-")])
                               for t in TYPES]
                for metric, ids in checks:
                    ours = float(np.mean([correct[i] for i in ids]))
                    if abs(ours - scored.get(metric, float("nan"))) > 1e-12 or scored["instances"] != len(correct):
                        raise DialshiftError(f"{folder / config / 'results.json'}: {metric} is "
                                             f"{scored.get(metric)!r}; the kept predictions give {ours!r}")
    return digests


def cases_available(labels: dict, quantity: str) -> int:
    """The test cases a quantity can be measured on: the ``kor_chitchat`` test split (the real-environment
    retrieval's count) for in-domain, ``kor_adv`` (or its cases of one type) for the adversarial quantities."""
    if quantity == "in_domain":
        return int(run_files.read_json(REAL_ENV / "run.json")["retrieval"]["split_instances"])
    return sum(quantity == "adversarial" or i.startswith(f"koradvmrs-{quantity}-") for i in labels["kor_adv"])


def status_lines(results: list[dict], data: dict, seed0: dict, runs: dict, real_env: dict, digests: dict,
                 per_seed_cpu: float, labels: dict) -> list[str]:
    """The status paragraph: every count, number and verdict in it rendered from the tables."""
    commits = sorted({run_files.read_json(Path(f) / "command.json")["commit"][:7] for fs in runs.values()
                      for f in fs})
    command = run_files.read_json(Path(runs["baseline"][0]) / "command.json")["command"]
    rows = int(command[command.index("--max-train-instances") + 1])
    seeds = sorted({int(Path(f).name.split("_")[1]) for fs in runs.values() for f in fs})
    adversarial0 = [seed0["table"][name]["adversarial"] for name in VARIANTS]
    baseline = [s["adversarial"] for s in data["table"]["baseline"]["seeds"]]
    counts = {outcome: sum(r["verdict"].outcome == outcome for r in results) for outcome in OUTCOMES}
    needed = sorted(r["verdict"].seeds_for_power for r in results if r["verdict"].seeds_for_power is not None)
    beyond = sum(r["verdict"].seeds_for_power is None and r["verdict"].power is not None for r in results)
    unknown = sum(r["verdict"].power is None for r in results)
    sentences = [
        f"All {len(VARIANTS)} variants ({', '.join(VARIANTS)}) ran with the same options at seeds "
        f"{' and '.join(map(str, seeds))}: the same {2 * rows:,} training pairs ({100 * 2 * rows / 500_000:.2f} % of "
        f"the paper's 500K), one epoch, frozen word embeddings, the same evaluation subsample, one torch thread, code "
        f"of commit{'s' * (len(commits) > 1)} {', '.join(commits)} (each run's `command.json`), "
        f"{per_seed_cpu / 60:.1f} CPU minutes per run.",
        f"At seed 0 every variant's adversarial P@1 is within {max(abs(x - 50) for x in adversarial0):.1f} points of "
        f"chance (50 %): {' / '.join(f'{x:.1f}' for x in adversarial0)} %, and the baseline alone moves "
        f"{abs(baseline[0] - baseline[1]):.1f} points between its two seeds.",
        f"By the rule of `dialshift.verdicts` ([verdicts.md](verdicts.md)), which decides nothing below {MIN_SEEDS} "
        f"seeds, the {len(results)} findings on Tables 3-4 are: "
        f"{', '.join(f'{n} {outcome}' for outcome, n in counts.items() if n)}, UMS's adversarial gain included.",
        "Power 0.8 at the paper's effects and our spread across seeds needs "
        + (f"{needed[0]}-{needed[-1]} seeds per variant for {plural(len(needed), 'finding')}" if needed else
           "no seed count the rule can compute")
        + (f", more than {MAX_SEEDS:,} for {beyond}" if beyond else "")
        + (f", and cannot be computed for {unknown} (per-seed differences without spread)" if unknown else "")
        + f", at {2 * per_seed_cpu / 60:.1f} CPU minutes per seed of a two-variant comparison"
        + (f", so the cheapest decidable finding costs {max(0, needed[0] - len(seeds)) * 2 * per_seed_cpu / 60:,.0f} "
           f"CPU minutes more and the dearest ({needed[-1]} seeds) "
           f"{max(0, needed[-1] - len(seeds)) * 2 * per_seed_cpu / 3600:,.0f} CPU hours" if needed else "") + ".",
    ]
    available = {r["text"]: cases_available(labels, r["quantity"]) for r in results}
    short = [r for r in results if r["cases"] is not None and r["cases"] > available[r["text"]]]
    if short:
        sentences.append(
            f"Case sampling alone limits {plural(len(short), 'finding')} further: "
            + "; ".join(f"\"{r['text']}\" needs {r['cases']:,} test cases where the set holds "
                        f"{available[r['text']]:,}" for r in short)
            + " (every seed scores the same cases, so a verdict across seeds would hold for these cases only).")
    for key, (_, result) in real_env.items():
        sentences.append(f"The real-environment proxy (an e5 bi-encoder's top 10 over every `kor_chitchat` "
                         f"utterance plus the gold, no human raters) gives {key} = {result.mean:+.1f} points of "
                         f"Precision@1 over {plural(result.seeds, 'seed')} where the paper has {result.paper:+.1f}: "
                         f"{result.outcome} (power {result.power:.2f}).")
    sentences.append("`make_tables.py --check` verifies " + " and ".join(
        f"the {n} files of `{name}/` against its `sha256.json` (digest `{digest}`)" for name, (n, digest)
        in digests.items()) + ", and every run's P@1 in `results.json` against its kept predictions.")
    return [" ".join(sentences)]


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def training_option(runs: dict, flag: str) -> int:
    """An integer option every committed run shares (``--max-train-instances``, ``--batch-size``), from the first
    baseline run's ``command.json``."""
    command = run_files.read_json(Path(runs["baseline"][0]) / "command.json")["command"]
    return int(command[command.index(flag) + 1])


def value_range(values, digits: int = 1, unit: str = "") -> str:
    """``low-high`` of ``values`` (one value when they agree to ``digits``)."""
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return f"{low}{unit}" if low == high else f"{low}-{high}{unit}"


def seed0_lines(seed0: dict, results: list[dict], runs: dict) -> list[str]:
    """What the seed-0 rows show, rendered (one seed decides nothing): the debiasing step's per-type differences,
    the four adversarial scores beside the paper's differences, and the overlap shortcut the paper's baseline learned
    beside ours (the paper's values cited from its Tables 3 and 4)."""
    table, differences = seed0["table"], seed0["differences"]
    ums = next(r for r in results if r["a"] == "+UMS" and r["b"] == "baseline")
    adversarial = {name: table[name]["adversarial"] for name in VARIANTS}
    deb = next(r for r in results if r["a"] == "+deb" and r["b"] == "baseline" and r["quantity"] == "adversarial")
    shown = " / ".join(f"{adversarial[n]:.1f}" for n in VARIANTS)
    ums_gain = adversarial["+UMS"] - adversarial["baseline"]
    deb_gain = adversarial["+deb"] - adversarial["baseline"]

    def per_type(key: str) -> list[str]:
        return [signed(differences[key][t]["difference"]) for t in TYPES]

    paper_adversarial = [paper_cell(name, "adversarial") for name in VARIANTS]
    repetition = {name: table[name]["types"]["repetition"] for name in ("baseline", "+UMS")}
    in_domain = {name: table[name]["in_domain"] for name in ("baseline", "+UMS")}
    steps = math.ceil(training_option(runs, "--max-train-instances") / training_option(runs, "--batch-size"))
    paper_repetition = paper_cell("baseline", "repetition")
    return ["Per-type paired differences of the debiasing step itself at seed 0 (points): on the baseline, "
            + ", ".join(f"{TYPE_NAMES[t]} {d}" for t, d in zip(TYPES, per_type("+deb - baseline"), strict=True))
            + f". On UMS (+UMS+deb − +UMS): {', '.join(per_type('+UMS+deb - +UMS'))}.", "",
            f"What the four rows show at seed 0: adversarial P@1 {shown} % for {', '.join(VARIANTS)}, so +UMS − "
            f"baseline is {ums_gain:+.1f} and +deb − baseline {deb_gain:+.1f} points, against the paper's "
            f"{ums['paper']:+.1f} and {deb['paper']:+.1f}. One seed per variant decides nothing: over both seeds the "
            f"rule's verdict on UMS's gain is {ums['verdict'].cell()}, and the spread between seeds is larger than "
            "these differences (the second-seed section).", "",
            f"The spread is {max(adversarial.values()) - min(adversarial.values()):.1f} points around chance, against "
            f"the paper's {max(paper_adversarial) - min(paper_adversarial):.1f} points from {min(paper_adversarial)} "
            f"(Table 3). The paper's baseline has learned the overlap shortcut and falls to {paper_repetition} % on "
            f"Repetition (Table 4). Ours has not learned it yet: {repetition['baseline']:.1f} %, "
            f"{'below' if repetition['baseline'] < 50 else 'above'} chance but "
            f"{'far above' if repetition['baseline'] > paper_repetition + 10 else 'near'} the paper's. UMS's "
            f"auxiliary losses {'cost' if in_domain['+UMS'] < in_domain['baseline'] else 'do not cost'} in-domain "
            f"P@1 after {steps} steps ({in_domain['baseline']:.0f} → {in_domain['+UMS']:.0f} %, chance 10 %) and "
            f"{'raise' if repetition['+UMS'] > repetition['baseline'] else 'lower'} Repetition "
            f"({repetition['baseline']:.1f} → {repetition['+UMS']:.1f} %). That is the effect of a few steps of a "
            "different objective on an untrained ranker, not the paper's converged +UMS row."]


def ece_lines(data: dict) -> list[str]:
    """The adversarial ECE paragraph: the range over every committed run."""
    eces = [s["adversarial_ece"] for name in VARIANTS for s in data["table"][name]["seeds"]]
    return ["The adversarial ECE (beyond the paper) is the `response_ranking` scoring task's ECE over the two "
            f"responses' softmax probabilities. It is {'small' if max(eces) < 0.1 else 'not small'} for every run "
            f"({value_range(eces, 3)} over the {len(eces)} runs) because every model gives almost every case "
            "probabilities close to 0.5: it is well calibrated only in the sense that it knows nothing."]


def interrogative_lines(data: dict, runs: dict) -> list[str]:
    """Beyond the rule: how near chance the runs are, and Interrogative Word per seed beside the paper's (Table 4)."""
    seeds = range(len(data["table"]["baseline"]["seeds"]))
    scores = [[data["table"][name]["seeds"][s]["types"]["interrogative_word"] for name in VARIANTS] for s in seeds]
    adversarial = [s["adversarial"] for name in VARIANTS for s in data["table"][name]["seeds"]]
    paper = [paper_cell(name, "interrogative_word") for name in VARIANTS]
    return [f"Beyond the rule: the paper's findings cannot show at this scale for the reasons above "
            f"({2 * training_option(runs, '--max-train-instances'):,} pairs, an untrained biased model, every run's "
            f"adversarial P@1 within {max(abs(x - 50) for x in adversarial):.1f} points of chance). On Interrogative "
            "Word our models score " + "; ".join(f"{value_range(v, 0, ' %')} at seed {s}" for s, v in zip(
                seeds, scores, strict=True))
            + " (chance 50 %; far above it probably from a surface cue: the adversarial responses are questions); "
            f"the paper's are at {value_range(paper, 1, ' %')} (Table 4)."]


#: ``benchmarks/debias.py --json`` outputs: the 5-step run the throughput table shows and the earlier 3-step run
BENCHMARKS = ("benchmark_cpu.json", "benchmark_cpu_e5_3steps.json")
#: pairs in ``kor_chitchat`` train, the build's count (the setup table), for the hours of one full epoch
KOR_CHITCHAT_PAIRS = 32_916


def throughput_lines(folder: Path = HERE) -> list[str]:
    """The throughput section's table and readings from the committed ``benchmarks/debias.py`` outputs."""
    current, earlier = (run_files.read_json(folder / name) for name in BENCHMARKS)

    def label(model: str) -> str:
        return "tiny" if model == "tiny" else "e5-small"

    def ratios(variant: str, models=None) -> list[float]:
        return [r[variant]["ratio_to_baseline"] for b in (current, earlier) for m, r in b["results"].items()
                if variant in r and (models is None or label(m) in models)]

    load = current["load_average"]
    lines = ["`python benchmarks/debias.py --dataset DS --models tiny E5 --steps "
             f"{current['settings']['steps']} --json docs/reproduction_han/{BENCHMARKS[0]}` (batch "
             f"{current['settings']['batch_size']} rows = {2 * current['settings']['batch_size']} pairs, max length "
             f"{current['settings']['max_length']}, frozen word embeddings, {current['torch_threads']} thread, "
             "`nice -n 10`). It ran on the 2 shared cores while other trainings were running (load average "
             f"{value_range(load, 0)}). Each variant is stepped alternately with a baseline held beside it. The "
             "ratio divides by the baseline's rate over those same interleaved steps, so it survives the load "
             "changes; the absolute figures do not.", "",
             f"| backbone | variant | pairs/s | ratio to baseline ({current['settings']['steps']} steps) | ratio, "
             f"earlier {earlier['settings']['steps']}-step run | one-time setup (s) |", "|---|---|---:|---:|---:|---:|"]
    names = {"tiny": ("tiny (2-layer test BERT)", "tiny"), "e5-small": ("e5-small (converted)", "e5-small")}
    for model, rows in current["results"].items():
        before = next((r for m, r in earlier["results"].items() if label(m) == label(model)), {})
        for j, (variant, row) in enumerate(rows.items()):
            bold = "**" if variant == "+deb" else ""
            old = f"{bold}{before[variant]['ratio_to_baseline']:.2f}{bold}" if variant in before else "-"
            rate = row["pairs_per_second"]
            lines.append(f"| {names[label(model)][min(j, 1)]} | {variant} | {rate:.{0 if rate >= 100 else 1}f} | "
                         f"{bold}{row['ratio_to_baseline']:.2f}{bold} | {old} | {row['setup_seconds']:.1f} |")
    e5 = next(r for m, r in current["results"].items() if label(m) == "e5-small")
    setup = [r[v]["setup_seconds"] for b in (current, earlier) for r in b["results"].values() for v in r if "deb" in v]
    baseline = [r["baseline"]["pairs_per_second"] for b in (current, earlier) for m, r in b["results"].items()
                if label(m) == "e5-small"]
    hours = [KOR_CHITCHAT_PAIRS / rate / 3600 for rate in baseline]
    lines += ["", f"- **Debiased / baseline = {value_range(ratios('+deb'), 2)} pairs/s.** DRiFt adds one index into "
              "the precomputed biased logits and one addition per step, so a step costs what a baseline step costs. "
              "Its cost is once per run: the Jaccard features of every training pair (kiwipiepy morphemes and the "
              "sets of the e5 tokenizer's SentencePiece pieces, where the paper uses its Korean BERT's WordPiece "
              "tokens) and the biased model's steps; the setup column of the debiased variants, "
              f"{value_range(setup, 1)} s over both runs, most of it loading kiwipiepy's model.",
              f"- **UMS halves the pairs/s** ({value_range(ratios('+UMS'), 2)}). Its insertion, deletion and search "
              "examples are a second forward and backward pass over the batch's positives at the same length.",
              f"- Absolute e5 figures range from {min(r['pairs_per_second'] for r in e5.values()):.1f} to "
              f"{max(r['pairs_per_second'] for r in e5.values()):.1f} pairs/s "
              f"depending on the other jobs; the +deb row's {e5['+deb']['pairs_per_second']:.1f} pairs/s "
              f"({e5['+deb']['seconds_per_step']:.1f} s a step) was measured while the machine was quieter.",
              f"- At the e5 baseline's {value_range(baseline, 1)} pairs/s, one epoch of all {KOR_CHITCHAT_PAIRS:,} "
              f"`kor_chitchat` pairs is {value_range(hours, 1)} h of optimiser steps per variant and seed on one "
              "shared core, before validation and scoring; the paper's three epochs three times that.",
              f"- The earlier {earlier['settings']['steps']}-step run is in `docs/reproduction_han/{BENCHMARKS[1]}`."]
    return lines


def run_cost_lines(runs: dict) -> list[str]:
    """The CPU seconds of the committed runs (training and scoring), from their ``command.json``."""
    seconds = [run_files.read_json(Path(f) / "command.json")["cpu_seconds"] for fs in runs.values() for f in fs]
    return [f"The runs (`--debias` and/or `--ums` added for the variants; 1 torch thread, `nice -n 10`; "
            f"{value_range(seconds, 0)} CPU s each for training and scoring, {sum(seconds) / 60:.0f} CPU minutes for "
            f"all {len(seconds)}, from the `command.json` files):"]


def summary(results: list[dict], all_runs: dict) -> dict:
    """What ``docs/make_status.py`` renders the README's status paragraph from (its format is in that script's
    docstring): the findings on Tables 3-4 counted by outcome, their seeds, and the seed-runs committed."""
    outcomes = outcome_counts(r["verdict"].outcome for r in results)
    return {"paper": "Han et al. (2021)", "report": "docs/reproduction_han.md", "generator": GENERATOR,
            "cells": len(results), "outcomes": outcomes,
            "groups": [{"name": "four variants of Table 3",
                        "seeds": sorted({r["verdict"].seeds for r in results}), "cells": len(results),
                        "outcomes": outcomes, "note": None}],
            "notes": [], "cost": {"runs": sum(map(len, all_runs.values()))}}


def signed(value: float, digits: int = 1) -> str:
    """``value`` with its sign, ``0`` (to ``digits`` places) without one."""
    return f"{0:.{digits}f}" if round(value, digits) == 0 else f"{value:+.{digits}f}"


def seeds_reading(data: dict) -> list[str]:
    """What the rows over several seeds show (the block ``two seeds``), rendered from its tables: the per-seed
    differences of the debiasing step, the baseline's own seed-to-seed move, UMS's effect on Repetition and in-domain
    P@1 over the seeds, and the paired differences of the debiasing step."""
    table, differences = data["table"], data["differences"]

    def per_seed(a: str, b: str, quantity: str, digits: int = 1) -> str:
        return " / ".join(signed(x - y, digits) for x, y in zip(seed_values(data, a, quantity),
                                                                 seed_values(data, b, quantity), strict=True))

    def interval(key: str) -> str:
        d = differences[key]["adversarial"]
        return f"{signed(d['difference'])} [{d['low']:+.1f}, {d['high']:+.1f}]"

    baseline = seed_values(data, "baseline", "adversarial")
    repetition = seed_values(data, "baseline", "repetition")
    move = max(baseline) - min(baseline)
    largest = max(abs(d["adversarial"]["difference"]) for d in differences.values())
    ums = [differences[f"{a} - baseline"]["repetition"]["difference"] for a in ("+UMS", "+UMS+deb")]
    in_domain = [table[name]["in_domain"] for name in ("+UMS", "+UMS+deb")]
    return [f"Seed by seed, +deb − baseline is {per_seed('+deb', 'baseline', 'adversarial')} adversarially, "
            f"{per_seed('+deb', 'baseline', 'repetition')} on Repetition, "
            f"{per_seed('+deb', 'baseline', 'interrogative_word')} on Interrogative Word and "
            f"{per_seed('+deb', 'baseline', 'in_domain', 0)} in-domain. +UMS+deb − +UMS is "
            f"{per_seed('+UMS+deb', '+UMS', 'adversarial')} adversarially. The baseline alone moves by {move:.1f} "
            f"points adversarially between its {len(baseline)} seeds ({' / '.join(f'{x:.1f}' for x in baseline)}), "
            + ("more than" if move > largest else "against")
            + f" any adversarial difference between two variants over the seeds (at most {largest:.1f}). Its "
            f"Repetition score {'falls' if repetition[-1] < repetition[0] else 'rises'} from {repetition[0]:.1f} % "
            f"at the first seed to {repetition[-1]:.1f} % at the last"
            + (", the overlap bias beginning to show" if repetition[-1] < repetition[0] else "")
            + f". Over the seeds, UMS (+UMS, +UMS+deb − baseline) raises Repetition by {min(ums):.0f}-{max(ums):.0f} "
            f"points and lowers in-domain P@1 to {min(in_domain):.1f}-{max(in_domain):.1f} % (chance: 10 %). "
            f"Debiasing adds {interval('+deb - baseline')} on the baseline and {interval('+UMS+deb - +UMS')} on "
            "UMS."]


def rendered_report() -> str:
    """The report with every generated part rendered from the committed files (:func:`build`)."""
    return build()[0]


def build() -> tuple[str, dict]:
    """The report with every generated part rendered from the committed files, and its :func:`summary`."""
    report = REPORT.read_text(encoding="utf-8")
    labels = run_files.read_json(RUNS / "labels.json")
    all_runs = committed_runs()
    for name, folders in all_runs.items():
        found = sorted(int(f.name.split("_")[1]) for f in folders)
        if any(seed not in found for seeds in BLOCKS.values() for seed in seeds):
            raise DialshiftError(f"{RUNS / SLUGS[name]}: holds seeds {found}; the report needs seeds "
                                 f"{sorted({s for seeds in BLOCKS.values() for s in seeds})} of every variant")
    if set(all_runs) != set(VARIANTS):
        raise DialshiftError(f"{RUNS}: holds the variants {sorted(all_runs)}; the report needs {list(VARIANTS)}")
    digests = check_runs(labels, all_runs)
    runs = {name: committed_runs(seeds) for name, seeds in BLOCKS.items()}
    blocks = {name: from_predictions(labels, runs[name]) for name in BLOCKS}
    for name, data in blocks.items():
        report = splice(report, name, render(data))
    per_seed_cpu = run_cpu(all_runs)
    results = finding_results(blocks["two seeds"], labels, runs["two seeds"])
    report = splice(report, "verdicts", verdict_lines(results, per_seed_cpu))
    real_env: dict = {}
    facts: dict = {}
    report = splice(report, "real environment", real_env_lines(found=real_env, facts=facts))
    report = splice(report, "real environment reading", real_env_reading(facts, real_env))
    report = splice(report, "run cost", run_cost_lines(all_runs))
    report = splice(report, "throughput", throughput_lines())
    report = splice(report, "seed 0 reading", seed0_lines(blocks["seed 0"], results, all_runs))
    report = splice(report, "ece", ece_lines(blocks["two seeds"]))
    report = splice(report, "two seeds reading", seeds_reading(blocks["two seeds"]))
    report = splice(report, "beyond the rule", interrogative_lines(blocks["two seeds"], all_runs))
    report = splice(report, "status", status_lines(results, blocks["two seeds"], blocks["seed 0"], runs["two seeds"],
                                                   real_env, digests, per_seed_cpu, labels))
    return report, summary(results, all_runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare the report with what this renders; exit 1 on a "
                                                             "difference")
    parser.add_argument("--dataset", help="with --run: the built korean folder")
    parser.add_argument("--run", action="append", metavar="NAME=DIR",
                        help="copy these prediction folders (one per seed) into runs/ and print their tables")
    parser.add_argument("--out", default=None, help="with --run: where the copies go (default: runs/)")
    parser.add_argument("--checksums", action="store_true", help="rewrite runs/sha256.json and real_env/sha256.json "
                                                                 "from the files there (after --run or --rerank)")
    parser.add_argument("--rerank", action="append", metavar="NAME=MODEL_DIR",
                        help="score real_env/candidates.jsonl.gz with this trainers/debias.py model (NAME: its "
                             "variant, e.g. +deb) into real_env/rerank/")
    args = parser.parse_args(argv)
    if args.rerank:
        if not args.dataset:
            parser.error("--rerank needs --dataset")
        if not all("=" in item for item in args.rerank):
            parser.error("--rerank: expected NAME=MODEL_DIR")
        try:
            for out in rerank(args.dataset, [tuple(item.split("=", 1)) for item in args.rerank]):
                print(f"wrote {out}")
        except DialshiftError as error:
            print(f"make_tables.py: error: {error}", file=sys.stderr)
            return 2
        return 0
    if args.run:
        if not args.dataset:
            parser.error("--run needs --dataset")
        runs: dict[str, list[str]] = {}
        for item in args.run:
            if "=" not in item:
                parser.error(f"--run {item!r}: expected NAME=DIR")
            name, folder = item.split("=", 1)
            runs.setdefault(name, []).append(folder)
        try:
            out = Path(args.out) if args.out else RUNS
            copied = collect(args.dataset, runs, out)
        except DialshiftError as error:
            print(f"make_tables.py: error: {error}", file=sys.stderr)
            return 2
        print("\n".join(render(from_predictions(json.loads((out / "labels.json").read_text()), copied))))
        return 0
    try:
        if args.checksums:
            for root in (RUNS, REAL_ENV):
                files = [p for p in root.rglob("*") if p.is_file() and p.name != run_files.MANIFEST]
                print(f"wrote {run_files.write_manifest(root, files)}")
            return 0
        expected, summarised = build()
    except DialshiftError as error:
        print(f"make_tables.py: error: {error}", file=sys.stderr)
        return 2
    status = reports.write_or_check(REPORT, expected, args.check)
    if args.check and status:  # one line for a check that fails
        return status
    return reports.write_or_check_summary(SUMMARY, summarised, args.check, GENERATOR)


if __name__ == "__main__":
    sys.exit(main())
