"""Retrieved response candidates: a bi-encoder's top ``k`` over a config's utterance pool, plus the gold.

This is the candidate side of Han et al.'s (2021, §4.1) real-environment test: a bi-encoder embeds every utterance
of the corpus and each test context, and the ``k`` utterances most similar to the context become its candidates, so
the candidates are the near misses a deployed system would see rather than random utterances. Here:

* the **pool** (:func:`utterance_pool`) is every distinct utterance of the config's dialogues in the chosen splits,
  each named ``<dialogue_id>#<turn>`` (the smallest such name of its text), so a candidate list is a list of names
  that the built dataset resolves back to text;
* the **query** of a test instance is e5's ``"query: "`` plus its last ``query_turns`` context turns joined by a
  space; every pool utterance is embedded as a ``"passage: "`` (:func:`dialshift.models.e5.embed`);
* the **candidates** (:func:`retrieve`) are the ``k`` pool utterances of highest cosine with the query whose text
  is not the gold response (ties: the smaller pool index first), with the gold inserted at a position drawn from the
  instance's own generator; each instance records its gold's rank over the whole pool and, per candidate, whether
  its text is one of the instance's context turns (the Repetition type of adversarial response, Han et al. §2).

Nobody judges the retrieved utterances: the gold is the only positive, so a ranker's Precision@1 on these lists is a
lower bound of what human raters (the paper's three annotators) would grant, since some retrieved utterances are
sensible replies too. :func:`write_candidates` stores names only (gzip JSON lines, deterministic bytes);
:func:`load_candidates` resolves them against a dataset folder built with the same options, refusing one whose pool
differs.
"""

import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.ranking.data import read_columns
from dialshift.shifts.seeding import instance_rng

CANDIDATES_FILE = "candidates.jsonl.gz"
#: Stream key of the gold's position among the candidates (part of the committed files: never rename).
GOLD_POSITION_KEY = "retrieval_gold_position"
ROW_COLUMNS = ("id", "dialogue_id", "turn", "context", "candidates", "label")


@dataclass(frozen=True)
class Pool:
    """Distinct utterances (``texts``) and their names (``ids``, ``<dialogue_id>#<turn>``), sorted by name."""

    ids: list[str]
    texts: list[str]

    def digest(self) -> str:
        """sha256 of the names and texts: two pools with the same digest resolve every name to the same text."""
        hasher = hashlib.sha256()
        for name, text in zip(self.ids, self.texts, strict=True):
            hasher.update(f"{name}\t{text}\n".encode())
        return "sha256:" + hasher.hexdigest()


def utterance_pool(dataset, config: str, splits=("train", "validation", "test")) -> Pool:
    """Every distinct utterance of ``config``'s dialogues in ``splits``: an instance's context turns and its gold
    response (turn ``turn``; the context holds the turns before it)."""
    names: dict[str, str] = {}
    for split in splits:
        table = read_columns(dataset, config, split, ROW_COLUMNS, hint=" (a response-ranking config with dialogue_id "
                                                                       "and turn columns)")
        columns = {name: table.column(name).to_pylist() for name in ROW_COLUMNS}
        for dialogue, turn, context, candidates, label in zip(columns["dialogue_id"], columns["turn"],
                                                               columns["context"], columns["candidates"],
                                                               columns["label"], strict=True):
            turns = [*context, candidates[label]]
            first = turn - len(context)
            for offset, text in enumerate(turns):
                name = f"{dialogue}#{first + offset}"
                if text not in names or name < names[text]:
                    names[text] = name
    ordered = sorted((name, text) for text, name in names.items())
    return Pool([name for name, _ in ordered], [text for _, text in ordered])


def query_text(context, query_turns: int | None) -> str:
    """The last ``query_turns`` context turns (all when ``None``) joined by a space."""
    return " ".join(context[-query_turns:] if query_turns else context)


def top_k(similarities: np.ndarray, k: int, excluded: set[int]) -> tuple[list[int], list[float]]:
    """The ``k`` pool indices of highest similarity (ties: smaller index first), skipping ``excluded``."""
    order = np.argsort(-similarities, kind="stable")
    chosen = [int(i) for i in order[:k + len(excluded)] if int(i) not in excluded][:k]
    return chosen, [float(similarities[i]) for i in chosen]


def retrieve(dataset, bi_encoder, config: str = "kor_chitchat", split: str = "test", k: int = 10,
             max_instances: int | None = None, sample_seed: int = 0, seed: int = 0, query_turns: int | None = 3,
             pool_splits=("train", "validation", "test"), batch_size: int = 64, progress: bool = True):
    """``(rows, summary)``: per test instance (``max_instances`` of them, the seeded subsample of
    :func:`dialshift.ranking.data.read_columns`) its candidates' names, the gold's position ``label``, the cosine of
    each candidate with the query and the gold's rank over the whole pool; the summary describes pool and retrieval.
    ``bi_encoder`` is a converted e5 folder (``dialshift convert-e5``)."""
    from dialshift.models.e5 import embed, load_converted

    if k < 1:
        raise DialshiftError(f"k = {k}: retrieve at least one candidate")
    try:
        model, tokenizer = load_converted(bi_encoder)
    except OSError as error:
        raise DialshiftError(f"{bi_encoder}: not a converted e5 folder ({str(error).splitlines()[0]}); write one "
                             f"with `dialshift convert-e5 {bi_encoder}`") from error
    pool = utterance_pool(dataset, config, pool_splits)
    table = read_columns(dataset, config, split, ("id", "context", "candidates", "label"), max_instances, sample_seed)
    test = {name: table.column(name).to_pylist() for name in ("id", "context", "candidates", "label")}
    total = read_columns(dataset, config, split, ("id",)).num_rows
    if not test["id"]:
        raise DialshiftError(f"{dataset}: the {config} {split} split has no instances to retrieve candidates for")
    index = {text: position for position, text in enumerate(pool.texts)}
    golds = [candidates[label] for candidates, label in zip(test["candidates"], test["label"], strict=True)]
    missing = [i for i, gold in zip(test["id"], golds, strict=True) if gold not in index]
    if missing:
        raise DialshiftError(f"{dataset}: {config} {split} instance {missing[0]}: its gold response is not in the pool "
                             f"of the splits {', '.join(pool_splits)}; include {split} in the pool splits")
    passages = embed(model, tokenizer, pool.texts, batch_size, "passage: ", 128, progress, "embedding the pool")
    queries = embed(model, tokenizer, [query_text(c, query_turns) for c in test["context"]], batch_size, "query: ",
                    256, progress, "embedding the contexts")
    rows = []
    for position, instance in enumerate(test["id"]):
        similarities = passages @ queries[position]
        gold = index[golds[position]]
        retrieved, cosines = top_k(similarities, k, {gold})
        slot = int(instance_rng(seed, GOLD_POSITION_KEY, instance).integers(k + 1))
        retrieved.insert(slot, gold)
        cosines.insert(slot, float(similarities[gold]))
        context = set(test["context"][position])
        rows.append({"id": instance, "candidates": [pool.ids[i] for i in retrieved], "label": slot,
                     "cosine": [round(value, 5) for value in cosines],
                     "repeats_context": [pool.texts[i] in context for i in retrieved],
                     "gold_pool_rank": int((similarities > similarities[gold]).sum()) + 1})
    ranks = np.array([row["gold_pool_rank"] for row in rows])
    repeats = np.mean([np.mean(row["repeats_context"]) for row in rows])
    summary = {"config": config, "split": split, "pool_splits": list(pool_splits), "pool_size": len(pool.ids),
               "pool_digest": pool.digest(), "instances": len(rows), "split_instances": total, "k": k,
               "candidates_per_instance": k + 1, "query_turns": query_turns, "sample_seed": sample_seed,
               "seed": seed, "gold_in_top_k": float(np.mean(ranks <= k)), "gold_median_rank": float(np.median(ranks)),
               "candidates_repeating_context": float(repeats)}
    return rows, summary


def write_candidates(folder, rows: list[dict]) -> Path:
    """``folder/candidates.jsonl.gz``: one JSON line per instance, gzip without a timestamp (same rows, same bytes),
    written to a temporary file and renamed."""
    from dialshift.io import atomic_write

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    return atomic_write(folder / CANDIDATES_FILE, gzip.compress(text.encode(), compresslevel=9, mtime=0))


def read_candidates(folder) -> list[dict]:
    """The rows of ``folder/candidates.jsonl.gz`` (one-line errors naming the file and line)."""
    path = Path(folder) / CANDIDATES_FILE
    try:
        lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise DialshiftError(f"{path}: unreadable candidate file ({error}); write it again with `dialshift "
                             "retrieve`") from error
    rows = []
    for number, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
            if not (isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("candidates"), list)
                    and isinstance(row.get("label"), int) and 0 <= row["label"] < len(row["candidates"])):
                raise ValueError("expected {id, candidates, label} with label an index into candidates")
        except ValueError as error:
            raise DialshiftError(f"{path}: line {number}: {error}") from error
        rows.append(row)
    return rows


def load_candidates(dataset, folder, summary: dict) -> dict[str, list]:
    """The candidate lists of ``folder`` as a ranking split (``id, context, candidates, label``) of ``dataset``:
    names resolved to text through the pool, contexts from the test split. ``summary`` is the retrieval's (its
    config, splits and pool digest); a dataset whose pool differs is refused."""
    pool = utterance_pool(dataset, summary["config"], summary["pool_splits"])
    if pool.digest() != summary["pool_digest"]:
        raise DialshiftError(f"{dataset}: its {summary['config']} utterance pool ({pool.digest()[:19]}) is not the one "
                             f"the candidates in {folder} were retrieved from ({summary['pool_digest'][:19]}); build "
                             "the dataset with the options of that retrieval")
    text = dict(zip(pool.ids, pool.texts, strict=True))
    rows = read_candidates(folder)
    table = read_columns(dataset, summary["config"], summary["split"], ("id", "context"))
    contexts = dict(zip(table.column("id").to_pylist(), table.column("context").to_pylist(), strict=True))
    split = {"id": [], "context": [], "candidates": [], "label": []}
    for row in rows:
        if row["id"] not in contexts:
            raise DialshiftError(f"{folder}/{CANDIDATES_FILE}: instance {row['id']} is not in the dataset's "
                                 f"{summary['config']} {summary['split']} split")
        unknown = [name for name in row["candidates"] if name not in text]
        if unknown:
            raise DialshiftError(f"{folder}/{CANDIDATES_FILE}: instance {row['id']}: candidate {unknown[0]} is not in "
                                 "the pool")
        split["id"].append(row["id"])
        split["context"].append(contexts[row["id"]])
        split["candidates"].append([text[name] for name in row["candidates"]])
        split["label"].append(row["label"])
    return split
