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
    encoded = pairs if isinstance(pairs, EncodedPairs) else encode(ranker, pairs)
    return run_batches(ranker.model, encoded, batch_size, lambda model, batch: model(**batch).logits[:, 0],
                       dropout_seed=dropout_seed, progress=progress, desc=desc)


def run_batches(model, encoded, batch_size: int, forward, dropout_seed: int | None = None, progress: bool = True,
                desc: str = "scoring") -> np.ndarray:
    """``forward(model, batch)`` (one score per row, a tensor) over the length-sorted batches of ``encoded`` (an
    object with ``len()`` and ``batches(batch_size, pin)`` yielding ``(rows, batch)``, as :class:`EncodedPairs`),
    under ``torch.inference_mode()``; the scores in ``encoded``'s order as ``float32`` (``N x D`` when ``forward``
    gives ``D`` values per row, e.g. embeddings). With ``dropout_seed`` one MC-dropout pass under that seed. Every
    model adapter (:mod:`dialshift.models.adapters`) scores through this loop."""
    import torch

    from dialshift.heartbeat import progress_bar

    scores = None
    device = next(model.parameters()).device
    pin = device.type == "cuda"
    set_mc_dropout(model, dropout_seed is not None)
    if dropout_seed is not None:
        torch.manual_seed(dropout_seed)
    pending = []  # CUDA: scores stay on the device until the end (no synchronisation per batch)
    try:
        with torch.inference_mode(), progress_bar(len(encoded), desc, "pair", progress) as bar:
            for rows, batch in encoded.batches(batch_size, pin):  # length-sorted: less padding
                batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
                out = forward(model, batch).float()
                if scores is None:
                    scores = np.empty((len(encoded), *out.shape[1:]), dtype=np.float32)
                if pin:
                    pending.append((rows, out))
                else:
                    scores[rows] = out.cpu().numpy()
                bar.update(len(rows))
            for rows, out in pending:
                scores[rows] = out.cpu().numpy()
    finally:
        set_mc_dropout(model, False)
    return np.empty(0, dtype=np.float32) if scores is None else scores
