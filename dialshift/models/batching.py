"""Length-sorted batching and padding, shared by training, scoring and word importance.

Sorting sequences by length before cutting batches means each batch is padded only to its own longest sequence, not
to the longest of the whole set: for dialogue pairs this roughly halves the tokens a transformer processes.
"""

from collections.abc import Sequence

import numpy as np


def sorted_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Index arrays of consecutive ``batch_size`` items in ascending ``lengths`` order (stable: ties keep input order).

    Together the arrays are a permutation of ``range(len(lengths))``; write results back with ``out[rows] = ...``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = np.argsort(np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int, first_segment_lengths: Sequence[int] | None = None):
    """Right-pad token id lists into ``{"input_ids", "attention_mask"}`` tensors (``long``, batch x longest).

    With ``first_segment_lengths`` a ``token_type_ids`` tensor is added too: 0 on each row's first segment, 1 on the
    rest of its tokens (BERT's sentence pairs), 0 on padding.
    """
    import torch

    width = max(len(ids) for ids in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, ids in enumerate(sequences):
        input_ids[row, : len(ids)] = torch.as_tensor(ids, dtype=torch.long)
        attention_mask[row, : len(ids)] = 1
    batch = {"input_ids": input_ids, "attention_mask": attention_mask}
    if first_segment_lengths is not None:
        token_type_ids = torch.zeros_like(input_ids)
        for row, (ids, first) in enumerate(zip(sequences, first_segment_lengths, strict=True)):
            token_type_ids[row, first : len(ids)] = 1
        batch["token_type_ids"] = token_type_ids
    return batch
