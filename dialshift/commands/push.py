"""``dialshift push``: upload a validated Hub dataset folder to the Hugging Face Hub."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "push",
        help="upload a built folder to the Hub",
        description=(
            "Validate a folder written by `dialshift build`, then upload its card and parquet files as a dataset "
            "repository in one commit (stale parquet files on the Hub are deleted). Needs a network and a token "
            "(--token or `hf auth login`). --dry-run prints the files and the card instead."
        ),
    )
    parser.add_argument("folder", metavar="DIR")
    parser.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="e.g. my-org/dialshift")
    parser.add_argument("--token", help="Hub token (default: the logged-in one)")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", help="branch to push to")
    parser.add_argument("--dry-run", action="store_true", help="list what would be uploaded, upload nothing")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dialshift.errors import DialshiftError
    from dialshift.hub import push_hub_folder, read_card, upload_plan, validate_hub_folder

    if args.dry_run:
        report = validate_hub_folder(args.folder)
        if not report.ok:
            raise DialshiftError(f"{args.folder} does not validate ({report.problems[0]})")
        files = upload_plan(args.folder)
        print(f"would upload {len(files)} files to datasets/{args.repo_id}:")
        for path in files:
            print(f"  {path}")
        card = read_card(args.folder)
        print(f"card: {len(card.content):,} characters, configs: {len(card.data.to_dict().get('configs', []))}")
        return 0
    try:
        url = push_hub_folder(args.folder, args.repo_id, token=args.token, private=args.private,
                              revision=args.revision)
    except DialshiftError:
        raise
    except Exception as error:  # network, auth: one line, no traceback
        raise DialshiftError(f"upload to {args.repo_id} failed: {type(error).__name__}: {error}") from None
    print(url)
    return 0
