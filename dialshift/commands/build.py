"""``dialshift build``: build benchmark configs into a local Hub dataset folder."""

import argparse

from dialshift.arguments import seed
from dialshift.build import DEFAULT_OUT


def register(subparsers) -> None:
    from dialshift.registry import add_option_arguments, families

    parser = subparsers.add_parser(
        "build",
        help="build benchmark configs into a local Hub dataset folder",
        description=(
            "Build benchmark configs from the raw corpora into a Hub dataset folder (parquet per config and split, "
            "README card with `configs:`, `dataset_info` and each config's typed description). Configs already in the "
            "folder that are not rebuilt are kept as they are (their files checked and copied, not re-read); the "
            "folder is replaced atomically, and files in it that dialshift did not write are carried over. Only an "
            "empty folder or one dialshift built (it holds .dialshift-build.json) is accepted as --out; two builds "
            "into one folder wait for each other and merge. With no --family/--config, every config is built."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--family", action="append", metavar="F", help="build only this family (repeatable)")
    parser.add_argument("--config", action="append", metavar="C",
                        help="build only configs matching this shell pattern, e.g. 'uw_*' (repeatable)")
    parser.add_argument("--data-dir", metavar="D",
                        help="raw data directory (default: $DIALSHIFT_DATA_DIR, else ../shared/data)")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                        help=f"output Hub dataset folder (default: {DEFAULT_OUT})")
    parser.add_argument("--num-proc", type=int, default=1, metavar="N",
                        help="worker processes for per-instance work (default: 1)")
    parser.add_argument("--seed", type=seed, default=0,
                        help="global seed; every random choice is seeded per instance (default: 0)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    for family in families().values():
        add_option_arguments(parser.add_argument_group(f"{family.name} options"), family.options_class)
    parser.set_defaults(func=run)


def run(args) -> int:
    import os

    from dialshift.build import build
    from dialshift.errors import DialshiftError
    from dialshift.registry import families, options_from_arguments

    most = 4 * (os.cpu_count() or 1)  # more workers than that only fight over the cores (and fork a process each)
    if not 1 <= args.num_proc <= most:
        raise DialshiftError(f"--num-proc must be from 1 to {most} (4 per CPU core), got {args.num_proc}")
    options = {name: options_from_arguments(family.options_class, args) for name, family in families().items()}
    result = build(args.config, args.data_dir, args.out, options, families=args.family, num_proc=args.num_proc,
                   seed=args.seed, progress=not args.no_progress)
    _print_summary(result)
    return 0


def _print_summary(result) -> None:
    from datasets.info import DatasetInfosDict

    from dialshift.configs import natural_key
    from dialshift.hub.reading import read_card

    out = result.folder
    infos = DatasetInfosDict.from_dataset_card_data(read_card(out).data)
    names = sorted(infos, key=natural_key)
    width = max(len(name) for name in names)
    print(f"\n{'config'.ljust(width)}  {'family'.ljust(12)}  rows per split")
    for name in names:
        splits = ", ".join(f"{split} {info.num_examples:,}" for split, info in sorted(infos[name].splits.items()))
        mark = "" if name in result.built else "  (kept)"
        print(f"{name.ljust(width)}  {result.family_of.get(name, '?').ljust(12)}  {splits}{mark}")
    total = sum(info.num_examples for config in infos.values() for info in config.splits.values())
    print(f"\n{len(result.built)} config(s) built, {len(names)} in the folder, {total:,} rows, {result.seconds:.1f} s "
          f"-> {out}")
    print(f"load with: datasets.load_dataset({str(out)!r}, {result.built[0]!r}); check with: dialshift validate {out}")
