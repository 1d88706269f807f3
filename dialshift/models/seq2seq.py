"""LSTM seq2seq response generators with attention over a multi-turn context (Xing and Gulla 2022, §3, eqs. 1-9).

One token-level LSTM encoder reads the whole context, every utterance followed by ``__eou__``; the five structures
differ in what the decoder attends to and how it starts:

* ``non_hier`` (eq. 3): attention over every context token's hidden vector ``H = [h_1..h_m]`` from each decoder
  state ``h_t``: ``c_t = H softmax(H^T h_t)``;
* ``static`` (eq. 4): attention over the utterance vectors ``H_C = [H_1..H_q]`` (the hidden vector of each
  utterance's last token, its ``__eou__``) from the Query's vector ``H_q``, once: ``c = H_C softmax(H_C^T H_q)``;
* ``dynamic`` (eq. 5): attention over ``H_C`` from each decoder state: ``c_t = H_C softmax(H_C^T h_t)``;
* ``static_ui`` / ``dynamic_ui`` (eq. 6): as above, and the decoder starts from ``H_m = LSTM(H_1..H_q)`` (an
  utterance-integration LSTM) instead of the encoder's last state ``h_m``.

The decoder is an input-feeding LSTM* (eq. 2): its input at step ``t`` is ``[E(y_{t-1}); c_{t-1}]`` (``c_0 = 0``;
static attention feeds its constant ``c``); ``tanh(W [h_t; c_t])`` predicts the next token (eq. 1).
:meth:`Seq2Seq.forward` returns the attention weights it used, :func:`attention_loss` is eq. 9 on a distractor mask
and :func:`attention_scores` turns one row's weights into the per-utterance attention scores of eq. 7 through the
helpers of :mod:`dialshift.metrics.attention`.
"""

import json
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from dialshift.errors import DialshiftError
from dialshift.text import tokenize

STRUCTURES = ("non_hier", "static", "static_ui", "dynamic", "dynamic_ui")
PAD, UNK, BOS, EOS, EOU = "<pad>", "<unk>", "<s>", "</s>", "__eou__"
SPECIALS = (PAD, UNK, BOS, EOS, EOU)
VOCAB_FILE = "vocab.json"


class Vocabulary:
    """Word-level vocabulary: the specials, then the ``size`` most frequent training tokens (ties alphabetical)."""

    def __init__(self, words):
        self.words = list(words)
        self.index = {word: i for i, word in enumerate(self.words)}
        missing = [word for word in SPECIALS if self.index.get(word) != SPECIALS.index(word)]
        if missing:
            raise DialshiftError(f"vocabulary: the specials {SPECIALS} must come first (missing {missing})")

    @classmethod
    def build(cls, texts, size: int) -> "Vocabulary":
        counts = Counter(token for text in texts for token in tokenize(text))
        for special in SPECIALS:
            counts.pop(special, None)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: max(size - len(SPECIALS), 0)]
        return cls([*SPECIALS, *(word for word, _ in ranked)])

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, text: str, limit: int) -> list[int]:
        """Token ids of ``text``, cut to ``limit`` tokens."""
        unk = self.index[UNK]
        return [self.index.get(token, unk) for token in tokenize(text)[:limit]]

    def save(self, folder) -> None:
        from dialshift.io import write_json_atomic

        write_json_atomic(Path(folder) / VOCAB_FILE, self.words)

    @classmethod
    def load(cls, folder) -> "Vocabulary":
        path = Path(folder) / VOCAB_FILE
        if not path.is_file():
            raise DialshiftError(f"{path}: missing; not a seq2seq model folder (train one with trainers/seq2seq.py)")
        return cls(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Model dimensions. The paper: dim 512, 4 layers, dropout 0.2, vocabulary 25,000 (§4.2)."""

    vocab_size: int
    structure: str = "static"
    dim: int = 128
    layers: int = 1
    dropout: float = 0.2

    def __post_init__(self):
        if self.structure not in STRUCTURES:
            raise DialshiftError(f"unknown structure {self.structure!r}; one of {', '.join(STRUCTURES)}")

    @property
    def attention(self) -> str:
        return self.structure.removesuffix("_ui")

    @property
    def integration(self) -> bool:
        return self.structure.endswith("_ui")


@dataclass
class Batch:
    """Padded tensors of a batch of (context, response) examples (see :func:`collate`)."""

    tokens: torch.Tensor  # B x m context token ids (utterances each followed by __eou__)
    token_lengths: torch.Tensor  # B
    token_utterance: torch.Tensor  # B x m: index of the utterance a token belongs to (-1 on padding)
    utterance_ends: torch.Tensor  # B x q: position of each utterance's last token (its __eou__)
    utterance_count: torch.Tensor  # B
    distractor: torch.Tensor  # B x q float: 1 = distracting utterance (the Query is never one)
    decoder_input: torch.Tensor  # B x n: <s> y_1 .. y_{n-1}
    target: torch.Tensor  # B x n: y_1 .. y_n </s> (pad elsewhere)

    def to(self, device) -> "Batch":
        return Batch(**{name: value.to(device) for name, value in self.__dict__.items()})

    @property
    def token_mask(self) -> torch.Tensor:
        return self.token_utterance >= 0

    @property
    def utterance_mask(self) -> torch.Tensor:
        positions = torch.arange(self.utterance_ends.shape[1], device=self.tokens.device)
        return positions[None] < self.utterance_count[:, None]

    @property
    def target_mask(self) -> torch.Tensor:
        return self.target != 0


def response_targets(vocab: Vocabulary, response: str, max_response_tokens: int) -> list[int]:
    """The token ids a model predicts for ``response``: the response cut to ``max_response_tokens``, then EOS (the
    targets of :func:`collate`)."""
    return [*vocab.encode(response, max_response_tokens), vocab.index[EOS]]


def unigram_log_probabilities(vocab: Vocabulary, train_responses, max_response_tokens: int) -> np.ndarray:
    """The log-probabilities of an add-one (Laplace) unigram distribution over the whole vocabulary, estimated on the
    training responses' targets (:func:`response_targets`)."""
    counts = np.ones(len(vocab))
    for response in train_responses:
        np.add.at(counts, response_targets(vocab, response, max_response_tokens), 1)
    return np.log(counts / counts.sum())


def unigram_perplexity(vocab: Vocabulary, train_responses, test_responses, max_response_tokens: int) -> dict:
    """The context-free baseline of a response model: the add-one unigram distribution of
    :func:`unigram_log_probabilities` and its perplexity on the test responses' targets (the tokens and vocabulary the
    seq2seq models' perplexity is measured on). ``{"perplexity", "tokens", "vocabulary"}``."""
    log_p = unigram_log_probabilities(vocab, train_responses, max_response_tokens)
    targets = [token for response in test_responses for token in response_targets(vocab, response,
                                                                                   max_response_tokens)]
    if not targets:
        raise DialshiftError("unigram perplexity: no test responses")
    return {"perplexity": float(np.exp(-log_p[targets].mean())), "tokens": len(targets), "vocabulary": len(vocab)}


def collate(vocab: Vocabulary, examples, max_utterance_tokens: int = 30, max_response_tokens: int = 30) -> Batch:
    """``examples``: ``(context utterances, response, distractor flags per context utterance)`` triples."""
    rows_tokens, rows_owner, rows_ends, rows_flags, inputs, targets = [], [], [], [], [], []
    eou, bos = vocab.index[EOU], vocab.index[BOS]
    for context, response, flags in examples:
        if len(context) == 0:
            raise DialshiftError("an example has an empty context (at least the Query is needed)")
        tokens, owner, ends = [], [], []
        for number, text in enumerate(context):
            ids = vocab.encode(text, max_utterance_tokens) + [eou]
            tokens += ids
            owner += [number] * len(ids)
            ends.append(len(tokens) - 1)
        target = response_targets(vocab, response, max_response_tokens)
        rows_tokens.append(tokens), rows_owner.append(owner), rows_ends.append(ends)
        rows_flags.append([float(flag) for flag in flags])
        inputs.append([bos, *target[:-1]]), targets.append(target)

    def pad(rows, value, dtype=torch.long):
        width = max(len(row) for row in rows)
        return torch.tensor([list(row) + [value] * (width - len(row)) for row in rows], dtype=dtype)

    return Batch(pad(rows_tokens, 0), torch.tensor([len(row) for row in rows_tokens]), pad(rows_owner, -1),
                 pad(rows_ends, 0), torch.tensor([len(row) for row in rows_ends]), pad(rows_flags, 0.0, torch.float),
                 pad(inputs, 0), pad(targets, 0))


@dataclass
class Output:
    """``logits`` (B x n x V) and the attention weights: ``B x n x m`` (non_hier, over tokens), ``B x q`` (static,
    over utterances, once) or ``B x n x q`` (dynamic); ``attention_logits`` are the dot products they are the softmax
    of (``-inf`` on padding), from which :func:`attention_scores` recomputes the weights in float64 (float32 weights
    of far-apart dot products underflow to exactly 0)."""

    logits: torch.Tensor
    attention: torch.Tensor
    attention_logits: torch.Tensor | None = None


def _masked(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return scores.masked_fill(~mask, float("-inf"))


class Seq2Seq(nn.Module):
    """The LSTM seq2seq model of the module docstring."""

    def __init__(self, config: Seq2SeqConfig):
        super().__init__()
        self.config = config
        dim, layers = config.dim, config.layers
        dropout = config.dropout if layers > 1 else 0.0
        self.embedding = nn.Embedding(config.vocab_size, dim, padding_idx=0)
        self.encoder = nn.LSTM(dim, dim, layers, batch_first=True, dropout=dropout)
        self.integration = nn.LSTM(dim, dim, layers, batch_first=True, dropout=dropout) if config.integration else None
        self.decoder = nn.LSTM(2 * dim, dim, layers, batch_first=True, dropout=dropout)
        self.combine = nn.Linear(2 * dim, dim)
        self.output = nn.Linear(dim, config.vocab_size)
        self.drop = nn.Dropout(config.dropout)

    def encode(self, batch: Batch):
        """Token hidden vectors ``H`` (B x m x d), utterance vectors ``H_C`` (B x q x d) and the decoder's start."""
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

        embedded = self.drop(self.embedding(batch.tokens))
        packed = pack_padded_sequence(embedded, batch.token_lengths.cpu(), batch_first=True, enforce_sorted=False)
        outputs, state = self.encoder(packed)
        hidden, _ = pad_packed_sequence(outputs, batch_first=True, total_length=batch.tokens.shape[1])
        index = batch.utterance_ends[:, :, None].expand(-1, -1, hidden.shape[-1])
        utterances = hidden.gather(1, index)  # B x q x d
        if self.integration is not None:  # eq. 6: H_m = LSTM(H_1 .. H_q)
            packed = pack_padded_sequence(utterances, batch.utterance_count.cpu(), batch_first=True,
                                          enforce_sorted=False)
            _, state = self.integration(packed)
        return hidden, utterances, state

    def forward(self, batch: Batch) -> Output:
        hidden, utterances, state = self.encode(batch)
        attention = self.config.attention
        size = hidden.shape[0]
        if attention == "non_hier":
            keys, key_mask = hidden, batch.token_mask
        else:
            keys, key_mask = utterances, batch.utterance_mask
        if attention == "static":  # eq. 4: one attention from the Query's vector H_q
            query = utterances[torch.arange(size, device=hidden.device), batch.utterance_count - 1]
            fixed_logits = _masked(torch.einsum("bqd,bd->bq", keys, query), key_mask)
            weights = torch.softmax(fixed_logits, dim=-1)
            fixed = torch.einsum("bq,bqd->bd", weights, keys)
        context = fixed if attention == "static" else hidden.new_zeros(size, hidden.shape[-1])
        embedded = self.drop(self.embedding(batch.decoder_input))
        logits, steps, step_logits = [], [], []
        for t in range(embedded.shape[1]):
            out, state = self.decoder(torch.cat([embedded[:, t], context], dim=-1)[:, None], state)
            h_t = out[:, 0]
            if attention != "static":  # eqs. 3 and 5: attention from the decoder state h_t
                scores = _masked(torch.einsum("bkd,bd->bk", keys, h_t), key_mask)
                step = torch.softmax(scores, dim=-1)
                context = torch.einsum("bk,bkd->bd", step, keys)
                steps.append(step)
                step_logits.append(scores)
            combined = torch.tanh(self.combine(torch.cat([h_t, context], dim=-1)))
            logits.append(self.output(self.drop(combined)))
        if attention == "static":
            return Output(torch.stack(logits, dim=1), weights, fixed_logits)
        return Output(torch.stack(logits, dim=1), torch.stack(steps, dim=1), torch.stack(step_logits, dim=1))


def token_nll(output: Output, batch: Batch) -> torch.Tensor:
    """Negative log-likelihood of every target token (B x n; 0 on padding)."""
    losses = nn.functional.cross_entropy(output.logits.transpose(1, 2), batch.target, reduction="none")
    return losses * batch.target_mask


def attention_loss(output: Output, batch: Batch, structure: str) -> torch.Tensor:
    """Eq. 9: ``MSE(softmax(.) o M, 0)``, the mean of the squared attention on distracting keys over the keys of each
    attention vector, averaged over the decoding steps (non_hier, dynamic) and the batch. For ``non_hier`` ``M``
    marks every token of a distracting utterance."""
    attention = Seq2SeqConfig(1, structure).attention
    if attention == "non_hier":
        owner = batch.token_utterance.clamp(min=0)
        mask = batch.distractor.gather(1, owner) * batch.token_mask
        valid = batch.token_mask
    else:
        mask, valid = batch.distractor, batch.utterance_mask
    keys = valid.sum(dim=1).clamp(min=1).float()
    if attention == "static":
        return (((output.attention * mask) ** 2).sum(dim=1) / keys).mean()
    per_step = ((output.attention * mask[:, None]) ** 2).sum(dim=2) / keys[:, None]  # B x n
    steps = batch.target_mask.float()
    return ((per_step * steps).sum(dim=1) / steps.sum(dim=1).clamp(min=1)).mean()


def attention_scores(output: Output, batch: Batch, row: int, structure: str) -> np.ndarray:
    """The AS (eq. 7, ``dialshift.metrics.attention``) of every context utterance of ``row``, the Query's last."""
    from dialshift.metrics.attention import (
        attention_scores_dynamic,
        attention_scores_non_hierarchical,
        attention_scores_static,
    )

    attention = Seq2SeqConfig(1, structure).attention
    steps = int(batch.target_mask[row].sum())
    utterances = int(batch.utterance_count[row])
    if output.attention_logits is not None:  # float64 softmax of the dot products (no float32 underflow)
        weights = torch.softmax(output.attention_logits[row].detach().double(), dim=-1).cpu().numpy()
    else:
        weights = output.attention[row].detach().double().cpu().numpy()
    if attention == "static":
        weights = weights[:utterances]
        return attention_scores_static(weights / weights.sum())
    if attention == "dynamic":
        weights = weights[:steps, :utterances]
        return attention_scores_dynamic(weights / weights.sum(axis=1, keepdims=True))
    tokens = int(batch.token_lengths[row])
    weights = weights[:steps, :tokens]
    lengths = np.bincount(batch.token_utterance[row, :tokens].cpu().numpy(), minlength=utterances)
    return attention_scores_non_hierarchical(weights / weights.sum(axis=1, keepdims=True), lengths)


def load_seq2seq(folder) -> tuple[Seq2Seq, Vocabulary, dict]:
    """A model folder written by ``trainers/seq2seq.py``: the model (eval mode), its vocabulary and metadata."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from dialshift.models.metadata import read_model_meta

    meta = read_model_meta(folder, task="seq2seq", kind="seq2seq model", trainer="trainers/seq2seq.py")
    vocab = Vocabulary.load(folder)
    model = Seq2Seq(Seq2SeqConfig(**meta["model_config"]))
    weights = Path(folder) / "model.safetensors"
    try:
        model.load_state_dict(load_file(str(weights)))
    except (OSError, RuntimeError, SafetensorError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DialshiftError(f"{weights}: cannot load the weights ({reason}): truncated or damaged? retrain with "
                             f"trainers/seq2seq.py") from error
    return model.eval(), vocab, meta


def model_config_dict(config: Seq2SeqConfig) -> dict:
    return asdict(config)
