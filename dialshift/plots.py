"""Figures for calibration and robustness results, drawn with matplotlib's Agg backend (no display needed).

* :func:`reliability_diagram`: accuracy per confidence bin against the diagonal, with the confidence histogram
  underneath (Guo et al., 2017, Figure 1), from class probabilities and gold labels.
* :func:`draw_reliability`: the same diagram from already binned results (``results.json``'s ``reliability``).
* :func:`shift_curves`: R@1 / Brier / ECE (any metrics) against shift intensity, one line per method, with optional
  bootstrap-interval bands, as in Figure 2 of Lee et al. (2022).
* :func:`open_world_confusion_figure`: confusion matrices of an open-world method on test and cov_test, with the
  closed-world matrix of cov_test between them (Figure 1 of Khosla and Gangadharaiah, 2022).
* :func:`save_figure`: write a figure atomically (PNG, PDF, SVG: from the file suffix).
"""

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dialshift.errors import DialshiftError  # noqa: E402
from dialshift.metrics import ece  # noqa: E402

METRIC_LABELS = {
    "accuracy": "Accuracy (R@1)",
    "recall@1": "R@1",
    "brier": "Brier score",
    "ece": "ECE",
    "f1_all": "F1 (all)",
    "f1_in": "F1 (in)",
    "f1_out": "F1 (out)",
    "auroc": "AUROC",
    "das_ratio": "DAS ratio",
}


def reliability_diagram(probabilities, references, n_bins=15, title=None, ax=None, binning="equal_width") -> Figure:
    """Reliability diagram of top-label confidence with a confidence histogram.

    Args:
        probabilities: ``N x K`` class probabilities (validated as in :func:`dialshift.metrics.ece`).
        references: ``N`` gold class ids.
        n_bins: number of confidence bins (the bins of :func:`~dialshift.metrics.ece`, right-closed).
        title: title above the diagram; the ECE is always shown in the legend.
        ax: where to draw. ``None``: a new figure with the diagram on top and the histogram below. One Axes: the
            diagram is drawn there and the histogram as light bars on a twin y axis (fraction of samples, right).
            A pair ``(diagram_ax, histogram_ax)``: one in each.
        binning: ``"equal_width"`` or ``"equal_mass"``.

    Returns:
        The matplotlib Figure holding the diagram.
    """
    return draw_reliability(ece(probabilities, references, n_bins=n_bins, binning=binning), title=title, ax=ax)


def draw_reliability(result: dict, title=None, ax=None) -> Figure:
    """Draw a reliability diagram from binned results: ``bin_edges``, ``bin_counts``, ``bin_accuracy``,
    ``bin_confidence`` (None/NaN for empty bins) and ``ece``, as :func:`dialshift.metrics.ece` returns them or as
    ``results.json`` stores them under ``reliability``; ``ax`` as in :func:`reliability_diagram`."""
    twin = ax is not None and not isinstance(ax, (tuple, list))
    if ax is None:
        figure, (diagram_ax, histogram_ax) = plt.subplots(
            2, 1, figsize=(4.8, 6.0), sharex=True, gridspec_kw={"height_ratios": [3, 1]}, constrained_layout=True
        )
    elif twin:
        diagram_ax, histogram_ax = ax, ax.twinx()
        figure = ax.figure
    else:
        diagram_ax, histogram_ax = ax
        figure = diagram_ax.figure
    edges = np.asarray(result["bin_edges"])
    counts = np.asarray(result["bin_counts"], dtype=float)
    accuracy = np.array([np.nan if value is None else value for value in result["bin_accuracy"]], dtype=float)
    confidence = np.array([np.nan if value is None else value for value in result["bin_confidence"]], dtype=float)
    lefts, widths = edges[:-1], np.diff(edges)
    filled = counts > 0
    diagram_ax.bar(
        lefts[filled],
        accuracy[filled],
        width=widths[filled],
        align="edge",
        color="tab:blue",
        edgecolor="black",
        linewidth=0.6,
        label="Accuracy",
    )
    gap_bottom = np.minimum(accuracy, confidence)[filled]
    diagram_ax.bar(
        lefts[filled],
        np.abs(confidence - accuracy)[filled],
        bottom=gap_bottom,
        width=widths[filled],
        align="edge",
        color="tab:red",
        alpha=0.3,
        edgecolor="tab:red",
        hatch="//",
        linewidth=0.6,
        label="Gap",
    )
    diagram_ax.plot([0, 1], [0, 1], linestyle="--", color="gray", linewidth=1, label="Perfect calibration")
    diagram_ax.set_xlim(0, 1)
    diagram_ax.set_ylim(0, 1)
    diagram_ax.set_ylabel("Accuracy")
    diagram_ax.legend(loc="upper left", title=f"ECE = {result['ece']:.3f}", fontsize="small", title_fontsize="small")
    if title:
        diagram_ax.set_title(title)
    fraction = counts / counts.sum()
    if twin:  # an outline, so the accuracy bars stay readable underneath
        histogram_ax.stairs(fraction, edges, color="black", linewidth=1.2, label="Samples")
    else:
        histogram_ax.bar(
            lefts, fraction, width=widths, align="edge", color="gray", alpha=0.5, edgecolor="black", linewidth=0.4
        )
    histogram_ax.set_ylabel("Fraction of samples")
    if twin:  # the histogram fills the bottom quarter of the diagram, its scale on the right
        histogram_ax.set_ylim(0, fraction.max() * 4)
        histogram_ax.set_yticks([0, round(float(fraction.max()), 2)])
        diagram_ax.set_xlabel("Confidence")
    else:
        histogram_ax.set_xlim(0, 1)
        histogram_ax.set_xlabel("Confidence")
    return figure


def shift_curves(results, x_labels, metrics=("recall@1", "brier", "ece"), title=None, xlabel="Shift intensity",
                 intervals=None, metric_labels=None):
    """Metric-versus-shift-intensity curves, one panel per metric and one line per method.

    Args:
        results: ``{method_name: [{metric: value, ...} for each x point]}``; each list is as long as ``x_labels``.
            A metric missing from a point's dict (or ``None``) leaves a gap in that method's line.
        x_labels: the shift intensity of each point (e.g. ``["0.05", "0.10", ...]`` or config names), drawn at
            evenly spaced positions in the given order.
        metrics: the metrics to draw, one panel each.
        title: figure title.
        xlabel: label of the x axes.
        intervals: optional ``{method_name: [{metric: [low, high]}, ...]}`` (as ``results``), drawn as bands.
        metric_labels: optional ``{metric: panel title}`` (default: :data:`METRIC_LABELS`, else the metric name).

    Returns:
        The matplotlib Figure.
    """
    if not results:
        raise ValueError("results is empty: give at least one method")
    if not metrics:
        raise ValueError("metrics is empty: name at least one metric to plot")
    x_labels = [str(label) for label in x_labels]
    for method, points in results.items():
        if len(points) != len(x_labels):
            raise ValueError(f"results[{method!r}] has {len(points)} points but x_labels has {len(x_labels)}")
    columns = min(len(metrics), 3)
    rows = math.ceil(len(metrics) / columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(4.2 * columns, 3.4 * rows), squeeze=False, constrained_layout=True
    )
    positions = np.arange(len(x_labels))
    markers = "osD^v<>phX*"
    for panel, metric in enumerate(metrics):
        ax = axes.flat[panel]
        for line, (method, points) in enumerate(results.items()):
            values = [point.get(metric) for point in points]
            values = np.array([np.nan if value is None else float(value) for value in values])
            drawn = ax.plot(positions, values, marker=markers[line % len(markers)], markersize=4, label=method)
            bands = (intervals or {}).get(method)
            if bands:
                low = np.array([np.nan if not (b or {}).get(metric) else b[metric][0] for b in bands], dtype=float)
                high = np.array([np.nan if not (b or {}).get(metric) else b[metric][1] for b in bands], dtype=float)
                ax.fill_between(positions, low, high, color=drawn[0].get_color(), alpha=0.15, linewidth=0)
        ax.set_title((metric_labels or {}).get(metric) or METRIC_LABELS.get(metric, metric))
        ax.set_xticks(positions)
        ax.set_xticklabels(
            x_labels,
            rotation=45 if len(x_labels) > 6 else 0,
            ha="right" if len(x_labels) > 6 else "center",
            fontsize="small",
        )
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(metrics) :]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize="small")
    if title:
        figure.suptitle(title)
    return figure


def save_figure(figure: Figure, path, dpi: int = 150) -> Path:
    """Write ``figure`` to ``path`` (format from the suffix: .png, .pdf, .svg), creating parent folders.

    The file is written to a temporary name in the same folder and renamed, so a failed write never leaves a
    half-written figure behind. Returns the path.
    """
    from dialshift.io import atomic_output

    path = Path(path)
    file_format = path.suffix.lstrip(".").lower() or "png"
    with atomic_output(path) as temporary:
        figure.savefig(temporary, format=file_format, dpi=dpi, bbox_inches="tight")
    return path


def open_world_confusion_figure(saved, names: list[str], path, method: str = "maha", layout: str = "figure1") -> Path:
    """The paper's confusion matrices of ``method``. ``layout="figure1"`` (Figure 1): test (open world), cov_test
    in-scope utterances without rejection (closed world: covariate shift alone) and cov_test (open world: both
    shifts), in a row. ``layout="appendix"`` (Figures A1, A2): test above cov_test, the closed world (in-scope
    utterances, argmax without rejection) left of the open world. ``saved`` maps ``gold/<split>`` and
    ``<method>/<split>`` to arrays, and ``logits/<split>`` (or ``argmax/<split>``) too: a seed's ``outputs.npz``."""
    from sklearn.metrics import confusion_matrix

    if layout not in ("figure1", "appendix"):
        raise DialshiftError(f"open_world_confusion_figure: layout {layout!r} must be 'figure1' or 'appendix'")
    oos = len(names) - 1
    labels = list(range(len(names)))

    def closed(split):
        gold = saved[f"gold/{split}"]
        argmax = saved[f"argmax/{split}"] if f"argmax/{split}" in saved else \
            saved[f"logits/{split}"][:, :oos].argmax(axis=1)
        inside = gold != oos
        return (f"{split}, in-scope, no rejection", gold[inside], argmax[inside])

    def opened(split):
        return (f"{split} (open world)", saved[f"gold/{split}"], saved[f"{method}/{split}"])

    if layout == "figure1":
        panels, shape, size = [opened("test"), closed("cov_test"), opened("cov_test")], (1, 3), (19, 6.4)
    else:
        panels, shape, size = [closed("test"), opened("test"), closed("cov_test"), opened("cov_test")], (2, 2), \
            (13, 12.4)
    figure, axes = plt.subplots(*shape, figsize=size)
    for axis, (title, y, p) in zip(axes.flat, panels, strict=True):
        matrix = confusion_matrix(y, p, labels=labels)
        axis.imshow(np.log1p(matrix), cmap="Blues")
        for (i, j), value in np.ndenumerate(matrix):
            if value:
                axis.text(j, i, str(value), ha="center", va="center", fontsize=6,
                          color="white" if value > matrix.max() / 3 else "black")
        axis.set_xticks(labels, names, rotation=90, fontsize=7)
        axis.set_yticks(labels, names, fontsize=7)
        axis.set_title(title, fontsize=9)
        axis.set_xlabel("predicted")
        axis.set_ylabel("gold")
    figure.tight_layout()
    save_figure(figure, path, dpi=110)
    plt.close(figure)
    return Path(path)
