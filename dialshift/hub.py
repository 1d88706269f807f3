"""Hub dataset folders: write, read back, validate and push.

A folder holds one sub-folder of parquet files per config (``<config>/<split>-00000-of-00001.parquet``, the layout
``DatasetDict.push_to_hub`` produces) and a ``README.md`` whose YAML declares ``configs`` (data files per split) and
``dataset_info`` (features and split sizes per config), the licences and task tags, followed by a card body rendered
from ``hub_cards/dataset_card.md``. Such a folder loads offline with ``datasets.load_dataset(folder, config)`` and
uploads unchanged to the Hub.

Writes are atomic: the new folder is assembled beside the target and swapped in by renames, so an interrupted build
leaves the previous folder intact. The same inputs give byte-identical files.
"""

import hashlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from tqdm.auto import tqdm

from dialshift import __version__
from dialshift.errors import DialshiftError

README = "README.md"
CARD_TEMPLATE = "dataset_card.md"
SECTION_START = "<!-- dialshift:family {name} -->"
SECTION_END = "<!-- dialshift:end {name} -->"
#: The card's YAML key holding dialshift's own metadata: ``{version, configs: {name: {config, facts}}}``.
METADATA_KEY = "dialshift"


def parquet_name(split: str) -> str:
    return f"{split}-00000-of-00001.parquet"


@dataclass
class FamilyCard:
    """What a family contributes to the card: its section of the body and its YAML metadata."""

    name: str
    section: str
    license: str = ""
    languages: tuple = ()
    task_categories: tuple = ()
    citation: str = ""


# ----------------------------------------------------------------------------------------------- writing


def write_hub_folder(
    out_dir, configs: dict, cards: list[FamilyCard], *, keep=(), metadata: dict | None = None,
    pretty_name: str = "dialshift", progress: bool = True,
) -> Path:
    """Write ``{config_name: DatasetDict}`` and the card into ``out_dir`` atomically; return the folder path.

    ``keep`` names configs of the existing ``out_dir`` to carry over unchanged: their files are copied and their
    ``dataset_info`` reused, never re-read or re-written. ``metadata`` is ``{config: {...}}`` (typed config and build
    facts) stored under the card's ``dialshift`` key; a kept config keeps its entry unless ``metadata`` replaces it.
    Configs are written in sorted order so the README is independent of build order.
    """
    out_dir = Path(out_dir).expanduser().absolute()
    parent = out_dir.parent
    _ensure_writable(parent)
    if out_dir.exists() and not out_dir.is_dir():
        raise DialshiftError(f"output path {out_dir} exists and is not a directory; choose another --out")
    keep = sorted(set(keep) - set(configs))
    if not configs and not keep:
        raise DialshiftError("nothing to write: no config was built")
    for name in configs:
        _check_config_name(name)
    old_infos, old_meta = (_card_infos(out_dir), folder_metadata(out_dir)) if keep else ({}, {})
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=parent))
    try:
        infos = {}
        with _quiet_datasets():
            for name in tqdm(sorted(configs), desc="writing parquet", unit="config", disable=not progress):
                infos[name] = _write_config(tmp, name, configs[name])
        for name in keep:
            if name not in old_infos:
                raise DialshiftError(f"{out_dir / README}: no dataset_info for config {name!r} to keep; rebuild it")
            shutil.copytree(out_dir / name, tmp / name)
            infos[name] = old_infos[name]
        meta = {name: entry for name, entry in old_meta.items() if name in keep}
        meta.update({name: entry for name, entry in (metadata or {}).items() if name in infos})
        (tmp / README).write_text(render_card(infos, cards, pretty_name=pretty_name, folder=tmp, metadata=meta),
                                  encoding="utf-8")
        _swap_in(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def _write_config(folder: Path, name: str, splits) -> "datasets.DatasetInfo":  # noqa: F821
    """Write one config's parquet files; return its ``DatasetInfo`` (features, split sizes)."""
    from datasets.info import DatasetInfo
    from datasets.splits import SplitDict, SplitInfo

    split_dict = SplitDict()
    for split, dataset in sorted(splits.items()):
        target = folder / name / parquet_name(split)
        target.parent.mkdir(parents=True, exist_ok=True)
        dataset.to_parquet(str(target))
        split_dict.add(SplitInfo(name=split, num_bytes=_arrow_nbytes(target), num_examples=len(dataset)))
    first = splits[sorted(splits)[0]]
    return DatasetInfo(features=first.features, splits=split_dict, config_name=name)


def _card_infos(folder: Path) -> dict:
    from datasets.info import DatasetInfosDict

    return dict(DatasetInfosDict.from_dataset_card_data(read_card(folder).data))


@contextmanager
def _quiet_datasets():
    """Silence the per-file progress bars of ``datasets`` while we show our own."""
    import datasets

    was_enabled = not datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if was_enabled:
            datasets.enable_progress_bars()


def _ensure_writable(parent: Path) -> None:
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DialshiftError(f"cannot create output directory {parent}: {error.strerror}") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DialshiftError(f"output directory {parent} is not writable; choose another --out or fix its permissions")


def _check_config_name(name: str) -> None:
    if not name or "/" in name or name.startswith("."):
        raise DialshiftError(f"invalid config name {name!r}: use letters, digits, '_', '.' and '-'")


def _swap_in(tmp: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` by ``tmp`` with renames; the old folder survives until the new one is in place."""
    os.chmod(tmp, 0o755)
    if not out_dir.exists():
        os.rename(tmp, out_dir)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
    os.rmdir(old)
    os.rename(out_dir, old)
    try:
        os.rename(tmp, out_dir)
    except BaseException:
        os.rename(old, out_dir)
        raise
    shutil.rmtree(old, ignore_errors=True)


# ----------------------------------------------------------------------------------------------- the card


def render_card(infos: dict, cards: list[FamilyCard], *, folder: Path, pretty_name: str = "dialshift",
                metadata: dict | None = None) -> str:
    """The README for ``folder`` (whose parquet files are written), from ``{config: DatasetInfo}``: YAML (licences,
    tags, ``configs``, ``dataset_info``, the ``dialshift`` metadata block) and the body from ``hub_cards``."""
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    licenses = sorted({card.license for card in cards if card.license})
    card_data = DatasetCardData(
        pretty_name=pretty_name,
        license=licenses[0] if len(licenses) == 1 else (licenses or None),
        language=sorted({language for card in cards for language in card.languages}) or None,
        task_categories=sorted({task for card in cards for task in card.task_categories}) or None,
        tags=["dialogue", "distribution-shift", "calibration", "robustness", "dialshift"],
    )
    metadata_configs = MetadataConfigs()
    ordered = DatasetInfosDict()
    for name in sorted(infos):
        splits = sorted(infos[name].splits)
        metadata_configs[name] = {"data_files": [{"split": split, "path": f"{name}/{split}-*"} for split in splits]}
        ordered[name] = infos[name]
    metadata_configs.to_dataset_card_data(card_data)
    ordered.to_dataset_card_data(card_data)
    if metadata:
        card_data[METADATA_KEY] = {"version": __version__,
                                   "configs": {name: metadata[name] for name in sorted(metadata)}}

    sections = [
        SECTION_START.format(name=card.name) + "\n" + card.section.strip() + "\n" + SECTION_END.format(name=card.name)
        for card in sorted(cards, key=lambda c: c.name)
        if card.section.strip()
    ]
    rows = [
        (name, ", ".join(f"{split} {infos[name].splits[split].num_examples:,}" for split in sorted(infos[name].splits)))
        for name in sorted(infos)
    ]
    template = resources.files("dialshift_cards").joinpath(CARD_TEMPLATE).read_text(encoding="utf-8")
    card = DatasetCard.from_template(
        card_data,
        template_str=template,
        pretty_name=pretty_name,
        version=__version__,
        config_rows=rows,
        family_sections="\n\n".join(sections),
        citations=[card.citation.strip() for card in sorted(cards, key=lambda c: c.name) if card.citation.strip()],
        fingerprint=folder_fingerprint(folder),
    )
    return str(card).rstrip("\n") + "\n"


def _arrow_nbytes(path: Path) -> int:
    """In-memory Arrow size of a written parquet file: read back, so a rewrite of the same rows is byte-identical."""
    import pyarrow.parquet as pq

    return int(pq.read_table(path).nbytes)


def folder_fingerprint(folder) -> str:
    """A sha256 over every parquet file of the folder (path and bytes): the dataset revision of a local build."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*.parquet")):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


# ----------------------------------------------------------------------------------------------- reading


def read_card(folder):
    """The folder's README as a ``huggingface_hub.DatasetCard``; a clear error when it is missing or unreadable."""
    from huggingface_hub import DatasetCard

    if not Path(folder).is_dir():
        raise DialshiftError(f"{folder} is not a directory; pass the folder `dialshift build --out` wrote")
    path = Path(folder) / README
    if not path.is_file():
        raise DialshiftError(f"{path}: no dataset card; is {folder} a folder written by `dialshift build`?")
    try:
        return DatasetCard.load(path)
    except Exception as error:  # the YAML parser's errors vary by version
        raise DialshiftError(f"{path}: unreadable card front matter ({error})") from None


def declared_configs(folder) -> dict[str, dict[str, str]]:
    """``{config: {split: data_files pattern}}`` as declared in the README YAML."""
    card = read_card(folder)
    declared = {}
    for entry in card.data.to_dict().get("configs") or []:
        files = entry.get("data_files") or []
        if isinstance(files, str):
            files = [{"split": "train", "path": files}]
        declared[entry["config_name"]] = {item["split"]: item["path"] for item in files}
    return declared


def folder_metadata(folder) -> dict:
    """``{config: {"config": ..., "facts": ...}}`` from the card's ``dialshift`` block ({} for a folder without one)."""
    if not (Path(folder) / README).is_file():
        return {}
    block = read_card(folder).data.to_dict().get(METADATA_KEY) or {}
    return dict(block.get("configs") or {})


def folder_configs(folder) -> dict:
    """``{config: BenchmarkConfig}`` of a built folder: from its card's metadata, else from the installed families."""
    from dialshift.configs import BenchmarkConfig
    from dialshift.registry import all_configs

    stored = folder_metadata(folder)
    registered = all_configs()
    result = {}
    for name in declared_configs(folder):
        if name in stored and "config" in stored[name]:
            result[name] = BenchmarkConfig.from_dict(stored[name]["config"])
        elif name in registered:
            result[name] = registered[name]
    return result


# ----------------------------------------------------------------------------------------------- validating


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

    Checks: the card exists with a body; every config declared under ``configs`` has ``dataset_info`` with the same
    splits; no split's files are missing; the loaded features and row counts equal the declared ones; no parquet file
    is left undeclared; and every config in ``expected_configs`` (e.g. a family's list) is present.
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
    for missing in sorted(set(expected_configs or ()) - set(declared)):
        report.problems.append(f"{missing}: expected config is not in the folder")
    listed = set(datasets.get_dataset_config_names(str(folder)))
    for name in sorted(set(declared) - listed):
        report.problems.append(f"{name}: not listed by datasets.get_dataset_config_names")

    cache = Path(cache_dir) if cache_dir else Path(tempfile.mkdtemp(prefix="dialshift-validate-"))
    try:
        iterator = sorted(declared.items())
        iterator = tqdm(iterator, desc="validating", unit="config", disable=not progress)
        for name, files in iterator:
            report.problems.extend(_validate_config(folder, name, files, infos.get(name), cache, report.rows))
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
    import datasets

    problems = []
    if info is None:
        return [f"{name}: no dataset_info entry in {README}"]
    declared_splits = set(info.splits or {})
    if declared_splits != set(files):
        problems.append(f"{name}: data_files splits {sorted(files)} differ from dataset_info splits "
                        f"{sorted(declared_splits)}")
    for split in sorted(files):
        path = folder / name / parquet_name(split)
        if not path.is_file():
            problems.append(f"{name}/{split}: file {name}/{parquet_name(split)} is missing")
        elif info.features is not None and _parquet_features(path) != info.features:
            problems.append(f"{name}/{split}: the parquet file's features differ from the declaration in {README}")
    if problems:
        return problems
    try:
        with _quiet_datasets():
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


# ----------------------------------------------------------------------------------------------- pushing


def upload_plan(folder) -> list[str]:
    """The exact files :func:`push_hub_folder` uploads (relative paths, sorted): the card and declared parquet."""
    folder = Path(folder)
    files = [README]
    for name, splits in sorted(declared_configs(folder).items()):
        files.extend(f"{name}/{parquet_name(split)}" for split in sorted(splits))
    return files


def push_hub_folder(folder, repo_id: str, *, token=None, private: bool = False, revision=None, api=None) -> str:
    """Validate the folder, then upload it as a dataset repo (one commit); return the commit URL."""
    from huggingface_hub import HfApi

    report = validate_hub_folder(folder)
    if not report.ok:
        raise DialshiftError(f"{folder} does not validate ({report.problems[0]}); run `dialshift validate {folder}`")
    if "/" not in repo_id:
        raise DialshiftError(f"--repo-id {repo_id!r} must look like ORG/NAME")
    api = api or HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    commit = api.upload_folder(
        folder_path=str(folder),
        repo_id=repo_id,
        repo_type="dataset",
        revision=revision,
        allow_patterns=upload_plan(folder),
        delete_patterns=["*.parquet"],
        commit_message=f"dialshift {__version__}: {len(declared_configs(folder))} configs",
    )
    return str(getattr(commit, "commit_url", commit))
