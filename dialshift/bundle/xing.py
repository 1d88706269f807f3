"""Xing & Gulla (2022) at full scale: Table 3's 23 LSTM variants trained on the GPU, their attention scores returned.

Steps ``xing-<structure>-p<P>[-noloss]-S``: train ``trainers/seq2seq.py`` on the whole ``ubuntu`` training split
with the paper's optimiser (SGD, lr 1.0 halved when validation perplexity stops dropping, clip 5, batch 256) for at
most ``num_epochs`` epochs, the epoch of the lowest validation perplexity kept; then return, per test config (the
unshifted ``ubuntu`` and the nine distracting sets), the attention score of every context utterance
(``test/<config>/as``, row after row), the gold response's log-likelihood (``test/<config>/ll``) and token count
(``test/<config>/tokens``). The 23 variants: the five structures at training probabilities 0, 0.5, 0.7 and 1.0, and
StaticUI without the attention loss at 0.5, 0.7 and 1.0. ``seeds`` seeds for the variants Table 3's findings rest on
(:data:`SEEDED`: the five baselines, the five at 0.7 and Non-atten-loss StaticUI at 0.7), one for the others.

Random distracting sets are redrawn at every evaluation, as the paper does: the evaluation of seed S reads the
random sets rebuilt with ``--redraw-seed S + redraw_offset`` (the bundle carries them under ``data/redraw-R``; the
report rebuilds them here from the raw corpus, by the same function); the variants of one seed share a draw, so
their differences stay paired. The fixed-sentence sets are the same in every evaluation.
"""

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import numpy as np

from dialshift.bundle.manifest import ids_digest, run_trainer, save_step
from dialshift.errors import DialshiftError

TRAINERS = ("seq2seq.py",)
TRAIN_CONFIG = "ubuntu"
STRUCTURES = ("non_hier", "static", "static_ui", "dynamic", "dynamic_ui")
PROBABILITIES = ("0.0", "0.5", "0.7", "1.0")
RANDOM_SETS = tuple(f"ubuntu_distract_random_{p}" for p in ("0.5", "0.7", "1.0"))
FIXED_SETS = tuple(f"ubuntu_distract_{kind}_{where}" for kind in ("frequent", "rare")
                   for where in ("begin", "middle", "end"))
VARIANTS = tuple([f"{s}@{p}" for p in PROBABILITIES for s in STRUCTURES]
                 + [f"static_ui@{p}-noloss" for p in PROBABILITIES[1:]])
SEEDED = tuple([f"{s}@0.0" for s in STRUCTURES] + [f"{s}@0.7" for s in STRUCTURES] + ["static_ui@0.7-noloss"])
STEP = re.compile(r"xing-([a-z_]+)-p([0-9.]+)(-noloss)?-(\d+)")
#: LSTM sizes tried from the largest, (dim, layers): the first whose plan fits ``lease_budget_seconds`` is used
#: unless the protocol names one.
SIZES = ((512, 4), (512, 2), (256, 2), (256, 1), (128, 1))

#: Assumed throughputs on one H100 for the estimates of :func:`plan` (not measured yet): training examples per
#: second at 512 x 4 with batch 256, faster in proportion to dim x layers for smaller sizes (at most 8 times), and
#: evaluation examples per second (validation at every epoch and the test configs).
ASSUMED_H100 = {"start_seconds": 30.0, "train_examples_per_second": 600.0, "max_speedup": 8.0,
                "eval_examples_per_second": 5_000.0}


@dataclass
class XingProtocol:
    """What the Xing & Gulla steps run: the paper's settings (§4) where the lease allows; smaller values for tests."""

    paper: ClassVar[str] = "xing"
    test_configs: list = field(default_factory=lambda: [TRAIN_CONFIG, *RANDOM_SETS, *FIXED_SETS])
    train_config: str = TRAIN_CONFIG
    variants: list = field(default_factory=lambda: list(VARIANTS))
    seeded_variants: list = field(default_factory=lambda: list(SEEDED))
    seeds: int = 3
    redraw_offset: int = 1
    dim: int | None = None  # None: the largest of SIZES whose plan fits the lease budget
    layers: int | None = None
    vocab_size: int = 25_000
    dropout: float = 0.2
    batch_size: int = 256
    optimizer: str = "sgd"
    learning_rate: float = 1.0
    max_grad_norm: float = 5.0
    num_epochs: int = 10
    max_utterance_tokens: int = 30
    max_response_tokens: int = 30
    eval_batch_size: int = 256
    max_train_instances: int | None = None
    max_eval_instances: int | None = None
    max_instances: int | None = None  # test rows per config (the same ids in every config)
    checkpointing_steps: int = 200
    lease_budget_seconds: int = 2 * 25 * 60  # two leases of 30 minutes, less the machine's start and margins


PROTOCOL = XingProtocol


def step_name(variant: str, seed: int) -> str:
    structure, rest = variant.split("@")
    probability, _, noloss = rest.partition("-")
    return f"xing-{structure}-p{probability}{'-noloss' if noloss else ''}-{seed}"


def variant_of(step: str) -> tuple[str, int]:
    structure, probability, noloss, seed = STEP.fullmatch(step).groups()
    return f"{structure}@{probability}{'-noloss' if noloss else ''}", int(seed)


def select_configs(dataset, protocol: XingProtocol) -> None:
    """Check the variants; the test configs are fixed (``ubuntu`` and its nine distracting sets)."""
    for name, chosen in (("variants", protocol.variants), ("seeded_variants", protocol.seeded_variants)):
        unknown = [v for v in chosen if v not in VARIANTS]
        if unknown:
            raise DialshiftError(f"{name} {' '.join(unknown)}: not a Table 3 variant (STRUCTURE@P or "
                                 f"static_ui@P-noloss; e.g. {VARIANTS[0]})")
    protocol.test_configs = [TRAIN_CONFIG, *RANDOM_SETS, *FIXED_SETS]


def redraw_folder(dataset, redraw_seed: int, out: Path) -> Path:
    """The random distracting sets of ``dataset`` rebuilt from the raw corpus with ``redraw_seed`` (the family
    options and seed the folder's card records, the draw changed) into ``out``."""
    from dialshift.build import build
    from dialshift.hub.reading import folder_metadata

    identity = (folder_metadata(dataset).get(RANDOM_SETS[0]) or {}).get("identity")
    if not identity:
        raise DialshiftError(f"{dataset}: its card records no build options of {RANDOM_SETS[0]}; rebuild it with "
                             "`dialshift build --family distracting`")
    options = {**identity["options"], "redraw_seed": redraw_seed}
    build(list(RANDOM_SETS), out=out, options={"distracting": options}, seed=identity["seed"], progress=False)
    return out


def redraw_seeds(protocol) -> dict[int, int]:
    """``{training seed: redraw seed}`` of the evaluations."""
    get = protocol.get if isinstance(protocol, dict) else lambda key: getattr(protocol, key)
    return {seed: seed + get("redraw_offset") for seed in range(get("seeds"))}


def carry(dataset, out: Path, protocol: XingProtocol, backbone: str, progress: bool) -> dict:
    """``ubuntu`` and its nine distracting sets, and each evaluation's redrawn random sets; the LSTM size."""
    from dialshift.bundle.folders import copy_configs

    rows = copy_configs(dataset, out / "data", protocol.test_configs)
    for redraw in sorted(set(redraw_seeds(protocol).values())):
        redraw_folder(dataset, redraw, out / "data" / f"redraw-{redraw}")
    limit = protocol.max_instances
    carried = {"backbone": None, "train_instances": min(rows[TRAIN_CONFIG]["train"],
                                                          protocol.max_train_instances or 10**12),
               "validation_instances": min(rows[TRAIN_CONFIG]["validation"], protocol.max_eval_instances or 10**12),
               "test_instances": {name: min(rows[name]["test"], limit or rows[name]["test"])
                                  for name in protocol.test_configs}}
    if protocol.dim is None or protocol.layers is None:
        protocol.dim, protocol.layers = choose_size({**carried, "protocol": protocol.__dict__})
    return carried


def _speedup(dim: int, layers: int, figures: dict) -> float:
    return min(figures["max_speedup"], (512 * 4) / (dim * layers))


def plan_seconds(manifest: dict, dim: int, layers: int, figures: dict) -> dict:
    """Estimated seconds of one training run and its evaluation at an LSTM size."""
    protocol = manifest["protocol"]
    train = protocol["num_epochs"] * manifest["train_instances"] / (
        figures["train_examples_per_second"] * _speedup(dim, layers, figures))
    evaluate = (protocol["num_epochs"] * manifest["validation_instances"]
                + sum(manifest["test_instances"].values())) / figures["eval_examples_per_second"]
    return {"train": train, "evaluate": evaluate, "step": figures["start_seconds"] + train + evaluate}


def _runs(protocol: dict) -> list[tuple[str, int]]:
    """(variant, seed) in the order to run: seed 0 of every variant, then the further seeds of the seeded ones."""
    runs = [(variant, 0) for variant in protocol["variants"]]
    return runs + [(variant, seed) for seed in range(1, protocol["seeds"]) for variant in protocol["variants"]
                   if variant in protocol["seeded_variants"]]


def choose_size(manifest: dict, figures: dict = ASSUMED_H100) -> tuple[int, int]:
    """The largest of :data:`SIZES` whose whole plan fits the protocol's lease budget (the smallest when none
    does: the plan then says how far over it is)."""
    runs = len(_runs(manifest["protocol"]))
    for dim, layers in SIZES:
        if runs * plan_seconds(manifest, dim, layers, figures)["step"] <= manifest["protocol"]["lease_budget_seconds"]:
            return dim, layers
    return SIZES[-1]


def plan(manifest: dict, figures: dict = ASSUMED_H100) -> list[dict]:
    """One step per (variant, seed), seed 0 of every variant first."""
    protocol = manifest["protocol"]
    seconds = plan_seconds(manifest, protocol["dim"], protocol["layers"], figures)
    tests = manifest["test_instances"]
    array_bytes = sum(4 * 11 * n + 12 * n for n in tests.values()) + 1024  # ~11 utterances a row, float32
    steps = []
    for variant, seed in _runs(protocol):
        name = step_name(variant, seed)
        steps.append({"name": name, "seconds": round(seconds["step"]),
                      "what": f"train {variant} seed {seed} (LSTM {protocol['layers']} x {protocol['dim']}, at most "
                              f"{protocol['num_epochs']} epochs of {manifest['train_instances']:,} pairs; resumable), "
                              f"attention scores of {sum(tests.values()):,} test rows (random sets redrawn "
                              f"with seed {redraw_seeds(protocol)[seed]})",
                      "returns": [f"{name}.npz", f"{name}.json"],
                      "return_bytes": {f"{name}.npz": array_bytes, f"{name}.json": 100_000}})
    return steps


def _train_argv(bundle: Path, protocol: dict, variant: str, seed: int, output: Path) -> list:
    structure, rest = variant.split("@")
    probability, _, noloss = rest.partition("-")
    argv = ["--dataset", str(bundle / "data"), "--config", protocol["train_config"], "--output-dir", str(output),
            "--seed", str(seed), "--structure", structure, "--train-probability", probability,
            "--dim", str(protocol["dim"]), "--layers", str(protocol["layers"]),
            "--vocab-size", str(protocol["vocab_size"]), "--dropout", str(protocol["dropout"]),
            "--batch-size", str(protocol["batch_size"]), "--optimizer", protocol["optimizer"],
            "--learning-rate", str(protocol["learning_rate"]), "--max-grad-norm", str(protocol["max_grad_norm"]),
            "--num-epochs", str(protocol["num_epochs"]), "--eval-batch-size", str(protocol["eval_batch_size"]),
            "--max-utterance-tokens", str(protocol["max_utterance_tokens"]),
            "--max-response-tokens", str(protocol["max_response_tokens"]),
            "--checkpointing-steps", str(protocol["checkpointing_steps"]), "--no-progress"]
    for key in ("max_train_instances", "max_eval_instances"):
        argv += [f"--{key.replace('_', '-')}", str(protocol[key])] if protocol[key] else []
    return argv + (["--no-attention-loss"] if noloss else [])


def test_folder(root: Path, name: str, seed: int, protocol: dict) -> Path:
    """Where the test split of ``name`` is read for the evaluation of ``seed``: a random set's redrawn folder."""
    return root / f"redraw-{redraw_seeds(protocol)[seed]}" if name in RANDOM_SETS else root


def run(bundle: Path, manifest: dict, step: str, out: Path, work: Path, description: dict,
        progress: bool = False) -> dict:
    """Train the step's variant and seed, run it over the test configs, write ``<step>.npz`` and ``<step>.json``."""
    import torch

    from dialshift.bundle.manifest import trainer_namespace
    from dialshift.models.seq2seq import load_seq2seq

    protocol = manifest["protocol"]
    started = time.perf_counter()
    variant, seed = variant_of(step)
    model_dir = work / step
    train_seconds = run_trainer(bundle, "seq2seq.py", _train_argv(bundle, protocol, variant, seed, model_dir),
                                model_dir, f"{variant} seed {seed}")
    trainer = trainer_namespace(bundle, "seq2seq.py")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, vocab, meta = load_seq2seq(model_dir)
    model.to(device)
    settings = SimpleNamespace(eval_batch_size=protocol["eval_batch_size"],
                               max_utterance_tokens=meta["max_utterance_tokens"],
                               max_response_tokens=meta["max_response_tokens"])
    arrays, ids, rows_done = {}, {}, 0
    evaluation_started = time.perf_counter()
    for name in protocol["test_configs"]:
        rows = trainer["load_rows"](test_folder(bundle / "data", name, seed, protocol), name, "test",
                                    protocol["max_instances"], 0)
        result = trainer["run_model"](model, vocab, rows, settings, device)
        arrays[f"test/{name}/as"] = np.concatenate([np.asarray(v, dtype=np.float32)
                                                    for v in result["attention_scores"]])
        arrays[f"test/{name}/ll"] = result["log_likelihood"].astype(np.float64)
        arrays[f"test/{name}/tokens"] = result["tokens"].astype(np.int32)
        ids[name] = [row["id"] for row in rows]
        rows_done += len(rows)
    evaluation_seconds = time.perf_counter() - evaluation_started
    keep = ("structure", "train_probability", "attention_loss", "seed", "steps", "selected_step", "history",
            "validation", "vocab_size", "model_config", "train_steps_per_second", "versions", "training")
    description.update(seed=seed, variant=variant, redraw_seed=redraw_seeds(protocol)[seed],
                       training={k: meta.get(k) for k in keep}, train_seconds=round(train_seconds, 1),
                       scoring={"device": device, "rows": rows_done, "score_seconds": round(evaluation_seconds, 2)},
                       ids={name: ids_digest(values) for name, values in ids.items()},
                       instances={name: len(values) for name, values in ids.items()})
    description["seconds"] = round(time.perf_counter() - started, 1)
    save_step(out, step, arrays, description)
    return description
