"""Any Hugging Face model folder as a response scorer for ``dialshift evaluate``.

A *scorer* turns (context turns, candidate) pairs into one logit per pair; ``dialshift evaluate`` takes the softmax
over each instance's candidates (response ranking, pairwise selection) exactly as for its own trained rankers. The
model type comes from the folder (:func:`detect_model_type`) or ``--model-type``:

* ``ranker``: a ranker trained by ``trainers/ranker.py`` (``dialshift_model.json``): the project's own path,
  :func:`dialshift.ranking.inference.score_pairs`, unchanged;
* ``cross-encoder`` (:mod:`.cross_encoder`): ``AutoModelForSequenceClassification`` on the pair, one logit, or two
  (the positive class's log-odds, ``logit[1] - logit[0]``);
* ``bi-encoder`` (:mod:`.bi_encoder`): ``AutoModel`` embeddings of the context and of the candidate, pooled as the
  folder's sentence-transformers config says (mean by default), compared by cosine (times a scale) or dot product;
* ``causal-lm`` (:mod:`.causal_lm`): ``AutoModelForCausalLM``; the log-likelihood of the candidate given the
  context, summed over its tokens and length-normalised (lm-eval's multiple-choice scoring), with the tokenizer's
  chat template when it has one;
* ``classifier`` (:mod:`.classifier`, ``open_world_intent`` configs only): ``AutoModelForSequenceClassification``
  with one label per known intent; the maximum softmax probability decides out-of-scope
  (:mod:`dialshift.ranking.open_world`; ``auto`` picks it for those configs).

Every scorer tokenizes each distinct string once, encodes the pairs once for all passes
(:meth:`Scorer.encode`), and scores them in length-sorted batches padded to the batch's longest row under
``torch.inference_mode()`` (:func:`dialshift.ranking.inference.run_batches`). ``quantize="int8"`` swaps every
``torch.nn.Linear`` for its int8 dynamically quantised version (CPU only; the opt-in fast path of ``--quantize``).
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from dialshift.errors import DialshiftError
from dialshift.models.metadata import MODEL_FILE

MODEL_TYPES = ("auto", "ranker", "cross-encoder", "bi-encoder", "causal-lm", "classifier")
QUANTIZATIONS = ("none", "int8")
SIMILARITIES = ("cos", "dot")
LENGTH_NORMS = ("chars", "tokens", "none")


@dataclass
class AdapterOptions:
    """The options of the adapters (``dialshift evaluate`` flags); ``None`` means the folder's or the default."""

    max_length: int | None = None  # cross-encoder / bi-encoder / causal-lm: tokens per input (default: the folder's)
    similarity: str = "cos"  # bi-encoder: cos | dot
    scale: float | None = None  # bi-encoder: logit = scale * similarity (default: 20 for cos, 1 for dot)
    length_norm: str = "chars"  # causal-lm: chars (lm-eval's acc_norm) | tokens | none (the plain sum)
    chat_template: bool = True  # causal-lm: use the tokenizer's chat template when it has one
    quantize: str = "none"  # none | int8 (dynamic quantisation of the Linear layers, CPU)
    extra: dict = field(default_factory=dict)


def detect_model_type(path) -> str:
    """``ranker``, ``cross-encoder``, ``bi-encoder`` or ``causal-lm`` from a model folder's files, or a one-line
    :class:`DialshiftError`: ``dialshift_model.json`` is a trained ranker; otherwise ``config.json``'s
    ``architectures`` decide (``*ForSequenceClassification``, ``*ForCausalLM``/``*LMHeadModel``, a bare encoder or a
    sentence-transformers folder)."""
    path = Path(path)
    if not path.is_dir():
        raise DialshiftError(f"{path}: model directory does not exist (train one with `accelerate launch -m "
                             "dialshift_trainers.ranker`, or give a Hugging Face model folder)")
    if (path / MODEL_FILE).is_file():
        return "ranker"
    config = path / "config.json"
    if not config.is_file():
        raise DialshiftError(f"{path}: not a dialshift ranker (no {MODEL_FILE}) nor a Hugging Face model folder (no "
                             "config.json); train one with `accelerate launch -m dialshift_trainers.ranker` or save a "
                             "model there with save_pretrained")
    try:
        architectures = json.loads(config.read_text()).get("architectures") or []
    except (json.JSONDecodeError, AttributeError) as error:
        raise DialshiftError(f"{config}: not a JSON object ({error})") from error
    if any(name.endswith("ForSequenceClassification") for name in architectures):
        return "cross-encoder"
    if any(name.endswith(("ForCausalLM", "LMHeadModel")) for name in architectures):
        return "causal-lm"
    if (path / "modules.json").is_file() or any(name.endswith("Model") for name in architectures):
        return "bi-encoder"
    raise DialshiftError(f"{config}: cannot tell the model type from architectures {architectures}; pass "
                         "--model-type cross-encoder, bi-encoder or causal-lm")


def refuse_classifier(model_type: str) -> None:
    if model_type == "classifier":
        raise DialshiftError("--model-type classifier scores open_world_intent configs (an intent head's MSP); for "
                             "response ranking and pairwise selection choose auto, ranker, cross-encoder, bi-encoder "
                             "or causal-lm")


def load_scorer(path, model_type: str = "auto", device=None, attn_implementation=None, precision: str = "fp32",
                options: AdapterOptions | None = None):
    """The scorer of a model folder (see the module docstring); ``model_type`` ``auto`` detects it."""
    options = options or AdapterOptions()
    if model_type not in MODEL_TYPES:
        raise DialshiftError(f"--model-type {model_type!r}: choose from {', '.join(MODEL_TYPES)}")
    detected = detect_model_type(path)
    model_type = detected if model_type == "auto" else model_type
    refuse_classifier(model_type)
    if model_type == "ranker":
        from dialshift.models.adapters.ranker import RankerScorer as scorer_class
    elif detected == "ranker":
        raise DialshiftError(f"{path}: a ranker trained by trainers/ranker.py; evaluate it with --model-type auto "
                             "or ranker")
    elif model_type == "cross-encoder":
        from dialshift.models.adapters.cross_encoder import CrossEncoderScorer as scorer_class
    elif model_type == "bi-encoder":
        from dialshift.models.adapters.bi_encoder import BiEncoderScorer as scorer_class
    else:
        from dialshift.models.adapters.causal_lm import CausalLMScorer as scorer_class
    return scorer_class.load(Path(path), device=device, attn_implementation=attn_implementation,
                             precision=precision, options=options)


def model_meta(path, model_type: str = "auto", options: AdapterOptions | None = None) -> dict:
    """What ``dialshift evaluate`` needs before loading: ``{"model_type", "max_length", "temperature", "seed",
    "backbone"}`` (a ranker's full ``dialshift_model.json`` plus ``model_type``)."""
    from dialshift.models.ranker import read_ranker_meta

    detected = detect_model_type(path)
    model_type = detected if model_type == "auto" else model_type
    refuse_classifier(model_type)
    if model_type == "ranker":
        return {**read_ranker_meta(path), "model_type": "ranker"}
    if detected == "ranker":
        raise DialshiftError(f"{path}: a ranker trained by trainers/ranker.py; evaluate it with --model-type auto "
                             "or ranker")
    if model_type not in MODEL_TYPES:
        raise DialshiftError(f"--model-type {model_type!r}: choose from {', '.join(MODEL_TYPES)}")
    from dialshift.models.adapters.common import folder_max_length

    options = options or AdapterOptions()
    return {"model_type": model_type, "backbone": str(path), "seed": None, "temperature": None,
            "max_length": options.max_length or folder_max_length(Path(path))}


def machine_threads() -> int:
    """The CPU threads worth using now: the CPUs this process may run on (its affinity mask, which containers and
    ``taskset`` narrow) less those other processes keep busy (the 1-minute load average), at least one. On a shared
    machine extra threads only wait for each other: on 2 busy cores one thread scored 1.5x the pairs/s of two
    (benchmarks/ranker.py --compare-cpu-paths); the logits do not depend on the thread count."""
    import os

    cpus = len(os.sched_getaffinity(0))
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, min(cpus, int(cpus - busy + 0.5)))


def set_threads(threads: int | None = None) -> int:
    """Set torch's CPU threads: ``threads``, else ``OMP_NUM_THREADS`` when set, else :func:`machine_threads`;
    return the number set."""
    import os

    import torch

    if threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "")
        threads = int(env) if env.isdigit() and int(env) > 0 else machine_threads()
    torch.set_num_threads(threads)
    return threads
