"""Predictive distributions of the four uncertainty methods (Lee et al. §3.2) and temperature fitting.

The ranker gives one logit per (context, candidate) pair. The predictive probability of an instance is the softmax
over its K candidates' logits (K = 10 in DailyDialog). With ``P`` stochastic passes (MC dropout, ``P = N = 5``) or
ensemble members (``P = M = 5``) the predictive probability is the mean of the ``P`` softmax vectors and the
uncertainty of each candidate is the (population) variance of its ``P`` probabilities. ``vanilla`` and
``temperature`` are one deterministic pass (no sampling-based uncertainty); ``temperature`` divides the logits by
``T`` fitted on the validation split by minimising the negative log-likelihood (Guo et al., 2017).
"""

import numpy as np

from dialshift.errors import DialshiftError

METHODS = ("vanilla", "dropout", "ensemble", "temperature")


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def negative_log_likelihood(logits: np.ndarray, labels: np.ndarray, temperature: float = 1.0) -> float:
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - z.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(z).sum(axis=1))
    return float(np.mean(log_norm - z[np.arange(len(z)), labels]))


def fit_temperature(logits: np.ndarray, labels: np.ndarray, bounds=(1e-2, 1e2)) -> float:
    """The temperature ``T > 0`` minimising the mean NLL of ``softmax(logits / T)`` (bounded search over log T).
    A non-finite logit is refused (:class:`DialshiftError`): it would change T silently."""
    from scipy.optimize import minimize_scalar

    logits = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if logits.ndim != 2 or len(logits) != len(labels) or len(labels) == 0:
        raise ValueError(f"need N x K logits and N labels, got {logits.shape} and {labels.shape}")
    bad = np.flatnonzero(~np.isfinite(logits).all(axis=1))
    if len(bad):  # the NLL would be NaN for every T and the search would return an arbitrary T
        raise DialshiftError(f"{len(bad)} of {len(logits)} validation instances have a non-finite logit (first: row "
                             f"{bad[0]}), so no temperature can be fitted; the model diverged: retrain it, e.g. "
                             f"with a lower --learning-rate")
    result = minimize_scalar(
        lambda log_t: negative_log_likelihood(logits, labels, float(np.exp(log_t))),
        bounds=(np.log(bounds[0]), np.log(bounds[1])),
        method="bounded",
        options={"xatol": 1e-6},
    )
    return float(np.exp(result.x))


def predictive(passes: np.ndarray, temperature: float = 1.0) -> dict:
    """Combine ``P x N x K`` logits into ``scores`` (mean logits / T), ``probabilities`` (mean softmax) and
    ``uncertainty`` (per-candidate variance of the softmax over passes; ``None`` for a single pass)."""
    passes = np.asarray(passes, dtype=np.float64)
    if passes.ndim != 3:
        raise ValueError(f"need P x N x K logits, got shape {passes.shape}")
    probabilities = softmax(passes / temperature, axis=-1)
    return {
        "scores": passes.mean(axis=0) / temperature,
        "probabilities": probabilities.mean(axis=0),
        "uncertainty": probabilities.var(axis=0) if len(passes) > 1 else None,
    }
