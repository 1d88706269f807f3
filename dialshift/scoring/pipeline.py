"""The scoring pipeline: predictions files -> the task's metric set with paired bootstrap intervals -> results.

``score_directory(PREDICTIONS_DIR, settings)`` scores every ``<config>.jsonl`` of a folder against the gold of the
dataset folder ``settings.dataset`` (the task and curve placement of each config come from its typed
:class:`~dialshift.configs.BenchmarkConfig`, :func:`dialshift.hub.folder_configs`). ``dialshift score`` and
``dialshift evaluate`` both end here, so scoring the predictions ``evaluate`` wrote reproduces its ``results.json``.

An optional ``run.json`` beside the predictions describes the run (``{"run": {...}, "scoring": {...}}``): ``run`` is
copied into ``results.json`` (model, method, seeds: what a leaderboard shows), ``scoring`` holds the settings the
predictions were scored with (bootstrap replicates and seed, metric options, split, subsample), used where the
``dialshift score`` command line leaves a setting unset.

Memory: predictions are parsed ``BLOCK_BYTES`` (32 MiB of text) at a time and reduced to per-instance statistics
(response ranking: 27 bytes per instance, whatever the candidate count), beside the gold ids (Arrow strings and an
8-byte key each) and gold columns; the bootstrap adds ``O(ids)`` per replicate. Measured by ``benchmarks/scoring.py``:
peak RSS about 0.37 GB + 150 bytes per instance (1e6 x 10: 0.5 GB in 6 s; 1e7 x 10: 1.8 GB in 63 s),
independent of the candidate count. Time: about 6 us per instance plus, per bootstrap replicate, some tens
of ns per instance for the tasks that score blocks of 100 replicates with matrix products (a complete DailyDialog
submission, 140,584 instances and 205k with the shared-id views, with its three calibration estimators, their
intervals and calibration tests: about 6 s of CPU time for 1,000 replicates, ``benchmarks/leaderboard.py``), and
about 75 ns for the others (a 1e7 file: pass fewer replicates with ``--bootstrap``).

Calibration: for each config with probabilities, the consistency-resampling test of calibration
(:mod:`dialshift.metrics.calibration_test`, as many null replicates as bootstrap replicates) goes into
``results.json``'s ``calibration_test``, and the calibration metrics' intervals and paired differences are those of
:mod:`dialshift.scoring.calibration` (``interval_kinds`` says which are upper bounds).
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dialshift import __version__
from dialshift.errors import DialshiftError
from dialshift.scoring import bootstrap, calibration
from dialshift.scoring.gold import (
    Gold,
    config_fingerprints,
    data_files,
    hub_commit,
    id_keys,
    load_gold,
    recorded_files,
)
from dialshift.scoring.jsonl import BLOCK_BYTES, clip, read_jsonl_chunks
from dialshift.scoring.tasks import BANDWIDTH, get_task

RUN_FILE = "run.json"
RESULTS_FILE = "results.json"


@dataclass
class ScoringSettings:
    """How predictions are scored (``dialshift score`` flags; ``run.json``'s ``scoring`` block fills unset ones)."""

    dataset: Path
    split: str = "test"
    replicates: int = 1000
    seed: int = 0
    confidence: float = 0.95
    options: dict = field(default_factory=dict)
    max_instances: int | None = None
    sample_seed: int = 0
    block_bytes: int = BLOCK_BYTES
    progress: bool = False
    ids: frozenset | None = None
    ids_file: str | None = None

    def describe(self) -> dict:
        described = {"split": self.split, "replicates": self.replicates, "seed": self.seed,
                     "confidence": self.confidence, "options": dict(self.options),
                     "max_instances": self.max_instances, "sample_seed": self.sample_seed}
        if self.ids is not None:
            described["subset"] = {"ids_file": self.ids_file, "ids": len(self.ids),
                                   "note": "a subset of each config's ids: not comparable with full-config results, "
                                           "never ranked"}
        return described


def read_ids(path) -> frozenset:
    """The ids of an ``--ids`` file: one per line (blank lines skipped); a missing or empty file is one error."""
    file = Path(path)
    try:
        ids = frozenset(line.strip() for line in file.read_text(encoding="utf-8").splitlines() if line.strip())
    except (OSError, UnicodeDecodeError) as error:
        raise DialshiftError(f"--ids {file}: cannot read it ({error})") from None
    if not ids:
        raise DialshiftError(f"--ids {file}: no ids (one instance id per line)")
    return ids


SETTING_NAMES = ("split", "replicates", "seed", "confidence", "options", "max_instances", "sample_seed")


#: Marks a folder results were written into (by ``score`` or ``evaluate``): only such a folder, a new or empty one,
#: or one holding none of :data:`RESULTS_WRITES` is written into.
RESULTS_MARKER = ".dialshift-results"
#: What a results writer puts in its folder (``evaluate`` adds one folder per method).
RESULTS_WRITES = (RESULTS_FILE, "results.md", "plots")


def check_output_dir(path, flag: str = "--out", writes=RESULTS_WRITES, inputs=()) -> Path:
    """Fail early, before any work, when ``path`` cannot become a results folder: a file, an unwritable place, or a
    folder holding the user's own ``results.json``/``results.md``/``plots``, a folder that is or holds one of
    ``inputs`` (see :func:`dialshift.io.check_owned_folder`; results are only written over results dialshift
    wrote)."""
    from dialshift.io import check_owned_folder

    return check_owned_folder(path, RESULTS_MARKER, flag=flag, writes=writes, inputs=inputs, verified=True)


def claim_output_dir(path, command: str, flag: str = "--out", writes=RESULTS_WRITES, inputs=()) -> Path:
    """:func:`check_output_dir`, then create the folder and mark it as written by ``command``."""
    from dialshift.io import claim_owned_folder

    return claim_owned_folder(path, RESULTS_MARKER, f"results written by `{command}`; it may write here again",
                              flag=flag, writes=writes, inputs=inputs, verified=True)


def record_output_dir(path, writes=RESULTS_WRITES) -> None:
    """Record the files written under ``writes`` of a claimed results folder (everything when None) in its marker,
    with their sha256: only files so recorded, unchanged, are ever written over (:func:`check_output_dir`)."""
    from dialshift.io import record_owned_files

    record_owned_files(path, RESULTS_MARKER, writes)


# ----------------------------------------------------------------------------------------------- reading


def _located(chunk, error: ValueError) -> DialshiftError:
    message = clip(str(error), 300)
    match = re.search(r"\[(\d+)\]", message)
    if match and int(match[1]) < chunk.table.num_rows:
        return DialshiftError(f"{chunk.where(int(match[1]))}: {message} (row = prediction line)")
    return DialshiftError(f"{chunk.path} (block from line {chunk.first_line}): {message}")


def read_predictions(path, task, gold: Gold, options: dict, block_bytes: int = BLOCK_BYTES) -> dict:
    """The task's per-instance statistics of a predictions file, in gold (key) order; every gold id exactly once."""
    import pyarrow as pa

    seen = np.zeros(len(gold), dtype=bool)
    stats: dict[str, np.ndarray] = {}
    for chunk in read_jsonl_chunks(path, task.schema(), block_bytes):
        ids = chunk.table.column("id").combine_chunks()
        if ids.null_count:
            row = int(np.flatnonzero(ids.is_null().to_numpy(zero_copy_only=False))[0])
            raise DialshiftError(f"{chunk.where(row)}: no 'id' field")
        keys = id_keys(ids)
        positions = np.minimum(np.searchsorted(gold.keys, keys), max(len(gold) - 1, 0))
        unknown = np.flatnonzero(gold.keys[positions] != keys) if len(gold) else np.arange(len(keys))
        if len(unknown):
            row = int(unknown[0])
            raise DialshiftError(f"{chunk.where(row)}: id {clip(ids[row].as_py())!r} is not in {gold.describe()} "
                                 "of the dataset")
        order = np.argsort(positions, kind="stable")
        twice = order[1:][positions[order][1:] == positions[order][:-1]]
        again = np.flatnonzero(seen[positions])
        if len(twice) or len(again):
            row = int(min([*twice[:1], *again[:1]]))
            raise DialshiftError(f"{chunk.where(row)}: id {clip(ids[row].as_py())!r} is predicted twice")
        seen[positions] = True
        taken = pa.array(positions)
        gold_rows = {name: column.take(taken) for name, column in gold.columns.items()}
        try:
            values = task.instance_stats(chunk.table, gold_rows, options)
        except ValueError as error:
            raise _located(chunk, error) from None
        for name, array in values.items():
            if name not in stats:
                stats[name] = np.zeros((len(gold), *array.shape[1:]), dtype=array.dtype)
            stats[name][positions] = array
    if not seen.all():
        missing = np.flatnonzero(~seen)
        raise DialshiftError(f"{path}: {len(missing):,} of the {len(gold):,} ids of {gold.describe()} have no "
                             f"prediction (e.g. {clip(gold.ids[int(missing[0])].as_py())!r})")
    return stats


def read_run(predictions_dir) -> dict:
    path = Path(predictions_dir) / RUN_FILE
    if not path.is_file():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as error:
        raise DialshiftError(f"{path}: not a valid run description ({clip(str(error), 120)})") from None
    if not isinstance(document, dict):
        raise DialshiftError(f"{path}: expected a JSON object {{\"run\": {{...}}, \"scoring\": {{...}}}}")
    return document


def prediction_files(predictions_dir) -> dict[str, Path]:
    """``{config: path}`` of the ``<config>.jsonl`` files of a predictions folder."""
    from dialshift.configs import natural_key

    folder = Path(predictions_dir)
    if not folder.is_dir():
        raise DialshiftError(f"{folder}: no such predictions folder (one <config>.jsonl file per config)")
    files = {path.stem: path for path in sorted(folder.glob("*.jsonl"), key=lambda p: natural_key(p.stem))}
    if not files:
        raise DialshiftError(f"{folder}: no <config>.jsonl predictions files")
    return files


# ----------------------------------------------------------------------------------------------- scoring


def _finite(value):
    return float(value) if value is not None and np.isfinite(value) else None


def declared_comparisons(files, configs: dict, keys: dict) -> tuple[dict, dict, dict]:
    """The paired comparisons of the scored configs with their declared baselines (those scored too); ``keys``: each
    config's gold keys (unique).

    Returns ``(differences, views, pairs)``: ``differences[config][baseline]`` = ``{"kind", "reason", "shared",
    "metrics": {}}`` (``shared``: the number of instance ids both hold; the metrics are filled only where it is not
    0); ``views = {key: (config, mask)}``: a config restricted to the ids it shares with another, where it holds more
    (``mask`` over the config's ``keys``, in their order);
    ``pairs = {(config, baseline): (side, side)}``: the two configs or views whose difference is reported.
    """
    import hashlib

    differences, views, pairs = {}, {}, {}

    def side(name, shared):
        if len(shared) == len(keys[name]):
            return name
        key = f"{name}@{hashlib.sha1(shared.tobytes()).hexdigest()[:16]}"
        views.setdefault(key, (name, np.isin(keys[name], shared, assume_unique=True)))
        return key

    for name in files:
        for baseline in configs[name].baselines:
            base = baseline.config
            if base not in files:
                continue
            shared = np.intersect1d(keys[name], keys[base], assume_unique=True)  # gold keys are unique
            differences.setdefault(name, {})[base] = {"kind": baseline.kind, "reason": baseline.reason,
                                                      "shared": int(len(shared)), "metrics": {}}
            if len(shared):
                pairs[(name, base)] = (side(name, shared), side(base, shared))
    return differences, views, pairs


def _sample(keys, task, stats, options, point: dict) -> bootstrap.Sample:
    """The bootstrap sample of a config (or a view): with top-label statistics, its instances in the order of their
    confidence (the debiased L2 error's replicates then need no permutation; every metric is a sum over instances)
    and the point estimate's smooth-ECE bandwidth."""
    if "confidence" in stats:
        order = np.argsort(stats["confidence"], kind="stable")
        stats = {field: values[order] for field, values in _instance_rows(stats, len(keys)).items()}
        if point.get(BANDWIDTH) is not None:
            stats["bandwidth"] = point[BANDWIDTH]
        keys = keys[order]
    return bootstrap.Sample(keys, lambda weights: task.metrics(stats, _auxiliary(options), weights),
                            batched=task.batched)


def _instance_rows(stats: dict, n: int) -> dict:
    """The per-instance arrays of a task's statistics (those with one row per instance)."""
    return {field: values for field, values in stats.items()
            if isinstance(field, str) and isinstance(values, np.ndarray) and len(values) == n}


def _auxiliary(options: dict) -> dict:
    """The options under which a task's metrics include the replicate quantities of the calibration intervals."""
    return {**options, "_auxiliary": True}


def _reported(values: dict) -> dict:
    return {key: value for key, value in values.items() if key not in calibration.AUXILIARY}


def interval_tables(points: dict, draws: dict, tests: dict, names, confidence: float) -> tuple[dict, dict]:
    """``(intervals, kinds)`` of the configs ``names``: the percentile interval of each metric, except the calibration
    metrics' (:mod:`dialshift.scoring.calibration`), whose kind (two-sided or an upper bound) ``kinds`` records."""
    intervals, kinds = {}, {}
    for name in names:
        row = {}
        for metric, values in draws[name].items():
            if metric in calibration.AUXILIARY:
                continue
            if metric in calibration.ABSOLUTE or metric in calibration.SQUARED:
                row[metric], kind = calibration.metric_interval(metric, points[name], draws[name], tests.get(name),
                                                                confidence)
                if kind:
                    kinds.setdefault(name, {})[metric] = kind
            else:
                row[metric] = bootstrap.percentile_interval(values, confidence)
        intervals[name] = row
    return intervals, kinds


def calibrated_differences(differences: dict, points: dict, draws: dict, tests: dict, pairs: dict,
                           confidence: float) -> None:
    """Replace the paired intervals of the calibration metrics in ``differences`` by those of
    :func:`dialshift.scoring.calibration.difference_interval`."""
    for (name, base), (side, base_side) in pairs.items():
        metrics = differences[name][base]["metrics"]
        for metric in metrics:
            if metric in calibration.ABSOLUTE or metric in calibration.SQUARED:
                metrics[metric]["interval"] = calibration.difference_interval(
                    metric, (points[side], points[base_side]), (draws[side], draws[base_side]),
                    (tests.get(side), tests.get(base_side)), confidence)


def _test_entry(test: dict, confidence: float) -> dict:
    level = 1.0 - confidence
    verdict = "rejected" if test["p_value"] < level else "not rejected"
    return {"p_value": test["p_value"], "statistic": "binned ECE (consistency resampling)",
            "replicates": test["replicates"], "observed": test["observed"], "null_means": test["null_means"],
            "calibrated": f"{verdict} at {level:.0%}"}


def score_files(files: dict, settings: ScoringSettings, run: dict | None = None) -> dict:
    """Score ``{config: predictions path}`` against ``settings.dataset``; return the ``results.json`` document."""
    return score_files_with_draws(files, settings, run)[0]


def score_files_with_draws(files: dict, settings: ScoringSettings, run: dict | None = None) -> tuple:
    """:func:`score_files`, also returning the bootstrap draws and instance keys behind its intervals:
    ``(document, draws, keys)``, ``draws = {config: {metric: replicate values}}`` (the reported metrics' raw draws;
    the views on shared ids too), ``keys = {config: gold instance keys}``. Two calls with the same replicates and seed
    draw the same count for an id in a replicate (:mod:`dialshift.scoring.bootstrap`), so differences of their draws
    are paired on the ids the calls share (:mod:`dialshift.scoring.split_drops`)."""
    from tqdm.auto import tqdm

    from dialshift.hub.reading import folder_configs

    configs = folder_configs(settings.dataset)
    files_map = data_files(settings.dataset)
    recorded = recorded_files(settings.dataset)
    unknown = [name for name in files if name not in configs]
    if unknown:
        raise DialshiftError(f"{files[unknown[0]]}: the dataset {settings.dataset} has no config {unknown[0]!r} "
                             f"(it has: {', '.join(sorted(configs))})")
    points, samples, options_by_config, reliability, sizes, scored, tests = {}, {}, {}, {}, {}, {}, {}
    gold_keys = {}
    for name in tqdm(list(files), desc="scoring", unit="config", disable=not settings.progress):
        config = configs[name]
        task = get_task(config.task)
        options = task.resolve_options(config, settings.options)
        gold = load_gold(settings.dataset, name, settings.split, task.gold_columns, files=files_map, recorded=recorded,
                         max_instances=settings.max_instances, sample_seed=settings.sample_seed, ids=settings.ids)
        stats = read_predictions(files[name], task, gold, options, settings.block_bytes)
        points[name] = task.metrics(stats, _auxiliary(options))
        test = task.calibration_test(stats, options, settings.replicates, settings.seed, points[name].get(BANDWIDTH))
        if test is not None:
            tests[name] = test
        sizes[name] = len(gold)
        diagram = task.reliability(stats, options)
        if diagram is not None:
            reliability[name] = diagram
        samples[name] = _sample(gold.keys, task, stats, options, points[name])
        scored[name] = (task, stats, options)
        gold_keys[name] = gold.keys
        options_by_config[name] = options
    differences, views, pairs = declared_comparisons(files, configs, gold_keys)
    restricted = {}
    for key, (side, mask) in views.items():  # a config on the ids it shares with another: its instances' rows
        task, stats, options = scored[side]
        rows = {field: values[mask] for field, values in _instance_rows(stats, len(mask)).items()}
        points[key] = task.metrics(rows, _auxiliary(options))
        restricted[key] = _sample(gold_keys[side][mask], task, rows, options, points[key])
        if side in tests:  # the bias at calibration of the config on these ids
            tests[key] = task.calibration_test(rows, options, settings.replicates, settings.seed,
                                               points[key].get(BANDWIDTH))
    draws = bootstrap.paired_replicates({**samples, **restricted}, settings.replicates, settings.seed)
    reported = {name: _reported(values) for name, values in points.items()}
    for (name, base), metrics in bootstrap.paired_differences(reported, draws, pairs, settings.confidence).items():
        differences[name][base]["metrics"] = metrics
    calibrated_differences(differences, points, draws, tests, pairs, settings.confidence)
    intervals, kinds = interval_tables(points, draws, tests, files, settings.confidence)
    document = {
        "dialshift_version": __version__,
        "dataset": str(settings.dataset),
        "dataset_revision": config_fingerprints(settings.dataset, files),
        "dataset_commit": hub_commit(settings.dataset),
        "run": (run or {}).get("run", {}),
        "scoring": {**settings.describe(), "interval": f"{settings.confidence:.0%} percentile Poisson "
                    f"bootstrap, {settings.replicates} replicates paired by instance id across configs (seed "
                    f"{settings.seed}; an id's count in a replicate depends on the seed, the replicate and the id); "
                    "the calibration metrics' intervals are bias-bounded, and an upper bound where the calibration "
                    "test does not reject (docs/metrics.md)"},
        "configs": {name: configs[name].to_dict() for name in files},
        "options": {name: {key: value for key, value in options.items() if not key.startswith("_")}
                    for name, options in options_by_config.items()},
        "results": {name: {**{key: _finite(value) for key, value in reported[name].items()},
                           "instances": sizes[name]} for name in files},
        "intervals": intervals,
        "interval_kinds": kinds,
        "calibration_test": {name: _test_entry(tests[name], settings.confidence) for name in files if name in tests},
        "differences": differences,
        "reliability": reliability,
    }
    return document, draws, gold_keys


def settings_from_run(settings: ScoringSettings, run: dict, given: set) -> ScoringSettings:
    """``settings`` with each setting not in ``given`` taken from ``run.json``'s ``scoring`` block when it has one."""
    stored = run.get("scoring") or {}
    for name in SETTING_NAMES:
        if name not in given and name in stored:
            setattr(settings, name, stored[name])
    return settings


def score_directory(predictions_dir, settings: ScoringSettings, given: set = frozenset()) -> dict:
    """Score every ``<config>.jsonl`` of ``predictions_dir`` (see the module docstring for ``run.json``)."""
    run = read_run(predictions_dir)
    settings = settings_from_run(settings, run, set(given))
    return score_files(prediction_files(predictions_dir), settings, run)


def write_results(out_dir, document: dict, *, plots: bool = True, name: str | None = None) -> Path:
    """``results.json``, ``results.md`` and the plots of one scored document in ``out_dir``."""
    from dialshift.io import write_json_atomic
    from dialshift.scoring.report import write_report

    out_dir = Path(out_dir)
    write_json_atomic(out_dir / RESULTS_FILE, document)
    label = name or document.get("run", {}).get("method") or "predictions"
    write_report(out_dir, {label: document}, plots=plots)
    return out_dir / RESULTS_FILE
