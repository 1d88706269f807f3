"""Write constraints.txt: the exact version installed here of every dependency pyproject.toml declares (core and
every extra), so CI and `scripts/setup.sh` install what the test suite ran with (`pip install -c constraints.txt`).

Run it in the project's environment after changing a dependency: ``.venv/bin/python scripts/constraints.py``.
A local version label (``2.13.0+cpu``) is dropped: ``torch==2.13.0`` admits the CPU and the CUDA build of that
release, and scripts/setup.sh chooses the CPU build.
"""

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import tomllib  # Python 3.11+
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
HEADER = ("# The exact versions the test suite runs with, for every dependency pyproject.toml declares (core and\n"
          "# extras). Written by scripts/constraints.py from the project's environment; installed with\n"
          "# `pip install -c constraints.txt` by scripts/setup.sh.\n")


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = [*project["dependencies"], *(line for extra in project["optional-dependencies"].values() for line in extra)]
    return [Requirement(line) for line in lines]


def pins() -> list[str]:
    found = {}
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            sys.exit(f"{requirement.name} is declared in pyproject.toml but not installed here; run scripts/setup.sh")
        found[name] = f"{name}=={installed.split('+')[0]}"
    return [found[name] for name in sorted(found)]


def main() -> None:
    (ROOT / "constraints.txt").write_text(HEADER + "\n".join(pins()) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
