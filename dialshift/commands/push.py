"""``dialshift push``: upload a validated Hub dataset folder to the Hugging Face Hub."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "push",
        help="upload a built folder to the Hub",
        description=(
            "Validate a folder written by `dialshift build`, then upload its card, its parquet files and beside each "
            "config's parquet files a dialshift_provenance.json (options, seed, options digest, the raw corpora's "
            "licences, sources and file checksums) as a dataset repository in one commit. Remote files the folder "
            "does not have (e.g. configs pushed from another folder) are kept; --delete-remote-extras deletes the "
            "remote parquet and provenance files the folder does not have. "
            "Needs a network and a token (--token or `hf auth login`). --dry-run lists the uploads and deletions "
            "instead. --spaces also publishes the metric Spaces and the leaderboard Space."
        ),
    )
    parser.add_argument("folder", metavar="DIR")
    parser.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="e.g. my-org/dialshift")
    parser.add_argument("--token", help="Hub token (default: the logged-in one)")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", help="branch to push to")
    parser.add_argument("--delete-remote-extras", action="store_true",
                        help="also delete the repository's parquet files that are not in this folder (default: keep)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list what would be uploaded and deleted, change nothing")
    parser.add_argument("--spaces", action="store_true",
                        help="also publish a Space per metric module (ORG/<metric>) and the leaderboard Space "
                             "(ORG/dialshift-leaderboard), in the organisation of --repo-id")
    parser.add_argument("--wheel", metavar="WHEEL",
                        help="with --spaces: a built dialshift wheel to upload into each Space and install from "
                             "(default: the Spaces install dialshift from the package index)")
    parser.add_argument("--leaderboard-results", metavar="STORE",
                        help="with --spaces: a results store to upload into the leaderboard Space")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dialshift.errors import DialshiftError
    from dialshift.hub.push import check_repo_id, make_api, push_hub_folder, push_plan
    from dialshift.hub.reading import read_card
    from dialshift.hub.validation import validate_hub_folder

    check_repo_id(args.repo_id)
    spaces = None
    if args.spaces:
        from dialshift.hub.spaces import space_plans

        spaces = space_plans(args.repo_id.split("/")[0], wheel=args.wheel, results=args.leaderboard_results)
    elif args.wheel or args.leaderboard_results:
        raise DialshiftError("--wheel and --leaderboard-results go with --spaces")
    if args.dry_run:
        report = validate_hub_folder(args.folder)
        if not report.ok:
            raise DialshiftError(f"{args.folder} does not validate ({report.problems[0]})")
        plan = push_plan(args.folder, args.repo_id, api=make_api(args.token), revision=args.revision,
                         delete_remote_extras=args.delete_remote_extras, strict=False)
        print(f"would upload {len(plan.uploads)} files to datasets/{args.repo_id}:")
        for path in plan.uploads:
            print(f"  {path}")
        if plan.remote_error:
            print(f"remote files not listed ({plan.remote_error}): "
                  + ("the deletions are unknown" if args.delete_remote_extras else "nothing would be deleted"))
        else:
            print(f"would delete {len(plan.deletions)} remote files" + (":" if plan.deletions else ""))
            for path in plan.deletions:
                print(f"  {path}")
            if plan.kept_remote:
                print(f"would keep {len(plan.kept_remote)} remote parquet/provenance files not in this folder "
                      f"(--delete-remote-extras deletes them)")
        card = read_card(args.folder)
        print(f"card: {len(card.content):,} characters, configs: {len(card.data.to_dict().get('configs', []))}")
        for plan in spaces or ():
            print(f"would upload {len(plan.files)} files to spaces/{plan.repo_id}:")
            for path in sorted(plan.files):
                print(f"  {path}")
        return 0
    try:
        url = push_hub_folder(args.folder, args.repo_id, token=args.token, private=args.private,
                              revision=args.revision, delete_remote_extras=args.delete_remote_extras)
        if spaces:
            from dialshift.hub.spaces import push_spaces

            urls = push_spaces(spaces, api=make_api(args.token), private=args.private)
    except DialshiftError:
        raise
    except Exception as error:  # network, auth: one line, no traceback
        reason = " ".join(str(error).split())[:300]
        raise DialshiftError(f"upload to {args.repo_id} failed: {type(error).__name__}: {reason}") from None
    print(url)
    for plan, space_url in zip(spaces or (), urls if spaces else (), strict=True):
        print(f"spaces/{plan.repo_id}: {space_url}")
    return 0
