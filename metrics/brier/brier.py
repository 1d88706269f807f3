"""Multiclass Brier score with its Murphy decomposition: an `evaluate` wrapper over ``dialshift.metrics.brier``."""

import datasets
import evaluate

from dialshift.metrics import brier
from dialshift.metrics.calibration import check_inputs
from dialshift.metrics.modules import CoreChecked

_CITATION = """\
@article{brier1950verification,
  title={Verification of Forecasts Expressed in Terms of Probability},
  author={Brier, Glenn W.},
  journal={Monthly Weather Review},
  volume={78},
  number={1},
  pages={1--3},
  year={1950}
}
@article{murphy1973new,
  title={A New Vector Partition of the Probability Score},
  author={Murphy, Allan H.},
  journal={Journal of Applied Meteorology},
  volume={12},
  number={4},
  pages={595--600},
  year={1973}
}
"""

_DESCRIPTION = """\
The Brier score is the mean over samples of the sum over classes of (p_k - onehot_k)^2 (range [0, 2]; the convention
of Lee et al. (2022) and of scikit-learn for more than two classes). It is decomposed (Murphy, 1973) per class and
summed over classes into reliability, resolution and uncertainty, with each class's forecasts put in n_bins
equal-width right-closed bins over [0, 1]; brier = reliability - resolution + uncertainty exactly when the
forecasts inside each bin are equal.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): N x K class probabilities; each row in [0, 1] and summing to 1.
    references (`list` of `int`): the N gold class ids, in [0, K).
    n_bins (`int`, defaults to 15): forecast bins per class for the decomposition.
Returns:
    brier (`float`): the Brier score; lower is better.
    reliability (`float`): calibration term (lower is better).
    resolution (`float`): how far the binned observed frequencies move from the base rates (higher is better).
    uncertainty (`float`): sum over classes of base_rate * (1 - base_rate), a property of the labels alone.
Examples:
    >>> brier_metric = evaluate.load(dialshift.metric_path("brier"))
    >>> result = brier_metric.compute(predictions=[[1.0, 0.0], [0.5, 0.5]], references=[0, 1])
    >>> result["brier"]
    0.25
    >>> round(result["reliability"] - result["resolution"] + result["uncertainty"], 12)
    0.25
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Brier(CoreChecked, evaluate.Metric):
    check_inputs = staticmethod(check_inputs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.List(datasets.Value("float64")), "references": datasets.Value("int64")}
            ),
            reference_urls=["https://en.wikipedia.org/wiki/Brier_score"],
        )

    def _compute(self, predictions, references, n_bins=15):
        return brier(predictions, references, n_bins=n_bins)
