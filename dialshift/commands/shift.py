"""``dialshift shift``: shift your own dialogues into a dataset folder under your own config names."""

DESCRIPTION = """\
Shift the contexts of your own instances (a JSON lines or parquet file with "id", "context" and the task's gold
columns, e.g. "candidates" and "label" for response_ranking) with one installed shift, and write a dataset folder
holding the unshifted instances (--source-name) and the shifted ones (--name), each with a typed config of family
`custom` (the task, your description, the shift's parameters, the unshifted config as its baseline). `dialshift
score`, `evaluate` and the plots then read both by these names. Running it again into the same folder adds or
replaces configs and keeps the others; a folder dialshift did not write is refused.

Every instance is checked first (an id present and unique, a context that is a list of non-empty strings, the task's
gold: e.g. a label within the candidates): the first bad row is named with its field, or --skip-invalid leaves such
rows out and counts them. Rows the shift does not apply to are left out and counted by reason (printed and stored in
the config's parameters).

installed shifts and their parameters (--param NAME=VALUE):
{shifts}

example:
  dialshift shift test.jsonl --train train.jsonl --shift uw --param ratio=0.3 --name my_uw \\
      --source-name my_test --description "UW 0.30 of my corpus" --out build/mine
"""


def shift_table() -> str:
    """The ``--help`` lines of every installed shift plug-in (:mod:`dialshift.shifts.plugins`)."""
    from dialshift.errors import DialshiftError
    from dialshift.shifts.plugins import installed_shifts

    try:
        installed = installed_shifts()
    except DialshiftError as error:
        return f"  (the shifts could not be listed: {error})"
    return "\n".join(plugin.help() for plugin in installed.values()) or "  (none installed)"


def register(subparsers) -> None:
    import argparse

    from dialshift.arguments import seed

    parser = subparsers.add_parser("shift", help="shift your own dialogues into a dataset folder (own config names)",
                                   description=DESCRIPTION.format(shifts=shift_table()),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", metavar="FILE", help="instances to shift (.jsonl or .parquet)")
    parser.add_argument("--shift", required=True, metavar="NAME", help="an installed shift (listed above)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a parameter of the shift, e.g. ratio=0.3 or deleted=1 (repeatable; listed above)")
    parser.add_argument("--train", metavar="FILE", help="training instances (the shifts that name a resource)")
    parser.add_argument("--name", required=True, help="the shifted config's name")
    parser.add_argument("--source-name", required=True, help="the unshifted config's name (the baseline)")
    parser.add_argument("--description", default=None, help="the shifted config's description")
    parser.add_argument("--task", default="response_ranking", help="scoring task (default response_ranking)")
    parser.add_argument("--turn-separator", default=None, metavar="SEP",
                        help="split contexts stored as one string at SEP")
    parser.add_argument("--skip-invalid", action="store_true",
                        help="leave out the rows that cannot be scored (counted by reason) instead of stopping at the "
                             "first")
    parser.add_argument("--seed", type=seed, default=0, help="the shift's seed (default 0)")
    parser.add_argument("--out", required=True, metavar="DIR", help="dataset folder to write (or add configs to)")
    parser.set_defaults(func=run)


def load_rows(path: str, turn_separator: str | None = None):
    """A JSON lines or parquet file as a ``datasets.Dataset`` (contexts split at ``turn_separator`` if given)."""
    from pathlib import Path

    from datasets import Dataset, Value, load_dataset

    from dialshift.errors import DialshiftError
    from dialshift.hub.writing import quiet_datasets
    from dialshift.shifts.dataset import split_turns

    file = Path(path)
    kinds = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
    if not file.is_file() or file.suffix not in kinds:
        raise DialshiftError(f"{file}: no such .jsonl or .parquet file")
    if file.stat().st_size == 0:
        raise DialshiftError(f"{file}: empty file; give at least one instance")
    if turn_separator is not None and not turn_separator.strip():
        raise DialshiftError(f"--turn-separator {turn_separator!r}: give the text between turns, e.g. ' __eou__ '")
    try:
        with quiet_datasets():
            data = load_dataset(kinds[file.suffix], data_files=str(file), split="train")
    except Exception as error:  # datasets' parse errors vary by format and version
        reason = " ".join(str(error).split())[:160]
        raise DialshiftError(f"{file}: not readable as {kinds[file.suffix]} ({reason})") from None
    if not isinstance(data, Dataset) or "context" not in data.column_names or "id" not in data.column_names:
        raise DialshiftError(f"{file}: every row needs an 'id' and a 'context' (the list of turns)")
    if turn_separator is not None and isinstance(data.features["context"], Value) \
            and data.features["context"].dtype in ("string", "large_string"):
        with quiet_datasets():
            data = data.map(lambda row: {"context": split_turns(row["context"], turn_separator)
                                         if isinstance(row["context"], str) else row["context"]})
    return data


def check_names(args) -> None:
    """The config names, task and output folder, refused before anything is read or computed."""
    from dialshift.custom import custom_config, custom_folder_configs
    from dialshift.errors import DialshiftError

    if args.name == args.source_name:
        raise DialshiftError(f"--name and --source-name are both {args.name!r}: the shifted config and the unshifted "
                             "one (its baseline) need different names")
    custom_config(args.source_name, task=args.task, description="-")  # checks the name and the task
    custom_config(args.name, task=args.task, description="-")
    custom_folder_configs(args.out, [args.name, args.source_name])


def run(args) -> int:
    from dialshift.custom import custom_config, write_custom_folder
    from dialshift.errors import DialshiftError
    from dialshift.instances import check_instances
    from dialshift.shifts import shift_dataset
    from dialshift.shifts.plugins import get_shift_plugin

    plugin = get_shift_plugin(args.shift)
    parameters = plugin.parse(args.param)
    if plugin.resource and not args.train:
        raise DialshiftError(f"--shift {plugin.name} needs --train FILE ({plugin.resource})")
    if args.train and not plugin.resource:
        raise DialshiftError(f"--shift {plugin.name} reads no --train file; leave it out")
    check_names(args)
    checked = check_instances(load_rows(args.input, args.turn_separator), args.task, where=args.input,
                              skip=args.skip_invalid)
    if checked.invalid:
        print(f"{args.input}: {checked}")
    source = checked.dataset
    train = None
    if args.train:
        train = check_instances(load_rows(args.train, args.turn_separator), None, where=args.train,
                                skip=args.skip_invalid).dataset
    shift = plugin.make(parameters, train)
    shifted, report = shift_dataset(source, shift, args.seed, return_report=True)
    print(report)
    if len(shifted) == 0:
        raise DialshiftError(f"--shift {plugin.name} applies to none of the {len(source):,} rows ({report}); "
                             "nothing written")
    configs = [custom_config(args.source_name, task=args.task, description=f"{args.input}, unshifted"),
               custom_config(args.name, task=args.task, description=args.description or repr(shift), shift=shift,
                             baseline=args.source_name, report=report)]
    if checked.invalid:
        configs = [_with_invalid(config, checked.invalid) for config in configs]
    folder = write_custom_folder(args.out, {args.source_name: source, args.name: shifted}, configs)
    print(f"wrote {args.source_name} ({len(source):,} rows) and {args.name} ({len(shifted):,} rows) to {folder}")
    return 0


def _with_invalid(config, invalid: dict):
    """``config`` with the input rows left out as invalid stored in its parameters (``invalid``: counts by reason)."""
    import dataclasses

    return dataclasses.replace(config, parameters={**config.parameters, "invalid": dict(invalid)})
