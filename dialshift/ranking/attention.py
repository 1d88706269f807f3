"""Per-utterance attention of the transformer response ranker, for the DAS ratio (Xing and Gulla 2022).

Beyond the paper: the distracting tests of context attention distribution applied to the cross-encoder
ranker of :mod:`dialshift.models.ranker` instead of an LSTM seq2seq model. Rule:

* input: the pair (context, **gold response**) encoded exactly as the ranker encodes it for scoring —
  ``[CLS] u_1 [SEP] ... [SEP] u_n [SEP] r [SEP]``, token types 0 then 1, the ranker's ``max_length``, the oldest
  context tokens cut first (:class:`dialshift.models.ranker.PairEncoder`);
* attention: the rule of :mod:`dialshift.models.importance` (its :func:`~dialshift.models.importance.cls_attention`):
  the **last layer**, the attention row of the ``[CLS]`` query, **averaged over all heads**, eager attention, fp32;
* per utterance: AS(u_i) = the **sum** of the attention ``[CLS]`` pays to u_i's sub-tokens. ``[SEP]`` tokens, ``[CLS]``
  itself and the response's tokens belong to no utterance and are **not** counted (so a context's AS sum to less than
  1); an utterance cut by truncation keeps the attention of its surviving sub-tokens, one cut away entirely (or with
  no sub-token) gets 0.0;
* every context utterance gets its AS, the Query (the last one) included: the distracting configs declare
  ``includes_query``, so the DAS ratio ignores the last value of each line.

``dialshift evaluate --attention`` (:func:`evaluate_attention`) runs it on the ``attention_distribution`` configs of a
dataset folder and writes ``OUT/attention/predictions/<config>.jsonl`` (``{"id", "attention_scores"}``, the
``attention_distribution`` task's format) with ``run.json``, then scores them with :mod:`dialshift.scoring` into
``OUT/attention/results.json`` and ``results.md`` — what ``dialshift score OUT/attention/predictions --dataset D``
gives.
"""


from dialshift import __version__
from dialshift.errors import DialshiftError

TASK = "attention_distribution"
METHOD = "attention"
COLUMNS = ("id", "context", "response")
RULE = ("AS(u_i) = sum of the last layer's [CLS]-row attention (mean over heads, eager, fp32) over u_i's sub-tokens, "
        "on the ranker's own encoding of (context, gold response); [SEP], [CLS] and response tokens count for no "
        "utterance; one value per context utterance, the Query last")


def utterance_owners(turn_ids, sep_id: int, input_ids, first: int) -> list[int | None]:
    """The context utterance each position of an encoded pair belongs to (``None``: ``[CLS]``, ``[SEP]``, response).

    ``turn_ids``: the sub-token ids of each context utterance; ``input_ids``, ``first``: the pair as
    :meth:`dialshift.models.ranker.PairEncoder.encode` returns it. The encoder follows every turn before the last
    non-empty one with ``[SEP]`` and keeps the most recent ``first - 2`` context tokens; the result is checked against
    ``input_ids``, so a change of the encoder cannot silently misattribute attention.
    """
    last = max((t for t, ids in enumerate(turn_ids) if ids), default=-1)
    joined, owners = [], []
    for t, ids in enumerate(turn_ids):
        joined.extend(ids)
        owners.extend([t] * len(ids))
        if t < last:
            joined.append(sep_id)
            owners.append(None)
    kept = first - 2
    joined, owners = joined[len(joined) - kept:], owners[len(owners) - kept:]
    if joined != list(input_ids[1:first - 1]):
        raise RuntimeError("utterance_owners: the context tokens differ from PairEncoder.encode's; update "
                           "dialshift.ranking.attention to the encoder's layout")
    return [None, *owners, *([None] * (len(input_ids) - first + 1))]


def utterance_attention(ranker_dir, contexts, responses, *, batch_size: int = 32, layer: int = -1, device=None,
                        progress: bool = True) -> list[list[float]]:
    """AS of every context utterance (module docstring rule) for each pair ``(contexts[i], responses[i])``.

    Args:
        ranker_dir: a ranker folder written by ``trainers/ranker.py``.
        contexts: per pair, the context utterances (strings), oldest first, the Query last.
        responses: per pair, the response whose pair with the context is encoded (the gold one for the DAS ratio).
        batch_size: pairs per forward pass.
        layer: which layer's attention to read (default: the last).
        device: torch device (default: CPU).
        progress: show a progress bar.

    Returns one list per pair with one float per context utterance (same lengths as ``contexts``).
    """
    from dialshift.models.importance import cls_attention
    from dialshift.models.ranker import load_ranker

    contexts = [[str(turn) for turn in context] for context in contexts]
    if len(contexts) != len(responses):
        raise ValueError(f"{len(contexts)} contexts for {len(responses)} responses")
    ranker = load_ranker(ranker_dir, device=device, attn_implementation="eager")
    encoder, tokenizer = ranker.encoder, ranker.tokenizer
    encoded = encoder.encode_pairs(zip(map(tuple, contexts), map(str, responses), strict=True))
    texts = list(dict.fromkeys(turn for context in contexts for turn in context))
    ids = dict(zip(texts, tokenizer(texts, add_special_tokens=False, truncation=False)["input_ids"], strict=True)) \
        if texts else {}
    owners = [utterance_owners([ids[turn] for turn in context], encoder.sep_id, pair_ids, first)
              for context, (pair_ids, first) in zip(contexts, encoded, strict=True)]
    result = [[0.0] * len(context) for context in contexts]
    rows = cls_attention(ranker.model, [pair_ids for pair_ids, _ in encoded], encoder.pad_id,
                         first_segment_lengths=[first for _, first in encoded], batch_size=batch_size, layer=layer,
                         progress=progress, desc="utterance attention", unit="pair")
    for r, weights in rows:
        for position, owner in enumerate(owners[r]):
            if owner is not None:
                result[r][owner] += float(weights[position])
    return result


# ------------------------------------------------------------------------------------ dialshift evaluate --attention


def read_rows(folder, config: str, split: str, max_instances: int | None, seed: int, files: dict) -> dict:
    """Columns ``id, context, response`` of one config split, subsampled as the scorer subsamples the gold."""
    from dialshift.ranking.data import read_columns

    table = read_columns(folder, config, split, COLUMNS, max_instances, seed, files,
                         hint=f"; is config {config!r} a distracting-test config?")
    return {name: table.column(name).to_pylist() for name in COLUMNS}


def attention_configs(settings) -> list[str]:
    """The configs ``--attention`` runs on: those matching ``--configs`` (default: every ``attention_distribution``
    config of the folder), each of which must be an ``attention_distribution`` config."""
    from dialshift.configs import expand_patterns
    from dialshift.hub.reading import folder_configs

    typed = folder_configs(settings.dataset)
    if settings.patterns:
        names = expand_patterns(settings.patterns, list(typed), hint="the dataset's configs")
    else:
        names = [name for name, config in typed.items() if config.task == TASK]
        if not names:
            raise DialshiftError(f"{settings.dataset}: no {TASK} config (build the distracting family: `dialshift "
                                 "build --config 'dailydialog_distract_*'`)")
    for name in names:
        if typed[name].task != TASK:
            raise DialshiftError(f"{settings.dataset}: config {name!r} is a {typed[name].task} config; `dialshift "
                                 f"evaluate --attention` reads {TASK} configs (drop --attention to rank it)")
    return names


def evaluate_attention(settings) -> dict:
    """``dialshift evaluate --attention``: the ranker's per-utterance attention on the ``attention_distribution``
    configs -> ``OUT/attention/predictions`` -> scored by :mod:`dialshift.scoring`; return ``results.json``'s
    content. ``settings``: a :class:`dialshift.ranking.evaluation.EvaluationSettings` (its first model dir)."""
    import torch

    from dialshift.hub.reading import data_files
    from dialshift.io import write_json_atomic
    from dialshift.models.ranker import read_ranker_meta
    from dialshift.ranking.settings import check_scoring_options, scoring_settings
    from dialshift.scoring import check_output_dir, score_directory, write_results
    from dialshift.scoring.pipeline import RESULTS_WRITES, RUN_FILE, claim_output_dir, record_output_dir
    from dialshift.scoring.predictions import write_predictions

    method_writes = (*RESULTS_WRITES, RUN_FILE, "predictions")
    # OUT holds OUT/attention; refused, like plain evaluate, when it holds results of the user's (a later `score
    # --out OUT` or `evaluate --out OUT` writes OUT/results.md)
    top_writes = (*RESULTS_WRITES, METHOD)
    settings.out_dir = check_output_dir(settings.out_dir, writes=top_writes)
    check_output_dir(settings.out_dir / METHOD, writes=method_writes)
    check_scoring_options(settings)
    if len(settings.model_dirs) != 1:
        raise DialshiftError(f"--attention reads the attention of one ranker; got {len(settings.model_dirs)} "
                             "--model-dir (run once per ranker)")
    if list(settings.methods) != ["vanilla"]:
        raise DialshiftError("--attention reads the deterministic ranker's attention; drop --method")
    if settings.precision not in ("auto", "fp32") or settings.attn not in ("auto", "eager"):
        raise DialshiftError("--attention runs in fp32 with eager attention (the attention weights need it); drop "
                             "--precision/--attn")
    model_dir = settings.model_dirs[0]
    meta = read_ranker_meta(model_dir)
    names = attention_configs(settings)
    files = data_files(settings.dataset)
    data = {name: read_rows(settings.dataset, name, settings.split, settings.max_instances, settings.sample_seed,
                            files) for name in names}
    empty = [name for name, rows in data.items() if not rows["id"]]
    if empty:
        raise DialshiftError(f"{settings.dataset}: config {empty[0]!r} has no {settings.split!r} instances")

    index: dict[tuple, int] = {}  # distinct (context, response) pairs, scored once across configs
    rows = {name: [index.setdefault((tuple(c), r), len(index)) for c, r in zip(d["context"], d["response"],
                                                                                 strict=True)]
            for name, d in data.items()}
    pairs = list(index)
    device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
    scores = utterance_attention(model_dir, [c for c, _ in pairs], [r for _, r in pairs],
                                 batch_size=settings.batch_size or 64, device=device, progress=settings.progress)

    claim_output_dir(settings.out_dir, "dialshift evaluate --attention", writes=top_writes)
    method_dir = claim_output_dir(settings.out_dir / METHOD, "dialshift evaluate --attention", writes=method_writes)
    folder = method_dir / "predictions"
    for name, d in data.items():
        write_predictions(folder / f"{name}.jsonl", "attention_distribution", d["id"],
                          {"attention_scores": [scores[p] for p in rows[name]]}, digits={"attention_scores": 8})
    scoring = scoring_settings(settings)
    scoring.progress = settings.progress
    run = {"model": meta.get("backbone"), "model_dirs": [str(model_dir)], "method": METHOD, "seeds": [meta.get("seed")],
           "dialshift_version": __version__, "max_length": meta["max_length"], "attention": RULE, **settings.extra}
    write_json_atomic(folder / RUN_FILE, {"run": run, "scoring": scoring.describe()})
    document = score_directory(folder, scoring)
    write_results(method_dir, document, plots=settings.plots)
    record_output_dir(method_dir, method_writes)
    record_output_dir(settings.out_dir, top_writes)
    return document

