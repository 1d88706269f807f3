"""Benchmark: build the whole DailyDialog family from the raw files, WordNet included, on N cores (default 2).

    python benchmarks/build.py [--num-proc 2] [--cores 2] [--data-dir DIR] [--out DIR] [--json FILE]

Stages timed: reading the release, loading WordNet (prepared into a fresh cache: the copy from /usr/share/wordnet and
the NLTK reader count), building every source/UW/KW/IC/SR config (``Family.build``, as ``dialshift build`` calls it)
and writing the Hub folder (parquet + card). Then the time of each config alone (one process, tables already
computed). Prints the figures and the ratio to the 2-minute target. ``uw_imp_*`` needs a trained ranker and is not
part of the target.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 120.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-proc", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--cores", type=int, default=2, help="pin the benchmark to this many CPU cores (0: all)")
    parser.add_argument("--data-dir", help="raw data directory (default: $DIALSHIFT_DATA_DIR or ../shared/data)")
    parser.add_argument("--out", help="write the Hub folder here (default: a temporary directory)")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--no-per-config", action="store_true", help="skip the per-config timings")
    args = parser.parse_args(argv)
    if args.cores and hasattr(os, "sched_setaffinity"):
        available = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, set(available[: args.cores]))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    scratch = Path(tempfile.mkdtemp(prefix="dialshift-bench-"))
    os.environ["DIALSHIFT_CACHE_DIR"] = str(scratch / "cache")  # WordNet is prepared from scratch
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["HF_HOME"] = str(scratch / "hf")

    start = time.perf_counter()
    from dialshift_families.dailydialog import DailyDialogOptions, to_dataset
    from dialshift_families.dailydialog.pipeline import DailyDialogShifts

    from dialshift.data_dir import resolve_data_dir
    from dialshift.registry import BuildContext, get_family
    from dialshift.sources import load_source
    from dialshift.wordnet import load_wordnet

    data_dir = resolve_data_dir(args.data_dir)
    family = get_family("dailydialog")
    configs = [config for config in family.configs() if not config.optional]
    timings = {"imports": time.perf_counter() - start}

    mark = time.perf_counter()
    dialogues = load_source("dailydialog", data_dir)
    timings["read DailyDialog"] = time.perf_counter() - mark
    mark = time.perf_counter()
    wordnet = load_wordnet()
    wordnet.synsets("dog")
    timings["load WordNet (fresh cache)"] = time.perf_counter() - mark

    mark = time.perf_counter()
    context = BuildContext(data_dir=data_dir, num_proc=args.num_proc, progress=False, options=DailyDialogOptions())
    result = family.build(configs, context)
    built = result.datasets
    timings[f"build {len(configs)} configs (--num-proc {args.num_proc})"] = time.perf_counter() - mark

    from dialshift.hub import FamilyCard, write_hub_folder

    mark = time.perf_counter()
    out = Path(args.out) if args.out else scratch / "hub"
    card = FamilyCard(name=family.name, section=family.card_section(result.facts), license=family.license,
                      languages=tuple(family.languages), task_categories=tuple(family.task_categories),
                      citation=family.citation)
    write_hub_folder(out, built, [card], progress=False)
    timings["write Hub folder"] = time.perf_counter() - mark
    total = time.perf_counter() - start
    timings_core = total - timings["write Hub folder"]

    print(f"DailyDialog family build on {cores} core(s), --num-proc {args.num_proc}, load {os.getloadavg()[0]:.1f}")
    for stage, seconds in timings.items():
        print(f"  {stage:<40} {seconds:7.1f} s")
    print(f"  {'total (raw files -> configs)':<40} {timings_core:7.1f} s   {timings_core / TARGET_S:.2f} x the "
          f"{TARGET_S:.0f} s target ({'met' if timings_core < TARGET_S else 'MISSED'})")
    print(f"  {'total with the Hub folder':<40} {total:7.1f} s")
    rows = sum(len(split) for splits in built.values() for split in splits.values())
    print(f"  {len(built)} configs, {rows:,} rows -> {out}")

    per_config = {}
    if not args.no_per_config:
        shifts = DailyDialogShifts(dialogues, wordnet, context.options.shift_options(context.seed))
        mark = time.perf_counter()
        shifts.warm(("test",))
        shifts.source_rows("test")
        print(f"\nper config (one process; shared tables computed once in {time.perf_counter() - mark:.1f} s):")
        for config in configs:
            mark = time.perf_counter()
            for split in config.splits:
                to_dataset(shifts.rows(config, split))
            per_config[config.name] = time.perf_counter() - mark
            print(f"  {config.name:<12} {per_config[config.name]:6.2f} s")
        print(f"  sum {sum(per_config.values()):.1f} s, mean {sum(per_config.values()) / len(per_config):.2f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"cores": cores, "num_proc": args.num_proc, "stages": timings,
                                               "total_s": timings_core, "total_with_hub_s": total,
                                               "per_config_s": per_config}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
