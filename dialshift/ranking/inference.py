"""Running a ranker over (context, candidate) pairs: their logits, fast (metrics are :mod:`dialshift.scoring`'s job).

Pairs are tokenized once per distinct string (:func:`dialshift.models.ranker.shared_encoder`), encoded once into an
:class:`~dialshift.models.ranker.EncodedPairs` that every pass reuses (:func:`encode`), sorted by length (less padding)
and scored in batches under ``torch.inference_mode()``; on CUDA the batches come from pinned memory with non-blocking
copies. MC dropout switches only the ``Dropout`` modules to training mode and seeds torch per pass, so the ``N``
passes are deterministic given the seed.
"""

import numpy as np

from dialshift.models.ranker import EncodedPairs, Ranker


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


def encode(ranker: Ranker, pairs) -> EncodedPairs:
    """The pairs encoded once with the ranker's shared encoder: pass the result to :func:`score_pairs` for every
    pass and every ranker with the same tokenizer and max length."""
    return ranker.encoder.encode_flat(pairs)


def score_pairs(ranker: Ranker, pairs, batch_size: int = 64, dropout_seed: int | None = None, progress: bool = True,
                desc: str = "scoring") -> np.ndarray:
    """One logit per ``(context_turns, candidate)`` pair (or per pair of an :func:`encode` result); with
    ``dropout_seed`` one MC-dropout pass under that seed."""
    import torch

    from dialshift.heartbeat import progress_bar

    encoded = pairs if isinstance(pairs, EncodedPairs) else encode(ranker, pairs)
    logits = np.empty(len(encoded), dtype=np.float32)
    model = ranker.model
    device = next(model.parameters()).device
    pin = device.type == "cuda"
    set_mc_dropout(model, dropout_seed is not None)
    if dropout_seed is not None:
        torch.manual_seed(dropout_seed)
    pending = []  # CUDA: logits stay on the device until the end (no synchronisation per batch)
    try:
        with torch.inference_mode(), progress_bar(len(encoded), desc, "pair", progress) as bar:
            for rows, batch in encoded.batches(batch_size, pin):  # length-sorted: less padding
                batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
                out = model(**batch).logits[:, 0].float()
                if pin:
                    pending.append((rows, out))
                else:
                    logits[rows] = out.cpu().numpy()
                bar.update(len(rows))
            for rows, out in pending:
                logits[rows] = out.cpu().numpy()
    finally:
        set_mc_dropout(model, False)
    return logits
