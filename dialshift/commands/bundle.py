"""``dialshift bundle``: carry the full Lee et al. protocol to a remote GPU and bring its logits back."""

DESCRIPTION = """\
A remote GPU machine (one command at most 10 minutes, 64 MiB carried, 8 files of 16 MB brought back, nothing kept
once it goes idle) runs the full protocol in steps; everything else happens here.

  create   assemble BUNDLE (under 60 MiB) from a built dataset folder and the installed backbone: fp16 weights,
           slim zstd splits, wheels of what the remote lacks, trainers/ranker.py and run.sh
  steps    list the bundle's steps in the order to run them, with their estimated minutes and returned files
  run      run one step (what BUNDLE/run.sh calls on the remote): logits into --out (default $OUT)
  report   turn the returned logits into predictions, results.json (dialshift score's pipeline), per-seed and
           ensemble results and the across-seed tables (results.md, summary.json)

example:
  dialshift bundle create --dataset build/dialshift --out build/gpu-bundle
  dialshift bundle steps build/gpu-bundle
  # on the GPU machine, carrying build/gpu-bundle:   bash build/gpu-bundle/run.sh lee-train-0
  dialshift bundle report returned/ --dataset build/dialshift --out results/lee-full
See docs/full_scale.md.
"""


def register(subparsers) -> None:
    import argparse

    from dialshift.arguments import positive_int

    parser = subparsers.add_parser("bundle", help="GPU bundle: create, list steps, run a step, report returned logits",
                                   description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    create = actions.add_parser("create", help="assemble a bundle folder to carry")
    create.add_argument("--dataset", required=True, metavar="FOLDER", help="built dataset folder (dialshift build)")
    create.add_argument("--out", required=True, metavar="BUNDLE", help="new folder for the bundle")
    create.add_argument("--model", default="minilm", help="backbone: minilm (default), tiny (tests) or a folder")
    create.add_argument("--configs", nargs="+", default=None, metavar="PATTERN",
                        help="test configs to carry (default: the ranking configs of the --train-config family)")
    create.add_argument("--train-config", default="dailydialog", help="config trained on (default: dailydialog)")
    create.add_argument("--seeds", type=positive_int, default=5,
                        help="rankers (ensemble members), default 5 as the paper")
    create.add_argument("--dropout-passes", type=positive_int, default=5,
                        help="MC-dropout passes (default 5 as the paper)")
    create.add_argument("--max-length", type=positive_int, default=256)
    create.add_argument("--max-train-instances", type=positive_int, default=None,
                        help="subsample (default: all; tests)")
    create.add_argument("--max-eval-instances", type=positive_int, default=None,
                        help="validation subsample (default: all)")
    create.add_argument("--max-instances", type=positive_int, default=None,
                        help="test instances per config (default: all)")
    create.add_argument("--score-batch-size", type=positive_int, default=512,
                        help="pairs per scoring batch (default 512)")
    create.add_argument("--no-wheels", action="store_true",
                        help="carry only the dialshift wheel (the remote has the other packages)")
    create.add_argument("--wheel-cache", default=None, metavar="DIR", help="folder of wheels to use before PyPI")
    create.add_argument("--no-progress", action="store_true")
    create.set_defaults(func=run_create)

    steps = actions.add_parser("steps", help="list the steps with their estimated cost")
    steps.add_argument("bundle", metavar="BUNDLE")
    steps.set_defaults(func=run_steps)

    step = actions.add_parser("run", help="run one step (on the GPU machine, through BUNDLE/run.sh)")
    step.add_argument("bundle", metavar="BUNDLE")
    step.add_argument("step", nargs="?", default=None, metavar="STEP")
    step.add_argument("--out", default=None, help="where the returned files go (default: $OUT)")
    step.add_argument("--work", default=None, help="work folder kept between calls (default: $DIALSHIFT_WORK)")
    step.add_argument("--list", action="store_true", help="list the steps and exit")
    step.add_argument("--progress", action="store_true", help="show progress bars")
    step.set_defaults(func=run_step)

    report = actions.add_parser("report", help="results from the returned logits")
    report.add_argument("returned", nargs="+", metavar="PATH", help="folders (or files) brought back by the steps")
    report.add_argument("--dataset", required=True, metavar="FOLDER", help="the dataset folder the bundle came from")
    report.add_argument("--out", required=True, metavar="RESULTS_DIR")
    report.add_argument("--bootstrap", type=positive_int, default=1000, metavar="B",
                        help="bootstrap replicates (default 1000)")
    report.add_argument("--no-plots", action="store_true")
    report.add_argument("--no-progress", action="store_true")
    report.set_defaults(func=run_report)


def run_create(args) -> int:
    from dialshift.bundle import Protocol, create_bundle

    protocol = Protocol(train_config=args.train_config, test_configs=args.configs or [], seeds=args.seeds,
                        dropout_passes=args.dropout_passes, max_length=args.max_length,
                        max_train_instances=args.max_train_instances, max_eval_instances=args.max_eval_instances,
                        max_instances=args.max_instances, score_batch_size=args.score_batch_size)
    manifest = create_bundle(args.dataset, args.out, protocol, backbone=args.model, wheels=not args.no_wheels,
                             wheel_cache=args.wheel_cache, progress=not args.no_progress)
    sizes = ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in manifest["sizes"].items())
    print(f"bundle {manifest['id']}: {manifest['total_bytes'] / 2**20:.1f} MiB ({sizes}), "
          f"{len(manifest['protocol']['test_configs'])} test configs, {len(manifest['steps'])} steps -> {args.out}")
    print_steps(manifest)
    return 0


def print_steps(manifest) -> None:
    total = 0
    for step in manifest["steps"]:
        total += step["seconds"]
        slow = f" ({step['seconds_at_old_speed'] / 60:.1f} at 12.4 steps/s: resumes)" \
            if "seconds_at_old_speed" in step else ""
        needs = f" [right after {step['needs']}]" if "needs" in step else ""
        size = sum(step["return_bytes"].values()) / 1e6
        print(f"  {step['name']:<16} ~{step['seconds'] / 60:4.1f} min{slow}{needs}: {step['what']}; returns "
              f"{len(step['returns'])} files, ~{size:.1f} MB")
    print(f"  total ~{total / 60:.0f} min of GPU time")


def run_steps(args) -> int:
    from dialshift.bundle import read_manifest

    print_steps(read_manifest(args.bundle))
    return 0


def run_step(args) -> int:
    import os

    from dialshift.bundle import DEFAULT_WORK, read_manifest, run_step
    from dialshift.errors import DialshiftError

    if args.list or args.step is None:
        print_steps(read_manifest(args.bundle))
        return 0
    out = args.out or os.environ.get("OUT")
    if not out:
        raise DialshiftError("no --out and no $OUT: say where the returned files go")
    work = args.work or os.environ.get("DIALSHIFT_WORK", DEFAULT_WORK)
    description = run_step(args.bundle, args.step, out, work, progress=args.progress)
    print(f"step {args.step}: {description['seconds']:.0f} s on {description['device']} -> {out}")
    return 0


def run_report(args) -> int:
    from dialshift.bundle import report

    summary = report(args.returned, args.dataset, args.out, replicates=args.bootstrap, plots=not args.no_plots,
                     progress=not args.no_progress)
    print(f"wrote {', '.join(summary['methods'])} for {len(summary['protocol']['test_configs'])} configs to "
          f"{args.out} (tables: {args.out}/results.md)")
    return 0
