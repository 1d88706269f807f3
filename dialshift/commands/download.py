"""``dialshift download``: fetch the raw corpora from their original public sources and verify them."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "download",
        help="fetch the raw corpora from their public sources (pinned commits, checked sha256)",
        description=(
            "Fetch every raw corpus (or the --corpus NAMEs given) from its original public repository at the commit "
            "the manifest shipped with dialshift pins, check the size and sha256 of every file, and write the layout "
            "the readers expect into the data directory (--data-dir, else $DIALSHIFT_DATA_DIR, else "
            "~/.cache/dialshift/data, where `dialshift build` also looks). Each corpus's licence is printed first; "
            "corpora whose licence is non-commercial (dailydialog: CC BY-NC-SA 4.0) or unknown (rostd) are fetched "
            "only with --accept-licence NAME. A corpus is swapped in only when all its files are intact: a failed "
            "download leaves the previous folder as it was. A corpus already intact is verified, not fetched again. "
            "`dialshift sources` shows what is present and intact."
        ),
    )
    parser.add_argument("--corpus", action="append", metavar="NAME",
                        help="only this corpus (repeatable; default: all); see `dialshift sources`")
    parser.add_argument("--data-dir", metavar="D",
                        help="raw data directory to write (default: $DIALSHIFT_DATA_DIR, else ~/.cache/dialshift/data)")
    parser.add_argument("--accept-licence", action="append", default=[], metavar="NAME",
                        help="accept the non-commercial or unknown licence of corpus NAME (repeatable)")
    parser.add_argument("--mirror", metavar="URL",
                        help="fetch from URL/OWNER/REPO/COMMIT/PATH instead of https://raw.githubusercontent.com "
                             "(default: $DIALSHIFT_DOWNLOAD_MIRROR)")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="seconds a connection or read may stall before the download fails (default: 60)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.set_defaults(func=run)


def run(args) -> int:
    from dialshift.download import DEFAULT_TIMEOUT, download

    results = download(args.corpus, args.data_dir, accept=args.accept_licence, mirror=args.mirror,
                       timeout=DEFAULT_TIMEOUT if args.timeout is None else args.timeout,
                       progress=not args.no_progress)
    for result in results:
        what = (f"downloaded {result.fetched} file(s), {result.bytes:,} bytes" if result.fetched
                else "already intact (verified, nothing downloaded)")
        print(f"{result.name}: {what} -> {result.folder}")
    return 0
