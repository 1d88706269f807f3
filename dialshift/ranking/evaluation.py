"""``dialshift evaluate``: score rankers on response-ranking configs with one or more uncertainty methods.

Work is shared as much as the methods allow: every distinct (context, candidate) pair over all requested configs is
scored once per *pass*, where a pass is one deterministic forward of a ranker (``vanilla``, ``temperature`` and the
first ensemble member share it) or one seeded MC-dropout forward. Outputs per method ``m``:

* ``OUT/m/predictions/<config>.jsonl``: one line per instance, ``{"id", "scores", "probabilities", "uncertainty"}``
  (the leaderboard submission format; ``uncertainty`` is the per-candidate variance over passes, ``null`` for the
  single-pass methods), and ``OUT/m/predictions/run.json`` (the run description and the scoring settings);
* ``OUT/m/results.json``: the predictions scored by :mod:`dialshift.scoring` (the task's metric set with paired
  bootstrap intervals) — exactly what ``dialshift score OUT/m/predictions --dataset DATASET`` gives;
* ``OUT/results.md`` (all methods found in ``OUT``, side by side) and the plots of :mod:`dialshift.scoring.report`.

With ``attention`` set (``--attention``) the run reads the first ranker's per-utterance attention on
``attention_distribution`` configs instead (:mod:`dialshift.ranking.attention`): ``OUT/attention/...``.
"""

import json
from pathlib import Path

import numpy as np

from dialshift import __version__
from dialshift.errors import DialshiftError
from dialshift.models.adapters import model_meta
from dialshift.models.uncertainty import METHODS, predictive
from dialshift.ranking.settings import DEFAULT_BATCH_SIZE, EvaluationSettings, check_scoring_options, scoring_settings

#: The config tasks ``dialshift evaluate`` scores: one logit per candidate, the softmax over an instance's candidates.
TASKS = ("response_ranking", "pairwise_selection")
#: Decimals kept in the predictions files: logits, probabilities and their variance over passes.
PREDICTION_DIGITS = {"scores": 6, "probabilities": 7, "uncertainty": 9}


def check_methods(methods, model_dirs, metas) -> None:
    for method in methods:
        if method not in METHODS:
            raise DialshiftError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    if "ensemble" in methods and len(model_dirs) < 2:
        raise DialshiftError("--method ensemble needs at least two --model-dir (rankers trained with different seeds)")
    if "temperature" in methods and not metas[0].get("temperature"):
        raise DialshiftError(f"{model_dirs[0]}: no fitted temperature in its dialshift_model.json; retrain it (only "
                             "rankers trained by trainers/ranker.py have one)")
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

    from dialshift.configs import expand_patterns
    from dialshift.hub.reading import data_files, folder_configs
    from dialshift.ranking.data import load_split

    config_map = data_files(settings.dataset)
    typed = folder_configs(settings.dataset)
    if settings.patterns:
        names = expand_patterns(settings.patterns, list(config_map), hint="the dataset's configs")
    else:  # default: the unshifted response-ranking config(s)
        names = [name for name, config in typed.items() if config.task == "response_ranking" and not config.shifted]
        if not names:
            raise DialshiftError(f"{settings.dataset}: no unshifted response_ranking config; name configs with "
                                 "--configs")
    for name in names:
        task = typed[name].task if name in typed else None
        if task not in TASKS:
            hint = " (add --attention for the ranker's DAS ratio)" if task == "attention_distribution" else ""
            raise DialshiftError(f"{settings.dataset}: config {name!r} is a {task or 'untyped'} config; `dialshift "
                                 "evaluate` runs rankers on response_ranking and pairwise_selection configs (score "
                                 f"other tasks' predictions with `dialshift score`){hint}")
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


def config_tasks(dataset, names) -> dict:
    """``{config: task}`` of the named configs (all checked by :func:`load_configs`)."""
    from dialshift.hub.reading import folder_configs

    typed = folder_configs(dataset)
    return {name: typed[name].task for name in names}


def score_passes(settings: EvaluationSettings, pairs, needed, logits: dict, encoded: dict | None = None,
                 described: dict | None = None) -> dict:
    """Add to ``logits`` the logits of every pair for every needed pass not in it yet, loading each model once (a
    ranker or any adapter of :mod:`dialshift.models.adapters`, as ``settings.model_type`` says).

    The pairs are encoded once per tokenizer and max length (``encoded`` caches them across calls: pass the same
    dict to share the tokens between methods, seeds and passes); ``described`` receives each model's
    ``describe()`` (what its run.json records)."""
    import torch

    from dialshift.models.adapters import load_scorer
    from dialshift.models.ranker import precision_context, resolve_attention, resolve_precision

    device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
    precision = resolve_precision(settings.precision, device, "scoring")
    attn = resolve_attention(settings.attn, precision, "scoring")
    batch_size = settings.batch_size or DEFAULT_BATCH_SIZE.get(torch.device(device).type, 64)
    encoded = {} if encoded is None else encoded
    by_model: dict[str, list] = {}
    for model_dir, seed in needed:
        if (model_dir, seed) not in logits:
            by_model.setdefault(model_dir, []).append(seed)
    for model_dir, seeds in by_model.items():
        scorer = load_scorer(model_dir, settings.model_type, device=device, attn_implementation=attn,
                             precision=precision, options=settings.adapter)
        if described is not None:
            described[model_dir] = scorer.describe()
        key = scorer.encoding_key  # shared by every model with the same tokenizer and max length
        if key not in encoded:
            encoded[key] = scorer.encode(pairs)
        with precision_context("tf32" if precision == "tf32" else "fp32", device):
            for seed in seeds:
                desc = f"{Path(model_dir).name}" + (f" dropout {seed}" if seed is not None else "")
                logits[(model_dir, seed)] = scorer.score(encoded[key], batch_size, dropout_seed=seed,
                                                         progress=settings.progress, desc=desc)
        del scorer
    return logits


def run_config_description(settings, method, metas, data, described: dict | None = None) -> dict:
    used = [str(d) for d, _ in dict.fromkeys(method_passes(method, settings.model_dirs, 1, 0))]
    used_metas = [metas[str(d)] for d in used]
    adapter = (described or {}).get(used[0], {})
    description = {
        "model": used_metas[0].get("backbone"),
        "model_dirs": used,
        "method": method,
        "seeds": [m.get("seed") for m in used_metas],
        "dialshift_version": __version__,
        "max_length": used_metas[0]["max_length"],
        "predictive_probability": "softmax over each instance's candidates' logits (mean over passes/members)",
        "uncertainty": "per-candidate variance of the probability over passes/members"
        if method in ("dropout", "ensemble") else None,
    }
    if method == "temperature":
        description["temperature"] = used_metas[0]["temperature"]
    if method == "dropout":
        description.update(dropout_passes=settings.dropout_passes, dropout_seed=settings.dropout_seed)
    if used_metas[0]["model_type"] != "ranker":  # an adapter (a ranker's run.json keeps its keys)
        description.update(model_type=used_metas[0]["model_type"], adapter=adapter)
    elif adapter.get("quantize", "none") != "none":
        description["quantize"] = adapter["quantize"]
    return {**description, **settings.extra}


def evaluate(settings: EvaluationSettings) -> dict:
    """Run the evaluation; return ``{method: results.json content}``. Settings with ``attention`` set are run by
    :func:`dialshift.ranking.attention.evaluate_attention` (``dialshift evaluate --attention`` dispatches there);
    ``open_world_intent`` configs by :func:`dialshift.ranking.open_world.evaluate_open_world` (``{"msp/<split>":
    results.json content}``)."""
    from dialshift.ranking.open_world import evaluate_open_world, open_world_configs
    from dialshift.scoring import check_output_dir
    from dialshift.scoring.pipeline import RESULTS_WRITES, RUN_FILE, claim_output_dir, record_output_dir
    from dialshift.scoring.report import write_report

    if settings.attention:
        raise DialshiftError("attention settings are evaluated by dialshift.ranking.attention.evaluate_attention")

    writes = (*RESULTS_WRITES, *METHODS)
    settings.out_dir = check_output_dir(settings.out_dir, writes=writes)  # before any work: a bad --out fails at once
    check_scoring_options(settings)
    open_world = open_world_configs(settings)
    if open_world:  # a classifier's MSP on open-world intent configs (dialshift.ranking.open_world)
        return evaluate_open_world(settings, open_world)
    for method in settings.methods:
        check_output_dir(settings.out_dir / method, writes=(*RESULTS_WRITES, RUN_FILE, "predictions"))
    if not settings.model_dirs:
        raise DialshiftError("give at least one --model-dir")
    metas = {str(d): model_meta(d, settings.model_type, settings.adapter) for d in settings.model_dirs}
    check_methods(settings.methods, settings.model_dirs, [metas[str(d)] for d in settings.model_dirs])
    data = load_configs(settings)
    tasks = config_tasks(settings.dataset, data)
    pairs, rows = unique_pairs(data)
    total = sum(r.size for r in rows.values())
    needed = list(dict.fromkeys(p for m in settings.methods
                                for p in method_passes(m, settings.model_dirs, settings.dropout_passes,
                                                       settings.dropout_seed)))
    if settings.progress:
        print(f"{len(data)} configs, {total} pairs ({len(pairs)} distinct), {len(needed)} passes")

    # Cheapest methods first, each written as soon as its passes are scored: vanilla/temperature (one pass), the
    # ensemble members, then the MC-dropout passes. Each method's predictions are then scored by dialshift.scoring,
    # exactly as `dialshift score` scores them.
    logits: dict = {}
    encoded: dict = {}
    described: dict = {}
    outputs = {}
    scoring = scoring_settings(settings)
    scoring.progress = settings.progress
    for method in sorted(settings.methods, key=lambda m: (METHODS.index(m) != 0, m == "dropout")):
        passes = method_passes(method, settings.model_dirs, settings.dropout_passes, settings.dropout_seed)
        score_passes(settings, pairs, passes, logits, encoded, described)
        temperature = metas[str(settings.model_dirs[0])]["temperature"] if method == "temperature" else 1.0
        per_config = {name: np.stack([logits[p][rows[name]] for p in passes]) for name in data}
        claim_output_dir(settings.out_dir, "dialshift evaluate", writes=writes)
        claim_output_dir(settings.out_dir / method, "dialshift evaluate", writes=(*RESULTS_WRITES, RUN_FILE,
                                                                                   "predictions"))
        outputs[method] = write_method(settings.out_dir / method, {name: split["id"] for name, split in data.items()},
                                       per_config, temperature,
                                       run_config_description(settings, method, metas, data, described), scoring,
                                       tasks)
        write_report(settings.out_dir, load_documents(settings.out_dir), plots=settings.plots)
        record_output_dir(settings.out_dir / method, (*RESULTS_WRITES, RUN_FILE, "predictions"))
        record_output_dir(settings.out_dir, writes)
    return {method: outputs[method] for method in settings.methods}


def write_method(method_dir, ids: dict, passes: dict, temperature: float, run: dict, scoring,
                 tasks: dict | None = None) -> dict:
    """One method's outputs from its logits: ``method_dir/predictions/<config>.jsonl`` (the submission format) and
    ``run.json``, scored by :mod:`dialshift.scoring` into ``method_dir/results.json``; return that document.

    ``ids``: ``{config: instance ids}``; ``passes``: ``{config: P x N x K logits}`` (P passes or members, rows in
    ``ids`` order), combined by :func:`dialshift.models.uncertainty.predictive` with ``temperature``; ``tasks``:
    ``{config: task}`` (default ``response_ranking``). Used by
    ``dialshift evaluate`` and by ``dialshift bundle report`` (logits computed on another machine)."""
    from dialshift.io import write_json_atomic
    from dialshift.scoring import score_directory
    from dialshift.scoring.pipeline import RESULTS_FILE, RUN_FILE
    from dialshift.scoring.predictions import write_predictions

    folder = Path(method_dir) / "predictions"
    for name, config_ids in ids.items():
        combined = predictive(passes[name], temperature)
        write_predictions(folder / f"{name}.jsonl", (tasks or {}).get(name, "response_ranking"), config_ids,
                          {field: combined[field] for field in ("scores", "probabilities", "uncertainty")},
                          digits=PREDICTION_DIGITS, extra=("uncertainty",))
    write_json_atomic(folder / RUN_FILE, {"run": run, "scoring": scoring.describe()})
    document = score_directory(folder, scoring)
    write_json_atomic(Path(method_dir) / RESULTS_FILE, document)
    return document


def load_documents(out_dir) -> dict:
    """``{method: results.json content}`` of the methods evaluated into ``out_dir``, in the canonical order."""
    from dialshift.scoring.pipeline import RESULTS_FILE

    found = {}
    for method in METHODS:
        path = Path(out_dir) / method / RESULTS_FILE
        if path.is_file():
            found[method] = json.loads(path.read_text())
    return found
