"""The GPU bundle: everything a bare remote GPU machine needs to run the full Lee et al. protocol, in under 60 MiB.

A lent remote machine runs each command for at most 10 minutes, carries at most 64 MiB of files to it, starts
bare with torch, transformers, accelerate, pyarrow and scikit-learn, and brings back at most 8 files of 16 MB.
``dialshift bundle create`` assembles, from a built dataset folder and the installed backbone::

    BUNDLE/bundle.json        manifest: protocol, steps (with their cost estimates), sizes, the dataset's revision
    BUNDLE/run.sh             the runner: `bash BUNDLE/run.sh STEP [--out DIR]`
    BUNDLE/backbone/          the backbone's weights in fp16 (upcast to fp32 on arrival), config and tokenizer
    BUNDLE/data/              a slim folder (dialshift.ranking.data.write_slim_folder): zstd parquet, strings once,
                              the training split reduced to the gold responses
    BUNDLE/trainers/          the ranker trainer (trainers/ranker.py, installed as dialshift_trainers)
    BUNDLE/wheels/            wheels of what the remote lacks (datasets, evaluate, nltk, dill, multiprocess, fsspec,
                              for Python 3.10-3.13) and of dialshift itself

``run.sh`` installs the wheels (``pip install --no-deps --no-index --target``, once per bundle) into a work folder
outside the bundle (``$DIALSHIFT_WORK``, default ``/tmp/dialshift-gpu-work``, which outlives a call while the machine
stays warm), puts it and the bundle first on ``PYTHONPATH`` and runs ``dialshift bundle run BUNDLE STEP`` from the
work folder, so nothing but the bundle's own code is imported. A step writes only logits (compressed ``.npz``) and a
small JSON description into ``--out`` (default ``$OUT``); ``dialshift bundle report`` turns the returned files into
predictions, ``results.json`` (the scoring pipeline, :mod:`dialshift.scoring`) and the tables of
``docs/full_scale.md``, here, on CPU: ensembles and temperature scaling are computed from the returned logits.

Steps (:func:`plan`): ``smoke`` (a short run of everything, and the remote's speed), ``lee-train-S`` (train seed S,
then its validation logits and one vanilla pass over every test config; resumable from its checkpoints when a call
is cut off), ``lee-dropout-S`` (the MC-dropout passes of the seed-S ranker trained by ``lee-train-S`` on the same
warm machine, one file per pass) and ``lee-fp32-S`` (the vanilla pass again in fp32, to check that the fast
precision moves the metrics less than the seeds do).
"""

import hashlib
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from dialshift.across_seeds import format_spread, spread
from dialshift.errors import DialshiftError

BUNDLE_FILE = "bundle.json"
BUNDLE_FORMAT = "dialshift-bundle/1"
LIMIT_BYTES = 60 * 2**20
WHEEL_PACKAGES = ("datasets", "evaluate", "nltk", "dill", "multiprocess", "fsspec")
PYTHON_VERSIONS = ("3.10", "3.11", "3.12", "3.13")
#: The fp16 weights, zstd-compressed (pyarrow's codec; level 3 saves about 8 %, higher levels no more).
WEIGHTS_FILE = "model.safetensors.zst"
BACKBONE_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")
DEFAULT_WORK = "/tmp/dialshift-gpu-work"
#: The files of the trainers (``trainers/``, installed as ``dialshift_trainers``) a bundle carries.
TRAINER_FILES = ("__init__.py", "ranker.py")

#: Throughputs measured on one H100 (the plain loop and the model-side scoring figures; docs/full_scale.md); the
#: estimates of :func:`plan` use them. ``train_steps_per_second`` is the target of the library path (the plain
#: loop ran 30.1 in TF32); the measured figure of the old path, 12.4, is kept to say what a slow remote costs.
H100 = {"start_seconds": 45.0, "train_steps_per_second": 28.0, "old_train_steps_per_second": 12.4,
        "encode_pairs_per_second": 18_000.0, "score_pairs_per_second": {"bf16": 70_000.0, "tf32": 38_000.0,
                                                                         "fp32": 16_000.0}}


@dataclass
class Protocol:
    """What the steps run: Lee et al.'s protocol at full scale by default; smaller values make a test bundle."""

    train_config: str = "dailydialog"
    test_configs: list = field(default_factory=list)
    seeds: int = 5
    dropout_passes: int = 5
    num_epochs: int = 1
    batch_size: int = 12
    learning_rate: float = 2e-5
    max_length: int = 256
    max_train_instances: int | None = None
    max_eval_instances: int | None = None
    max_instances: int | None = None  # test instances per config (None: all)
    score_batch_size: int = 512
    checkpointing_steps: int = 1000
    ece_bins: int = 15


# ----------------------------------------------------------------------------------------------- creating


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def save_fp16_backbone(name: str, out: Path) -> str:
    """The backbone ``name`` (``minilm``, ``tiny`` or a folder) as ``out/model.safetensors.zst`` (fp16, zstd) with
    its config and tokenizer; return the resolved backbone description."""
    import pyarrow as pa
    import torch
    from safetensors.torch import load_file, save

    from dialshift.io import atomic_write
    from dialshift.models.backbones import TINY_MODEL, load_backbone, minilm_path

    out.mkdir(parents=True, exist_ok=True)
    model, tokenizer, resolved = load_backbone(name, seed=0)
    if name == TINY_MODEL:  # random weights: the base model as a tiny run would initialise it
        state = model.base_model.state_dict()
    else:
        folder = minilm_path() if name == "minilm" else Path(name)
        if not (folder / "model.safetensors").is_file():
            raise DialshiftError(f"{folder}: no model.safetensors to put in the bundle (a local model folder is "
                                 "needed)")
        state = load_file(str(folder / "model.safetensors"))
    half = {key: (value.to(torch.float16) if value.is_floating_point() else value).contiguous()
            for key, value in state.items()}
    raw = save(half, metadata={"format": "pt", "dialshift": "fp16, upcast on arrival"})
    atomic_write(out / WEIGHTS_FILE, len(raw).to_bytes(8, "little") + pa.Codec("zstd", compression_level=3).compress(
        raw, asbytes=True))
    model.base_model.config.save_pretrained(out)
    tokenizer.save_pretrained(out)
    for extra in out.iterdir():  # only what loading needs
        if extra.name not in (*BACKBONE_FILES, WEIGHTS_FILE):
            shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
    return resolved


#: The folders of a bundle its id is the digest of (not run.sh and bundle.json, which name the id).
CONTENT = ("backbone", "data", "trainers", "wheels")


def content_id(bundle: Path) -> str:
    """The bundle's id: the first 12 hex digits of the digest of its carried files (:data:`CONTENT`)."""
    from dialshift.io import files_digest

    files = sorted(p for part in CONTENT for p in (bundle / part).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    return files_digest(files, root=bundle)[:12]


def upcast_backbone(bundle: Path, work: Path) -> Path:
    """The bundle's backbone in fp32 under ``work`` (made once per bundle revision)."""
    import pyarrow as pa
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load, save_file

    manifest = read_manifest(bundle)
    target = work / f"backbone-{manifest['id']}"
    if (target / ".complete").is_file():
        return target
    if content_id(bundle) != manifest["id"]:
        raise DialshiftError(f"{bundle}: its files differ from those of bundle {manifest['id']} (changed or damaged "
                             "since `dialshift bundle create`); copy the bundle again")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    source = bundle / "backbone"
    packed = (source / WEIGHTS_FILE).read_bytes()
    try:
        raw = pa.Codec("zstd").decompress(packed[8:], decompressed_size=int.from_bytes(packed[:8], "little"),
                                          asbytes=True)
        state = load(raw)
    except (pa.ArrowException, SafetensorError, ValueError, OSError, MemoryError) as error:
        raise DialshiftError(f"{source / WEIGHTS_FILE}: damaged ({type(error).__name__}: {error}); copy the bundle "
                             "again") from error
    save_file({k: (v.to(torch.float32) if v.is_floating_point() else v) for k, v in state.items()},
              str(target / "model.safetensors"), metadata={"format": "pt"})
    for name in BACKBONE_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)
    (target / ".complete").write_text("")
    return target


def build_wheels(out: Path, packages=WHEEL_PACKAGES, python_versions=PYTHON_VERSIONS, cache: Path | None = None,
                 progress: bool = True) -> list[str]:
    """dialshift's wheel (:func:`dialshift.wheels.dialshift_wheel`: from the source checkout, else repacked from the
    installed package) and ``pip download --no-deps`` of ``packages`` at their installed versions, for each of
    ``python_versions`` (pure-Python wheels are shared). ``cache``: a folder of wheels already downloaded, used
    before the network."""
    from dialshift.wheels import dialshift_wheel, download_wheels

    dialshift_wheel(out)
    download_wheels(out, packages, python_versions, cache=cache, progress=progress)
    return sorted(p.name for p in out.glob("*.whl"))


def copy_trainer(out: Path) -> None:
    """The ranker trainer into ``out``, where a step runs it by path: ``trainers/`` of the source checkout the running
    dialshift comes from, else the installed ``dialshift_trainers`` (the same files)."""
    from importlib import resources

    from dialshift.wheels import source_checkout

    checkout = source_checkout()
    if checkout is not None:
        source = checkout / "trainers"
    else:
        try:
            source = resources.files("dialshift_trainers")
        except ModuleNotFoundError:
            raise DialshiftError("dialshift_trainers (the trainers) is not installed; reinstall dialshift") from None
    out.mkdir()
    for name in TRAINER_FILES:
        (out / name).write_bytes(source.joinpath(name).read_bytes())


RUNNER = """#!/usr/bin/env bash
# dialshift GPU bundle runner: bash run.sh STEP [--out DIR]   (steps: bash run.sh --list)
# Installs the bundle's wheels once into $DIALSHIFT_WORK (default {work}) and runs the step with nothing but the
# bundle's code on the path. Written by `dialshift bundle create`; see docs/full_scale.md.
set -euo pipefail
BUNDLE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
WORK="${{DIALSHIFT_WORK:-{work}}}"
PY="${{PYTHON:-python}}"
SITE="$WORK/site-{bundle_id}"
mkdir -p "$WORK"
if [ ! -f "$SITE/.complete" ]; then
  rm -rf "$SITE"
  "$PY" -m pip install --quiet --no-deps --no-index --find-links "$BUNDLE/wheels" --target "$SITE" {requirements}
  touch "$SITE/.complete"
fi
export PYTHONPATH="$SITE:$BUNDLE"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=true
cd "$WORK"
exec "$PY" -m dialshift bundle run "$BUNDLE" "$@" --work "$WORK"
"""


def create_bundle(dataset, out, protocol: Protocol, backbone: str = "minilm", wheels: bool = True,
                  wheel_packages=WHEEL_PACKAGES, wheel_cache=None, limit_bytes: int = LIMIT_BYTES,
                  progress: bool = True) -> dict:
    """Assemble the bundle folder ``out`` (new or empty) and return its manifest; see the module docstring."""
    from dialshift.configs import expand_patterns
    from dialshift.hub.reading import folder_configs
    from dialshift.io import atomic_output

    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise DialshiftError(f"--out {out}: not empty; give a new folder for the bundle")
    typed = folder_configs(dataset)
    if protocol.train_config not in typed:
        raise DialshiftError(f"{dataset}: no {protocol.train_config!r} config to train on; build it first")
    family = typed[protocol.train_config].family  # the trained ranker is scored on its own family's configs
    ranking = [name for name, config in typed.items() if config.task == "response_ranking" and config.family == family]
    names = expand_patterns(protocol.test_configs, ranking, hint="the dataset's response_ranking configs") \
        if protocol.test_configs else ranking
    protocol.test_configs = list(names)
    with atomic_output(out) as staging:  # a bundle that fails (e.g. over the limit) leaves nothing behind
        staging.mkdir()
        return _assemble(dataset, staging, protocol, backbone, wheels, wheel_packages, wheel_cache, limit_bytes,
                         progress, final=out)


def _assemble(dataset, out: Path, protocol: "Protocol", backbone, wheels, wheel_packages, wheel_cache, limit_bytes,
              progress, final: Path) -> dict:
    from dialshift.io import atomic_write, write_json_atomic
    from dialshift.ranking.data import dataset_revision, write_slim_folder

    started = time.perf_counter()
    resolved = save_fp16_backbone(backbone, out / "backbone")
    splits = {name: ["test"] for name in protocol.test_configs}
    splits[protocol.train_config] = ["train", "validation", *splits.get(protocol.train_config, [])]
    slim = write_slim_folder(dataset, out / "data", splits)
    copy_trainer(out / "trainers")
    wheel_names = build_wheels(out / "wheels", wheel_packages if wheels else (), cache=wheel_cache,
                               progress=progress)
    bundle_id = content_id(out)
    requirements = " ".join(["dialshift", *(wheel_packages if wheels else ())])
    atomic_write(out / "run.sh", RUNNER.format(work=DEFAULT_WORK, bundle_id=bundle_id, requirements=requirements))
    (out / "run.sh").chmod(0o755)
    sizes = {part: _size(out / part) for part in ("backbone", "data", "trainers", "wheels")}
    counts = {name: entry["rows"] for name, entry in ((n, s["test"]) for n, s in slim["configs"].items()
                                                       if "test" in s)}
    manifest = {
        "format": BUNDLE_FORMAT, "id": bundle_id, "created_seconds": round(time.perf_counter() - started, 1),
        "dataset": str(Path(dataset).resolve()), "dataset_revision": dataset_revision(dataset),
        "backbone": resolved, "backbone_dtype": "float16 (upcast to float32 on arrival)",
        "protocol": asdict(protocol), "wheels": wheel_names, "requirements": requirements.split(),
        "train_instances": slim["configs"][protocol.train_config]["train"]["rows"],
        "validation_instances": slim["configs"][protocol.train_config]["validation"]["rows"],
        "test_instances": counts, "sizes": sizes,
    }
    manifest["steps"] = plan(manifest)
    write_json_atomic(out / BUNDLE_FILE, manifest)
    total = _size(out)
    if total > limit_bytes:
        parts = ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in sorted(sizes.items(), key=lambda kv: -kv[1]))
        raise DialshiftError(f"{final}: the bundle is {total / 2**20:.1f} MiB, over the {limit_bytes / 2**20:.0f} MiB "
                             f"limit ({parts}); carry fewer configs (--configs) or a smaller backbone")
    manifest["total_bytes"] = total
    write_json_atomic(out / BUNDLE_FILE, manifest)
    return manifest


def read_manifest(bundle) -> dict:
    """``BUNDLE/bundle.json``, with the fields that listing and running steps read checked (one line otherwise)."""
    path = Path(bundle) / BUNDLE_FILE
    if not path.is_file():
        raise DialshiftError(f"{bundle}: not a dialshift bundle (no {BUNDLE_FILE}; make one with `dialshift bundle "
                             "create`)")
    from dialshift.returned import read_json_object

    remake = "copy the bundle again or make a new one with `dialshift bundle create`"
    manifest = read_json_object(path, "bundle manifest", remake)
    if manifest.get("format") != BUNDLE_FORMAT:
        raise DialshiftError(f"{path}: unknown bundle format {manifest.get('format')!r} (expected {BUNDLE_FORMAT}); "
                             f"{remake}")
    number = (int, float)
    fields = {"id": str, "dataset_revision": str, "protocol": dict, "train_instances": int, "steps": list}
    step_fields = {"name": str, "what": str, "seconds": number, "returns": list, "return_bytes": dict}
    problems = [f"field {key!r} must be a {kind.__name__}" for key, kind in fields.items()
                if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool)]
    for i, step in enumerate(manifest.get("steps") if not problems else []):
        if not isinstance(step, dict):
            problems.append(f"steps[{i}] must be an object")
            continue
        problems += [f"steps[{i}].{key} has the wrong type" for key, kind in step_fields.items()
                     if not isinstance(step.get(key), kind) or isinstance(step.get(key), bool)]
        problems += [f"steps[{i}].{key} has the wrong type" for key in ("needs", "seconds_at_old_speed")
                     if key in step and not isinstance(step[key], str if key == "needs" else number)]
        if not problems and not (all(isinstance(r, str) for r in step["returns"])
                                 and all(isinstance(b, number) for b in step["return_bytes"].values())):
            problems.append(f"steps[{i}].returns or return_bytes has the wrong type")
    if problems:
        raise DialshiftError(f"{path}: {problems[0]}; {remake}")
    return manifest


# ----------------------------------------------------------------------------------------------- the step plan


def plan(manifest: dict, figures: dict = H100) -> list[dict]:
    """The steps of the bundle's protocol in the order to run them, each with its estimated seconds (from
    ``figures``), the files it returns and their estimated bytes."""
    protocol = manifest["protocol"]
    passes, seeds = protocol["dropout_passes"], protocol["seeds"]
    test_pairs = 10 * sum(manifest["test_instances"].values())
    validation_pairs = 10 * manifest["validation_instances"]
    train_steps = protocol["num_epochs"] * -(-(protocol["max_train_instances"] or manifest["train_instances"])
                                             // protocol["batch_size"])
    start, encode = figures["start_seconds"], (test_pairs + validation_pairs) / figures["encode_pairs_per_second"]
    score = {k: test_pairs / v for k, v in figures["score_pairs_per_second"].items()}
    logits_bytes = 4 * test_pairs + 1024

    def step(name, seconds, returns, what, needs=None, slow=None):
        entry = {"name": name, "what": what, "seconds": round(seconds), "returns": returns,
                 "return_bytes": {r: (logits_bytes if r.endswith(".npz") else 100_000) for r in returns}}
        if needs:
            entry["needs"] = needs
        if slow is not None:
            entry["seconds_at_old_speed"] = round(slow)
        return entry

    train_s = train_steps / figures["train_steps_per_second"]
    old_s = train_steps / figures["old_train_steps_per_second"]
    smoke_steps = min(200, train_steps)
    steps = [step("smoke", start + smoke_steps / figures["old_train_steps_per_second"] + 20,
                  ["smoke.json"], f"{smoke_steps} training steps and 2,000 test pairs: the remote's speed and set-up")]
    for seed in range(seeds):
        base = start + encode + score["bf16"] + 10
        steps.append(step(f"lee-train-{seed}", base + train_s, [f"lee-train-{seed}.npz", f"lee-train-{seed}.json"],
                          f"train seed {seed} ({train_steps:,} steps, resumable), validation logits, one vanilla pass "
                          f"over {test_pairs:,} test pairs", slow=base + old_s))
        # the dropout and fp32 steps follow lee-train-S on the same machine: its ranker and encoded pairs are there
        steps.append(step(f"lee-dropout-{seed}", start + passes * score["bf16"] + 10,
                          [*(f"lee-dropout-{seed}-p{i}.npz" for i in range(passes)), f"lee-dropout-{seed}.json"],
                          f"{passes} MC-dropout passes of the seed-{seed} ranker", needs=f"lee-train-{seed}"))
        if seed == 0:
            steps.append(step("lee-fp32-0", start + score["fp32"] + 10, ["lee-fp32-0.npz", "lee-fp32-0.json"],
                              "the vanilla pass of seed 0 again in fp32 (precision check)", needs="lee-train-0"))
    return steps


def find_step(manifest: dict, name: str) -> dict:
    for entry in manifest["steps"]:
        if entry["name"] == name:
            return entry
    raise DialshiftError(f"no step {name!r} in this bundle; steps: {', '.join(s['name'] for s in manifest['steps'])}")


# ----------------------------------------------------------------------------------------------- running a step


def _ids_digest(ids) -> str:
    return hashlib.sha1("\n".join(ids).encode("utf-8")).hexdigest()


def _test_data(bundle: Path, protocol: dict, configs=None, max_instances=None):
    from dialshift.ranking.data import load_split
    from dialshift.ranking.evaluation import unique_pairs

    names = configs or protocol["test_configs"]
    limit = max_instances or protocol["max_instances"]
    data = {name: load_split(bundle / "data", name, "test", limit, 0) for name in names}
    pairs, rows = unique_pairs(data)
    return data, pairs, rows


def encoded_on_disk(ranker, pairs, cache: Path | None):
    """The pairs encoded once per machine: loaded from ``cache`` (a ``.npz`` in the work folder, keyed by the
    tokenizer, the max length and the pairs) when an earlier step of the same warm machine wrote it."""
    from dialshift.models.ranker import EncodedPairs, tokenizer_key
    from dialshift.ranking.inference import encode

    if cache is None:
        return encode(ranker, pairs)
    digest = hashlib.sha1(repr((tokenizer_key(ranker.tokenizer), ranker.meta["max_length"], len(pairs), pairs[:50],
                                pairs[-50:])).encode("utf-8")).hexdigest()[:16]
    path = cache / f"encoded-{digest}.npz"
    if path.is_file():
        with np.load(path) as z:
            return EncodedPairs(z["tokens"], z["offsets"], z["lengths"], z["first"], int(z["pad_id"]))
    encoded = encode(ranker, pairs)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path.with_suffix(".tmp.npz"), tokens=encoded.tokens, offsets=encoded.offsets, lengths=encoded.lengths,
             first=encoded.first, pad_id=encoded.pad_id)
    path.with_suffix(".tmp.npz").replace(path)
    return encoded


def _score(model_dir, pairs, rows, protocol, precision, dropout_seeds=(None,), progress=False, cache=None):
    """``{dropout seed: {config: N x K logits}}`` and the scoring seconds, the pairs encoded once (per machine with
    a ``cache`` folder)."""
    import torch

    from dialshift.models.ranker import load_ranker, precision_context, resolve_attention, resolve_precision
    from dialshift.ranking.inference import score_pairs

    device = "cuda" if torch.cuda.is_available() else "cpu"
    precision = resolve_precision(precision, device, "scoring")
    ranker = load_ranker(model_dir, device=device, attn_implementation=resolve_attention("auto", precision),
                         precision=precision)
    started = time.perf_counter()
    encoded = encoded_on_disk(ranker, pairs, cache)
    encode_seconds = time.perf_counter() - started
    out = {}
    started = time.perf_counter()
    with precision_context("tf32" if precision == "tf32" else "fp32", device):
        for seed in dropout_seeds:
            logits = score_pairs(ranker, encoded, protocol["score_batch_size"], dropout_seed=seed, progress=progress)
            out[seed] = {name: logits[index] for name, index in rows.items()}
    return out, {"precision": precision, "device": device, "encode_seconds": round(encode_seconds, 2),
                 "score_seconds": round(time.perf_counter() - started, 2), "pairs": len(pairs)}


def _save(out: Path, name: str, arrays: dict, description: dict) -> None:
    from dialshift.io import write_json_atomic

    np.savez_compressed(out / f"{name}.npz", **arrays)
    write_json_atomic(out / f"{name}.json", description)


def _device_name() -> str:
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"


def _train(bundle: Path, work: Path, protocol: dict, seed: int, output: Path, max_steps=None,
           max_train_instances=None, progress=False):
    import runpy

    from dialshift.training import resolve_checkpoint

    # The bundle's copy of the trainer script, run by path (the library imports no script package).
    trainer_main = runpy.run_path(str(bundle / "trainers" / "ranker.py"), run_name="dialshift_bundle_trainer")["main"]

    argv = ["--dataset", str(bundle / "data"), "--config", protocol["train_config"], "--model",
            str(upcast_backbone(bundle, work)), "--seed", str(seed), "--output-dir", str(output),
            "--batch-size", str(protocol["batch_size"]), "--learning-rate", str(protocol["learning_rate"]),
            "--num-epochs", str(protocol["num_epochs"]), "--max-length", str(protocol["max_length"]),
            "--eval-batch-size", str(protocol["score_batch_size"]),
            "--checkpointing-steps", str(protocol["checkpointing_steps"])]
    limit = max_train_instances or protocol["max_train_instances"]
    argv += ["--max-train-instances", str(limit)] if limit else []
    argv += ["--max-eval-instances", str(protocol["max_eval_instances"])] if protocol["max_eval_instances"] else []
    argv += ["--max-steps", str(max_steps)] if max_steps else []
    argv += [] if progress else ["--no-progress"]
    try:
        resolve_checkpoint(output, "latest")
        argv += ["--resume-from-checkpoint", "latest"]  # a call cut off at 10 minutes continues where it stopped
    except DialshiftError:
        pass
    started = time.perf_counter()
    if trainer_main(argv):
        raise DialshiftError(f"training seed {seed} failed (see the trainer's message above)")
    return time.perf_counter() - started


def run_step(bundle, step: str, out, work=DEFAULT_WORK, progress: bool = False) -> dict:
    """Run one step of the bundle (on the remote, through ``run.sh``); write its files into ``out``; return its
    description (also written as JSON)."""
    import dialshift
    from dialshift.models.ranker import read_ranker_meta

    bundle, out, work = Path(bundle).resolve(), Path(out), Path(work)
    manifest = read_manifest(bundle)
    protocol = manifest["protocol"]
    find_step(manifest, step)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    description = {"step": step, "bundle": manifest["id"], "dataset_revision": manifest["dataset_revision"],
                   "device": _device_name(), "dialshift_from": str(Path(dialshift.__file__).parent),
                   "protocol": protocol}
    kind, _, number = step.rpartition("-")
    if step == "smoke":
        model_dir = work / "smoke-ranker"
        shutil.rmtree(model_dir, ignore_errors=True)
        train_steps = min(200, manifest["train_instances"] // protocol["batch_size"])
        _train(bundle, work, {**protocol, "checkpointing_steps": 10**9}, 0, model_dir, max_steps=train_steps,
               max_train_instances=train_steps * protocol["batch_size"], progress=progress)
        meta = read_ranker_meta(model_dir)
        data, pairs, rows = _test_data(bundle, protocol, max_instances=max(1, 200 // len(protocol["test_configs"])))
        logits, timing = _score(model_dir, pairs, rows, protocol, "auto", progress=progress)
        description.update(train_steps=train_steps, train_steps_per_second=meta["train_steps_per_second"],
                           scoring=timing, pairs_per_second=round(timing["pairs"] / max(timing["score_seconds"],
                                                                                       1e-9)))
        from dialshift.io import write_json_atomic

        description["seconds"] = round(time.perf_counter() - started, 1)
        write_json_atomic(out / "smoke.json", description)
        return description
    seed = int(number)
    model_dir = work / f"lee-seed{seed}"
    data, pairs, rows = None, None, None
    if kind == "lee-train":
        train_seconds = _train(bundle, work, protocol, seed, model_dir, progress=progress)
        meta = read_ranker_meta(model_dir)
        data, pairs, rows = _test_data(bundle, protocol)
        logits, timing = _score(model_dir, pairs, rows, protocol, "auto", progress=progress, cache=work)
        from dialshift.ranking.data import load_split

        validation = load_split(bundle / "data", protocol["train_config"], "validation",
                                protocol["max_eval_instances"], 0)
        arrays = {f"test/{name}": value for name, value in logits[None].items()}
        arrays["validation"] = np.load(model_dir / "validation_logits.npy")
        arrays["validation_labels"] = np.asarray(validation["label"], dtype=np.int64)
        keep = ("backbone", "max_length", "seed", "steps", "selected_step", "history", "validation", "temperature",
                "train_steps_per_second", "precision", "attention", "train_chunk_size", "versions", "training")
        description.update(method="vanilla", seed=seed, training={k: meta.get(k) for k in keep},
                           train_seconds=round(train_seconds, 1), scoring=timing)
    elif kind in ("lee-dropout", "lee-fp32"):
        if not (model_dir / "dialshift_model.json").is_file():
            raise DialshiftError(f"{model_dir}: the seed-{seed} ranker is not on this machine (it does not outlive "
                                 f"the machine); run step lee-train-{seed} first, then this step right after")
        meta = read_ranker_meta(model_dir)
        data, pairs, rows = _test_data(bundle, protocol)
        if kind == "lee-fp32":
            logits, timing = _score(model_dir, pairs, rows, protocol, "fp32", progress=progress, cache=work)
            arrays = {f"test/{name}": value for name, value in logits[None].items()}
            description.update(method="vanilla", seed=seed, scoring=timing)
        else:
            seeds = list(range(protocol["dropout_passes"]))
            logits, timing = _score(model_dir, pairs, rows, protocol, "auto", dropout_seeds=seeds, progress=progress,
                                    cache=work)
            for i in seeds:
                np.savez_compressed(out / f"lee-dropout-{seed}-p{i}.npz",
                                    **{f"test/{name}": value for name, value in logits[i].items()})
            arrays = None
            description.update(method="dropout", seed=seed, dropout_seeds=seeds, scoring=timing)
        description["model"] = {k: meta.get(k) for k in ("backbone", "seed", "steps", "temperature", "precision")}
    else:
        raise DialshiftError(f"step {step!r} has no runner")
    description["ids"] = {name: _ids_digest(split["id"]) for name, split in data.items()}
    description["instances"] = {name: len(split["id"]) for name, split in data.items()}
    description["seconds"] = round(time.perf_counter() - started, 1)
    if arrays is None:
        from dialshift.io import write_json_atomic

        write_json_atomic(out / f"{step}.json", description)
    else:
        _save(out, step, arrays, description)
    return description


# ----------------------------------------------------------------------------------------------- the report (here)


HEADLINE = ("recall@1", "brier", "ece")


def report(paths, dataset, out, replicates: int = 1000, plots: bool = True, progress: bool = False) -> dict:
    """Predictions, ``results.json`` (through :mod:`dialshift.scoring`) and the across-seed tables of the returned
    logits: per seed vanilla, temperature (``T`` fitted here on the returned validation logits) and dropout; the
    ensemble of every seed's vanilla logits; the fp32 check. Writes ``OUT/seed<S>/<method>/``, ``OUT/ensemble/``,
    ``OUT/summary.json`` and ``OUT/results.md``; returns the summary."""
    import pyarrow.compute as pc

    from dialshift.io import atomic_write, write_json_atomic
    from dialshift.models.uncertainty import fit_temperature, negative_log_likelihood
    from dialshift.ranking.data import dataset_revision, read_columns
    from dialshift.ranking.evaluation import write_method
    from dialshift.returned import check_distinct_runs, find_returned, read_logits
    from dialshift.scoring import ScoringSettings, check_output_dir
    from dialshift.scoring.pipeline import claim_output_dir
    from dialshift.scoring.report import write_report

    inputs = (*paths, dataset)
    check_output_dir(out, writes=None, inputs=inputs)  # a new, empty or earlier-written folder, before any work
    found = find_returned(paths)
    protocol = next(iter(found.values())).description["protocol"]
    revision = dataset_revision(dataset)
    sources = {entry.description["dataset_revision"] for entry in found.values()}
    configs = list(protocol["test_configs"])
    ids, candidates = {}, {}
    for name in configs:
        table = read_columns(dataset, name, "test", ["id", "candidates"], protocol["max_instances"], 0)
        ids[name] = table.column("id").to_pylist()
        counts = set(pc.list_value_length(table.column("candidates")).to_pylist())
        if len(counts) != 1:
            found = f"{min(counts)} to {max(counts)} candidates per instance" if counts else "no instances"
            raise DialshiftError(f"{dataset}: config {name!r} has {found}; the bundle's report needs one candidate "
                                 "count per config")
        candidates[name] = counts.pop()
    for entry in found.values():
        for name, digest in entry.description["ids"].items():
            if name not in ids or _ids_digest(ids[name]) != digest \
                    or entry.description["instances"][name] != len(ids[name]):
                raise DialshiftError(f"{entry.path}: the {name!r} test ids differ from those of {dataset} "
                                     f"(bundle made from {', '.join(sorted(sources))}, this folder is {revision}); "
                                     "report against the dataset folder the bundle was made from")
    rows = {name: len(ids[name]) for name in configs}
    loaded = {step: read_logits(entry, rows, candidates) for step, entry in found.items()}
    check_distinct_runs(found, loaded)
    steps = {step: {"description": entry.description, "arrays": loaded[step]} for step, entry in found.items()}
    out = claim_output_dir(out, "dialshift bundle report", writes=None, inputs=inputs)
    scoring = ScoringSettings(Path(dataset), split="test", replicates=replicates, seed=0,
                              options={"ece_bins": protocol["ece_bins"]}, max_instances=protocol["max_instances"],
                              sample_seed=0, progress=progress)

    def passes(arrays, method_stack):
        return {name: method_stack(arrays[f"test/{name}"]) for name in configs}

    def run(method, seeds, **extra):
        return {"model": "dialshift bundle (see bundle.json)", "method": method, "seeds": seeds,
                "source": "logits returned by the GPU bundle, combined here", **extra}

    documents: dict[str, dict[int, dict]] = {}
    temperatures, vanilla = {}, {}
    for step in sorted(steps):
        entry = steps[step]
        description, arrays = entry["description"], entry["arrays"]
        seed = description["seed"]
        folder = out / f"seed{seed}"
        if step.startswith("lee-train-"):
            vanilla[seed] = arrays
            labels = arrays["validation_labels"]
            temperature = fit_temperature(arrays["validation"], labels)
            temperatures[seed] = {"temperature": temperature, "remote": description["training"].get("temperature"),
                                  "nll": negative_log_likelihood(arrays["validation"], labels),
                                  "nll_temperature": negative_log_likelihood(arrays["validation"], labels,
                                                                             temperature)}
            documents.setdefault("vanilla", {})[seed] = write_method(
                folder / "vanilla", ids, passes(arrays, lambda x: x[None]), 1.0, run("vanilla", [seed]), scoring)
            documents.setdefault("temperature", {})[seed] = write_method(
                folder / "temperature", ids, passes(arrays, lambda x: x[None]), temperature,
                run("temperature", [seed], temperature=temperature), scoring)
        elif step.startswith("lee-dropout-"):
            documents.setdefault("dropout", {})[seed] = write_method(
                folder / "dropout", ids, passes(arrays, lambda x: x), 1.0,
                run("dropout", [seed], dropout_passes=len(description["dropout_seeds"])), scoring)
        elif step.startswith("lee-fp32-"):
            documents.setdefault("vanilla_fp32", {})[seed] = write_method(
                folder / "vanilla_fp32", ids, passes(arrays, lambda x: x[None]), 1.0,
                run("vanilla", [seed], precision="fp32"), scoring)
        write_report(folder, {m: d for m, by in documents.items() for s, d in by.items() if s == seed}, plots=plots)
    if len(vanilla) >= 2:
        members = sorted(vanilla)
        stacked = {name: np.stack([vanilla[s][f"test/{name}"] for s in members]) for name in configs}
        documents["ensemble"] = {-1: write_method(out / "ensemble", ids, stacked, 1.0, run("ensemble", members),
                                                  scoring)}
        write_report(out / "ensemble", {"ensemble": documents["ensemble"][-1]}, plots=plots)
    summary = summarise(documents, configs, temperatures, protocol)
    write_json_atomic(out / "summary.json", summary)
    atomic_write(out / "results.md", summary_markdown(summary))
    return summary


def summarise(documents: dict, configs: list, temperatures: dict, protocol: dict) -> dict:
    """Per method and config: the headline metrics across seeds (mean, sd, min, max; the ensemble's point value and
    bootstrap interval), and the relative degradation (accuracy / accuracy on the unshifted config)."""
    unshifted = protocol["train_config"]
    table = {}
    for method, by_seed in documents.items():
        rows = {}
        for name in configs:
            row = {}
            for metric in HEADLINE:
                values = [doc["results"][name][metric] for doc in by_seed.values()]
                row[metric] = spread(values)
                if method == "ensemble":
                    row[metric]["interval"] = next(iter(by_seed.values()))["intervals"][name][metric]
            relative = [doc["results"][name]["recall@1"] / doc["results"][unshifted]["recall@1"]
                        for doc in by_seed.values() if unshifted in doc["results"]
                        and doc["results"][unshifted]["recall@1"]]
            row["relative_recall@1"] = spread(relative)
            row["instances"] = next(iter(by_seed.values()))["results"][name]["instances"]
            rows[name] = row
        table[method] = {"seeds": sorted(s for s in by_seed if s >= 0), "configs": rows}
    summary = {"protocol": protocol, "methods": table, "temperatures": temperatures}
    if "vanilla_fp32" in documents:
        seed = min(documents["vanilla_fp32"])
        fast, exact = documents["vanilla"][seed]["results"], documents["vanilla_fp32"][seed]["results"]
        summary["precision"] = {"seed": seed, "differences": {
            name: {metric: fast[name][metric] - exact[name][metric] for metric in HEADLINE} for name in configs}}
    return summary


def _cell(stat: dict) -> str:
    if stat["mean"] is not None and stat.get("interval"):
        low, high = stat["interval"]
        return f"{stat['mean']:.3f} [{low:.3f}, {high:.3f}]"
    return format_spread(stat)


def summary_markdown(summary: dict) -> str:
    """``results.md``: one table per method (mean ± sd across seeds; the ensemble with its 95% bootstrap interval),
    the relative degradation and the fp32 check."""
    methods = summary["methods"]
    lines = ["# Lee et al. at full scale: results from the returned logits", "",
             "Each cell: mean ± standard deviation across the seeds (n in the header); the ensemble is one model, "
             "with its 95% paired-bootstrap interval. Computed by `dialshift bundle report`.", ""]
    for method in ("vanilla", "temperature", "dropout", "ensemble", "vanilla_fp32"):
        if method not in methods:
            continue
        entry = methods[method]
        seeds = entry["seeds"] or "all (one ensemble)"
        lines += [f"## {method} (seeds {seeds})", "",
                  "| config | n | R@1/10 | Brier | ECE (15 bins) | R@1 / R@1 unshifted |", "|---|---|---|---|---|---|"]
        for name, row in entry["configs"].items():
            lines.append(f"| {name} | {row['instances']} | {_cell(row['recall@1'])} | {_cell(row['brier'])} | "
                         f"{_cell(row['ece'])} | {_cell(row['relative_recall@1'])} |")
        lines.append("")
    if "vanilla_fp32" in methods and "vanilla" in methods:
        lines += ["## Precision check: fast path minus fp32 (same ranker), against the spread across seeds", "",
                  "| config | metric | fast - fp32 | sd across seeds | smaller |", "|---|---|---|---|---|"]
        for name, by_metric in summary["precision"]["differences"].items():
            for metric, diff in by_metric.items():
                spread = methods["vanilla"]["configs"][name][metric]["sd"]
                smaller = "–" if methods["vanilla"]["configs"][name][metric]["n"] < 2 else \
                    ("yes" if abs(diff) < spread else "no")
                lines.append(f"| {name} | {metric} | {diff:+.4f} | {spread:.4f} | {smaller} |")
        lines += ["", f"(seed {summary['precision']['seed']})", ""]
    if summary["temperatures"]:
        lines += ["## Temperatures (fitted here on the returned validation logits)", "",
                  "| seed | T | T on the remote | NLL | NLL after T |", "|---|---|---|---|---|"]
        for seed, t in sorted(summary["temperatures"].items()):
            remote = "–" if t["remote"] is None else f"{t['remote']:.4f}"
            lines.append(f"| {seed} | {t['temperature']:.4f} | {remote} | {t['nll']:.4f} | "
                         f"{t['nll_temperature']:.4f} |")
        lines.append("")
    return "\n".join(lines)
