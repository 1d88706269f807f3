"""Your own shifted configs as a dataset folder that ``dialshift score``, ``evaluate`` and the plots read by name.

:func:`custom_config` declares a config of family ``custom``: its name, the scoring task, a description, the shift
that made it (its parameters are stored in the typed config; the shift's name and class give the curve group) and
the config it is compared with (``baseline``, e.g. the unshifted corpus written beside it). :func:`write_custom_folder`
writes ``{config: Dataset or DatasetDict}`` with those typed configs into a Hub dataset folder (parquet + card, as
``dialshift build`` writes its own), so every command finds each config under its own name and labels it with its
own description (a later call adds or replaces configs in a folder it wrote; every instance is checked for its
task first, :mod:`dialshift.instances`)::

    shifted, report = shift_dataset(test, UnknownWord.for_corpus(texts, ratio=0.3), return_report=True)
    configs = [custom_config("my_source", task="response_ranking", description="my corpus, unshifted"),
               custom_config("my_uw", task="response_ranking", description="UW 0.30 of my corpus",
                             shift=unknown, baseline="my_source", report=report)]
    write_custom_folder("build/mine", {"my_source": test, "my_uw": shifted}, configs)
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from dialshift.configs import Baseline, BenchmarkConfig, ShiftGroup
from dialshift.errors import DialshiftError

FAMILY = "custom"
#: Parameters that place a shifted config on its curve's x axis, in order of preference.
INTENSITY_PARAMETERS = ("ratio", "deleted", "turns", "bucket", "count", "probability")


def custom_config(name: str, *, task: str, description: str, shift=None, baseline: str | None = None,
                  intensity: float | None = None, intensity_label: str | None = None, report=None,
                  splits: Sequence[str] = ("test",)) -> BenchmarkConfig:
    """A typed config of family ``custom``; with ``shift`` it is a shifted config on the curve of that shift (x:
    ``intensity``, default the first of :data:`INTENSITY_PARAMETERS` the shift has, else 1), and its parameters
    are the shift's (plus ``shift``: its name, and ``skipped``: a :class:`~dialshift.shifts.ShiftReport`'s counts)."""
    from dialshift.hub.layout import check_config_name
    from dialshift.registry import task_names

    if not isinstance(name, str):
        raise DialshiftError(f"config name {name!r}: give a string (letters, digits, '_', '.' and '-')")
    check_config_name(name)
    if task not in task_names():
        raise DialshiftError(f"config {name!r}: no scoring task {task!r}; the tasks are {', '.join(task_names())}")
    if baseline == name:
        raise DialshiftError(f"config {name!r} names itself as its baseline: the shifted config and the unshifted one "
                             "(--name and --source-name) need different names")
    if shift is None:
        return BenchmarkConfig(name, FAMILY, task, description, splits=tuple(splits),
                               baselines=_baselines(name, baseline))
    parameters = shift.parameters()
    if intensity is None:
        axis = next((key for key in INTENSITY_PARAMETERS if isinstance(parameters.get(key), (int, float))), None)
        intensity = float(parameters[axis]) if axis else 1.0
    else:
        axis = "intensity"
    group = ShiftGroup(shift.name, shift.name.upper(), f"{FAMILY}_{shift.name}", f"{type(shift).__name__} "
                       f"({description})", axis or "intensity")
    stored = {**parameters, "shift": shift.name, "stream": shift.key}
    if report is not None:
        stored["skipped"] = dict(report.skipped)
    return BenchmarkConfig(name, FAMILY, task, description, group, float(intensity),
                           intensity_label or f"{intensity:g}", stored, tuple(splits),
                           baselines=_baselines(name, baseline))


def _baselines(name: str, baseline: str | None) -> tuple:
    if baseline is None:
        return ()
    return (Baseline(baseline, "corpus", f"the configuration {name} was made from, on the instances both hold"),)


def card_section(configs: Sequence[BenchmarkConfig]) -> str:
    """The card's ``custom`` section: each config's description, shift parameters and baseline."""
    lines = ["## Custom configs", "", "Configs written with `dialshift shift` or `dialshift.custom.write_custom_folder`"
             " (family `custom`).", "", "| config | task | description | shift parameters | baseline |",
             "|---|---|---|---|---|"]
    for config in configs:
        parameters = ", ".join(f"{key}={value}" for key, value in sorted(config.parameters.items())) or "-"
        baseline = ", ".join(item.config for item in config.baselines) or "-"
        lines.append(f"| `{config.name}` | {config.task} | {config.description} | {parameters} | {baseline} |")
    return "\n".join(lines)


def custom_folder_configs(out_dir, names=()) -> dict:
    """``{config: BenchmarkConfig}`` of the custom configs already in ``out_dir`` that writing ``names`` keeps;
    empty for a new or empty folder. Refused with one line: a folder dialshift did not write (as ``dialshift
    build`` refuses it), and one holding configs ``dialshift build`` wrote (their card sections would be lost)."""
    from dialshift.hub.layout import README
    from dialshift.hub.ownership import check_output_folder
    from dialshift.hub.reading import declared_configs, folder_configs

    out = check_output_folder(out_dir, rebuilding=list(names))
    if not (out / README).is_file():
        return {}
    typed = folder_configs(out)
    kept = [name for name in declared_configs(out) if name not in names]
    other = sorted(name for name in kept if name not in typed or typed[name].family != FAMILY)
    if other:
        families = sorted({typed[name].family for name in other if name in typed} or {"unknown"})
        raise DialshiftError(f"{out} holds configs of family {', '.join(families)} ({', '.join(other[:3])}"
                             f"{' ...' if len(other) > 3 else ''}), written by `dialshift build`; custom configs "
                             "are added only to a folder of custom configs: choose another --out")
    return {name: typed[name] for name in kept}


def _config_splits(name: str, data, config: BenchmarkConfig) -> dict:
    """``{split: Dataset}`` of one config's data, each split's instances checked for the config's task."""
    from datasets import Dataset, DatasetDict

    from dialshift.instances import check_instances

    if isinstance(data, Dataset):
        splits = {"test": data}
    elif isinstance(data, (DatasetDict, Mapping)) and all(isinstance(item, Dataset) for item in data.values()):
        splits = dict(data)
    else:
        raise DialshiftError(f"config {name!r}: {type(data).__name__} given; give a datasets.Dataset (the test "
                             "split) or a DatasetDict")
    if set(splits) != set(config.splits):
        raise DialshiftError(f"config {name!r}: splits {sorted(splits)} but the config declares "
                             f"{sorted(config.splits)}")
    for split, dataset in splits.items():
        where = f"config {name!r} split {split!r}"
        if "id" not in dataset.column_names:
            raise DialshiftError(f"{where}: no 'id' column (scoring joins by id)")
        ids = dataset["id"]
        if len(set(ids)) != len(ids):
            raise DialshiftError(f"{where}: ids repeat (e.g. seeds_per_instance with include_original); a config "
                                 "holds each id once")
        check_instances(dataset, config.task, where=where, require_context=False,
                        fix="fix or leave out that row (dialshift.instances.check_instances(..., skip=True))")
    return splits


def write_custom_folder(out_dir, datasets: Mapping, configs: Sequence[BenchmarkConfig], *,
                        pretty_name: str = "dialshift-custom", progress: bool = False) -> Path:
    """Write ``{config: Dataset | DatasetDict}`` (a plain ``Dataset`` is the ``test`` split) with their typed
    ``configs`` into the dataset folder ``out_dir``: new, empty, or holding custom configs dialshift wrote, whose
    other configs are kept (one of the same name is replaced); see :func:`custom_folder_configs` for the folders
    refused. Every instance is checked for its config's task first (:mod:`dialshift.instances`). Returns the path."""
    from dialshift.hub.card import FamilyCard
    from dialshift.hub.layout import output_path
    from dialshift.hub.locking import folder_lock
    from dialshift.hub.writing import write_hub_folder

    if not isinstance(datasets, Mapping) or isinstance(configs, (str, Mapping)):
        raise DialshiftError("write_custom_folder(out_dir, {config name: Dataset}, [custom_config(...), ...]): give "
                             "the datasets as a mapping by config name and the configs as a list")
    given = {}
    for config in configs:
        if not isinstance(config, BenchmarkConfig):
            raise DialshiftError(f"configs: {config!r} is not a BenchmarkConfig (make one with custom_config)")
        if config.name in given:
            raise DialshiftError(f"config {config.name!r} is given twice")
        given[config.name] = config
    unmatched = sorted(set(datasets) ^ set(given))
    if unmatched:
        raise DialshiftError(f"config {unmatched[0]!r} has a dataset but no config, or a config but no dataset: give "
                             "both for every config")
    if not given:
        raise DialshiftError("nothing to write: give at least one config and its dataset")
    splits = {name: _config_splits(name, datasets[name], given[name]) for name in sorted(given)}
    out = output_path(out_dir)
    custom_folder_configs(out, given)  # refuse before waiting for the lock
    with folder_lock(out):
        kept = custom_folder_configs(out, given)
        by_name = {**kept, **given}
        for config in by_name.values():
            for baseline in config.baselines:
                if baseline.config not in by_name:
                    raise DialshiftError(f"config {config.name!r}: baseline {baseline.config!r} is not written with "
                                         "it; write the unshifted data as a config too")
        card = FamilyCard(FAMILY, card_section([by_name[name] for name in sorted(by_name)]))
        metadata = {name: {"config": config.to_dict(), "facts": {}} for name, config in given.items()}
        return write_hub_folder(out, splits, [card], keep=sorted(kept), metadata=metadata, pretty_name=pretty_name,
                                progress=progress)


def training_texts(dataset, context_column: str = "context", turn_separator: str | None = None):
    """The texts a UW/KW vocabulary is counted from: every context turn, and the gold response (a ``response``
    column, or ``candidates[label]``) when the rows have one, as Lee et al.'s vocabulary of the training dialogues."""
    from dialshift.shifts.dataset import split_turns

    for row in dataset:
        context = row[context_column]
        yield from (split_turns(context, turn_separator) if isinstance(context, str) and turn_separator
                    else ([context] if isinstance(context, str) else context))
        if isinstance(row.get("response"), str):
            yield row["response"]
        elif isinstance(row.get("candidates"), list) and isinstance(row.get("label"), int):
            yield row["candidates"][row["label"]]
