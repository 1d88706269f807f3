"""``dialshift bundle report`` for Han et al.: Tables 3-4 at full scale from the scores the ``han-*`` steps returned.

Each step's scores become predictions (``OUT/<variant>/seed<S>/<config>/<config>.jsonl``, softmax over each row's
responses) scored here by :func:`dialshift.ranking.selection.score_predictions`, the function the trainer uses:
in-domain Precision@1 (R@1 of 10 on ``kor_chitchat`` test), adversarial Precision@1 overall and per type, and the
adversarial ECE. ``summary.json`` and ``results.md`` hold them per variant as mean ± sd across the seeds.
"""

import numpy as np

from dialshift.across_seeds import format_spread, spread
from dialshift.bundle.han import ADVERSARIAL_CONFIG, TRAIN_CONFIG, VARIANTS

LABELS = {"baseline": "baseline", "deb": "+deb", "ums": "+UMS", "ums-deb": "+UMS+deb"}


def report(paths, dataset, out, replicates: int = 1000, plots: bool = True, progress: bool = False) -> dict:
    """Predictions, per-seed ``results.json`` and the across-seed table of the returned scores; returns the
    summary (also ``OUT/summary.json``, with ``OUT/results.md``)."""
    from dialshift.bundle.report_inputs import check_ids, test_ids
    from dialshift.hub.reading import folder_configs
    from dialshift.io import atomic_write, write_json_atomic
    from dialshift.models.uncertainty import softmax
    from dialshift.ranking.selection import score_predictions
    from dialshift.returned import check_distinct_runs, find_returned, read_arrays
    from dialshift.scoring import check_output_dir
    from dialshift.scoring.pipeline import claim_output_dir, record_output_dir
    from dialshift.scoring.predictions import write_predictions

    inputs = (*paths, dataset)
    check_output_dir(out, writes=None, inputs=inputs)
    found = find_returned(paths, "han")
    protocol = next(iter(found.values())).description["protocol"]
    limits = {ADVERSARIAL_CONFIG: protocol["max_instances"], TRAIN_CONFIG: protocol["max_instances"]}
    ids, candidates = test_ids(dataset, limits)
    check_ids(found, ids, dataset)
    expected = {f"test/{name}": ((len(ids[name]), candidates[name]), "f") for name in limits}
    loaded = {step: read_arrays(entry, expected) for step, entry in found.items()}
    check_distinct_runs(found, loaded)
    out = claim_output_dir(out, "dialshift bundle report", writes=None, inputs=inputs)
    tasks = {name: config.task for name, config in folder_configs(dataset).items()}
    results: dict[str, dict[int, dict]] = {}
    for step, entry in sorted(found.items()):
        variant, seed = entry.description["variant"], entry.seed
        folder = out / variant / f"seed{seed}"
        for name in limits:
            scores = loaded[step][f"test/{name}"].astype(np.float64)
            (folder / name).mkdir(parents=True, exist_ok=True)
            write_predictions(folder / name / f"{name}.jsonl", tasks[name], ids[name],
                              {"scores": scores, "probabilities": softmax(scores, axis=1)})
            write_json_atomic(folder / name / "run.json", {
                "run": {"model": "dialshift bundle (see bundle.json)", "method": LABELS[variant], "seeds": [seed],
                        "source": "scores returned by the GPU bundle, scored here"},
                "scoring": {"max_instances": limits[name], "sample_seed": 0}})
        results.setdefault(variant, {})[seed] = score_predictions(folder, dataset, replicates)
    summary = summarise(results, protocol)
    write_json_atomic(out / "summary.json", summary)
    atomic_write(out / "results.md", summary_markdown(summary))
    record_output_dir(out, None)
    return summary


def summarise(results: dict, protocol: dict) -> dict:
    """Per variant, across seeds: in-domain P@1, adversarial P@1 overall and per type, adversarial ECE."""
    variants = {}
    for variant in (v for v in VARIANTS if v in results):
        by_seed = results[variant]
        adversarial = [r[ADVERSARIAL_CONFIG] for r in by_seed.values()]
        types = sorted(key for key in adversarial[0] if key.startswith("accuracy/"))
        variants[variant] = {
            "seeds": sorted(by_seed), "in_domain_p@1": spread([r[TRAIN_CONFIG]["recall@1"] for r in by_seed.values()]),
            "adversarial_p@1": spread([r["accuracy"] for r in adversarial]),
            "adversarial_ece": spread([r["ece"] for r in adversarial]),
            "per_type": {key.split("/", 1)[1]: spread([r[key] for r in adversarial]) for key in types},
            "instances": {ADVERSARIAL_CONFIG: adversarial[0]["instances"],
                          TRAIN_CONFIG: next(iter(by_seed.values()))[TRAIN_CONFIG]["instances"]}}
    return {"protocol": protocol, "variants": variants}


def summary_markdown(summary: dict) -> str:
    """``results.md``: Tables 3 and 4 (mean ± sd across seeds, n in each cell)."""
    variants = summary["variants"]
    lines = ["# Han et al. at full scale: results from the returned scores", "",
             "Each cell: mean ± standard deviation across the seeds. Computed by `dialshift bundle report`.", "",
             "## Table 3: in-domain and adversarial Precision@1, adversarial ECE", "",
             "| variant | seeds | in-domain P@1 (kor_chitchat, 1 of 10) | adversarial P@1 (kor_adv) "
             "| adversarial ECE |",
             "|---|---|---|---|---|"]
    for variant, row in variants.items():
        lines.append(f"| {LABELS[variant]} | {len(row['seeds'])} | {format_spread(row['in_domain_p@1'])} | "
                     f"{format_spread(row['adversarial_p@1'])} | {format_spread(row['adversarial_ece'])} |")
    types = sorted({name for row in variants.values() for name in row["per_type"]})
    lines += ["", "## Table 4: adversarial Precision@1 per type", "",
              "| variant | " + " | ".join(name.replace("_", " ") for name in types) + " |",
              "|---|" + "---|" * len(types)]
    for variant, row in variants.items():
        lines.append(f"| {LABELS[variant]} | " + " | ".join(
            format_spread(row["per_type"][name]) if name in row["per_type"] else "–" for name in types) + " |")
    return "\n".join(lines) + "\n"
