"""Benchmark: Unknown Word (ratio 0.30) through ``shift_dataset`` beside direct ``apply()``, on DailyDialog contexts.

    python benchmarks/shift_dataset.py [--instances 2000] [--num-proc 1] [--data-dir DIR]

Contexts: every prefix of the test dialogues (turns 1..k, k < dialogue length), the first ``--instances`` of them;
the vocabulary is the training split's. Timed, in this order, each in instances per second: ``shift_dataset`` with a
fresh synonym table (cold: every WordNet lookup included), direct ``apply()`` on every context (warm table), and
``shift_dataset`` again on a fresh copy of the rows (warm table; the map cache is off so it really runs). The ratio
of the warm ``shift_dataset`` to direct ``apply()`` is the overhead of ``datasets`` (Arrow conversion and the
``shift`` column); on a busy machine compare ratios, not absolute rates. The target is 1,000 instances/s.
"""

import argparse
import os
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=2000, help="contexts to shift (default 2000)")
    parser.add_argument("--num-proc", type=int, default=1, help="shift_dataset worker processes (default 1)")
    parser.add_argument("--data-dir", help="raw data directory (default: $DIALSHIFT_DATA_DIR or ../shared/data)")
    args = parser.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="dialshift-bench-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["HF_DATASETS_CACHE"] = str(Path(scratch) / "hf")

    import datasets
    from datasets import Dataset

    from dialshift.data_dir import resolve_data_dir
    from dialshift.shifts import InstanceRandom, UnknownWord, shift_dataset

    datasets.disable_progress_bars()
    datasets.disable_caching()
    train, rows = contexts(resolve_data_dir(args.data_dir), args.instances)
    data = Dataset.from_list(rows)
    num_proc = args.num_proc if args.num_proc > 1 else None
    rates = {}

    shift = UnknownWord.for_corpus(train, ratio=0.3)
    start = time.perf_counter()
    cold = shift_dataset(data, shift, num_proc=num_proc)
    rates["shift_dataset, cold table"] = len(rows) / (time.perf_counter() - start)

    start = time.perf_counter()
    direct = [shift.apply(row["context"], InstanceRandom(0, row["id"])) for row in rows]
    rates["direct apply(), warm table"] = len(rows) / (time.perf_counter() - start)

    again = Dataset.from_list(rows)
    start = time.perf_counter()
    warm = shift_dataset(again, shift, num_proc=num_proc)
    rates["shift_dataset, warm table"] = len(rows) / (time.perf_counter() - start)

    assert warm["context"] == cold["context"] == [list(result.context) for result in direct if result]
    print(f"UW 0.30 on {len(rows):,} DailyDialog test contexts ({len(warm):,} shifted), num_proc={args.num_proc}, "
          f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores")
    for name, rate in rates.items():
        print(f"  {name:<28} {rate:>9,.0f} instances/s   x{rate / TARGET:.2f} of the 1,000/s target")
    ratio = rates["shift_dataset, warm table"] / rates["direct apply(), warm table"]
    print(f"  shift_dataset / direct apply (warm): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
