"""Benchmark families and their configs.

A family (one per module in ``dataset_scripts/``) subclasses :class:`Family` and registers an instance with
:func:`register_family`. The CLI discovers families by importing every module of the ``dataset_scripts`` package.
"""

import fnmatch
import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path

from dialshift.errors import DialshiftError


@dataclass(frozen=True)
class ConfigInfo:
    """One Hub config: its name, the family that builds it and a one-line description."""

    name: str
    family: str
    description: str


@dataclass
class BuildContext:
    """What a family needs to build: raw data, parallelism, a seed, a cache, and family-specific options."""

    data_dir: Path
    num_proc: int = 1
    seed: int = 0
    cache_dir: Path | None = None
    progress: bool = True
    options: dict = field(default_factory=dict)


class Family:
    """Base class of a benchmark family. Subclasses set the class attributes and implement the methods."""

    name: str = ""
    description: str = ""
    license: str = ""
    citation: str = ""
    languages: tuple = ("en",)
    task_categories: tuple = ()

    def configs(self) -> list[ConfigInfo]:
        """Every config this family can build, in a stable order."""
        raise NotImplementedError

    def optional(self, config_name: str) -> bool:
        """Whether a plain build may skip this config (e.g. it needs a trained model); validation allows its absence."""
        return False

    def add_build_arguments(self, parser) -> None:
        """Add family-specific options to ``dialshift build`` (stored in ``BuildContext.options``)."""

    def build(self, config_names: list[str], context: BuildContext) -> dict:
        """Return ``{config_name: datasets.DatasetDict}`` for the requested configs (all of this family's)."""
        raise NotImplementedError

    def card_section(self, built: dict, context: BuildContext) -> str:
        """Markdown for this family's part of the dataset card, given what :meth:`build` returned."""
        return ""


_FAMILIES: dict[str, Family] = {}
_DISCOVERED = False


def register_family(family: Family) -> Family:
    if not family.name:
        raise ValueError(f"{type(family).__name__} has no name")
    _FAMILIES[family.name] = family
    return family


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    try:
        package = importlib.import_module("dataset_scripts")
    except ModuleNotFoundError:  # pragma: no cover - the package ships with dialshift
        return
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        importlib.import_module(f"dataset_scripts.{info.name}")


def families() -> dict[str, Family]:
    """All registered families by name, discovering ``dataset_scripts`` on first use."""
    _discover()
    return dict(sorted(_FAMILIES.items()))


def get_family(name: str) -> Family:
    known = families()
    if name not in known:
        raise DialshiftError(f"unknown family {name!r}; known families: {', '.join(known) or 'none'}")
    return known[name]


def all_configs() -> list[ConfigInfo]:
    return [config for family in families().values() for config in family.configs()]


def select_configs(family_names=None, patterns=None) -> dict[str, list[str]]:
    """Resolve ``--family``/``--config`` selections to ``{family: [config, ...]}``.

    Patterns are shell-style (``'uw_*'``); a pattern matching nothing is an error. With neither argument, every
    config of every family is selected.
    """
    chosen_families = [get_family(name) for name in family_names] if family_names else list(families().values())
    candidates = [config for family in chosen_families for config in family.configs()]
    if patterns:
        selected = []
        for pattern in patterns:
            matches = [config for config in candidates if fnmatch.fnmatchcase(config.name, pattern)]
            if not matches:
                names = ", ".join(config.name for config in candidates[:12])
                raise DialshiftError(
                    f"unknown config {pattern!r}; run `dialshift configs` to list them (e.g. {names}, ...)"
                )
            selected.extend(matches)
    else:
        selected = candidates
    result: dict[str, list[str]] = {}
    for config in selected:
        names = result.setdefault(config.family, [])
        if config.name not in names:
            names.append(config.name)
    return result
