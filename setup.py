"""Package discovery (the metadata is in pyproject.toml).

The top-level folders install under dialshift-specific names, so nothing generic lands in site-packages:
``dataset_scripts/`` (the families shipped with dialshift) as ``dialshift_families``, ``hub_cards/`` (card templates
and the leaderboard Space) as ``dialshift_cards``, ``metrics/`` (the evaluate modules) as ``dialshift_metrics``,
``trainers/`` (the training scripts; the GPU bundle carries the ranker's) as ``dialshift_trainers``.
Every folder below them is found as a (namespace) package, so a new subpackage or data folder needs no edit here.
"""

from setuptools import find_namespace_packages, setup

#: Installed package -> source folder.
PACKAGE_DIR = {"dialshift": "dialshift", "dialshift_families": "dataset_scripts", "dialshift_cards": "hub_cards",
               "dialshift_metrics": "metrics", "dialshift_trainers": "trainers"}


def packages() -> list[str]:
    found = []
    for name, folder in PACKAGE_DIR.items():
        found.append(name)
        found += [f"{name}.{sub}" for sub in find_namespace_packages(folder, exclude=["*__pycache__*"])]
    return found


if __name__ == "__main__":  # how the build backend runs this file
    setup(package_dir=PACKAGE_DIR, packages=packages())
