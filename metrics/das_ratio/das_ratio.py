"""DAS ratio of the distracting test (Xing and Gulla, 2022): a wrapper over ``dialshift.metrics.das_ratio``."""

import datasets
import evaluate

from dialshift.metrics import das_ratio
from dialshift.metrics.attention import check_dialogue_inputs
from dialshift.metrics.modules import CoreChecked

_CITATION = """\
@misc{xing2022evaluating,
  title={Evaluating and Improving Context Attention Distribution on Multi-Turn Response Generation Using
         Self-Contained Distractions},
  author={Xing, Yujie and Gulla, Jon Atle},
  year={2022}
}
"""

_DESCRIPTION = """\
The distracting attention score ratio (eq. 8 of Xing and Gulla, 2022): for each dialogue, the mean attention score
(AS, eq. 7) of the distracting utterances inserted into its History divided by the mean AS of the original History
utterances, averaged over dialogues. Lower is better: the model gives less attention to distractions than to the
real context. The Query (last context utterance) is left out of both means.
"""

_KWARGS_DESCRIPTION = """
Args:
    attention_scores (`list` of `list` of `float`): per dialogue, the AS of each non-Query context utterance (with
        includes_query=True, each list also ends with the Query's AS, which is ignored). dialshift.metrics has
        helpers computing AS from attention weights for non-hierarchical, static and dynamic attention.
    distractor_mask (`list` of `list` of `int`): per dialogue, 1 for a distracting utterance and 0 for an original
        History utterance, aligned with attention_scores.
    includes_query (`bool`, defaults to False): whether each attention_scores list ends with the Query's AS.
    skip_undefined (`bool`, defaults to False): skip dialogues without a distractor or without History, and count
        (never drop silently) those whose History gets zero attention, instead of raising ValueError.
Returns:
    das_ratio (`float`): eq. 8; lower is better.
    mean_as_distractor (`float`): mean over dialogues of the mean AS of the distracting utterances.
    mean_as_history (`float`): mean over dialogues of the mean AS of the original History utterances.
    n_dialogues (`int`): dialogues used.
    n_history_starved (`int`): dialogues whose History gets zero attention (ratio +inf; with skip_undefined=True).
    history_starved (`float`): their share among the dialogues with both distracting and History utterances.
Examples:
    >>> das_metric = evaluate.load(dialshift.metric_path("das_ratio"))
    >>> das_metric.compute(attention_scores=[[0.5, 1.0, 1.5], [0.4, 0.8]], distractor_mask=[[1, 0, 0], [0, 1]])
    {'das_ratio': 1.2, 'mean_as_distractor': 0.65, 'mean_as_history': 0.825, 'n_dialogues': 2, 'n_history_starved': 0, 'history_starved': 0.0}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DASRatio(CoreChecked, evaluate.Metric):
    check_inputs = staticmethod(check_dialogue_inputs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "attention_scores": datasets.List(datasets.Value("float64")),
                    "distractor_mask": datasets.List(datasets.Value("int64")),
                }
            ),
            reference_urls=[],
        )

    def _compute(self, attention_scores, distractor_mask, includes_query=False, skip_undefined=False):
        return das_ratio(
            attention_scores, distractor_mask, includes_query=includes_query, skip_undefined=skip_undefined
        )
