"""A sentence-embedding folder (``AutoModel``, e.g. a sentence-transformers model) as a bi-encoder scorer.

The context (its turns joined by spaces, the newest tokens kept) and the candidate are embedded separately, as
sentence-transformers does: the last hidden states pooled by the folder's ``1_Pooling/config.json`` (mean over the
non-padding tokens by default, or the first token), each distinct context and each distinct candidate once, in
length-sorted batches. The logit of a pair is ``scale * cosine`` (``--similarity cos``, default) or the dot product
(``--similarity dot``; vectors normalised first when the folder has a sentence-transformers ``Normalize`` module).

``scale`` is the inverse temperature the model was trained with by default: 100 for multilingual-e5-small (e5's
temperature 0.01; a folder written by ``dialshift convert-e5``), else 20 (the scale of sentence-transformers'
``MultipleNegativesRankingLoss``, all-MiniLM-L6-v2's training loss); 1 for dot products. Query/passage prefixes come
from the folder: e5's ``"query: "`` (context) and ``"passage: "`` (candidate), or the ``prompts`` of
``config_sentence_transformers.json``.
"""

import json
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.models.adapters.common import Scorer, folder_max_length, load_model, pad_id

E5_MARKER = "e5_conversion.json"
COSINE_SCALE, E5_SCALE = 20.0, 100.0


def read_json(path: Path):
    try:
        return json.loads(path.read_text()) if path.is_file() else None
    except (OSError, json.JSONDecodeError):
        return None


def folder_prefixes(path: Path) -> tuple[str, str]:
    """``(context prefix, candidate prefix)`` of a folder (empty when it declares none)."""
    if (path / E5_MARKER).is_file():
        return "query: ", "passage: "
    prompts = (read_json(path / "config_sentence_transformers.json") or {}).get("prompts") or {}
    return prompts.get("query", ""), prompts.get("document", prompts.get("passage", ""))


def folder_pooling(path: Path) -> str:
    """``mean`` or ``cls``, as the folder's sentence-transformers pooling config says (default ``mean``)."""
    modules = read_json(path / "modules.json") or []
    for module in modules if isinstance(modules, list) else []:
        if str(module.get("type", "")).endswith("Pooling"):
            config = read_json(path / module.get("path", "") / "config.json") or {}
            if config.get("pooling_mode_cls_token") and not config.get("pooling_mode_mean_tokens"):
                return "cls"
    return "mean"


def folder_normalizes(path: Path) -> bool:
    modules = read_json(path / "modules.json") or []
    return any(str(m.get("type", "")).endswith("Normalize") for m in modules if isinstance(m, dict))


class EncodedTexts:
    """Pairs as indices into distinct texts (contexts, then candidates), the texts packed once."""

    def __init__(self, packed, context_rows: np.ndarray, candidate_rows: np.ndarray):
        self.packed, self.context_rows, self.candidate_rows = packed, context_rows, candidate_rows

    def __len__(self) -> int:
        return len(self.context_rows)


class BiEncoderScorer(Scorer):
    model_type = "bi-encoder"

    @classmethod
    def load(cls, path: Path, device=None, attn_implementation=None, precision="fp32", options=None):
        from transformers import AutoModel

        if options.similarity not in ("cos", "dot"):
            raise DialshiftError(f"--similarity {options.similarity!r}: choose cos or dot")
        model, tokenizer = load_model(path, AutoModel, device, attn_implementation, precision, options.quantize)
        scorer = cls(path, model, tokenizer, options.max_length or folder_max_length(path), options)
        scorer.prefixes = folder_prefixes(path)
        scorer.pooling = folder_pooling(path)
        scorer.normalize = options.similarity == "cos" or folder_normalizes(path)
        default = E5_SCALE if (path / E5_MARKER).is_file() else COSINE_SCALE
        scorer.scale = options.scale if options.scale is not None else (default if options.similarity == "cos"
                                                                         else 1.0)
        return scorer

    @property
    def encoding_key(self):
        return (*super().encoding_key, self.prefixes)

    def _wrap(self, body: list[int]) -> list[int]:
        first = self.tokenizer.cls_token_id if self.tokenizer.cls_token_id is not None else self.tokenizer.bos_token_id
        last = self.tokenizer.sep_token_id if self.tokenizer.sep_token_id is not None else self.tokenizer.eos_token_id
        return [*([first] if first is not None else []), *body, *([last] if last is not None else [])]

    def encode(self, pairs) -> EncodedTexts:
        from dialshift.models.ranker import EncodedPairs

        pairs = list(pairs)
        contexts = list(dict.fromkeys(tuple(context) for context, _ in pairs))
        candidates = list(dict.fromkeys(candidate for _, candidate in pairs))
        strings = list(dict.fromkeys([*self.prefixes, *(t for c in contexts for t in c), *candidates]))
        ids = dict(zip(strings, self.tokenizer(strings, add_special_tokens=False, truncation=False)["input_ids"],
                       strict=True))
        budget = self.max_length - 2
        sequences = []
        for context in contexts:
            prefix = ids[self.prefixes[0]]
            body = [token for turn in context for token in ids[turn]]
            sequences.append(self._wrap(prefix + body[max(0, len(body) - (budget - len(prefix))):]))
        for candidate in candidates:
            prefix = ids[self.prefixes[1]]
            sequences.append(self._wrap((prefix + ids[candidate])[:budget]))
        packed = EncodedPairs.from_encoded([(s, len(s)) for s in sequences], pad_id(self.tokenizer))
        context_index = {c: i for i, c in enumerate(contexts)}
        candidate_index = {c: len(contexts) + i for i, c in enumerate(candidates)}
        return EncodedTexts(packed, np.fromiter((context_index[tuple(c)] for c, _ in pairs), np.int64, len(pairs)),
                            np.fromiter((candidate_index[r] for _, r in pairs), np.int64, len(pairs)))

    def embed(self, encoded: EncodedTexts, batch_size=64, dropout_seed=None, progress=True, desc="embedding"):
        """The pooled embedding of every distinct text of ``encoded`` (normalised for cosine), ``float32``."""
        from dialshift.ranking.inference import run_batches

        types = int(getattr(self.model.config, "type_vocab_size", 0) or 0) > 1
        cls_pooling = self.pooling == "cls"

        def forward(model, batch):
            mask = batch["attention_mask"]
            inputs = {k: v for k, v in batch.items() if types or k != "token_type_ids"}
            hidden = model(**inputs).last_hidden_state.float()
            if cls_pooling:
                return hidden[:, 0]
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)

        vectors = run_batches(self.model, encoded.packed, batch_size, forward, dropout_seed, progress, desc)
        if self.normalize:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors

    def score(self, encoded, batch_size=64, dropout_seed=None, progress=True, desc="scoring"):
        vectors = self.embed(encoded, batch_size, dropout_seed, progress, desc)
        similarity = np.einsum("ij,ij->i", vectors[encoded.context_rows], vectors[encoded.candidate_rows])
        return (self.scale * similarity).astype(np.float32)

    def describe(self) -> dict:
        return {**super().describe(), "pooling": self.pooling, "similarity": self.options.similarity,
                "scale": self.scale, "prefixes": list(self.prefixes),
                "logit": f"{self.scale:g} * {'cosine' if self.options.similarity == 'cos' else 'dot product'} of "
                         "the context and candidate embeddings"}
