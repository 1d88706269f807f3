"""Open-world intent classification metrics: open-world F1 and out-of-scope (OOD) detection.

``open_world_f1`` follows Shu et al. (2017), Lin and Xu (2019) and Khosla and Gangadharaiah (2023): the K known
intents and the out-of-scope class form one K+1-class problem; F1 is computed per class from the K+1 confusion
matrix (an in-scope example predicted out-of-scope is a false negative of its intent), ``f1_in`` is the macro mean
over the known classes, ``f1_out`` the F1 of the out-of-scope class and ``f1_all`` the macro mean over all K+1.
A class whose F1 is undefined (no gold and no predicted example: 2 TP + FP + FN = 0) scores 0, as with
``sklearn.metrics.f1_score(zero_division=0)`` and TEXTOIR. A test split with no out-of-scope example gives
``f1_out = 0`` (counted in ``f1_all``) with an :class:`UndefinedMetricWarning` instead of an error, so a per-config
score never stops a leaderboard run.

``ood_detection`` treats in-domain as the positive class for ``auroc``, ``aupr_in`` and ``fpr@95tpr`` (Hendrycks
and Gimpel, 2017), and out-of-scope as the positive class, scored by the negated in-domain score, for ``aupr_out``.
All three areas come from one sort of the scores; they equal ``sklearn.metrics.roc_auc_score`` and
``average_precision_score`` (tested to 1e-9 in ``tests/test_metrics_parity.py``).
"""

import numbers
import warnings

import numpy as np

from dialshift.metrics._checks import (
    UndefinedMetricWarning,
    as_array,
    as_class_ids,
    check_class_id,
    check_finite,
    check_same_length,
    cut,
    first_bad_row,
)
from dialshift.metrics._weighted import as_weights, weighted_mean


def check_label_inputs(predictions, references):
    """Validate predicted and gold label ids as :func:`open_world_f1` does (its evaluate module calls this first)."""
    predicted = as_class_ids(predictions, "predictions")
    gold = as_class_ids(references, "references")
    check_same_length(predicted, gold, "predictions", "references")
    return predicted, gold


def open_world_f1(predictions, references, oos_label=None, labels=None, weights=None):
    """Macro F1 over known classes (``f1_in``), F1 of the out-of-scope class (``f1_out``), both (``f1_all``), accuracy.

    Args:
        predictions: ``N`` predicted label ids (the out-of-scope prediction is ``oos_label``).
        references: ``N`` gold label ids.
        oos_label: the id of the out-of-scope class (required).
        labels: the known (in-scope) class ids. Default: every id other than ``oos_label`` that occurs in
            ``references`` or ``predictions`` (as ``sklearn.metrics.f1_score`` does). A class with no gold and no
            predicted example has F1 0 (sklearn's ``zero_division=0``).
        weights: optional ``N`` counts, example ``i`` counted ``weights[i]`` times (a bootstrap resample): the same
            result as on the explicitly resampled copy, including the default ``labels``, which then come from the
            examples with a positive weight.

    Returns:
        ``{"f1_all", "f1_in", "f1_out", "accuracy"}``. With no out-of-scope example in ``references``, ``f1_out``
        is 0 (its true value if some example is predicted out-of-scope; undefined otherwise) and counts as 0 in
        ``f1_all``, and an :class:`UndefinedMetricWarning` is issued; with no known class at all, ``f1_in`` is 0
        with the same warning.

    Raises:
        ValueError: ids that are not integers, a length mismatch, empty input, ids outside ``labels`` and
            ``oos_label``, or a bad ``oos_label`` / ``labels``.

    Example:
        >>> result = open_world_f1([0, 1, 2, 2, 1], [0, 1, 1, 2, 2], oos_label=2)
        >>> {key: round(value, 4) for key, value in result.items()}
        {'f1_all': 0.6667, 'f1_in': 0.75, 'f1_out': 0.5, 'accuracy': 0.6}
    """
    if oos_label is None:
        raise ValueError("oos_label must be the integer id of the out-of-scope class, got None")
    oos_label = check_class_id(oos_label, "oos_label")
    predicted, gold = check_label_inputs(predictions, references)
    counts = None if weights is None else as_weights(weights, len(gold))
    if counts is not None:
        if counts.ndim != 1:
            raise ValueError(f"weights must be one count per example, got shape {counts.shape}")
        drawn = counts > 0
        predicted, gold, counts = predicted[drawn], gold[drawn], counts[drawn]
    if labels is None:
        known = np.setdiff1d(np.union1d(gold, predicted), [oos_label])
    else:
        known = as_class_ids(labels, "labels")
        if np.any(known == oos_label):
            raise ValueError(f"labels must list the known classes only, but it contains oos_label={oos_label}")
        if len(np.unique(known)) != len(known):
            raise ValueError("labels contains duplicate class ids")
        allowed = np.append(known, oos_label)
        for name, values in (("references", gold), ("predictions", predicted)):
            outside = ~np.isin(values, allowed)
            if outside.any():
                row = first_bad_row(outside)
                raise ValueError(f"{name}[{row}] = {values[row]} is neither in labels nor oos_label={oos_label}")
    classes = np.append(np.sort(known), oos_label).astype(np.int64)
    order = np.argsort(classes)
    n_classes = len(classes)
    gold_index, predicted_index = (order[np.searchsorted(classes[order], values)] for values in (gold, predicted))
    confusion = np.bincount(gold_index * n_classes + predicted_index, weights=counts, minlength=n_classes**2)
    confusion = confusion.reshape(n_classes, n_classes)
    true_positives = np.diag(confusion).astype(np.float64)
    denominator = confusion.sum(axis=0) + confusion.sum(axis=1)  # 2 TP + FP + FN
    f1 = np.zeros(n_classes)
    np.divide(2 * true_positives, denominator, out=f1, where=denominator > 0)
    if not np.any(gold == oos_label):
        warnings.warn(
            f"references contain no out-of-scope example (oos_label={oos_label}): f1_out is 0 (undefined when nothing "
            "is predicted out-of-scope either) and counts as 0 in f1_all; check oos_label, or report f1_in here",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    if n_classes == 1:
        warnings.warn(
            "f1_in is undefined and set to 0: no known class occurs in references or predictions (pass labels=)",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return {
        "f1_all": float(f1.mean()),
        "f1_in": float(f1[:-1].mean()) if n_classes > 1 else 0.0,
        "f1_out": float(f1[-1]),
        "accuracy": weighted_mean(gold == predicted, counts),
    }


def check_score_inputs(predictions, references):
    """Validate in-domain scores and 1/0 in-domain labels as :func:`ood_detection` does, per batch.

    Returns ``(scores, in_domain)`` as float64 and bool arrays. Whether both kinds of example occur is a property of
    the whole evaluation set, checked by :func:`ood_detection` itself.
    """
    scores = as_array(predictions, "predictions", ndim=1).astype(np.float64, copy=False)
    check_finite(scores, "predictions")
    in_domain = as_class_ids(references, "references", n_classes=2)
    check_same_length(scores, in_domain, "predictions", "references")
    return scores, in_domain.astype(bool)


def _curve_counts(scores, positive, counts=None):
    """True/false positive counts at each distinct threshold, highest threshold first (as sklearn's roc_curve);
    example ``i`` counted ``counts[i]`` times when given."""
    order = np.argsort(scores, kind="stable")[::-1]
    sorted_scores = scores[order]
    last_of_group = np.r_[np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]), len(scores) - 1]
    if counts is None:
        true_positives = np.cumsum(positive[order])[last_of_group]
        return true_positives, last_of_group + 1 - true_positives
    weights = counts[order]
    true_positives = np.cumsum(weights * positive[order])[last_of_group]
    return true_positives, np.cumsum(weights)[last_of_group] - true_positives


def _average_precision(true_positives, false_positives) -> float:
    """Average precision from cumulative counts at decreasing thresholds: sum over thresholds of
    (recall step) * precision, the step-wise area under the precision-recall curve (sklearn's definition)."""
    precision = true_positives / (true_positives + false_positives)
    recall_steps = np.diff(true_positives, prepend=0) / true_positives[-1]
    return float(np.sum(recall_steps * precision))


def ood_detection(predictions, references, tpr_level=0.95, weights=None):
    """Threshold-free out-of-scope detection metrics of an in-domain score.

    Args:
        predictions: ``N`` in-domain scores (higher = more in-domain; e.g. maximum softmax probability).
        references: ``N`` labels, 1 for in-domain and 0 for out-of-scope.
        tpr_level: the true-positive rate for the FPR metric (0.95 gives the key ``fpr@95tpr``).
        weights: optional ``N`` counts, example ``i`` counted ``weights[i]`` times (a bootstrap resample).

    Returns:
        ``{"auroc", "aupr_in", "aupr_out", "fpr@95tpr"}``. ``auroc`` counts tied scores as half (Mann-Whitney);
        ``fpr@95tpr`` is the false-positive rate (out-of-scope accepted as in-domain) at the highest threshold whose
        true-positive rate reaches ``tpr_level``, without interpolation.

    Example:
        >>> result = ood_detection([0.9, 0.8, 0.3, 0.6, 0.2], [1, 1, 1, 0, 0])
        >>> {key: round(value, 4) for key, value in result.items()}
        {'auroc': 0.8333, 'aupr_in': 0.9167, 'aupr_out': 0.8333, 'fpr@95tpr': 0.5}
    """
    if isinstance(tpr_level, (bool, np.bool_)) or not isinstance(tpr_level, numbers.Real) or not 0 < tpr_level <= 1:
        raise ValueError(f"tpr_level must be a number in (0, 1], got {cut(tpr_level)}")
    scores, positive = check_score_inputs(predictions, references)
    counts = None if weights is None else as_weights(weights, len(scores))
    if counts is not None:
        if counts.ndim != 1:
            raise ValueError(f"weights must be one count per example, got shape {counts.shape}")
        drawn = counts > 0
        scores, positive, counts = scores[drawn], positive[drawn], counts[drawn]
    n_positive = positive.sum() if counts is None else counts[positive].sum()
    n_negative = (len(positive) if counts is None else counts.sum()) - n_positive
    if n_positive == 0 or n_negative == 0:
        missing = "in-domain (1)" if n_positive == 0 else "out-of-scope (0)"
        raise ValueError(f"references contain no {missing} example: OOD detection needs both kinds")
    # One sort serves all four values. Kept hand-written rather than calling sklearn's roc_auc_score,
    # average_precision_score (twice) and roc_curve because benchmarks/metrics.py measures it 7.5x faster on 1e6
    # scores and 5.9x on 1e7 (each sklearn call validates and sorts again), with the same values to 1e-9
    # (tests/test_metrics_parity.py); and so dialshift.metrics needs only numpy at run time.
    true_positives, false_positives = _curve_counts(scores, positive, counts)
    # AUROC: trapezoids between the ROC points of consecutive thresholds; a tied group is a diagonal segment, which
    # counts its positive-negative pairs as half (Mann-Whitney U)
    fp_steps = np.diff(false_positives, prepend=0)
    tp_before = np.r_[0, true_positives[:-1]]
    auroc = np.sum(fp_steps * (true_positives + tp_before)) / (2.0 * n_positive * n_negative)
    # aupr_out: out-of-scope positive, thresholds on the negated score = the same tied groups in reverse order
    tp_steps = np.diff(true_positives, prepend=0)
    aupr_out = _average_precision(np.cumsum(fp_steps[::-1]), np.cumsum(tp_steps[::-1]))
    reached = np.flatnonzero(true_positives >= tpr_level * n_positive - 1e-9 * n_positive)[0]
    key = f"fpr@{round(tpr_level * 100):d}tpr"
    return {
        "auroc": float(auroc),
        "aupr_in": _average_precision(true_positives, false_positives),
        "aupr_out": aupr_out,
        key: float(false_positives[reached] / n_negative),
    }
