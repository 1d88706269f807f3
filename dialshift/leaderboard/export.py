"""``model-index`` metadata for a model card from a results-store record (``huggingface_hub``'s ``EvalResult``):
one entry per config and metric, the task type and the dataset config named, marked unverified (self-reported is
false: the leaderboard scored it, but the Hub does not verify it)."""

from dialshift.errors import DialshiftError


def eval_results(record: dict, dataset_id: str, *, source_url: str | None = None) -> list:
    """``huggingface_hub.EvalResult`` objects of a record: one per config and metric with a finite value."""
    from huggingface_hub import EvalResult

    from dialshift.configs import BenchmarkConfig
    from dialshift.scoring.tasks import get_task

    results = []
    for name, values in record["results"].items():
        config = BenchmarkConfig.from_dict(record["configs"][name])
        task = get_task(config.task)
        options = (record.get("options") or {}).get(name, {})
        for metric, value in values.items():
            if metric == "instances" or value is None:
                continue
            results.append(EvalResult(
                task_type=task.hub_task_type,
                task_name=config.task.replace("_", " "),
                dataset_type=dataset_id,
                dataset_name=f"dialshift {name}",
                dataset_config=name,
                dataset_split=(record.get("scoring") or {}).get("split", "test"),
                dataset_revision=record["config"].get("dataset_commit"),  # a Hub commit, or none
                metric_type=metric,
                metric_name=task.label(metric, options),
                metric_value=float(value),
                verified=False,
                source_name="dialshift leaderboard",
                source_url=source_url or record["config"].get("link"),
            ))
    return results


def model_index(record: dict, dataset_id: str, *, source_url: str | None = None) -> str:
    """The YAML ``model-index:`` block (for a model card's front matter) of one record."""
    import yaml
    from huggingface_hub.repocard_data import eval_results_to_model_index

    entries = eval_results(record, dataset_id, source_url=source_url)
    if not entries:
        raise DialshiftError("the record has no finite metric value to export")
    name = f"{record['config']['model_name']} ({record['config']['method']})"
    return yaml.safe_dump({"model-index": eval_results_to_model_index(name, entries)}, sort_keys=False,
                          allow_unicode=True)
