"""Debiased L2 calibration error (Kumar et al., 2019): an `evaluate` wrapper over ``dialshift.metrics.debiased_l2``."""

import datasets
import evaluate

from dialshift.metrics import debiased_l2
from dialshift.metrics.calibration import check_inputs
from dialshift.metrics.modules import CoreChecked

_CITATION = """\
@inproceedings{kumar2019verified,
  title={Verified Uncertainty Calibration},
  author={Kumar, Ananya and Liang, Percy and Ma, Tengyu},
  booktitle={Advances in Neural Information Processing Systems},
  year={2019}
}
"""

_DESCRIPTION = """\
Debiased L2 calibration error of the top-label prediction (Kumar et al., 2019): over equal-mass confidence bins, the
squared gap between mean confidence and accuracy minus its sampling bias ybar (1 - ybar) / (n_b - 1), weighted by
bin size, clipped at 0, square root. The plug-in (binned) estimate is biased upward, strongly for a well-calibrated
model; this one is not (up to the clipping), which also makes its bootstrap interval cover the true L2 error far
more often. The same numbers as `uncertainty-calibration`'s `get_calibration_error(probs, labels, p=2, debias=True,
mode="top-label")` (0.1.4) for non-discrete probabilities.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): N x K class probabilities; each row in [0, 1] and summing to 1.
    references (`list` of `int`): the N gold class ids, in [0, K).
    n_bins (`int`, defaults to 15): number of equal-mass bins.
    calibration_test (`bool`, defaults to False): also return calibration_p_value, the p-value of "the model is
        calibrated" (consistency resampling of the top-label binned ECE over 15 equal-width bins: labels drawn
        from the model's own confidences; Broecker and Smith 2007).
    test_replicates (`int`, defaults to 1000): null replicates of the test; test_seed (`int`, defaults to 0).
Returns:
    debiased_l2 (`float`): the debiased L2 calibration error, in [0, 1]; lower is better.
    calibration_p_value (`float`, with calibration_test=True): small values reject calibration.
Examples:
    >>> debiased_l2_metric = evaluate.load(dialshift.metric_path("debiased_l2"))
    >>> result = debiased_l2_metric.compute(predictions=[[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]],
    ...                                     references=[0, 1, 1, 1], n_bins=2)
    >>> round(result["debiased_l2"], 4)
    0.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DebiasedL2(CoreChecked, evaluate.Metric):
    check_inputs = staticmethod(check_inputs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.List(datasets.Value("float64")), "references": datasets.Value("int64")}
            ),
            reference_urls=["https://arxiv.org/abs/1909.10155", "https://github.com/p-lambda/verified_calibration"],
        )

    def _compute(self, predictions, references, n_bins=15, calibration_test=False, test_replicates=1000,
                 test_seed=0):
        return debiased_l2(predictions, references, n_bins=n_bins, calibration_test=calibration_test,
                           test_replicates=test_replicates, test_seed=test_seed)
