"""``dialshift shift``: shift your own dialogues into a dataset folder under your own config names."""

DESCRIPTION = """\
Shift the contexts of your own instances (a JSON lines or parquet file with "id", "context" and the task's gold
columns, e.g. "candidates" and "label" for response_ranking) with one public shift, and write a dataset folder
holding the unshifted instances (--source-name) and the shifted ones (--name), each with a typed config of family
`custom` (the task, your description, the shift's parameters, the unshifted config as its baseline). `dialshift
score`, `evaluate` and the plots then read both by these names. Rows the shift does not apply to are left out and
counted by reason (printed). Running it again into the same folder adds or replaces configs and keeps the others.

shifts and their resources:
  uw, kw    Unknown Word / Known Word: --train FILE (its contexts and gold responses are the known vocabulary)
  ic, sr    Insufficient Context (turn deletion) / source-length selection: none
  distract  Distracting insertion: --train FILE (its contexts are the pool of distracting utterances)

example:
  dialshift shift test.jsonl --train train.jsonl --shift uw --param ratio=0.3 --name my_uw \\
      --source-name my_test --description "UW 0.30 of my corpus" --out build/mine
"""

SHIFTS = ("uw", "kw", "ic", "sr", "distract")


def register(subparsers) -> None:
    import argparse

    from dialshift.arguments import seed

    parser = subparsers.add_parser("shift", help="shift your own dialogues into a dataset folder (own config names)",
                                   description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", metavar="FILE", help="instances to shift (.jsonl or .parquet)")
    parser.add_argument("--shift", required=True, choices=SHIFTS, help="the shift")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a parameter of the shift, e.g. ratio=0.3 or deleted=1 (repeatable)")
    parser.add_argument("--train", metavar="FILE", help="training instances (uw, kw, distract)")
    parser.add_argument("--name", required=True, help="the shifted config's name")
    parser.add_argument("--source-name", required=True, help="the unshifted config's name (the baseline)")
    parser.add_argument("--description", default=None, help="the shifted config's description")
    parser.add_argument("--task", default="response_ranking", help="scoring task (default response_ranking)")
    parser.add_argument("--turn-separator", default=None, metavar="SEP",
                        help="split contexts stored as one string at SEP")
    parser.add_argument("--seed", type=seed, default=0, help="the shift's seed (default 0)")
    parser.add_argument("--out", required=True, metavar="DIR", help="dataset folder to write")
    parser.set_defaults(func=run)


def load_rows(path: str, turn_separator: str | None = None):
    """A JSON lines or parquet file as a ``datasets.Dataset`` (contexts split at ``turn_separator`` if given)."""
    from pathlib import Path

    from datasets import Dataset, load_dataset

    from dialshift.errors import DialshiftError
    from dialshift.shifts.dataset import split_turns

    file = Path(path)
    kinds = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
    if not file.is_file() or file.suffix not in kinds:
        raise DialshiftError(f"{file}: no such .jsonl or .parquet file")
    try:
        data = load_dataset(kinds[file.suffix], data_files=str(file), split="train")
    except Exception as error:  # datasets' parse errors vary by format and version
        reason = " ".join(str(error).split())[:160]
        raise DialshiftError(f"{file}: not readable as {kinds[file.suffix]} ({reason})") from None
    if not isinstance(data, Dataset) or "context" not in data.column_names or "id" not in data.column_names:
        raise DialshiftError(f"{file}: every row needs an 'id' and a 'context' (the list of turns)")
    if turn_separator is not None and data.features["context"].dtype == "string":
        data = data.map(lambda row: {"context": split_turns(row["context"], turn_separator)})
    return data


def make_shift(name: str, parameters: dict, train):
    from dialshift.custom import training_texts
    from dialshift.errors import DialshiftError
    from dialshift.shifts import (
        DistractingInsertion,
        DistractionPool,
        InsufficientContext,
        KnownWord,
        SourceLength,
        UnknownWord,
    )

    if name in ("uw", "kw", "distract") and train is None:
        resource = "pool" if name == "distract" else "vocabulary"
        raise DialshiftError(f"--shift {name} needs --train FILE (its {resource})")
    try:
        if name == "uw":
            return UnknownWord.for_corpus(training_texts(train), **parameters)
        if name == "kw":
            uw = UnknownWord.for_corpus(training_texts(train), ratio=parameters.get("ratio", 0.3))
            return KnownWord(synonyms=uw.synonyms, **parameters)
        if name == "distract":
            return DistractingInsertion(pool=DistractionPool((row["id"], row["context"]) for row in train),
                                        **parameters)
        return {"ic": InsufficientContext, "sr": SourceLength}[name](**parameters)
    except TypeError as error:
        text = ", ".join(f"{key}={value!r}" for key, value in parameters.items() if isinstance(value, str))
        hint = f"; read as text, not a number: {text}" if text else ""
        raise DialshiftError(f"--shift {name}: {error}{hint} (give its parameters with --param NAME=VALUE)") from None


def run(args) -> int:
    from dialshift.commands.score import parse_options
    from dialshift.custom import custom_config, write_custom_folder
    from dialshift.shifts import shift_dataset

    source = load_rows(args.input, args.turn_separator)
    train = load_rows(args.train, args.turn_separator) if args.train else None
    shift = make_shift(args.shift, parse_options(args.param), train)
    shifted, report = shift_dataset(source, shift, args.seed, return_report=True)
    print(report)
    configs = [custom_config(args.source_name, task=args.task, description=f"{args.input}, unshifted"),
               custom_config(args.name, task=args.task, description=args.description or repr(shift), shift=shift,
                             baseline=args.source_name, report=report)]
    folder = write_custom_folder(args.out, {args.source_name: source, args.name: shifted}, configs)
    print(f"wrote {args.source_name} ({len(source):,} rows) and {args.name} ({len(shifted):,} rows) to {folder}")
    return 0
