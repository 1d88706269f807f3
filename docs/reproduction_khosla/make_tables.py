"""Tables of docs/reproduction_khosla.md from the run folders of trainers/open_world.py.

    python docs/reproduction_khosla/make_tables.py RUN_DIR [RUN_DIR ...] > tables.md

Each RUN_DIR is an ``--output-dir`` of the trainer; every ``<config>/seed_<s>/run.json`` under them is read, and the
runs of one config and seed in several folders (e.g. the cross-entropy methods and DCLOOS) are merged. Per config:
mean ± std over seeds (sample std) of F1_All, F1_In, F1_Out, Acc on test and cov_test beside the paper's bert
(Table 4 / 5) and roberta (Table A2) values; the drop test - cov_test; in how many seeds the scoring pipeline's 95 %
bootstrap intervals (``results/<method>/<split>/results.json``) of test and cov_test are disjoint; AUROC; and, from
``outputs.npz``, the closed-world in-scope accuracy (argmax, no rejection) and the in-scope rejection rates.
"""

import json
import sys
from pathlib import Path

import numpy as np

SPLITS = ("test", "cov_test")
METRICS = ("f1_all", "f1_in", "f1_out", "accuracy")
LABELS = {"msp": "MSP", "energy": "Energy", "maha": "Maha", "cosine": "Cosine", "knn": "KNN-C", "adb": "ADB",
          "dcloos": "DCLOOS"}
# (test F1_All, test Acc, cov F1_All, cov Acc): bert-base-uncased (Tables 4 and 5), roberta-base (Table A2).
PAPER_BERT = {
    "clinc14_cov": {"msp": (88.5, 91.2, 72.9, 84.2), "cosine": (91.4, 94.4, 71.6, 86.0),
                    "maha": (92.4, 95.2, 73.2, 86.9), "adb": (89.1, 92.1, 71.9, 80.6),
                    "knn": (92.5, 95.2, 71.2, 86.3), "dcloos": (92.5, 95.7, 59.7, 83.2)},
    "clinc14_cov_5shot": {"msp": (79.7, 84.3, 65.8, 78.6), "cosine": (82.2, 89.0, 66.9, 82.6),
                          "maha": (84.2, 90.2, 68.5, 83.8), "adb": (80.4, 89.8, 57.0, 81.6)},
    "clinc14_cov_10shot": {"msp": (83.6, 88.1, 70.0, 82.1), "cosine": (85.6, 90.8, 69.7, 84.3),
                           "maha": (86.5, 90.9, 71.5, 84.4), "adb": (84.0, 91.0, 64.8, 83.8)},
    "hwu12_cov": {"msp": (86.9, 83.1, 80.4, 78.7), "cosine": (92.0, 90.6, 85.4, 86.6),
                  "maha": (92.3, 91.1, 84.5, 86.5), "adb": (88.8, 86.6, 84.7, 83.7), "knn": (92.1, 90.3, 84.0, 85.7),
                  "dcloos": (93.6, 93.0, 80.5, 84.1)},
    "hwu12_cov_5shot": {"msp": (69.2, 69.4, 71.9, 71.5), "cosine": (70.7, 71.9, 72.5, 73.1),
                        "maha": (73.8, 77.1, 73.7, 77.2), "adb": (63.8, 70.7, 59.4, 69.9)},
    "hwu12_cov_10shot": {"msp": (77.3, 76.3, 80.0, 78.2), "cosine": (80.9, 81.6, 81.9, 82.9),
                         "maha": (83.2, 84.2, 82.2, 84.2), "adb": (77.2, 78.9, 75.2, 79.3)},
}
PAPER_ROBERTA = {
    "clinc14_cov": {"msp": (90.0, 92.4, 73.1, 84.7), "energy": (90.0, 92.2, 73.2, 84.6),
                    "cosine": (92.5, 94.6, 73.2, 86.0), "maha": (92.5, 94.6, 73.3, 85.7),
                    "adb": (88.8, 91.0, 73.4, 80.8)},
    "clinc14_cov_5shot": {"msp": (81.6, 86.5, 66.9, 80.5), "energy": (80.1, 84.5, 66.6, 78.9),
                          "cosine": (86.8, 91.8, 71.5, 85.6), "maha": (87.6, 92.7, 70.9, 85.9),
                          "adb": (86.1, 92.0, 66.9, 84.5)},
    "clinc14_cov_10shot": {"msp": (84.2, 87.9, 68.4, 81.2), "energy": (84.0, 88.5, 70.1, 82.6),
                           "cosine": (88.7, 92.8, 71.7, 85.6), "maha": (89.0, 92.9, 72.6, 85.9),
                           "adb": (86.0, 89.7, 70.8, 83.0)},
    "hwu12_cov": {"msp": (89.4, 85.7, 81.6, 81.1), "energy": (89.9, 86.5, 80.6, 80.9),
                  "cosine": (93.4, 92.2, 83.5, 86.6), "maha": (93.8, 92.8, 82.8, 86.3),
                  "adb": (89.5, 87.9, 84.4, 84.7)},
    "hwu12_cov_5shot": {"msp": (73.3, 72.6, 73.5, 72.5), "energy": (72.9, 71.5, 73.9, 72.3),
                        "cosine": (79.7, 83.0, 78.8, 82.8), "maha": (79.9, 83.0, 77.5, 81.9),
                        "adb": (78.2, 80.7, 73.8, 79.7)},
    "hwu12_cov_10shot": {"msp": (79.0, 77.7, 79.7, 77.4), "energy": (79.2, 77.3, 80.1, 77.6),
                         "cosine": (84.8, 85.6, 83.7, 85.6), "maha": (85.3, 86.6, 83.2, 85.4),
                         "adb": (82.4, 82.6, 81.2, 83.0)},
}


def collect(run_dirs) -> dict:
    """``{config: {seed: {method: seed folder}}}`` of every finished seed (one with a run.json), merged over folders."""
    found = {}
    for run_dir in run_dirs:
        for run_json in sorted(Path(run_dir).glob("*/seed_*/run.json")):
            seed_dir = run_json.parent
            methods = json.loads(run_json.read_text())["results"]
            seeds = found.setdefault(seed_dir.parent.name, {})
            seeds.setdefault(int(seed_dir.name.split("_")[1]), {}).update({m: seed_dir for m in methods})
    return found


def scored(seed_dir: Path, method: str, split: str) -> tuple[dict, dict]:
    """Point metrics and 95 % bootstrap intervals of one scored predictions file."""
    document = json.loads((seed_dir / "results" / method / split / "results.json").read_text())
    config = seed_dir.parent.name
    return document["results"][config], document["intervals"][config]


def mean_std(values) -> str:
    values = 100 * np.asarray(values, dtype=float)
    return f"{values.mean():.1f} ± {values.std(ddof=1):.1f}" if len(values) > 1 else f"{values.mean():.1f}"


def paper_cell(table: dict, config: str, method: str) -> str:
    values = table.get(config, {}).get(method)
    return f"{values[0]:.1f} / {values[1]:.1f} → {values[2]:.1f} / {values[3]:.1f}" if values else "–"


def disjoint(folders: list[Path], method: str, metric: str) -> str:
    """``k/n``: in how many seeds the test and cov_test 95 % intervals of ``metric`` do not overlap."""
    count = 0
    for folder in folders:
        (_, a), (_, b) = (scored(folder, method, split) for split in SPLITS)
        a, b = a[metric], b[metric]
        count += bool(a and b and (a[0] > b[1] or b[0] > a[1]))
    return f"{count}/{len(folders)}"


def config_tables(config: str, seeds: dict) -> list[str]:
    methods = [m for m in LABELS if any(m in by_method for by_method in seeds.values())]
    lines = [f"### {config}", "",
             "| method | seeds | test F1_All | F1_In | F1_Out | Acc | cov F1_All | F1_In | F1_Out | Acc | drop F1_All "
             "| drop Acc | disjoint F1_All / Acc | paper bert F1_All / Acc test → cov | paper roberta (A2) |",
             "|---|---:|" + "---:|" * 10 + "---:|---|---|"]
    validation = {}
    for method in methods:
        folders = [by_method[method] for _, by_method in sorted(seeds.items()) if method in by_method]
        runs = [json.loads((folder / "run.json").read_text()) for folder in folders]
        validation[method] = [run["validation_accuracy"] for run in runs]
        values = {(split, metric): [run["results"][method][split][metric] for run in runs]
                  for split in SPLITS for metric in (*METRICS, "auroc")}
        drops = [np.subtract(values[("test", m)], values[("cov_test", m)]) for m in ("f1_all", "accuracy")]
        cells = [mean_std(values[(split, metric)]) for split in SPLITS for metric in METRICS]
        cells += [mean_std(drop) for drop in drops]
        cells.append(f"{disjoint(folders, method, 'f1_all')} / {disjoint(folders, method, 'accuracy')}")
        lines.append(f"| {LABELS[method]} | {len(runs)} | " + " | ".join(cells) + " | "
                     f"{paper_cell(PAPER_BERT, config, method)} | {paper_cell(PAPER_ROBERTA, config, method)} |")
    lines += ["", "AUROC (in-scope positive) test → cov_test: " + "; ".join(
        f"{LABELS[m]} {mean_std(auroc(seeds, m, 'test'))} → {mean_std(auroc(seeds, m, 'cov_test'))}"
        for m in methods), ""]
    kept = [f"cross-entropy model (in-scope) {mean_std(v)} over {len(v)} seeds" for m, v in validation.items()
            if m != "dcloos"][:1]
    if "dcloos" in validation:
        kept.append(f"DCLOOS (K + 1, in-scope and oos) {mean_std(validation['dcloos'])} over "
                    f"{len(validation['dcloos'])} seeds")
    lines.append("Validation accuracy of the kept weights: " + "; ".join(kept))
    return lines + ["", *rejection_table(seeds), ""]


def auroc(seeds: dict, method: str, split: str) -> list[float]:
    return [json.loads((by_method[method] / "run.json").read_text())["results"][method][split]["auroc"]
            for by_method in seeds.values() if method in by_method]


def rejection_table(seeds: dict) -> list[str]:
    """In-scope utterances only, mean ± std over seeds (%): closed-world accuracy (argmax, no rejection) and, per
    method, the share rejected as out-of-scope and the open-world accuracy, test → cov_test."""
    rows = {}
    for by_method in seeds.values():
        for method, folder in by_method.items():
            saved = np.load(folder / "outputs.npz")
            oos = saved["logits/test"].shape[1] if method != "dcloos" else saved["logits/test"].shape[1] - 1
            for split in SPLITS:
                gold = saved[f"gold/{split}"]
                inside = gold != oos
                predicted = saved[f"{method}/{split}"][inside]
                if method != "dcloos":
                    closed = saved[f"logits/{split}"][inside].argmax(axis=1) == gold[inside]
                    rows.setdefault(("closed-world (argmax)", "accuracy", split), {})[str(folder)] = closed.mean()
                rejected, right = np.mean(predicted == oos), np.mean(predicted == gold[inside])
                rows.setdefault((LABELS[method], "rejected", split), {})[str(folder)] = rejected
                rows.setdefault((LABELS[method], "accuracy", split), {})[str(folder)] = right
    lines = ["In-scope utterances only (%, mean ± std over seeds): covariate shift alone (closed-world accuracy, no "
             "rejection) against both shifts (each method's rejections and open-world in-scope accuracy)", "",
             "| | rejected test | rejected cov_test | accuracy test | accuracy cov_test |", "|---|---:|---:|---:|---:|"]
    names = ["closed-world (argmax)"] + [LABELS[m] for m in LABELS]
    for name in names:
        if (name, "accuracy", "test") not in rows:
            continue
        cells = [mean_std(list(rows[(name, kind, split)].values())) if (name, kind, split) in rows else "–"
                 for kind in ("rejected", "accuracy") for split in SPLITS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    run_dirs = (argv if argv is not None else sys.argv[1:]) or []
    found = collect(run_dirs)
    if not found:
        print(f"no <config>/seed_<s>/run.json under {run_dirs}", file=sys.stderr)
        return 2
    lines = []
    order = {"": 0, "_5shot": 1, "_10shot": 2}
    for config in sorted(found, key=lambda c: (c.split("_cov")[0], order.get(c.split("_cov", 1)[1], 3), c)):
        lines += config_tables(config, found[config])
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
