"""Response-ranking metrics: recall@k (R@k/C) and mean reciprocal rank.

The rank of the gold candidate is 1 + the number of candidates scored strictly higher, plus a share of the
candidates tied with it that depends on ``ties``:

* ``"pessimistic"`` (default): every tied candidate is ranked above the gold one, so a model that gives all
  candidates the same score gets no credit;
* ``"optimistic"``: every tied candidate is ranked below;
* ``"expected"``: the expectation under a uniformly random order of the tied candidates (recall@k is then the
  probability that the gold candidate lands in the top k, and the reciprocal rank is averaged over its positions).
"""

import numpy as np
from scipy.special import digamma

from dialshift.metrics._checks import (
    as_array,
    as_class_ids,
    check_choice,
    check_finite,
    check_same_length,
    row_blocks,
)

TIES = ("pessimistic", "optimistic", "expected")


def _check_ks(k) -> list[int]:
    ks = [k] if isinstance(k, (int, np.integer)) and not isinstance(k, bool) else list(k)
    if not ks:
        raise ValueError("k must name at least one cut-off")
    for value in ks:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"k must hold positive integers, got {value!r}")
    return [int(value) for value in ks]


def gold_rank_counts(predictions, references):
    """Per example: the number of candidates scored above the gold one and the number tied with it (itself included)."""
    scores = as_array(predictions, "predictions", ndim=2)
    gold = as_class_ids(references, "references", n_classes=scores.shape[1])
    check_same_length(scores, gold, "predictions", "references")
    n = len(scores)
    above = np.empty(n, dtype=np.int64)
    tied = np.empty(n, dtype=np.int64)
    for start, stop in row_blocks(n):
        block = np.asarray(scores[start:stop], dtype=np.float64)
        check_finite(block, "predictions", start)
        gold_scores = block[np.arange(stop - start), gold[start:stop]][:, None]
        np.sum(block > gold_scores, axis=1, out=above[start:stop])
        np.sum(block == gold_scores, axis=1, out=tied[start:stop])
    return above, tied


def recall_at_k(predictions, references, k=(1, 2, 5), ties="pessimistic"):
    """Recall@k of the gold candidate among ``C`` scored candidates, and the mean reciprocal rank.

    Args:
        predictions: ``N x C`` candidate scores (any real numbers; higher = better; probabilities or logits).
        references: ``N`` gold candidate indices in ``[0, C)``.
        k: the cut-offs (an int or a list); a cut-off at or above ``C`` gives 1.0.
        ties: ``"pessimistic"`` (default), ``"optimistic"`` or ``"expected"`` (see the module docstring).

    Returns:
        ``{"recall@1": ..., "recall@2": ..., "recall@5": ..., "mrr": ...}`` (one ``recall@k`` per cut-off).

    Example:
        >>> recall_at_k([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.4, 0.4, 0.2]], [1, 1, 0], k=[1, 2])
        {'recall@1': 0.3333333333333333, 'recall@2': 1.0, 'mrr': 0.6666666666666666}
    """
    ks = _check_ks(k)
    check_choice(ties, "ties", TIES)
    above, tied = gold_rank_counts(predictions, references)
    result = {}
    if ties == "expected":
        for cut in ks:
            result[f"recall@{cut}"] = float(np.mean(np.clip((cut - above) / tied, 0.0, 1.0)))
        # mean of 1/r for r in above+1 .. above+tied = (H(above + tied) - H(above)) / tied, H = harmonic numbers
        reciprocal = (digamma(above + tied + 1) - digamma(above + 1)) / tied
    else:
        rank = above + (tied if ties == "pessimistic" else 1)
        for cut in ks:
            result[f"recall@{cut}"] = float(np.mean(rank <= cut))
        reciprocal = 1.0 / rank
    result["mrr"] = float(np.mean(reciprocal))
    return result
