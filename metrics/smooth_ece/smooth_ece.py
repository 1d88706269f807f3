"""Smooth ECE (Błasiok and Nakkiran, 2023): an `evaluate` wrapper over ``dialshift.metrics.smooth_ece``."""

import datasets
import evaluate

from dialshift.metrics import smooth_ece
from dialshift.metrics.calibration import check_inputs
from dialshift.metrics.modules import CoreChecked

_CITATION = """\
@inproceedings{blasiok2024smooth,
  title={Smooth {ECE}: Principled Reliability Diagrams via Kernel Smoothing},
  author={B{\\l}asiok, Jaros{\\l}aw and Nakkiran, Preetum},
  booktitle={The Twelfth International Conference on Learning Representations},
  year={2024}
}
"""

_DESCRIPTION = """\
Smooth ECE of the top-label prediction: the calibration residuals (confidence - correct) are smoothed over the
confidence axis with a Gaussian kernel reflected at 0 and 1 instead of being binned, and the bandwidth is chosen
automatically as the fixed point where it equals the smooth ECE (Błasiok and Nakkiran, 2023). Unlike binned ECE it
has no bin count to tune and is not inflated by empty or near-empty bins. The same numbers as the `relplot` package's
`smECE` (1.0.3), computed in vectorised numpy.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): N x K class probabilities; each row in [0, 1] and summing to 1.
    references (`list` of `int`): the N gold class ids, in [0, K).
    calibration_test (`bool`, defaults to False): also return calibration_p_value, the p-value of "the model is
        calibrated" (consistency resampling of the top-label binned ECE over 15 equal-width bins: labels drawn
        from the model's own confidences; Broecker and Smith 2007).
    test_replicates (`int`, defaults to 1000): null replicates of the test; test_seed (`int`, defaults to 0).
Returns:
    smooth_ece (`float`): the smooth ECE, in [0, 1]; lower is better.
    bandwidth (`float`): the kernel bandwidth used (the fixed point).
    calibration_p_value (`float`, with calibration_test=True): small values reject calibration.
Examples:
    >>> smooth_ece_metric = evaluate.load(dialshift.metric_path("smooth_ece"))
    >>> result = smooth_ece_metric.compute(predictions=[[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]],
    ...                                    references=[0, 1, 1, 1])
    >>> round(result["smooth_ece"], 4), result["bandwidth"]
    (0.1316, 0.1328125)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SmoothECE(CoreChecked, evaluate.Metric):
    check_inputs = staticmethod(check_inputs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.List(datasets.Value("float64")), "references": datasets.Value("int64")}
            ),
            reference_urls=["https://arxiv.org/abs/2309.12236", "https://github.com/apple/ml-calibration"],
        )

    def _compute(self, predictions, references, calibration_test=False, test_replicates=1000, test_seed=0):
        return smooth_ece(predictions, references, calibration_test=calibration_test,
                          test_replicates=test_replicates, test_seed=test_seed)
