"""A causal language model folder (``AutoModelForCausalLM``) as a scorer: each candidate's log-likelihood.

As lm-eval-harness scores multiple choice: the prompt (the context) and the continuation (the candidate) are
tokenized separately and concatenated, and the logit of a pair is the sum of the continuation tokens' log-probabilities
given everything before them, divided by the candidate's length in characters (``--length-norm chars``, lm-eval's
``acc_norm``), in tokens (``tokens``: the mean token log-likelihood) or not at all (``none``: lm-eval's ``acc``).

The prompt: with the tokenizer's chat template (unless ``--no-chat-template``), the context turns as alternating
messages ending with the ``user``'s and the generation prompt of the ``assistant`` (whose reply the candidate is);
without one, the turns one per line, then a newline. Each distinct context and candidate is tokenized once; the
candidate keeps at most half of ``max_length`` tokens and the prompt its newest tokens. Only the continuation
positions go through the output layer (the base model's hidden states, then ``get_output_embeddings()``), so a batch
never holds a full vocabulary-wide logit tensor; models that post-process their logits (soft-capping, scaling) run
their whole forward instead.
"""

from pathlib import Path

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.models.adapters.common import Scorer, folder_max_length, load_model, pad_id

#: Config attributes of models whose logits are not just ``lm_head(hidden)``: scored through their full forward.
LOGIT_POSTPROCESSING = ("final_logit_softcapping", "logit_scale", "logits_scaling")


class EncodedContinuations:
    """Prompt + continuation token rows (the continuation marked by ``first``) and each pair's length normaliser."""

    def __init__(self, packed, normalizer: np.ndarray):
        self.packed, self.normalizer = packed, normalizer

    def __len__(self) -> int:
        return len(self.packed)


def chat_messages(context) -> list[dict]:
    """The context turns as chat messages, alternating so that the newest is the ``user``'s."""
    roles = ("user", "assistant")
    return [{"role": roles[(len(context) - 1 - i) % 2], "content": turn} for i, turn in enumerate(context)]


class CausalLMScorer(Scorer):
    model_type = "causal-lm"

    @classmethod
    def load(cls, path: Path, device=None, attn_implementation=None, precision="fp32", options=None):
        from transformers import AutoModelForCausalLM

        if options.length_norm not in ("chars", "tokens", "none"):
            raise DialshiftError(f"--length-norm {options.length_norm!r}: choose chars, tokens or none")
        model, tokenizer = load_model(path, AutoModelForCausalLM, device, attn_implementation, precision,
                                      options.quantize)
        scorer = cls(path, model, tokenizer, options.max_length or folder_max_length(path), options)
        scorer.chat = bool(options.chat_template and getattr(tokenizer, "chat_template", None))
        return scorer

    @property
    def encoding_key(self):
        return (*super().encoding_key, self.chat, self.options.length_norm)

    def prompt_ids(self, context) -> list[int]:
        tokenizer = self.tokenizer
        if self.chat:
            try:
                text = tokenizer.apply_chat_template(chat_messages(context), tokenize=False,
                                                     add_generation_prompt=True)
            except Exception as error:  # templates raise their own errors (e.g. roles that must alternate)
                raise DialshiftError(f"{self.path}: the chat template refuses a context of {len(context)} turns "
                                     f"({str(error).splitlines()[0] if str(error) else type(error).__name__}); "
                                     "rerun with --no-chat-template") from error
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            ids = tokenizer("\n".join(context) + "\n")["input_ids"]
        if not ids:
            start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else pad_id(tokenizer)
            ids = [start]
        return ids

    def encode(self, pairs) -> EncodedContinuations:
        from dialshift.models.ranker import EncodedPairs

        pairs = list(pairs)
        contexts = list(dict.fromkeys(tuple(context) for context, _ in pairs))
        candidates = list(dict.fromkeys(candidate for _, candidate in pairs))
        prompts = {context: self.prompt_ids(context) for context in contexts}
        end = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else pad_id(self.tokenizer)
        continuations = dict(zip(candidates, self.tokenizer(candidates, add_special_tokens=False)["input_ids"],
                                 strict=True))
        rows, normalizer = [], np.empty(len(pairs), dtype=np.float64)
        for i, (context, candidate) in enumerate(pairs):
            continuation = (continuations[candidate] or [end])[: self.max_length // 2]
            prompt = prompts[tuple(context)][-(self.max_length - len(continuation)):]
            rows.append((prompt + continuation, len(prompt)))
            normalizer[i] = {"chars": max(len(candidate), 1), "tokens": len(continuation),
                             "none": 1}[self.options.length_norm]
        return EncodedContinuations(EncodedPairs.from_encoded(rows, pad_id(self.tokenizer)), normalizer)

    def score(self, encoded, batch_size=64, dropout_seed=None, progress=True, desc="scoring"):
        import torch

        from dialshift.ranking.inference import run_batches

        full = any(getattr(self.model.config, name, None) for name in LOGIT_POSTPROCESSING)

        def forward(model, batch):
            ids, mask = batch["input_ids"], batch["attention_mask"]
            targets = batch["token_type_ids"][:, 1:].bool()  # continuation tokens, predicted from the one before
            if full:
                logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1][targets]
            else:
                hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state
                logits = model.get_output_embeddings()(hidden[:, :-1][targets])
            picked = logits.float().log_softmax(-1).gather(1, ids[:, 1:][targets][:, None])[:, 0]
            owner = torch.arange(len(ids), device=ids.device)[:, None].expand_as(targets)[targets]
            return torch.zeros(len(ids), device=ids.device).index_add_(0, owner, picked)

        sums = run_batches(self.model, encoded.packed, batch_size, forward, dropout_seed, progress, desc)
        return (sums / encoded.normalizer).astype(np.float32)

    def describe(self) -> dict:
        norm = {"chars": "divided by the candidate's characters", "tokens": "divided by its tokens",
                "none": "not normalised"}[self.options.length_norm]
        return {**super().describe(), "chat_template": self.chat, "length_norm": self.options.length_norm,
                "logit": f"sum of the candidate tokens' log-probabilities given the context, {norm}"}
