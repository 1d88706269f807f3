"""Benchmark: Unknown Word (ratio 0.30) through ``shift_dataset``: a first call without and with the table's disk
cache, beside warm calls, on DailyDialog contexts.

    python benchmarks/shift_dataset.py [--instances 2000] [--num-proc 1] [--mode paper|meaning] [--data-dir DIR]

Contexts: every prefix of the test dialogues (turns 1..k, k < dialogue length), the first ``--instances`` of them;
the vocabulary is the training split's. Timed, each in instances per second, a *first call* being
``UnknownWord.for_corpus(train, ...)`` then ``shift_dataset`` in a fresh Python process (modules imported and the
corpus read before the clock starts):

* ``first call, no disk cache``: ``cache=False``, every WordNet lookup included (the reader opened too);
* ``first call, filling the cache``: the same with an empty cache folder, which the call writes;
* ``first call, cached table``: a fresh process reading that folder (WordNet is never opened);
* ``direct apply(), warm table`` and ``shift_dataset, warm table``: in the process that filled the table.

The ratio of the warm ``shift_dataset`` to direct ``apply()`` is the overhead of ``datasets`` (Arrow conversion and
the ``shift`` column); on a busy machine compare ratios, not absolute rates. The target is 1,000 instances/s for a
first call with a cached table.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 1000.0


def contexts(data_dir: Path, limit: int) -> tuple[list[str], list[dict]]:
    from dialshift.sources import dailydialog

    dialogues = dailydialog.read(data_dir)
    train = [turn for dialogue in dialogues["train"] for turn in dialogue.turns]
    rows = [{"id": f"{dialogue.id}:{k}", "context": list(dialogue.turns[:k])}
            for dialogue in dialogues["test"] for k in range(1, len(dialogue.turns))]
    return train, rows[:limit]


def first_call(args, cache: str | None, warm: bool) -> dict:
    """One first UW call in this process: rate, rows kept and a digest of the output (and the warm rates)."""
    import datasets
    from datasets import Dataset

    from dialshift.data_dir import resolve_data_dir
    from dialshift.shifts import InstanceRandom, UnknownWord, shift_dataset
    from dialshift.shifts.base import digest

    datasets.disable_progress_bars()
    datasets.disable_caching()
    train, rows = contexts(resolve_data_dir(args.data_dir), args.instances)
    data = Dataset.from_list(rows)
    num_proc = args.num_proc if args.num_proc > 1 else None
    start = time.perf_counter()
    shift = UnknownWord.for_corpus(train, ratio=0.3, mode=args.mode, cache=cache or False)
    shifted = shift_dataset(data, shift, num_proc=num_proc)
    result = {"rate": len(rows) / (time.perf_counter() - start), "kept": len(shifted),
              "digest": digest(shifted["context"])}
    if warm:
        start = time.perf_counter()
        direct = [shift.apply(row["context"], InstanceRandom(0, row["id"])) for row in rows]
        result["direct"] = len(rows) / (time.perf_counter() - start)
        start = time.perf_counter()
        again = shift_dataset(Dataset.from_list(rows), shift, num_proc=num_proc)
        result["warm"] = len(rows) / (time.perf_counter() - start)
        assert again["context"] == shifted["context"] == [list(r.context) for r in direct if r]
    return result


def run_phase(args, cache: str | None, warm: bool = False) -> dict:
    """:func:`first_call` in a fresh Python process."""
    command = [sys.executable, __file__, "--phase", json.dumps({"cache": cache, "warm": warm}),
               "--instances", str(args.instances), "--num-proc", str(args.num_proc), "--mode", args.mode]
    if args.data_dir:
        command += ["--data-dir", args.data_dir]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=2000, help="contexts to shift (default 2000)")
    parser.add_argument("--num-proc", type=int, default=1, help="shift_dataset worker processes (default 1)")
    parser.add_argument("--mode", default="paper", choices=("paper", "meaning"), help="the UW mode (default paper)")
    parser.add_argument("--data-dir", help="raw data directory (default: $DIALSHIFT_DATA_DIR or ../shared/data)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.phase:
        os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp(prefix="dialshift-bench-hf-")
        phase = json.loads(args.phase)
        print(json.dumps(first_call(args, phase["cache"], phase["warm"])))
        return 0
    cache = tempfile.mkdtemp(prefix="dialshift-bench-uw-cache-")
    runs = {"first call, no disk cache": run_phase(args, None),
            "first call, filling the cache": run_phase(args, cache, warm=True),
            "first call, cached table": run_phase(args, cache)}
    filled = runs["first call, filling the cache"]
    rates = {**{name: run["rate"] for name, run in runs.items()},
             "direct apply(), warm table": filled["direct"], "shift_dataset, warm table": filled["warm"]}
    assert len({run["digest"] for run in runs.values()}) == 1, "the cache changed the output"
    print(f"UW 0.30 (mode {args.mode}) on {args.instances:,} DailyDialog test contexts ({filled['kept']:,} shifted, "
          f"identical with and without the cache), num_proc={args.num_proc}, "
          f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores")
    for name, rate in rates.items():
        print(f"  {name:<30} {rate:>9,.0f} instances/s   x{rate / TARGET:.2f} of the 1,000/s target")
    speedup = rates["first call, cached table"] / rates["first call, no disk cache"]
    print(f"  first call, cached / no cache: x{speedup:.1f}")
    overhead = rates["shift_dataset, warm table"] / rates["direct apply(), warm table"]
    print(f"  shift_dataset / direct apply (warm): {overhead:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
