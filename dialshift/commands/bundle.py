"""``dialshift bundle``: carry a paper's full protocol (Lee, Han or Xing) to a remote GPU and bring its arrays back."""

DESCRIPTION = """\
A remote GPU machine (one command at most 10 minutes, 64 MiB carried, 8 files of 16 MB brought back, nothing kept
once it goes idle) runs the full protocol in steps; everything else happens here.

  create   assemble BUNDLE (under 60 MiB) for one paper (--paper lee, han or xing) from a built dataset folder:
           the paper's configs, fp16 backbone weights (lee, han), wheels of what the remote lacks, its trainer, run.sh
  steps    list the bundle's steps in the order to run them, with their estimated minutes and returned files
  run      run one step (what BUNDLE/run.sh calls on the remote): logits into --out (default $OUT); `run BUNDLE
           lease` runs the whole steps that fit by --deadline (default 9 min) and skips those in --resume folders
  plan     the projected device time per phase (measured figures from --returned when there, else assumed) and
           the leases it needs
  report   turn the returned files into predictions, results.json (dialshift score's pipeline) and the paper's
           across-seed tables (results.md, summary.json)
  ledger   the ledger of the steps run (docs/full_scale.md) from folders of committed returned files

example:
  dialshift bundle create --dataset build/dialshift --out build/gpu-bundle
  dialshift bundle steps build/gpu-bundle
  # on the GPU machine, carrying build/gpu-bundle:   bash build/gpu-bundle/run.sh lee-train-0
  dialshift bundle report returned/ --dataset build/dialshift --out results/lee-full
  dialshift bundle create --paper han --dataset build/korean --model build/e5 --out build/han-bundle
See docs/full_scale.md.
"""


def register(subparsers) -> None:
    import argparse

    from dialshift.arguments import positive_int, replicates

    parser = subparsers.add_parser("bundle", help="GPU bundle: create, list steps, run a step, report returned logits",
                                   description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    create = actions.add_parser("create", help="assemble a bundle folder to carry")
    create.add_argument("--dataset", required=True, metavar="FOLDER", help="built dataset folder (dialshift build)")
    create.add_argument("--out", required=True, metavar="BUNDLE", help="new folder for the bundle")
    create.add_argument("--paper", choices=("lee", "han", "xing"), default="lee",
                        help="whose protocol: lee (default; MiniLM ranker on DailyDialog), han (Korean response "
                             "selection on kor_chitchat, kor_adv) or xing (LSTM seq2seq on ubuntu, distracting sets)")
    create.add_argument("--model", default="minilm",
                        help="backbone (lee, han): minilm (default), tiny (tests) or a folder (han: the converted e5 "
                             "of `dialshift convert-e5`)")
    create.add_argument("--configs", nargs="+", default=None, metavar="PATTERN",
                        help="test configs to carry (default: the ranking configs of the --train-config family)")
    create.add_argument("--train-config", default=None, help="lee: config trained on (default: dailydialog)")
    create.add_argument("--seeds", type=positive_int, default=None,
                        help="seeds per variant: lee 5 (the ensemble's members, as the paper), han 3, xing 3 (for "
                             "the variants Table 3's findings rest on)")
    create.add_argument("--dropout-passes", type=positive_int, default=None,
                        help="lee: MC-dropout passes (default 5 as the paper)")
    create.add_argument("--max-length", type=positive_int, default=None, help="lee: 256, han: 128 (the papers')")
    create.add_argument("--variants", nargs="+", default=None, metavar="VARIANT",
                        help="han: baseline deb ums ums-deb (default all); xing: STRUCTURE@P[-noloss] names "
                             "(default the 23 of Table 3)")
    create.add_argument("--num-epochs", type=positive_int, default=None,
                        help="han: 3 (App. B); xing: the most epochs (default 10; the best validation epoch is kept)")
    create.add_argument("--batch-size", type=positive_int, default=None, help="han: 64 rows (128 pairs); xing: 256")
    create.add_argument("--bias-epochs", type=positive_int, default=None,
                        help="han: the biased model's epochs (default: the epoch of its lowest validation loss)")
    create.add_argument("--dim", type=positive_int, default=None, help="xing: LSTM size (default 512, the paper's)")
    create.add_argument("--layers", type=positive_int, default=None, help="xing: LSTM layers (default 4)")
    create.add_argument("--vocab-size", type=positive_int, default=None, help="xing: vocabulary (default 25000)")
    create.add_argument("--max-train-instances", type=positive_int, default=None,
                        help="subsample (default: all; tests)")
    create.add_argument("--max-eval-instances", type=positive_int, default=None,
                        help="validation subsample (default: all)")
    create.add_argument("--max-instances", type=positive_int, default=None,
                        help="test instances per config (default: all)")
    create.add_argument("--score-batch-size", type=positive_int, default=None,
                        help="pairs per scoring batch (lee default 512, han 256)")
    create.add_argument("--concurrent-seeds", type=lambda v: {"on": True, "off": False}.get(v, v),
                        choices=(True, False), default=None, metavar="{on,off}",
                        help="lee: train the seeds side by side as one stacked computation (default: on where "
                             "CUDA is)")
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
    step.add_argument("--deadline", type=float, default=None, metavar="SECONDS",
                      help="lease: seconds from run.sh's start by which the lease ends (default 540, 9 minutes)")
    step.add_argument("--resume", nargs="+", default=(), metavar="DIR",
                      help="lease: folders of returned files of earlier leases (their steps are skipped)")
    step.set_defaults(func=run_step)

    lease_plan = actions.add_parser("plan", help="projected device time per phase and the leases it needs")
    lease_plan.add_argument("bundle", metavar="BUNDLE")
    lease_plan.add_argument("--paper", choices=("lee", "han", "xing"), default=None,
                            help="check that BUNDLE carries this paper's protocol")
    lease_plan.add_argument("--returned", default="docs/full_scale/returned", metavar="ROOT",
                            help="the committed returned files, one folder per paper (default "
                                 "docs/full_scale/returned): their measured seconds set the speed")
    lease_plan.set_defaults(func=run_plan)

    report = actions.add_parser("report", help="results from the returned logits")
    report.add_argument("returned", nargs="+", metavar="PATH", help="folders (or files) brought back by the steps")
    report.add_argument("--dataset", required=True, metavar="FOLDER", help="the dataset folder the bundle came from")
    report.add_argument("--out", required=True, metavar="RESULTS_DIR")
    report.add_argument("--bootstrap", type=replicates, default=1000, metavar="B",
                        help="bootstrap replicates (default 1000)")
    report.add_argument("--no-plots", action="store_true")
    report.add_argument("--no-progress", action="store_true")
    report.set_defaults(func=run_report)

    ledger = actions.add_parser("ledger", help="the ledger table of the steps run, from returned folders")
    ledger.add_argument("root", metavar="ROOT",
                        help="the committed returned files, one folder per paper (docs/full_scale/returned)")
    ledger.add_argument("--doc", default=None, metavar="MARKDOWN",
                        help="write the table between the ledger markers of this file (docs/full_scale.md)")
    ledger.add_argument("--check", action="store_true", help="with --doc: exit 1 when the file is not what renders")
    ledger.set_defaults(func=run_ledger)


#: The protocol field each option of `create` sets; an option left unset keeps the protocol's default.
OPTIONS = {"seeds": "seeds", "dropout_passes": "dropout_passes", "max_length": "max_length", "variants": "variants",
           "num_epochs": "num_epochs", "batch_size": "batch_size", "bias_epochs": "bias_epochs", "dim": "dim",
           "layers": "layers", "vocab_size": "vocab_size", "max_train_instances": "max_train_instances",
           "max_eval_instances": "max_eval_instances", "max_instances": "max_instances",
           "score_batch_size": "score_batch_size", "train_config": "train_config", "configs": "test_configs",
           "concurrent_seeds": "concurrent_seeds"}


def protocol_from_args(args):
    """The ``--paper``'s protocol with the options given; an option its protocol does not have is an error."""
    import dataclasses

    from dialshift.bundle.steps import paper_steps
    from dialshift.errors import DialshiftError

    kind = paper_steps(args.paper).PROTOCOL
    names = {f.name for f in dataclasses.fields(kind)}
    values = {name: getattr(args, option) for option, name in OPTIONS.items() if getattr(args, option) is not None}
    for option, name in OPTIONS.items():
        if name in values and name not in names:
            raise DialshiftError(f"--{option.replace('_', '-')}: not an option of the {args.paper} protocol")
    return kind(**values)


def run_create(args) -> int:
    from dialshift.bundle import create_bundle

    protocol = protocol_from_args(args)
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
    if args.step == "lease":
        from dialshift.bundle.lease import DEFAULT_DEADLINE, run_lease, summary_line

        deadline = DEFAULT_DEADLINE if args.deadline is None else args.deadline
        print(summary_line(run_lease(args.bundle, out, work, deadline, args.resume, progress=args.progress)))
        return 0
    if args.deadline is not None or args.resume:
        raise DialshiftError("--deadline and --resume go with the step `lease` only")
    description = run_step(args.bundle, args.step, out, work, progress=args.progress)
    print(f"step {args.step}: {description['seconds']:.0f} s on {description['device']} -> {out}")
    return 0


def run_plan(args) -> int:
    from pathlib import Path

    from dialshift.bundle import read_manifest
    from dialshift.bundle.lease import render_plan
    from dialshift.bundle.manifest import paper_of
    from dialshift.errors import DialshiftError

    manifest = read_manifest(args.bundle)
    paper = paper_of(manifest)
    if args.paper and args.paper != paper:
        raise DialshiftError(f"{args.bundle}: carries the {paper} protocol, not {args.paper}; give that paper's "
                             "bundle")
    folder = Path(args.returned) / paper
    print(render_plan(manifest, [folder] if folder.is_dir() else []), end="")
    return 0


def run_report(args) -> int:
    from dialshift.bundle import report

    summary = report(args.returned, args.dataset, args.out, replicates=args.bootstrap, plots=not args.no_plots,
                     progress=not args.no_progress)
    rows = summary.get("methods") or summary.get("variants")
    print(f"wrote {', '.join(rows)} for {len(summary['protocol']['test_configs'])} configs to "
          f"{args.out} (tables: {args.out}/results.md)")
    return 0


def run_ledger(args) -> int:
    from pathlib import Path

    from dialshift import reports
    from dialshift.bundle.ledger import render_ledger
    from dialshift.errors import DialshiftError

    table = render_ledger(args.root)
    if args.doc is None:
        if args.check:
            raise DialshiftError("--check needs --doc")
        print(table, end="")
        return 0
    try:
        return reports.render(Path(args.doc), table, "dialshift bundle ledger", args.check)
    except SystemExit as error:  # the file lacks the ledger's markers
        raise DialshiftError(str(error)) from None
