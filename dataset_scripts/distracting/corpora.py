"""The corpora of the distracting-test family as context/response pairs.

* **Ubuntu IRC** (:mod:`dialshift.sources.ubuntu_irc`, Kummerfeld et al. 2019; the gold conversations of >= 3
  annotated messages, the corpus's own train/dev/test): each conversation's messages in log order become
  utterances: a leading addressee prefix (``nick: ...`` / ``nick, ...`` naming a nick of the log) is removed, URLs
  become the token ``__url__``, consecutive messages of one speaker are joined (a space between) into one
  utterance, and messages left empty are dropped. Every utterance from the third on is a response to the (at most
  ``window``) utterances before it, so a context has a Query and at least one History utterance.
* **Lowe's Ubuntu Dialogue Corpus CSV** (for users who have it, ``--ubuntu-csv train.csv``; ``valid.csv`` and
  ``test.csv`` beside it): ``train.csv`` has ``Context,Utterance,Label`` (rows with label 1 are the true pairs),
  ``valid.csv``/``test.csv`` have ``Context,Ground Truth Utterance,...``. A context's turns are separated by
  ``__eot__``; the ``__eou__``-separated utterances of one turn (one speaker) are joined like consecutive IRC
  messages. Contexts of a single turn are left out (the paper removed single-turn dialogues).
* **DailyDialog** (:mod:`dialshift.sources.dailydialog`): every turn from the third on is a response.
"""

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from dialshift.errors import SourceError

URL = re.compile(r"(?:https?|ftp)://\S+|www\.[^\s/]+\.\S+", re.IGNORECASE)
URL_TOKEN = "__url__"
LOWE_FILES = {"train": "train.csv", "validation": "valid.csv", "test": "test.csv"}
LOWE_RESPONSE = {"train": "Utterance", "validation": "Ground Truth Utterance", "test": "Ground Truth Utterance"}
MIN_CONTEXT = 2  # a Query and at least one History utterance


@dataclass(frozen=True)
class Pair:
    """One context/response instance: ``context`` oldest first (the last turn is the Query)."""

    id: str
    dialogue_id: str
    context: tuple[str, ...]
    response: str
    truncated: tuple[str, ...] = ()


@dataclass
class Corpus:
    """A corpus as the family uses it: pairs per split, the dialogues (utterance lists) per split, and the counts of
    how the raw text was turned into utterances (stated in the card)."""

    name: str
    source: str
    pairs: dict = field(default_factory=dict)  # split -> [Pair]
    dialogues: dict = field(default_factory=dict)  # split -> [(dialogue id, utterances)]
    counts: dict = field(default_factory=dict)


def context_pairs(dialogue_id: str, utterances, window: int) -> list[Pair]:
    """Every utterance from the third on as a response to the last ``window`` utterances before it."""
    pairs = []
    for k in range(MIN_CONTEXT, len(utterances)):
        start = max(0, k - window)
        pairs.append(Pair(f"{dialogue_id}-r{k:03d}", dialogue_id, tuple(utterances[start:k]), utterances[k],
                          tuple(utterances[:start])))
    return pairs


def irc_utterances(conversation, counts: dict) -> list[str]:
    """The utterances of one IRC conversation (see the module docstring); ``counts`` is updated."""
    from dialshift.sources.ubuntu_irc import ADDRESS

    utterances: list[str] = []
    speakers: list[str] = []
    for message in conversation.messages:
        text = message.text
        if message.addressee is not None:
            match = ADDRESS.match(text)
            text = text[match.end():] if match else text
            counts["addressee_prefixes_removed"] += 1
        text, replaced = URL.subn(URL_TOKEN, text)
        counts["urls_replaced"] += replaced
        text = " ".join(text.split())
        if not text:
            counts["empty_messages_dropped"] += 1
            continue
        if speakers and speakers[-1] == message.speaker:
            utterances[-1] += " " + text
            counts["messages_joined"] += 1
            continue
        utterances.append(text)
        speakers.append(message.speaker)
    return utterances


def ubuntu_irc(data_dir: Path, window: int) -> Corpus:
    from dialshift.sources import load_source

    corpus = Corpus("ubuntu", "ubuntu_irc")
    for split, conversations in load_source("ubuntu_irc", data_dir).items():
        counts = dict.fromkeys(("conversations", "messages", "addressee_prefixes_removed", "urls_replaced",
                                "empty_messages_dropped", "messages_joined", "utterances",
                                "conversations_under_3_utterances", "pairs", "truncated_pairs"), 0)
        pairs, dialogues = [], []
        for conversation in conversations:
            counts["conversations"] += 1
            counts["messages"] += len(conversation.messages)
            utterances = irc_utterances(conversation, counts)
            counts["utterances"] += len(utterances)
            counts["conversations_under_3_utterances"] += len(utterances) < MIN_CONTEXT + 1
            dialogues.append((conversation.id, tuple(utterances)))
            pairs += context_pairs(conversation.id, utterances, window)
        counts["pairs"] = len(pairs)
        counts["truncated_pairs"] = sum(1 for pair in pairs if pair.truncated)
        corpus.pairs[split], corpus.dialogues[split], corpus.counts[split] = pairs, dialogues, counts
    return corpus


def _turns(text: str) -> list[str]:
    turns = []
    for turn in text.split("__eot__"):
        joined = " ".join(part.strip() for part in turn.split("__eou__") if part.strip())
        if joined:
            turns.append(joined)
    return turns


def lowe_csv(train_file, window: int) -> Corpus:
    """Lowe et al.'s Ubuntu Dialogue Corpus CSV files (see the module docstring); one-line errors name the file and
    row of a missing column or an empty conversation."""
    train_file = Path(train_file).expanduser()
    corpus = Corpus("ubuntu", f"lowe_csv:{train_file.name}")
    for split, name in LOWE_FILES.items():
        path = train_file if split == "train" else train_file.with_name(name)
        if not path.is_file():
            raise SourceError(path, f"not found: --ubuntu-csv expects Lowe's {LOWE_FILES['train']} with "
                                    f"{LOWE_FILES['validation']} and {LOWE_FILES['test']} beside it")
        required = ["Context", LOWE_RESPONSE[split]] + (["Label"] if split == "train" else [])
        pairs, dialogues = [], []
        counts = {"rows": 0, "negative_rows_skipped": 0, "single_turn_skipped": 0, "pairs": 0, "truncated_pairs": 0}
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [column for column in required if column not in (reader.fieldnames or [])]
            if missing:
                raise SourceError(path, f"missing column(s) {', '.join(missing)} (header: "
                                        f"{','.join(reader.fieldnames or [])}); Lowe's {name} has "
                                        f"{','.join(required)}", line=1)
            try:
                for number, row in enumerate(reader):
                    line = reader.line_num
                    counts["rows"] += 1
                    if split == "train" and str(row["Label"]).strip() not in ("1", "1.0"):
                        counts["negative_rows_skipped"] += 1
                        continue
                    turns, response = _turns(row["Context"] or ""), " ".join((row[LOWE_RESPONSE[split]] or "")
                                                                              .replace("__eou__", " ").split())
                    if not turns or not response:
                        raise SourceError(path, "empty conversation (no context turn or no response); remove the "
                                                "row", line=line)
                    if len(turns) < MIN_CONTEXT:
                        counts["single_turn_skipped"] += 1
                        continue
                    dialogue_id = f"lowe-{split}-{number:07d}"
                    utterances = (*turns, response)
                    dialogues.append((dialogue_id, utterances))
                    start = max(0, len(turns) - window)
                    pairs.append(Pair(f"{dialogue_id}-r{len(turns):03d}", dialogue_id, tuple(turns[start:]),
                                      response, tuple(turns[:start])))
            except csv.Error as error:
                raise SourceError(path, f"malformed CSV ({error})", line=reader.line_num) from None
        counts["pairs"] = len(pairs)
        counts["truncated_pairs"] = sum(1 for pair in pairs if pair.truncated)
        corpus.pairs[split], corpus.dialogues[split], corpus.counts[split] = pairs, dialogues, counts
    return corpus


def dailydialog(data_dir: Path, window: int) -> Corpus:
    from dialshift.sources import load_source

    corpus = Corpus("dailydialog", "dailydialog")
    for split, dialogues in load_source("dailydialog", data_dir).items():
        pairs = [pair for dialogue in dialogues for pair in context_pairs(dialogue.id, dialogue.turns, window)]
        corpus.pairs[split] = pairs
        corpus.dialogues[split] = [(dialogue.id, dialogue.turns) for dialogue in dialogues]
        corpus.counts[split] = {"dialogues": len(dialogues), "pairs": len(pairs),
                                "truncated_pairs": sum(1 for pair in pairs if pair.truncated)}
    return corpus
