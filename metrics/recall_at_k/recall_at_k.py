"""Recall@k and MRR for response ranking: an `evaluate` wrapper over ``dialshift.metrics.recall_at_k``."""

import datasets
import evaluate

from dialshift.metrics import recall_at_k
from dialshift.metrics.modules import CoreChecked
from dialshift.metrics.ranking import check_inputs

_CITATION = """\
@inproceedings{lowe2015ubuntu,
  title={The {U}buntu Dialogue Corpus: A Large Dataset for Research in Unstructured Multi-Turn Dialogue Systems},
  author={Lowe, Ryan and Pow, Nissan and Serban, Iulian and Pineau, Joelle},
  booktitle={Proceedings of the 16th Annual Meeting of the Special Interest Group on Discourse and Dialogue},
  pages={285--294},
  year={2015}
}
"""

_DESCRIPTION = """\
Recall@k (R@k/C): the share of examples whose gold candidate is ranked in the top k of its C scored candidates, and
the mean reciprocal rank of the gold candidate. Ties with the gold candidate's score are counted pessimistically by
default (every tied candidate is ranked above the gold one, so constant scores earn nothing); ties="optimistic" and
ties="expected" (the expectation over a random order of the tied candidates) are available.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `float`): N x C candidate scores (higher = better; logits or probabilities).
    references (`list` of `int`): the N gold candidate indices, in [0, C).
    k (`list` of `int`, defaults to [1, 2, 5]): the cut-offs, each at most C (a larger one raises ValueError).
    ties (`str`, defaults to "pessimistic"): "pessimistic", "optimistic" or "expected".
Returns:
    recall@k (`float`): one key per cut-off, e.g. recall@1, recall@2, recall@5.
    mrr (`float`): mean reciprocal rank.
Examples:
    >>> recall_metric = evaluate.load(dialshift.metric_path("recall_at_k"))
    >>> recall_metric.compute(predictions=[[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]], references=[1, 1], k=[1, 2])
    {'recall@1': 0.5, 'recall@2': 1.0, 'mrr': 0.75}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RecallAtK(CoreChecked, evaluate.Metric):
    check_inputs = staticmethod(check_inputs)

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.List(datasets.Value("float64")), "references": datasets.Value("int64")}
            ),
            reference_urls=["https://arxiv.org/abs/1506.08909"],
        )

    def _compute(self, predictions, references, k=(1, 2, 5), ties="pessimistic"):
        return recall_at_k(predictions, references, k=k, ties=ties)
