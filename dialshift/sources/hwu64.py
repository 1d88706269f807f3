"""HWU64 (Liu et al., IWSDS 2019), the DNNC-format split distributed by jianguoz/Few-Shot-Intent-Detection.

Files: ``hwu64/{train,valid,test,train_5,train_10}/{seq.in,label}`` (line-parallel utterance and
``scenario_intent`` label). Splits: ``train``, ``validation``, ``test``, ``train_5shot``, ``train_10shot``.
Records are :class:`~dialshift.sources.base.IntentExample` with the scenario (the label up to its first ``_``, e.g.
``alarm`` for ``alarm_query``) as ``coarse_label`` and ids ``hwu64-{split}-{line index:05d}``.

Official counts (jianguoz README, checked in ``hwu64/SOURCE.md``): 8,954 / 1,076 / 1,076 with 64 intents; the
5-/10-shot training subsets hold 5 / 10 utterances per intent (320 / 640). The original 25,716-row annotated CSV is
not available, so this split is the one the benchmark uses.
"""

from pathlib import Path

from dialshift.sources.base import label_count, read_seq_label, register_reader

FOLDER = "hwu64"
SPLITS = {"train": "train", "validation": "valid", "test": "test", "train_5shot": "train_5", "train_10shot": "train_10"}


def scenario(label: str) -> str:
    """The HWU64/MASSIVE scenario of a ``scenario_intent`` label (scenario names contain no ``_``)."""
    return label.split("_", 1)[0]


def read(data_dir: Path) -> dict:
    """Read every HWU64 split into IntentExample lists."""
    folder = Path(data_dir) / FOLDER
    return {split: read_seq_label(folder / sub, "hwu64", split, coarse=scenario) for split, sub in SPLITS.items()}


SOURCE = register_reader(
    name="hwu64",
    path=FOLDER,
    description="HWU64 intents, DNNC split (+5/10-shot train) (Liu et al. 2019)",
    license="CC BY 4.0",
    read=read,
    expected={"train": 8_954, "validation": 1_076, "test": 1_076, "train_5shot": 320, "train_10shot": 640,
              "intents": 64},
    unit="utterances",
    count=label_count("train", "validation", "test"),
)
