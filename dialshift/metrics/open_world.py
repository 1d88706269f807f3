"""Open-world intent classification metrics: open-world F1 and out-of-scope (OOD) detection.

``open_world_f1`` follows Shu et al. (2017), Lin and Xu (2019) and Khosla and Gangadharaiah (2023): the K known
intents and the out-of-scope class form one K+1-class problem; F1 is computed per class from the K+1 confusion
matrix (an in-scope example predicted out-of-scope is a false negative of its intent), ``f1_in`` is the macro mean
over the known classes, ``f1_out`` the F1 of the out-of-scope class and ``f1_all`` the macro mean over all K+1.

``ood_detection`` treats in-domain as the positive class for ``auroc``, ``aupr_in`` and ``fpr@95tpr`` (Hendrycks
and Gimpel, 2017), and out-of-scope as the positive class, scored by the negated in-domain score, for ``aupr_out``.
"""

import numpy as np
from scipy.stats import rankdata

from dialshift.metrics._checks import as_array, as_class_ids, check_finite, check_same_length, first_bad_row


def open_world_f1(predictions, references, oos_label=None, labels=None):
    """Macro F1 over known classes (``f1_in``), F1 of the out-of-scope class (``f1_out``), both (``f1_all``), accuracy.

    Args:
        predictions: ``N`` predicted label ids (the out-of-scope prediction is ``oos_label``).
        references: ``N`` gold label ids.
        oos_label: the id of the out-of-scope class (required).
        labels: the known (in-scope) class ids. Default: every id other than ``oos_label`` that occurs in
            ``references`` or ``predictions`` (as ``sklearn.metrics.f1_score`` does). A class with no gold and no
            predicted example has F1 0 (sklearn's ``zero_division=0``).

    Returns:
        ``{"f1_all", "f1_in", "f1_out", "accuracy"}``.

    Example:
        >>> result = open_world_f1([0, 1, 2, 2, 1], [0, 1, 1, 2, 2], oos_label=2)
        >>> {key: round(value, 4) for key, value in result.items()}
        {'f1_all': 0.6667, 'f1_in': 0.75, 'f1_out': 0.5, 'accuracy': 0.6}
    """
    if oos_label is None or isinstance(oos_label, bool) or not isinstance(oos_label, (int, np.integer)):
        raise ValueError(f"oos_label must be the integer id of the out-of-scope class, got {oos_label!r}")
    predicted = as_class_ids(predictions, "predictions")
    gold = as_class_ids(references, "references")
    check_same_length(predicted, gold, "predictions", "references")
    if not np.any(gold == oos_label):
        raise ValueError(
            f"references contain no out-of-scope example (oos_label={oos_label}): f1_out and f1_all are undefined; "
            "check oos_label or use a test split with out-of-scope examples"
        )
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
    classes = np.append(np.sort(known), oos_label)
    position = {int(c): i for i, c in enumerate(classes)}
    lookup = np.vectorize(position.__getitem__, otypes=[np.int64])
    n_classes = len(classes)
    gold_index, predicted_index = lookup(gold), lookup(predicted)
    confusion = np.bincount(gold_index * n_classes + predicted_index, minlength=n_classes**2)
    confusion = confusion.reshape(n_classes, n_classes)
    true_positives = np.diag(confusion).astype(np.float64)
    denominator = confusion.sum(axis=0) + confusion.sum(axis=1)  # 2 TP + FP + FN
    f1 = np.zeros(n_classes)
    np.divide(2 * true_positives, denominator, out=f1, where=denominator > 0)
    return {
        "f1_all": float(f1.mean()),
        "f1_in": float(f1[:-1].mean()) if n_classes > 1 else 0.0,
        "f1_out": float(f1[-1]),
        "accuracy": float(np.mean(gold == predicted)),
    }


def _checked_scores(predictions, references):
    scores = as_array(predictions, "predictions", ndim=1).astype(np.float64, copy=False)
    check_finite(scores, "predictions")
    in_domain = as_class_ids(references, "references", n_classes=2)
    check_same_length(scores, in_domain, "predictions", "references")
    positives = int(in_domain.sum())
    if positives == 0 or positives == len(in_domain):
        missing = "in-domain (1)" if positives == 0 else "out-of-scope (0)"
        raise ValueError(f"references contain no {missing} example: OOD detection needs both kinds")
    return scores, in_domain.astype(bool)


def _curve_counts(scores, positive):
    """True/false positive counts at each distinct threshold, highest threshold first (as sklearn's roc_curve)."""
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    last_of_group = np.r_[np.flatnonzero(np.diff(sorted_scores)), len(scores) - 1]
    true_positives = np.cumsum(positive[order])[last_of_group]
    false_positives = last_of_group + 1 - true_positives
    return true_positives, false_positives


def average_precision(scores, positive) -> float:
    """Average precision, the step-wise area under the precision-recall curve (sklearn's definition)."""
    true_positives, false_positives = _curve_counts(scores, positive)
    precision = true_positives / (true_positives + false_positives)
    recall_steps = np.diff(true_positives, prepend=0) / true_positives[-1]
    return float(np.sum(recall_steps * precision))


def ood_detection(predictions, references, tpr_level=0.95):
    """Threshold-free out-of-scope detection metrics of an in-domain score.

    Args:
        predictions: ``N`` in-domain scores (higher = more in-domain; e.g. maximum softmax probability).
        references: ``N`` labels, 1 for in-domain and 0 for out-of-scope.
        tpr_level: the true-positive rate for the FPR metric (0.95 gives the key ``fpr@95tpr``).

    Returns:
        ``{"auroc", "aupr_in", "aupr_out", "fpr@95tpr"}``. ``auroc`` counts tied scores as half (Mann-Whitney);
        ``fpr@95tpr`` is the false-positive rate (out-of-scope accepted as in-domain) at the highest threshold whose
        true-positive rate reaches ``tpr_level``, without interpolation.

    Example:
        >>> result = ood_detection([0.9, 0.8, 0.3, 0.6, 0.2], [1, 1, 1, 0, 0])
        >>> {key: round(value, 4) for key, value in result.items()}
        {'auroc': 0.8333, 'aupr_in': 0.9167, 'aupr_out': 0.8333, 'fpr@95tpr': 0.5}
    """
    if not 0 < tpr_level <= 1:
        raise ValueError(f"tpr_level must be in (0, 1], got {tpr_level!r}")
    scores, positive = _checked_scores(predictions, references)
    n_positive = int(positive.sum())
    n_negative = len(positive) - n_positive
    ranks = rankdata(scores)
    auroc = (ranks[positive].sum() - n_positive * (n_positive + 1) / 2) / (n_positive * n_negative)
    true_positives, false_positives = _curve_counts(scores, positive)
    reached = np.flatnonzero(true_positives >= tpr_level * n_positive - 1e-9 * n_positive)[0]
    key = f"fpr@{round(tpr_level * 100):d}tpr"
    return {
        "auroc": float(auroc),
        "aupr_in": average_precision(scores, positive),
        "aupr_out": average_precision(-scores, ~positive),
        key: float(false_positives[reached] / n_negative),
    }
