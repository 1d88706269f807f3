"""``dialshift plot``: reliability diagrams from predictions files and metric-versus-shift curves from results files."""

import argparse

DESCRIPTION = """\
Draw the figures of the paper from files the evaluation writes.

  reliability  reliability diagram (accuracy per confidence bin, with the confidence histogram underneath) of one or
               more predictions JSONL files (one line per instance with "id" and "probabilities"; the gold "label"
               is read from the line when present, otherwise joined by "id" from --dataset FOLDER, config --config
               or the file name, split --split)
  curves       the task's metrics (or any --metrics) against shift intensity, with their bootstrap intervals, one
               line per results.json file (and per shift group), over the configs named by --configs (names or
               shell patterns; default: all): the x axis is each config's typed intensity, stored in results.json

examples:
  dialshift plot reliability results/lee/vanilla/predictions/uw_0.30.jsonl --dataset build/dialshift \\
      --out results/lee/plots/reliability_uw_0.30.png
  dialshift plot curves results/lee/*/results.json --configs dailydialog 'uw_*' --out results/lee/plots/uw.png --pdf
"""


def register(subparsers) -> None:
    from dialshift.arguments import positive_int

    parser = subparsers.add_parser(
        "plot",
        help="reliability diagrams and metric-versus-shift curves (PNG/PDF)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)

    reliability = kinds.add_parser(
        "reliability",
        help="reliability diagram(s) from predictions JSONL files",
        description="Reliability diagram of each predictions JSONL file, side by side.",
    )
    reliability.add_argument("predictions", nargs="+", metavar="PREDICTIONS.jsonl")
    reliability.add_argument("--dataset", metavar="FOLDER", help="Hub dataset folder to take gold labels from")
    reliability.add_argument(
        "--config", metavar="NAME", help="dataset config of the gold labels (default: each predictions file's name)"
    )
    reliability.add_argument("--split", default="test", help="dataset split of the gold labels (default: test)")
    reliability.add_argument("--label-column", default="label", help="gold label column/field (default: label)")
    reliability.add_argument("--n-bins", type=positive_int, default=15, help="confidence bins (default: 15)")
    reliability.add_argument(
        "--binning",
        choices=["equal_width", "equal_mass"],
        default="equal_width",
        help="bin edges (default: equal_width)",
    )
    reliability.add_argument(
        "--titles",
        nargs="+",
        metavar="TITLE",
        help="one title per file (default: <method> / <config> from the file path)",
    )
    _add_output_arguments(reliability)
    reliability.set_defaults(func=run_reliability)

    curves = kinds.add_parser(
        "curves",
        help="metric-versus-shift-intensity curves from results.json files",
        description="One panel per metric, one line per results.json (method).",
    )
    curves.add_argument("results", nargs="+", metavar="RESULTS.json")
    curves.add_argument(
        "--configs",
        nargs="+",
        metavar="PATTERN",
        help="configs to draw, names or shell patterns, e.g. dailydialog 'uw_*' (default: all in the results)",
    )
    curves.add_argument(
        "--metrics",
        nargs="+",
        default=None,
        metavar="METRIC",
        help="metrics to draw, one panel each (default: the task's headline metrics, e.g. recall@1 mrr brier ece)",
    )
    curves.add_argument(
        "--names",
        nargs="+",
        metavar="NAME",
        help="one legend name per results file (default: its config.method, else its folder name)",
    )
    curves.add_argument(
        "--x-labels",
        nargs="+",
        metavar="LABEL",
        help="x tick labels (default: the configs' intensity labels, e.g. 0.05, the unshifted config first)",
    )
    curves.add_argument("--xlabel", help="x axis label (default: the shift group's axis label)")
    curves.add_argument("--title", help="figure title")
    _add_output_arguments(curves)
    curves.set_defaults(func=run_curves)
    parser.set_defaults(func=lambda args: parser.error("choose reliability or curves"))


def _add_output_arguments(parser) -> None:
    parser.add_argument("--out", required=True, type=image_path, metavar="FILE.png",
                        help="output image (format from the suffix: png, pdf, svg, ...)")
    parser.add_argument("--pdf", action="store_true", help="also write a PDF next to it")


def image_path(text: str) -> str:
    """An ``--out`` whose suffix names an image format matplotlib writes (checked before any work)."""
    from pathlib import Path

    from matplotlib.backend_bases import FigureCanvasBase

    supported = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(text).suffix.lstrip(".").lower()
    if suffix not in supported:
        raise argparse.ArgumentTypeError(f"{text!r}: unsupported image format {suffix or '(no suffix)'!r}; use one "
                                         f"of {', '.join(sorted(supported))}")
    return text


def plain_text(text) -> str:
    """``text`` drawn as it is written: matplotlib reads ``$...$`` as math markup (and fails on bad markup), so
    every ``$`` of a user-given or file-given label is escaped."""
    return str(text).replace("$", r"\$")


# ------------------------------------------------------------------ reliability


def gold_labels(dataset, config, split, column):
    """``{id: label}`` of one config split of a Hub dataset folder (read from its parquet files, no cache)."""
    from dialshift.scoring.gold import load_gold

    gold = load_gold(dataset, config, split, [column])
    return dict(zip(gold.ids.to_pylist(), gold.columns[column].to_pylist(), strict=True))


def load_reliability_inputs(path, dataset=None, config=None, split="test", column="label"):
    """``(probabilities, labels)`` of a predictions file, with labels from the lines or joined from the dataset."""
    from pathlib import Path

    from dialshift.errors import DialshiftError
    from dialshift.scoring.jsonl import clip, read_jsonl

    records = read_jsonl(path)
    labels_by_id = None
    probabilities, labels = [], []
    for number, record in records:
        if "probabilities" not in record:
            raise DialshiftError(f"{path}:{number}: no 'probabilities' field (needed for a reliability diagram)")
        probabilities.append(record["probabilities"])
        if column in record:
            labels.append(record[column])
            continue
        if dataset is None:
            raise DialshiftError(
                f"{path}:{number}: no {column!r} field; pass --dataset FOLDER (and --config) to join gold labels by id"
            )
        if labels_by_id is None:
            labels_by_id = gold_labels(dataset, config or Path(path).stem, split, column)
        if record.get("id") not in labels_by_id:
            raise DialshiftError(
                f"{path}:{number}: id {clip(record.get('id'))!r} is not in {dataset} config "
                f"{config or Path(path).stem} split {split}"
            )
        labels.append(labels_by_id[record["id"]])
    return probabilities, labels


def _default_title(path) -> str:
    from pathlib import Path

    path = Path(path)
    if path.parent.name == "predictions":
        return f"{path.parent.parent.name} / {path.stem}"
    return path.stem


def run_reliability(args) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dialshift.errors import DialshiftError
    from dialshift.plots import reliability_diagram

    if args.titles and len(args.titles) != len(args.predictions):
        raise DialshiftError(f"--titles has {len(args.titles)} titles for {len(args.predictions)} files")
    figure, axes = plt.subplots(
        2,
        len(args.predictions),
        figsize=(4.6 * len(args.predictions), 6.0),
        squeeze=False,
        sharex=True,
        gridspec_kw={"height_ratios": [3, 1]},
        constrained_layout=True,
    )
    for column, path in enumerate(args.predictions):
        probabilities, labels = load_reliability_inputs(path, args.dataset, args.config, args.split, args.label_column)
        title = plain_text(args.titles[column] if args.titles else _default_title(path))
        try:
            reliability_diagram(
                probabilities,
                labels,
                n_bins=args.n_bins,
                title=title,
                ax=(axes[0, column], axes[1, column]),
                binning=args.binning,
            )
        except ValueError as error:
            raise DialshiftError(f"{path}: {error} (row i is the i-th prediction line, from 0)") from None
    _save(figure, args)
    return 0


# ------------------------------------------------------------------ curves


def read_results(path):
    """``(method name, document)`` from a results.json file written by ``dialshift score``/``evaluate``."""
    import json
    from pathlib import Path

    from dialshift.errors import DialshiftError

    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DialshiftError(f"{path}: no such results file") from None
    except UnicodeDecodeError as error:
        raise DialshiftError(f"{path}: not a results.json file (byte {error.start} is not UTF-8 text)") from None
    except OSError as error:
        raise DialshiftError(f"{path}: cannot read the results file ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise DialshiftError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
    except RecursionError:
        raise DialshiftError(f"{path}: JSON nested too deeply to read") from None
    if not isinstance(document, dict) or not isinstance(document.get("results"), dict):
        raise DialshiftError(f'{path}: expected {{"configs": {{...}}, "results": {{"<dataset config>": {{...}}}}}}')
    if not isinstance(document.get("configs"), dict) or not document["configs"]:
        raise DialshiftError(f"{path}: no typed configs (a results.json of an older dialshift?); re-score its "
                             "predictions with `dialshift score`")
    run = document.get("run") if isinstance(document.get("run"), dict) else {}
    method = run.get("method") or path.parent.name or path.stem
    return str(method), document


def run_curves(args) -> int:
    from dialshift.configs import expand_patterns
    from dialshift.errors import DialshiftError
    from dialshift.plots import shift_curves
    from dialshift.scoring.report import _metrics_of, curve_points, typed_configs

    methods = [read_results(path) for path in args.results]
    if args.names:
        if len(args.names) != len(methods):
            raise DialshiftError(f"--names has {len(args.names)} names for {len(methods)} results files")
        methods = [(name, document) for name, (_, document) in zip(args.names, methods, strict=True)]
    methods = [(plain_text(name), document) for name, document in methods]
    names = [name for name, _ in methods]
    duplicates = {name for name in names if names.count(name) > 1}
    if duplicates:
        raise DialshiftError(f"several results files are named {sorted(duplicates)}: tell them apart with --names")
    documents = dict(methods)
    configs = typed_configs(documents)
    chosen = expand_patterns(args.configs, list(configs), what="--configs", hint="configs in the results files") \
        if args.configs else list(configs)
    shifted = [name for name in chosen if configs[name].shifted]
    if not shifted:
        raise DialshiftError(f"none of the configs {', '.join(chosen)} lies on a shift curve (no shift group)")
    families = {configs[name].family for name in shifted}
    baselines = [name for name in chosen if not configs[name].shifted and configs[name].family in families]
    lines, bands, labels = curve_points(documents, configs, shifted, baselines[0] if baselines else None)
    columns = dict(_metrics_of(documents, shifted, configs))
    present = {metric for points in lines.values() for point in points for metric in point}
    metrics = args.metrics or [metric for metric in columns if metric in present]
    for metric in metrics:
        if not any(metric in point for points in lines.values() for point in points):
            raise DialshiftError(f"metric {metric!r} is in none of the results for these configs "
                                 f"(they have: {', '.join(columns)})")
    if args.x_labels:
        if len(args.x_labels) != len(labels):
            raise DialshiftError(f"--x-labels has {len(args.x_labels)} labels for {len(labels)} points")
        labels = args.x_labels
    labels = [plain_text(label) for label in labels]
    groups = {configs[name].group for name in shifted}
    axis = {group.axis_label for group in groups}
    titles = {group.title for group in groups}
    title = args.title or (titles.pop() if len(titles) == 1 else None)
    figure = shift_curves(lines, labels, metrics=tuple(metrics), title=plain_text(title) if title else None,
                          xlabel=plain_text(args.xlabel or (axis.pop() if len(axis) == 1 else "shift intensity")),
                          intervals=bands, metric_labels=columns)
    _save(figure, args)
    return 0


def _save(figure, args) -> None:
    from pathlib import Path

    import matplotlib.pyplot as plt

    from dialshift.plots import save_figure

    written = [save_figure(figure, args.out)]
    if args.pdf:
        written.append(save_figure(figure, Path(args.out).with_suffix(".pdf")))
    plt.close(figure)
    for path in written:
        print(f"wrote {path}")
