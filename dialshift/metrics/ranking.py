"""Response-ranking metrics: recall@k (R@k/C) and mean reciprocal rank.

The rank of the gold candidate is 1 + the number of candidates scored strictly higher, plus a share of the
candidates tied with it that depends on ``ties``:

* ``"pessimistic"`` (default): every tied candidate is ranked above the gold one, so a model that gives all
  candidates the same score gets no credit;
* ``"optimistic"``: every tied candidate is ranked below;
* ``"expected"``: the expectation under a uniformly random order of the tied candidates (recall@k is then the
  probability that the gold candidate lands in the top k, and the reciprocal rank is averaged over its positions).

A cut-off ``k`` larger than the number of candidates ``C`` is refused (``recall@k`` would be 1.0 whatever the
scores); ``k == C`` is allowed and gives 1.0.
"""

import numbers

import numpy as np

from dialshift.metrics._checks import (
    as_array,
    as_class_ids,
    check_choice,
    check_finite,
    check_same_length,
    cut,
    row_blocks,
)
from dialshift.metrics._weighted import weighted_mean, weighted_means

TIES = ("pessimistic", "optimistic", "expected")


def _check_ks(k) -> list[int]:
    if isinstance(k, numbers.Integral) and not isinstance(k, (bool, np.bool_)):
        ks = [k]
    elif isinstance(k, (list, tuple, np.ndarray, range)):
        ks = list(np.asarray(k).ravel()) if isinstance(k, np.ndarray) else list(k)
    else:
        raise ValueError(f"k must be a positive integer or a list of them, got {cut(k)}")
    if not ks:
        raise ValueError("k must name at least one cut-off")
    for value in ks:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"k must hold positive integers, got {cut(value)}")
    return [int(value) for value in ks]


def _checked_inputs(predictions, references):
    scores = as_array(predictions, "predictions", ndim=2)
    gold = as_class_ids(references, "references", n_classes=scores.shape[1])
    check_same_length(scores, gold, "predictions", "references")
    return scores, gold


def check_inputs(predictions, references):
    """Validate ``predictions`` (N x C finite scores) and ``references`` (gold indices) as :func:`recall_at_k` does.

    Used by the evaluate module before evaluate casts the inputs to its Arrow features.
    """
    scores, _ = _checked_inputs(predictions, references)
    for start, stop in row_blocks(*scores.shape):
        check_finite(np.asarray(scores[start:stop], dtype=np.float64), "predictions", start)


def gold_rank_counts(predictions, references):
    """Per example: the number of candidates scored above the gold one and the number tied with it (itself included)."""
    scores, gold = _checked_inputs(predictions, references)
    n = len(scores)
    above = np.empty(n, dtype=np.int64)
    tied = np.empty(n, dtype=np.int64)
    for start, stop in row_blocks(*scores.shape):
        block = np.asarray(scores[start:stop], dtype=np.float64)
        check_finite(block, "predictions", start)
        gold_scores = block[np.arange(stop - start), gold[start:stop]][:, None]
        np.sum(block > gold_scores, axis=1, out=above[start:stop])
        np.sum(block == gold_scores, axis=1, out=tied[start:stop])
    return above, tied


def ranking_compute(above, tied, ks, ties="pessimistic", weights=None, n_candidates=None) -> dict:
    """Recall@k for each cut-off in ``ks`` and the MRR from :func:`gold_rank_counts` (the ``_compute`` of
    :func:`recall_at_k`), each instance counted ``weights[i]`` times: floats, or arrays of ``R`` for ``R x N``
    weights. ``n_candidates`` bounds the harmonic numbers of ``ties="expected"`` (default: the largest rank)."""
    above, tied = np.asarray(above, dtype=np.int64), np.asarray(tied, dtype=np.int64)
    result = {}
    if ties == "expected":
        for cutoff in ks:
            result[f"recall@{cutoff}"] = weighted_mean(np.clip((cutoff - above) / tied, 0.0, 1.0), weights)
        # mean of 1/r for r in above+1 .. above+tied = (H(above + tied) - H(above)) / tied, H = harmonic numbers
        top = int(n_candidates if n_candidates is not None else (above + tied).max(initial=1))
        harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, top + 1))])
        reciprocal = (harmonic[above + tied] - harmonic[above]) / tied
    else:
        rank = above + (tied if ties == "pessimistic" else 1)
        means = weighted_means([*(rank <= cutoff for cutoff in ks), 1.0 / rank], weights)
        result.update({f"recall@{cutoff}": mean for cutoff, mean in zip(ks, means, strict=False)})
        result["mrr"] = means[-1]
        return result
    result["mrr"] = weighted_mean(reciprocal, weights)
    return result


def recall_at_k(predictions, references, k=(1, 2, 5), ties="pessimistic"):
    """Recall@k of the gold candidate among ``C`` scored candidates, and the mean reciprocal rank.

    Args:
        predictions: ``N x C`` candidate scores (any real numbers; higher = better; probabilities or logits).
        references: ``N`` gold candidate indices in ``[0, C)``.
        k: the cut-offs (an int or a list), each at most ``C``; ``k == C`` gives 1.0, and a cut-off above ``C``
            raises ``ValueError`` (it would give 1.0 whatever the scores, hiding a wrong candidate count).
        ties: ``"pessimistic"`` (default), ``"optimistic"`` or ``"expected"`` (see the module docstring).

    Returns:
        ``{"recall@1": ..., "recall@2": ..., "recall@5": ..., "mrr": ...}`` (one ``recall@k`` per cut-off).

    Raises:
        ValueError: NaN or inf scores, gold indices out of range or not integers, ragged rows, length mismatch,
            empty input, a cut-off that is not a positive integer or exceeds ``C``, or an unknown ``ties``.

    Example:
        >>> recall_at_k([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.4, 0.4, 0.2]], [1, 1, 0], k=[1, 2])
        {'recall@1': 0.3333333333333333, 'recall@2': 1.0, 'mrr': 0.6666666666666666}
    """
    ks = _check_ks(k)
    check_choice(ties, "ties", TIES)
    scores = as_array(predictions, "predictions", ndim=2)
    above, tied = gold_rank_counts(scores, references)  # bad data is reported before a bad cut-off
    n_candidates = scores.shape[1]
    too_large = [cutoff for cutoff in ks if cutoff > n_candidates]
    if too_large:
        raise ValueError(
            f"k = {too_large[0]} is larger than the {n_candidates} candidates per example (predictions has "
            f"{n_candidates} columns), so recall@{too_large[0]} would be 1.0 whatever the scores; "
            f"pass cut-offs of at most {n_candidates}, e.g. k={[c for c in ks if c <= n_candidates] or [1]}"
        )
    return ranking_compute(above, tied, ks, ties, n_candidates=n_candidates)

