"""``dialshift bundle create``: assemble a bundle folder a bare GPU machine runs from, under the carry limit.

Every bundle holds ``bundle.json`` (:mod:`.manifest`), ``run.sh`` (below), ``wheels/`` (what the remote lacks and
dialshift's own wheel), ``trainers/`` (the paper's trainer scripts, run by path) and what the paper's protocol
carries (:mod:`.steps`): ``data/`` and, for a transformer protocol, ``backbone/`` in fp16.
"""

import time
from dataclasses import asdict
from pathlib import Path

from dialshift.bundle.manifest import BUNDLE_FILE, BUNDLE_FORMAT, DEFAULT_WORK, LIMIT_BYTES, content_id, folder_size
from dialshift.errors import DialshiftError

WHEEL_PACKAGES = ("datasets", "evaluate", "nltk", "dill", "multiprocess", "fsspec")
PYTHON_VERSIONS = ("3.10", "3.11", "3.12", "3.13")


def build_wheels(out: Path, packages=WHEEL_PACKAGES, python_versions=PYTHON_VERSIONS, cache: Path | None = None,
                 progress: bool = True) -> list[str]:
    """dialshift's wheel (:func:`dialshift.wheels.dialshift_wheel`: from the source checkout, else repacked from the
    installed package) and ``pip download --no-deps`` of ``packages`` at their installed versions, for each of
    ``python_versions`` (pure-Python wheels are shared). ``cache``: a folder of wheels already downloaded, used
    before the network."""
    from dialshift.wheels import dialshift_wheel, download_wheels

    dialshift_wheel(out)
    download_wheels(out, packages, python_versions, cache=cache, progress=progress)
    return sorted(p.name for p in out.glob("*.whl"))


def copy_trainers(out: Path, names) -> None:
    """The trainer files ``names`` into ``out``, where a step runs them by path: ``trainers/`` of the source checkout
    the running dialshift comes from, else the installed ``dialshift_trainers`` (the same files)."""
    from importlib import resources

    from dialshift.wheels import source_checkout

    checkout = source_checkout()
    if checkout is not None:
        source = checkout / "trainers"
    else:
        try:
            source = resources.files("dialshift_trainers")
        except ModuleNotFoundError:
            raise DialshiftError("dialshift_trainers (the trainers) is not installed; reinstall dialshift") from None
    out.mkdir()
    for name in ("__init__.py", *names):
        (out / name).write_bytes(source.joinpath(name).read_bytes())


RUNNER = """#!/usr/bin/env bash
# dialshift GPU bundle runner: bash run.sh STEP [--out DIR]   (steps: bash run.sh --list)
#   or the whole plan by a deadline: bash run.sh lease [--deadline SECONDS] [--resume RETURNED_DIR ...]
# Installs the bundle's wheels once into $DIALSHIFT_WORK (default {work}) and runs the step with nothing but the
# bundle's code on the path. Written by `dialshift bundle create`; see docs/full_scale.md.
set -euo pipefail
export DIALSHIFT_LEASE_START="${{DIALSHIFT_LEASE_START:-$(date +%s)}}"  # a lease's deadline counts set-up too
BUNDLE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
WORK="${{DIALSHIFT_WORK:-{work}}}"
PY="${{PYTHON:-python}}"
SITE="$WORK/site-{bundle_id}"
mkdir -p "$WORK"
if [ ! -f "$SITE/.complete" ]; then
  rm -rf "$SITE"
  "$PY" -m pip install --quiet --no-deps --no-index --find-links "$BUNDLE/wheels" --target "$SITE" {requirements}
  touch "$SITE/.complete"
fi
export PYTHONPATH="$SITE:$BUNDLE"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=true
cd "$WORK"
exec "$PY" -m dialshift bundle run "$BUNDLE" "$@" --work "$WORK"
"""




def create_bundle(dataset, out, protocol, backbone: str = "minilm", wheels: bool = True,
                  wheel_packages=WHEEL_PACKAGES, wheel_cache=None, limit_bytes: int = LIMIT_BYTES,
                  progress: bool = True) -> dict:
    """Assemble the bundle folder ``out`` (new or empty) for ``protocol`` (a paper's protocol dataclass, e.g.
    :class:`dialshift.bundle.lee.Protocol`) and return its manifest; see the module docstring."""
    from dialshift.bundle.steps import paper_steps
    from dialshift.io import atomic_output

    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise DialshiftError(f"--out {out}: not empty; give a new folder for the bundle")
    paper = paper_steps(protocol.paper)
    paper.select_configs(dataset, protocol)
    with atomic_output(out) as staging:  # a bundle that fails (e.g. over the limit) leaves nothing behind
        staging.mkdir()
        return _assemble(paper, dataset, staging, protocol, backbone, wheels, wheel_packages, wheel_cache,
                         limit_bytes, progress, final=out)


def _assemble(paper, dataset, out: Path, protocol, backbone, wheels, wheel_packages, wheel_cache, limit_bytes,
              progress, final: Path) -> dict:
    from dialshift.bundle.manifest import CONTENT
    from dialshift.io import atomic_write, write_json_atomic
    from dialshift.ranking.data import dataset_revision

    started = time.perf_counter()
    carried = paper.carry(dataset, out, protocol, backbone, progress)
    copy_trainers(out / "trainers", paper.TRAINERS)
    wheel_names = build_wheels(out / "wheels", wheel_packages if wheels else (), cache=wheel_cache,
                               progress=progress)
    bundle_id = content_id(out)
    requirements = " ".join(["dialshift", *(wheel_packages if wheels else ())])
    atomic_write(out / "run.sh", RUNNER.format(work=DEFAULT_WORK, bundle_id=bundle_id, requirements=requirements))
    (out / "run.sh").chmod(0o755)
    sizes = {part: folder_size(out / part) for part in CONTENT if (out / part).exists()}
    manifest = {
        "format": BUNDLE_FORMAT, "paper": protocol.paper, "id": bundle_id,
        "created_seconds": round(time.perf_counter() - started, 1), "dataset": str(Path(dataset).resolve()),
        "dataset_revision": dataset_revision(dataset), **carried, "protocol": asdict(protocol),
        "wheels": wheel_names, "requirements": requirements.split(), "sizes": sizes,
    }
    manifest["steps"] = paper.plan(manifest)
    write_json_atomic(out / BUNDLE_FILE, manifest)
    total = folder_size(out)
    if total > limit_bytes:
        parts = ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in sorted(sizes.items(), key=lambda kv: -kv[1]))
        raise DialshiftError(f"{final}: the bundle is {total / 2**20:.1f} MiB, over the {limit_bytes / 2**20:.0f} MiB "
                             f"limit ({parts}); carry fewer configs (--configs) or a smaller backbone")
    manifest["total_bytes"] = total
    write_json_atomic(out / BUNDLE_FILE, manifest)
    return manifest
