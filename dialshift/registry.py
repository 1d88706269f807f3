"""Benchmark families and scoring tasks: the plug-in interface and the registry that finds them.

A family is a class subclassing :class:`Family`, advertised through the ``dialshift.families`` entry-point group
(``pyproject.toml`` declares the families shipped with dialshift, from the top-level ``dataset_scripts/`` folder; a
third-party package adds its own the same way). The core never imports a family module by name.

A family declares its configs as typed :class:`~dialshift.configs.BenchmarkConfig` objects, its build options as a
dataclass (:attr:`Family.options_class`, turned into ``dialshift build`` flags by :func:`add_option_arguments`),
builds configs into a :class:`BuildResult` (datasets plus the per-config *facts* the card reports), and renders its
card section from those facts alone, so a config kept from an earlier build keeps its facts without being re-read.

Scoring tasks are plug-ins the same way (``dialshift.tasks``, loaded by
:func:`dialshift.scoring.tasks.installed_tasks`): a config names its task, and the task list, ``dialshift score
--help``'s table and the Hub task types come from those installed. Here only their names are read (:func:`task_names`),
to check every config's task.
"""

import dataclasses
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from dialshift.configs import BenchmarkConfig, expand_patterns
from dialshift.errors import DialshiftError

ENTRY_POINT_GROUP = "dialshift.families"
#: The entry-point group of scoring tasks (:class:`dialshift.scoring.tasks.ScoringTask` subclasses), each entry point
#: named after its task.
TASK_ENTRY_POINT_GROUP = "dialshift.tasks"


def option(default, help: str, **argparse_kwargs):
    """A build-option field: its default, its ``--help`` text and any argparse keywords (``choices``, ``metavar``).

    ``cli=False`` keeps a field out of the command line (e.g. a callable passed by library users and tests).
    """
    cli = argparse_kwargs.pop("cli", True)
    return dataclasses.field(default=default, metadata={"help": help, "argparse": argparse_kwargs, "cli": cli})


@dataclass(frozen=True)
class NoOptions:
    """The options of a family that has none."""


def add_option_arguments(parser, options_class) -> None:
    """One ``--flag`` per CLI field of an options dataclass (``kw_min_count`` -> ``--kw-min-count``)."""
    for item in dataclasses.fields(options_class):
        if not item.metadata.get("cli", True):
            continue
        flag = "--" + item.name.replace("_", "-")
        extra = dict(item.metadata.get("argparse", {}))
        if item.type in (bool, "bool"):
            parser.add_argument(flag, dest=item.name, action="store_true", default=None, help=item.metadata["help"])
            continue
        value_type = extra.pop("type", None) or {int: int, "int": int, float: float, "float": float}.get(item.type, str)
        if "choices" not in extra:
            extra.setdefault("metavar", item.name.split("_")[-1].upper())
        parser.add_argument(flag, dest=item.name, type=value_type, default=None, help=item.metadata["help"], **extra)


#: What a value of an option field of each plain type may be (``X | None`` fields are checked by their choices and
#: argparse type only).
_PLAIN_TYPES = {int: int, float: (int, float), str: str, bool: bool}


def check_options(options, family: str) -> None:
    """Refuse, with one line, an option value the command line would refuse: outside the field's argparse
    ``type`` (e.g. a negative count) or ``choices``, or not of the field's type. Library callers get the flags'
    checks; fields kept off the command line (``cli=False``) are the family's to check."""
    import argparse

    for item in dataclasses.fields(options):
        value = getattr(options, item.name)
        if not item.metadata.get("cli", True) or (value is None and item.default is None):
            continue
        extra = item.metadata.get("argparse", {})
        plain = _PLAIN_TYPES.get(item.type)
        problem = None
        if plain is not None and (not isinstance(value, plain) or (plain is not bool and isinstance(value, bool))):
            problem = f"expected {item.type.__name__}, got {type(value).__name__}"
        elif "choices" in extra and value not in extra["choices"]:
            problem = f"must be one of {', '.join(map(str, extra['choices']))}"
        elif "type" in extra:
            try:
                extra["type"](str(value))
            except argparse.ArgumentTypeError as error:
                problem = str(error)
        if problem:
            raise DialshiftError(f"option {item.name}={value!r} of family {family!r}: {problem} (the command line's "
                                 f"--{item.name.replace('_', '-')})")


def options_from_arguments(options_class, args):
    """The options dataclass from parsed arguments: flags left unset keep the dataclass defaults (one place)."""
    given = {item.name: getattr(args, item.name) for item in dataclasses.fields(options_class)
             if item.metadata.get("cli", True) and getattr(args, item.name, None) is not None}
    return options_class(**given)


class BuildContext:
    """What a family needs to build: raw data, parallelism, a seed, progress, its typed options, and the
    ``--config`` patterns the user typed (``requested``; None when the selection was implicit).

    ``data_dir`` given as None is looked up only when a family reads it (:func:`dialshift.data_dir.resolve_data_dir`,
    whose error says how to fetch the corpora), so a family that reads no raw corpus (the distracting family's
    ``--ubuntu-csv``) builds on a machine without any.
    """

    def __init__(self, data_dir: Path | None = None, num_proc: int = 1, seed: int = 0, progress: bool = True,
                 options: object = None, requested: tuple[str, ...] | None = None):
        self._data_dir = None if data_dir is None else Path(data_dir)
        self.num_proc, self.seed, self.progress, self.requested = num_proc, seed, progress, requested
        self.options = NoOptions() if options is None else options

    @property
    def data_dir(self) -> Path:
        """The raw data directory (looked up on first read when none was given)."""
        if self._data_dir is None:
            from dialshift.data_dir import resolve_data_dir

            self._data_dir = resolve_data_dir()
        return self._data_dir

    def __repr__(self) -> str:
        return (f"BuildContext(data_dir={self._data_dir!r}, num_proc={self.num_proc}, seed={self.seed}, "
                f"progress={self.progress}, options={self.options!r}, requested={self.requested!r})")


@dataclass
class BuildResult:
    """What :meth:`Family.build` returns: ``{config: DatasetDict}`` and ``{config: facts}``.

    Facts are small JSON-ready dicts (counts, means, the options a config was built with) that the card section is
    rendered from; they are stored in the card, so a kept config keeps them.
    """

    datasets: dict
    facts: dict = field(default_factory=dict)


def rows_to_dataset(rows: list[dict], features):
    """Rows (dicts holding every feature) -> ``datasets.Dataset`` through one typed Arrow table, much faster than
    ``Dataset.from_dict``; the shared helper of the families' builds."""
    import pyarrow as pa
    from datasets import Dataset, DatasetInfo

    table = pa.Table.from_pydict({name: [row[name] for row in rows] for name in features},
                                 schema=features.arrow_schema)
    return Dataset(table, info=DatasetInfo(features=features))


class Family:
    """Base class of a benchmark family: the extension point for a new benchmark (``tests/toy_family.py`` is the
    smallest complete one; the families of ``dataset_scripts/`` are the real ones).

    A subclass sets the class attributes (``name``: the ``--family`` name; ``description``, ``license``,
    ``citation``, ``languages``, ``task_categories``: the card's metadata; ``options_class``: a dataclass of
    :func:`option` fields, its build flags) and implements :meth:`configs` (typed declarations, no data read),
    :meth:`build` (rows from ``context.data_dir`` through the shifts of :mod:`dialshift.shifts`, seeded by
    ``context.seed``) and :meth:`card_section` (from the recorded facts alone). Each config names a scoring task
    (:class:`~dialshift.configs.BenchmarkConfig`'s ``task``, an installed ``dialshift.tasks`` plug-in) and the
    configs it is compared with. The family is advertised in the ``dialshift.families`` entry-point group.
    """

    name: str = ""
    description: str = ""
    license: str = ""
    citation: str = ""
    languages: tuple = ("en",)
    task_categories: tuple = ()
    options_class: type = NoOptions

    def configs(self) -> list[BenchmarkConfig]:
        """Every config this family can build, in a stable order."""
        raise NotImplementedError

    def build(self, configs: list[BenchmarkConfig], context: BuildContext) -> BuildResult:
        """Build the requested configs (all this family's)."""
        raise NotImplementedError

    def card_section(self, facts: dict) -> str:
        """Markdown for this family's part of the dataset card, from ``{config: facts}`` of every config in the folder
        (built now or kept)."""
        return ""

    def config(self, name: str) -> BenchmarkConfig:
        for config in self.configs():
            if config.name == name:
                return config
        raise DialshiftError(f"family {self.name!r} has no config {name!r}")


_FAMILIES: dict[str, Family] | None = None


def load_plugins(group: str, base: type, kind: str) -> list:
    """``[(entry point, instance)]`` of the entry-point ``group``, by entry name: each loaded, instantiated when it is
    a class, and checked to be a named ``base``; one-line errors naming the ``kind`` of plug-in otherwise."""
    loaded = []
    for entry in sorted(entry_points(group=group), key=lambda e: e.name):
        try:
            plugin = entry.load()
        except Exception as error:  # a broken third-party plug-in must not take the CLI down silently
            raise DialshiftError(f"{kind} plug-in {entry.name!r} ({entry.value}) failed to load: {error}") from error
        plugin = plugin() if isinstance(plugin, type) else plugin
        if not isinstance(plugin, base) or not plugin.name:
            raise DialshiftError(f"{kind} plug-in {entry.name!r} ({entry.value}) is not a named dialshift "
                                 f"{base.__name__}")
        loaded.append((entry, plugin))
    return loaded


def _load_families() -> dict[str, Family]:
    found: dict[str, Family] = {}
    for _, family in load_plugins(ENTRY_POINT_GROUP, Family, "family"):
        if family.name in found:
            raise DialshiftError(f"two family plug-ins are named {family.name!r}")
        found[family.name] = family
    names: dict[str, str] = {}
    known_tasks = task_names()
    for family in found.values():
        for config in family.configs():
            if config.task not in known_tasks:
                raise DialshiftError(f"family {family.name!r}: config {config.name!r} names task {config.task!r}, "
                                     f"which no installed task plug-in provides ({', '.join(known_tasks)})")
            if config.name in names:
                raise DialshiftError(f"config {config.name!r} is declared by families {names[config.name]!r} and "
                                     f"{family.name!r}; config names must be unique")
            names[config.name] = family.name
    for family in found.values():
        for config in family.configs():
            for baseline in config.baselines:
                if baseline.config not in names:
                    raise DialshiftError(f"family {family.name!r}: config {config.name!r} names baseline "
                                         f"{baseline.config!r}, which no installed family declares")
    return found


def task_names() -> list[str]:
    """The names of the installed scoring tasks, read from the ``dialshift.tasks`` entry points without loading them
    (:func:`dialshift.scoring.tasks.installed_tasks` loads them; each entry point is named after its task)."""
    return sorted({entry.name for entry in entry_points(group=TASK_ENTRY_POINT_GROUP)})


def families() -> dict[str, Family]:
    """Every installed family by name (found through the ``dialshift.families`` entry points on first use)."""
    global _FAMILIES
    if _FAMILIES is None:
        _FAMILIES = _load_families()
    return dict(sorted(_FAMILIES.items()))


def reset() -> None:
    """Forget the discovered families (tests that install a plug-in call this, and
    :func:`dialshift.scoring.tasks.reset_tasks`)."""
    global _FAMILIES
    _FAMILIES = None


def get_family(name: str) -> Family:
    known = families()
    if name not in known:
        raise DialshiftError(f"unknown family {name!r}; known families: {', '.join(known) or 'none'}")
    return known[name]


def all_configs() -> dict[str, BenchmarkConfig]:
    """Every registered config by name."""
    return {config.name: config for family in families().values() for config in family.configs()}


def select_configs(family_names=None, patterns=None) -> dict[str, list[BenchmarkConfig]]:
    """Resolve ``--family``/``--config`` selections to ``{family: [config, ...]}`` (every config when neither is
    given); patterns are shell-style (``'uw_*'``) and one matching nothing is an error."""
    chosen = [get_family(name) for name in family_names] if family_names else list(families().values())
    candidates = {config.name: config for family in chosen for config in family.configs()}
    names = expand_patterns(patterns, candidates) if patterns else list(candidates)
    result: dict[str, list[BenchmarkConfig]] = {}
    for name in names:
        config = candidates[name]
        result.setdefault(config.family, []).append(config)
    return result
