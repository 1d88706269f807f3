"""``dialshift sources``: read every raw corpus and check it against its official counts."""

WRAP = 56


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "sources",
        help="read every raw corpus and check it against its official counts",
        description=(
            "Read every raw corpus (or the NAMEs given) from the data directory, count its records the way the "
            "official statistics count them and print one row per corpus or corpus variant: name, path under the "
            "data directory, records per split and status ('ok', or the first problem found, naming the file and "
            "line). Then one row per raw corpus folder: its licence, its source repositories at the pinned commits and "
            "whether every file is present and intact (size and sha256 as the manifest shipped with dialshift "
            "records them; `dialshift download --corpus NAME` fetches a corpus). Exits with status 2 if any corpus "
            "is missing, corrupt or has other counts. The data directory is --data-dir, else $DIALSHIFT_DATA_DIR, "
            "else ../shared/data, else ~/.cache/dialshift/data."
        ),
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="only these sources (default: all)")
    parser.add_argument("--data-dir", metavar="DIR", help="raw data directory (default: $DIALSHIFT_DATA_DIR or "
                                                          "../shared/data)")
    parser.set_defaults(func=run)


def check_source(info, data_dir):
    """``(counts or None, status)``: counts as the official statistics count them, ``ok`` or the problem."""
    from dialshift.errors import DialshiftError

    read = info.read or info.load
    try:
        loaded = read(data_dir)
    except DialshiftError as error:
        return None, str(error)
    counts = info.counts(loaded)
    mismatches = info.count_mismatches(loaded)
    if mismatches:
        return counts, "count mismatch: " + "; ".join(
            f"{key} {found:,} (official {want:,})" for key, found, want in mismatches)
    return counts, "ok"


def _format_counts(counts) -> list[str]:
    """``key value`` items joined by commas, wrapped to :data:`WRAP` columns without splitting an item."""
    if not counts:
        return ["-"]
    lines = [""]
    for item in (f"{key} {value:,}" for key, value in counts.items()):
        if lines[-1] and len(lines[-1]) + len(item) + 2 > WRAP:
            lines[-1] += ","
            lines.append("")
        lines[-1] += f", {item}" if lines[-1] else item
    return lines


def corpus_rows(selected, data_dir) -> list[tuple[str, str, str, str]]:
    """``(corpus, licence, source, status)`` of every corpus folder the ``selected`` sources read."""
    from dialshift.sources.manifest import corpus_status, shipped_manifest

    manifest = shipped_manifest()
    folders = sorted({info.path.split("/")[0] for info in selected.values()})
    return [(name, manifest[name].licence_text, manifest[name].source_text, corpus_status(data_dir, manifest[name]))
            for name in folders if name in manifest]


def print_table(headers, rows) -> None:
    """Rows of cells under ``headers``, columns padded to their widest cell (the last one not padded)."""
    widths = [max([len(headers[i]), *(len(row[i]) for row in rows)]) for i in range(len(headers) - 1)]

    def line(cells):
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, [*widths, 0], strict=True)).rstrip()

    print(line(headers))
    print(line(["-" * width for width in [*widths, len(headers[-1])]]))
    for row in rows:
        print(line(row))


def run(args) -> int:
    from tqdm import tqdm

    from dialshift.data_dir import resolve_data_dir
    from dialshift.errors import DialshiftError
    from dialshift.sources import sources

    data_dir = resolve_data_dir(args.data_dir)
    known = sources()
    unknown = [name for name in args.names if name not in known]
    if unknown:
        raise DialshiftError(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(known)}")
    selected = {name: known[name] for name in (args.names or known)}

    rows = []
    for name, info in tqdm(selected.items(), desc="reading sources", unit="source", disable=None):
        counts, status = check_source(info, data_dir)
        rows.append((name, info.path, info.unit, _format_counts(counts), status))

    headers = ("corpus", "path", "unit", "records per split", "status")
    widths = [max(len(headers[i]), *(len(row[i]) for row in rows)) for i in range(3)]
    widths.append(max(len(headers[3]), *(len(line) for row in rows for line in row[3])))

    def line(cells):
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, [*widths, 0], strict=True)).rstrip()

    print(f"data directory: {data_dir}")
    print(line(headers))
    print(line(["-" * width for width in [*widths, len(headers[4])]]))
    for name, path, unit, count_lines, status in rows:
        print(line((name, path, unit, count_lines[0], status)))
        for extra in count_lines[1:]:
            print(line(("", "", "", extra, "")))
    notes = [(name, key, text) for name, info in selected.items() for key, text in info.notes.items()]
    if notes:
        print("\nnotes:")
        for name, key, text in notes:
            print(f"  {name} ({key}): {text}")
    print("\nraw corpora (licence, source, files checked against the manifest; fetch: dialshift download --corpus "
          "NAME):")
    corpora = corpus_rows(selected, data_dir)
    print_table(("corpus", "licence", "source", "files"), corpora)
    failed = [row[0] for row in rows if row[4] != "ok"]
    if failed:
        raise DialshiftError(f"{len(failed)} of {len(rows)} sources failed: {', '.join(failed)} "
                             "(see the status column)")
    altered = [(name, status) for name, _, _, status in corpora if status != "intact"]
    if altered:  # a file that reads with the official counts but is not the pinned one is still wrong data
        name, status = altered[0]
        more = f" (and {len(altered) - 1} more corpora)" if len(altered) > 1 else ""
        raise DialshiftError(f"{len(altered)} raw corpus folder(s) not intact: {name}: {status}{more}; fetch "
                             f"{'it' if len(altered) == 1 else 'them'} again: dialshift download "
                             + " ".join(f"--corpus {n}" for n, _ in altered))
    print(f"\nall {len(rows)} sources ok")
    return 0
