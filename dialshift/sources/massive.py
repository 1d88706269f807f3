"""MASSIVE (FitzGerald et al., 2022), English (en-US) intents, in the SetFit conversion.

File: ``massive/setfit_en-US/{train,validation,test}.jsonl``, one object per line:
``{"id": "<MASSIVE id>", "label": <int>, "text": ..., "label_text": "<scenario>_<intent>"}``. Records are
:class:`~dialshift.sources.base.IntentExample` with ``label`` = ``label_text``, the scenario (prefix before the
first ``_``) as ``coarse_label`` and MASSIVE's own id as ``source_id``; ids ``massive-{split}-{line index:05d}``.
The reader checks that ``label`` <-> ``label_text`` is one-to-one.

Official counts (MASSIVE dataset card): 11,514 / 2,033 / 2,974 en-US utterances, 60 intents (all 60 occur in
train; ``cooking_query`` occurs only in train, so validation and test have 59). Slots (``annot_utt``), ``partition``
and ``worker_id`` are not in this conversion.
"""

from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import IntentExample, label_count, read_jsonl, register_reader, require_fields
from dialshift.sources.hwu64 import scenario

FOLDER = "massive/setfit_en-US"
SPLITS = ("train", "validation", "test")
FIELDS = {"id": str, "label": int, "text": str, "label_text": str}


def read(data_dir: Path) -> dict[str, list[IntentExample]]:
    """Read the MASSIVE en-US splits."""
    loaded, names = {}, {}
    for split in SPLITS:
        path = Path(data_dir) / FOLDER / f"{split}.jsonl"
        records = []
        for number, value in read_jsonl(path):
            row = require_fields(path, value, FIELDS, line=number)
            if names.setdefault(row["label"], row["label_text"]) != row["label_text"]:
                raise SourceError(path, f"label {row['label']} is {row['label_text']!r} here but "
                                        f"{names[row['label']]!r} earlier", line=number)
            records.append(IntentExample(id=f"massive-{split}-{number - 1:05d}", text=row["text"],
                                         label=row["label_text"], coarse_label=scenario(row["label_text"]),
                                         source_id=row["id"]))
        loaded[split] = records
    if len(set(names.values())) != len(names):
        raise SourceError(Path(data_dir) / FOLDER, "two label numbers share one label_text")
    return loaded


SOURCE = register_reader(
    name="massive_en_us",
    path=FOLDER,
    description="MASSIVE en-US intents, SetFit conversion (FitzGerald et al. 2022)",
    license="CC BY 4.0",
    read=read,
    expected={"train": 11_514, "validation": 2_033, "test": 2_974, "intents": 60},
    unit="utterances",
    count=label_count("train", "validation", "test"),
)
