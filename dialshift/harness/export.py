"""Task YAMLs for lm-evaluation-harness from a built dataset folder.

Every response-ranking and pairwise-selection config becomes one ``multiple_choice`` task ``dialshift_<config>``: the
prompt is the context's turns, one per line; the choices are the instance's candidates; the target is its ``label``.
lm-eval scores each choice by its summed log-likelihood given the prompt (``acc``; ``acc_norm`` divides by the
choice's length in characters). The task reads the config's parquet file of the chosen split directly (no Hub access),
and carries its config, task and split in its ``metadata``, which lm-eval copies into its ``results_*.json``: that is
how ``dialshift lm-eval import`` knows what each logged sample belongs to. One group per family
(``dialshift_<family>_family``: a config may share its family's name) runs every task of the family.
"""

from pathlib import Path

from dialshift.errors import DialshiftError

#: The scoring tasks whose configs are multiple choice over their ``candidates``.
CHOICE_TASKS = ("response_ranking", "pairwise_selection")
TASK_PREFIX = "dialshift_"
#: The prompt: the context's turns, one per line (the choices follow after ``TARGET_DELIMITER``).
DOC_TO_TEXT = "{{ context | join('\\n') }}"
TARGET_DELIMITER = "\n"
#: Bumped when the prompt or the task layout changes (lm-eval records it in its results).
VERSION = 1


def task_name(config: str) -> str:
    return f"{TASK_PREFIX}{config}"


def group_name(family: str) -> str:
    return f"{TASK_PREFIX}{family}_family"


def _task_document(config, files: list[str], split: str, fingerprint: str | None) -> dict:
    return {
        "task": task_name(config.name),
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {split: [str(Path(path).resolve()) for path in files]}},
        "test_split": split,
        "output_type": "multiple_choice",
        "doc_to_text": DOC_TO_TEXT,
        "doc_to_choice": "candidates",
        "doc_to_target": "label",
        "target_delimiter": TARGET_DELIMITER,
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True},
                        {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True}],
        "metadata": {"version": VERSION, "dialshift_config": config.name, "dialshift_task": config.task,
                     "dialshift_family": config.family, "dialshift_split": split,
                     "dialshift_fingerprint": fingerprint},
    }


def export_tasks(dataset, out, *, split: str = "test", configs=None) -> dict:
    """Write ``out/<family>/dialshift_<config>.yaml`` for every multiple-choice config of the built folder ``dataset``
    that has ``split`` (or those ``configs`` patterns name), and ``out/<family>/_dialshift_<family>_family.yaml``
    grouping a family's tasks (:func:`group_name`); return ``{family: [task names]}``. Files are written in sorted
    order, byte-identical on a rerun."""
    import yaml

    from dialshift.configs import expand_patterns, natural_key
    from dialshift.hub.reading import data_files, folder_configs
    from dialshift.io import atomic_write
    from dialshift.scoring.gold import config_fingerprints

    dataset, out = Path(dataset), Path(out)
    typed = folder_configs(dataset)
    files = data_files(dataset)
    chosen = [name for name, config in typed.items() if config.task in CHOICE_TASKS and split in files.get(name, {})]
    if configs:
        chosen = [name for name in expand_patterns(configs, chosen, what="multiple-choice config") if name in chosen]
    if not chosen:
        raise DialshiftError(f"{dataset}: no response-ranking or pairwise-selection config with a {split!r} split to "
                             "export (build one with `dialshift build`)")
    fingerprints = config_fingerprints(dataset, chosen)
    by_family: dict[str, list[str]] = {}
    for name in sorted(chosen, key=natural_key):
        config = typed[name]
        document = _task_document(config, files[name][split], split, fingerprints.get(name))
        family_dir = out / config.family
        family_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(family_dir / f"{task_name(name)}.yaml", yaml.safe_dump(document, sort_keys=False,
                                                                             allow_unicode=True))
        by_family.setdefault(config.family, []).append(task_name(name))
    for family, names in sorted(by_family.items()):
        group = {"group": group_name(family), "task": names,
                 "aggregate_metric_list": [{"metric": "acc", "aggregation": "mean", "weight_by_size": False}],
                 "metadata": {"version": VERSION}}
        atomic_write(out / family / f"_{group_name(family)}.yaml", yaml.safe_dump(group, sort_keys=False))
    return by_family
