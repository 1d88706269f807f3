"""A cross-encoder folder (``AutoModelForSequenceClassification``) as a scorer.

The pair is encoded as the project's rankers encode it (:class:`dialshift.models.ranker.PairEncoder`:
``[CLS] u_1 [SEP] ... u_n [SEP] r [SEP]``, the candidate keeping at most half of ``max_length`` and the context its
newest tokens), so every distinct string is tokenized once and the pairs are packed once for every pass. The logit is
the head's output for one label, or ``logit[1] - logit[0]`` (the log-odds of the positive class, whose softmax over
the candidates equals the softmax of the positive logits' differences) for two. ``token_type_ids`` are passed only
to models with more than one token type.
"""

from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.models.adapters.common import Scorer, folder_max_length, load_model


def head_logit(logits):
    """One score per row from a classification head's ``logits`` (1 or 2 labels)."""
    return logits[:, 0] if logits.shape[1] == 1 else logits[:, 1] - logits[:, 0]


class CrossEncoderScorer(Scorer):
    model_type = "cross-encoder"

    @classmethod
    def load(cls, path: Path, device=None, attn_implementation=None, precision="fp32", options=None):
        from transformers import AutoModelForSequenceClassification

        model, tokenizer = load_model(path, AutoModelForSequenceClassification, device, attn_implementation,
                                      precision, options.quantize)
        labels = model.config.num_labels
        if labels not in (1, 2):
            raise DialshiftError(f"{path}: the classification head has {labels} labels; a cross-encoder needs 1 (a "
                                 "relevance score) or 2 (irrelevant, relevant)")
        if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
            raise DialshiftError(f"{path}: the tokenizer has no CLS/SEP tokens to build (context, candidate) pairs "
                                 "from; a cross-encoder folder needs a BERT-style tokenizer")
        return cls(path, model, tokenizer, options.max_length or folder_max_length(path), options)

    @property
    def uses_token_types(self) -> bool:
        return int(getattr(self.model.config, "type_vocab_size", 0) or 0) > 1

    def encode(self, pairs):
        from dialshift.models.ranker import shared_encoder

        return shared_encoder(self.tokenizer, self.max_length).encode_flat(pairs)

    @property
    def encoding_key(self):
        from dialshift.models.ranker import shared_encoder

        return ("ranker", id(shared_encoder(self.tokenizer, self.max_length)))  # the rankers' encoding, shared

    def score(self, encoded, batch_size=64, dropout_seed=None, progress=True, desc="scoring"):
        from dialshift.ranking.inference import run_batches

        types = self.uses_token_types

        def forward(model, batch):
            if not types:
                batch = {k: v for k, v in batch.items() if k != "token_type_ids"}
            return head_logit(model(**batch).logits)

        return run_batches(self.model, encoded, batch_size, forward, dropout_seed, progress, desc)

    def describe(self) -> dict:
        return {**super().describe(), "logit": "the head's logit" if self.model.config.num_labels == 1
                else "logit[1] - logit[0] (the positive class's log-odds)"}
