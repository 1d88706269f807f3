"""``dialshift leaderboard score|render|export``: scored submissions, the results page, model-index metadata."""

DESCRIPTION = """\
The leaderboard. A submission is a folder or .zip with submission.json (model, method, link, licence,
dataset_revision; optionally parameters, seeds, family, configs, description, contact) and predictions/<config>.jsonl
in the format `dialshift evaluate` writes, for every config of one family (or the subset named under "configs").

  score SUBMISSION --dataset DIR --results STORE   check everything, recompute every metric from gold (scores a
                                                  submitter wrote are never read), write one JSON file per
                                                  family/model/method into STORE
  render STORE --out SITE                         a static page: a tab per family, sortable columns, curves
  export RECORD --dataset-id ORG/dialshift        model-index YAML for a model card (one entry per config and metric)

example:
  dialshift leaderboard score my-submission.zip --dataset build/dialshift --results leaderboard/results
  dialshift leaderboard render leaderboard/results --out site
"""


def register(subparsers) -> None:
    import argparse

    from dialshift.arguments import replicates, seed

    parser = subparsers.add_parser("leaderboard", help="score submissions, render the results page, export "
                                   "model-index", description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    score = commands.add_parser("score", help="check and score a submission into a results store")
    score.add_argument("submission", metavar="SUBMISSION", help="a submission folder or .zip")
    score.add_argument("--dataset", required=True, metavar="DIR", help="the dataset folder with the gold answers")
    score.add_argument("--results", default="leaderboard/results", metavar="STORE",
                       help="results store folder (default: leaderboard/results)")
    score.add_argument("--bootstrap", type=replicates, default=1000, metavar="B",
                       help="bootstrap replicates (default 1000)")
    score.add_argument("--bootstrap-seed", type=seed, default=0, help="bootstrap seed (default 0)")
    score.add_argument("--replace", action="store_true",
                       help="replace the stored record of this model and method even when this submission covers "
                            "fewer of its configs (default: refused, so a record never shrinks silently)")
    score.add_argument("--no-progress", action="store_true", help="hide progress bars")
    score.set_defaults(func=run_score)
    render = commands.add_parser("render", help="write the static results page of a results store")
    render.add_argument("results", metavar="STORE", help="results store folder")
    render.add_argument("--out", required=True, metavar="SITE", help="output folder for index.html")
    render.add_argument("--title", default="dialshift leaderboard")
    render.add_argument("--no-plots", action="store_true", help="skip the degradation curves")
    render.set_defaults(func=run_render)
    export = commands.add_parser("export", help="print model-index YAML for a model card")
    export.add_argument("record", metavar="RECORD", help="a results file of the store")
    export.add_argument("--dataset-id", required=True, metavar="ORG/NAME", help="the Hub dataset, e.g. org/dialshift")
    export.add_argument("--out", metavar="FILE", help="write the YAML here (default: print it)")
    export.set_defaults(func=run_export)


def run_score(args) -> int:
    from dialshift.leaderboard import score_submission, write_record
    from dialshift.scoring import check_output_dir

    check_output_dir(args.results, "--results")
    record = score_submission(args.submission, args.dataset, replicates=args.bootstrap, seed=args.bootstrap_seed,
                              progress=not args.no_progress)
    path, replaced = write_record(args.results, record, replace=args.replace)
    config = record["config"]
    shifted = "".join(f" and {split}" for split in record.get("shifted_splits") or {})
    print(f"scored {config['model_name']} ({config['method']}) on {len(record['results'])} {config['family']} "
          f"configs{shifted}, {config['track']} track: {path} ({'replaced the earlier record of this model and method' if replaced else 'new record'})")
    return 0


def run_render(args) -> int:
    from dialshift.leaderboard import render_site

    page = render_site(args.results, args.out, plots=not args.no_plots, title=args.title)
    print(f"wrote {page}")
    return 0


def run_export(args) -> int:
    from pathlib import Path

    from dialshift.hub.push import check_repo_id
    from dialshift.io import atomic_write
    from dialshift.leaderboard import model_index
    from dialshift.leaderboard.store import read_record

    check_repo_id(args.dataset_id)
    text = model_index(read_record(args.record), args.dataset_id)
    if args.out:
        atomic_write(Path(args.out), text)
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0
