"""Expected calibration error (ECE): an `evaluate` wrapper over ``dialshift.metrics.ece``."""

import datasets
import evaluate

from dialshift.metrics import ece
from dialshift.metrics.calibration import check_inputs
from dialshift.metrics.modules import CoreChecked

_CITATION = """\
@inproceedings{naeini2015obtaining,
  title={Obtaining Well Calibrated Probabilities Using Bayesian Binning},
  author={Naeini, Mahdi Pakdaman and Cooper, Gregory F. and Hauskrecht, Milos},
  booktitle={Proceedings of the AAAI Conference on Artificial Intelligence},
  year={2015}
}
@inproceedings{guo2017calibration,
  title={On Calibration of Modern Neural Networks},
  author={Guo, Chuan and Pleiss, Geoff and Sun, Yu and Weinberger, Kilian Q.},
  booktitle={Proceedings of the 34th International Conference on Machine Learning},
  year={2017}
}
"""

_DESCRIPTION = """\
Expected calibration error: the average gap between confidence and accuracy over confidence bins, weighted by the
share of samples in each bin (Naeini et al., 2015; Guo et al., 2017). By default the confidence is the top-label
probability, with 15 equal-width bins over [0, 1] that are right-closed, (lo, hi], except the first, which also
holds 0 (so a confidence of exactly 1.0 is in the last bin); edge i is the float nearest i / n_bins and a confidence
is compared with it exactly (0.1 + 0.2 lies above the edge 0.3). Also returns the per-bin counts, mean confidences and
accuracies for reliability diagrams. A ranking task with C candidates is scored as a C-class prediction (Lee et
al., 2022).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): N x K class probabilities; each row in [0, 1] and summing to 1.
    references (`list` of `int`): the N gold class ids, in [0, K).
    n_bins (`int`, defaults to 15): number of confidence bins.
    binning (`str`, defaults to "equal_width"): "equal_width" or "equal_mass" (quantile edges).
    norm (`str`, defaults to "l1"): "l1" (ECE), "l2" (RMS calibration error) or "max" (maximum calibration error).
    mode (`str`, defaults to "top_label"): "top_label" or "classwise" (per-class errors combined over classes: the
        mean for l1, the root of the mean of squares for l2, the largest for max).
    calibration_test (`bool`, defaults to False): also return calibration_p_value, the p-value of "the model is
        calibrated" (consistency resampling of the top-label binned ECE over n_bins equal-width bins: labels drawn
        from the model's own confidences; Broecker and Smith 2007).
    test_replicates (`int`, defaults to 1000): null replicates of the test; test_seed (`int`, defaults to 0).
Returns:
    ece (`float`): the calibration error, in [0, 1]; lower is better.
    bin_counts (`list` of `int`): samples per bin.
    bin_confidence (`list` of `float`): mean confidence per bin (NaN for an empty bin).
    bin_accuracy (`list` of `float`): accuracy per bin (NaN for an empty bin).
    bin_edges (`list` of `float`): the n_bins + 1 bin edges.
    In classwise mode every bin_* entry holds one list per class.
    calibration_p_value (`float`, with calibration_test=True): small values reject calibration.
Examples:
    >>> ece_metric = evaluate.load(dialshift.metric_path("ece"))
    >>> result = ece_metric.compute(predictions=[[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], references=[0, 1, 1], n_bins=5)
    >>> round(result["ece"], 4)
    0.3
    >>> result["bin_counts"]
    [0, 0, 1, 1, 1]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ECE(CoreChecked, evaluate.Metric):
    check_inputs = staticmethod(check_inputs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.List(datasets.Value("float64")), "references": datasets.Value("int64")}
            ),
            reference_urls=["https://arxiv.org/abs/1706.04599"],
        )

    def _compute(self, predictions, references, n_bins=15, binning="equal_width", norm="l1", mode="top_label",
                 calibration_test=False, test_replicates=1000, test_seed=0):
        return ece(predictions, references, n_bins=n_bins, binning=binning, norm=norm, mode=mode,
                   calibration_test=calibration_test, test_replicates=test_replicates, test_seed=test_seed)
