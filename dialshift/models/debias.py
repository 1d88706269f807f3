"""DRiFt debiasing for response selection (Han et al. 2021, §3.1-§3.3; He et al. 2019).

* :class:`TurnEncoder`: the cross-encoder input ``[CLS] u1 [EOU] ... uk [EOU] [SEP] r [EOU] [SEP]`` (eq. 1), the
  context cut from its oldest tokens and the response kept to half the length; ``[EOU]`` is an added special token
  whose embedding starts as a copy of ``[SEP]``'s.
* :class:`BiasFeatures`: the four Jaccard similarities of eq. 2 (morphemes from ``kiwipiepy``, and the backbone's
  subword tokens, which the paper calls WordPiece: whole context and last utterance vs the response).
* :class:`BiasedModel`: one linear layer over those features (softmax over 2 classes).
* :func:`drift_loss`: ``-log softmax(b + d)[y]`` with ``b`` detached, so only the debiased model learns (eq. 3);
  :func:`drift_loss_decomposed` is eq. 3's right-hand side (Appendix A), equal to it.
* :func:`ums_examples`: the UMS auxiliary tasks (Whang et al. 2021, §3.3): utterance insertion, deletion and search,
  each a choice among special-token positions scored by a linear layer on their hidden states.
"""

import numpy as np

EOU = "[EOU]"
UMS_TOKENS = {"insertion": "[INS]", "deletion": "[DEL]", "search": "[SRCH]"}


# ----------------------------------------------------------------------------------------------- features


def jaccard(a, b) -> float:
    """|A ∩ B| / |A ∪ B| of two token collections as sets (0 when both are empty)."""
    a, b = set(a), set(b)
    union = len(a | b)
    return len(a & b) / union if union else 0.0


class BiasFeatures:
    """The features φ of eq. 2: ``[JS_morph(c, r), JS_morph(u_k, r), JS_wp(c, r), JS_wp(u_k, r)]``.

    Morphemes are kiwipiepy's surface forms with their tags (``먹/VV``), so a homograph of another part of speech
    does not count as overlap; subwords are the backbone tokenizer's pieces. Each distinct text is analysed once.
    """

    def __init__(self, tokenizer, kiwi=None):
        if kiwi is None:
            try:
                from kiwipiepy import Kiwi
            except ImportError:
                from dialshift.errors import DialshiftError

                raise DialshiftError("the debiasing features need kiwipiepy: pip install 'dialshift[train]'") from None
            kiwi = Kiwi()
        self.kiwi, self.tokenizer = kiwi, tokenizer
        self._morphs: dict[str, frozenset] = {}
        self._pieces: dict[str, frozenset] = {}

    def _prepare(self, texts) -> None:
        new = [text for text in dict.fromkeys(texts) if text not in self._morphs]
        if not new:
            return
        for text, tokens in zip(new, self.kiwi.tokenize(new), strict=True):
            self._morphs[text] = frozenset(f"{token.form}/{token.tag}" for token in tokens)
        for text, ids in zip(new, self.tokenizer(new, add_special_tokens=False)["input_ids"], strict=True):
            self._pieces[text] = frozenset(ids)

    def __call__(self, pairs) -> np.ndarray:
        """``len(pairs) x 4`` float32 features of ``[(context turns, response), ...]``."""
        pairs = [(tuple(context), response) for context, response in pairs]
        self._prepare(text for context, response in pairs for text in (*context, response))
        out = np.zeros((len(pairs), 4), dtype=np.float32)
        for row, (context, response) in enumerate(pairs):
            last = context[-1] if context else ""
            for column, table in ((0, self._morphs), (2, self._pieces)):
                whole = frozenset().union(*(table[turn] for turn in context))
                out[row, column] = jaccard(whole, table[response])
                out[row, column + 1] = jaccard(table[last], table[response]) if context else 0.0
        return out


# ----------------------------------------------------------------------------------------------- models and losses


def biased_model(seed: int):
    """The biased model: one linear layer, 4 features -> 2 classes (softmax applied in the loss)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    layer = torch.nn.Linear(4, 2)
    with torch.no_grad():
        bound = 0.5
        layer.weight.uniform_(-bound, bound, generator=generator)
        layer.bias.zero_()
    return layer


def _biased_epochs(features: np.ndarray, labels: np.ndarray, seed: int, learning_rate: float, epochs: int,
                   batch_size: int):
    """Fit the biased model epoch by epoch (AdamW, shuffled mini-batches seeded by ``seed``); yield it after each
    epoch, so that stopping after epoch k gives the model of a run of k epochs."""
    import torch

    model = biased_model(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    x, y = torch.as_tensor(features), torch.as_tensor(labels, dtype=torch.long)
    rng = np.random.default_rng([seed, 4])
    for _ in range(epochs):
        order = rng.permutation(len(y))
        for start in range(0, len(order), batch_size):
            rows = torch.as_tensor(order[start:start + batch_size])
            loss = torch.nn.functional.cross_entropy(model(x[rows]), y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        yield model


def train_biased_model(features: np.ndarray, labels: np.ndarray, seed: int, learning_rate: float = 5e-4,
                       epochs: int = 3, batch_size: int = 128):
    """Fit the biased model on ``features`` (AdamW, lr 5e-4, 3 epochs, batch 128: Han et al. App. B); return it in
    eval mode with its parameters frozen, and the training accuracy."""
    import torch

    *_, model = _biased_epochs(features, labels, seed, learning_rate, epochs, batch_size)
    model.eval().requires_grad_(False)
    with torch.no_grad():
        accuracy = float((model(torch.as_tensor(features)).argmax(1) == torch.as_tensor(labels)).float().mean())
    return model, accuracy


def biased_validation_curve(features, labels, validation_features, validation_labels, seed: int,
                            learning_rate: float = 5e-4, max_epochs: int = 100, patience: int = 5,
                            batch_size: int = 128) -> dict:
    """The biased model's validation loss (mean cross-entropy over the validation pairs) after each epoch, until
    ``patience`` epochs bring no new lowest loss or ``max_epochs``; ``epochs`` is the epoch of the lowest loss: the
    ``--bias-epochs`` of a biased model trained to convergence (a run of that many epochs is the same model)."""
    import torch

    x, y = torch.as_tensor(validation_features), torch.as_tensor(validation_labels, dtype=torch.long)
    losses, best = [], 0
    for epoch, model in enumerate(_biased_epochs(features, labels, seed, learning_rate, max_epochs, batch_size), 1):
        with torch.no_grad():
            losses.append(float(torch.nn.functional.cross_entropy(model(x), y)))
        if losses[-1] < losses[best]:
            best = epoch - 1
        if epoch - 1 - best >= patience:
            break
    return {"epochs": best + 1, "validation_loss": losses, "patience": patience, "max_epochs": max_epochs,
            "seed": seed, "learning_rate": learning_rate}


def binary_pairs(split: dict):
    """Every (context, candidate, label) pair of a split's rows, row by row (label 1 for the gold candidate)."""
    return [(context, candidate, int(index == label))
            for context, candidates, label in zip(split["context"], split["candidates"], split["label"], strict=True)
            for index, candidate in enumerate(candidates)]


def drift_loss(biased_logits, debiased_logits, labels):
    """DRiFt (eq. 3): cross-entropy of ``softmax(b + d)``; ``b`` is detached, so the gradient reaches only ``d``."""
    import torch

    return torch.nn.functional.cross_entropy(biased_logits.detach() + debiased_logits, labels)


def drift_loss_decomposed(biased_logits, debiased_logits, labels):
    """Eq. 3's right-hand side: ``-log p_b(y) - log p_d(y) + log sum_l p_b(l) p_d(l)`` (mean over the batch)."""
    import torch

    log_b = torch.log_softmax(biased_logits, dim=-1)
    log_d = torch.log_softmax(debiased_logits, dim=-1)
    rows = torch.arange(len(labels))
    return (-log_b[rows, labels] - log_d[rows, labels] + torch.logsumexp(log_b + log_d, dim=-1)).mean()


# ----------------------------------------------------------------------------------------------- input encoding


class TurnEncoder:
    """Token ids of eq. 1 (see the module docstring); every distinct text is tokenized once."""

    def __init__(self, tokenizer, max_length: int):
        if max_length < 16:
            raise ValueError(f"max_length must be at least 16, got {max_length}")
        self.tokenizer, self.max_length = tokenizer, max_length
        self.cls_id, self.sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
        self.eou_id = tokenizer.convert_tokens_to_ids(EOU)
        self.pad_id = tokenizer.pad_token_id or 0
        self._ids: dict[str, list[int]] = {}

    def ids(self, texts) -> list[list[int]]:
        new = [text for text in dict.fromkeys(texts) if text not in self._ids]
        if new:
            self._ids.update(zip(new, self.tokenizer(new, add_special_tokens=False)["input_ids"], strict=True))
        return [self._ids[text] for text in texts]

    def encode(self, context, response, markers=None) -> tuple[list[int], int]:
        """``(input_ids, first segment length)``. ``markers`` (UMS) is a list of token ids, one per gap before each
        context turn and after the last (``len(context) + 1``); ``None`` entries leave a gap unmarked."""
        response_ids = self.ids([response])[0][: self.max_length // 2]
        turns = self.ids(list(context))
        budget = self.max_length - len(response_ids) - 4
        pieces = []
        for index, turn in enumerate(turns):
            if markers is not None and markers[index] is not None:
                pieces.append(markers[index])
            pieces.extend([*turn, self.eou_id])
        if markers is not None and markers[len(turns)] is not None:
            pieces.append(markers[len(turns)])
        if len(pieces) > budget:
            pieces = pieces[len(pieces) - budget:]  # the oldest tokens go
        first = [self.cls_id, *pieces, self.sep_id]
        return first + response_ids + [self.eou_id, self.sep_id], len(first)

    def collate(self, encoded):
        from dialshift.models.batching import pad_batch

        return pad_batch([ids for ids, _ in encoded], self.pad_id, [first for _, first in encoded])


def add_special_tokens(model, tokenizer, with_ums: bool) -> None:
    """Add ``[EOU]`` (and the UMS markers) to the tokenizer; grow the embedding matrix only if needed; start each new
    token's embedding as a copy of ``[SEP]``'s."""
    import torch

    tokens = [EOU, *(UMS_TOKENS.values() if with_ums else ())]
    tokenizer.add_special_tokens({"additional_special_tokens": tokens})
    embeddings = model.get_input_embeddings()
    if len(tokenizer) > embeddings.weight.shape[0]:
        model.resize_token_embeddings(len(tokenizer))
        embeddings = model.get_input_embeddings()
    with torch.no_grad():
        for token in tokens:
            embeddings.weight[tokenizer.convert_tokens_to_ids(token)] = embeddings.weight[tokenizer.sep_token_id]


# ----------------------------------------------------------------------------------------------- UMS


def ums_examples(context, response, task: str, rng, other_utterance: str | None = None):
    """One UMS example from a positive (context, response): ``(turns, response, marked gaps, gold marker index)`` or
    None when the dialogue is too short. The response stays the second segment; the turns are manipulated:

    * insertion: one turn is taken out, ``[INS]`` marks every gap; the gold is the gap it came from;
    * deletion: ``other_utterance`` (from another dialogue) is inserted, ``[DEL]`` precedes every turn; the gold is
      the inserted one;
    * search: the turns before the last are shuffled, ``[SRCH]`` precedes each; the gold is the one that preceded
      the last turn.
    """
    turns = list(context)
    if task == "insertion":
        if len(turns) < 2:
            return None
        taken = int(rng.integers(len(turns)))
        rest = turns[:taken] + turns[taken + 1:]
        return rest, turns[taken], list(range(len(rest) + 1)), taken
    if task == "deletion":
        if not turns or other_utterance is None:
            return None
        at = int(rng.integers(len(turns) + 1))
        mixed = turns[:at] + [other_utterance] + turns[at:]
        return mixed, response, list(range(len(mixed))), at
    if task == "search":
        if len(turns) < 3:
            return None
        earlier, last = turns[:-1], turns[-1]
        order = rng.permutation(len(earlier))
        shuffled = [earlier[i] for i in order] + [last]
        return shuffled, response, list(range(len(earlier))), int(np.flatnonzero(order == len(earlier) - 1)[0])
    raise ValueError(f"unknown UMS task {task!r}")
