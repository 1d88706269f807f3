"""What the adapters share: loading a folder with an auto class, the default max length, int8 quantisation, and
the :class:`Scorer` interface ``dialshift evaluate`` drives."""

import json
import warnings
from pathlib import Path

from dialshift.errors import DialshiftError

#: The longest input the adapters use by default (longer contexts keep their newest tokens).
MAX_DEFAULT_LENGTH = 512


def folder_max_length(path: Path) -> int:
    """The default max length of a model folder: sentence-transformers' ``max_seq_length`` when the folder has a
    ``sentence_bert_config.json``, else the model's position limit, at most :data:`MAX_DEFAULT_LENGTH`."""
    st_config = Path(path) / "sentence_bert_config.json"
    if st_config.is_file():
        try:
            length = json.loads(st_config.read_text()).get("max_seq_length")
        except (json.JSONDecodeError, AttributeError):
            length = None
        if isinstance(length, int) and length >= 8:
            return min(length, MAX_DEFAULT_LENGTH)
    try:
        config = json.loads((Path(path) / "config.json").read_text())
    except (OSError, json.JSONDecodeError):
        return MAX_DEFAULT_LENGTH
    limits = [config.get(key) for key in ("max_position_embeddings", "n_positions", "max_sequence_length")]
    limits = [int(value) for value in limits if isinstance(value, int) and value >= 8]
    if config.get("model_type") in ("roberta", "xlm-roberta", "camembert"):  # positions start after the padding id
        limits = [value - 2 for value in limits]
    return min([*limits, MAX_DEFAULT_LENGTH])


def load_model(path: Path, auto_class, device=None, attn_implementation=None, precision: str = "fp32",
               quantize: str = "none"):
    """``(model in eval mode, tokenizer)`` of a folder loaded with ``auto_class``, or a one-line error; ``bf16``
    casts the weights (CUDA), ``quantize="int8"`` quantises the Linear layers dynamically (CPU)."""
    import torch
    from safetensors import SafetensorError
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    kwargs = {"attn_implementation": attn_implementation} if attn_implementation else {}
    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()  # unused pooler/head weights are expected for some folders
    hf_logging.disable_progress_bar()  # a bar per weight file: noise on stderr
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = auto_class.from_pretrained(path, **kwargs)
    except (OSError, ValueError, KeyError, SafetensorError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DialshiftError(f"{path}: cannot load it as {auto_class.__name__} ({reason}); check --model-type and "
                             "the folder's files") from error
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    model.eval()
    if precision == "bf16":
        model.to(torch.bfloat16)
    if device is not None:
        model.to(device)
    if quantize == "int8":
        model = quantize_int8(model)
    return model, tokenizer


def quantize_int8(model):
    """``model`` with every ``torch.nn.Linear`` replaced by its int8 dynamically quantised version
    (``torch.ao.quantization.quantize_dynamic``: weights int8 per output channel, activations quantised per batch).
    CPU only. Per-channel weights halved the logit change of per-tensor ones on all-MiniLM-L6-v2 (max 1.45 against
    2.99 on a scale-20 cosine) at the same speed."""
    import torch

    if next(model.parameters()).device.type != "cpu":
        raise DialshiftError("--quantize int8 runs on the CPU only (dynamic quantisation); drop it or use --device cpu")
    with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao; it still works
        warnings.filterwarnings("ignore", message=".*(torch.ao.quantization is deprecated|quantize_per_tensor).*")
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        return quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)


def pad_id(tokenizer) -> int:
    """The padding id (masked out anyway): the tokenizer's, else its end-of-sequence id, else 0."""
    for value in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if value is not None:
            return int(value)
    return 0


class Scorer:
    """A loaded model that scores (context turns, candidate) pairs; subclasses implement :meth:`load`,
    :meth:`encode` and :meth:`score`.

    ``encode(pairs)`` tokenizes and packs the pairs once; ``score(encoded, batch_size, dropout_seed, progress,
    desc)`` returns one ``float32`` logit per pair (one MC-dropout pass when ``dropout_seed`` is set);
    ``encoding_key`` is equal for scorers whose encodings are interchangeable; ``describe()`` goes into
    ``run.json``."""

    model_type = ""

    def __init__(self, path: Path, model, tokenizer, max_length: int, options):
        self.path, self.model, self.tokenizer, self.max_length, self.options = \
            Path(path), model, tokenizer, int(max_length), options
        if self.max_length < 8:
            raise DialshiftError(f"--max-length {max_length}: at least 8 tokens")

    @classmethod
    def load(cls, path: Path, device=None, attn_implementation=None, precision="fp32", options=None):
        raise NotImplementedError

    @property
    def encoding_key(self):
        from dialshift.models.ranker import tokenizer_key

        return (self.model_type, tokenizer_key(self.tokenizer), self.max_length)

    def encode(self, pairs):
        raise NotImplementedError

    def score(self, encoded, batch_size: int = 64, dropout_seed: int | None = None, progress: bool = True,
              desc: str = "scoring"):
        raise NotImplementedError

    def describe(self) -> dict:
        return {"model_type": self.model_type, "model_class": type(self.model).__name__, "max_length": self.max_length,
                "quantize": self.options.quantize}
