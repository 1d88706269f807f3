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


def das_ratio(attention_scores, distractor_mask, includes_query=False, skip_undefined=False):
    """Distracting attention score ratio (eq. 8): the per-dialogue ratio of mean distractor AS to mean History AS,
    averaged over dialogues. Lower is better (less attention to distractions).

    Args:
        attention_scores: per dialogue, the AS (eq. 7) of each context utterance except the Query, in order; with
            ``includes_query=True`` each list also ends with the Query's AS, which is ignored.
        distractor_mask: per dialogue, one flag per non-Query utterance: 1 = distracting, 0 = original History.
        includes_query: whether each ``attention_scores`` list ends with the Query's AS.
        skip_undefined: skip dialogues without a distractor, without a History utterance or with zero History
            attention (their ratio is undefined) instead of raising ``ValueError``; the count used is reported.

    Returns:
        ``{"das_ratio", "mean_as_distractor", "mean_as_history", "n_dialogues"}``: the means of the per-dialogue
        mean AS of the distracting and of the History utterances (the "DAS" and "Avg." columns of Xing and Gulla's
        Table 4), over the same dialogues as the ratio.

    Example:
        >>> das_ratio([[0.5, 1.0, 1.5], [0.4, 0.8]], [[1, 0, 0], [0, 1]])
        {'das_ratio': 1.2, 'mean_as_distractor': 0.65, 'mean_as_history': 0.825, 'n_dialogues': 2}
    """
    distractor_means, history_means = [], []
    for row, (scores, mask) in enumerate(_dialogue_rows(attention_scores, distractor_mask)):
        values, distracting = _dialogue(scores, mask, row, includes_query)
        problem = None
        if not distracting.any():
            problem = "has no distracting utterance (no 1 in distractor_mask)"
        elif distracting.all():
            problem = "has no History utterance (no 0 in distractor_mask)"
        elif values[~distracting].mean() == 0:
            problem = "gives zero attention to every History utterance"
        if problem:
            if skip_undefined:
                continue
            raise ValueError(
                f"dialogue {row} {problem}, so its DAS ratio is undefined; "
                "remove such dialogues or pass skip_undefined=True"
            )
        distractor_means.append(values[distracting].mean())
        history_means.append(values[~distracting].mean())
    if not distractor_means:
        raise ValueError("no dialogue has both distracting and History utterances: the DAS ratio is undefined")
    distractor_means, history_means = np.array(distractor_means), np.array(history_means)
    return {
        "das_ratio": float(np.mean(distractor_means / history_means)),
        "mean_as_distractor": float(distractor_means.mean()),
        "mean_as_history": float(history_means.mean()),
        "n_dialogues": len(distractor_means),
    }
