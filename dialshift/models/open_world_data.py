"""The data of open-world intent training: a covariate config's splits, and open-domain outlier utterances.

* :func:`load_open_world_config`: an ``open_world_intent`` config of a dataset folder (the covariate family's
  ``clinc14_cov``, ``hwu12_cov`` and their few-shot configs), its intent names and out-of-scope id.
* :func:`read_outlier_utterances`: the open-domain utterances DCLOOS (Zhan et al. 2021) trains on as out-of-scope
  examples: DailyDialog's training utterances from the raw data folder, or any text file.
"""

from pathlib import Path

from dialshift.errors import DialshiftError

#: The splits an open-world config needs: training, model selection, threshold selection, and the two test sets.
SPLITS = ("train", "validation", "validation_hold", "test", "cov_test")


def load_open_world_config(folder, config: str) -> dict:
    """``{"data": DatasetDict, "names": intent names, "oos": out-of-scope id}`` of an ``open_world_intent`` config of a
    dataset folder, checked to have every split of :data:`SPLITS` and its ``oos`` class last; one-line errors
    otherwise."""
    import datasets

    from dialshift.hub.reading import folder_configs

    configs = folder_configs(folder)
    if config not in configs:
        raise DialshiftError(f"{folder}: no config {config!r} (it has: {', '.join(sorted(configs)) or 'none'}; "
                             "build it with `dialshift build --family covariate`)")
    if configs[config].task != "open_world_intent":
        raise DialshiftError(f"{folder}: config {config!r} is a {configs[config].task} config, not open_world_intent")
    oos = configs[config].parameters.get("oos_label")
    data = datasets.load_dataset(str(folder), config)
    missing = [split for split in SPLITS if split not in data]
    if missing:
        raise DialshiftError(f"{folder}: config {config!r} has no {missing[0]!r} split (rebuild it)")
    names = data["train"].features["label"].names
    if oos is None or not 0 <= oos < len(names) or names[oos] != "oos":
        raise DialshiftError(f"{folder}: config {config!r}: oos_label {oos!r} does not name the 'oos' class of {names}")
    if oos != len(names) - 1:
        raise DialshiftError(f"{folder}: config {config!r}: the oos class must be the last label (found id {oos})")
    return {"data": data, "names": names, "oos": oos}


def read_outlier_utterances(source: str, data_dir=None) -> list[str]:
    """DCLOOS's open-domain outlier utterances from ``source`` ('none', 'dailydialog' or a text file), de-duplicated
    in order of first appearance."""
    from dialshift.data_dir import resolve_data_dir

    if source == "none":
        return []
    path = resolve_data_dir(data_dir) / "dailydialog" / "train" / "dialogues_train.txt" if source == "dailydialog" \
        else Path(source)
    if not path.is_file():
        raise DialshiftError(f"open-domain outliers: {path} is not a file (give a text file, 'dailydialog' or 'none')")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise DialshiftError(f"open-domain outliers: {path} is not UTF-8 text (byte {error.start})") from error
    utterances = [part.strip() for line in text.splitlines() for part in line.split("__eou__")]
    utterances = list(dict.fromkeys(u for u in utterances if u))
    if not utterances:
        raise DialshiftError(f"open-domain outliers: {path} holds no utterance")
    return utterances
