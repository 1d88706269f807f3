"""Packaging: every import is declared (the light core's in the core dependencies), the pins of constraints.txt are
the declared dependencies exactly and fall in their ranges, every folder installs under a dialshift-specific name, the
core imports no plug-in and no heavy dependency, and the metric Spaces load their own module."""

import ast
import runpy
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dialshift.metrics.installed import metric_names

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent
#: Source folder -> installed package name.
FOLDERS = {"dialshift": "dialshift", "dataset_scripts": "dialshift_families", "hub_cards": "dialshift_cards",
           "metrics": "dialshift_metrics", "trainers": "dialshift_trainers"}
#: The parts of the code that may import an extra's dependencies (the rest needs the core dependencies only).
EXTRA_USERS = {"train": ("dialshift.models", "dialshift.training", "dialshift.ranking", "dialshift.bundle",
                         "dialshift.arguments",  # the --device type of `evaluate` imports torch when called
                         "dialshift.shifts.fit",  # the meaning mode's contextual check (fit=none runs without)
                         "dialshift_trainers"),
               "leaderboard": ("dialshift_cards.leaderboard",)}
FIRST_PARTY = {"dialshift", *FOLDERS.values()}
METRIC_MODULES = tuple(metric_names())  # the installed metric modules (the dialshift.metrics entry points)


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def declared(group: str | None = None) -> set[str]:
    """Canonical names of the core dependencies (``group`` None) or of one extra."""
    lines = project()["dependencies"] if group is None else project()["optional-dependencies"][group]
    return {canonicalize_name(Requirement(line).name) for line in lines}


def third_party_imports() -> dict[str, set[str]]:
    """``{installed module name: top-level third-party modules it imports}`` over the shipped folders."""
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            module = ".".join([package, *path.relative_to(ROOT / folder).with_suffix("").parts])
            names = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names.add(node.module.split(".")[0])
            found[module] = {name for name in names if name not in sys.stdlib_module_names
                             and name not in FIRST_PARTY}
    return found


def test_every_import_is_declared_and_the_core_needs_only_core_dependencies():
    distributions = packages_distributions()
    problems = []
    for module, names in sorted(third_party_imports().items()):
        allowed = declared() | {name for extra, users in EXTRA_USERS.items()
                                if module.startswith(users) for name in declared(extra)}
        for name in sorted(names):
            owners = {canonicalize_name(owner) for owner in distributions.get(name, [name])}
            if not owners & allowed:
                problems.append(f"{module} imports {name} ({', '.join(sorted(owners))}), not declared for it")
    assert not problems, problems


def test_each_dependency_is_declared_once():
    groups = [declared(), *(declared(extra) for extra in project()["optional-dependencies"])]
    names = [name for group in groups for name in group]
    assert len(names) == len(set(names)), sorted({name for name in names if names.count(name) > 1})


def test_constraints_pin_exactly_the_declared_dependencies_inside_their_ranges():
    lines = project()["dependencies"] + [line for extra in project()["optional-dependencies"].values()
                                         for line in extra]
    ranges = {canonicalize_name(Requirement(line).name): Requirement(line).specifier for line in lines}
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            pin = Requirement(line)
            (version,) = [spec.version for spec in pin.specifier if spec.operator == "=="]
            pins[canonicalize_name(pin.name)] = version
    assert set(pins) == set(ranges), "run scripts/constraints.py"
    outside = {name: f"{pins[name]} not in {ranges[name]}" for name in pins if pins[name] not in ranges[name]}
    assert not outside, outside


def test_every_folder_installs_under_a_dialshift_name():
    packages = set(runpy.run_path(str(ROOT / "setup.py"), run_name="discovery")["packages"]())
    expected = {"dialshift.leaderboard.templates", "dialshift_families.dailydialog", "dialshift_cards.leaderboard",
                "dialshift_trainers", *(f"dialshift_metrics.{name}" for name in METRIC_MODULES)}
    assert expected <= packages
    assert all(name.split(".")[0] in FIRST_PARTY for name in packages)
    assert not [name for name in packages if "__pycache__" in name]
    import dialshift_cards
    import dialshift_families

    assert Path(dialshift_families.__file__).parent == ROOT / "dataset_scripts"
    assert Path(dialshift_cards.__file__).parent == ROOT / "hub_cards"


def test_the_core_imports_no_plug_in_package():
    offenders = []
    for path in (ROOT / "dialshift").rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")) and any(
                    name in stripped.split()[1] for name in ("dataset_scripts", "dialshift_families", "trainers")):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {stripped}")
    assert not offenders, offenders


def test_light_modules_import_without_torch():
    code = ("import sys; import dialshift.cli, dialshift.configs, dialshift.registry, dialshift.shifts, "
            "dialshift.hub, dialshift.metrics, dialshift.build; cli = dialshift.cli.build_parser(); "
            "heavy = [m for m in ('torch', 'transformers', 'accelerate', 'sklearn') if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def gradio_pin() -> str:
    lines = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    return next(line.split("==")[1] for line in lines if line.startswith("gradio=="))


@pytest.mark.parametrize("space", [*(f"metrics/{name}" for name in METRIC_MODULES), "hub_cards/leaderboard"])
def test_space_cards_name_the_pinned_gradio(space):
    front = (ROOT / space / "README.md").read_text(encoding="utf-8").split("---")[1]
    assert f"sdk_version: {gradio_pin()}\n" in front


@pytest.mark.parametrize("name", ["ece", "recall_at_k"])
def test_a_metric_space_loads_its_own_module(name, tmp_path, monkeypatch):
    """The Space's files laid out as `dialshift push --spaces` uploads them, app.py run with the widget stubbed: the
    module it loads is the Space's own file (offline, so a Hub lookup of evaluate-metric/NAME would fail)."""
    import evaluate.utils

    from dialshift import hub

    (plan,) = [plan for plan in hub.space_plans("org") if plan.repo_id == f"org/{name}"]
    space = tmp_path / "space"
    space.mkdir()
    for target, source in plan.files.items():
        (space / target).write_bytes(source if isinstance(source, bytes) else Path(source).read_bytes())
    launched = []
    monkeypatch.setattr(evaluate.utils, "launch_gradio_widget", launched.append)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(space / "app.py"), run_name="__main__")
    (module,) = launched
    assert module.name == name and Path(sys.modules[type(module).__module__].__file__).name == f"{name}.py"


def test_space_requirements_pin_the_pushed_dialshift(tmp_path):
    from dialshift import __version__
    from dialshift.hub.spaces import space_requirements

    requirements = tmp_path / "requirements.txt"
    requirements.write_text("dialshift\nevaluate==0.4.6\n")
    assert space_requirements(requirements, None).decode().splitlines() == [f"dialshift=={__version__}",
                                                                            "evaluate==0.4.6"]
    requirements.write_text("# a comment naming dialshift\ndialshift[leaderboard]\n")
    wheel = tmp_path / f"dialshift-{__version__}-py3-none-any.whl"
    assert space_requirements(requirements, wheel).decode().splitlines()[1] == f"./{wheel.name}[leaderboard]"
    assert space_requirements(requirements, None).decode().splitlines()[1] == f"dialshift[leaderboard]=={__version__}"
