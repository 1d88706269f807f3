"""Logits and features of an intent classifier, for the open-world methods of :mod:`dialshift.models.open_world`.

:class:`IntentEncoder` tokenises utterances, runs a sequence classifier in length-sorted batches and returns
:class:`~dialshift.models.open_world.Outputs`: the logits and one feature vector per utterance, either the input of the
classification head (``features="pooler"``, captured by :func:`head_input`) or the last layer's hidden states averaged
over the utterance's tokens (``"mean"``); optionally extra passes with dropout active (ADB learns its boundaries on
those), drawn on a forked, seeded random stream.
"""

import contextlib

import numpy as np

from dialshift.errors import DialshiftError

FEATURES = ("pooler", "mean")  # the first is the default


@contextlib.contextmanager
def head_input(head):
    """While open, ``captured["x"]`` holds the input of the last forward call of ``head`` (the features it reads)."""
    captured = {}
    hook = head.register_forward_pre_hook(lambda module, inputs: captured.__setitem__("x", inputs[0]))
    try:
        yield captured
    finally:
        hook.remove()


class IntentEncoder:
    """Tokenises utterances and runs the classifier, returning logits and features: the input of its head
    (``features="pooler"``) or the last layer's hidden states averaged over each utterance's tokens (``"mean"``)."""

    def __init__(self, tokenizer, max_length: int, features: str = "pooler"):
        if features not in FEATURES:
            raise DialshiftError(f"features {features!r}: one of {', '.join(FEATURES)}")
        self.tokenizer, self.max_length, self.features = tokenizer, max_length, features

    def batch(self, texts, device):
        encoded = self.tokenizer(list(texts), truncation=True, max_length=self.max_length, padding=True,
                                 return_tensors="pt")
        return {key: value.to(device) for key, value in encoded.items()}

    def outputs(self, model, texts, batch_size: int, device, *, dropout_passes: int = 0, seed: int = 0):
        """:class:`~dialshift.models.open_world.Outputs` of ``texts`` (length-sorted batches, input order kept), read
        in eval mode; with ``dropout_passes``, also that many passes of features with dropout active (for ADB), their
        draws seeded by ``seed``."""
        import torch

        from dialshift.models.open_world import Outputs

        logits, features = self._forward(model, texts, batch_size, device, train_mode=False)
        passes = []
        if dropout_passes:  # on a forked generator: the caller's random stream (e.g. training dropout) is untouched
            with torch.random.fork_rng(devices=[device] if torch.device(device).type == "cuda" else []):
                torch.manual_seed(seed)
                passes = [self._forward(model, texts, batch_size, device, train_mode=True)[1]
                          for _ in range(dropout_passes)]
            model.eval()
        return Outputs(logits, features, dropout_features=passes)

    def _forward(self, model, texts, batch_size: int, device, *, train_mode: bool):
        """``(logits, features)`` arrays of ``texts``, with dropout active when ``train_mode``."""
        import torch

        from dialshift.models.batching import sorted_batches

        head = getattr(model, "classifier", None) or getattr(model, "score", None)
        if head is None:
            raise DialshiftError(f"model {type(model).__name__} has no 'classifier' head to read features from")
        lengths = [len(text) for text in texts]
        logits, features = [None] * len(texts), [None] * len(texts)
        model.train(train_mode)
        with torch.no_grad(), head_input(head) as captured:
            for rows in sorted_batches(lengths, batch_size):
                batch = self.batch([texts[r] for r in rows], device)
                result = model(**batch, output_hidden_states=self.features == "mean")
                if self.features == "mean":
                    mask = batch["attention_mask"].unsqueeze(-1).to(result.hidden_states[-1].dtype)
                    x = (result.hidden_states[-1] * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
                else:
                    x = captured["x"]
                    x = x[:, 0] if x.dim() == 3 else x  # heads that read the sequence (RoBERTa) take its first token
                for i, row in enumerate(rows):
                    logits[row], features[row] = result.logits[i].float().cpu().numpy(), x[i].float().cpu().numpy()
        return np.stack(logits), np.stack(features)
