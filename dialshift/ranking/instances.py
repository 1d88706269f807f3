"""Response-ranking instances (Lee et al. 2022, §3.3, §3.5): every turn after the first is a response to the turns
before it; its candidates are the gold response and 9 negatives drawn, seeded per instance, from the utterances of
*other* dialogues of the same split (never a text equal to the gold or to another candidate); the gold position is
drawn from the same generator and stored as ``label``. Draws are raw 64-bit outputs of the
instance's PCG64 taken modulo the pool size (the bias, below 1e-14, is immaterial).
"""

from collections import Counter
from collections.abc import Sequence

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.shifts.seeding import instance_rng

NUM_CANDIDATES = 10


def instance_id(dialogue_id: str, turn: int) -> str:
    return f"{dialogue_id}-t{turn:02d}"


def draw_candidates(gold: str, dialogue: int, pool_texts: Sequence[str], pool_dialogue: Sequence[int],
                    rng: np.random.Generator, num_candidates: int = NUM_CANDIDATES) -> tuple[list[str], int]:
    """``(candidates, label)``: ``num_candidates - 1`` negatives from other dialogues plus the gold at ``label``."""
    negatives, seen = [], {gold}
    while len(negatives) < num_candidates - 1:  # raw 64-bit draws in batches (fast); rejected draws are rare
        for raw in rng.bit_generator.random_raw(num_candidates + 2).tolist():
            pick = raw % len(pool_texts)
            text = pool_texts[pick]
            if pool_dialogue[pick] != dialogue and text not in seen and len(negatives) < num_candidates - 1:
                negatives.append(text)
                seen.add(text)
    label = int(rng.bit_generator.random_raw()) % num_candidates
    return negatives[:label] + [gold] + negatives[label:], label


def ranking_instances(dialogues, seed: int, key: str = "source", num_candidates: int = NUM_CANDIDATES,
                      start: int = 0, stop: int | None = None) -> list[dict]:
    """One instance per (dialogue, turn >= 1) of one split, in file order; ``start:stop`` limits the dialogues
    (the negatives pool is always the whole split, so a part's rows equal the same rows of the whole)."""
    pool_texts = [turn for dialogue in dialogues for turn in dialogue.turns]
    pool_dialogue = [position for position, dialogue in enumerate(dialogues) for _ in dialogue.turns]
    owner: dict[str, int] = {}  # text -> its only dialogue, or -1 when several dialogues have it
    for text, position in zip(pool_texts, pool_dialogue, strict=True):
        owner[text] = position if owner.get(text, position) == position else -1
    exclusive = Counter(position for position in owner.values() if position >= 0)
    rows = []
    for position in range(start, len(dialogues) if stop is None else stop):
        dialogue = dialogues[position]
        for turn in range(1, len(dialogue.turns)):
            available = len(owner) - exclusive[position] - (owner[dialogue.turns[turn]] == -1)
            if available < num_candidates - 1:
                raise DialshiftError(f"{dialogue.id}: only {available} distinct utterances of other dialogues are "
                                     f"left for {num_candidates - 1} negatives; the split is too small")
            uid = instance_id(dialogue.id, turn)
            candidates, label = draw_candidates(dialogue.turns[turn], position, pool_texts, pool_dialogue,
                                                instance_rng(seed, key, uid), num_candidates)
            rows.append({"id": uid, "dialogue_id": dialogue.id, "turn": turn, "context": list(dialogue.turns[:turn]),
                         "candidates": candidates, "label": label})
    return rows
