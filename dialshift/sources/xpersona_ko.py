"""XPersona Korean (Lin et al., 2021): persona-grounded multi-turn dialogues, human-corrected valid/test sets.

Files: ``korean_chitchat/xpersona_ko/Ko_persona_split_{valid,test}_human_annotated.json``, each a JSON list of
``{"persona": [sentences], "dialogue": [[user utterance, response], ...]}``. Splits ``validation`` and ``test``;
records :class:`PersonaDialogue` with ids ``xpersona-ko-{split}-{index:05d}`` (index in the list). The Korean
training file is not available (see ``korean_chitchat/SOURCE.md``). Korean text is kept verbatim.

Counts: 299 validation and 300 test dialogues (2,342 / 2,339 utterance-response pairs); the upstream README gives no
per-split numbers, so these are the measured counts of ``SOURCE.md``.
"""

from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import read_json, register_reader, require_fields, require_strings

FOLDER = "korean_chitchat/xpersona_ko"
FILES = {"validation": "Ko_persona_split_valid_human_annotated.json",
         "test": "Ko_persona_split_test_human_annotated.json"}


@dataclass(frozen=True)
class PersonaDialogue:
    """Persona sentences and the dialogue as (user utterance, response) pairs."""

    id: str
    persona: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]

    @property
    def utterances(self) -> tuple[str, ...]:
        """The dialogue as one alternating sequence of utterances."""
        return tuple(text for pair in self.pairs for text in pair)


def read_split(path: Path, split: str) -> list[PersonaDialogue]:
    data = read_json(path)
    if not isinstance(data, list):
        raise SourceError(path, "expected a JSON list of dialogues")
    records = []
    for index, value in enumerate(data):
        where = f"dialogue {index}"
        row = require_fields(path, value, {"persona": list, "dialogue": list}, where=where)
        persona = require_strings(path, row["persona"], f"{where}: persona")
        pairs = tuple(require_strings(path, pair, f"{where}: turn {turn}", length=2)
                      for turn, pair in enumerate(row["dialogue"]))
        if not pairs:
            raise SourceError(path, f"{where}: empty dialogue")
        records.append(PersonaDialogue(id=f"xpersona-ko-{split}-{index:05d}", persona=persona, pairs=pairs))
    return records


def read(data_dir: Path) -> dict[str, list[PersonaDialogue]]:
    """Read the XPersona-ko validation and test dialogues."""
    return {split: read_split(Path(data_dir) / FOLDER / name, split) for split, name in FILES.items()}


def count(loaded: dict) -> dict[str, int]:
    counts = {split: len(records) for split, records in loaded.items()}
    counts.update({f"{split}_pairs": sum(len(d.pairs) for d in records) for split, records in loaded.items()})
    return counts


SOURCE = register_reader(
    name="xpersona_ko",
    path=FOLDER,
    description="XPersona Korean persona dialogues, human-corrected valid/test (Lin et al. 2021)",
    license="MIT",
    read=read,
    expected={"validation": 299, "test": 300, "validation_pairs": 2_342, "test_pairs": 2_339},
    unit="dialogues",
    count=count,
    notes={"counts": "no official per-split numbers upstream; measured counts from SOURCE.md"},
)
