"""``results.md`` and plots from scored documents (``results.json`` content), driven by the typed configs they store.

Nothing here reads a config name: sections and curves follow each config's shift group (``group.figure`` says which
groups share a figure, ``group.title`` and ``group.axis_label`` its title and x axis, ``intensity`` the x position,
``intensity_label`` the tick); the family's unshifted config is the first point of every curve of its family; the
reliability diagrams show the unshifted config and the strongest shift of each group. Paired differences follow
each config's declared baselines (a table per section and a ``difference_<figure>.png`` beside each curve figure).
"""

from pathlib import Path

from dialshift.configs import BenchmarkConfig, natural_key
from dialshift.scoring.tasks import get_task


def typed_configs(documents: dict) -> dict[str, BenchmarkConfig]:
    """Every config of the documents, typed, in natural name order."""
    found = {}
    for document in documents.values():
        for name, data in (document.get("configs") or {}).items():
            found.setdefault(name, BenchmarkConfig.from_dict(data))
    return {name: found[name] for name in sorted(found, key=natural_key)}


def figures(configs: dict[str, BenchmarkConfig]) -> dict[str, dict]:
    """``{figure: {"title", "axis_label", "groups": [group, ...], "members": [config, ...], "baseline": name}}``.

    Groups are ordered by their ``rank`` (a shift before its control), members by group then intensity;
    ``baseline`` is the unshifted corpus every member declares as its ``corpus`` baseline, when the documents hold it
    and it has the members' task (the first point of the curves), else None."""
    result: dict[str, dict] = {}
    for name, config in configs.items():
        if not config.shifted:
            continue
        group = config.group
        entry = result.setdefault(group.figure, {"title": group.title, "axis_label": group.axis_label, "groups": [],
                                                 "members": [], "baseline": None})
        if group.name not in [g.name for g in entry["groups"]]:
            entry["groups"].append(group)
        entry["members"].append(name)
    for entry in result.values():
        entry["groups"].sort(key=lambda g: (g.rank, g.name))
        order = [g.name for g in entry["groups"]]
        entry["members"].sort(key=lambda n: (order.index(configs[n].group.name), configs[n].intensity))
        corpora = {tuple(b.config for b in configs[n].baselines if b.kind == "corpus") for n in entry["members"]}
        if len(corpora) == 1 and len(next(iter(corpora))) == 1:
            base = next(iter(corpora))[0]
            if base in configs and configs[base].task == configs[entry["members"][0]].task:
                entry["baseline"] = base
    return result


def reliability_configs(configs: dict[str, BenchmarkConfig]) -> list[str]:
    """The unshifted configs and the most shifted config of each group: the configs drawn as reliability diagrams."""
    chosen = [name for name, config in configs.items() if not config.shifted]
    strongest: dict[str, str] = {}
    for name, config in configs.items():
        if config.shifted:
            key = f"{config.family}/{config.group.name}"
            if key not in strongest or config.intensity > configs[strongest[key]].intensity:
                strongest[key] = name
    return chosen + list(strongest.values())


# ----------------------------------------------------------------------------------------------- markdown


def _cell(document, config, metric) -> str:
    value = (document.get("results", {}).get(config) or {}).get(metric)
    if value is None:
        return "–"
    interval = (document.get("intervals", {}).get(config) or {}).get(metric)
    if not interval:
        return f"{value:.3f}"
    if ((document.get("interval_kinds") or {}).get(config) or {}).get(metric) == "upper bound":
        return f"{value:.3f} [≤ {interval[1]:.3f}]"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def calibration_test_table(documents: dict, names) -> list[str]:
    """One row per config of ``names`` with a calibration test: its p-value per document and whether it rejects."""
    rows = [name for name in names if any(name in (d.get("calibration_test") or {}) for d in documents.values())]
    if not rows:
        return []
    several = len(documents) > 1
    head = [f"{label} p-value" if several else "p-value" for label in documents]
    lines = ["| config | " + " | ".join(head) + " |", "|" + "---|" * (1 + len(head))]
    for name in rows:
        cells = []
        for document in documents.values():
            test = (document.get("calibration_test") or {}).get(name)
            cells.append(f"{test['p_value']:.3f} ({test['calibrated']})" if test else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _difference_cell(document, config, metric, base) -> str:
    entry = (((document.get("differences") or {}).get(config) or {}).get(base) or {}).get("metrics", {}).get(metric)
    if not entry or entry["value"] is None:
        return "–"
    interval = entry["interval"]
    if not interval:
        return f"{entry['value']:+.3f}"
    marker = " *" if interval[0] > 0 or interval[1] < 0 else ""
    return f"{entry['value']:+.3f} [{interval[0]:+.3f}, {interval[1]:+.3f}]{marker}"


def comparisons(documents: dict, names) -> tuple[list, list]:
    """``(paired, unpaired)``: the ``(config, baseline, kind)`` comparisons of ``names`` found in the documents, split
    into those with shared instance ids (a difference exists) and those without (none is printed)."""
    paired, unpaired = [], []
    for name in names:
        for document in documents.values():
            for base, entry in ((document.get("differences") or {}).get(name) or {}).items():
                row = (name, base, entry.get("kind", ""))
                target = paired if entry.get("shared") else unpaired
                if row not in paired and row not in unpaired:
                    target.append(row)
    return paired, [row for row in unpaired if row not in paired]


def _difference_table(documents, names, configs) -> list[str]:
    """The paired differences of ``names`` from their declared baselines: one row per (config, baseline) with shared
    ids, the shared-id count and each headline metric per document; then one line per comparison without shared ids."""
    paired, unpaired = comparisons(documents, names)
    lines = []
    if paired:
        columns = _metrics_of(documents, names, configs)
        several = len(documents) > 1
        head = [f"{label} {text}" if several else text for label in documents
                for text in ["shared ids", *(metric_label for _, metric_label in columns)]]
        lines += ["| config | baseline | " + " | ".join(head) + " |", "|" + "---|" * (2 + len(head))]
        for name, base, kind in paired:
            cells = []
            for document in documents.values():
                entry = ((document.get("differences") or {}).get(name) or {}).get(base) or {}
                cells.append(f"{entry['shared']:,}" if entry.get("shared") else "–")
                cells += [_difference_cell(document, name, metric, base) for metric, _ in columns]
            lines.append(f"| {name} | {base} ({kind}) | " + " | ".join(cells) + " |")
    if unpaired:
        lines += ["" if lines else None, *(f"- `{name}` vs `{base}` ({kind}): no instance id in common, no difference"
                                           for name, base, kind in unpaired)]
    return [line for line in lines if line is not None]


def _metrics_of(documents, names, configs) -> list[tuple[str, str]]:
    """``(metric, label)`` columns for these configs: each task's headline metrics, in order, once; the label ends
    with the task's direction (↑ higher is better, ↓ lower is better, nothing for a descriptive quantity)."""
    columns: list[tuple[str, str]] = []
    for name in names:
        task = get_task(configs[name].task)
        for document in documents.values():
            options = (document.get("options") or {}).get(name)
            if options is None:
                continue
            for metric in task.headline(options):
                if metric not in [m for m, _ in columns]:
                    info = task.info(metric, options)
                    columns.append((metric, f"{info.label} {info.arrow}".rstrip()))
    return columns


def _table(documents, names, configs, cell) -> list[str]:
    columns = _metrics_of(documents, names, configs)
    several = len(documents) > 1
    head = [f"{label} {label_metric}" if several else label_metric for label in documents
            for _, label_metric in columns]
    lines = ["| config | " + " | ".join(head) + " |", "|" + "---|" * (1 + len(head))]
    for name in names:
        cells = [cell(document, name, metric) for document in documents.values() for metric, _ in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _revision(revision) -> str:
    """The dataset revision for the header: a folder's, or a pointer to the per-config fingerprints."""
    return revision if isinstance(revision, str) or revision is None else "config fingerprints in results.json"


def render_markdown(documents: dict) -> str:
    """``results.md`` for ``{label: document}`` (one label per method or submission)."""
    if not documents:
        return "# Results\n\nNo results yet.\n"
    first = next(iter(documents.values()))
    scoring = first.get("scoring", {})
    lines = [
        "# Results",
        "",
        f"Dataset {first.get('dataset')} ({_revision(first.get('dataset_revision'))}), split `{scoring.get('split')}`, "
        f"instances per config: {scoring.get('max_instances') or 'all'}"
        + (f" (subsample seed {scoring.get('sample_seed')})" if scoring.get("max_instances") else "")
        + (f"; **a subset**: only the {scoring['subset']['ids']:,} ids of {scoring['subset']['ids_file']} "
           "(not comparable with full-config results, never ranked)" if scoring.get("subset") else "")
        + f"; dialshift {first.get('dialshift_version')}.",
        f"Each value is followed by its {scoring.get('interval', 'bootstrap interval')}. Differences are a config "
        "minus each baseline it declares (its unshifted corpus, its shift's control), on the instance ids the two "
        "share (counted), with the paired interval; `*` marks an interval that excludes 0. The calibration "
        "metrics' intervals hold near calibration (bias-bounded; docs/metrics.md measures their coverage); `[≤ u]` is "
        "an upper bound, given where the calibration test below does not reject: such a model cannot be told from a "
        "calibrated one.",
        "",
    ]
    configs = typed_configs(documents)
    tasks = {}
    for name, config in configs.items():
        for document in documents.values():
            if name in (document.get("options") or {}):
                tasks.setdefault(config.task, document["options"][name])
    for task_name, options in tasks.items():
        task = get_task(task_name)
        lines.append(f"**{task_name}.** " + task.description.format(**options))
        lines.append("")
    for label, document in documents.items():
        run = document.get("run") or {}
        details = ", ".join(f"{key} {run[key]}" for key in ("model", "seeds", "temperature", "dropout_passes")
                            if run.get(key) is not None)
        lines.append(f"- **{label}**" + (f": {details}" if details else ""))
    grouped = figures(configs)
    placed = set()
    for entry in grouped.values():
        names = ([entry["baseline"]] if entry["baseline"] else []) + entry["members"]
        placed.update(names)
        lines += ["", f"## {entry['title']}", "", *_table(documents, names, configs, _cell)]
        differences = _difference_table(documents, entry["members"], configs)
        if differences:
            lines += ["", "Paired differences from the declared baselines:", "", *differences]
    rest = [name for name in configs if name not in placed]
    if rest:
        lines += ["", "## Configs" if not grouped else "## Other configs", "", *_table(documents, rest, configs,
                                                                                         _cell)]
        differences = _difference_table(documents, rest, configs)
        if differences:
            lines += ["", "Paired differences from the declared baselines:", "", *differences]
    tests = calibration_test_table(documents, list(configs))
    if tests:
        lines += ["", "## Calibration test", "", "p-value of \"the model is calibrated\" (top label): consistency "
                  "resampling of the binned ECE, labels drawn from the model's own confidences "
                  "(`dialshift.metrics.calibration_test`); rejected or not at 5 %.", "", *tests]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------- plots


def curve_points(documents: dict, configs: dict[str, BenchmarkConfig], names: list[str], baseline: str | None):
    """``(lines, bands, x_labels)`` for :func:`dialshift.plots.shift_curves` over ``names`` (members of one figure):
    one line per (document, group) when the configs span several groups, x = the sorted distinct intensities, the
    unshifted ``baseline`` first."""
    groups = list(dict.fromkeys(configs[name].group.name for name in names))
    group_labels = {configs[name].group.name: configs[name].group.label for name in names}
    xs = sorted({configs[name].intensity for name in names})
    tick = {}
    for name in names:
        tick.setdefault(configs[name].intensity, configs[name].intensity_label or f"{configs[name].intensity:g}")
    x_labels = ([baseline] if baseline else []) + [tick[x] for x in xs]
    by_point = {(configs[name].group.name, configs[name].intensity): name for name in names}
    lines, bands = {}, {}
    for label, document in documents.items():
        results, intervals = document.get("results", {}), document.get("intervals", {})
        for group in groups:
            series = ([baseline] if baseline else []) + [by_point.get((group, x)) for x in xs]
            line = f"{label} ({group_labels[group]})" if len(groups) > 1 else label
            lines[line] = [results.get(name) or {} for name in series]
            bands[line] = [intervals.get(name) or {} for name in series]
    return lines, bands, x_labels


def difference_points(documents: dict, configs: dict[str, BenchmarkConfig], names: list[str]):
    """``(lines, bands, x_labels)`` of the paired differences of ``names`` (members of one figure) from their
    declared baselines, for :func:`dialshift.plots.shift_curves`: one line per (document, group, baseline kind), at
    the members' intensities; a point without shared ids (or without that baseline) is a gap. None when no member
    has a difference."""
    xs = sorted({configs[name].intensity for name in names})
    tick = {}
    for name in names:
        tick.setdefault(configs[name].intensity, configs[name].intensity_label or f"{configs[name].intensity:g}")
    paired, _ = comparisons(documents, names)
    if not paired:
        return None
    lines, bands = {}, {}
    for label, document in documents.items():
        differences = document.get("differences") or {}
        for group in dict.fromkeys(configs[name].group for name in names):
            members = [name for name in names if configs[name].group == group]
            for kind in dict.fromkeys(kind for name, _, kind in paired if name in members):
                bases = {name: base for name, base, k in paired if name in members and k == kind}
                names_of = set(bases.values())  # one baseline, or one per intensity (kw_R): its group
                groups_of = {configs[base].group.label for base in names_of if base in configs and
                             configs[base].shifted}
                target = names_of.pop() if len(names_of) == 1 else groups_of.pop() if len(groups_of) == 1 else kind
                line = (f"{label}: " if len(documents) > 1 else "") + f"{group.label} − {target}"
                by_x = {configs[name].intensity: (differences.get(name) or {}).get(base, {}).get("metrics", {})
                        for name, base in bases.items()}
                lines[line] = [{m: v["value"] for m, v in by_x.get(x, {}).items()} for x in xs]
                bands[line] = [{m: v["interval"] for m, v in by_x.get(x, {}).items()} for x in xs]
    return lines, bands, [tick[x] for x in xs]


def write_plots(out_dir, documents: dict) -> list[Path]:
    """``plots/shift_<figure>.png`` per figure and ``plots/reliability_<label>.png`` per document with bins."""
    import matplotlib.pyplot as plt

    from dialshift.plots import draw_reliability, save_figure, shift_curves

    out_dir = Path(out_dir)
    configs = typed_configs(documents)
    written = []
    for key, entry in figures(configs).items():
        lines, bands, x_labels = curve_points(documents, configs, entry["members"], entry["baseline"])
        metrics = _metrics_of(documents, entry["members"], configs)
        figure = shift_curves(lines, x_labels, metrics=tuple(m for m, _ in metrics), title=entry["title"],
                              xlabel=entry["axis_label"], intervals=bands, metric_labels=dict(metrics))
        written.append(save_figure(figure, out_dir / "plots" / f"shift_{key}.png"))
        plt.close(figure)
        differences = difference_points(documents, configs, entry["members"])
        if differences:
            lines, bands, x_labels = differences
            figure = shift_curves(lines, x_labels, metrics=tuple(m for m, _ in metrics), title=f"{entry['title']}: "
                                  "paired differences from the declared baselines", xlabel=entry["axis_label"],
                                  intervals=bands, metric_labels=dict(metrics))
            written.append(save_figure(figure, out_dir / "plots" / f"difference_{key}.png"))
            plt.close(figure)
    chosen = reliability_configs(configs)
    for label, document in documents.items():
        bins = document.get("reliability") or {}
        names = [name for name in chosen if name in bins]
        if not names:
            continue
        figure, axes = plt.subplots(1, len(names), figsize=(4.0 * len(names), 4.0), squeeze=False,
                                    constrained_layout=True)
        for ax, name in zip(axes.flat, names, strict=True):
            draw_reliability(bins[name], title=name, ax=ax)
        figure.suptitle(f"Reliability ({label})")
        written.append(save_figure(figure, out_dir / "plots" / f"reliability_{label}.png"))
        plt.close(figure)
    return written


def write_report(out_dir, documents: dict, plots: bool = True) -> Path:
    """Write ``results.md`` (and the plots) for ``{label: document}`` into ``out_dir``."""
    from dialshift.io import atomic_write

    path = atomic_write(Path(out_dir) / "results.md", render_markdown(documents))
    if plots and documents:
        write_plots(out_dir, documents)
    return path
