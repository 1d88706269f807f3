"""BANKING77 (Casanueva et al., 2020): 77 fine-grained banking intents, in three releases.

- ``banking77``: the original PolyAI release, ``banking77/polyai_original/{train,test}.csv`` (header ``text,category``,
  quoted fields may span lines) and ``categories.json`` (the 77 intents); splits ``train``, ``test``; official
  10,003 / 3,080.
- ``banking77_dnnc``: the lower-cased DNNC-format split of jianguoz/Few-Shot-Intent-Detection,
  ``banking77/jianguoz_BANKING77/{train,valid,test,train_5,train_10}/{seq.in,label}``; splits ``train``,
  ``validation``, ``test``, ``train_5shot``, ``train_10shot``; official 8,622 / 1,540 / 3,080 (+385 / 770).
  Its train + validation (10,162 lines) exceed the original 10,003 train rows: validation repeats training examples
  (see ``banking77/SOURCE.md``).
- ``banking77_oos``: BANKING77-OOS (Zhang et al. 2021), ``banking77/jianguoz_BANKING77-OOS/``: 50 in-scope intents
  (``train``, ``validation``, ``test``: 5,905 / 1,506 / 2,000), ID-OOS queries of the 27 held-out intents labelled
  ``oos`` with their intent in ``original_label`` (``id_oos_train``, ``id_oos_validation``, ``id_oos_test``:
  2,062 / 530 / 1,080) and OOD-OOS queries from other domains (``ood_oos_validation``, ``ood_oos_test``: 200 / 1,000).

Records are :class:`~dialshift.sources.base.IntentExample`; ids ``banking77-{split}-{index:05d}``,
``banking77-dnnc-...`` and ``banking77-oos-...`` (0-based row / line index).
"""

from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import (
    IntentExample,
    label_count,
    read_csv,
    read_json,
    read_seq_label,
    register_reader,
)

FOLDER = "banking77"
OOS = "oos"
DESCRIPTION = "BANKING77 banking intents (Casanueva et al. 2020)"


def read_categories(data_dir: Path) -> set[str]:
    path = data_dir / FOLDER / "polyai_original" / "categories.json"
    categories = read_json(path)
    if not isinstance(categories, list) or not all(isinstance(item, str) for item in categories):
        raise SourceError(path, "expected a JSON list of intent names")
    return set(categories)


def read_original(data_dir: Path) -> dict[str, list[IntentExample]]:
    """The PolyAI CSVs; every category must be listed in ``categories.json``."""
    data_dir = Path(data_dir)
    categories = read_categories(data_dir)
    loaded = {}
    for split in ("train", "test"):
        path = data_dir / FOLDER / "polyai_original" / f"{split}.csv"
        records = []
        for number, row in read_csv(path, ("text", "category")):
            if row["category"] not in categories:
                raise SourceError(path, f"category {row['category']!r} is not in categories.json", line=number)
            records.append(IntentExample(id=f"banking77-{split}-{len(records):05d}", text=row["text"],
                                         label=row["category"]))
        loaded[split] = records
    return loaded


def read_dnnc(data_dir: Path) -> dict[str, list[IntentExample]]:
    folder = Path(data_dir) / FOLDER / "jianguoz_BANKING77"
    splits = {"train": "train", "validation": "valid", "test": "test", "train_5shot": "train_5",
              "train_10shot": "train_10"}
    return {split: read_seq_label(folder / sub, "banking77-dnnc", split) for split, sub in splits.items()}


def read_oos(data_dir: Path) -> dict[str, list[IntentExample]]:
    folder = Path(data_dir) / FOLDER / "jianguoz_BANKING77-OOS"
    oos = frozenset({OOS})
    loaded = {}
    for split, sub in {"train": "train", "validation": "valid", "test": "test"}.items():
        loaded[split] = read_seq_label(folder / sub, "banking77-oos", split, ood_labels=oos)
    for split, sub in {"train": "train", "validation": "valid", "test": "test"}.items():
        loaded[f"id_oos_{split}"] = read_seq_label(folder / "id-oos" / sub, "banking77-oos", f"id_oos_{split}",
                                                   ood_labels=oos, original=True)
    for split, sub in {"validation": "valid", "test": "test"}.items():
        loaded[f"ood_oos_{split}"] = read_seq_label(folder / "ood-oos" / sub, "banking77-oos", f"ood_oos_{split}",
                                                    ood_labels=oos)
    for split, records in loaded.items():
        wrong = next((r for r in records if r.is_ood != ("oos" in split)), None)
        if wrong is not None:
            raise SourceError(folder, f"{split}: example {wrong.id} is labelled {wrong.label!r}; in-scope splits "
                                      f"must not contain {OOS!r} and OOS splits must contain only {OOS!r}")
    return loaded


register_reader(
    name="banking77",
    path=f"{FOLDER}/polyai_original",
    description=f"{DESCRIPTION}, original release",
    license="CC BY 4.0",
    read=read_original,
    expected={"train": 10_003, "test": 3_080, "intents": 77},
    unit="utterances",
    count=label_count("train", "test"),
)
register_reader(
    name="banking77_dnnc",
    path=f"{FOLDER}/jianguoz_BANKING77",
    description=f"{DESCRIPTION}, DNNC split with validation (+5/10-shot train)",
    license="CC BY 4.0",
    read=read_dnnc,
    expected={"train": 8_622, "validation": 1_540, "test": 3_080, "train_5shot": 385, "train_10shot": 770,
              "intents": 77},
    unit="utterances",
    count=label_count("train", "validation", "test"),
)
register_reader(
    name="banking77_oos",
    path=f"{FOLDER}/jianguoz_BANKING77-OOS",
    description="BANKING77-OOS: 50 in-scope intents + ID-OOS / OOD-OOS queries (Zhang et al. 2021)",
    license="CC BY 4.0",
    read=read_oos,
    expected={"train": 5_905, "validation": 1_506, "test": 2_000, "id_oos_train": 2_062, "id_oos_validation": 530,
              "id_oos_test": 1_080, "ood_oos_validation": 200, "ood_oos_test": 1_000, "intents": 50},
    unit="utterances",
    count=label_count("train", "validation", "test"),
)
