#!/usr/bin/env python
"""Copy what the report needs from the run folders of ``run_all.sh`` into ``docs/reproduction_khosla/runs/``.

    python docs/reproduction_khosla/collect.py OUT

For every finished seed ``OUT/<build>/<config>/seed_<s>/`` (one with a ``run.json``) it writes
``runs/<build>/<config>/seed_<s>/`` with ``run.json``, ``command.json`` (commit, command, threads, CPU seconds),
``results/<method>/<split>/results.json`` (the scoring pipeline's output), ``predictions.npz`` (compressed, small:
per split the gold labels, the closed-world argmax over the in-scope logits and every method's predicted class, as
int8, and the label names) and ``sha256.json`` (of each full predictions file, whose scores are not committed:
regenerate them with the command in ``command.json``).
"""

import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SPLITS = ("test", "cov_test")


def predictions_npz(seed_dir: Path, methods) -> bytes:
    """The small, compressed predictions archive of one seed."""
    saved = np.load(seed_dir / "outputs.npz")
    model = json.loads((seed_dir / "model" / "dialshift_model.json").read_text())
    names = list(model["intents"]) + ["oos"]
    arrays = {"names": np.asarray(names)}
    for split in SPLITS:
        arrays[f"gold/{split}"] = saved[f"gold/{split}"].astype(np.int8)
        if f"logits/{split}" in saved and "dcloos" not in methods:
            arrays[f"argmax/{split}"] = saved[f"logits/{split}"].argmax(axis=1).astype(np.int8)
        for method in methods:
            arrays[f"{method}/{split}"] = saved[f"{method}/{split}"].astype(np.int8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def collect(out: Path, target: Path) -> int:
    count = 0
    for run_json in sorted(out.glob("*/*/seed_*/run.json")):
        seed_dir = run_json.parent
        dest = target / seed_dir.relative_to(out)
        run = json.loads(run_json.read_text())
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run_json, dest / "run.json")
        if (seed_dir / "command.json").is_file():
            shutil.copyfile(seed_dir / "command.json", dest / "command.json")
        for results in sorted(seed_dir.glob("results/*/*/results.json")):
            (dest / results.relative_to(seed_dir)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(results, dest / results.relative_to(seed_dir))
        (dest / "predictions.npz").write_bytes(predictions_npz(seed_dir, list(run["results"])))
        digests = {str(path.relative_to(seed_dir)): hashlib.sha256(path.read_bytes()).hexdigest()
                   for path in sorted(seed_dir.glob("predictions/*/*/*.jsonl"))}
        (dest / "sha256.json").write_text(json.dumps(digests, indent=1) + "\n")
        count += 1
    return count


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    count = collect(Path(argv[0]), HERE / "runs")
    print(f"{count} seed folder(s) -> {HERE / 'runs'}")
    return 0 if count else 2


if __name__ == "__main__":
    sys.exit(main())
