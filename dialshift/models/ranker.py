"""The cross-encoder response ranker: input encoding and self-describing ranker folders.

Input (Lee et al. §3.2): ``[CLS] u_1 [SEP] u_2 [SEP] ... u_n [SEP] r [SEP]`` — the context turns joined with the
tokenizer's separator token, then the candidate response as the second segment (token type 1). When the pair is longer
than ``max_length`` the candidate keeps at most ``max_length // 2`` tokens (its beginning) and the context keeps its
most recent tokens: it is truncated from the oldest turn.

A ranker folder is a model folder of task ``ranking`` (:mod:`dialshift.models.metadata`): ``save_pretrained``
output of the model and tokenizer plus ``dialshift_model.json`` (task, model class, backbone, separator, max length,
training arguments, seed, validation metrics, fitted temperature), written last, so a folder without it is not (yet)
a ranker.

Speed: token ids are cached per distinct string in one :class:`PairEncoder` shared by every ranker with the
same tokenizer and max length (:func:`shared_encoder`), so the contexts and candidates of all configs are tokenized
once for every seed, method and pass; :class:`EncodedPairs` keeps the encoded pairs of a fixed pair list as one flat
token array and pads each length-sorted batch with numpy (pinned memory on CUDA). Precision and attention are picked
by :func:`resolve_precision` / :func:`resolve_attention`: on CUDA the fast path (TF32 matmuls for training, bf16
weights for scoring, measured fastest on an H100), on CPU fp32 and the library's default attention.
"""

import contextlib
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.models.batching import pad_batch, sorted_batches
from dialshift.models.metadata import MODEL_FILE, import_class, read_model_meta

TASK = "ranking"
RANKER_FILE = MODEL_FILE
PRECISIONS = ("auto", "fp32", "tf32", "bf16")
ATTENTIONS = ("auto", "eager", "sdpa")


def resolve_precision(precision: str | None, device, purpose: str = "scoring") -> str:
    """``fp32``, ``tf32`` or ``bf16`` for ``precision`` (``auto``/None: the measured fast path on CUDA — ``tf32`` for
    ``training``, ``bf16`` for ``scoring`` — and ``fp32`` elsewhere). ``tf32``/``bf16`` need a CUDA device."""
    import torch

    device = torch.device(device) if device is not None else torch.device("cpu")
    precision = precision or "auto"
    if precision not in PRECISIONS:
        raise DialshiftError(f"--precision {precision!r}: choose from {', '.join(PRECISIONS)}")
    if precision == "auto":
        if device.type != "cuda":
            return "fp32"
        return "tf32" if purpose == "training" else "bf16"
    if precision != "fp32" and device.type != "cuda":
        raise DialshiftError(f"--precision {precision} needs a CUDA device (this run is on {device}); use fp32")
    return precision


def resolve_attention(attn: str | None, precision: str, purpose: str = "scoring") -> str | None:
    """The ``attn_implementation`` to load with: ``auto``/None is the library's default (SDPA), except ``eager``
    for bf16 *training* (bf16 autocast with SDPA ran 16.8 steps/s against 28.2 eager on an H100)."""
    attn = attn or "auto"
    if attn not in ATTENTIONS:
        raise DialshiftError(f"--attn {attn!r}: choose from {', '.join(ATTENTIONS)}")
    if attn != "auto":
        return attn
    return "eager" if precision == "bf16" and purpose == "training" else None


@contextlib.contextmanager
def precision_context(precision: str, device):
    """TF32 matmuls for ``tf32``, bf16 autocast for ``bf16`` (training), nothing for ``fp32``; flags restored after."""
    import torch

    if precision == "fp32":
        yield
        return
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    try:
        if precision == "bf16":
            with torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16):
                yield
        else:
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn


def tokenizer_key(tokenizer) -> str:
    """A fingerprint of a tokenizer's behaviour (its fast-tokenizer JSON, else class and vocabulary): rankers saved
    with the same tokenizer in different folders share one token cache."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        text = backend.to_str()
    else:
        text = type(tokenizer).__name__ + repr(sorted(tokenizer.get_vocab().items()))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


_ENCODERS: dict[tuple[str, int], "PairEncoder"] = {}


def shared_encoder(tokenizer, max_length: int) -> "PairEncoder":
    """The process-wide :class:`PairEncoder` of ``(tokenizer_key(tokenizer), max_length)``: its token ids are computed
    once per distinct string for every ranker, seed, method and pass."""
    key = (tokenizer_key(tokenizer), int(max_length))
    if key not in _ENCODERS:
        _ENCODERS[key] = PairEncoder(tokenizer, max_length)
    return _ENCODERS[key]


class PairEncoder:
    """Token ids for (context, candidate) pairs; every distinct string is tokenized once."""

    def __init__(self, tokenizer, max_length: int):
        if max_length < 8:
            raise ValueError(f"max_length must be at least 8, got {max_length}")
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.cls_id = tokenizer.cls_token_id
        self.sep_id = tokenizer.sep_token_id
        self.pad_id = tokenizer.pad_token_id or 0
        self._ids: dict[str, list[int]] = {}

    def tokenize(self, texts) -> None:
        """Tokenize (in one fast batch) every text not seen before."""
        new = list(dict.fromkeys(t for t in texts if t not in self._ids))
        if new:
            encoded = self.tokenizer(new, add_special_tokens=False, truncation=False)["input_ids"]
            self._ids.update(zip(new, encoded, strict=True))

    def encode(self, context, candidate) -> tuple[list[int], int]:
        """``(input_ids, first_segment_length)`` for one pair; call :meth:`tokenize` on its strings first."""
        response = self._ids[candidate][: self.max_length // 2]
        budget = self.max_length - len(response) - 3
        tokens: list[int] = []
        for turn in reversed(context):  # newest first, so the oldest turns are the ones cut
            piece = self._ids[turn] + ([self.sep_id] if tokens else [])
            tokens[:0] = piece
            if len(tokens) >= budget:
                tokens = tokens[len(tokens) - budget :]
                break
        first = [self.cls_id, *tokens, self.sep_id]
        return first + response + [self.sep_id], len(first)

    def encode_pairs(self, pairs) -> list[tuple[list[int], int]]:
        """Encode ``[(context_turns, candidate), ...]``."""
        pairs = list(pairs)
        self.tokenize(text for context, candidate in pairs for text in (*context, candidate))
        return [self.encode(context, candidate) for context, candidate in pairs]

    def collate(self, encoded):
        """Pad a list of :meth:`encode` results into a batch of tensors."""
        return pad_batch([ids for ids, _ in encoded], self.pad_id, [first for _, first in encoded])

    def sorted_batches(self, encoded, batch_size: int):
        """``(rows, batch)`` over :meth:`encode` results in length-sorted batches of ``batch_size`` (less padding);
        ``rows`` are the positions in ``encoded`` (write results back with ``out[rows] = ...``)."""
        for rows in sorted_batches([len(ids) for ids, _ in encoded], batch_size):
            yield rows, self.collate([encoded[r] for r in rows])

    def encode_flat(self, pairs) -> "EncodedPairs":
        """:meth:`encode_pairs` into one flat token array (what :class:`EncodedPairs` batches from)."""
        return EncodedPairs.from_encoded(self.encode_pairs(pairs), self.pad_id)


class EncodedPairs:
    """Encoded pairs as one flat ``int32`` token array with offsets, lengths and first-segment lengths.

    :meth:`batches` yields the same length-sorted batches of ``batch_size`` rows as :meth:`PairEncoder.sorted_batches`
    (identical ``int64`` tensors), padded with vectorised numpy instead of a Python loop per row; with ``pin`` the
    tensors are in pinned memory, so ``.to(device, non_blocking=True)`` overlaps the copy with the GPU's work.
    """

    def __init__(self, tokens: np.ndarray, offsets: np.ndarray, lengths: np.ndarray, first: np.ndarray, pad_id: int):
        self.tokens, self.offsets, self.lengths, self.first, self.pad_id = tokens, offsets, lengths, first, pad_id

    @classmethod
    def from_encoded(cls, encoded, pad_id: int) -> "EncodedPairs":
        lengths = np.fromiter((len(ids) for ids, _ in encoded), dtype=np.int64, count=len(encoded))
        first = np.fromiter((f for _, f in encoded), dtype=np.int64, count=len(encoded))
        offsets = np.zeros(len(encoded), dtype=np.int64)
        np.cumsum(lengths[:-1], out=offsets[1:])
        tokens = np.fromiter((t for ids, _ in encoded for t in ids), dtype=np.int32, count=int(lengths.sum()))
        return cls(tokens, offsets, lengths, first, pad_id)

    def __len__(self) -> int:
        return len(self.lengths)

    def collate(self, rows: np.ndarray, pin: bool = False) -> dict:
        """The padded ``input_ids``/``attention_mask``/``token_type_ids`` tensors of ``rows`` (as
        :func:`dialshift.models.batching.pad_batch` makes them)."""
        import torch

        lengths, first = self.lengths[rows], self.first[rows]
        columns = np.arange(int(lengths.max()))
        mask = columns < lengths[:, None]
        input_ids = np.full(mask.shape, self.pad_id, dtype=np.int64)
        input_ids[mask] = self.tokens[(self.offsets[rows][:, None] + columns)[mask]]
        batch = {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(mask.astype(np.int64)),
                 "token_type_ids": torch.from_numpy((mask & (columns >= first[:, None])).astype(np.int64))}
        return {k: v.pin_memory() for k, v in batch.items()} if pin else batch

    def batches(self, batch_size: int, pin: bool = False):
        """``(rows, batch)`` in length-sorted batches of ``batch_size`` (stable order, as ``sorted_batches``)."""
        for rows in sorted_batches(self.lengths, batch_size):
            yield rows, self.collate(rows, pin)


@dataclass
class Ranker:
    """A loaded ranker: model (in eval mode), tokenizer, its folder metadata and a pair encoder."""

    path: Path
    model: object
    tokenizer: object
    meta: dict

    @property
    def encoder(self) -> PairEncoder:
        """The shared encoder of this ranker's tokenizer and max length (:func:`shared_encoder`)."""
        if not hasattr(self, "_encoder"):
            self._encoder = shared_encoder(self.tokenizer, self.meta["max_length"])
        return self._encoder

    @property
    def temperature(self) -> float | None:
        return self.meta.get("temperature")


def read_ranker_meta(path) -> dict:
    """The metadata of a ranker folder, or a one-line :class:`DialshiftError`."""
    meta = read_model_meta(path, task=TASK, kind="ranker", trainer="trainers/ranker.py")
    if "max_length" not in meta:
        raise DialshiftError(f"{path}: the ranker metadata has no max_length (retrain it with trainers/ranker.py)")
    return meta


def load_ranker(path, device=None, attn_implementation: str | None = None, precision: str = "fp32") -> Ranker:
    """Load a ranker folder (model in eval mode, on ``device``) with the model class its metadata records; with
    ``precision="bf16"`` the weights are cast to bf16 (the fast scoring path on CUDA)."""
    from safetensors import SafetensorError
    from transformers import AutoTokenizer

    meta = read_ranker_meta(path)
    model_class = import_class(meta["model_class"])
    kwargs = {"attn_implementation": attn_implementation} if attn_implementation else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = model_class.from_pretrained(path, **kwargs)
    except (OSError, ValueError, SafetensorError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DialshiftError(f"{path}: cannot load the ranker weights ({reason}): truncated or damaged? retrain it "
                             f"with trainers/ranker.py or copy it again") from error
    model.eval()
    if precision == "bf16":
        import torch

        model.to(torch.bfloat16)
    if device is not None:
        model.to(device)
    return Ranker(Path(path), model, tokenizer, meta)
