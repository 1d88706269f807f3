"""Out-of-scope detection (AUROC, AUPR, FPR@95TPR): an `evaluate` wrapper over ``dialshift.metrics.ood_detection``."""

import datasets
import evaluate

from dialshift.metrics import ood_detection
from dialshift.metrics.modules import CoreChecked
from dialshift.metrics.open_world import check_score_inputs

_CITATION = """\
@inproceedings{hendrycks2017baseline,
  title={A Baseline for Detecting Misclassified and Out-of-Distribution Examples in Neural Networks},
  author={Hendrycks, Dan and Gimpel, Kevin},
  booktitle={International Conference on Learning Representations},
  year={2017}
}
"""

_DESCRIPTION = """\
Threshold-free metrics of an in-domain score (higher = more in-domain) for separating in-domain from out-of-scope
examples (Hendrycks and Gimpel, 2017): AUROC (ties count half), average precision with in-domain as the positive
class (aupr_in) and with out-of-scope as the positive class scored by the negated score (aupr_out), and the
false-positive rate at the highest threshold whose true-positive rate (in-domain) reaches 95% (fpr@95tpr).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `float`): in-domain scores, e.g. the maximum softmax probability.
    references (`list` of `int`): 1 for in-domain, 0 for out-of-scope; both must occur.
    tpr_level (`float`, defaults to 0.95): the true-positive rate of the FPR metric.
Returns:
    auroc (`float`), aupr_in (`float`), aupr_out (`float`): higher is better.
    fpr@95tpr (`float`): lower is better.
Examples:
    >>> ood_metric = evaluate.load(dialshift.metric_path("ood_detection"))
    >>> result = ood_metric.compute(predictions=[0.9, 0.8, 0.3, 0.6, 0.2], references=[1, 1, 1, 0, 0])
    >>> {key: round(value, 4) for key, value in result.items()}
    {'auroc': 0.8333, 'aupr_in': 0.9167, 'aupr_out': 0.8333, 'fpr@95tpr': 0.5}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class OODDetection(CoreChecked, evaluate.Metric):
    check_inputs = staticmethod(check_score_inputs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("int64")}
            ),
            reference_urls=["https://arxiv.org/abs/1610.02136"],
        )

    def _compute(self, predictions, references, tpr_level=0.95):
        return ood_detection(predictions, references, tpr_level=tpr_level)
