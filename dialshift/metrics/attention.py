"""Context attention distribution: attention scores (AS, eq. 7) and the DAS ratio (eq. 8) of Xing and Gulla (2022).

A context holds ``q`` utterances; the last one is the *Query*, the others are the *History*, into which the
distracting test inserts distracting utterances. AS(H_k) is the attention an utterance receives, scaled so that an
utterance receiving an average share of the attention scores 1.0 (100%):

* non-hierarchical models attend over the ``m`` context tokens at every decoding step ``t``:
  ``AS(H_k) = scale * mean_t(sum of the attention weights of H_k's tokens)``;
* static attention (hierarchical) attends over the ``q`` utterance vectors once, from the Query vector ``H_q``:
  ``AS(H_k) = q * softmax_k(H_k . H_q)``;
* dynamic attention (hierarchical) attends over the utterance vectors at every decoding step:
  ``AS(H_k) = q * mean_t(softmax_k(H_k . h_t))``.

Eq. 7 as printed is ambiguous in two places, and we choose:

* its dynamic case reads ``q exp(H_k . h_q) / sum_k exp(H_k . h_t)``; we read it as the decoder-step mean of the
  dynamic attention weights, the only reading consistent with eq. 5;
* its non-hierarchical case prints the factor ``m / q``, which makes an utterance with an average share of the
  attention score ``m_k / q`` (its token count over q), not the "approximately 100%" the text states and the
  ~90% History averages of Table 3 show. ``scale="utterances"`` (default) uses the factor ``q``, which gives
  exactly 100% to an average share; ``scale="as_printed"`` uses ``m / q``. Both factors are constant within a
  dialogue, so the DAS ratio is the same either way; only ``mean_as_*`` change.

The helpers take the attention weights a model produced (softmax outputs, each row summing to 1), not logits.
"""

import numpy as np

from dialshift.metrics._checks import (
    SUM_TOLERANCE,
    as_array,
    check_choice,
    check_finite,
    check_probabilities,
    cut,
)
from dialshift.metrics._weighted import masked_mean

SCALES = ("utterances", "as_printed")


def _attention_weights(weights, name="weights", ndim=2) -> np.ndarray:
    array = as_array(weights, name, ndim=ndim).astype(np.float64, copy=False)
    check_probabilities(np.atleast_2d(array), name, tolerance=SUM_TOLERANCE)
    return array


def attention_scores_non_hierarchical(weights, utterance_lengths, scale="utterances") -> np.ndarray:
    """AS of each context utterance for a non-hierarchical (token-level) attention model.

    Args:
        weights: ``T x m`` attention weights, one row per decoding step over the ``m`` context tokens.
        utterance_lengths: the token count of each of the ``q`` context utterances, in order (summing to ``m``).
        scale: ``"utterances"`` (factor ``q``, default) or ``"as_printed"`` (factor ``m / q``); see the module doc.

    Returns:
        ``q`` attention scores, the Query's last.

    Example:
        >>> attention_scores_non_hierarchical([[0.1, 0.1, 0.2, 0.6], [0.2, 0.2, 0.2, 0.4]], [2, 1, 1])
        array([0.9, 0.6, 1.5])
    """
    check_choice(scale, "scale", SCALES)
    attention = _attention_weights(weights)
    lengths = as_array(utterance_lengths, "utterance_lengths", ndim=1)
    if not np.issubdtype(lengths.dtype, np.integer) or (lengths < 1).any():
        raise ValueError(f"utterance_lengths must be positive integers, got {lengths.tolist()}")
    n_tokens, n_utterances = attention.shape[1], len(lengths)
    if lengths.sum() != n_tokens:
        raise ValueError(
            f"utterance_lengths sum to {lengths.sum()} tokens but weights has {n_tokens} columns (one per token)"
        )
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    per_utterance = np.add.reduceat(attention, starts, axis=1).mean(axis=0)
    factor = n_utterances if scale == "utterances" else n_tokens / n_utterances
    return factor * per_utterance


def attention_scores_static(weights) -> np.ndarray:
    """AS of each context utterance for static attention: ``q`` times the Query's attention over the utterances.

    Args:
        weights: the ``q`` attention weights over the context utterances (computed once from the Query vector).

    Example:
        >>> attention_scores_static([0.1, 0.2, 0.7])
        array([0.3, 0.6, 2.1])
    """
    attention = _attention_weights(weights, ndim=1)
    return len(attention) * attention


def attention_scores_dynamic(weights) -> np.ndarray:
    """AS of each context utterance for dynamic attention: ``q`` times the decoder-step mean of the weights.

    Args:
        weights: ``T x q`` attention weights, one row per decoding step over the ``q`` context utterances.

    Example:
        >>> attention_scores_dynamic([[0.1, 0.2, 0.7], [0.3, 0.2, 0.5]])
        array([0.6, 0.6, 1.8])
    """
    attention = _attention_weights(weights)
    return attention.shape[1] * attention.mean(axis=0)


def _dialogue_arrays(scores, mask, row: int):
    """One dialogue's AS list and distractor flags as float64 / bool arrays, or a ValueError naming the row."""
    arrays = []
    for name, value in (("attention_scores", scores), ("distractor_mask", mask)):
        array = None
        if not isinstance(value, (str, bytes, dict, set)) and hasattr(value, "__len__"):
            try:
                array = np.asarray(value)
            except (TypeError, ValueError, OverflowError):
                pass
        if array is None or array.dtype.kind not in "biuf":
            raise ValueError(f"{name}[{row}] must be a list of numbers, got {cut(value)}")
        arrays.append(array)
    values, flags = arrays[0].astype(np.float64), arrays[1]
    if values.ndim != 1 or flags.ndim != 1:
        raise ValueError(f"attention_scores[{row}] and distractor_mask[{row}] must be flat lists (one per utterance)")
    check_finite(values[None, :], "attention_scores", row)
    if (values < 0).any():
        raise ValueError(f"attention_scores[{row}] has a negative attention score: {cut(values.tolist())}")
    if not np.isin(flags, (0, 1)).all():
        raise ValueError(
            f"distractor_mask[{row}] must hold 0 (History) or 1 (distracting), got {cut(np.asarray(mask).tolist())}"
        )
    return values, flags.astype(bool)


def _dialogue_rows(attention_scores, distractor_mask):
    for name, value in (("attention_scores", attention_scores), ("distractor_mask", distractor_mask)):
        if value is None:
            raise ValueError(f"{name} is missing: attention_scores and distractor_mask are both required")
        if isinstance(value, (str, bytes, dict, set)) or not hasattr(value, "__len__"):
            raise ValueError(f"{name} must be a list with one list per dialogue, got a {type(value).__name__}")
    if len(attention_scores) != len(distractor_mask):
        raise ValueError(
            f"attention_scores has {len(attention_scores)} dialogues but distractor_mask has {len(distractor_mask)}"
        )
    if len(attention_scores) == 0:
        raise ValueError("attention_scores is empty: nothing to evaluate")
    return zip(attention_scores, distractor_mask, strict=True)


def check_dialogue_inputs(attention_scores, distractor_mask):
    """Validate per-dialogue AS lists and distractor masks as :func:`das_ratio` does, except the length check that
    depends on ``includes_query`` (its evaluate module calls this before evaluate casts the masks to integers)."""
    for row, (scores, mask) in enumerate(_dialogue_rows(attention_scores, distractor_mask)):
        _dialogue_arrays(scores, mask, row)


def _dialogue(scores, mask, row: int, includes_query: bool):
    values, flags = _dialogue_arrays(scores, mask, row)
    if includes_query:
        values = values[:-1]
    if len(values) != len(flags):
        hint = (
            " (with includes_query=True the last score is the Query's and is dropped)"
            if includes_query
            else " (leave the Query out of both, or pass includes_query=True if the last score is the Query's)"
        )
        raise ValueError(
            f"attention_scores[{row}] has {len(values)} History scores but distractor_mask[{row}] has "
            f"{len(flags)} flags{hint}"
        )
    return values, flags


def das_stats(attention_scores, distractor_mask, includes_query=False) -> dict:
    """Per-dialogue statistics of the DAS ratio (the ``_update`` of :func:`das_ratio`; validates every dialogue):
    ``distractor`` and ``history``, the mean AS of the distracting and of the History utterances, and
    ``first_history`` and ``last_history``, the AS of the first and of the last original History utterance (the
    "1st" and "Last" columns of Xing and Gulla's Tables 5-6, read as the first/last utterance that is not a
    distraction); NaN where a dialogue has none."""
    rows = list(_dialogue_rows(attention_scores, distractor_mask))
    stats = {key: np.full(len(rows), np.nan) for key in ("distractor", "history", "first_history", "last_history")}
    for row, (scores, mask) in enumerate(rows):
        values, distracting = _dialogue(scores, mask, row, includes_query)
        if distracting.any():
            stats["distractor"][row] = values[distracting].mean()
        if not distracting.all():
            original = values[~distracting]
            stats["history"][row] = original.mean()
            stats["first_history"][row], stats["last_history"][row] = original[0], original[-1]
    return stats


def das_kinds(stats: dict):
    """``(rated, starved)`` boolean masks of the dialogues of :func:`das_stats`.

    *Rated*: the dialogue has distracting and History utterances and a finite ratio. *History-starved*: it has both
    kinds, but its History gets zero attention, or so little that the ratio overflows float64 (History AS below
    about 1e-308 times the distractor AS): its ratio is +inf, the worst case, which no mean of ratios can hold.
    Such dialogues are never dropped silently: :func:`das_compute` reports their share beside the ratio."""
    distractor, history = stats["distractor"], stats["history"]
    both = np.isfinite(distractor) & np.isfinite(history)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ratio = distractor / np.where(both, history, 1.0)
    rated = both & np.isfinite(ratio) & (history > 0)
    return rated, both & ~rated


def das_compute(stats: dict, weights=None) -> dict:
    """DAS ratio of :func:`das_stats` with each dialogue counted ``weights[i]`` times (the ``_compute`` of
    :func:`das_ratio`): floats, or arrays of ``R`` for ``R x N`` weights.

    Returns ``das_ratio`` (mean over the rated dialogues of distractor AS / History AS), ``mean_as_distractor`` and
    ``mean_as_history`` (over the same dialogues), ``das_ratio_of_means`` (their ratio), ``history_starved`` (the
    share of the dialogues with both kinds of utterance whose History gets no attention: ratio +inf, see
    :func:`das_kinds`) and the (weighted) counts ``n_dialogues`` (rated), ``n_history_starved`` and
    ``n_undefined`` (dialogues without a distracting or without a History utterance).
    """
    rated, starved = das_kinds(stats)
    distractor, history = stats["distractor"], stats["history"]
    counts = np.ones(len(rated)) if weights is None else np.asarray(weights, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ratio = np.where(rated, distractor / np.where(rated, history, 1.0), 0.0)
        result = {"das_ratio": masked_mean(ratio, rated, weights),
                  "mean_as_distractor": masked_mean(distractor, rated, weights),
                  "mean_as_history": masked_mean(history, rated, weights)}
        result["das_ratio_of_means"] = result["mean_as_distractor"] / result["mean_as_history"]
        n_rated, n_starved = counts[..., rated].sum(axis=-1), counts[..., starved].sum(axis=-1)
        result["history_starved"] = n_starved / (n_rated + n_starved)
    result["n_dialogues"] = n_rated
    result["n_history_starved"] = n_starved
    result["n_undefined"] = counts[..., ~(rated | starved)].sum(axis=-1)
    return {key: float(value) if np.ndim(value) == 0 else value for key, value in result.items()}


def das_ratio(attention_scores, distractor_mask, includes_query=False, skip_undefined=False):
    """Distracting attention score ratio (eq. 8): the per-dialogue ratio of mean distractor AS to mean History AS,
    averaged over dialogues. Lower is better (less attention to distractions).

    Args:
        attention_scores: per dialogue, the AS (eq. 7) of each context utterance except the Query, in order; with
            ``includes_query=True`` each list also ends with the Query's AS, which is ignored.
        distractor_mask: per dialogue, one flag per non-Query utterance: 1 = distracting, 0 = original History.
        includes_query: whether each ``attention_scores`` list ends with the Query's AS.
        skip_undefined: leave out of the ratio the dialogues without a distractor or without a History utterance,
            and those whose History gets zero attention (ratio +inf: counted in ``n_history_starved`` and
            ``history_starved``, never dropped silently), instead of raising ``ValueError``.

    Returns:
        ``{"das_ratio", "mean_as_distractor", "mean_as_history", "n_dialogues", "n_history_starved",
        "history_starved"}``: the means of the per-dialogue mean AS of the distracting and of the History utterances
        (the "DAS" and "Avg." columns of Xing and Gulla's Table 4), over the dialogues of the ratio; the number of
        History-starved dialogues and their share among the dialogues with both kinds of utterance.

    Example:
        >>> das_ratio([[0.5, 1.0, 1.5], [0.4, 0.8]], [[1, 0, 0], [0, 1]])
        {'das_ratio': 1.2, 'mean_as_distractor': 0.65, 'mean_as_history': 0.825, 'n_dialogues': 2, \
'n_history_starved': 0, 'history_starved': 0.0}
    """
    stats = das_stats(attention_scores, distractor_mask, includes_query)
    rated, starved = das_kinds(stats)
    if not skip_undefined and not rated.all():
        row = int(np.flatnonzero(~rated)[0])
        if starved[row]:
            problem = "gives zero attention to every History utterance (ratio +inf)"
        elif np.isnan(stats["distractor"][row]):
            problem = "has no distracting utterance (no 1 in distractor_mask)"
        else:
            problem = "has no History utterance (no 0 in distractor_mask)"
        raise ValueError(
            f"dialogue {row} {problem}, so its DAS ratio is undefined; "
            "remove such dialogues or pass skip_undefined=True"
        )
    if not rated.any() and not starved.any():
        raise ValueError("no dialogue has both distracting and History utterances: the DAS ratio is undefined")
    result = das_compute(stats)
    return {
        "das_ratio": result["das_ratio"],
        "mean_as_distractor": result["mean_as_distractor"],
        "mean_as_history": result["mean_as_history"],
        "n_dialogues": int(result["n_dialogues"]),
        "n_history_starved": int(result["n_history_starved"]),
        "history_starved": result["history_starved"],
    }
