"""KorAdvMRS (Han et al., EMNLP 2021): Korean adversarial multi-turn response-selection test cases.

Files: ``koradvmrs/dataset/{type}.jsonl`` for the 7 adversarial types, one case per line:
``{"context": [utterances], "candidates": [{"text", "label"}, ...], "did", "src_dlg_id"}`` with one positive
(label 1) and one adversarial negative (label 0). Everything is one split, ``test``, in the order of :data:`TYPES`
then file order; each :class:`AdversarialCase` carries its ``type``. Ids ``koradvmrs-{type}-{line index:05d}``.
Korean text is kept verbatim (UTF-8).

Official counts (README and its table): 2,220 cases; repetition 400, negation 454, tense 158, subject_object 374,
lexical_contradiction 254, interrogative_word 236, topic 344.
"""

from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import read_jsonl, register_reader, require_fields, require_strings

FOLDER = "koradvmrs/dataset"
TYPES = {"repetition": 400, "negation": 454, "tense": 158, "subject_object": 374, "lexical_contradiction": 254,
         "interrogative_word": 236, "topic": 344}


@dataclass(frozen=True)
class AdversarialCase:
    """A dialogue context, its candidate responses and the index of the correct one."""

    id: str
    type: str
    context: tuple[str, ...]
    candidates: tuple[str, ...]
    label: int
    did: str
    src_dlg_id: str


def read_case(path: Path, number: int, value, kind: str) -> AdversarialCase:
    row = require_fields(path, value, {"context": list, "candidates": list, "did": str, "src_dlg_id": str},
                         line=number)
    context = require_strings(path, row["context"], "context", line=number)
    if not context:
        raise SourceError(path, "empty context", line=number)
    texts, labels = [], []
    for index, candidate in enumerate(row["candidates"]):
        require_fields(path, candidate, {"text": str, "label": int}, line=number, where=f"candidates[{index}]")
        texts.append(candidate["text"])
        labels.append(candidate["label"])
    if len(texts) < 2 or sorted(labels) != [0] * (len(labels) - 1) + [1]:
        raise SourceError(path, f"expected one candidate with label 1 and the others with label 0, found labels "
                                f"{labels}", line=number)
    return AdversarialCase(id=f"koradvmrs-{kind}-{number - 1:05d}", type=kind, context=context,
                           candidates=tuple(texts), label=labels.index(1), did=row["did"],
                           src_dlg_id=row["src_dlg_id"])


def read(data_dir: Path) -> dict[str, list[AdversarialCase]]:
    """Read all 7 adversarial types into the ``test`` split."""
    cases = []
    for kind in TYPES:
        path = Path(data_dir) / FOLDER / f"{kind}.jsonl"
        cases.extend(read_case(path, number, value, kind) for number, value in read_jsonl(path))
    return {"test": cases}


def count(loaded: dict) -> dict[str, int]:
    """All cases, then cases per adversarial type."""
    cases = loaded.get("test", [])
    return {"test": len(cases), **{kind: sum(case.type == kind for case in cases) for kind in TYPES}}


SOURCE = register_reader(
    name="koradvmrs",
    path=FOLDER,
    description="Korean adversarial multi-turn response selection test, 7 types (Han et al. 2021)",
    license="Apache 2.0",
    read=read,
    expected={"test": 2_220, **TYPES},
    unit="cases",
    count=count,
)
