"""The cross-encoder response ranker: input encoding and self-describing ranker folders.

Input (Lee et al. §3.2): ``[CLS] u_1 [SEP] u_2 [SEP] ... u_n [SEP] r [SEP]`` — the context turns joined with the
tokenizer's separator token, then the candidate response as the second segment (token type 1). When the pair is longer
than ``max_length`` the candidate keeps at most ``max_length // 2`` tokens (its beginning) and the context keeps its
most recent tokens: it is truncated from the oldest turn.

A ranker folder is a model folder of task ``ranking`` (:mod:`dialshift.training.metadata`): ``save_pretrained``
output of the model and tokenizer plus ``dialshift_model.json`` (task, model class, backbone, separator, max length,
training arguments, seed, validation metrics, fitted temperature), written last, so a folder without it is not (yet)
a ranker. Folders of the first trainer, with ``dialshift_ranker.json`` instead, still load.
"""

from dataclasses import dataclass
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.training.batching import pad_batch, sorted_batches
from dialshift.training.metadata import MODEL_FILE, import_class, read_model_meta, write_model_meta

TASK = "ranking"
RANKER_FILE = MODEL_FILE


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


@dataclass
class Ranker:
    """A loaded ranker: model (in eval mode), tokenizer, its folder metadata and a pair encoder."""

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


def write_ranker_meta(path, meta: dict) -> Path:
    """Write the folder's metadata as a ranker's (task ``ranking``; last: it is what makes a folder a ranker)."""
    if "max_length" not in meta:
        raise ValueError("ranker metadata needs max_length")
    return write_model_meta(path, {**meta, "task": TASK})


def read_ranker_meta(path) -> dict:
    """The metadata of a ranker folder (new or legacy format), or a one-line :class:`DialshiftError`."""
    meta = read_model_meta(path, task=TASK, kind="ranker", trainer="trainers/ranker.py")
    if "max_length" not in meta:
        raise DialshiftError(f"{path}: the ranker metadata has no max_length (retrain it with trainers/ranker.py)")
    return meta


def load_ranker(path, device=None, attn_implementation: str | None = None) -> Ranker:
    """Load a ranker folder (model in eval mode, on ``device``) with the model class its metadata records."""
    from transformers import AutoTokenizer

    meta = read_ranker_meta(path)
    model_class = import_class(meta["model_class"])
    kwargs = {"attn_implementation": attn_implementation} if attn_implementation else {}
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = model_class.from_pretrained(path, **kwargs)
    except (OSError, ValueError) as error:
        raise DialshiftError(f"{path}: cannot load the ranker weights ({str(error).splitlines()[0]})") from error
    model.eval()
    if device is not None:
        model.to(device)
    return Ranker(Path(path), model, tokenizer, meta)
