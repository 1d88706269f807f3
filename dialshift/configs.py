"""Typed benchmark configs: what a config *is*, so no code re-parses its name.

A family declares every config it can build as a :class:`BenchmarkConfig` (in the spirit of ``datasets``'
``BuilderConfig``): its name, family, task, the shift group it belongs to (if any) and its intensity on that group's
axis, the rule parameters, the splits it publishes. Reports, plots, selection and scoring read these fields, from the
registry or from the ``dialshift`` block a built folder's card carries (:func:`dialshift.hub.folder_configs`), so a
results folder or a dataset folder is self-describing.

Also here: the one natural sort key and the one shell-pattern expansion every command uses.
"""

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field

from dialshift.errors import DialshiftError


@dataclass(frozen=True)
class ShiftGroup:
    """A family of configs that vary one shift along one axis (e.g. Unknown Word over replacement ratios).

    ``figure`` names the shift-curve figure the group is drawn in: groups sharing it are drawn together (UW beside its
    KW control), in ``rank`` order (the shift before its control); ``title`` and ``axis_label`` are that figure's.
    """

    name: str
    label: str
    figure: str
    title: str
    axis_label: str
    rank: int = 0


#: The kinds of declared baseline: the unshifted corpus a config was made from, or the shift's own control (the same
#: instances under a matched change that is not the shift, e.g. ``kw_R`` for ``uw_R``, nothing deleted for IC).
BASELINE_KINDS = ("corpus", "control")


@dataclass(frozen=True)
class Baseline:
    """A config another config is compared with (``config``), of which ``kind`` (:data:`BASELINE_KINDS`), and why.

    A paired difference is computed only on the instance ids the two configs share (none shared: none printed)."""

    config: str
    kind: str
    reason: str

    def __post_init__(self):
        if self.kind not in BASELINE_KINDS:
            raise ValueError(f"baseline {self.config!r}: unknown kind {self.kind!r}; "
                             f"one of {', '.join(BASELINE_KINDS)}")


@dataclass(frozen=True)
class BenchmarkConfig:
    """One Hub config of a family.

    ``group``/``intensity`` place the config on a shift curve (``None``: the family's unshifted config, drawn as the
    first point of every curve); ``intensity_label`` is how that point is written (``"0.30"``, ``"2/6"``).
    ``parameters`` are the shift's parameters (also stated in the card); ``optional`` configs (e.g. those needing a
    trained model) may be skipped by a plain build and absent from a valid folder. ``baselines`` are the configs it
    is compared with (:class:`Baseline`; the family declares them, the card stores them).
    """

    name: str
    family: str
    task: str
    description: str = ""
    group: ShiftGroup | None = None
    intensity: float | None = None
    intensity_label: str | None = None
    parameters: Mapping = field(default_factory=dict, hash=False)
    splits: tuple[str, ...] = ("test",)
    optional: bool = False
    baselines: tuple[Baseline, ...] = ()

    def __post_init__(self):
        if not self.task:
            raise ValueError(f"config {self.name!r}: no task (the name of an installed scoring task)")
        if (self.group is None) != (self.intensity is None):
            raise ValueError(f"config {self.name!r}: a shifted config has both a group and an intensity")
        object.__setattr__(self, "parameters", dict(self.parameters))
        object.__setattr__(self, "splits", tuple(self.splits))
        baselines = tuple(Baseline(**item) if isinstance(item, Mapping) else item for item in self.baselines)
        if any(baseline.config == self.name for baseline in baselines):
            raise ValueError(f"config {self.name!r} names itself as its baseline")
        object.__setattr__(self, "baselines", baselines)

    @property
    def shifted(self) -> bool:
        return self.group is not None

    def to_dict(self) -> dict:
        """A plain, JSON/YAML-ready dict (the form stored in cards and ``results.json``)."""
        data = asdict(self)
        data["splits"] = list(self.splits)
        data["baselines"] = [asdict(baseline) for baseline in self.baselines]
        return data

    @classmethod
    def from_dict(cls, data: Mapping) -> "BenchmarkConfig":
        data = dict(data)
        group = data.pop("group", None)
        known = {name for name in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            raise DialshiftError(f"config {data.get('name')!r}: unknown fields {sorted(unknown)} (newer dialshift?)")
        return cls(group=ShiftGroup(**group) if group else None, **data)


# ----------------------------------------------------------------------------------------------- names


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")


def natural_key(name: str) -> list:
    """Sort key that orders numbers by value: ``uw_0.05 < uw_0.10``, ``sr_2 < sr_10``, ``ic_1of6 < ic_2of6``."""
    return [(0, float(part), "") if index % 2 else (1, 0.0, part)
            for index, part in enumerate(_NUMBER.split(name))]


def expand_patterns(patterns: Iterable[str], available: Iterable[str], *, what: str = "config",
                    hint: str = "run `dialshift configs` to list them") -> list[str]:
    """Expand shell-style ``patterns`` (``'uw_*'``) against ``available`` names.

    In pattern order, natural order within a pattern, each name once; a pattern that matches nothing is an error
    naming some of what exists.
    """
    available = list(available)
    names: list[str] = []
    for pattern in patterns:
        matched = sorted((name for name in available if fnmatch.fnmatchcase(name, pattern)), key=natural_key)
        if not matched:
            shown = ", ".join(sorted(available, key=natural_key)[:12]) + (" ..." if len(available) > 12 else "")
            raise DialshiftError(f"{what} pattern {pattern!r} matches nothing ({hint}; e.g. {shown or 'none'})")
        names.extend(name for name in matched if name not in names)
    return names
