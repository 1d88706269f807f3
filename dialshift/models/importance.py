"""Attention-based word importance of dialogue contexts (Lee et al. 2022, App. A.5), for ``uw_imp_1`` ... ``uw_imp_5``.

Rule (the paper says only "sorted in order of each attention weight"; this is the stated choice):

* input: the context alone, encoded as the ranker encodes a context — ``[CLS] u_1 [SEP] u_2 [SEP] ... u_n [SEP]``,
  truncated from the oldest token when longer than ``max_length`` or than the ranker's own training ``max_length``
  (the ranker never sees older tokens; the candidate is not part of the interface);
* attention: the fine-tuned ranker's **last layer** (``layer=-1``), the attention row of the ``[CLS]`` query (the
  representation the ranking head reads), **averaged over all heads**; computed with ``attn_implementation="eager"``
  (sdpa returns no attention weights);
* words: each given word is tokenized on its own (``is_split_into_words=True``); a word's importance is the **sum** of
  the attention its WordPiece sub-tokens receive; a word that yields no sub-token or that was truncated away gets 0.0.

:func:`cls_attention` (the ``[CLS]`` row of one layer, mean over heads) is the shared core; the per-utterance
attention of the ranker on (context, response) pairs (:mod:`dialshift.ranking.attention`) reads it too.
"""

from dialshift.models.batching import pad_batch, sorted_batches


def word_importance(model_dir, contexts, batch_size: int = 32, max_length: int = 256, progress: bool = True,
                    layer: int = -1) -> list[list[list[float]]]:
    """Importance of every word of every context turn; same nested shape as ``contexts``.

    Args:
        model_dir: a ranker folder written by ``trainers/ranker.py``.
        contexts: instances, each a list of turns, each a list of word strings.
        batch_size: contexts per forward pass.
        max_length: tokens per encoded context, at most the ranker's ``max_length`` (longer contexts lose their
            oldest tokens).
        progress: show a progress bar.
        layer: which layer's attention to read (default: the last).
    """
    from dialshift.models.ranker import load_ranker

    if max_length < 4:
        raise ValueError(f"max_length must be at least 4, got {max_length}")
    ranker = load_ranker(model_dir, attn_implementation="eager")
    tokenizer, model = ranker.tokenizer, ranker.model
    max_length = min(max_length, int(ranker.meta["max_length"]))

    turns = [turn for context in contexts for turn in context if turn]
    encoded = tokenizer([list(map(str, t)) for t in turns], is_split_into_words=True,
                        add_special_tokens=False) if turns else None
    per_turn = iter(range(len(turns)))

    sequences = []  # per context: token ids and, per token, (turn, word) or None for special tokens
    for context in contexts:
        ids, owners = [], []
        for t, turn in enumerate(context):
            if ids:
                ids.append(tokenizer.sep_token_id)
                owners.append(None)
            if turn:
                k = next(per_turn)
                ids.extend(encoded["input_ids"][k])
                owners.extend((t, w) for w in encoded.word_ids(k))
        keep = max_length - 2
        ids, owners = ids[-keep:] if len(ids) > keep else ids, owners[-keep:] if len(owners) > keep else owners
        sequences.append(([tokenizer.cls_token_id, *ids, tokenizer.sep_token_id], [None, *owners, None]))

    result = [[[0.0] * len(turn) for turn in context] for context in contexts]
    rows = cls_attention(model, [ids for ids, _ in sequences], tokenizer.pad_token_id or 0, batch_size=batch_size,
                         layer=layer, progress=progress, desc="word importance", unit="context")
    for r, weights in rows:
        for position, owner in enumerate(sequences[r][1]):
            if owner is not None:
                t, w = owner
                result[r][t][w] += float(weights[position])
    return result


def cls_attention(model, sequences, pad_id: int, *, first_segment_lengths=None, batch_size: int = 32,
                  layer: int = -1, progress: bool = True, desc: str = "attention", unit: str = "sequence"):
    """Yield ``(index, weights)`` for every token-id list of ``sequences``: the attention row of the ``[CLS]`` query
    (position 0) in ``layer``, averaged over all heads, over the sequence's own tokens (a float numpy array of its
    length; padding cut off). Sequences run in length-sorted batches of ``batch_size``; the model must have been
    loaded with ``attn_implementation="eager"``. With ``first_segment_lengths`` the batches carry
    ``token_type_ids`` (0 on each first segment, 1 after it), as the ranker's (context, response) pairs do.

    Shared by :func:`word_importance` and :func:`dialshift.ranking.attention.utterance_attention`."""
    import torch

    from dialshift.heartbeat import progress_bar

    device = next(model.parameters()).device
    with torch.inference_mode(), progress_bar(len(sequences), desc, unit, progress) as bar:
        for rows in sorted_batches([len(ids) for ids in sequences], batch_size):
            firsts = None if first_segment_lengths is None else [first_segment_lengths[r] for r in rows]
            batch = pad_batch([sequences[r] for r in rows], pad_id, firsts)
            out = model(**{key: value.to(device) for key, value in batch.items()}, output_attentions=True)
            cls_rows = out.attentions[layer][:, :, 0, :].mean(dim=1).float().cpu().numpy()  # batch x tokens
            for i, r in enumerate(rows):
                yield r, cls_rows[i, : len(sequences[r])]
            bar.update(len(rows))
