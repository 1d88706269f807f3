"""A sequence-classification folder (``AutoModelForSequenceClassification``) as an open-world intent classifier.

For the ``open_world_intent`` configs (the covariate family's CLINC14-COV / HWU12-COV): the head must have one label
per known intent of the config (its ``num_labels`` less the out-of-scope class). Its labels are matched to the
config's intents (:func:`head_order`): by name where the head's ``config.id2label`` names them all (in any order), by
position where the head keeps transformers' default names (``LABEL_0`` ...); any other head is refused with a one-line
error naming the mismatch. Each distinct utterance is tokenized once (``[CLS] text [SEP]``, at most ``max_length``
tokens) and scored in length-sorted batches padded to the batch's longest row under ``torch.inference_mode()``
(:func:`dialshift.ranking.inference.run_batches`); :meth:`IntentClassifier.logits` returns the ``N x K`` logits with
the columns in the config's intent order. The open-world decision (MSP and its threshold) is
:mod:`dialshift.models.open_world`'s; :mod:`dialshift.ranking.open_world` drives it.
"""

import re
from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.models.adapters.common import folder_max_length, load_model, pad_id

#: transformers' names for unnamed labels.
DEFAULT_LABEL = re.compile(r"LABEL_(\d+)")


def head_order(id2label: dict, intents: list[str], where) -> tuple[np.ndarray, str]:
    """``(columns, rule)``: ``columns[k]`` is the head's output of the config's intent ``k``; ``rule`` is ``"name"``
    or ``"position"``. ``id2label``: the head's ``{id: name}``; ``intents``: the config's known intents (no
    out-of-scope class). A one-line :class:`DialshiftError` naming ``where`` and the mismatch otherwise."""
    names = [str(id2label.get(i, id2label.get(str(i), f"LABEL_{i}"))) for i in range(len(id2label))]
    if len(names) != len(intents):
        shown = ", ".join(intents[:4]) + (", ..." if len(intents) > 4 else "")
        raise DialshiftError(f"{where}: the classification head has {len(names)} labels, the config has "
                             f"{len(intents)} known intents ({shown}; out-of-scope is decided by the MSP threshold, "
                             f"not a head label); fine-tune a head with num_labels={len(intents)}")
    if all(DEFAULT_LABEL.fullmatch(name) and int(DEFAULT_LABEL.fullmatch(name).group(1)) == i
           for i, name in enumerate(names)):
        return np.arange(len(names)), "position"
    if sorted(names) == sorted(intents) and len(set(names)) == len(names):
        index = {name: i for i, name in enumerate(names)}
        return np.array([index[intent] for intent in intents]), "name"
    missing = [intent for intent in intents if intent not in names]
    extra = [name for name in names if name not in intents]
    raise DialshiftError(f"{where}: the head's labels do not name the config's intents (not in the head: "
                         f"{missing[0]!r}; not an intent: {extra[0] if extra else names[0]!r}); set the head's "
                         "config.id2label to the config's intent names, or to LABEL_0 .. "
                         f"LABEL_{len(intents) - 1} to map them by position")


class EncodedTexts:
    """Utterances packed once: the distinct texts tokenized (:class:`~dialshift.models.ranker.EncodedPairs`) and
    each utterance's row among them."""

    def __init__(self, packed, rows: np.ndarray):
        self.packed, self.rows = packed, rows

    def __len__(self) -> int:
        return len(self.rows)


class IntentClassifier:
    """A loaded ``AutoModelForSequenceClassification`` whose head fits a config's intents (see the module
    docstring)."""

    model_type = "classifier"

    def __init__(self, path: Path, model, tokenizer, max_length: int, columns: np.ndarray, rule: str, options):
        self.path, self.model, self.tokenizer, self.max_length = Path(path), model, tokenizer, int(max_length)
        self.columns, self.rule, self.options = columns, rule, options
        if self.max_length < 4:
            raise DialshiftError(f"--max-length {max_length}: at least 4 tokens")

    @classmethod
    def load(cls, path: Path, intents: list[str], device=None, attn_implementation=None, precision="fp32",
             options=None):
        """Load the folder and match its head to ``intents`` (:func:`head_order`)."""
        from transformers import AutoModelForSequenceClassification

        path = Path(path)
        model, tokenizer = load_model(path, AutoModelForSequenceClassification, device, attn_implementation,
                                      precision, options.quantize)
        columns, rule = head_order(dict(model.config.id2label), list(intents), path)
        return cls(path, model, tokenizer, options.max_length or folder_max_length(path), columns, rule, options)

    def encode(self, texts) -> EncodedTexts:
        """Each distinct text tokenized once, with the tokenizer's special tokens, cut to ``max_length``."""
        from dialshift.models.ranker import EncodedPairs

        texts = list(texts)
        distinct = list(dict.fromkeys(texts))
        ids = self.tokenizer(distinct, truncation=True, max_length=self.max_length)["input_ids"] if distinct else []
        index = {text: i for i, text in enumerate(distinct)}
        packed = EncodedPairs.from_encoded([(row, len(row)) for row in ids], pad_id(self.tokenizer))
        return EncodedTexts(packed, np.fromiter((index[t] for t in texts), np.int64, len(texts)))

    def logits(self, encoded: EncodedTexts, batch_size: int = 64, progress: bool = True,
               desc: str = "classifying") -> np.ndarray:
        """``N x K`` ``float32`` logits of the encoded utterances, columns in the config's intent order."""
        from dialshift.ranking.inference import run_batches

        types = int(getattr(self.model.config, "type_vocab_size", 0) or 0) > 1

        def forward(model, batch):
            return model(**{k: v for k, v in batch.items() if types or k != "token_type_ids"}).logits

        distinct = run_batches(self.model, encoded.packed, batch_size, forward, progress=progress, desc=desc)
        if not len(distinct):
            return np.zeros((0, len(self.columns)), dtype=np.float32)
        return distinct[encoded.rows][:, self.columns]

    def describe(self) -> dict:
        return {"model_type": self.model_type, "model_class": type(self.model).__name__,
                "max_length": self.max_length, "quantize": self.options.quantize, "labels": self.rule,
                "score": "maximum softmax probability (MSP) of the head's logits; out-of-scope below the threshold"}
