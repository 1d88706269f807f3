"""``dialshift build``: build benchmark configs into a local Hub dataset folder."""

import argparse
from pathlib import Path

DEFAULT_OUT = "build/dialshift"


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
    parser.add_argument("--seed", type=int, default=0,
                        help="global seed; every random choice is seeded per instance (default: 0)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    for family in families().values():
        add_option_arguments(parser.add_argument_group(f"{family.name} options"), family.options_class)
    parser.set_defaults(func=run)


def run(args) -> int:
    import time

    from dialshift.data_dir import resolve_data_dir
    from dialshift.errors import DialshiftError
    from dialshift.hub import (
        README,
        FamilyCard,
        check_output_folder,
        declared_configs,
        folder_lock,
        folder_metadata,
        write_hub_folder,
    )
    from dialshift.registry import BuildContext, families, options_from_arguments, select_configs

    if args.num_proc < 1:
        raise DialshiftError(f"--num-proc must be at least 1, got {args.num_proc}")
    selection = select_configs(args.family, args.config)
    data_dir = resolve_data_dir(args.data_dir)
    # Refuse a folder we may not replace before the (long) build; checked again under the lock when writing.
    out = check_output_folder(args.out, protected=[data_dir],
                              rebuilding=[config.name for configs in selection.values() for config in configs])
    registered = families()
    start = time.perf_counter()
    built, metadata = {}, {}
    for family_name, configs in selection.items():
        family = registered[family_name]
        options = options_from_arguments(family.options_class, args)
        context = BuildContext(data_dir=data_dir, num_proc=args.num_proc, seed=args.seed, options=options,
                               progress=not args.no_progress, requested=tuple(args.config) if args.config else None)
        result = family.build(configs, context)
        built.update(result.datasets)
        declared = {config.name: config for config in configs}
        for name in result.datasets:
            metadata[name] = {"config": declared[name].to_dict(), "facts": result.facts.get(name, {})}
    if not built:
        raise DialshiftError("no config was built; check --family/--config (see `dialshift configs`)")
    owner = {config.name: family.name for family in registered.values() for config in family.configs()}
    # The folder's state (kept configs, their facts) is read under the lock: a build that finished meanwhile is
    # merged, never overwritten.
    with folder_lock(out):
        present = declared_configs(out) if (out / README).is_file() else {}
        kept = [name for name in present if name not in built]
        facts = {**{name: entry.get("facts", {}) for name, entry in folder_metadata(out).items() if name in kept},
                 **{name: entry["facts"] for name, entry in metadata.items()}}
        cards = []
        for family in registered.values():
            mine = {name: fact for name, fact in facts.items() if owner.get(name) == family.name}
            if mine:
                cards.append(FamilyCard(name=family.name, section=family.card_section(mine), license=family.license,
                                        languages=tuple(family.languages),
                                        task_categories=tuple(family.task_categories), citation=family.citation))
        write_hub_folder(out, built, cards, keep=kept, metadata=metadata, progress=not args.no_progress)
    elapsed = time.perf_counter() - start
    _print_summary(out, built, kept, owner, elapsed)
    return 0


def _print_summary(out: Path, built: dict, kept: list, owner: dict, elapsed: float) -> None:
    from datasets.info import DatasetInfosDict

    from dialshift.configs import natural_key
    from dialshift.hub import read_card

    infos = DatasetInfosDict.from_dataset_card_data(read_card(out).data)
    names = sorted(infos, key=natural_key)
    width = max(len(name) for name in names)
    print(f"\n{'config'.ljust(width)}  {'family'.ljust(12)}  rows per split")
    for name in names:
        splits = ", ".join(f"{split} {info.num_examples:,}" for split, info in sorted(infos[name].splits.items()))
        mark = "" if name in built else "  (kept)"
        print(f"{name.ljust(width)}  {owner.get(name, '?').ljust(12)}  {splits}{mark}")
    total = sum(info.num_examples for config in infos.values() for info in config.splits.values())
    print(f"\n{len(built)} config(s) built, {len(names)} in the folder, {total:,} rows, {elapsed:.1f} s -> {out}")
    example = sorted(built, key=natural_key)[0]
    print(f"load with: datasets.load_dataset({str(out)!r}, {example!r}); check with: dialshift validate {out}")
