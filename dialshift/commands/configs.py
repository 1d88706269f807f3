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
    from dialshift.registry import families, select_configs

    selection = select_configs(args.family)
    registered = families()
    rows = [
        (config.name, config.family, config.description)
        for family_name in selection
        for config in registered[family_name].configs()
    ]
    width = max((len(row[0]) for row in rows), default=6)
    print(f"{'config'.ljust(width)}  {'family'.ljust(12)}  description")
    for name, family, description in rows:
        print(f"{name.ljust(width)}  {family.ljust(12)}  {description}")
    print(f"\n{len(rows)} configs in {len(selection)} families")
    return 0
