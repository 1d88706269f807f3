"""The ledger of the steps run on a lent GPU, rendered from the committed returned files.

Nothing on the remote machine outlives a lease, so every step's returned files are committed, one folder per paper
(``docs/full_scale/returned/<paper>/``). The ledger has one row per step description found there: the step, when
it started, the device, its wall time, the training steps per second and scored pairs (for Xing, rows) per second
it measured, and each of its files with its sha256. ``dialshift bundle ledger ROOT --doc docs/full_scale.md`` writes
it between the ledger markers of that file (``--check`` compares instead).
"""

import hashlib
from pathlib import Path

from dialshift.errors import DialshiftError

#: Said in place of the table while no step has run.
EMPTY = "No step has run on a GPU yet: every folder under the returned root is empty or absent."


def _rate(count, seconds):
    return count / seconds if isinstance(count, (int, float)) and isinstance(seconds, (int, float)) and seconds > 0 \
        else None


def step_row(path: Path) -> dict:
    """The ledger row of one step description (``<step>.json``) and the files of its step beside it."""
    from dialshift.io import update_digest
    from dialshift.returned import read_json_object

    description = read_json_object(path, "step description", "fetch it again")
    step = path.stem
    files = sorted(p for p in path.parent.iterdir()
                   if p.is_file() and (p.stem == step or p.name.startswith(f"{step}-p")))
    training = description.get("training") if isinstance(description.get("training"), dict) else {}
    scoring = description.get("scoring") if isinstance(description.get("scoring"), dict) else {}
    steps_per_second = description.get("train_steps_per_second", training.get("train_steps_per_second"))
    pairs = scoring.get("pairs", scoring.get("rows"))
    return {"paper": path.parent.name, "step": step, "started": description.get("started"),
            "device": description.get("device"), "seconds": description.get("seconds"),
            "train_steps_per_second": steps_per_second,
            "pairs_per_second": description.get("pairs_per_second") or _rate(pairs, scoring.get("score_seconds")),
            "files": [(p.name, update_digest(hashlib.sha256(), p).hexdigest()) for p in files]}


def ledger_rows(root) -> list[dict]:
    """Every step of every paper folder under ``root``, in the order they ran (then by name)."""
    root = Path(root)
    if not root.is_dir():
        raise DialshiftError(f"{root}: no such folder (the committed returned files: one folder per paper)")
    rows = [step_row(path) for folder in sorted(p for p in root.iterdir() if p.is_dir())
            for path in sorted(folder.glob("*.json"))]
    return sorted(rows, key=lambda row: (str(row["started"] or ""), row["paper"], row["step"]))


def _cell(value) -> str:
    """Text from a returned file as one markdown table cell: on one line, its ``|`` escaped (a ``|`` would split the
    row into more cells), ``–`` when absent."""
    if value is None or value == "":
        return "–"
    return " ".join(str(value).split()).replace("|", "\\|")


def _number(value, digits: int) -> str:
    return "–" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:,.{digits}f}"


def render_ledger(root) -> str:
    """The ledger as markdown (ends in a newline)."""
    rows = ledger_rows(root)
    if not rows:
        return EMPTY + "\n"
    lines = ["| paper | step | started (UTC) | device | wall time (s) | training steps/s | scored pairs/s | files "
             "(sha256) |", "|---|---|---|---|---:|---:|---:|---|"]
    for row in rows:
        files = "<br>".join(f"`{_cell(name)}` `{digest}`" for name, digest in row["files"])
        lines.append(f"| {_cell(row['paper'])} | {_cell(row['step'])} | {_cell(row['started'])} | "
                     f"{_cell(row['device'])} | "
                     f"{_number(row['seconds'], 0)} | {_number(row['train_steps_per_second'], 1)} | "
                     f"{_number(row['pairs_per_second'], 0)} | {files} |")
    return "\n".join(lines) + "\n"
