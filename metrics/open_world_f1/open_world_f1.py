"""Open-world intent classification F1: an `evaluate` wrapper over ``dialshift.metrics.open_world_f1``."""

import datasets
import evaluate

from dialshift.metrics import open_world_f1
from dialshift.metrics.modules import CoreChecked
from dialshift.metrics.open_world import check_label_inputs

_CITATION = """\
@misc{khosla2023benchmarking,
  title={Benchmarking the Covariate Shift Robustness of Open-world Intent Classification Approaches},
  author={Khosla, Sopan and Gangadharaiah, Rashmi},
  year={2023}
}
@inproceedings{shu2017doc,
  title={{DOC}: Deep Open Classification of Text Documents},
  author={Shu, Lei and Xu, Hu and Liu, Bing},
  booktitle={Proceedings of the 2017 Conference on Empirical Methods in Natural Language Processing},
  pages={2911--2916},
  year={2017}
}
"""

_DESCRIPTION = """\
Open-world classification metrics (Shu et al., 2017; Lin and Xu, 2019; Khosla and Gangadharaiah, 2023): the K known
intents and the out-of-scope class form one (K+1)-class problem and F1 is computed per class from its confusion
matrix. f1_in is the macro F1 over the known classes, f1_out the F1 of the out-of-scope class, f1_all the macro F1
over all K+1 classes, and accuracy is over all examples.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `int`): predicted label ids (oos_label for a rejected, out-of-scope prediction).
    references (`list` of `int`): gold label ids. With no oos_label among them, f1_out is 0 (counted in f1_all)
        and an UndefinedMetricWarning is issued.
    oos_label (`int`, required): the id of the out-of-scope class.
    labels (`list` of `int`, optional): the known class ids (default: those occurring in references or predictions).
        A listed class with neither gold nor predicted examples has F1 0.
Returns:
    f1_all (`float`), f1_in (`float`), f1_out (`float`), accuracy (`float`): all in [0, 1]; higher is better.
Examples:
    >>> f1_metric = evaluate.load(dialshift.metric_path("open_world_f1"))
    >>> result = f1_metric.compute(predictions=[0, 1, 2, 2, 1], references=[0, 1, 1, 2, 2], oos_label=2)
    >>> {key: round(value, 4) for key, value in result.items()}
    {'f1_all': 0.6667, 'f1_in': 0.75, 'f1_out': 0.5, 'accuracy': 0.6}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class OpenWorldF1(CoreChecked, evaluate.Metric):
    check_inputs = staticmethod(check_label_inputs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}),
            reference_urls=["https://aclanthology.org/D17-1314/"],
        )

    def _compute(self, predictions, references, oos_label=None, labels=None):
        return open_world_f1(predictions, references, oos_label=oos_label, labels=labels)
