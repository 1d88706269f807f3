"""``dialshift build``: build benchmark configs into a local Hub dataset folder."""

import argparse
from pathlib import Path

DEFAULT_OUT = "build/dialshift"


def register(subparsers) -> None:
    from dialshift.registry import families

    parser = subparsers.add_parser(
        "build",
        help="build benchmark configs into a local Hub dataset folder",
        description=(
            "Build benchmark configs from the raw corpora into a Hub dataset folder (parquet per config and split, "
            "README card with `configs:` and `dataset_info`). Configs already in the folder that are not rebuilt are "
            "kept; the folder is replaced atomically. With no --family/--config, every config is built."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--family", action="append", metavar="F", help="build only this family (repeatable)")
    parser.add_argument("--config", action="append", metavar="C",
                        help="build only configs matching this shell pattern, e.g. 'uw_*' (repeatable)")
    parser.add_argument("--data-dir", metavar="D",
                        help="raw data directory (default: $DIALSHIFT_DATA_DIR, else ../shared/data)")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help="output Hub dataset folder")
    parser.add_argument("--num-proc", type=int, default=1, metavar="N", help="worker processes for per-instance work")
    parser.add_argument("--seed", type=int, default=0, help="global seed; every random choice is seeded per instance")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    for family in families().values():
        group = parser.add_argument_group(f"{family.name} options")
        family.add_build_arguments(group)
    parser.set_defaults(func=run)


def run(args) -> int:
    import time

    from dialshift.data_dir import resolve_data_dir
    from dialshift.errors import DialshiftError
    from dialshift.hub import FamilyCard, read_hub_configs, write_hub_folder
    from dialshift.registry import BuildContext, families, select_configs

    if args.num_proc < 1:
        raise DialshiftError(f"--num-proc must be at least 1, got {args.num_proc}")
    out = Path(args.out).expanduser().absolute()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "README.md").is_file())):
        raise DialshiftError(f"{out} exists and is not a dialshift dataset folder; choose another --out")
    selection = select_configs(args.family, args.config)
    context = BuildContext(
        data_dir=resolve_data_dir(args.data_dir),
        num_proc=args.num_proc,
        seed=args.seed,
        progress=not args.no_progress,
        options=vars(args),
    )
    start = time.perf_counter()
    built: dict = {}
    owner: dict = {}
    registered = families()
    for family_name, names in selection.items():
        result = registered[family_name].build(names, context)
        built.update(result)
        owner.update({name: family_name for name in result})
    if not built:
        raise DialshiftError("no config was built; check --family/--config (see `dialshift configs`)")
    kept = read_hub_configs(out) if (out / "README.md").is_file() else {}
    for name in built:
        kept.pop(name, None)
    config_family = {config.name: config.family for family in registered.values() for config in family.configs()}
    final = {**kept, **built}
    cards = []
    for family in registered.values():
        mine = {name: data for name, data in final.items() if config_family.get(name, owner.get(name)) == family.name}
        if mine:
            cards.append(FamilyCard(
                name=family.name,
                section=family.card_section(mine, context),
                license=family.license,
                languages=tuple(family.languages),
                task_categories=tuple(family.task_categories),
                citation=family.citation,
            ))
    write_hub_folder(out, final, cards, progress=context.progress)
    elapsed = time.perf_counter() - start
    _print_summary(out, final, built, config_family, elapsed)
    return 0


def _print_summary(out: Path, final: dict, built: dict, config_family: dict, elapsed: float) -> None:
    width = max(len(name) for name in final)
    print(f"\n{'config'.ljust(width)}  {'family'.ljust(12)}  rows per split")
    for name in sorted(final):
        splits = ", ".join(f"{split} {len(data):,}" for split, data in sorted(final[name].items()))
        mark = "" if name in built else "  (kept)"
        print(f"{name.ljust(width)}  {config_family.get(name, '?').ljust(12)}  {splits}{mark}")
    total = sum(len(data) for splits in final.values() for data in splits.values())
    print(f"\n{len(built)} config(s) built, {len(final)} in the folder, {total:,} rows, {elapsed:.1f} s -> {out}")
    example = sorted(built)[0]
    print(f"load with: datasets.load_dataset({str(out)!r}, {example!r}); check with: dialshift validate {out}")
