"""The numeric core of every dialshift metric: numpy/scipy, vectorised, no ``evaluate`` import.

Each function takes the same arguments as the ``compute`` of its evaluate module in ``metrics/<name>/`` and returns
the same dict; the modules are thin wrappers over these functions, so there is one source of truth per metric. The
installed modules (shipped and plug-ins) are listed by :func:`dialshift.metrics.installed.metric_names`.

>>> from dialshift.metrics import ece, smooth_ece, debiased_l2, brier, recall_at_k, open_world_f1, ood_detection
>>> from dialshift.metrics import das_ratio
"""

from dialshift.metrics.attention import (
    attention_scores_dynamic,
    attention_scores_non_hierarchical,
    attention_scores_static,
    das_ratio,
)
from dialshift.metrics.calibration import brier, ece
from dialshift.metrics.open_world import ood_detection, open_world_f1
from dialshift.metrics.ranking import recall_at_k
from dialshift.metrics.smooth_calibration import debiased_l2, smooth_ece

__all__ = [
    "attention_scores_dynamic",
    "attention_scores_non_hierarchical",
    "attention_scores_static",
    "brier",
    "das_ratio",
    "debiased_l2",
    "ece",
    "ood_detection",
    "open_world_f1",
    "recall_at_k",
    "smooth_ece",
]
