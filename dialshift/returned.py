"""The files a GPU bundle's steps bring back, every one checked before anything is scored or written.

Every paper's step returns ``<step>.json`` (its description) and its arrays as ``.npz``; the step's name gives its
kind and seed (:data:`LAYOUTS`). Lee et al.: a step ``lee-train-S`` returns ``lee-train-S.json`` and
``lee-train-S.npz`` (the test logits of each config as ``test/<config>``, N x K, and the ``validation`` logits with
their ``validation_labels``);
``lee-fp32-S`` returns the same without the validation arrays; ``lee-dropout-S`` a description and one
``lee-dropout-S-pI.npz`` per dropout pass I; ``smoke`` only ``smoke.json``, which is no part of a report.

:func:`find_returned` reads the descriptions and :func:`read_logits` a step's arrays. A file that is damaged (broken
JSON, a truncated or corrupt archive), forged (missing or mistyped fields, a step or seed that is not its name's,
arrays of the wrong names, shapes or types, non-finite logits, another seed's logits under a new name), of another
bundle, of an unknown step, or returned by no step is refused with one line naming it and what is wrong. Array
headers are checked before their data is read, so a forged archive cannot make the reader allocate more than the
shapes the dataset implies. Han et al.: ``han-<variant>-S`` (variant ``baseline``, ``deb``, ``ums`` or ``ums-deb``)
returns the response scores of each test config as ``test/<config>``. Xing & Gulla: ``xing-<structure>-p<P>[-noloss]-S``
returns, per test config, ``test/<config>/as`` (the attention score of every context utterance, row after row),
``test/<config>/ll`` and ``test/<config>/tokens`` (the gold response's log-likelihood and token count).
"""

import hashlib
import json
import math
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.scoring.jsonl import clip
from dialshift.scoring.tasks import check_option

_SEED = r"(0|[1-9][0-9]{0,9})"
#: Per paper: the returned step names (their kind and seed) and how to name them in an error.
LAYOUTS = {
    "lee": (re.compile(r"(lee-train|lee-dropout|lee-fp32)-" + _SEED), "lee-train-S, lee-dropout-S, lee-fp32-S"),
    "han": (re.compile(r"(han-(?:baseline|deb|ums|ums-deb))-" + _SEED), "han-VARIANT-S"),
    "xing": (re.compile(r"(xing-(?:non_hier|static|static_ui|dynamic|dynamic_ui)-p(?:0\.0|0\.5|0\.7|1\.0)"
                        r"(?:-noloss)?)-" + _SEED), "xing-STRUCTURE-pP[-noloss]-S"),
}
STEP_NAME = LAYOUTS["lee"][0]
#: The descriptions a report reads no arrays for.
IGNORED = ("smoke.json", "lease.jsonl")  # lease.jsonl: what each lease ran and left
_ARCHIVE_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError)


@dataclass
class Returned:
    """One returned step: its description (``path``) and the archives holding its logits."""

    step: str
    kind: str
    seed: int
    path: Path
    description: dict
    archives: list = field(default_factory=list)


def _refetch(step: str) -> str:
    return f"fetch it again or rerun step {step}"


def read_json_object(path: Path, what: str, fix: str) -> dict:
    """The JSON object of ``path`` (a ``what``, e.g. "step description"); broken, non-UTF-8, too deeply nested or
    non-object content is one line ending in ``fix``."""
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DialshiftError(f"{path}: not readable JSON ({error}); {fix}") from error
    except RecursionError:
        raise DialshiftError(f"{path}: nested too deeply to be a {what}; {fix}") from None
    if not isinstance(value, dict):
        raise DialshiftError(f"{path}: holds a JSON {type(value).__name__}, not a {what}; {fix}")
    return value


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _finite(value) -> bool:
    try:
        return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False


def _names(values) -> bool:
    return isinstance(values, list) and all(isinstance(v, str) and v for v in values) \
        and len(set(values)) == len(values)


#: The protocol fields a report uses, each with its check and what it must be.
_PROTOCOL = {
    "test_configs": (lambda v: _names(v) and len(v) > 0, "a non-empty list of distinct config names"),
    "train_config": (lambda v: isinstance(v, str) and v != "", "a config name"),
    "max_instances": (lambda v: v is None or (_is_int(v) and v >= 1), "null or an integer of at least 1"),
}


def _check_description(path: Path, step: str, kind: str, seed: int, description: dict) -> None:
    """The fields a report reads, with their types; the step and seed those of the file's name."""

    def need(key, ok, what, where=description, label=None):
        label = label or key
        if key not in where:
            raise DialshiftError(f"{path}: no {label!r} field; {_refetch(step)}")
        if not ok(where[key]):
            raise DialshiftError(f"{path}: field {label!r} must be {what}, got {_shown(where[key])}; "
                                 f"{_refetch(step)}")

    need("step", lambda v: v == step, f"{step!r} (the file's name; a renamed copy of another step's file?)")
    need("seed", lambda v: _is_int(v) and v == seed,
         f"{seed} (the seed in the file's name; a returned file claiming another seed would swap two seeds)")
    for key in ("bundle", "dataset_revision"):
        need(key, lambda v: isinstance(v, str) and v != "", "a non-empty string")
    need("protocol", lambda v: isinstance(v, dict), "an object")
    for key, (ok, what) in _PROTOCOL.items():
        need(key, ok, what, description["protocol"], f"protocol.{key}")
    if kind.startswith("lee-"):
        need("ece_bins", lambda v: True, "", description["protocol"], "protocol.ece_bins")
        check_option("ece_bins", description["protocol"]["ece_bins"], f"{path}: protocol.ece_bins")
    configs = description["protocol"]["test_configs"]
    need("ids", lambda v: isinstance(v, dict) and sorted(v) == sorted(configs)
         and all(isinstance(d, str) for d in v.values()), "an id digest per test config of the protocol")
    need("instances", lambda v: isinstance(v, dict) and sorted(v) == sorted(configs)
         and all(_is_int(n) and n >= 0 for n in v.values()), "an instance count per test config of the protocol")
    if kind == "lee-dropout":
        need("dropout_seeds", lambda v: isinstance(v, list) and len(v) > 0 and all(_is_int(s) and s >= 0 for s in v)
             and len(set(v)) == len(v), "a non-empty list of distinct pass numbers")
    if kind == "lee-train":
        need("training", lambda v: isinstance(v, dict), "an object")
        need("temperature", lambda v: v is None or _finite(v), "null or a finite number", description["training"],
             "training.temperature")
    ranker = description.get("training" if kind == "lee-train" or kind.startswith(("han-", "xing-")) else "model")
    if isinstance(ranker, dict) and ranker.get("seed", seed) != seed:
        raise DialshiftError(f"{path}: its ranker was trained with seed {_shown(ranker['seed'])}, not {seed}; "
                             f"{_refetch(step)}")


def _shown(value) -> str:
    """A JSON value as the file holds it, cut short."""
    return clip(json.dumps(value, ensure_ascii=True), 60)


def _archives(entry: Returned) -> list[Path]:
    if entry.kind == "lee-dropout":
        return [entry.path.with_name(f"{entry.step}-p{i}.npz") for i in entry.description["dropout_seeds"]]
    return [entry.path.with_suffix(".npz")]


def _returned_files(paths) -> list[Path]:
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            for entry in sorted(path.iterdir()):
                if entry.is_dir():
                    raise DialshiftError(f"{entry}: a folder inside the returned files; the steps return files "
                                         "only: move it out, or give it as its own PATH")
                files.append(entry)
        elif path.is_file():
            files.append(path)
        else:
            raise DialshiftError(f"{path}: no such file or folder")
    for path in files:
        if not path.is_file():
            raise DialshiftError(f"{path}: not a regular file (a device, socket or broken link); move it out of the "
                                 "returned files")
    return files


def paper_of_returned(paths) -> str:
    """The paper whose steps returned the files of ``paths``: that of the first step description found (Lee et al.
    when none is: :func:`find_returned` then says what is wrong)."""
    for path in _returned_files(paths):
        for paper, (pattern, _) in LAYOUTS.items():
            if path.suffix == ".json" and pattern.fullmatch(path.stem):
                return paper
    return "lee"


def find_returned(paths, paper: str = "lee") -> dict[str, Returned]:
    """The returned steps of ``paths`` (folders, or files) of ``paper``'s protocol, descriptions read and checked,
    archives located; every file of a folder must belong to a step (or be ``smoke.json``). Nothing is read from the
    archives yet."""
    files = _returned_files(paths)
    pattern, names = LAYOUTS[paper]
    steps: dict[str, Returned] = {}
    for path in files:
        if path.suffix != ".json" or path.name in IGNORED:
            continue
        match = pattern.fullmatch(path.stem)
        if not match:
            raise DialshiftError(f"{path}: not a step of the bundle (steps: {names} and smoke); move it out of the "
                                 "returned files")
        kind, seed = match[1], int(match[2])
        entry = Returned(path.stem, kind, seed, path, {})
        entry.description = read_json_object(path, "step description", _refetch(entry.step))
        _check_description(path, entry.step, kind, seed, entry.description)
        if entry.step in steps:
            raise DialshiftError(f"{path}: step {entry.step} was brought back twice (also {steps[entry.step].path}); "
                                 "keep one copy")
        entry.archives = _archives(entry)
        missing = [p.name for p in entry.archives if not p.is_file()]
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            them = "them" if len(missing) > 1 else "it"
            raise DialshiftError(f"{path}: {shown} not beside it; fetch {them} or rerun step {entry.step}")
        steps[entry.step] = entry
    claimed = {p.resolve() for entry in steps.values() for p in (entry.path, *entry.archives)}
    for path in files:
        if path.name not in IGNORED and path.resolve() not in claimed:
            raise DialshiftError(f"{path}: not a file any returned step describes (no step's .json lists it); "
                                 "move it out of the returned files or fetch the description it belongs to")
    if not steps:
        raise DialshiftError(f"{', '.join(map(str, paths))}: no returned step files ({paper}-*.json with their .npz)")
    first = next(iter(steps.values()))
    for entry in steps.values():
        for key in ("bundle", "protocol", "dataset_revision"):
            if entry.description[key] != first.description[key]:
                raise DialshiftError(f"{entry.path}: its {key} differs from that of {first.path}; report the files "
                                     "of one bundle together")
        if entry.kind == "lee-fp32" and f"lee-train-{entry.seed}" not in steps:
            raise DialshiftError(f"{entry.path}: the precision check compares it with step lee-train-{entry.seed}, "
                                 f"which was not brought back; fetch lee-train-{entry.seed}.json and .npz")
    return steps


def _header(archive: zipfile.ZipFile, member: str):
    """``(shape, dtype)`` of an ``.npy`` member, read from its header only."""
    with archive.open(member) as handle:
        version = np.lib.format.read_magic(handle)
        reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = reader(handle)
    return shape, dtype


def _expected(entry: Returned, rows: dict, candidates: dict) -> dict:
    """``{array name: (shape with None for a free size, dtype kinds)}`` of each archive of ``entry``."""
    arrays = {f"test/{name}": ((rows[name], candidates[name]), "f") for name in rows}
    if entry.kind == "lee-train":
        arrays.update(validation=((None, None), "f"), validation_labels=((None,), "iu"))
    return arrays


def _read_archive(path: Path, step: str, expected: dict) -> dict:
    try:
        with zipfile.ZipFile(path) as archive:
            members = {name.removesuffix(".npy"): name for name in archive.namelist()}
            unexpected = sorted(set(members) - set(expected))
            missing = sorted(set(expected) - set(members))
            if missing or unexpected:
                what = "; ".join(part for part in (missing and f"no array {', '.join(missing)}",
                                                   unexpected and f"unexpected array {', '.join(unexpected)}") if part)
                raise DialshiftError(f"{path}: {what} (a step of this protocol returns "
                                     f"{', '.join(sorted(expected))}); {_refetch(step)}")
            for name, (shape, kinds) in expected.items():
                found, dtype = _header(archive, members[name])
                fits = len(found) == len(shape) and all(want in (None, got) for want, got in zip(shape, found,
                                                                                                 strict=False))
                if not fits or dtype.kind not in kinds:
                    want = "x".join("n" if s is None else str(s) for s in shape)
                    kind = "floating-point" if kinds == "f" else "integer"
                    source = " (the config's rows and candidates in the dataset)" if name.startswith("test/") else ""
                    raise DialshiftError(f"{path}: array {name!r} is {dtype} of shape {'x'.join(map(str, found))}, "
                                         f"expected {kind} of shape {want}{source}; {_refetch(step)}")
            arrays = {}
            for name, member in members.items():
                with archive.open(member) as handle:
                    arrays[name] = np.lib.format.read_array(handle, allow_pickle=False)
    except DialshiftError:
        raise
    except _ARCHIVE_ERRORS as error:
        raise DialshiftError(f"{path}: not a readable .npz archive ({type(error).__name__}: "
                             f"{clip(str(error), 100)}); {_refetch(step)}") from error
    return arrays


def _check_values(path: Path, step: str, arrays: dict) -> None:
    for name, values in arrays.items():
        if values.dtype.kind == "f" and not np.isfinite(values).all():
            bad = int(np.size(values) - np.isfinite(values).sum())
            raise DialshiftError(f"{path}: array {name!r} holds {bad} non-finite values (NaN or inf); "
                                 f"{_refetch(step)}")
    if "validation" in arrays:
        logits, labels = arrays["validation"], arrays["validation_labels"]
        if len(logits) != len(labels) or not len(labels) or logits.shape[1] < 2:
            raise DialshiftError(f"{path}: 'validation' is {'x'.join(map(str, logits.shape))} for "
                                 f"{len(labels)} 'validation_labels' (expected n x K, K >= 2, n >= 1 labels); "
                                 f"{_refetch(step)}")
        if labels.min() < 0 or labels.max() >= logits.shape[1]:
            raise DialshiftError(f"{path}: 'validation_labels' must be candidate indices in 0..{logits.shape[1] - 1}, "
                                 f"found {int(labels.min())}..{int(labels.max())}; {_refetch(step)}")


def read_logits(entry: Returned, rows: dict, candidates: dict) -> dict:
    """The arrays of ``entry``, checked against the dataset (``rows``: instances per test config, ``candidates``:
    the candidate count of each); the dropout passes stacked into ``test/<config>`` arrays of shape P x N x K."""
    return read_arrays(entry, _expected(entry, rows, candidates))


def read_arrays(entry: Returned, expected: dict) -> dict:
    """The arrays of ``entry``'s archives, each checked against ``expected`` (``{name: (shape with None for a free
    size, dtype kinds)}``, from the dataset) before its data is read, and for finite values; several archives (the
    dropout passes) are stacked."""
    loaded = []
    for path in entry.archives:
        arrays = _read_archive(path, entry.step, expected)
        _check_values(path, entry.step, arrays)
        loaded.append(arrays)
    if len(loaded) == 1:
        return loaded[0]
    return {key: np.stack([arrays[key] for arrays in loaded]) for key in loaded[0]}


def check_distinct_runs(steps: dict, arrays: dict) -> None:
    """Refuse two steps of one kind whose test logits are identical: a copy of one seed's files under another
    seed's name (the ensemble would count one ranker twice)."""
    seen = {}
    for step, entry in sorted(steps.items()):
        digest = hashlib.sha256()
        for name in sorted(arrays[step]):
            if name.startswith("test/"):
                digest.update(name.encode("utf-8") + np.ascontiguousarray(arrays[step][name]).tobytes())
        key = (entry.kind, digest.hexdigest())
        if key in seen:
            raise DialshiftError(f"{entry.archives[0]}: the same logits as {seen[key].archives[0]}, a copy of step "
                                 f"{seen[key].step} under another seed's name; rerun step {step}")
        seen[key] = entry
