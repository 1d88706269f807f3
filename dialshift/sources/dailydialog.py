"""DailyDialog (Li et al., IJCNLP 2017), official train / validation / test split.

Layout under the data directory: ``dailydialog/{split}/dialogues_{split}.txt`` (one dialogue per line, every utterance
terminated by ``__eou__``) with the line-parallel ``dialogues_act_{split}.txt`` and ``dialogues_emotion_{split}.txt``
(one space-separated label per utterance). Each line becomes a :class:`Dialogue` with id ``dd-{split}-{index:05d}``
(0-based line index).

Known defect of the release (repaired and reported): train line 7,852 (1-based) has 12 ``__eou__`` segments but 11
act/emotion labels. Its 5th and 6th segments ("I left it at my parent's house , but I need one here as well ." and
"I've been using Jim's old bike but he needs it back .") are one turn of the same speaker split by a stray
``__eou__``: read as 12 turns, the speakers stop alternating and every later act label is off by one (a commissive
on that sentence, a directive on "How much is it ?"); merged, all 11 acts fit their utterances. The reader merges
those two segments (joined by a space), checking the text first, so the dialogue has 11 turns and 11 labels.
"""

from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import read_parallel, register_reader

SPLITS = ("train", "validation", "test")
EXPECTED_DIALOGUES = {"train": 11_118, "validation": 1_000, "test": 1_000}
EOU = "__eou__"
ACTS = {1: "inform", 2: "question", 3: "directive", 4: "commissive"}
EMOTIONS = {0: "none", 1: "anger", 2: "disgust", 3: "fear", 4: "happiness", 5: "sadness", 6: "surprise"}

#: (split, 1-based line) -> (0-based segment merged with the next one, start of that segment's text).
KNOWN_DEFECTS = {("train", 7852): (4, "I left it at my parent's house")}
DEFECT_NOTE = (
    "train line 7,852 has 12 __eou__ segments but 11 act/emotion labels; its segments 5 and 6 (one turn of one "
    "speaker split by a stray __eou__) are merged, which realigns every act label and the speaker alternation"
)


@dataclass(frozen=True)
class Dialogue:
    """One DailyDialog dialogue: utterances (``turns``) with their dialogue-act and emotion labels."""

    id: str
    split: str
    index: int
    turns: tuple[str, ...]
    acts: tuple[int, ...]
    emotions: tuple[int, ...]
    repaired: str = ""


def dialogue_id(split: str, index: int) -> str:
    return f"dd-{split}-{index:05d}"


def split_turns(path: Path, number: int, line: str) -> list[str]:
    """The ``__eou__``-terminated utterances of one line; raises SourceError on a malformed line."""
    if not line.rstrip().endswith(EOU):
        raise SourceError(path, f"dialogue does not end with {EOU}", line=number)
    segments = [segment.strip() for segment in line.rstrip()[: -len(EOU)].split(EOU)]
    if any(not segment for segment in segments):
        raise SourceError(path, f"empty utterance between {EOU} markers", line=number)
    return segments


def _labels(path: Path, number: int, line: str, allowed: dict) -> list[int]:
    try:
        labels = [int(value) for value in line.split()]
    except ValueError:
        raise SourceError(path, f"labels must be integers, got {line.strip()!r}", line=number) from None
    bad = [label for label in labels if label not in allowed]
    if bad:
        raise SourceError(path, f"label {bad[0]} is not one of {sorted(allowed)}", line=number)
    return labels


def _repair(split: str, number: int, path: Path, turns: list[str]) -> tuple[list[str], str]:
    defect = KNOWN_DEFECTS.get((split, number))
    if defect is None:
        return turns, ""
    merge, start = defect
    if len(turns) <= merge + 1 or not turns[merge].startswith(start):
        raise SourceError(path, f"expected the release's known defect here ({start!r} ...); the file differs "
                                "from the official release, restore it from the source in SOURCE.md", line=number)
    return turns[:merge] + [f"{turns[merge]} {turns[merge + 1]}"] + turns[merge + 2:], DEFECT_NOTE


def read_split(data_dir: Path, split: str) -> list[Dialogue]:
    """Read one official split, checking that every utterance has one act and one emotion label."""
    folder = Path(data_dir) / "dailydialog" / split
    text_path = folder / f"dialogues_{split}.txt"
    act_path = folder / f"dialogues_act_{split}.txt"
    emotion_path = folder / f"dialogues_emotion_{split}.txt"
    dialogues = []
    for number, (text, act, emotion) in read_parallel([text_path, act_path, emotion_path]):
        index = number - 1
        turns, note = _repair(split, number, text_path, split_turns(text_path, number, text))
        act_labels = _labels(act_path, number, act, ACTS)
        emotion_labels = _labels(emotion_path, number, emotion, EMOTIONS)
        for path, labels in ((act_path, act_labels), (emotion_path, emotion_labels)):
            if len(labels) != len(turns):
                raise SourceError(path, f"{len(labels)} labels for {len(turns)} utterances", line=number)
        dialogues.append(Dialogue(dialogue_id(split, index), split, index, tuple(turns), tuple(act_labels),
                                  tuple(emotion_labels), note))
    return dialogues


def read(data_dir: Path) -> dict[str, list[Dialogue]]:
    """``{split: [Dialogue, ...]}`` for the three official splits (``SOURCE.load`` also checks the counts)."""
    return {split: read_split(data_dir, split) for split in SPLITS}


SOURCE = register_reader(
    name="dailydialog",
    path="dailydialog",
    description="DailyDialog (Li et al., 2017): 13,118 daily-life English dialogues with act and emotion labels",
    license="CC BY-NC-SA 4.0",
    read=read,
    expected=EXPECTED_DIALOGUES,
    unit="dialogues",
    notes={"train line 7852": DEFECT_NOTE},
)
