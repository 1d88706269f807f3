"""SNIPS (Coucke et al., 2018) in the slot-gated split of Goo et al. (2018), as distributed by jianguoz.

Files: ``snips/{train,valid,test}/{seq.in,seq.out,label}``: tokenised lower-cased utterance, one BIO slot tag per
token, intent; line-parallel. Splits ``train``, ``validation``, ``test``. Records are :class:`SnipsExample`
(an :class:`~dialshift.sources.base.IntentExample` plus ``tokens`` and ``tags``); ``text`` is the tokens joined by
single spaces (the files carry a trailing space on most lines). A line whose tag count differs from its token count
is an error. Ids ``snips-{split}-{line index:05d}``.

Official counts (jianguoz README, checked in ``snips/SOURCE.md``): 13,084 / 700 / 700, 7 intents.
"""

from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import IntentExample, label_count, read_parallel, register_reader

FOLDER = "snips"
SPLITS = {"train": "train", "validation": "valid", "test": "test"}


@dataclass(frozen=True, kw_only=True)
class SnipsExample(IntentExample):
    """A SNIPS utterance with its intent and one BIO slot tag per token."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]


def read_split(folder: Path, split: str) -> list[SnipsExample]:
    paths = [folder / "seq.in", folder / "seq.out", folder / "label"]
    records = []
    for number, (text, tags, label) in read_parallel(paths):
        tokens, tags = tuple(text.split()), tuple(tags.split())
        if len(tokens) != len(tags):
            raise SourceError(paths[1], f"{len(tags)} slot tags for the {len(tokens)} tokens of {paths[0]} "
                                        f"line {number}", line=number)
        if not label.strip():
            raise SourceError(paths[2], "empty label", line=number)
        records.append(SnipsExample(id=f"snips-{split}-{number - 1:05d}", text=" ".join(tokens), label=label.strip(),
                                    tokens=tokens, tags=tags))
    return records


def read(data_dir: Path) -> dict:
    """Read the SNIPS train/validation/test splits."""
    folder = Path(data_dir) / FOLDER
    return {split: read_split(folder / sub, split) for split, sub in SPLITS.items()}


SOURCE = register_reader(
    name="snips",
    path=FOLDER,
    description="SNIPS intents + BIO slots, Goo et al. split (Coucke et al. 2018)",
    license="CC0 1.0",
    read=read,
    expected={"train": 13_084, "validation": 700, "test": 700, "intents": 7},
    unit="utterances",
    count=label_count("train", "validation", "test"),
)
