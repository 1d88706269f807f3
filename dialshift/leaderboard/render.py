"""The leaderboard tables and the static results page (``dialshift leaderboard render``).

:func:`family_tables` turns the store's records into one table per family (the Space shows the same tables): one
row per submission; per headline metric of the family's task, its value on the unshifted config and its mean over
the shifted configs; each column knows whether lower is better. :func:`render_site` writes ``index.html`` (one tab
per family, sortable columns, metric direction shown, links to each submission and its results file), a copy of
every results file, and the degradation curves of each submission (``plots/<family>/<record>__<figure>.png``).
"""

import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from dialshift.configs import natural_key
from dialshift.errors import DialshiftError

#: Metrics where a lower value is better (every other metric: higher is better).
LOWER_IS_BETTER = ("brier", "ece", "das_ratio", "mean_as_distractor")
TEMPLATE = "index.html"


def lower_is_better(metric: str) -> bool:
    return metric in LOWER_IS_BETTER or metric.startswith("fpr@")


@dataclass
class Column:
    key: str
    label: str
    lower_is_better: bool | None = None  # None: not a metric (not ranked)
    numeric: bool = True

    @property
    def direction(self) -> str:
        if self.lower_is_better is None:
            return ""
        return "lower is better" if self.lower_is_better else "higher is better"


@dataclass
class Table:
    family: str
    baseline: str | None
    columns: list = field(default_factory=list)
    rows: list = field(default_factory=list)  # each {"cells": {key: value}, "record": record, "plots": [...]}


def _mean(values):
    finite = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.mean(finite)) if finite else None


def family_tables(records: list[dict]) -> list[Table]:
    """One :class:`Table` per family of the records, families in name order, rows in record order."""
    from dialshift.configs import BenchmarkConfig
    from dialshift.scoring.tasks import get_task

    by_family: dict[str, list[dict]] = {}
    for record in records:
        by_family.setdefault(record["config"].get("family", "?"), []).append(record)
    tables = []
    for family in sorted(by_family):
        members = by_family[family]
        configs = {}
        for record in members:
            for name, data in (record.get("configs") or {}).items():
                configs.setdefault(name, BenchmarkConfig.from_dict(data))
        baseline = next((name for name in sorted(configs, key=natural_key) if not configs[name].shifted), None)
        shifted = [name for name in sorted(configs, key=natural_key) if configs[name].shifted]
        task_name = next(iter(configs.values())).task if configs else None
        task = get_task(task_name) if task_name else None
        options = next((r["options"][n] for r in members for n in (r.get("options") or {})), {})
        columns = [Column("model", "Model", numeric=False), Column("method", "Method", numeric=False),
                   Column("parameters", "Params")]
        for metric in task.headline(options) if task else ():
            label = task.label(metric, options)
            if baseline:
                columns.append(Column(f"{metric}|clean", f"{label} ({baseline})", lower_is_better(metric)))
            if shifted:
                columns.append(Column(f"{metric}|shifted", f"{label} (shifted mean)", lower_is_better(metric)))
        table = Table(family, baseline, columns)
        for record in members:
            results = record["results"]
            cells = {"model": record["config"]["model_name"], "method": record["config"]["method"],
                     "parameters": record["config"].get("parameters")}
            for column in columns[3:]:
                metric, which = column.key.split("|")
                if which == "clean":
                    cells[column.key] = (results.get(baseline) or {}).get(metric)
                else:
                    cells[column.key] = _mean([(results.get(name) or {}).get(metric) for name in shifted])
            table.rows.append({"cells": cells, "record": record, "plots": []})
        tables.append(table)
    return tables


def table_frame(table: Table):
    """A ``pandas.DataFrame`` of a table (labels as column names, the direction appended to metric columns)."""
    import pandas as pd

    names = [column.label + (" ↓" if column.lower_is_better else " ↑" if column.lower_is_better is False else "")
             for column in table.columns]
    data = [[row["cells"].get(column.key) for column in table.columns] for row in table.rows]
    frame = pd.DataFrame(data, columns=names)
    return frame.round(4)


def _plot_record(record: dict, site: Path, label: str) -> list[dict]:
    """The degradation curves of one record (a PNG per shift figure); ``[{"title", "path"}]`` relative to site."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from dialshift.plots import save_figure, shift_curves
    from dialshift.scoring.report import _metrics_of, curve_points, difference_points, figures, typed_configs

    documents = {label: record}
    configs = typed_configs(documents)
    written = []
    stem = Path(record["path"]).with_suffix("")
    for key, entry in figures(configs).items():
        lines, bands, x_labels = curve_points(documents, configs, entry["members"], entry["baseline"])
        metrics = _metrics_of(documents, entry["members"], configs)
        figure = shift_curves(lines, x_labels, metrics=tuple(m for m, _ in metrics), title=f"{entry['title']}: "
                              f"{label}", xlabel=entry["axis_label"], intervals=bands, metric_labels=dict(metrics))
        relative = Path("plots") / f"{stem.as_posix()}__{key}.png"
        save_figure(figure, site / relative, dpi=80)
        plt.close(figure)
        written.append({"title": entry["title"], "path": relative.as_posix()})
        differences = difference_points(documents, configs, entry["members"])
        if differences:
            lines, bands, x_labels = differences
            figure = shift_curves(lines, x_labels, metrics=tuple(m for m, _ in metrics), title=f"{entry['title']}: "
                                  f"{label}, paired differences from the declared baselines",
                                  xlabel=entry["axis_label"], intervals=bands, metric_labels=dict(metrics))
            relative = Path("plots") / f"{stem.as_posix()}__{key}__differences.png"
            save_figure(figure, site / relative, dpi=80)
            plt.close(figure)
            written.append({"title": f"{entry['title']} (paired differences)", "path": relative.as_posix()})
    return written


def _format(value, column: Column) -> str:
    if value is None:
        return "–"
    if column.key == "parameters":
        return f"{value / 1e6:,.1f}M" if value >= 1e5 else f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


#: Marks a folder as a rendered page: only such a folder (or a new or empty one) is written into.
SITE_MARKER = ".dialshift-site"


def render_site(store, out, *, plots: bool = True, title: str = "dialshift leaderboard") -> Path:
    """Write the static page for the results store ``store`` into ``out``; return the path of ``index.html``."""
    import jinja2

    from dialshift import __version__
    from dialshift.io import atomic_write
    from dialshift.leaderboard.store import read_store

    store, out = Path(store), Path(out)
    records = read_store(store)
    if out.is_dir() and any(out.iterdir()) and not (out / SITE_MARKER).is_file():
        shown = ", ".join(sorted(path.name for path in out.iterdir())[:5])
        raise DialshiftError(f"--out {out}: not empty and not a page dialshift rendered (it holds {shown}); "
                             "choose a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / SITE_MARKER, f"dialshift {__version__}: rendered by `dialshift leaderboard render`\n")
    for folder in ("results", "plots"):  # ours: the folder is a page rendered before (its marker says so)
        shutil.rmtree(out / folder, ignore_errors=True)
    tables = family_tables(records)
    for table in tables:
        for row in table.rows:
            record = row["record"]
            target = out / "results" / record["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(store / record["path"], target)
            row["results_path"] = f"results/{record['path']}"
            if plots:
                row["plots"] = _plot_record(record, out, f"{record['config']['model_name']} "
                                                         f"({record['config']['method']})")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["cell"] = _format
    template = environment.from_string(
        resources.files("dialshift.leaderboard").joinpath("templates", TEMPLATE).read_text(encoding="utf-8"))
    page = template.render(title=title, tables=tables, version=__version__, count=len(records))
    return atomic_write(out / "index.html", page)
