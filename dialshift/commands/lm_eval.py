"""``dialshift lm-eval``: export configs as lm-evaluation-harness tasks; import its logged samples as predictions."""

DESCRIPTION = """\
Run any causal language model on the benchmark through lm-evaluation-harness (pip install 'dialshift[lm-eval]').

export: every response-ranking and pairwise-selection config of a built folder becomes a multiple-choice task
dialshift_<config> (prompt: the context's turns, one per line; choices: the candidates; target: the gold), one YAML
per config under TASKS/<family>/, plus a group dialshift_<family>_family per family. --split lite exports the lite
track's split (at most 128 instances per config).

import: lm-eval's --log_samples files (one [log-likelihood, is_greedy] per choice) become OUT/<config>.jsonl with
scores (the log-likelihoods, per character by default, as lm-eval's acc_norm) and probabilities (their softmax over
the candidates), and OUT/run.json (the split), ready for `dialshift score` (R@k, MRR, Brier, ECE and the paired shift
differences with intervals) and for a leaderboard submission.

example:
  dialshift lm-eval export --dataset build/dialshift --out lm_tasks --split lite
  lm_eval --model hf --model_args pretrained=MODEL --tasks dialshift_dailydialog_family --include_path lm_tasks \\
      --output_path lm_out --log_samples
  dialshift lm-eval import lm_out --out lm_predictions
  dialshift score lm_predictions --dataset build/dialshift --out lm_results
"""


def register(subparsers) -> None:
    import argparse

    parser = subparsers.add_parser("lm-eval", help="lm-evaluation-harness tasks out, its logged samples in",
                                   description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="lm_eval_command", required=True, metavar="COMMAND")
    export = commands.add_parser("export", help="write lm-eval task YAMLs for the multiple-choice configs")
    export.add_argument("--dataset", required=True, metavar="DIR", help="a built dataset folder (dialshift build)")
    export.add_argument("--out", required=True, metavar="TASKS", help="folder for the task YAMLs (--include_path)")
    export.add_argument("--split", default="test", help="the split the tasks read: test (default) or lite")
    export.add_argument("--configs", nargs="+", default=None, metavar="PATTERN",
                        help="config names or shell patterns (default: every multiple-choice config)")
    export.set_defaults(func=run_export)
    imported = commands.add_parser("import", help="turn lm-eval's logged samples into prediction files")
    imported.add_argument("samples", metavar="SAMPLES", help="lm-eval's --output_path folder (with --log_samples)")
    imported.add_argument("--out", required=True, metavar="PREDICTIONS", help="folder for <config>.jsonl and run.json")
    imported.add_argument("--normalisation", default="chars", choices=("chars", "none"),
                          help="scores: log-likelihood per character of the choice (chars, lm-eval's acc_norm; "
                               "default) or summed (none, lm-eval's acc)")
    imported.set_defaults(func=run_import)


def run_export(args) -> int:
    from dialshift.harness import export_tasks

    by_family = export_tasks(args.dataset, args.out, split=args.split, configs=args.configs)
    tasks = sum(len(names) for names in by_family.values())
    print(f"wrote {tasks} lm-eval tasks ({args.split} split) in {len(by_family)} famil"
          f"{'y' if len(by_family) == 1 else 'ies'} to {args.out}: run them with lm_eval --include_path {args.out} "
          f"--tasks {' '.join(f'dialshift_{family}_family' for family in by_family)} --log_samples --output_path DIR")
    return 0


def run_import(args) -> int:
    from dialshift.harness import import_samples

    written = import_samples(args.samples, args.out, normalisation=args.normalisation)
    print(f"wrote predictions for {len(written)} configs ({sum(written.values()):,} instances) to {args.out}; "
          f"score them with: dialshift score {args.out} --dataset DATASET")
    return 0
