"""``dialshift plugins``: what is installed at each extension point (families, tasks, shifts, metrics, corpora)."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plugins",
        help="list the installed families, scoring tasks, shifts, metric modules and corpora",
        description="List what is installed at each extension point (an entry-point group each: dialshift.families, "
                    "dialshift.tasks, dialshift.shifts, dialshift.metrics, dialshift.corpora), dialshift's own and "
                    "those of other packages, with the package that provides each. `--markdown --shipped` renders "
                    "docs/plugins.md.",
    )
    parser.add_argument("--shipped", action="store_true", help="only those dialshift itself provides")
    parser.add_argument("--markdown", action="store_true", help="markdown tables (docs/plugins.md)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dialshift.plugins import installed, markdown, text

    plugins = installed(shipped_only=args.shipped)
    print(markdown(plugins) if args.markdown else text(plugins))
    return 0
