"""The step interface of a bundle: each paper's protocol is one module of this package with the same parts.

A paper module (:mod:`.lee`, :mod:`.han`, :mod:`.xing`) has ``TRAINERS`` (the trainer scripts its steps run by
path), ``select_configs(dataset, protocol)`` (checks the dataset holds what the protocol needs and resolves its test
configs), ``carry(dataset, out, protocol, backbone, progress)`` (writes ``data/`` and, where it has one,
``backbone/``; returns the manifest's fields describing them), ``plan(manifest)`` (the steps in the order to run
them, each with its estimated seconds, returned files and their bytes) and ``run(bundle, manifest, step, out, work,
description, progress)`` (runs one step on the remote, writes its returned files, returns its description). Its
report module turns the returned files into that paper's tables here.
"""

import importlib
from pathlib import Path

from dialshift.bundle.manifest import DEFAULT_WORK, find_step, paper_of, read_manifest, step_description

#: ``{paper: (steps module, report module)}``.
MODULES = {"lee": ("dialshift.bundle.lee", "dialshift.bundle.lee_report"),
           "han": ("dialshift.bundle.han", "dialshift.bundle.han_report"),
           "xing": ("dialshift.bundle.xing", "dialshift.bundle.xing_report")}


def paper_steps(paper: str):
    """The steps module of ``paper``."""
    return importlib.import_module(MODULES[paper][0])


def plan(manifest: dict) -> list[dict]:
    """The steps of the bundle's protocol in the order to run them, with their estimates."""
    return paper_steps(paper_of(manifest)).plan(manifest)


def run_step(bundle, step: str, out, work=DEFAULT_WORK, progress: bool = False) -> dict:
    """Run one step of the bundle (on the remote, through ``run.sh``); write its files into ``out``; return its
    description (also written as JSON)."""
    bundle, out, work = Path(bundle).resolve(), Path(out), Path(work)
    manifest = read_manifest(bundle)
    find_step(manifest, step)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    description = step_description(bundle, manifest, step)
    return paper_steps(paper_of(manifest)).run(bundle, manifest, step, out, work, description, progress)


def report(paths, dataset, out, replicates: int = 1000, plots: bool = True, progress: bool = False) -> dict:
    """The report of the returned files in ``paths`` (one paper's, told by their names), written into ``out``."""
    from dialshift.returned import paper_of_returned

    module = importlib.import_module(MODULES[paper_of_returned(paths)][1])
    return module.report(paths, dataset, out, replicates=replicates, plots=plots, progress=progress)
