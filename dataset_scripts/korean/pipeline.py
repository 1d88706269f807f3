"""Rows of the Korean family: the KorAdvMRS pairwise cases and the Korean chit-chat ranking instances.

Both are pure functions of the source records and the seed (every random choice comes from
:func:`dialshift.shifts.seeding.instance_rng` keyed by the instance id), so a rebuild is byte-identical and an
instance does not change when others are added or removed.
"""

from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.ranking.instances import ranking_instances
from dialshift.shifts.seeding import instance_rng

#: The seven adversarial types of Han et al. (2021) Table 1, in the table's order, and their case counts.
TYPES = {"repetition": 400, "negation": 454, "tense": 158, "subject_object": 374, "lexical_contradiction": 254,
         "interrogative_word": 236, "topic": 344}
#: Stream keys of the seeded draws (part of the published bytes: never rename).
ORDER_KEY, SPLIT_KEY, TRAIN_KEY, EVAL_KEY = "kor_adv_order", "kor_chitchat_split", "kor_chitchat_train", "kor_chitchat"
#: In-domain candidates: train 1:1 (one negative), validation and test 1:9 (Han et al. Table 2).
TRAIN_CANDIDATES, EVAL_CANDIDATES = 2, 10


def check_adversarial_files(data_dir: Path, folder: str) -> None:
    """Refuse a KorAdvMRS folder holding a ``<type>.jsonl`` of a type the family does not know (a renamed or added
    file would otherwise be silently left out)."""
    directory = Path(data_dir) / folder
    unknown = sorted(path.stem for path in directory.glob("*.jsonl") if path.stem not in TYPES)
    if unknown:
        raise DialshiftError(f"{directory / (unknown[0] + '.jsonl')}: unknown adversarial type {unknown[0]!r}; the "
                             f"KorAdvMRS types are {', '.join(TYPES)} (rename or remove the file)")


def adversarial_rows(cases, seed: int) -> list[dict]:
    """One row per KorAdvMRS case: the context, the correct and the adversarial response in a seeded order (each
    order with probability 1/2, from the case's own generator), the gold index and the type."""
    rows = []
    for case in cases:
        if case.type not in TYPES:
            raise DialshiftError(f"case {case.id}: unknown adversarial type {case.type!r}; known: {', '.join(TYPES)}")
        if len(case.candidates) != 2:
            raise DialshiftError(f"case {case.id}: {len(case.candidates)} candidates; a KorAdvMRS case has exactly 2")
        correct, adversarial = case.candidates[case.label], case.candidates[1 - case.label]
        swap = bool(instance_rng(seed, ORDER_KEY, case.id).random() < 0.5)
        rows.append({"id": case.id, "type": case.type, "case_id": case.did, "source_dialogue": case.src_dlg_id,
                     "context": list(case.context),
                     "candidates": [adversarial, correct] if swap else [correct, adversarial],
                     "label": int(swap), "adversarial": adversarial, "context_turns": len(case.context)})
    return rows


@dataclass(frozen=True)
class Dialogue:
    """A chit-chat dialogue as :func:`~dialshift.ranking.instances.ranking_instances` reads it."""

    id: str
    source: str
    turns: tuple[str, ...]


def chitchat_dialogues(xpersona: dict, chatbot: dict) -> list[Dialogue]:
    """Every Korean chit-chat dialogue: the XPersona-ko validation and test dialogues (alternating utterances; the
    persona sentences are not dialogue turns) and each ChatbotData question/answer pair as a two-turn dialogue."""
    dialogues = [Dialogue(record.id, "xpersona_ko", record.utterances)
                 for split in ("validation", "test") for record in xpersona[split]]
    dialogues += [Dialogue(record.id, "chatbotdata", (record.question, record.answer)) for record in chatbot["train"]]
    return dialogues


def assign_splits(dialogues: list[Dialogue], seed: int, fractions: tuple[float, float]) -> dict[str, list[Dialogue]]:
    """Split dialogues (never instances, so no dialogue is in two splits) into train / validation / test: a
    dialogue goes to validation with probability ``fractions[0]``, to test with ``fractions[1]``, else to train,
    from its own generator."""
    validation, test = fractions
    if validation <= 0 or test <= 0 or validation + test >= 1:
        raise DialshiftError(f"--kor-split {validation},{test}: the validation and test shares must be positive and "
                             "sum to less than 1 (e.g. 0.1,0.1)")
    splits = {"train": [], "validation": [], "test": []}
    for dialogue in dialogues:
        draw = instance_rng(seed, SPLIT_KEY, dialogue.id).random()
        splits["validation" if draw < validation else "test" if draw < validation + test else "train"].append(dialogue)
    return splits


def chitchat_rows(dialogues: list[Dialogue], split: str, seed: int) -> list[dict]:
    """Ranking instances of one split: every utterance after a dialogue's first is the positive response to the
    turns before it; negatives are utterances of other dialogues of the same split (1 in train, 9 in validation
    and test), never equal to the gold or to each other."""
    train = split == "train"
    rows = ranking_instances(dialogues, seed, key=TRAIN_KEY if train else EVAL_KEY,
                             num_candidates=TRAIN_CANDIDATES if train else EVAL_CANDIDATES)
    source = {dialogue.id: dialogue.source for dialogue in dialogues}
    for row in rows:
        row["source"] = source[row["dialogue_id"]]
        row["context_turns"] = len(row["context"])
    return rows
