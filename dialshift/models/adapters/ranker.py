"""The project's own rankers (``trainers/ranker.py`` folders) behind the :class:`~.common.Scorer` interface: the
same encoding and scoring as before (:func:`dialshift.ranking.inference.score_pairs`), so the logits are
identical; ``--quantize int8`` applies to them too."""

from pathlib import Path

from dialshift.models.adapters.common import Scorer, quantize_int8


class RankerScorer(Scorer):
    model_type = "ranker"

    def __init__(self, ranker, options):
        super().__init__(ranker.path, ranker.model, ranker.tokenizer, ranker.meta["max_length"], options)
        self.ranker = ranker

    @classmethod
    def load(cls, path: Path, device=None, attn_implementation=None, precision="fp32", options=None):
        from dialshift.models.ranker import load_ranker

        ranker = load_ranker(path, device=device, attn_implementation=attn_implementation, precision=precision)
        if options.quantize == "int8":
            ranker.model = quantize_int8(ranker.model)
        return cls(ranker, options)

    @property
    def encoding_key(self):
        return ("ranker", id(self.ranker.encoder))  # shared by every ranker with the same tokenizer and max length

    def encode(self, pairs):
        from dialshift.ranking.inference import encode

        return encode(self.ranker, pairs)

    def score(self, encoded, batch_size=64, dropout_seed=None, progress=True, desc="scoring"):
        from dialshift.ranking.inference import score_pairs

        self.ranker.model = self.model
        return score_pairs(self.ranker, encoded, batch_size, dropout_seed=dropout_seed, progress=progress, desc=desc)
