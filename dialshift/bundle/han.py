"""Han et al. (2021) at full scale: the four variants of the Korean response-selection model, trained on the GPU.

Steps ``han-<variant>-S`` (variant ``baseline``, ``deb``, ``ums`` or ``ums-deb``: Tables 3-4's baseline, +deb, +UMS
and +UMS+deb), seed S: train ``trainers/debias.py`` on all of ``kor_chitchat`` train with the carried backbone (the
converted e5 in fp16; word embeddings trainable unless the protocol freezes them), then score ``kor_adv`` and the
``kor_chitchat`` test split and return the response scores (``test/<config>``, rows x candidates, float32). A step
cut off at 10 minutes resumes from its checkpoints when called again on the warm machine.

The backbone's word-embedding matrix travels with the rows of the tokens the carried configs use only (e5's 250,037
x 384 matrix would not fit the carry limit; :func:`dialshift.bundle.manifest.save_fp16_backbone`); the other rows
arrive as zeros, which no carried text looks up.

The biased model of DRiFt is trained to convergence: ``dialshift bundle create`` computes its four Jaccard features
of every training and validation pair here (kiwipiepy's morphemes, which the remote lacks, and the backbone's
subwords), carries the training pairs' features (``data/bias_features.npz``) and sets the protocol's
``bias_epochs`` to the epoch of the lowest validation loss of a seed-0 biased model
(:func:`dialshift.models.debias.biased_validation_curve`), recorded in the manifest; every seed trains its own
biased model for that many epochs on the remote.
"""

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from dialshift.bundle.manifest import ids_digest, run_trainer, save_fp16_backbone, save_step, upcast_backbone
from dialshift.errors import DialshiftError

TRAINERS = ("debias.py",)
VARIANTS = {"baseline": (), "deb": ("--debias",), "ums": ("--ums",), "ums-deb": ("--ums", "--debias")}
TRAIN_CONFIG, ADVERSARIAL_CONFIG = "kor_chitchat", "kor_adv"
BIAS_FEATURES = "bias_features.npz"
STEP = re.compile(r"han-(baseline|deb|ums|ums-deb)-(\d+)")

#: Assumed throughputs on one H100 for the estimates of :func:`plan` (not measured yet: e5-small is MiniLM's width
#: at twice its depth, so half the pairs per second of the Lee figures): training pairs (context, response) per
#: second without UMS, the cost factor of the UMS losses (one more forward of up to three examples per positive
#: pair), and scoring pairs per second.
ASSUMED_H100 = {"start_seconds": 45.0, "train_pairs_per_second": 1_700.0, "ums_factor": 1.75,
                "score_pairs_per_second": 9_000.0}


@dataclass
class HanProtocol:
    """What the Han et al. steps run: the paper's settings (App. B) by default; smaller values make a test bundle."""

    paper: ClassVar[str] = "han"
    test_configs: list = field(default_factory=lambda: [ADVERSARIAL_CONFIG, TRAIN_CONFIG])
    train_config: str = TRAIN_CONFIG
    variants: list = field(default_factory=lambda: list(VARIANTS))
    seeds: int = 3
    num_epochs: int = 3
    batch_size: int = 64  # rows of 2 pairs: 128 pairs per step
    learning_rate: float = 2.5e-5
    max_length: int = 128
    freeze_word_embeddings: bool = False
    reduce_vocabulary: bool = True  # carry the embedding rows of the tokens the carried configs use only
    bias_epochs: int | None = None  # None: from the biased model's validation loss at create
    bias_max_epochs: int = 100
    bias_patience: int = 5
    bias_learning_rate: float = 5e-4
    max_train_instances: int | None = None
    max_eval_instances: int | None = None
    max_instances: int | None = None  # test rows per config (None: all, the paper's)
    score_batch_size: int = 256
    checkpointing_steps: int = 200


PROTOCOL = HanProtocol


def select_configs(dataset, protocol: HanProtocol) -> None:
    """Check the protocol's variants; the test configs are fixed (``kor_adv`` and ``kor_chitchat``)."""
    unknown = [v for v in protocol.variants if v not in VARIANTS]
    if unknown or not protocol.variants:
        raise DialshiftError(f"--variants {' '.join(unknown) or '(none)'}: choose from {', '.join(VARIANTS)}")
    protocol.test_configs = [ADVERSARIAL_CONFIG, TRAIN_CONFIG]


def _pair_features(tokenizer, split: dict) -> np.ndarray:
    from dialshift.models.debias import BiasFeatures, binary_pairs

    pairs = binary_pairs(split)
    return BiasFeatures(tokenizer)([(context, response) for context, response, _ in pairs]), \
        np.array([label for _, _, label in pairs])


def _texts(folder: Path, rows: dict) -> list[str]:
    """Every utterance and candidate response of the carried configs' splits."""
    from dialshift.ranking.data import load_split

    texts = set()
    for name, splits in rows.items():
        for split in splits:
            data = load_split(folder, name, split)
            for context, candidates in zip(data["context"], data["candidates"], strict=True):
                texts.update(context)
                texts.update(candidates)
    return sorted(texts)


def carry(dataset, out: Path, protocol: HanProtocol, backbone: str, progress: bool) -> dict:
    """The backbone in fp16, ``kor_chitchat`` and ``kor_adv`` (:func:`dialshift.bundle.folders.copy_configs`), the
    training pairs' bias features and, unless set, ``bias_epochs`` from the biased model's validation loss."""
    from transformers import AutoTokenizer

    from dialshift.bundle.folders import copy_configs
    from dialshift.models.backbones import backbone_source
    from dialshift.models.debias import biased_validation_curve
    from dialshift.ranking.data import load_split

    rows = copy_configs(dataset, out / "data", [ADVERSARIAL_CONFIG, TRAIN_CONFIG])
    described = save_fp16_backbone(backbone, out / "backbone",
                                  keep_texts=_texts(out / "data", rows) if protocol.reduce_vocabulary else None)
    tokenizer = AutoTokenizer.from_pretrained(backbone_source(backbone))
    train = load_split(out / "data", TRAIN_CONFIG, "train", protocol.max_train_instances, 0)
    validation = load_split(out / "data", TRAIN_CONFIG, "validation", protocol.max_eval_instances, 0)
    features, labels = _pair_features(tokenizer, train)
    width = len(train["candidates"][0])
    np.savez_compressed(out / "data" / BIAS_FEATURES, ids=np.array(train["id"]),
                        features=features.reshape(len(train["id"]), width, 4))
    curve = None
    if protocol.bias_epochs is None:
        validation_features, validation_labels = _pair_features(tokenizer, validation)
        curve = biased_validation_curve(features, labels, validation_features, validation_labels, seed=0,
                                        learning_rate=protocol.bias_learning_rate,
                                        max_epochs=protocol.bias_max_epochs, patience=protocol.bias_patience)
        protocol.bias_epochs = curve["epochs"]
    return {**described, "train_instances": len(train["id"]), "train_pairs": int(len(labels)),
            "validation_instances": len(validation["id"]),
            "test_instances": {name: min(rows[name]["test"], protocol.max_instances or rows[name]["test"])
                               for name in (ADVERSARIAL_CONFIG, TRAIN_CONFIG)},
            "biased_model": curve}


def plan(manifest: dict, figures: dict = ASSUMED_H100) -> list[dict]:
    """``han-<variant>-S`` for every seed, then every variant (seed 0 of all four variants first)."""
    protocol = manifest["protocol"]
    pairs = manifest["train_pairs"]
    validation_pairs = 10 * manifest["validation_instances"]
    tests = manifest["test_instances"]
    test_pairs = 2 * tests[ADVERSARIAL_CONFIG] + 10 * tests[TRAIN_CONFIG]
    score = (protocol["num_epochs"] * validation_pairs + test_pairs) / figures["score_pairs_per_second"]
    steps = []
    for seed in range(protocol["seeds"]):
        for variant in protocol["variants"]:
            factor = figures["ums_factor"] if "ums" in variant else 1.0
            train = protocol["num_epochs"] * pairs * factor / figures["train_pairs_per_second"]
            name = f"han-{variant}-{seed}"
            steps.append({"name": name, "seconds": round(figures["start_seconds"] + train + score),
                          "what": f"train {variant} seed {seed} ({protocol['num_epochs']} epochs of {pairs:,} pairs, "
                                  f"biased model {protocol['bias_epochs']} epochs; resumable), score kor_adv and "
                                  f"kor_chitchat test ({test_pairs:,} pairs)",
                          "returns": [f"{name}.npz", f"{name}.json"],
                          "return_bytes": {f"{name}.npz": 4 * test_pairs + 1024, f"{name}.json": 100_000}})
    return steps


def _train_argv(bundle: Path, work: Path, protocol: dict, variant: str, seed: int, output: Path) -> list:
    argv = ["--dataset", str(bundle / "data"), "--config", protocol["train_config"], "--model",
            str(upcast_backbone(bundle, work)), "--seed", str(seed), "--output-dir", str(output),
            "--num-epochs", str(protocol["num_epochs"]), "--batch-size", str(protocol["batch_size"]),
            "--learning-rate", str(protocol["learning_rate"]), "--max-length", str(protocol["max_length"]),
            "--eval-batch-size", str(protocol["score_batch_size"]), "--bias-epochs", str(protocol["bias_epochs"]),
            "--bias-learning-rate", str(protocol["bias_learning_rate"]),
            "--bias-features", str(bundle / "data" / BIAS_FEATURES),
            "--checkpointing-steps", str(protocol["checkpointing_steps"]), "--no-progress", *VARIANTS[variant]]
    for key in ("max_train_instances", "max_eval_instances"):
        argv += [f"--{key.replace('_', '-')}", str(protocol[key])] if protocol[key] else []
    return argv + (["--freeze-word-embeddings"] if protocol["freeze_word_embeddings"] else [])


def run(bundle: Path, manifest: dict, step: str, out: Path, work: Path, description: dict,
        progress: bool = False) -> dict:
    """Train the step's variant and seed, score the test configs, write ``<step>.npz`` and ``<step>.json``."""
    import torch

    from dialshift.bundle.manifest import trainer_namespace

    protocol = manifest["protocol"]
    started = time.perf_counter()
    variant, seed = STEP.fullmatch(step).groups()
    seed, model_dir = int(seed), work / step
    train_seconds = run_trainer(bundle, "debias.py", _train_argv(bundle, work, protocol, variant, seed, model_dir),
                                model_dir, f"{variant} seed {seed}")
    scoring_started = time.perf_counter()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    scored, meta = trainer_namespace(bundle, "debias.py")["test_scores"](
        model_dir, bundle / "data", protocol["score_batch_size"], protocol["max_instances"], 0, device,
        max_adversarial_instances=protocol["max_instances"])
    score_seconds = time.perf_counter() - scoring_started
    pairs = sum(scores.size for _, scores in scored.values())
    keep = ("backbone", "variant", "seed", "steps", "selected_step", "history", "validation", "train_pairs",
            "biased_model", "train_steps_per_second", "versions", "training")
    description.update(seed=seed, variant=variant, training={k: meta.get(k) for k in keep},
                       train_seconds=round(train_seconds, 1),
                       scoring={"device": device, "pairs": pairs, "score_seconds": round(score_seconds, 2)},
                       ids={config: ids_digest(ids) for config, (ids, _) in scored.items()},
                       instances={config: len(ids) for config, (ids, _) in scored.items()})
    description["seconds"] = round(time.perf_counter() - started, 1)
    save_step(out, step, {f"test/{config}": scores.astype(np.float32) for config, (_, scores) in scored.items()},
              description)
    return description
