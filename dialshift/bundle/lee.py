"""Lee et al. (2022) at full scale: the steps of the MiniLM response ranker's protocol.

``smoke`` (a short run of everything, and the remote's speed), ``lee-train-S`` (train seed S, then its validation
logits and one vanilla pass over every test config; resumable from its checkpoints when a call is cut off),
``lee-dropout-S`` (the MC-dropout passes of the seed-S ranker trained by ``lee-train-S`` on the same warm machine,
one file per pass) and ``lee-fp32-S`` (the vanilla pass again in fp32, to check that the fast precision moves the
metrics less than the seeds do). With ``concurrent_seeds`` (default: on where CUDA is) the first ``lee-train-S`` of
a machine trains seeds S..seeds-1 side by side (``trainers/ranker.py --concurrent-seeds``) and the later
``lee-train-S`` steps only score; the returned files are the same. The bundle carries a slim folder
(:func:`dialshift.ranking.data.write_slim_folder`: zstd parquet, strings once, the training split reduced to the gold
responses) and the backbone in fp16. The report (:mod:`.lee_report`) turns the returned logits into predictions and
tables here.
"""

import hashlib
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from dialshift.bundle.manifest import ids_digest, run_trainer, save_fp16_backbone, save_step, upcast_backbone
from dialshift.errors import DialshiftError

#: The trainer scripts the bundle carries (``trainers/``, installed as ``dialshift_trainers``).
TRAINERS = ("ranker.py",)

#: Throughputs measured on one H100 (the plain loop and the model-side scoring figures; docs/full_scale.md); the
#: estimates of :func:`plan` use them. ``train_steps_per_second`` is the target of the library path (the plain
#: loop ran 30.1 in TF32); the measured figure of the old path, 12.4, is kept to say what a slow remote costs.
H100 = {"start_seconds": 45.0, "train_steps_per_second": 28.0, "old_train_steps_per_second": 12.4,
        "encode_pairs_per_second": 18_000.0, "score_pairs_per_second": {"bf16": 70_000.0, "tf32": 38_000.0,
                                                                         "fp32": 16_000.0}}


#: Throughputs measured on one H100 (the plain loop and the model-side scoring figures; docs/full_scale.md); the
#: estimates of :func:`plan` use them. ``train_steps_per_second`` is the target of the library path (the plain
#: loop ran 30.1 in TF32); the measured figure of the old path, 12.4, is kept to say what a slow remote costs.
H100 = {"start_seconds": 45.0, "train_steps_per_second": 28.0, "old_train_steps_per_second": 12.4,
        "encode_pairs_per_second": 18_000.0, "score_pairs_per_second": {"bf16": 70_000.0, "tf32": 38_000.0,
                                                                         "fp32": 16_000.0}}


@dataclass
class Protocol:
    """What the steps run: Lee et al.'s protocol at full scale by default; smaller values make a test bundle."""

    paper: ClassVar[str] = "lee"
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
    #: train the seeds side by side (``trainers/ranker.py --concurrent-seeds``): the first ``lee-train-S`` step on a
    #: machine trains seeds S..seeds-1 as one stacked computation, the later ones find their ranker trained. None: on
    #: where CUDA is (the paper's batch size and epochs either way; no checkpoints on that path)
    concurrent_seeds: bool | None = None


PROTOCOL = Protocol


def select_configs(dataset, protocol: Protocol) -> None:
    """The test configs of ``protocol``: its patterns matched against the response-ranking configs of the training
    config's family in ``dataset`` (all of them by default)."""
    from dialshift.configs import expand_patterns
    from dialshift.hub.reading import folder_configs

    typed = folder_configs(dataset)
    if protocol.train_config not in typed:
        raise DialshiftError(f"{dataset}: no {protocol.train_config!r} config to train on; build it first")
    family = typed[protocol.train_config].family  # the trained ranker is scored on its own family's configs
    ranking = [name for name, config in typed.items() if config.task == "response_ranking" and config.family == family]
    names = expand_patterns(protocol.test_configs, ranking, hint="the dataset's response_ranking configs") \
        if protocol.test_configs else ranking
    protocol.test_configs = list(names)


def carry(dataset, out: Path, protocol: Protocol, backbone: str, progress: bool) -> dict:
    """The backbone in fp16 and a slim folder of the training config's splits and the test configs; the manifest's
    fields describing them."""
    from dialshift.ranking.data import write_slim_folder

    described = save_fp16_backbone(backbone, out / "backbone")
    splits = {name: ["test"] for name in protocol.test_configs}
    splits[protocol.train_config] = ["train", "validation", *splits.get(protocol.train_config, [])]
    slim = write_slim_folder(dataset, out / "data", splits)
    counts = {name: entry["rows"] for name, entry in ((n, s["test"]) for n, s in slim["configs"].items()
                                                       if "test" in s)}
    return {**described, "train_instances": slim["configs"][protocol.train_config]["train"]["rows"],
            "validation_instances": slim["configs"][protocol.train_config]["validation"]["rows"],
            "test_instances": counts}


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


def _train(bundle: Path, work: Path, protocol: dict, seed: int, output: Path, max_steps=None,
           max_train_instances=None, progress=False, extra=()):
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
    argv += list(extra)
    return run_trainer(bundle, "ranker.py", argv, output, f"seed {seed}")


def concurrent(protocol: dict) -> bool:
    """Whether the protocol's seeds train side by side on this machine (``concurrent_seeds``; None: on CUDA)."""
    choice = protocol.get("concurrent_seeds")
    if choice is None:
        import torch

        return torch.cuda.is_available()
    return bool(choice)


def _train_together(bundle: Path, work: Path, protocol: dict, seed: int, progress=False) -> float:
    """Train the seeds from ``seed`` on that have no ranker on this machine, side by side, into their
    ``lee-seed<S>`` folders (where a one-seed ``lee-train-S`` puts them); return the seconds it took."""
    seeds = [s for s in range(seed, protocol["seeds"])
             if not (work / f"lee-seed{s}" / "dialshift_model.json").is_file()]
    together = work / "lee-seeds-together"
    shutil.rmtree(together, ignore_errors=True)  # no checkpoints on this path: a cut-off call starts again
    for s in seeds:
        shutil.rmtree(work / f"lee-seed{s}", ignore_errors=True)
    seconds = _train(bundle, work, protocol, seeds[0], together, progress=progress,
                     extra=["--concurrent-seeds", *map(str, seeds)])
    for s in seeds:
        (together / f"seed{s}").rename(work / f"lee-seed{s}")
    shutil.rmtree(together)
    return seconds


def run(bundle: Path, manifest: dict, step: str, out: Path, work: Path, description: dict,
        progress: bool = False) -> dict:
    """Run one step of the bundle (on the remote, through ``run.sh``); write its files into ``out``; return its
    description (also written as JSON)."""
    from dialshift.models.ranker import read_ranker_meta

    protocol = manifest["protocol"]
    started = time.perf_counter()
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
        if not concurrent(protocol):
            train_seconds = _train(bundle, work, protocol, seed, model_dir, progress=progress)
        elif (model_dir / "dialshift_model.json").is_file():
            train_seconds = 0.0  # trained side by side with an earlier seed's step on this machine
        else:
            train_seconds = _train_together(bundle, work, protocol, seed, progress=progress)
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
                "train_steps_per_second", "precision", "attention", "train_chunk_size", "versions", "training",
                "concurrent_seeds", "train_seed_steps_per_second")
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
    description["ids"] = {name: ids_digest(split["id"]) for name, split in data.items()}
    description["instances"] = {name: len(split["id"]) for name, split in data.items()}
    description["seconds"] = round(time.perf_counter() - started, 1)
    if arrays is None:
        from dialshift.io import write_json_atomic

        write_json_atomic(out / f"{step}.json", description)
    else:
        save_step(out, step, arrays, description)
    return description
