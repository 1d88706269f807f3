"""Packaging: every package of the library is installed, plug-ins install under dialshift-specific names, the core
imports no plug-in and no heavy dependency."""

import configparser
import subprocess
import sys
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parent.parent


def setup_cfg():
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return parser


def test_every_dialshift_package_is_listed_in_setup_cfg():
    listed = set(setup_cfg()["options"]["packages"].split())
    found = {"dialshift"} | {f"dialshift.{name}" for name in find_packages(str(ROOT / "dialshift"))}
    assert found <= listed, f"add to setup.cfg [options] packages: {sorted(found - listed)}"
    family_packages = {f"dialshift_families.{name}" for name in find_packages(str(ROOT / "dataset_scripts"))}
    assert family_packages <= listed, f"add to setup.cfg: {sorted(family_packages - listed)}"


def test_plug_in_folders_install_under_dialshift_names():
    package_dir = setup_cfg()["options"]["package_dir"]
    assert "dialshift_families = dataset_scripts" in package_dir and "dialshift_cards = hub_cards" in package_dir
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
            "dialshift.hub, dialshift.metrics; cli = dialshift.cli.build_parser(); "
            "heavy = [m for m in ('torch', 'transformers', 'accelerate', 'sklearn') if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
