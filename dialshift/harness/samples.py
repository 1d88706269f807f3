"""lm-eval's logged samples (``--log_samples``) as dialshift prediction files.

lm-eval writes, per task, ``samples_<task>_<date>.jsonl`` (one line per document: the ``doc`` with its ``id``, and
``filtered_resps``, one ``[log-likelihood, is_greedy]`` per choice) and ``results_<date>.json`` (whose ``configs``
hold each task's ``metadata``: the dialshift config, task and split the export wrote). Each document becomes one
prediction line ``{"id", "scores", "probabilities"}``: the scores are the choices' log-likelihoods, divided by the
choice's length in characters by default (lm-eval's ``acc_norm``; ``normalisation="none"``: the summed
log-likelihood, lm-eval's ``acc``), and the probabilities their softmax over the candidates. ``predictions/run.json``
records the source and the split, so ``dialshift score`` scores the predictions on the split lm-eval ran.
"""

import json
import re
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.harness.export import CHOICE_TASKS

SAMPLES = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl")
RESULTS = re.compile(r"results_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.json")
NORMALISATIONS = ("chars", "none")


def _task_metadata(folder: Path) -> dict:
    """``{lm-eval task: its metadata}`` from every ``results_*.json`` under ``folder`` (later runs win)."""
    found = {}
    for path in sorted(folder.rglob("results_*.json"), key=lambda p: p.name):
        if not RESULTS.fullmatch(path.name):
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise DialshiftError(f"{path}: not a readable lm-eval results file ({type(error).__name__})") from None
        for name, config in (document.get("configs") or {}).items():
            metadata = (config or {}).get("metadata") or {}
            if "dialshift_config" in metadata:
                found[name] = {**metadata, "model": (document.get("config") or {}).get("model_args"),
                               "lm_eval_version": document.get("lm_eval_version")}
    return found


def _latest_samples(folder: Path) -> dict:
    """``{task: path}`` of the newest samples file of each task under ``folder``."""
    latest = {}
    for path in folder.rglob("samples_*.jsonl"):
        match = SAMPLES.fullmatch(path.name)
        if match and (match["task"] not in latest or match["date"] > latest[match["task"]][0]):
            latest[match["task"]] = (match["date"], path)
    return {task: path for task, (_, path) in latest.items()}


def _scores(line: dict, where: str, normalisation: str) -> tuple[str, np.ndarray]:
    doc = line.get("doc") or {}
    if not isinstance(doc, dict) or "id" not in doc or not isinstance(doc.get("candidates"), list):
        raise DialshiftError(f"{where}: the logged doc has no id or candidates (not a task `dialshift lm-eval export` "
                             "wrote)")
    responses = line.get("filtered_resps")
    if not isinstance(responses, list) or len(responses) != len(doc["candidates"]):
        raise DialshiftError(f"{where}: {len(responses) if isinstance(responses, list) else 'no'} logged responses for "
                             f"{len(doc['candidates'])} candidates (run lm-eval with --log_samples on the exported "
                             "multiple-choice task)")
    try:
        lls = np.array([float(item[0] if isinstance(item, (list, tuple)) else item) for item in responses])
    except (TypeError, ValueError, IndexError):
        raise DialshiftError(f"{where}: filtered_resps is not a list of [log-likelihood, is_greedy]") from None
    if not np.isfinite(lls).all():
        raise DialshiftError(f"{where}: a log-likelihood is not finite")
    if normalisation == "chars":
        lls = lls / np.maximum([len(str(choice)) for choice in doc["candidates"]], 1)
    return str(doc["id"]), lls


def import_samples(samples, out, *, normalisation: str = "chars") -> dict:
    """Write ``out/<config>.jsonl`` and ``out/run.json`` from the lm-eval output folder ``samples``; return
    ``{config: instances}``."""
    from dialshift.io import write_json_atomic
    from dialshift.scoring.predictions import write_predictions

    if normalisation not in NORMALISATIONS:
        raise DialshiftError(f"normalisation {normalisation!r}: one of {', '.join(NORMALISATIONS)}")
    folder = Path(samples)
    if not folder.is_dir():
        raise DialshiftError(f"{folder}: no such folder (give the --output_path of `lm_eval ... --log_samples`)")
    metadata = _task_metadata(folder)
    files = {task: path for task, path in _latest_samples(folder).items() if task in metadata}
    if not files:
        raise DialshiftError(f"{folder}: no samples_<task>_<date>.jsonl of a dialshift task with its results_*.json "
                             "(run `lm_eval --tasks dialshift_<config> --include_path TASKS --output_path DIR "
                             "--log_samples`)")
    splits = {metadata[task]["dialshift_split"] for task in files}
    if len(splits) > 1:
        raise DialshiftError(f"{folder}: samples of several splits ({', '.join(sorted(splits))}); import each "
                             "split's run into its own --out")
    out = Path(out)
    written = {}
    for task in sorted(files):
        meta, path = metadata[task], files[task]
        if meta.get("dialshift_task") not in CHOICE_TASKS:
            raise DialshiftError(f"{path}: task {meta.get('dialshift_task')!r} is not multiple choice")
        ids, scores = [], []
        with open(path, encoding="utf-8") as handle:
            for number, text in enumerate(handle, 1):
                try:
                    line = json.loads(text)
                except ValueError:
                    raise DialshiftError(f"{path}:{number}: not a JSON line") from None
                uid, row = _scores(line, f"{path}:{number}", normalisation)
                ids.append(uid)
                scores.append(row)
        order = sorted(range(len(ids)), key=ids.__getitem__)
        ids, scores = [ids[i] for i in order], [scores[i] for i in order]
        probabilities = [np.exp(row - row.max()) / np.exp(row - row.max()).sum() for row in scores]
        config = meta["dialshift_config"]
        write_predictions(out / f"{config}.jsonl", meta["dialshift_task"], ids,
                          {"scores": scores, "probabilities": probabilities})
        written[config] = len(ids)
    first = metadata[sorted(files)[0]]
    write_json_atomic(out / "run.json", {
        "run": {"source": "lm-evaluation-harness", "lm_eval_version": first.get("lm_eval_version"),
                "model_args": first.get("model"), "normalisation": normalisation,
                "fingerprints": {metadata[task]["dialshift_config"]: metadata[task].get("dialshift_fingerprint")
                                 for task in sorted(files)}},
        "scoring": {"split": splits.pop()},
    })
    return written
