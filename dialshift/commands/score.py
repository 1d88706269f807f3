"""``dialshift score``: predictions files against a dataset folder's gold -> results.json, results.md, plots."""

DESCRIPTION = """\
Score a folder of predictions (one <config>.jsonl per dataset config, one line per instance with its "id") against
the gold answers of a dataset folder, with no model: the path a leaderboard uses. Each config's task (from the typed
config in the folder's card) says which prediction fields are read and which metrics are computed (the installed
tasks):

{tasks}

Every metric gets a 95% percentile bootstrap interval, paired by instance id across configs, and each config its
paired differences from the baselines it declares, on the instance ids both hold. Files are read in chunks, so
memory stays bounded. A
run.json beside the predictions (written by `dialshift evaluate`) describes the run and the scoring settings; flags
given here override its settings, so `dialshift score OUT/<method>/predictions` reproduces evaluate's results.json.

example:
  dialshift score submission/ --dataset build/dialshift --out results/submission
"""


def task_table() -> str:
    """One line per installed scoring task: its name, the prediction fields it reads, the metrics it computes."""
    from dialshift.errors import DialshiftError
    from dialshift.scoring.tasks import installed_tasks

    try:
        installed = installed_tasks()
    except DialshiftError as error:
        return f"  (the scoring tasks could not be listed: {error})"
    width = max((len(name) for name in installed), default=0) + 2
    inputs = max((len(task.inputs) for task in installed.values()), default=0) + 1
    return "\n".join(f"  {name:<{width}}{task.inputs:<{inputs}}-> {task.outputs}" for name, task in installed.items())


def register(subparsers) -> None:
    import argparse

    from dialshift.arguments import replicates, seed

    parser = subparsers.add_parser("score", help="score predictions files against a dataset folder (no model)",
                                   description=DESCRIPTION.format(tasks=task_table()),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("predictions", metavar="PREDICTIONS_DIR", help="folder of <config>.jsonl files")
    parser.add_argument("--dataset", required=True, metavar="FOLDER", help="Hub dataset folder (dialshift build)")
    parser.add_argument("--out", metavar="RESULTS_DIR",
                        help="results folder (default: the predictions folder's parent when it is named "
                             "'predictions', else the predictions folder)")
    parser.add_argument("--split", default=None, help="gold split (default: run.json's, else test)")
    parser.add_argument("--bootstrap", type=replicates, default=None, metavar="B",
                        help="bootstrap replicates (default: run.json's, else 1000)")
    parser.add_argument("--bootstrap-seed", type=seed, default=None,
                        help="bootstrap seed (default: run.json's, else 0)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a metric option of the task, e.g. ece_bins=15 or oos_label=150 (repeatable)")
    parser.add_argument("--ids", metavar="FILE",
                        help="score only these instance ids (one per line): reported as a subset, never ranked")
    parser.add_argument("--sum-tolerance", type=float, default=None, metavar="TOL",
                        help="accept probabilities summing to 1 within TOL (e.g. 0.005 for 3 decimals) and "
                             "renormalise them (default 1e-4, no renormalisation)")
    parser.add_argument("--no-plots", action="store_true", help="skip the figures")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.set_defaults(func=run)


def parse_options(items) -> dict:
    """``NAME=VALUE`` strings -> a dict, values read as JSON when they parse (numbers, booleans), else strings; an
    option with a rule (:data:`dialshift.scoring.tasks.OPTION_RULES`) is checked here, before any scoring, whether or
    not a scored config's task uses it."""
    import json

    from dialshift.errors import DialshiftError
    from dialshift.scoring.tasks import check_option

    options = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise DialshiftError(f"--option {item!r}: expected NAME=VALUE, e.g. ece_bins=15")
        try:
            options[name] = json.loads(value)
        except ValueError:
            options[name] = value
        options[name] = check_option(name, options[name], f"--option {name}")
    return options


def run(args) -> int:
    from pathlib import Path

    from dialshift.scoring import ScoringSettings, check_output_dir, score_directory, write_results
    from dialshift.scoring.pipeline import claim_output_dir, read_ids, record_output_dir

    predictions = Path(args.predictions)
    out = Path(args.out) if args.out else (predictions.parent if predictions.name == "predictions" else predictions)
    out = check_output_dir(out)
    settings = ScoringSettings(Path(args.dataset), progress=not args.no_progress)
    given = set()
    for flag, name in (("split", "split"), ("bootstrap", "replicates"), ("bootstrap_seed", "seed")):
        if getattr(args, flag) is not None:
            setattr(settings, name, getattr(args, flag))
            given.add(name)
    if args.option or args.sum_tolerance is not None:
        settings.options = parse_options(args.option)
        if args.sum_tolerance is not None:
            settings.options["sum_tolerance"] = args.sum_tolerance
        given.add("options")
    if args.ids:
        settings.ids, settings.ids_file = read_ids(args.ids), str(args.ids)
    document = score_directory(predictions, settings, given)
    path = write_results(claim_output_dir(out, "dialshift score"), document, plots=not args.no_plots)
    record_output_dir(out)
    print(f"scored {len(document['results'])} configs: {path} (summary: {out / 'results.md'})")
    return 0
