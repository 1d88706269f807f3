"""Task-generic scoring: predictions files -> the task's metric set with paired bootstrap intervals -> results.

One pipeline serves ``dialshift score`` (predictions against a dataset folder's gold, no model: the leaderboard path)
and ``dialshift evaluate`` (model -> predictions -> the same code), so both give the same ``results.json``.

* :mod:`dialshift.scoring.tasks`: a :class:`ScoringTask` per task (response ranking, pairwise selection, open-world
  intent, attention distribution): its prediction fields, gold columns, per-instance statistics, metric set and the
  metrics' metadata (:class:`MetricInfo`). A new family whose configs name an existing task needs nothing here; a
  new task subclasses :class:`ScoringTask` and is advertised through the ``dialshift.tasks`` entry-point group.
* :mod:`dialshift.scoring.pipeline`: :func:`score_directory` / :func:`score_files` (chunked reading, join by id,
  intervals, paired differences from the declared baselines on shared ids) and :func:`write_results`.
* :mod:`dialshift.scoring.bootstrap`: the seeded percentile Poisson bootstrap, paired by instance id across configs.
* :mod:`dialshift.scoring.report`: ``results.md`` and plots from the typed configs stored in ``results.json``.
* :mod:`dialshift.scoring.jsonl`: the JSON-lines reader (record by record, or in Arrow chunks).
* :mod:`dialshift.scoring.predictions`: the one predictions writer, in the fields of a config's task.
* :mod:`dialshift.scoring.gold`: gold columns of a dataset folder, keyed by id.
"""

from dialshift.scoring.jsonl import clip, iter_jsonl, read_jsonl, read_jsonl_chunks
from dialshift.scoring.pipeline import (
    ScoringSettings,
    check_output_dir,
    score_directory,
    score_files,
    write_results,
)
from dialshift.scoring.tasks import MetricInfo, ScoringTask, get_task, installed_tasks

__all__ = [
    "MetricInfo",
    "ScoringSettings",
    "ScoringTask",
    "check_output_dir",
    "clip",
    "get_task",
    "installed_tasks",
    "iter_jsonl",
    "read_jsonl",
    "read_jsonl_chunks",
    "score_directory",
    "score_files",
    "write_results",
]
