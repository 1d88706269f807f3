#!/usr/bin/env python
"""Copy what the report needs from the run folders of ``run_all.sh`` into ``docs/reproduction_xing/runs/``.

    python docs/reproduction_xing/collect.py OUT

For every finished run ``OUT/runs/<variant>/seed_<s>/`` (one with a ``command.json``, which ``run_all.sh`` writes
last) it writes ``runs/<variant>/seed_<s>/`` with ``run.json`` (the trainer's ``dialshift_model.json``: settings,
validation history, versions), ``command.json`` (commit, command, threads, wall and CPU seconds), ``original.json``
(perplexity and mean History AS per predicted config), ``results.json`` (the ``attention_distribution`` scores of the
nine distracting sets, as ``dialshift score`` wrote them) and ``sha256.json`` (of each predictions file, which is not
committed: about 1 MB per run; regenerate it with the command in ``command.json``).
"""

import hashlib
import json
import shutil
import sys
from pathlib import Path

from dialshift import reports

HERE = Path(__file__).resolve().parent
COPIED = {"dialshift_model.json": "run.json", "command.json": "command.json",
          "predictions/original.json": "original.json", "predictions/results/results.json": "results.json"}


def collect(out: Path, target: Path) -> int:
    """Copy every finished run of ``out`` into ``target`` (module docstring); the number copied."""
    copied = []
    for command in sorted(out.glob("runs/*/seed_*/command.json")):
        folder = command.parent
        dest = target / folder.relative_to(out / "runs")
        missing = [name for name in COPIED if not (folder / name).is_file()]
        if missing:
            raise SystemExit(f"{folder}: finished (command.json) but without {', '.join(missing)}; rerun it")
        dest.mkdir(parents=True, exist_ok=True)
        for source, name in COPIED.items():
            shutil.copyfile(folder / source, dest / name)
        digests = {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
                   for path in sorted(folder.glob("predictions/*.jsonl"))}
        (dest / "sha256.json").write_text(json.dumps(digests, indent=1) + "\n", encoding="utf-8")
        copied.append(dest)
    return len(copied)


def main(argv=None) -> int:
    return reports.collect_main(__doc__, collect, HERE / "runs", argv)


if __name__ == "__main__":
    sys.exit(main())
