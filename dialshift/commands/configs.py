"""``dialshift configs``: list every config with its family and a one-line description."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "configs",
        help="list every benchmark config",
        description="List every config the registered families can build, with family and description.",
    )
    parser.add_argument("--family", action="append", metavar="F", help="only this family (repeatable)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dialshift.registry import select_configs

    selection = select_configs(args.family)
    rows = [(config.name, config.family, config.task, config.description)
            for configs in selection.values() for config in configs]
    rows.insert(0, ("config", "family", "task", "description"))
    widths = [max(len(row[k]) for row in rows) for k in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)) + f"  {row[3]}")
    print(f"\n{len(rows) - 1} configs in {len(selection)} families")
    return 0
