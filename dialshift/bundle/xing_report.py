"""``dialshift bundle report`` for Xing & Gulla: Table 3 at full scale from the attention scores the ``xing-*`` steps
returned.

Each step's arrays become ``attention_distribution`` predictions (``OUT/<variant>/seed<S>/<config>.jsonl``), scored
here by :mod:`dialshift.scoring`: the DAS ratio (eq. 8) of each distracting set, the fixed-sentence sets against the
dataset folder, the random sets against the same redraw the step evaluated on, rebuilt here from the raw corpus by
:func:`dialshift.bundle.xing.redraw_folder` (its ids checked against the step's). On the unshifted ``ubuntu`` test
set: perplexity and the mean History AS (Table 3's "Original" columns). ``summary.json`` and ``results.md`` hold
them per variant as mean ± sd across the seeds.
"""

import tempfile
from pathlib import Path

import numpy as np

from dialshift.across_seeds import format_spread, spread
from dialshift.bundle.xing import FIXED_SETS, RANDOM_SETS, TRAIN_CONFIG, VARIANTS, redraw_folder, redraw_seeds
from dialshift.errors import DialshiftError

SETS = (*RANDOM_SETS, *FIXED_SETS)


def _test_rows(folder, configs, limit) -> dict:
    """``{config: (ids, context lengths)}`` of the test splits of ``folder``."""
    from dialshift.ranking.data import read_columns

    rows = {}
    for name in configs:
        table = read_columns(folder, name, "test", ["id", "context"], limit, 0)
        rows[name] = (table.column("id").to_pylist(), [len(c) for c in table.column("context").to_pylist()])
    return rows


def _check_ids(entry, rows: dict, folder_of) -> None:
    from dialshift.bundle.manifest import ids_digest

    for name, (ids, _) in rows.items():
        if entry.description["ids"].get(name) != ids_digest(ids) or entry.description["instances"][name] != len(ids):
            raise DialshiftError(f"{entry.path}: the {name!r} test ids differ from those of {folder_of(name)}; report "
                                 "against the dataset folder the bundle was made from")


def history_as(scores: list) -> float:
    """The mean over rows of the mean AS of the History utterances (every context utterance but the Query)."""
    return float(np.mean([np.mean(values[:-1]) for values in scores if len(values) > 1]))


def report(paths, dataset, out, replicates: int = 1000, plots: bool = True, progress: bool = False) -> dict:
    """Predictions, per-seed ``results.json`` and the across-seed Table 3 of the returned attention scores; returns
    the summary (also ``OUT/summary.json``, with ``OUT/results.md``)."""
    from dialshift.io import atomic_write, write_json_atomic
    from dialshift.returned import check_distinct_runs, find_returned, read_arrays
    from dialshift.scoring import ScoringSettings, check_output_dir, score_files, write_results
    from dialshift.scoring.pipeline import claim_output_dir, record_output_dir
    from dialshift.scoring.predictions import write_predictions

    inputs = (*paths, dataset)
    check_output_dir(out, writes=None, inputs=inputs)
    found = find_returned(paths, "xing")
    protocol = next(iter(found.values())).description["protocol"]
    limit = protocol["max_instances"]
    fixed = _test_rows(dataset, (TRAIN_CONFIG, *FIXED_SETS), limit)
    with tempfile.TemporaryDirectory(prefix="dialshift-redraws-") as scratch:
        redraws = {seed: Path(scratch) / f"redraw-{redraw}" for seed, redraw in redraw_seeds(protocol).items()
                   if any(entry.seed == seed for entry in found.values())}
        rows_of = {seed: {**fixed, **_test_rows(redraw_folder(dataset, redraw_seeds(protocol)[seed], folder),
                                                RANDOM_SETS, limit)}
                   for seed, folder in redraws.items()}
        loaded = {}
        for step, entry in found.items():
            rows = rows_of[entry.seed]
            _check_ids(entry, rows, lambda name, s=entry.seed: redraws[s] if name in RANDOM_SETS else dataset)
            expected = {}
            for name, (ids, lengths) in rows.items():
                expected.update({f"test/{name}/as": ((sum(lengths),), "f"), f"test/{name}/ll": ((len(ids),), "f"),
                                 f"test/{name}/tokens": ((len(ids),), "iu")})
            loaded[step] = read_arrays(entry, expected)
        check_distinct_runs(found, loaded)
        out = claim_output_dir(out, "dialshift bundle report", writes=None, inputs=inputs)
        results: dict[str, dict[int, dict]] = {}
        for step, entry in sorted(found.items()):
            variant, seed, arrays = entry.description["variant"], entry.seed, loaded[step]
            folder = out / variant / f"seed{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            files, scores = {}, {}
            for name, (ids, lengths) in rows_of[seed].items():
                scores[name] = [values.tolist() for values in np.split(arrays[f"test/{name}/as"].astype(np.float64),
                                                                        np.cumsum(lengths)[:-1])]
                files[name] = folder / f"{name}.jsonl"
                write_predictions(files[name], "attention_distribution", ids, {
                    "attention_scores": scores[name], "log_likelihood": arrays[f"test/{name}/ll"],
                    "tokens": arrays[f"test/{name}/tokens"]})
            ll, tokens = arrays[f"test/{TRAIN_CONFIG}/ll"], arrays[f"test/{TRAIN_CONFIG}/tokens"]
            row = {"perplexity": float(np.exp(-ll.sum() / tokens.sum())),
                   "history_as_percent": 100 * history_as(scores[TRAIN_CONFIG])}
            run = {"run": {"model": "dialshift bundle (see bundle.json)", "method": variant, "seeds": [seed],
                           "source": "attention scores returned by the GPU bundle, scored here"}}
            for names, source in ((FIXED_SETS, Path(dataset)), (RANDOM_SETS, redraws[seed])):
                settings = ScoringSettings(dataset=source, replicates=replicates, max_instances=limit, sample_seed=0)
                document = score_files({name: files[name] for name in names}, settings, run)
                write_results(folder / ("results-fixed" if names == FIXED_SETS else "results-random"), document,
                              plots=False)
                row.update({name: document["results"][name]["das_ratio"] for name in names})
            results.setdefault(variant, {})[seed] = row
    summary = summarise(results, protocol)
    write_json_atomic(out / "summary.json", summary)
    atomic_write(out / "results.md", summary_markdown(summary))
    record_output_dir(out, None)
    return summary


def summarise(results: dict, protocol: dict) -> dict:
    """Per variant, across seeds: perplexity, History AS (%) and the DAS ratio of each set."""
    columns = ("perplexity", "history_as_percent", *SETS)
    return {"protocol": protocol, "variants": {
        variant: {"seeds": sorted(results[variant]),
                  **{column: spread([row[column] for row in results[variant].values()]) for column in columns}}
        for variant in VARIANTS if variant in results}}


def _label(variant: str) -> tuple[str, str]:
    structure, rest = variant.split("@")
    probability, _, noloss = rest.partition("-")
    names = {"non_hier": "Non-hier", "static": "Static", "static_ui": "StaticUI", "dynamic": "Dynamic",
             "dynamic_ui": "DynamicUI"}
    return probability, ("Non-atten-loss " if noloss else "") + names[structure]


def summary_markdown(summary: dict) -> str:
    """``results.md``: Table 3 (mean ± sd across seeds)."""
    lines = ["# Xing & Gulla at full scale: Table 3 from the returned attention scores", "",
             f"LSTM {summary['protocol']['layers']} x {summary['protocol']['dim']}. Each cell: mean ± standard "
             "deviation across the seeds; random sets redrawn at every evaluation. Computed by `dialshift bundle "
             "report`.", "",
             "| Prob | Structure | seeds | Perp. | Avg. (%) | " + " | ".join(
                 name.removeprefix("ubuntu_distract_").replace("_", " ") for name in SETS) + " |",
             "|---|---|---|---|---|" + "---|" * len(SETS)]
    for variant, row in summary["variants"].items():
        probability, structure = _label(variant)
        lines.append(f"| {probability} | {structure} | {len(row['seeds'])} | {format_spread(row['perplexity'])} | "
                     f"{format_spread(row['history_as_percent'])} | "
                     + " | ".join(format_spread(row[name]) for name in SETS) + " |")
    return "\n".join(lines) + "\n"
