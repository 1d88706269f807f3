"""``dialshift validate``: check that a Hub dataset folder loads and matches its card."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a built Hub dataset folder",
        description=(
            "Check a Hub dataset folder: the card is present, every declared config loads offline with "
            "datasets.load_dataset, features and row counts match the card's dataset_info, no split is missing, "
            "every parquet file matches the size and sha256 recorded at build time, the card only names files "
            "inside the folder, and every registered config of the families present is there (unless --partial)."
        ),
    )
    parser.add_argument("folder", metavar="DIR", help="folder written by `dialshift build`")
    parser.add_argument("--partial", action="store_true",
                        help="do not require every config of the families found in the folder")
    parser.set_defaults(func=run)


def run(args) -> int:
    import sys

    from dialshift.errors import DialshiftError
    from dialshift.hub.reading import declared_configs
    from dialshift.hub.validation import validate_hub_folder
    from dialshift.registry import families

    expected = None
    if not args.partial:
        present = set(declared_configs(args.folder))
        expected = set()
        for family in families().values():
            configs = family.configs()
            if any(config.name in present for config in configs):
                expected |= {config.name for config in configs if config.name in present or not config.optional}
    report = validate_hub_folder(args.folder, expected_configs=expected, progress=sys.stderr.isatty())
    for name, split, rows in report.rows:
        print(f"ok  {name}/{split}: {rows:,} rows")
    for problem in report.problems:
        print(f"FAIL {problem}")
    if not report.ok:
        more = f" (and {len(report.problems) - 1} more above)" if len(report.problems) > 1 else ""
        raise DialshiftError(f"{len(report.problems)} problem(s) in {report.folder}: {report.problems[0]}{more}")
    print(f"{report.folder}: {len({row[0] for row in report.rows})} configs valid")
    return 0
