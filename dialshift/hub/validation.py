"""Validating a built folder: every declared config loads with ``datasets.load_dataset``, matches its declaration
and the fingerprints its card recorded, and no parquet file is left undeclared."""

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from dialshift.hub.fingerprints import check_config_files
from dialshift.hub.layout import README, parquet_name, rebuild_hint
from dialshift.hub.reading import declared_configs, folder_metadata, read_card
from dialshift.hub.writing import quiet_datasets
from dialshift.identity import identity_problems


@dataclass
class ValidationReport:
    folder: Path
    rows: list = field(default_factory=list)  # (config, split, num_rows)
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def validate_hub_folder(folder, *, cache_dir=None, expected_configs=None, progress: bool = False) -> ValidationReport:
    """Check that every declared config loads with ``datasets.load_dataset`` and matches its declaration.

    Checks: the card exists with a body; its ``data_files`` stay inside the folder (else one-line error); every
    config declared under ``configs`` has ``dataset_info`` with the same splits; every split's file is present, is a
    readable parquet file and matches the size and sha256 the card recorded at build time (so files swapped between
    configs are caught); the loaded features and row counts equal the declared ones; no parquet file is left
    undeclared; and every config in ``expected_configs`` (e.g. a family's list) is present. Each problem is one line
    naming the file and the fix.
    """
    import datasets
    from datasets.info import DatasetInfosDict

    folder = Path(folder).expanduser().absolute()
    report = ValidationReport(folder)
    card = read_card(folder)
    if not card.text.strip():
        report.problems.append(f"{README}: the card has no body")
    declared = declared_configs(folder)
    if not declared:
        report.problems.append(f"{README}: declares no configs")
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    recorded = folder_metadata(folder)
    report.problems.extend(f"{README}: {problem}" for problem in identity_problems(recorded))
    for missing in sorted(set(expected_configs or ()) - set(declared)):
        report.problems.append(f"{missing}: expected config is not in the folder")
    file_problems = {name: check_config_files(folder, name, sorted(files), recorded.get(name, {}).get("files"))
                     for name, files in sorted(declared.items())}
    if not any(file_problems.values()):  # datasets raises on a missing data file: list only a complete folder
        try:
            listed = set(datasets.get_dataset_config_names(str(folder)))
        except Exception as error:  # datasets' errors vary by version
            listed = set(declared)
            report.problems.append(f"{README}: datasets cannot list the configs ({type(error).__name__}: "
                                   f"{str(error).splitlines()[0] if str(error) else ''})")
        for name in sorted(set(declared) - listed):
            report.problems.append(f"{name}: not listed by datasets.get_dataset_config_names")

    cache = Path(cache_dir) if cache_dir else Path(tempfile.mkdtemp(prefix="dialshift-validate-"))
    try:
        iterator = sorted(declared.items())
        iterator = tqdm(iterator, desc="validating", unit="config", disable=not progress)
        for name, files in iterator:
            report.problems.extend(file_problems[name] or
                                   _validate_config(folder, name, files, infos.get(name), cache, report.rows))
    finally:
        if not cache_dir:
            shutil.rmtree(cache, ignore_errors=True)
    known = {folder / name / parquet_name(split) for name, files in declared.items() for split in files}
    for path in sorted(folder.rglob("*.parquet")):
        if path not in known:
            report.problems.append(f"{path.relative_to(folder)}: parquet file not declared in {README}")
    return report


def _parquet_features(path: Path):
    import datasets
    import pyarrow.parquet as pq

    return datasets.Features.from_arrow_schema(pq.read_schema(path))


def _validate_config(folder: Path, name: str, files: dict, info, cache: Path, rows: list) -> list[str]:
    """Load one config whose files :func:`check_config_files` accepted and compare it with its declaration."""
    import datasets

    problems = []
    if info is None:
        return [f"{name}: no dataset_info entry in {README}; {rebuild_hint(folder, name)}"]
    declared_splits = set(info.splits or {})
    if declared_splits != set(files):
        problems.append(f"{name}: data_files splits {sorted(files)} differ from dataset_info splits "
                        f"{sorted(declared_splits)}")
    for split in sorted(files):
        if info.features is not None and _parquet_features(folder / name / parquet_name(split)) != info.features:
            problems.append(f"{name}/{split}: the parquet file's features differ from the declaration in {README}")
    if problems:
        return problems
    try:
        with quiet_datasets():
            loaded = datasets.load_dataset(str(folder), name, cache_dir=str(cache))
    except Exception as error:
        return [f"{name}: load_dataset failed: {type(error).__name__}: {str(error).splitlines()[0]}"]
    for split in sorted(files):
        if split not in loaded:
            problems.append(f"{name}/{split}: split missing after loading")
            continue
        dataset = loaded[split]
        rows.append((name, split, len(dataset)))
        if info.features is not None and dataset.features != info.features:
            problems.append(f"{name}/{split}: features differ from the declaration in {README}")
        expected = info.splits[split].num_examples
        if expected != len(dataset):
            problems.append(f"{name}/{split}: {len(dataset):,} rows, the card declares {expected:,}")
    return problems
