"""Shift plug-ins: the shifts ``dialshift shift`` runs, found through the ``dialshift.shifts`` entry-point group.

A :class:`ShiftPlugin` is the command-line face of a :class:`~dialshift.shifts.base.Shift`: its ``--shift`` name, a
one-line description, its declared :class:`Parameter` s (name, type, range, default, help; ``--param NAME=VALUE``
values are read and checked against them, and ``dialshift shift --help`` lists them), the resource it builds from a
``--train`` file (``vocabulary``, ``pool``; none by default) and :meth:`ShiftPlugin.make`, which builds the shift.
:meth:`ShiftPlugin.check` refuses an unknown name, a wrong type, a value out of range or a missing required parameter
with one line before any resource (WordNet, a vocabulary) is loaded; ``params_class`` (the shift's parameters
dataclass) adds the checks that span parameters (IC's ``deleted < window``).

The shifts shipped with dialshift are declared in :mod:`dialshift.shifts.shipped`; a third-party package advertises
its own the same way in its ``pyproject.toml``::

    [project.entry-points."dialshift.shifts"]
    swap = "my_package.shifts:SwapTurnsPlugin"
"""

import math
import numbers
from dataclasses import dataclass, fields

from dialshift.errors import DialshiftError

SHIFT_ENTRY_POINT_GROUP = "dialshift.shifts"


class _Required:
    """The type of :data:`REQUIRED` (its repr names it in messages)."""

    def __repr__(self) -> str:
        return "REQUIRED"


#: The ``default`` of a parameter that must be given (a declared ``default=None`` is optional: unset).
REQUIRED = _Required()
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")
_TYPE_NAMES = {int: "int", float: "float", bool: "bool", str: "str"}


@dataclass(frozen=True)
class Parameter:
    """A declared shift parameter: ``type`` is int, float, bool or str; ``default`` :data:`REQUIRED` (the default)
    means it must be given, None that it may be left unset (the shift then picks its own value); a number
    lies in ``minimum`` .. ``maximum`` (either may be None; ``open_minimum``/``open_maximum`` exclude the bound); a
    str (or number) may be limited to ``choices``."""

    name: str
    type: type
    help: str
    default: object = REQUIRED
    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    open_maximum: bool = False
    choices: tuple = ()

    def __post_init__(self):
        if self.type not in _TYPE_NAMES:
            raise DialshiftError(f"shift parameter {self.name!r}: type {self.type!r} is not int, float, bool or str")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def domain(self) -> str:
        """The values it takes, e.g. ``float in (0, 1)``, ``int >= 1``, ``one of floor, round``."""
        kind = _TYPE_NAMES[self.type]
        if self.choices:
            return f"{kind}, one of {', '.join(map(str, self.choices))}"
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            return f"{kind} in {'(' if self.open_minimum else '['}{low:g}, {high:g}{')' if self.open_maximum else ']'}"
        if low is not None:
            return f"{kind} {'>' if self.open_minimum else '>='} {low:g}"
        if high is not None:
            return f"{kind} {'<' if self.open_maximum else '<='} {high:g}"
        return kind

    def default_text(self) -> str:
        """``required``, ``unset by default`` or ``default VALUE``."""
        if self.required:
            return "required"
        return "unset by default" if self.default is None else f"default {self.default}"

    def describe(self) -> str:
        return f"{self.name} ({self.domain()}; {self.default_text()}): {self.help}"

    def parse(self, text: str):
        """A command-line value (text) as this parameter's type, checked."""
        if self.type is bool:
            lowered = text.strip().lower()
            if lowered not in _TRUE + _FALSE:
                raise self.error(text, "expected true or false")
            return self.check(lowered in _TRUE)
        if self.type is str:
            return self.check(text)
        try:
            value = self.type(text.strip())
        except ValueError:
            expected = "a whole number" if self.type is int else "a number"
            raise self.error(text, f"expected {expected}") from None
        return self.check(value)

    def check(self, value):
        """``value`` (a Python object) if it has this parameter's type and lies in its range; else one line."""
        if not isinstance(value, bool) and isinstance(value, numbers.Integral if self.type is int else numbers.Real) \
                and self.type in (int, float):
            value = self.type(value)  # numpy numbers, and an int where a float is declared
        if not isinstance(value, self.type) or (self.type is not bool and isinstance(value, bool)):
            raise self.error(value, f"expected {self.domain()}, got {type(value).__name__}")
        if self.type is float and not math.isfinite(value):
            raise self.error(value, "must be a finite number")
        if self.choices and value not in self.choices:
            raise self.error(value, f"must be one of {', '.join(map(str, self.choices))}")
        if self.type in (int, float):
            low, high = self.minimum, self.maximum
            if (low is not None and (value < low or (self.open_minimum and value == low))) or \
                    (high is not None and (value > high or (self.open_maximum and value == high))):
                raise self.error(value, f"out of range: {self.domain()}")
        return value

    def error(self, value, problem: str) -> DialshiftError:
        return DialshiftError(f"parameter {self.name}={value!r}: {problem}")


class ShiftPlugin:
    """Base class of a shift plug-in (see the module docstring). Subclasses set ``name``, ``description``,
    ``parameters``, optionally ``resource`` (what ``--train`` provides) and ``params_class``, and implement
    :meth:`make`."""

    name: str = ""
    description: str = ""
    parameters: tuple[Parameter, ...] = ()
    #: What the ``--train`` file provides (``vocabulary``, ``pool``), None when the shift needs no training data.
    resource: str | None = None

    @property
    def params_class(self) -> type | None:
        """The shift's parameters dataclass, built by :meth:`check` to run its own checks early (None: none)."""
        return None

    def parameter(self, name: str) -> Parameter:
        for item in self.parameters:
            if item.name == name:
                return item
        known = ", ".join(item.name for item in self.parameters) or "none"
        raise DialshiftError(f"--shift {self.name} has no parameter {name!r}; its parameters: {known}")

    def parse(self, items) -> dict:
        """``NAME=VALUE`` strings (``--param``) -> the checked parameters (:meth:`check`)."""
        given = {}
        for item in items:
            name, sep, text = str(item).partition("=")
            name = name.strip()
            if not sep or not name:
                raise DialshiftError(f"--param {item!r}: expected NAME=VALUE, e.g. ratio=0.3")
            if name in given:
                raise DialshiftError(f"--param {name} is given twice")
            given[name] = self.parameter(name).parse(text)
        return self.check(given)

    def check(self, given: dict) -> dict:
        """``given`` (``{name: value}``) checked against the declarations and completed with the defaults; a
        missing required parameter, an unknown name or a bad value is one line naming it."""
        values = {name: self.parameter(name).check(value) for name, value in given.items()}
        missing = [item.name for item in self.parameters if item.required and item.name not in values]
        if missing:
            shown = "; ".join(self.parameter(name).describe() for name in missing)
            raise DialshiftError(f"--shift {self.name} needs --param {missing[0]}=VALUE ({shown}); give its "
                                 "parameters with --param NAME=VALUE")
        values = {item.name: values.get(item.name, item.default) for item in self.parameters}
        if self.params_class is not None:
            accepted = {item.name for item in fields(self.params_class)}
            try:
                self.params_class(**{name: value for name, value in values.items() if name in accepted})
            except (DialshiftError, ValueError, TypeError) as error:
                raise DialshiftError(f"--shift {self.name}: {error}") from None
        return values

    def make(self, parameters: dict, train):
        """The :class:`~dialshift.shifts.base.Shift` for checked ``parameters`` (:meth:`check`); ``train`` is the
        ``--train`` instances (a ``datasets.Dataset``) when :attr:`resource` is set, else None."""
        raise NotImplementedError

    def help(self) -> str:
        """Its ``--help`` lines: name, description, resource, then one line per parameter."""
        resource = f" (--train FILE: {self.resource})" if self.resource else ""
        lines = [f"  {self.name}: {self.description}{resource}"]
        lines += [f"      {item.describe()}" for item in self.parameters] or ["      no parameters"]
        return "\n".join(lines)


def installed_shifts() -> dict[str, ShiftPlugin]:
    """Every installed shift plug-in by name (the ``dialshift.shifts`` entry points, each named after its shift)."""
    from dialshift.registry import load_plugins

    found: dict[str, ShiftPlugin] = {}
    for entry, plugin in load_plugins(SHIFT_ENTRY_POINT_GROUP, ShiftPlugin, "shift"):
        if plugin.name != entry.name:
            raise DialshiftError(f"shift plug-in {entry.name!r} ({entry.value}) is named {plugin.name!r}; name the "
                                 "entry point after the shift")
        found[plugin.name] = plugin
    return found


def get_shift_plugin(name: str) -> ShiftPlugin:
    installed = installed_shifts()
    if name not in installed:
        raise DialshiftError(f"no installed shift {name!r}; the shifts: {', '.join(installed) or 'none'} (see "
                             "`dialshift shift --help`)")
    return installed[name]
