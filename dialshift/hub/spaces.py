"""Publishing the metric Spaces (``ORG/<metric>``) and the leaderboard Space (``ORG/dialshift-leaderboard``) from the
installed ``dialshift_metrics`` and ``dialshift_cards/leaderboard``."""

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from dialshift import __version__
from dialshift.errors import DialshiftError
from dialshift.hub.push import check_repo_id

#: The name of the leaderboard Space (in the organisation of the dataset repository).
LEADERBOARD_SPACE = "dialshift-leaderboard"
#: The files of a metric module folder that make its Space (``<name>.py`` is added per metric).
METRIC_SPACE_FILES = ("README.md", "app.py", "requirements.txt")
LEADERBOARD_SPACE_FILES = ("README.md", "app.py", "requirements.txt")


@dataclass
class SpacePlan:
    """One Space to publish: ``repo_id`` and ``files`` (``{path in the repo: local path or bytes}``)."""

    repo_id: str
    files: dict


def space_requirements(path: Path, wheel: Path | None) -> bytes:
    """A Space's requirements with ``dialshift`` pinned to what is pushed (keeping an ``[extra]``): the wheel uploaded
    beside them (``./dialshift-X-py3-none-any.whl``), else this dialshift version from the index."""
    lines = path.read_text(encoding="utf-8").splitlines()
    pinned = f"./{wheel.name}" if wheel is not None else None
    for number, line in enumerate(lines):
        name, bracket, extra = line.strip().partition("[")
        if name == "dialshift":
            extra = bracket + extra
            lines[number] = f"{pinned}{extra}" if pinned else f"dialshift{extra}=={__version__}"
    return ("\n".join(lines) + "\n").encode()


def space_plans(org: str, *, wheel=None, results=None) -> list[SpacePlan]:
    """A Space per metric module (``ORG/<metric>``) and the leaderboard Space (``ORG/dialshift-leaderboard``) with
    their files, from the installed ``dialshift_metrics`` and ``dialshift_cards/leaderboard``; ``wheel`` (a built
    dialshift wheel) is uploaded into each Space and named in its requirements; ``results`` (a results store) is
    uploaded into the leaderboard Space as ``results/``."""
    from dialshift.metrics import MODULES

    wheel = Path(wheel) if wheel else None
    if wheel is not None and (not wheel.is_file() or not wheel.name.startswith("dialshift-")
                              or wheel.suffix != ".whl"):
        raise DialshiftError(f"--wheel {wheel}: not a dialshift wheel file (build one with `python -m build`)")
    plans = []
    metrics_root = Path(str(resources.files("dialshift_metrics")))
    for name in MODULES:
        folder = metrics_root / name
        files = {f"{name}.py": folder / f"{name}.py"}
        files.update({item: folder / item for item in METRIC_SPACE_FILES})
        plans.append(SpacePlan(f"{org}/{name}", files))  # evaluate.load("ORG/<name>") reads <name>.py
    folder = Path(str(resources.files("dialshift_cards").joinpath("leaderboard")))
    files = {item: folder / item for item in LEADERBOARD_SPACE_FILES}
    if results is not None:
        results = Path(results)
        if not results.is_dir():
            raise DialshiftError(f"--leaderboard-results {results}: no such results folder")
        for path in sorted(results.rglob("*.json")):
            if path.is_file() and not path.is_symlink():
                files[f"results/{path.relative_to(results).as_posix()}"] = path
    plans.append(SpacePlan(f"{org}/{LEADERBOARD_SPACE}", files))
    for plan in plans:
        missing = [str(path) for path in plan.files.values() if not Path(path).is_file()]
        if missing:
            raise DialshiftError(f"{missing[0]}: a file of Space {plan.repo_id} is not installed; reinstall dialshift")
        plan.files = {item: (space_requirements(path, wheel) if item == "requirements.txt" else path)
                      for item, path in plan.files.items()}
        if wheel is not None:
            plan.files[wheel.name] = wheel
    return plans


def push_spaces(plans: list[SpacePlan], *, api, private: bool = False) -> list[str]:
    """Upload each Space's files in one commit per Space (creating the Space with the Gradio SDK when missing);
    remote files are never deleted. Returns the commit URLs."""
    from huggingface_hub import CommitOperationAdd

    urls = []
    for plan in plans:
        check_repo_id(plan.repo_id)
        api.create_repo(plan.repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=source if isinstance(source, bytes)
                                         else str(source)) for path, source in sorted(plan.files.items())]
        commit = api.create_commit(repo_id=plan.repo_id, repo_type="space", operations=operations,
                                   commit_message=f"dialshift {__version__}")
        urls.append(str(getattr(commit, "commit_url", commit)))
    return urls
