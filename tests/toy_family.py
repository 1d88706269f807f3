"""A toy benchmark family that plugs into dialshift through the ``dialshift.families`` entry point only.

It is the proof that a family and a task are new files and nothing else: the ``toy_plugin`` fixture (conftest.py)
installs entry points naming ``toy_family:ToyFamily`` (``dialshift.families``) and ``toy_family:ToyVote``
(``dialshift.tasks``) in a temporary site folder; ``dialshift build/validate/score/plot`` then work for them with no
edit anywhere in dialshift. The main task is pairwise selection (two candidates, one correct, a ``type`` per case),
and its shift swaps the candidates' order with a seeded probability; ``toy_vote`` is scored by the toy task.
"""

from dataclasses import dataclass

import numpy as np

from dialshift.configs import Baseline, BenchmarkConfig, ShiftGroup
from dialshift.registry import BuildResult, Family, option
from dialshift.scoring.tasks import MetricInfo, ScoringTask
from dialshift.shifts import InstanceRandom

GROUP = ShiftGroup("swap", "Swap", "toy_swap", "Toy: candidate swaps", "swap probability")
CASES = 40


@dataclass(frozen=True)
class ToyOptions:
    toy_model: str | None = option(None, "a model folder, needed for toy_model", metavar="DIR")
    toy_cases: int = option(CASES, "cases per config", metavar="N")


class ToyFamily(Family):
    name = "toyfam"
    description = "a toy pairwise-selection family for tests"
    license = "cc-by-4.0"
    citation = "@misc{toyfam, title = {Toy}}"
    options_class = ToyOptions

    def configs(self):
        task = "pairwise_selection"
        return [BenchmarkConfig("toy", self.name, task, "unshifted toy cases"),
                *[BenchmarkConfig(f"toy_swap_{p}", self.name, task, f"candidates swapped with probability {p}", GROUP,
                                  p, f"{p:.1f}", {"probability": p},
                                  baselines=(Baseline("toy", "corpus", "the same cases unswapped"),))
                  for p in (0.5, 1.0)],
                BenchmarkConfig("toy_vote", self.name, "toy_vote", "the toy cases scored by the toy task"),
                BenchmarkConfig("toy_model", self.name, task, "needs --toy-model", optional=True)]

    def build(self, configs, context):
        import datasets

        built, facts = {}, {}
        for config in configs:
            if config.optional and not context.options.toy_model:
                continue
            probability = config.parameters.get("probability", 0.0)
            rows = {"id": [], "context": [], "candidates": [], "label": [], "type": [], "seed": []}
            for k in range(context.options.toy_cases):
                uid = f"toy-{k:03d}"
                swap = InstanceRandom(context.seed, uid)("swap").random() < probability
                rows["id"].append(uid)
                rows["context"].append([f"question {k}"])
                rows["candidates"].append([f"wrong {k}", f"right {k}"] if swap else [f"right {k}", f"wrong {k}"])
                rows["label"].append(int(swap))
                rows["type"].append("even" if k % 2 == 0 else "odd")
                rows["seed"].append(context.seed)
            built[config.name] = datasets.DatasetDict({"test": datasets.Dataset.from_dict(rows)})
            facts[config.name] = {"cases": context.options.toy_cases, "swapped": sum(rows["label"])}
        return BuildResult(built, facts)

    def card_section(self, facts):
        return "## Toy\n\n" + ", ".join(f"{name} ({fact['swapped']} swapped)" for name, fact in sorted(facts.items()))


class ToyVote(ScoringTask):
    """A toy scoring task: each line's ``vote`` (a candidate index) against the gold ``label``."""

    name = "toy_vote"
    inputs = "id, vote (candidate index)"
    outputs = "agreement, error rate"
    description = "Predictions: `id` and `vote`; agreement = share of votes equal to the gold label."
    gold_columns = ("label",)
    metric_info = {"agreement": MetricInfo("Agreement", True), "error_rate": MetricInfo("Error rate", False)}

    @property
    def fields(self):
        import pyarrow as pa

        return {"vote": pa.int64()}

    def instance_stats(self, table, gold, options):
        votes = table.column("vote").to_numpy(zero_copy_only=False)
        return {"hit": (votes == gold["label"].to_numpy(zero_copy_only=False)).astype(np.float64)}

    def metrics(self, stats, options, weights=None):
        weights = np.ones(len(stats["hit"])) if weights is None else weights
        agreement = float(np.dot(weights, stats["hit"]) / weights.sum()) if weights.sum() else float("nan")
        return {"agreement": agreement, "error_rate": 1.0 - agreement}

    def headline(self, options):
        return ("agreement", "error_rate")
