"""Chatbot_data_for_Korean v1.0 (Song, 2018): single-turn Korean question/answer pairs.

File: ``korean_chitchat/songys_Chatbot_data/ChatbotData.csv``, header ``Q,A,label`` (label 0 everyday,
1 break-up/negative, 2 love/positive). One split, ``train``; records :class:`QAPair` with ids
``chatbotdata-train-{row index:05d}``. Korean text is kept verbatim; the label is stripped of surrounding
whitespace (one row has ``"2   "``).

Counts: the upstream README says 11,876 pairs, but the released file has 11,823 data rows (53 fewer); the file is
complete as released, so 11,823 is the count checked here (label 0: 5,290, 1: 3,570, 2: 2,963).
"""

from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import read_csv, register_reader

PATH = "korean_chitchat/songys_Chatbot_data/ChatbotData.csv"
LABELS = {0: "everyday", 1: "negative", 2: "positive"}


@dataclass(frozen=True)
class QAPair:
    """One question, its answer and the topic label (0 everyday, 1 break-up/negative, 2 love/positive)."""

    id: str
    question: str
    answer: str
    label: int


def read(data_dir: Path) -> dict[str, list[QAPair]]:
    """Read ChatbotData.csv into the ``train`` split."""
    path = Path(data_dir) / PATH
    records = []
    for number, row in read_csv(path, ("Q", "A", "label")):
        label = row["label"].strip()
        if not label.isdigit() or int(label) not in LABELS:
            raise SourceError(path, f"label {row['label']!r} is not one of 0, 1, 2", line=number)
        if not row["Q"].strip() or not row["A"].strip():
            raise SourceError(path, "empty question or answer", line=number)
        records.append(QAPair(id=f"chatbotdata-train-{len(records):05d}", question=row["Q"], answer=row["A"],
                              label=int(label)))
    return {"train": records}


def count(loaded: dict) -> dict[str, int]:
    records = loaded.get("train", [])
    return {"train": len(records), **{f"label_{k}": sum(r.label == k for r in records) for k in LABELS}}


SOURCE = register_reader(
    name="chatbotdata",
    path=PATH,
    description="Korean single-turn Q/A pairs, Chatbot_data_for_Korean v1.0 (Song 2018)",
    license="MIT",
    read=read,
    expected={"train": 11_823, "label_0": 5_290, "label_1": 3_570, "label_2": 2_963},
    unit="pairs",
    count=count,
    notes={"counts": "README says 11,876 pairs; the released file has 11,823 rows (53 fewer)"},
)
