"""Fast scoring of (context, candidate) pairs with a ranker.

Pairs are tokenized once per distinct string, sorted by length (less padding) and scored in batches under
``torch.inference_mode()``. MC dropout switches only the ``Dropout`` modules to training mode and seeds torch per pass,
so the ``N`` passes are deterministic given the seed.
"""

import numpy as np

from dialshift.models.ranker import Ranker


def instance_pairs(split: dict) -> list[tuple]:
    """The ``N * K`` (context, candidate) pairs of a split's columns, instance by instance."""
    return [
        (tuple(context), candidate)
        for context, candidates in zip(split["context"], split["candidates"], strict=True)
        for candidate in candidates
    ]


def set_mc_dropout(model, active: bool) -> None:
    """Eval mode everywhere, except ``torch.nn.Dropout`` modules when ``active`` (MC dropout)."""
    import torch

    model.eval()
    if active:
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.train()


def score_pairs(ranker: Ranker, pairs, batch_size: int = 64, dropout_seed: int | None = None, progress: bool = True,
                desc: str = "scoring") -> np.ndarray:
    """One logit per ``(context_turns, candidate)`` pair; with ``dropout_seed`` one MC-dropout pass under that seed."""
    import torch
    from tqdm.auto import tqdm

    encoded = ranker.encoder.encode_pairs(pairs)
    logits = np.empty(len(encoded), dtype=np.float32)
    model = ranker.model
    device = next(model.parameters()).device
    set_mc_dropout(model, dropout_seed is not None)
    if dropout_seed is not None:
        torch.manual_seed(dropout_seed)
    try:
        with torch.inference_mode(), tqdm(total=len(encoded), desc=desc, unit="pair", disable=not progress) as bar:
            for rows, batch in ranker.encoder.sorted_batches(encoded, batch_size):  # length-sorted: less padding
                batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
                logits[rows] = model(**batch).logits[:, 0].float().cpu().numpy()
                bar.update(len(rows))
    finally:
        set_mc_dropout(model, False)
    return logits
