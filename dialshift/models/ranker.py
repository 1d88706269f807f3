"""The cross-encoder response ranker: input encoding and self-describing ranker folders.

Input (Lee et al. §3.2): ``[CLS] u_1 [SEP] u_2 [SEP] ... u_n [SEP] r [SEP]`` — the context turns joined with the
tokenizer's separator token, then the candidate response as the second segment (token type 1). When the pair is longer
than ``max_length`` the candidate keeps at most ``max_length // 2`` tokens (its beginning) and the context keeps its
most recent tokens: it is truncated from the oldest turn.

A ranker folder holds ``save_pretrained`` output of the model and tokenizer plus ``dialshift_ranker.json``
(format, backbone, separator, max length, training arguments, seed, validation metrics, fitted temperature); the file
is written last, so a folder without it is not (yet) a ranker.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import DialshiftError

RANKER_FILE = "dialshift_ranker.json"
RANKER_FORMAT = "dialshift-ranker/1"


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
        import torch

        width = max(len(ids) for ids, _ in encoded)
        input_ids = torch.full((len(encoded), width), self.pad_id, dtype=torch.long)
        token_type_ids = torch.zeros((len(encoded), width), dtype=torch.long)
        attention_mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, (ids, first) in enumerate(encoded):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            token_type_ids[row, first : len(ids)] = 1
            attention_mask[row, : len(ids)] = 1
        return {"input_ids": input_ids, "token_type_ids": token_type_ids, "attention_mask": attention_mask}


@dataclass
class Ranker:
    """A loaded ranker: model (in eval mode), tokenizer, its ``dialshift_ranker.json`` and a pair encoder."""

    path: Path
    model: object
    tokenizer: object
    meta: dict

    @property
    def encoder(self) -> PairEncoder:
        if not hasattr(self, "_encoder"):
            self._encoder = PairEncoder(self.tokenizer, self.meta["max_length"])
        return self._encoder

    @property
    def temperature(self) -> float | None:
        return self.meta.get("temperature")


def write_json_atomic(path: Path, data) -> None:
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def save_ranker(path, model, tokenizer, meta: dict) -> Path:
    """Save a ranker folder; ``meta`` must hold at least ``max_length`` and ``backbone``."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return write_ranker_meta(path, meta)


def write_ranker_meta(path, meta: dict) -> Path:
    """Write ``dialshift_ranker.json`` (last: it is what makes a folder a ranker)."""
    if "max_length" not in meta:
        raise ValueError("ranker metadata needs max_length")
    write_json_atomic(Path(path) / RANKER_FILE, {"format": RANKER_FORMAT, **meta})
    return Path(path)


def read_ranker_meta(path) -> dict:
    """The ``dialshift_ranker.json`` of a ranker folder, or a one-line :class:`DialshiftError`."""
    path = Path(path)
    if not path.is_dir():
        raise DialshiftError(f"{path}: model directory does not exist (train one with trainers/ranker.py)")
    meta_file = path / RANKER_FILE
    if not meta_file.is_file():
        raise DialshiftError(f"{path}: not a dialshift ranker (no {RANKER_FILE}; train one with trainers/ranker.py)")
    try:
        meta = json.loads(meta_file.read_text())
    except json.JSONDecodeError as error:
        raise DialshiftError(f"{meta_file}: not valid JSON ({error})") from error
    if meta.get("format") != RANKER_FORMAT or "max_length" not in meta:
        raise DialshiftError(f"{meta_file}: unknown ranker format {meta.get('format')!r} (expected {RANKER_FORMAT})")
    return meta


def load_ranker(path, device=None, attn_implementation: str | None = None) -> Ranker:
    """Load a ranker folder written by :func:`save_ranker` (model in eval mode, on ``device``)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    meta = read_ranker_meta(path)
    kwargs = {"attn_implementation": attn_implementation} if attn_implementation else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path, **kwargs)
    except (OSError, ValueError) as error:
        raise DialshiftError(f"{path}: cannot load the ranker weights ({str(error).splitlines()[0]})") from error
    model.eval()
    if device is not None:
        model.to(device)
    return Ranker(Path(path), model, tokenizer, meta)
