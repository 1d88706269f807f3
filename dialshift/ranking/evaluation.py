"""``dialshift evaluate``: score rankers on DailyDialog shift configs with one or more uncertainty methods.

Work is shared as much as the methods allow: every distinct (context, candidate) pair over all requested configs is
scored once per *pass*, where a pass is one deterministic forward of a ranker (``vanilla``, ``temperature`` and the
first ensemble member share it) or one seeded MC-dropout forward. Outputs per method ``m``:

* ``OUT/m/predictions/<config>.jsonl``: one line per instance, ``{"id", "scores", "probabilities", "uncertainty"}``
  (the leaderboard submission format; ``uncertainty`` is the per-candidate variance over passes, ``null`` for the
  single-pass methods);
* ``OUT/m/results.json``: ``{"config": {...run description...}, "results": {config: {accuracy, brier, ece, ...}}}``;
* ``OUT/results.md`` (all methods found in ``OUT``, side by side) and the plots of :mod:`dialshift.ranking.report`.
"""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dialshift import __version__
from dialshift.errors import DialshiftError
from dialshift.models.ranker import read_ranker_meta
from dialshift.models.uncertainty import METHODS, predictive


@dataclass
class EvaluationSettings:
    model_dirs: list
    methods: list
    dataset: Path
    patterns: list
    out_dir: Path
    split: str = "test"
    max_instances: int | None = None
    sample_seed: int = 0
    batch_size: int = 64
    dropout_passes: int = 5
    dropout_seed: int = 0
    n_bins: int = 10
    device: str | None = None
    progress: bool = True
    plots: bool = True
    extra: dict = field(default_factory=dict)


def check_methods(methods, model_dirs, metas) -> None:
    for method in methods:
        if method not in METHODS:
            raise DialshiftError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    if "ensemble" in methods and len(model_dirs) < 2:
        raise DialshiftError("--method ensemble needs at least two --model-dir (rankers trained with different seeds)")
    if "temperature" in methods and not metas[0].get("temperature"):
        raise DialshiftError(f"{model_dirs[0]}: no fitted temperature in its dialshift_ranker.json; retrain it")
    lengths = {meta["max_length"] for meta in metas}
    if "ensemble" in methods and len(lengths) > 1:
        raise DialshiftError(f"ensemble members were trained with different --max-length values {sorted(lengths)}")


def method_passes(method: str, model_dirs, dropout_passes: int, dropout_seed: int) -> list[tuple[str, int | None]]:
    """The passes ``(model_dir, dropout_seed or None)`` whose logits a method combines."""
    first = str(model_dirs[0])
    if method in ("vanilla", "temperature"):
        return [(first, None)]
    if method == "dropout":
        return [(first, dropout_seed + i) for i in range(dropout_passes)]
    return [(str(d), None) for d in model_dirs]


def load_configs(settings: EvaluationSettings):
    from tqdm.auto import tqdm

    from dialshift.ranking.data import load_split, read_card_configs, resolve_configs

    config_map = read_card_configs(settings.dataset)
    names = resolve_configs(list(config_map), settings.patterns)
    data = {}
    for name in tqdm(names, desc="reading configs", unit="config", disable=not settings.progress):
        split = load_split(settings.dataset, name, settings.split, settings.max_instances, settings.sample_seed,
                           config_map)
        if not split["id"]:
            raise DialshiftError(f"{settings.dataset}: config {name!r} has no {settings.split!r} instances")
        sizes = {len(c) for c in split["candidates"]}
        if len(sizes) != 1:
            raise DialshiftError(f"{settings.dataset}: config {name!r} mixes candidate counts {sorted(sizes)}")
        data[name] = split
    return data


def unique_pairs(data: dict):
    """All distinct (context, candidate) pairs, and per config an ``N x K`` array of indices into them."""
    index: dict[tuple, int] = {}
    rows = {}
    for name, split in data.items():
        flat = [index.setdefault((tuple(context), candidate), len(index))
                for context, candidates in zip(split["context"], split["candidates"], strict=True)
                for candidate in candidates]
        rows[name] = np.asarray(flat, dtype=np.int64).reshape(len(split["id"]), -1)
    return list(index), rows


def score_passes(settings: EvaluationSettings, pairs, needed, logits: dict) -> dict:
    """Add to ``logits`` the logits of every pair for every needed pass not in it yet, loading each ranker once."""
    import torch

    from dialshift.models.ranker import load_ranker
    from dialshift.ranking.scoring import score_pairs

    device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
    by_model: dict[str, list] = {}
    for model_dir, seed in needed:
        if (model_dir, seed) not in logits:
            by_model.setdefault(model_dir, []).append(seed)
    for model_dir, seeds in by_model.items():
        ranker = load_ranker(model_dir, device=device)
        for seed in seeds:
            desc = f"{Path(model_dir).name}" + (f" dropout {seed}" if seed is not None else "")
            logits[(model_dir, seed)] = score_pairs(ranker, pairs, settings.batch_size, dropout_seed=seed,
                                                    progress=settings.progress, desc=desc)
        del ranker
    return logits


def metrics_for(probabilities: np.ndarray, labels: np.ndarray, n_bins: int) -> dict:
    from dialshift.metrics import brier, ece, recall_at_k

    return {
        "accuracy": float(recall_at_k(probabilities, labels)["recall@1"]),
        "brier": float(brier(probabilities, labels)["brier"]),
        "ece": float(ece(probabilities, labels, n_bins=n_bins)["ece"]),
        "instances": int(len(labels)),
    }


def write_predictions(path: Path, ids, combined: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(f"{path}.tmp")
    uncertainty = combined["uncertainty"]
    with open(tmp, "w") as handle:
        for row, instance_id in enumerate(ids):
            line = {
                "id": instance_id,
                "scores": [round(float(x), 6) for x in combined["scores"][row]],
                "probabilities": [round(float(x), 7) for x in combined["probabilities"][row]],
                "uncertainty": None if uncertainty is None else [round(float(x), 9) for x in uncertainty[row]],
            }
            handle.write(json.dumps(line) + "\n")
    os.replace(tmp, path)


def run_config_description(settings, method, metas, data) -> dict:
    from dialshift.ranking.data import dataset_revision

    used = [str(d) for d, _ in dict.fromkeys(method_passes(method, settings.model_dirs, 1, 0))]
    used_metas = [metas[str(d)] for d in used]
    description = {
        "model": used_metas[0].get("backbone"),
        "model_dirs": used,
        "method": method,
        "seeds": [m.get("seed") for m in used_metas],
        "dataset": str(settings.dataset),
        "dataset_revision": dataset_revision(settings.dataset),
        "dialshift_version": __version__,
        "split": settings.split,
        "max_instances": settings.max_instances,
        "sample_seed": settings.sample_seed,
        "max_length": used_metas[0]["max_length"],
        "predictive_probability": "softmax over the 10 candidates' logits (mean over passes/members)",
        "uncertainty": "per-candidate variance of the probability over passes/members"
        if method in ("dropout", "ensemble") else None,
        "ece_bins": settings.n_bins,
        "configs": list(data),
    }
    if method == "temperature":
        description["temperature"] = used_metas[0]["temperature"]
    if method == "dropout":
        description.update(dropout_passes=settings.dropout_passes, dropout_seed=settings.dropout_seed)
    return {**description, **settings.extra}


def evaluate(settings: EvaluationSettings) -> dict:
    """Run the evaluation; return ``{method: results.json content}``."""
    from tqdm.auto import tqdm

    from dialshift.models.ranker import write_json_atomic
    from dialshift.ranking.report import reliability_configs, write_reliability, write_report

    if not settings.model_dirs:
        raise DialshiftError("give at least one --model-dir")
    metas = {str(d): read_ranker_meta(d) for d in settings.model_dirs}
    check_methods(settings.methods, settings.model_dirs, [metas[str(d)] for d in settings.model_dirs])
    data = load_configs(settings)
    pairs, rows = unique_pairs(data)
    total = sum(r.size for r in rows.values())
    needed = list(dict.fromkeys(p for m in settings.methods
                                for p in method_passes(m, settings.model_dirs, settings.dropout_passes,
                                                       settings.dropout_seed)))
    if settings.progress:
        print(f"{len(data)} configs, {total} pairs ({len(pairs)} distinct), {len(needed)} passes")

    # Cheapest methods first, each written as soon as its passes are scored: vanilla/temperature (one pass), the
    # ensemble members, then the MC-dropout passes.
    logits: dict = {}
    outputs = {}
    for method in sorted(settings.methods, key=lambda m: (METHODS.index(m) != 0, m == "dropout")):
        passes = method_passes(method, settings.model_dirs, settings.dropout_passes, settings.dropout_seed)
        score_passes(settings, pairs, passes, logits)
        temperature = metas[str(settings.model_dirs[0])]["temperature"] if method == "temperature" else 1.0
        results, drawn = {}, {}
        for name in tqdm(data, desc=f"{method}: metrics", unit="config", disable=not settings.progress):
            combined = predictive(np.stack([logits[p][rows[name]] for p in passes]), temperature)
            labels = np.asarray(data[name]["label"])
            write_predictions(settings.out_dir / method / "predictions" / f"{name}.jsonl", data[name]["id"], combined)
            results[name] = metrics_for(combined["probabilities"], labels, settings.n_bins)
            if settings.plots and name in reliability_configs(list(data)):
                drawn[name] = combined["probabilities"]
        if drawn:
            write_reliability(settings.out_dir, method, drawn, {n: data[n]["label"] for n in drawn}, settings.n_bins)
        document = {"config": run_config_description(settings, method, metas, data), "results": results}
        write_json_atomic(settings.out_dir / method / "results.json", document)
        outputs[method] = document
        write_report(settings.out_dir, plots=settings.plots, progress=settings.progress)
    return {method: outputs[method] for method in settings.methods}
