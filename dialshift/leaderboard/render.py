"""The leaderboard tables and the static results page (``dialshift leaderboard render``).

:func:`family_tables` turns the store's records into one table per (family, track, task) (the Space shows the same
tables; a submission's ``track``, full or lite, keeps lite rows out of the full tables): one row per submission; per
headline metric of the task, its value on the table's first unshifted config (with its bootstrap interval) and its
mean over the shifted configs (with the mean of their intervals, a conservative interval of the mean); each metric
column takes its label and direction from the task (:meth:`~dialshift.scoring.tasks.ScoringTask.info`). A row is
ranked (on the task's first headline metric: the shifted mean where the table has shifted configs, else the unshifted
value) only when it covers every config of the table (the family's configs of that task in the dataset it was scored
against); otherwise it is listed as incomplete with its coverage and no rank, and its shifted mean (over a different
set) is left out. Where the records hold a second test split of the first unshifted config (the covariate family's
``cov_test``, ``cov_lite`` on the lite track: a record's ``shifted_splits``), each headline metric also gets its value
there and the drop from the first split, each with its interval (:mod:`dialshift.scoring.split_drops`).
:func:`render_site` writes ``index.html`` (one tab per table, sortable columns, metric direction shown, the ranked
column's interval always shown and the others' behind a toggle, links to each submission and its results file), a
copy of every results file, and the degradation curves of each submission (``plots/<family>/<record>__<figure>.png``).
"""

import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from dialshift.configs import natural_key
from dialshift.errors import DialshiftError

TEMPLATE = "index.html"


@dataclass
class Column:
    key: str
    label: str
    lower_is_better: bool | None = None  # None: not ranked (text, or a metric with no direction)
    numeric: bool = True

    @property
    def direction(self) -> str:
        if self.lower_is_better is None:
            return ""
        return "lower is better" if self.lower_is_better else "higher is better"


@dataclass
class Table:
    family: str
    task: str
    baseline: str | None
    configs: list = field(default_factory=list)  # the table's full config set (a ranked row covers all of them)
    columns: list = field(default_factory=list)
    rows: list = field(default_factory=list)  # {"cells", "intervals", "record", "plots", "rank", "coverage", ...}
    ranked_by: str | None = None  # the column key rows are ranked on
    track: str = "full"  # the submissions' track: each track is ranked in tables of its own
    split: str | None = None  # the split the rows were scored on (test, lite)
    second: str | None = None  # the baseline's second test split shown beside it (cov_test, cov_lite), if any

    @property
    def key(self) -> str:
        """A page id: the family and the task, with the track when it is not the full one."""
        return f"{self.family}-{self.task}" if self.track == "full" else f"{self.family}-{self.track}-{self.task}"


def _mean(values):
    finite = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.mean(finite)) if finite else None


def _family_configs(family: str, members: list[dict], typed: dict) -> dict[str, str]:
    """``{config: task}`` of the family's full config set: what the records say the dataset held (``family_configs``,
    written when scored), else the installed family's non-optional configs, else every config a record scored."""
    for record in members:
        stored = record["config"].get("family_configs")
        if stored:
            return dict(stored)
    from dialshift.registry import families

    installed = families().get(family)
    if installed is not None:
        return {config.name: config.task for config in installed.configs() if not config.optional}
    return {name: config.task for name, config in typed.items()}


def _ranks(values: list, lower_is_better: bool) -> list:
    """Competition ranks (1, 2, 2, 4) of the values; None for a missing value."""
    order = [-v if not lower_is_better else v for v in values if v is not None and np.isfinite(v)]
    return [None if v is None or not np.isfinite(v) else 1 + sum(o < (v if lower_is_better else -v) for o in order)
            for v in values]


def family_tables(records: list[dict]) -> list[Table]:
    """One :class:`Table` per (family, track, task) of the records, in name order (a family's full-track tables
    before its lite ones), rows in record order: a lite submission is never ranked against a full one."""
    from dialshift.configs import BenchmarkConfig
    from dialshift.leaderboard.store import record_track
    from dialshift.leaderboard.submission import TRACKS
    from dialshift.scoring.tasks import get_task

    by_family: dict[tuple, list[dict]] = {}
    for record in records:
        track = record_track(record)
        by_family.setdefault((record["config"].get("family", "?"), list(TRACKS).index(track), track), []).append(record)
    tables = []
    for family, _, track in sorted(by_family):
        members = by_family[family, _, track]
        typed = {}
        for record in members:
            for name, data in (record.get("configs") or {}).items():
                typed.setdefault(name, BenchmarkConfig.from_dict(data))
        full = _family_configs(family, members, typed)
        for name, config in typed.items():
            full.setdefault(name, config.task)
        for task_name in sorted(set(full.values())):
            names = sorted((name for name in full if full[name] == task_name), key=natural_key)
            scored = [name for name in names if name in typed]
            if not scored:
                continue
            tables.append(_table(family, get_task(task_name), names, typed, members, track))
    return tables


def _mean_interval(bands: list):
    """An interval for the mean over configs from their own intervals: the mean of their bounds. The standard
    deviation of a mean is at most the mean of the standard deviations, so this is conservative (exact when the
    configs' errors are perfectly correlated); None unless every config has one."""
    if not bands or any(not band or len(band) != 2 or any(v is None for v in band) for band in bands):
        return None
    return [float(np.mean([band[0] for band in bands])), float(np.mean([band[1] for band in bands]))]


def _table(family, task, names, typed, members, track="full") -> Table:
    scored = [name for name in names if name in typed]
    baseline = next((name for name in scored if not typed[name].shifted), None)
    shifted = [name for name in names if name in typed and typed[name].shifted]
    rows = [record for record in members if set(record.get("results") or {}) & set(names)]
    options = next((r["options"][n] for r in rows for n in names if n in (r.get("options") or {})), {})
    columns = [Column("rank", "Rank", lower_is_better=True), Column("model", "Model", numeric=False),
               Column("method", "Method", numeric=False), Column("parameters", "Params"),
               Column("coverage", "Configs", numeric=False)]
    if any((record["config"].get("cost") or {}) for record in rows):  # what the predictions cost, as submitted
        columns += [Column("pairs", "Cost (pairs)"), Column("cpu_seconds", "Cost (CPU s)")]
    fixed = len(columns)
    headline = task.headline(options)
    split = next((r["scoring"]["split"] for r in rows if isinstance((r.get("scoring") or {}).get("split"), str)), None)
    second = next((name for r in rows for name, values in (r.get("shifted_splits") or {}).items()
                   if baseline in values["results"]), None) if baseline else None
    for metric in headline:
        info = task.info(metric, options)
        lower = None if info.higher_is_better is None else not info.higher_is_better
        if baseline:
            columns.append(Column(f"{metric}|clean", f"{info.label} ({baseline}{f', {split}' if second else ''})",
                                  lower))
        if second:
            columns.append(Column(f"{metric}|second", f"{info.label} ({baseline}, {second})", lower))
            # a smaller drop is better for a higher-is-better metric, a larger (less negative) one for the others
            columns.append(Column(f"{metric}|drop", f"{info.label} drop {split} − {second} ({baseline})",
                                  None if lower is None else not lower))
        if shifted:
            columns.append(Column(f"{metric}|shifted", f"{info.label} (shifted mean)", lower))
    if baseline and any(baseline in (record.get("calibration_test") or {}) for record in rows):
        columns.append(Column("calibration|clean", f"p calibrated ({baseline})"))
    table = Table(family, task.name, baseline, names, columns, track=track, split=split, second=second)
    first = headline[0] if headline else None
    keys = {column.key: column for column in columns}
    ranked_by = keys.get(f"{first}|shifted") or keys.get(f"{first}|clean")
    if ranked_by is not None and ranked_by.lower_is_better is not None:
        table.ranked_by = ranked_by.key
    for record in rows:
        results, intervals = record["results"], record.get("intervals") or {}
        covered = [name for name in names if name in results]
        complete = len(covered) == len(names)
        cells = {"model": record["config"]["model_name"], "method": record["config"]["method"],
                 "parameters": record["config"].get("parameters"), "coverage": f"{len(covered)} of {len(names)}",
                 **{key: (record["config"].get("cost") or {}).get(key) for key in ("pairs", "cpu_seconds")}}
        bands = {}
        kinds = (record.get("interval_kinds") or {}).get(baseline) or {}
        for column in columns[fixed:]:
            metric, which = column.key.split("|")
            if metric == "calibration":
                cells[column.key] = ((record.get("calibration_test") or {}).get(baseline) or {}).get("p_value")
            elif which in ("second", "drop"):
                values = (record.get("shifted_splits") or {}).get(second) or {}
                if which == "second":
                    cells[column.key] = (values.get("results", {}).get(baseline) or {}).get(metric)
                    bands[column.key] = (values.get("intervals", {}).get(baseline) or {}).get(metric)
                else:
                    drop = ((values.get("drops", {}).get(baseline) or {}).get("metrics") or {}).get(metric) or {}
                    cells[column.key], bands[column.key] = drop.get("value"), drop.get("interval")
            elif which == "clean":
                cells[column.key] = (results.get(baseline) or {}).get(metric)
                band = (intervals.get(baseline) or {}).get(metric)
                # an upper bound (the calibration test does not reject) is shown as one: [≤ high]
                bands[column.key] = [*band, kinds[metric]] if band and kinds.get(metric) == "upper bound" else band
            elif all(name in results for name in shifted):
                cells[column.key] = _mean([(results.get(name) or {}).get(metric) for name in shifted])
                bands[column.key] = _mean_interval([(intervals.get(name) or {}).get(metric) for name in shifted])
            else:
                cells[column.key] = None
        table.rows.append({"cells": cells, "intervals": bands, "record": record, "plots": [], "complete": complete})
    if table.ranked_by:
        lower = next(c.lower_is_better for c in columns if c.key == table.ranked_by)
        eligible = [row["cells"][table.ranked_by] if row["complete"] else None for row in table.rows]
        for row, rank in zip(table.rows, _ranks(eligible, lower), strict=True):
            row["cells"]["rank"] = rank
    else:
        for row in table.rows:
            row["cells"]["rank"] = None
    return table


def table_frame(table: Table):
    """A ``pandas.DataFrame`` of a table (labels as column names, the direction appended to metric columns; each
    value with an interval followed by a ``label [95 %]`` column holding it)."""
    import pandas as pd

    data, names = [], []
    for column in table.columns:
        names.append(column.label + (" ↓" if column.lower_is_better else " ↑" if column.lower_is_better is False
                                     else ""))
    for row in table.rows:
        data.append([row["cells"].get(column.key) for column in table.columns])
    frame = pd.DataFrame(data, columns=names)
    for index, column in reversed(list(enumerate(table.columns))):
        if any(row["intervals"].get(column.key) for row in table.rows):
            values = [row["intervals"].get(column.key) for row in table.rows]
            frame.insert(index + 1, f"{column.label} interval",
                         [None if not v else f"[≤ {v[1]:.4f}]" if len(v) > 2 else f"[{v[0]:.4f}, {v[1]:.4f}]"
                          for v in values])
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
    if column.key == "rank":
        return str(value)
    if column.key == "parameters":
        return f"{value / 1e6:,.1f}M" if value >= 1e5 else f"{value:,}"
    if column.key in ("pairs", "cpu_seconds"):
        return f"{value:,.0f}"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


#: Marks a folder as a rendered page and lists the files the render wrote: only such a folder (or a new or empty one)
#: is replaced, and only while it holds nothing else.
SITE_MARKER = ".dialshift-site"


def mathtext_safe(text: str) -> str:
    """``text`` for a matplotlib title or legend: every ``$`` escaped, so user text never starts math markup."""
    return str(text).replace("$", r"\$")


def _site_files(out: Path) -> set[str] | None:
    """The files (relative paths) a page render wrote into ``out``, from its marker; None when it has no marker. A
    marker of an older version (plain text, no list) stands for the layout that version wrote."""
    import json

    marker = out / SITE_MARKER
    if not marker.is_file() or marker.is_symlink():
        return None
    try:
        listed = json.loads(marker.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        listed = None
    if isinstance(listed, dict) and isinstance(listed.get("files"), list):
        return {str(name) for name in listed["files"]} | {SITE_MARKER}
    return {path.relative_to(out).as_posix() for pattern in ("index.html", "results/**/*.json", "plots/**/*.png")
            for path in out.glob(pattern) if path.is_file() and not path.is_symlink()} | {SITE_MARKER}


def _check_site(store: Path, out: Path) -> None:
    """Refuse an ``out`` that a render may not replace: the store itself, inside it or holding it, a folder no render
    wrote, or a rendered page holding a file the render did not write (a user's notes inside ``results/``)."""
    real_store, real_out = store.resolve(), out.resolve()
    if real_out == real_store or real_out.is_relative_to(real_store) or real_store.is_relative_to(real_out):
        where = "inside the results store" if real_out.is_relative_to(real_store) else "holding the results store"
        raise DialshiftError(f"--out {out}: {where} {store}; a render replaces its whole folder, so write the page "
                             "into a folder of its own, outside the store")
    if not out.exists():
        return
    if not out.is_dir() or out.is_symlink():
        raise DialshiftError(f"--out {out}: not a folder; choose a new or empty folder")
    entries = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if not path.is_dir() or
                     path.is_symlink())
    if not entries and not any(out.iterdir()):
        return
    written = _site_files(out)
    if written is None:
        shown = ", ".join(sorted(path.name for path in out.iterdir())[:5])
        raise DialshiftError(f"--out {out}: not empty and not a page dialshift rendered (it holds {shown}); "
                             "choose a new or empty folder")
    foreign = [name for name in entries if name not in written]
    if foreign:
        raise DialshiftError(f"--out {out}: {foreign[0]} was not written by `leaderboard render`; a render replaces "
                             "the whole page, so move it out of the folder first")


def render_site(store, out, *, plots: bool = True, title: str = "dialshift leaderboard") -> Path:
    """Write the static page for the results store ``store`` into ``out``; return the path of ``index.html``.

    The page is built in a temporary folder beside ``out`` and swapped in only when complete (a failure leaves the
    old page whole); ``out`` must be new, empty, or a page rendered before that holds only what the render wrote.
    """
    import json

    from dialshift import __version__
    from dialshift.io import remove_stale_temporaries, restore_interrupted_swap, swap_folder, temporary_sibling
    from dialshift.leaderboard.store import read_store

    store, out = Path(store), Path(out).absolute()
    records = read_store(store)
    restore_interrupted_swap(out)
    _check_site(store, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out)
    staging = temporary_sibling(out)
    staging.mkdir()
    try:
        _write_site(store, staging, records, plots=plots, title=title, version=__version__)
        written = sorted(path.relative_to(staging).as_posix() for path in staging.rglob("*") if path.is_file())
        (staging / SITE_MARKER).write_text(json.dumps({"tool": "dialshift", "kind": "leaderboard page",
                                                       "version": __version__, "files": written}, indent=2) + "\n")
        swap_folder(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / "index.html"


def _write_site(store: Path, out: Path, records: list[dict], *, plots: bool, title: str, version: str) -> None:
    """The page's files into the (new, empty) folder ``out``."""
    import jinja2

    tables, drawn = family_tables(records), {}
    for table in tables:
        for row in table.rows:
            record = row["record"]
            target = out / "results" / record["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(store / record["path"], target)
            row["results_path"] = f"results/{record['path']}"
            if plots:  # a record in several tables (a family of several tasks) is drawn once
                row["plots"] = drawn.get(record["path"]) or drawn.setdefault(record["path"], _plot_record(
                    record, out, mathtext_safe(f"{record['config']['model_name']} ({record['config']['method']})")))
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["cell"] = _format
    template = environment.from_string(
        resources.files("dialshift.leaderboard").joinpath("templates", TEMPLATE).read_text(encoding="utf-8"))
    from dialshift.lite import LITE_SIZE

    page = template.render(title=title, tables=tables, version=version, count=len(records), lite_size=LITE_SIZE)
    (out / "index.html").write_text(page, encoding="utf-8")
