"""The lm-evaluation-harness bridge: dialshift configs as lm-eval multiple-choice tasks, and lm-eval's logged samples
back as dialshift prediction files (``dialshift lm-eval export`` / ``import``)."""

from dialshift.harness.export import CHOICE_TASKS, TASK_PREFIX, export_tasks
from dialshift.harness.samples import import_samples

__all__ = ["CHOICE_TASKS", "TASK_PREFIX", "export_tasks", "import_samples"]
