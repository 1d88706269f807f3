"""Evaluating a trained intent classifier in the open world: every method's predictions, scored, and their summary.

:func:`evaluate_methods` reads the classifier's logits and features (:class:`~dialshift.models.intent_encoder.
IntentEncoder`) on a config's splits, fits each method of :mod:`dialshift.models.open_world` on the training features
(thresholds on ``validation_hold``; ADB's boundaries early-stopped on the in-scope ``validation`` utterances), writes
its predictions on ``test`` and ``cov_test`` in the ``open_world_intent`` task's fields and scores them with
:mod:`dialshift.scoring` (F1_All, F1_In, F1_Out, Acc, AUROC, FPR@95TPR with bootstrap intervals). Per run folder::

    predictions/<method>/<split>/<config>.jsonl, results/<method>/<split>/results.json, outputs.npz

(``outputs.npz``: the logits and gold labels of both splits and each method's predictions, what
:func:`dialshift.plots.open_world_confusion_figure` draws). :func:`summarise` and :func:`summary_markdown` give the
across-seed table of several runs (:mod:`dialshift.across_seeds`).
"""

from pathlib import Path

import numpy as np

#: The splits each method is scored on: the in-distribution test set and the covariate-shifted one.
SPLITS = ("test", "cov_test")
#: The metrics summarised across seeds.
METRICS = ("f1_all", "f1_in", "f1_out", "accuracy", "auroc", "fpr@95tpr")


def score_file(dataset, config: str, split: str, path: Path, replicates: int, out_dir: Path) -> dict:
    """Score one predictions file with the task-generic pipeline; write its results; return the point metrics."""
    from dialshift.scoring import ScoringSettings, score_files, write_results

    document = score_files({config: path}, ScoringSettings(Path(dataset), split=split, replicates=replicates))
    write_results(out_dir, document, plots=False, name=config)
    return document["results"][config]


def evaluate_methods(model, encoder, loaded: dict, validation, out: Path, *, dataset, config: str, methods,
                     seed: int, batch_size: int, replicates: int, dropout_passes: int = 0, **options) -> dict:
    """Fit, predict, write and score every method of ``methods`` for the classifier ``model`` (on its device).

    ``loaded``: :func:`dialshift.models.open_world_data.load_open_world_config`'s dict; ``validation``: the
    ``(texts, labels)`` ADB's early stopping reads; ``dropout_passes``: passes over the training utterances with
    dropout active for ADB; ``options``: the keyword options of :func:`dialshift.models.open_world.fit_methods`.
    Returns ``{"results": {method: {split: metrics}}, "thresholds", "fitted", "options"}`` (``options``: the feature
    kind and, with Cosine, its scoring rule)."""
    from dialshift.models.open_world import fit_methods
    from dialshift.scoring.predictions import write_predictions

    data, oos, device = loaded["data"], loaded["oos"], next(model.parameters()).device
    adb = "adb" in methods
    outputs = {split: encoder.outputs(model, list(data[split]["text"]), batch_size, device, seed=seed,
                                      dropout_passes=dropout_passes if adb and split == "train" else 0)
               for split in ("train", "validation_hold", *SPLITS)}
    texts, labels = validation
    fitted_methods = fit_methods(methods, outputs["train"], np.asarray(data["train"]["label"]),
                                 outputs["validation_hold"], np.asarray(data["validation_hold"]["label"]), oos,
                                 seed=seed, validation=(encoder.outputs(model, texts, batch_size, device), labels)
                                 if adb else None, **options)
    results, saved = {}, {}
    for name, method in fitted_methods.items():
        for split in SPLITS:
            predictions, scores = method.predict(outputs[split], oos)
            path = write_predictions(out / "predictions" / name / split / f"{config}.jsonl", "open_world_intent",
                                     data[split]["id"], {"prediction": predictions, "score": scores},
                                     bounds={"prediction": (0, len(loaded["names"]))})
            results.setdefault(name, {})[split] = score_file(dataset, config, split, path, replicates,
                                                             out / "results" / name / split)
            saved[f"{name}/{split}"] = predictions
    np.savez_compressed(out / "outputs.npz", **{f"logits/{split}": outputs[split].logits for split in SPLITS},
                        **{f"gold/{split}": np.asarray(data[split]["label"]) for split in SPLITS}, **saved)
    fitted = {"adb": {key: fitted_methods["adb"].state[key] for key in ("epochs_run", "kept_epoch", "validation_f1",
                                                                        "dropout_passes")}} if adb else {}
    if "knn" in fitted_methods:
        fitted["knn"] = {"n_neighbors": fitted_methods["knn"].state["n_neighbors"]}
    used = {"features": encoder.features, **({"cosine_scoring": options["cosine_scoring"]}
                                             if "cosine" in fitted_methods and "cosine_scoring" in options else {})}
    return {"results": results, "thresholds": {n: m.threshold for n, m in fitted_methods.items()}, "fitted": fitted,
            "options": used}


def summarise(runs: dict) -> dict:
    """``{config: {method: {split: {metric: spread}}}}`` of ``runs`` (``{config: {seed: run}}``, each run holding
    :func:`evaluate_methods`'s ``results``) over seeds (:func:`dialshift.across_seeds.spread`)."""
    from dialshift.across_seeds import spreads

    return {config: spreads({method: {split: {metric: metrics.get(metric) for metric in METRICS}
                                      for split, metrics in splits.items()}
                             for method, splits in seed["results"].items()} for seed in seeds.values())
            for config, seeds in runs.items()}


def summary_markdown(summary: dict) -> str:
    """One table per config: F1_All, F1_In, F1_Out, Acc and AUROC on test and cov_test, in %, mean ± sd over seeds."""
    from dialshift.across_seeds import format_spread
    from dialshift.models.open_world import LABELS

    lines = []
    for config, methods in summary.items():
        lines += [f"### {config}", "", "| method | " + " | ".join(f"test {m}" for m in METRICS[:4]) + " | "
                  + " | ".join(f"cov {m}" for m in METRICS[:4]) + " | test AUROC | cov AUROC |",
                  "|---|" + "---:|" * 10]
        for method, splits in methods.items():
            cells = [format_spread(splits[s][m], 1, 100) for s in SPLITS for m in METRICS[:4]] + \
                [format_spread(splits[s]["auroc"], 1, 100) for s in SPLITS]
            n = splits["test"]["f1_all"]["n"]
            lines.append(f"| {LABELS[method]} (n={n}) | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)
