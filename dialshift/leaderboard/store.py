"""Scoring a submission into the results store, and reading the store back.

The store is a folder of JSON files, one per (family, model, method):
``<store>/<family>/<model>__<method>--<id>.json``, where ``<id>`` is a hash of the exact family, model and method
strings (:func:`record_id`; the readable slugs are only a prefix, so ``org/ranker`` and ``org-ranker`` are two
records), in the shape of the Hub leaderboard template, ``{"config": {...}, "results": {config: {metric: value}}}``,
with the rest of the scored document beside it (``intervals``, ``differences``, typed ``configs``, ``options``,
``reliability``, ``scoring``), so :mod:`dialshift.scoring.report` can plot it. Every value is recomputed from gold
by :func:`dialshift.scoring.score_files` with the leaderboard's fixed settings (``run.json`` scoring settings are
not used). A record is written atomically, only after every prediction file has been read and scored.
"""

import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path

from dialshift import __version__
from dialshift.errors import DialshiftError
from dialshift.leaderboard.submission import TRACKS, Limits, Submission, open_submission
from dialshift.scoring.jsonl import clip

RECORD_SUFFIX = ".json"


def slug(text: str, limit: int = 80) -> str:
    """A file-name-safe, readable form of ``text`` (letters, digits, ``.``, ``_``, ``-``); not injective."""
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:limit].strip("-.")
    return value or "submission"


def record_id(family: str, model: str, method: str, track: str = "full") -> str:
    """16 hex digits of the sha256 of the exact ``(family, model, method)`` strings (and the track, when not the full
    one): the record's identity."""
    key = json.dumps([family, model, method] + ([] if track == "full" else [track]), ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def record_path(store, family: str, model: str, method: str, track: str = "full") -> Path:
    """Where the store keeps the record of ``(family, model, method)`` on ``track``: a readable prefix and
    :func:`record_id`; a lite-track record lives in the family's ``lite/`` folder, beside the full one."""
    folder = Path(store) / slug(family) / ("" if track == "full" else slug(track))
    return folder / f"{slug(model, 60)}__{slug(method, 40)}--{record_id(family, model, method, track)}{RECORD_SUFFIX}"


def record_track(record: dict) -> str:
    """The track of a stored record (records scored before tracks existed are full-track ones)."""
    return (record.get("config") or {}).get("track") or "full"


def _legacy_path(store, family: str, model: str, method: str) -> Path:
    """The name stores written before :func:`record_id` gave a record (lossy: several submissions shared one)."""
    return Path(store) / slug(family) / f"{slug(model)}__{slug(method)}{RECORD_SUFFIX}"


def same_submission(record: dict, family: str, model: str, method: str, track: str = "full") -> bool:
    config = record.get("config") or {}
    return (config.get("family"), config.get("model_name"), config.get("method"), record_track(record)) == \
        (family, model, method, track)


def expected_configs(submission: Submission, dataset, split: str) -> tuple[str, list[str]]:
    """``(family, configs)`` the submission must cover: every config of its family in the dataset folder that has
    ``split``, or the subset ``submission.json`` declares; one-line errors for unknown, mixed or missing configs."""
    from dialshift.hub.reading import data_files, folder_configs

    where = submission.root / "submission.json"
    configs = folder_configs(dataset)
    splits = data_files(dataset)
    unknown = [name for name in submission.files if name not in configs]
    if unknown:
        raise DialshiftError(f"{submission.files[unknown[0]]}: the dataset has no config {clip(unknown[0], 60)!r}; "
                             f"see `dialshift configs`")
    families = sorted({configs[name].family for name in submission.files})
    family = submission.metadata.get("family") or families[0]
    if families != [family]:
        raise DialshiftError(f"{submission.root}: predictions span families {', '.join(families)}"
                             + (f" but {where.name} says {family!r}" if len(families) == 1 else "")
                             + "; a submission covers one family (submit each family separately)")
    of_family = [name for name, config in configs.items() if config.family == family and split in splits[name]]
    declared = submission.metadata.get("configs")
    if declared is not None:
        outside = [name for name in declared if name not in of_family]
        if outside:
            raise DialshiftError(f"{where}: 'configs' names {clip(outside[0], 60)!r}, not a config of family "
                                 f"{family!r} with a {split!r} split in the dataset")
        extra = [name for name in submission.files if name not in declared]
        if extra:
            raise DialshiftError(f"{submission.files[extra[0]]}: config {extra[0]!r} is not in the 'configs' "
                                 f"{where.name} declares")
        wanted = list(dict.fromkeys(declared))
    else:
        wanted = of_family
    missing = [name for name in wanted if name not in submission.files]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise DialshiftError(f"{submission.root}: no predictions for {shown} (a submission covers every config of "
                             f"family {family!r}, or the subset declared under 'configs' in {where.name})")
    return family, wanted


def expected_split_files(submission: Submission, dataset, configs: list[str], split: str) -> dict[str, dict]:
    """``{second split: {config: predictions path}}``: every config of ``configs`` with a second test split
    (:func:`dialshift.lite.second_splits`) needs ``predictions/<that split>/<config>.jsonl``; a file for a config or
    split the submission does not score is refused. One-line errors naming the file and the fix."""
    from dialshift.hub.reading import data_files
    from dialshift.lite import second_splits

    splits = data_files(dataset)
    folder = submission.root / "predictions"
    for name, files in submission.split_files.items():
        for config, path in files.items():
            if config not in configs:
                raise DialshiftError(f"{path}: config {clip(config, 60)!r} has no predictions/{clip(config, 60)}"
                                     ".jsonl in this submission (or is not one of the configs it declares); remove "
                                     "the file or submit the config")
            if name not in second_splits(splits.get(config, ()), split):
                paired = ", ".join(second_splits(splits.get(config, ()), split)) or "none"
                raise DialshiftError(f"{path}: config {config!r} has no {name!r} split paired with {split!r} in the "
                                     f"dataset (its second test split: {paired}; a lite-track submission pairs lite "
                                     "with cov_lite, a full one test with cov_test); remove the file")
    wanted = {}
    for config in configs:
        for name in second_splits(splits.get(config, ()), split):
            path = submission.split_files.get(name, {}).get(config)
            if path is None:
                raise DialshiftError(f"{folder / name / (config + '.jsonl')}: missing; config {config!r} is scored "
                                     f"on {split!r} and on its shifted {name!r} split, so a submission holds the "
                                     f"predictions of both (copy in the folder OUT/msp/{name}/predictions that "
                                     f"`dialshift evaluate` wrote as predictions/{name}, or predict on {name!r})")
            wanted.setdefault(name, {})[config] = path
    return wanted


def family_configs(dataset, family: str, split: str) -> dict[str, str]:
    """``{config: task}`` of every config of ``family`` in the dataset folder with ``split``: the full set a
    leaderboard row must cover to be ranked."""
    from dialshift.hub.reading import folder_configs
    from dialshift.scoring.gold import data_files

    splits = data_files(dataset)
    return {name: config.task for name, config in folder_configs(dataset).items()
            if config.family == family and split in splits.get(name, ())}


def check_revision(submission: Submission, dataset, configs: list[str]) -> None:
    """Refuse predictions made on other data: each config's fingerprint in ``submission.json``'s
    ``dataset_revision`` must equal the dataset's (:func:`~dialshift.scoring.gold.config_fingerprint`); a single
    string is accepted only when it is the dataset folder's own revision or its Hub commit."""
    from dialshift.scoring.gold import config_fingerprints, dataset_revision, hub_commit

    where = submission.root / "submission.json"
    claimed = submission.metadata["dataset_revision"]
    actual = config_fingerprints(dataset, configs)
    if isinstance(claimed, str):
        if claimed in (dataset_revision(dataset), hub_commit(dataset)):
            return
        raise DialshiftError(f"{where}: dataset_revision {clip(claimed, 40)!r} is not this dataset's revision and "
                             "cannot be checked per config; give the dataset_revision object (one fingerprint per "
                             "config) of the results.json that `dialshift evaluate` or `dialshift score` wrote")
    for name in configs:
        if name not in claimed:
            raise DialshiftError(f"{where}: dataset_revision has no fingerprint for config {name!r}; copy the "
                                 "dataset_revision object of the results.json scored on this dataset")
        if claimed[name] != actual[name]:
            raise DialshiftError(f"{where}: config {name!r}: the predictions were made on data with fingerprint "
                                 f"{clip(claimed[name], 40)}, but this dataset's {name!r} is {actual[name]} (another "
                                 "build of that config); predict on this dataset's config and submit again")


def score_submission(path, dataset, *, replicates: int = 1000, seed: int = 0, limits: Limits | None = None,
                     progress: bool = False) -> dict:
    """Check and score the submission at ``path`` against the dataset folder; return the store record."""
    from dataclasses import replace

    from dialshift.scoring import ScoringSettings
    from dialshift.scoring.pipeline import score_files_with_draws
    from dialshift.scoring.split_drops import split_drops

    dataset = Path(dataset)
    settings = ScoringSettings(dataset, replicates=replicates, seed=seed, progress=progress)
    with open_submission(path, limits) as submission:
        track = submission.metadata.get("track") or "full"
        settings.split = TRACKS[track]
        family, configs = expected_configs(submission, dataset, settings.split)
        split_files = expected_split_files(submission, dataset, configs, settings.split)
        check_revision(submission, dataset, configs)
        scored = score_files_with_draws({name: submission.files[name] for name in configs}, settings,
                                        {"run": submission.run})
        document, shifted = scored[0], {}
        for name, files in split_files.items():  # the second test splits, and the drop to each
            other = score_files_with_draws(files, replace(settings, split=name), {"run": submission.run})
            shifted[name] = {"results": other[0]["results"], "intervals": other[0]["intervals"],
                             "differences": other[0]["differences"],
                             "drops": split_drops(scored, other, settings.confidence)}
        metadata = submission.metadata
    record = {key: value for key, value in document.items() if key != "dataset"}
    if shifted:
        record["shifted_splits"] = shifted
    record["config"] = {
        "model_name": metadata["model"],
        "method": metadata["method"],
        "family": family,
        "track": track,
        "link": metadata["link"],
        "licence": metadata["licence"],
        "parameters": metadata.get("parameters"),
        "seeds": metadata.get("seeds"),
        "description": metadata.get("description"),
        "cost": metadata.get("cost"),
        "submitted_dataset_revision": metadata["dataset_revision"],
        "dataset_revision": document["dataset_revision"],
        "dataset_commit": document.get("dataset_commit"),
        "configs": configs,
        "family_configs": family_configs(dataset, family, settings.split),
        "scored_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "scored_with": f"dialshift {__version__}",
    }
    record["run"] = submission.run
    return record


def _scored_configs(record: dict) -> set[str]:
    results = record.get("results")
    return set(results) if isinstance(results, dict) else set()


def check_no_twin(store, family: str, model: str, method: str, path: Path, track: str = "full") -> None:
    """Refuse a record whose names equal another record's of the same track once normalised (NFC, no format
    characters, no outer space) but not exactly: on the page the two would look the same. Records of stores written
    before names were normalised may hold such names."""
    from dialshift.leaderboard.submission import normalised_name

    key = tuple(map(normalised_name, (family, model, method)))
    folder = path.parent
    for other in sorted(folder.glob(f"*{RECORD_SUFFIX}")) if folder.is_dir() else ():
        if other == path or other.is_symlink():
            continue
        try:
            config = read_record(other).get("config") or {}
        except DialshiftError:
            continue
        names = (config.get("family"), config.get("model_name"), config.get("method"))
        if all(isinstance(n, str) for n in names) and tuple(map(normalised_name, names)) == key \
                and names != (family, model, method):
            raise DialshiftError(f"{other}: already holds {names[1]!r} ({names[2]}), which looks the same as "
                                 f"{model!r} ({method}); score under that exact name to replace it, or choose "
                                 "another name")


def write_record(store, record: dict, *, replace: bool = False) -> tuple[Path, bool]:
    """Write ``record`` into the store atomically; return ``(path, replaced)``.

    Only a record of the same family, model and method (exact strings) is replaced, and never silently by a smaller
    one: a record that would drop configs the stored one has is refused unless ``replace``. A name that looks like
    another record's (equal once normalised) is refused. A record of that submission stored under the older lossy
    name is read first and moved to the new name (removed once the new file is written); a record of another
    submission under that older name is left alone.
    """
    from dialshift.io import write_json_atomic

    config = record["config"]
    key = (config["family"], config["model_name"], config["method"], record_track(record))
    path = record_path(store, *key)
    replaced = path.is_file()
    legacy = _legacy_path(store, *key[:3])
    legacy_same = False
    if key[3] == "full" and legacy.is_file() and not legacy.is_symlink():
        try:
            legacy_same = same_submission(read_record(legacy), *key)
        except DialshiftError:
            legacy_same = False
    check_no_twin(store, *key[:3], path, track=key[3])
    existing = None
    if path.is_file():
        existing = read_record(path)
        if not same_submission(existing, *key):  # a 64-bit collision or a hand-edited file: never overwrite it
            raise DialshiftError(f"{path}: holds a record of another submission; move it aside and score again")
    elif legacy_same:
        existing = read_record(legacy)
    lost = sorted(_scored_configs(existing) - _scored_configs(record)) if existing else []
    if lost and not replace:
        shown = ", ".join(lost[:5]) + (f" and {len(lost) - 5} more" if len(lost) > 5 else "")
        raise DialshiftError(f"{path}: the stored record of {key[1]!r} ({key[2]}) covers "
                             f"{len(_scored_configs(existing))} configs and this submission "
                             f"{len(_scored_configs(record))}: replacing it would drop {shown}; submit every config "
                             "again, or pass --replace to replace the record with the smaller one")
    write_json_atomic(path, record)
    if legacy_same:
        legacy.unlink(missing_ok=True)
        replaced = True
    return path, replaced


def read_store(store) -> list[dict]:
    """Every record of a results store, each with ``path`` (relative to the store) added; sorted by path."""
    store = Path(store)
    if not store.is_dir():
        raise DialshiftError(f"{store}: no such results folder (write one with `dialshift leaderboard score`)")
    records = []
    for path in sorted(store.rglob(f"*{RECORD_SUFFIX}")):
        if path.is_symlink():
            continue
        record = read_record(path)
        record["path"] = path.relative_to(store).as_posix()
        records.append(record)
    return records


def read_record(path) -> dict:
    """One results file of the store, checked to be ``{"config": {...}, "results": {...}}``; one-line errors."""
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:  # ValueError: JSONDecodeError, UnicodeDecodeError
        raise DialshiftError(f"{path}: not a readable results file ({type(error).__name__})") from None
    if not isinstance(record, dict) or not isinstance(record.get("config"), dict) or \
            not isinstance(record.get("results"), dict):
        raise DialshiftError(f"{path}: not a leaderboard results file (expected {{\"config\": {{...}}, "
                             "\"results\": {...}}; write one with `dialshift leaderboard score`)")
    problem = record_problem(record)
    if problem:
        raise DialshiftError(f"{path}: {problem}; score the submission again with `dialshift leaderboard score` "
                             "(or move the file out of the store)")
    return record


def _number(value) -> bool:
    import math

    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def record_problem(record: dict) -> str | None:
    """What makes a record unusable by ``render`` and ``export`` (a missing or mistyped field), else None."""
    from dialshift.configs import BenchmarkConfig
    from dialshift.leaderboard.submission import MAX_INTEGER, cost_problem, text_problem

    config = record["config"]
    for name in ("model_name", "method", "family"):
        value = config.get(name)
        if not isinstance(value, str) or not value.strip() or text_problem(value):
            return f"field 'config.{name}' is missing or not one line of text"
    if record_track(record) not in TRACKS:
        return f"field 'config.track' must be one of {', '.join(TRACKS)}"
    for name in ("link", "licence", "description", "dataset_commit"):
        value = config.get(name)
        if value is not None and (not isinstance(value, str) or text_problem(value)):
            return f"field 'config.{name}' is not one line of text"
    parameters = config.get("parameters")
    if parameters is not None and not (isinstance(parameters, int) and not isinstance(parameters, bool) and
                                       0 <= parameters <= MAX_INTEGER):
        return f"field 'config.parameters' must be an integer from 0 to {MAX_INTEGER:.0e}"
    if config.get("cost") is not None and cost_problem(config["cost"]):
        return f"field 'config.cost' {cost_problem(config['cost'])}"
    configs = record.get("configs")
    if not isinstance(configs, dict):
        return "field 'configs' (the typed configs) is missing"
    for name, values in record["results"].items():
        if not isinstance(values, dict):
            return f"field 'results.{name}' is not an object of metric values"
        bad = [metric for metric, value in values.items() if value is not None and not _number(value)]
        if bad:
            return f"field 'results.{name}.{bad[0]}' is not a finite number"
        if not isinstance(configs.get(name), dict):
            return f"field 'configs.{name}' is missing"
        try:
            BenchmarkConfig.from_dict(configs[name])
        except (DialshiftError, TypeError, ValueError) as error:
            return f"field 'configs.{name}' is not a config ({clip(str(error), 80)})"
    for name in ("options", "intervals", "differences", "reliability", "scoring", "shifted_splits"):
        if record.get(name) is not None and not isinstance(record[name], dict):
            return f"field {name!r} is not an object"
    for split, values in (record.get("shifted_splits") or {}).items():
        if not isinstance(values, dict) or not all(isinstance(values.get(name), dict)
                                                   for name in ("results", "intervals", "drops")):
            return f"field 'shifted_splits.{clip(split, 40)}' is not an object of results, intervals and drops"
        for name, drops in values["drops"].items():
            metrics = drops.get("metrics") if isinstance(drops, dict) else None
            if not isinstance(metrics, dict) or not all(isinstance(m, dict) and (m.get("value") is None or
                                                                  _number(m.get("value"))) for m in metrics.values()):
                return f"field 'shifted_splits.{clip(split, 40)}.drops.{clip(name, 40)}' is not an object of drops"
    return None
