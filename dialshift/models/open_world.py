"""Open-world intent decisions on top of a closed-world classifier (Khosla & Gangadharaiah 2022, §3-§4).

A fine-tuned encoder gives, for every utterance, the ``K`` in-scope logits and a feature vector (the trainer's
``--features``: the input of its classification head, or the mean-pooled last-layer states). Each method turns these
into a predicted class (one of ``K``) and an in-domain score (higher = more in-domain); an utterance is rejected as
out-of-scope when its score is below the method's threshold:

* ``msp``: maximum softmax probability (Hendrycks et al. 2020);
* ``energy``: negative energy, ``T * logsumexp(logits / T)`` with ``T = 1`` (Liu et al. 2020);
* ``maha``: minus the smallest Mahalanobis distance to the class means of the training features, with one shared
  (tied) covariance (Zhou et al. 2021; the pseudo-inverse of the pooled within-class covariance);
* ``cosine``: the largest cosine similarity of the L2-normalised feature to the L2-normalised training features:
  ``cosine_scoring="nearest"`` (default) takes the maximum over every training feature, as the method's released code
  does (Zhou et al. 2021, ``contrastive-ood``); ``"centroid"`` over the normalised class centroids;
* ``knn``: KNN-C's outlier score (Zhou et al. 2022): minus the local outlier factor of the feature among its
  ``n_neighbors`` cosine nearest training features (``sklearn.neighbors.LocalOutlierFactor``, novelty mode);
* ``adb``: adaptive decision boundaries (Zhang et al. 2021): class centroids of the training features and one learnt
  radius per class; the class is the nearest centroid and the utterance is out-of-scope when it lies outside that
  centroid's boundary (ADB's own rule, no threshold); its score is ``radius - distance``. As in ADB's released code
  (thuiar/TEXTOIR), the radii are learnt on training features drawn with dropout active (``Outputs.dropout_features``)
  and the epoch with the best macro-F1 on in-scope validation utterances is kept (:func:`fit_adb`).

Pseudo k+1 method (a different training objective, ``trainers/open_world.py --objective dcloos``):

* ``dcloos``: DCLOOS (Zhan et al. 2021): the classifier has ``K + 1`` outputs, trained with cross-entropy on the
  in-scope utterances, open-domain outliers and convex combinations of in-scope features of two different classes
  (:func:`convex_pairs`), the last two labelled out-of-scope; the decision is the argmax over ``K + 1`` (its own rule),
  its score ``max in-scope logit - oos logit``.

The class of the score-based methods (all but ADB and DCLOOS) is the classifier's argmax. Their thresholds are chosen on
VAL-HOLD by maximising ``Acc_in + Recall_out`` (:func:`select_threshold`), as the paper does for MSP, Maha and Cosine;
here Energy and KNN-C use the same rule (the paper follows their released code, which the paper does not detail).
"""

from dataclasses import dataclass, field

import numpy as np

from dialshift.errors import DialshiftError
from dialshift.models.uncertainty import softmax

METHODS = ("msp", "energy", "maha", "cosine", "knn", "adb")  # on a classifier trained with cross-entropy over K
COSINE_SCORING = ("nearest", "centroid")  # the first is the default
PSEUDO_METHODS = ("dcloos",)  # on a classifier trained over K + 1 classes with pseudo outliers
LABELS = {"msp": "MSP", "energy": "Energy", "maha": "Maha", "cosine": "Cosine", "knn": "KNN-C", "adb": "ADB",
          "dcloos": "DCLOOS"}


@dataclass
class Outputs:
    """A split's classifier outputs: ``logits`` (N x K) and ``features`` (N x D), read with the encoder in eval mode;
    optionally ``dropout_features``, the same utterances' features from passes with dropout active (ADB's boundary
    learning reads these, one pass per epoch in turn)."""

    logits: np.ndarray
    features: np.ndarray
    dropout_features: list = field(default_factory=list)

    def __post_init__(self):
        self.logits = np.asarray(self.logits, dtype=np.float64)
        self.features = np.asarray(self.features, dtype=np.float64)
        if self.logits.ndim != 2 or self.features.ndim != 2 or len(self.logits) != len(self.features):
            raise DialshiftError(f"outputs: logits {self.logits.shape} and features {self.features.shape} must be "
                                 "N x K and N x D with the same N")
        self.dropout_features = [np.asarray(f, dtype=np.float64) for f in self.dropout_features]
        for i, passed in enumerate(self.dropout_features):
            if passed.shape != self.features.shape:
                raise DialshiftError(f"outputs: dropout pass {i} has shape {passed.shape}, the features "
                                     f"{self.features.shape}")


def _normalise(features: np.ndarray) -> np.ndarray:
    return features / np.maximum(np.linalg.norm(features, axis=1, keepdims=True), 1e-12)


def class_means(features: np.ndarray, labels: np.ndarray, num_classes: int) -> np.ndarray:
    missing = sorted(set(range(num_classes)) - set(np.unique(labels).tolist()))
    if missing:
        raise DialshiftError(f"training features: class {missing[0]} has no example; every class needs one")
    return np.stack([features[labels == k].mean(axis=0) for k in range(num_classes)])


# ----------------------------------------------------------------------------------------------- thresholds


def select_threshold(scores, correct, is_oos) -> float:
    """The threshold ``t`` maximising ``Acc_in + Recall_out`` on held-out data, an utterance being accepted when its
    score is ``>= t``.

    ``Acc_in`` = share of in-scope utterances accepted *and* classified correctly (``correct``), ``Recall_out`` =
    share of out-of-scope utterances rejected. Candidates are the observed scores and ``+inf`` (reject everything);
    ties go to the smallest threshold (accept more). Both kinds of utterance must be present.
    """
    scores = np.asarray(scores, dtype=np.float64)
    correct = np.asarray(correct, dtype=bool)
    is_oos = np.asarray(is_oos, dtype=bool)
    if not (len(scores) == len(correct) == len(is_oos)):
        raise DialshiftError("select_threshold: scores, correct and is_oos must have the same length")
    if not np.isfinite(scores).all():
        raise DialshiftError("select_threshold: a score is NaN or infinite")
    n_in, n_out = int((~is_oos).sum()), int(is_oos.sum())
    if not n_in or not n_out:
        raise DialshiftError("threshold selection needs in-scope and out-of-scope utterances in validation_hold "
                             f"(found {n_in} in-scope, {n_out} out-of-scope)")
    candidates = np.append(np.unique(scores), np.inf)
    good_in = np.sort(scores[~is_oos & correct])
    out = np.sort(scores[is_oos])
    accepted_good = len(good_in) - np.searchsorted(good_in, candidates, side="left")  # scores >= t
    rejected_out = np.searchsorted(out, candidates, side="left")  # scores < t
    objective = accepted_good / n_in + rejected_out / n_out
    return float(candidates[int(np.argmax(objective))])


def decide(classes: np.ndarray, scores: np.ndarray, threshold: float, oos_label: int) -> np.ndarray:
    """The classes, with ``oos_label`` wherever the score is below the threshold."""
    return np.where(np.asarray(scores) >= threshold, classes, oos_label).astype(np.int64)


# ----------------------------------------------------------------------------------------------- methods


@dataclass
class Method:
    """A fitted open-world decision method (see the module docstring). ``threshold`` is None until
    :meth:`calibrate` (score-based methods) and stays None for ADB."""

    name: str
    num_classes: int
    state: dict = field(default_factory=dict)
    threshold: float | None = None

    @property
    def own_rule(self) -> bool:
        return self.name in ("adb", "dcloos")

    def fit(self, train: Outputs, labels: np.ndarray, *, validation: tuple[Outputs, np.ndarray] | None = None,
            seed: int = 0, knn_neighbors: int = 20, adb_epochs: int = 100, adb_lr: float = 0.05,
            adb_batch_size: int = 128, adb_patience: int = 10, cosine_scoring: str = "nearest") -> "Method":
        """Fit on the training outputs and their in-scope ``labels``. ``validation`` (in-scope outputs and labels) is
        read by ADB only, for its early stopping. KNN-C's neighbours are capped at one less than the smallest class's
        training count, so that in few-shot configs an in-scope utterance's neighbourhood stays inside its class.
        ``cosine_scoring``: Cosine's reference set, ``"nearest"`` (every training feature) or ``"centroid"``."""
        labels = np.asarray(labels, dtype=np.int64)
        if self.name in ("msp", "energy", "dcloos"):
            return self
        if self.name == "maha":
            from sklearn.covariance import EmpiricalCovariance

            means = class_means(train.features, labels, self.num_classes)
            centred = train.features - means[labels]
            self.state = {"means": means,
                          "precision": EmpiricalCovariance(assume_centered=True).fit(centred).precision_}
        elif self.name == "cosine":
            if cosine_scoring not in COSINE_SCORING:
                raise DialshiftError(f"cosine_scoring {cosine_scoring!r}: one of {', '.join(COSINE_SCORING)}")
            normalised = _normalise(train.features)
            reference = normalised if cosine_scoring == "nearest" else \
                _normalise(class_means(normalised, labels, self.num_classes))
            self.state = {"scoring": cosine_scoring, "reference": reference}
        elif self.name == "knn":
            from sklearn.neighbors import LocalOutlierFactor

            smallest = int(np.bincount(labels, minlength=self.num_classes).min())
            neighbours = min(knn_neighbors, smallest - 1, len(labels) - 1)
            if neighbours < 1:
                raise DialshiftError(f"KNN-C needs at least 2 training utterances per class (smallest class: "
                                     f"{smallest})")
            self.state = {"n_neighbors": neighbours,
                          "lof": LocalOutlierFactor(n_neighbors=neighbours, metric="cosine", novelty=True)
                          .fit(_normalise(train.features))}
        elif self.name == "adb":
            self.state = fit_adb(train.features, labels, self.num_classes, dropout_features=train.dropout_features,
                                 validation=validation, seed=seed, epochs=adb_epochs, lr=adb_lr,
                                 batch_size=adb_batch_size, patience=adb_patience)
        else:
            raise DialshiftError(f"unknown open-world method {self.name!r}; one of "
                                 f"{', '.join(METHODS + PSEUDO_METHODS)}")
        return self

    def classes_and_scores(self, outputs: Outputs) -> tuple[np.ndarray, np.ndarray]:
        """``(class, in-domain score)`` per utterance (the class ignores any rejection)."""
        classes = outputs.logits.argmax(axis=1)
        if self.name == "msp":
            return classes, softmax(outputs.logits).max(axis=1)
        if self.name == "energy":
            top = outputs.logits.max(axis=1)
            return classes, top + np.log(np.exp(outputs.logits - top[:, None]).sum(axis=1))
        if self.name == "maha":
            diff = outputs.features[:, None, :] - self.state["means"][None, :, :]
            distances = np.einsum("nkd,de,nke->nk", diff, self.state["precision"], diff)
            return classes, -distances.min(axis=1)
        if self.name == "cosine":
            normalised, reference = _normalise(outputs.features), self.state["reference"]
            return classes, np.concatenate([(normalised[start : start + 1024] @ reference.T).max(axis=1)
                                            for start in range(0, len(normalised), 1024)] or [np.zeros(0)])
        if self.name == "knn":
            return classes, self.state["lof"].score_samples(_normalise(outputs.features))
        if self.name == "adb":
            return adb_predict(outputs.features, self.state["centroids"], self.state["radii"])
        if self.name == "dcloos":  # logits over K + 1, the last one out-of-scope
            inside = outputs.logits[:, :-1]
            return inside.argmax(axis=1), inside.max(axis=1) - outputs.logits[:, -1]
        raise DialshiftError(f"unknown open-world method {self.name!r}")

    def calibrate(self, hold: Outputs, labels: np.ndarray, oos_label: int) -> "Method":
        """Choose the threshold on VAL-HOLD (``labels`` with ``oos_label`` for out-of-scope); ADB keeps its rule."""
        if self.own_rule:
            return self
        labels = np.asarray(labels)
        classes, scores = self.classes_and_scores(hold)
        self.threshold = select_threshold(scores, classes == labels, labels == oos_label)
        return self

    def predict(self, outputs: Outputs, oos_label: int) -> tuple[np.ndarray, np.ndarray]:
        """``(prediction with oos_label for a rejection, in-domain score)``."""
        classes, scores = self.classes_and_scores(outputs)
        threshold = 0.0 if self.own_rule else self.threshold
        if threshold is None:
            raise DialshiftError(f"method {self.name}: calibrate() on validation_hold before predict()")
        return decide(classes, scores, threshold, oos_label), scores


def adb_predict(features: np.ndarray, centroids: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ADB's rule: ``(nearest centroid, radius - distance)``; the utterance is out-of-scope where the score is < 0."""
    distances = np.linalg.norm(features[:, None, :] - centroids[None], axis=2)
    nearest = distances.argmin(axis=1)
    return nearest, radii[nearest] - distances[np.arange(len(nearest)), nearest]


def fit_adb(features: np.ndarray, labels: np.ndarray, num_classes: int, *, dropout_features=(),
            validation: tuple[Outputs, np.ndarray] | None = None, seed: int = 0, epochs: int = 100, lr: float = 0.05,
            batch_size: int = 128, patience: int = 10) -> dict:
    """ADB's boundary learning (Zhang et al. 2021, §3.2) on a frozen encoder, as its released code does it.

    Centroids are the class means of the eval-mode training ``features``. The radii are ``softplus(delta)`` with
    ``delta ~ N(0, 1)`` initialised under ``seed``, trained with Adam (lr 0.05, ADB's default) on the boundary loss
    ``mean(relu(d - r_y)) + mean(relu(r_y - d))`` over shuffled mini-batches, ``d`` being a training utterance's
    distance to its own centroid. The loss balances at the median distance, so what ``d`` is matters: ADB computes it
    on features drawn with the encoder in train mode (dropout active, a fresh draw each epoch), which lie farther from
    the centroids than the eval-mode features met at test time, so the learnt boundaries enclose most in-scope
    utterances. Here epoch ``e`` reads ``dropout_features[e % passes]``; without dropout passes it falls back to the
    eval-mode features (boundaries at the median: about half of the in-scope utterances rejected).

    After every epoch, when ``validation`` (in-scope outputs and labels) is given, the macro-F1 of ADB's decisions on
    it (open label = ``num_classes``; sklearn's ``f1_score``) decides: the radii of the best epoch are kept and training
    stops after ``patience`` epochs without improvement (ADB's ``wait_patient``). Returns the centroids, the radii and
    a record of the epochs run, the kept epoch and its validation macro-F1.
    """
    import torch
    from sklearn.metrics import f1_score

    labels = np.asarray(labels, dtype=np.int64)
    centroids = class_means(features, labels, num_classes)
    passes = list(dropout_features) or [features]
    own = centroids[labels]
    distances = [torch.as_tensor(np.linalg.norm(np.asarray(x, dtype=np.float64) - own, axis=1)) for x in passes]
    generator = torch.Generator().manual_seed(seed)
    delta = torch.nn.Parameter(torch.randn(num_classes, generator=generator, dtype=torch.float64))
    optimiser = torch.optim.Adam([delta], lr=lr)
    y = torch.as_tensor(labels)
    rng = np.random.default_rng([seed, 1])
    radii = lambda: torch.nn.functional.softplus(delta).detach().numpy().copy()  # noqa: E731
    best = {"radii": radii(), "epoch": 0, "validation_f1": None}
    wait = 0
    for epoch in range(1, epochs + 1):
        distance = distances[(epoch - 1) % len(distances)]
        order = rng.permutation(len(labels))
        for start in range(0, len(order), batch_size):
            rows = torch.as_tensor(order[start : start + batch_size])
            radius = torch.nn.functional.softplus(delta)[y[rows]]
            d = distance[rows]
            outside = (d > radius).to(d.dtype)
            loss = (outside * (d - radius)).mean() + ((1 - outside) * (radius - d)).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        if validation is None:
            best = {"radii": radii(), "epoch": epoch, "validation_f1": None}
            continue
        classes, scores = adb_predict(validation[0].features, centroids, radii())
        predicted = np.where(scores >= 0, classes, num_classes)
        score = float(f1_score(np.asarray(validation[1]), predicted, average="macro"))
        if best["validation_f1"] is None or score > best["validation_f1"]:
            best, wait = {"radii": radii(), "epoch": epoch, "validation_f1": score}, 0
        else:
            wait += 1
            if wait >= patience:
                break
    return {"centroids": centroids, "radii": best["radii"], "epochs_run": epoch, "kept_epoch": best["epoch"],
            "validation_f1": best["validation_f1"], "dropout_passes": len(dropout_features)}


def convex_pairs(labels, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DCLOOS's self-supervised pseudo outliers: ``count`` draws of two positions ``(i, j)`` of ``labels`` with
    different labels and a weight ``s ~ U(0, 1)``; the outlier is ``s * h_i + (1 - s) * h_j`` (Zhan et al. 2021, §3.1;
    their code draws the pair uniformly and redraws same-label pairs). Empty arrays when all labels are equal."""
    labels = np.asarray(labels)
    if count <= 0 or len(np.unique(labels)) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    first, second = [], []
    while sum(map(len, first)) < count:
        i, j = rng.integers(0, len(labels), size=(2, 2 * count))
        keep = labels[i] != labels[j]
        first.append(i[keep])
        second.append(j[keep])
    first, second = np.concatenate(first)[:count], np.concatenate(second)[:count]
    return first, second, rng.uniform(0.0, 1.0, count)


def fit_methods(names, train: Outputs, train_labels, hold: Outputs, hold_labels, oos_label: int, *, seed: int = 0,
                validation: tuple[Outputs, np.ndarray] | None = None, **options) -> dict[str, Method]:
    """Fit every named method on the training outputs (``validation``: in-scope outputs and labels for ADB's early
    stopping) and calibrate it on VAL-HOLD."""
    unknown = [name for name in names if name not in METHODS + PSEUDO_METHODS]
    if unknown:
        raise DialshiftError(f"unknown open-world method {unknown[0]!r}; choose from "
                             f"{', '.join(METHODS + PSEUDO_METHODS)}")
    num_classes = train.logits.shape[1]
    return {name: Method(name, num_classes).fit(train, train_labels, validation=validation, seed=seed, **options)
            .calibrate(hold, hold_labels, oos_label) for name in names}
