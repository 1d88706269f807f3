"""``results.md`` and plots of an evaluation folder, from every ``<method>/results.json`` in it.

Shift intensity of a config (the x axis of the paper's Figure 2): ``uw_R`` / ``kw_R`` -> replacement ratio ``R``;
``ic_KofN`` -> deletion ratio ``K/N``; ``sr_T`` (real context length ``T``) -> ``(6 - T) / 6``, so SR lines up with the
IC config of the same context length; ``uw_imp_B`` -> importance bucket ``B``; ``source`` is the unshifted test set.
"""

import json
import re
from pathlib import Path

from dialshift.models.uncertainty import METHODS

METRICS = (("accuracy", "Acc"), ("brier", "Brier"), ("ece", "ECE"))
GROUPS = {
    "uw_kw": (("uw", "kw"), "word replacement ratio", "UW / KW: word replacement ratio (Lee et al. Tables 3, 5)"),
    "ic_sr": (("ic", "sr"), "sentence deletion ratio (SR: (6 - context turns) / 6)",
              "IC / SR: sentence deletion ratio and context length (Lee et al. Tables 4, 6)"),
    "uw_imp": (("uw_imp",), "word importance bucket (ratio 0.20)", "UW word importance (Lee et al. Table 7)"),
}


def shift_point(config: str):
    """``(family, x)`` of a config name, or ``(config, None)`` when it has no intensity (``source``)."""
    patterns = (
        (r"uw_imp_(\d+)", lambda m: ("uw_imp", float(m[1]))),
        (r"(uw|kw)_(\d+(?:\.\d+)?)", lambda m: (m[1], float(m[2]))),
        (r"ic_(\d+)of(\d+)", lambda m: ("ic", int(m[1]) / int(m[2]))),
        (r"sr_(\d+)", lambda m: ("sr", (6 - int(m[1])) / 6)),
    )
    for pattern, point in patterns:
        match = re.fullmatch(pattern, config)
        if match:
            return point(match)
    return config, None


def load_documents(out_dir) -> dict:
    """``{method: results.json content}`` for the methods evaluated into ``out_dir``, in the canonical order."""
    out_dir = Path(out_dir)
    found = {}
    for method in METHODS:
        path = out_dir / method / "results.json"
        if path.is_file():
            found[method] = json.loads(path.read_text())
    return found


def markdown_table(documents: dict, configs: list[str]) -> str:
    methods = list(documents)
    head = "| config | " + " | ".join(f"{m} {label}" for m in methods for _, label in METRICS) + " |"
    lines = [head, "|" + "---|" * (1 + len(methods) * len(METRICS))]
    for config in configs:
        cells = []
        for method in methods:
            values = documents[method]["results"].get(config)
            cells += [f"{values[key]:.3f}" if values else "–" for key, _ in METRICS]
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def grouped_configs(documents: dict) -> dict[str, list[str]]:
    configs = list(dict.fromkeys(c for d in documents.values() for c in d["results"]))
    groups = {}
    for key, (families, _, _) in GROUPS.items():
        members = [c for c in configs if shift_point(c)[0] in families]
        if members:
            ordered = sorted(members, key=lambda c: (families.index(shift_point(c)[0]), shift_point(c)[1]))
            groups[key] = [c for c in configs if shift_point(c)[1] is None] + ordered
    rest = [c for c in configs if not any(c in g for g in groups.values())]
    if rest:
        groups["other"] = rest
    return groups


def render_markdown(documents: dict) -> str:
    if not documents:
        return "# Evaluation results\n\nNo results yet.\n"
    first = next(iter(documents.values()))["config"]
    lines = [
        "# Evaluation results",
        "",
        f"Model: {first.get('model')}; dataset {first.get('dataset')} ({first.get('dataset_revision')}), split "
        f"`{first.get('split')}`, max instances per config: {first.get('max_instances')} "
        f"(sample seed {first.get('sample_seed')}); dialshift {first.get('dialshift_version')}.",
        "Acc = R@1/10; Brier = multiclass Brier score over the 10 candidates; ECE = top-label, "
        f"{first.get('ece_bins')} equal-width bins.",
        "",
    ]
    for method, document in documents.items():
        config = document["config"]
        extra = f", T = {config['temperature']:.3f}" if "temperature" in config else ""
        lines.append(f"- **{method}**: seeds {config.get('seeds')}{extra}")
    for key, configs in grouped_configs(documents).items():
        title = GROUPS[key][2] if key in GROUPS else "Other configs"
        lines += ["", f"## {title}", "", markdown_table(documents, configs)]
    return "\n".join(lines) + "\n"


def write_report(out_dir, plots: bool = True, progress: bool = True) -> None:
    from dialshift.models.ranker import write_json_atomic  # noqa: F401  (same atomic-write convention)

    out_dir = Path(out_dir)
    documents = load_documents(out_dir)
    tmp = out_dir / "results.md.tmp"
    tmp.write_text(render_markdown(documents))
    tmp.replace(out_dir / "results.md")
    if plots and documents:
        write_plots(out_dir, documents)


FAMILY_LABELS = {"uw": "UW", "kw": "KW", "ic": "IC", "sr": "SR", "uw_imp": "UW-imp"}


def point_label(group: str, x: float) -> str:
    return {"uw_imp": f"{x:g}", "ic_sr": f"{round(x * 6)}/6"}.get(group, f"{x:.2f}")


def write_plots(out_dir: Path, documents: dict) -> list[Path]:
    """``plots/shift_<group>.png``: accuracy, Brier and ECE against shift intensity, one line per (method, family),
    with the unshifted ``source`` result as the first point when it was evaluated."""
    from dialshift.plots import save_figure, shift_curves

    written = []
    for key, configs in grouped_configs(documents).items():
        if key not in GROUPS:
            continue
        families, xlabel, title = GROUPS[key]
        points = {shift_point(c) for c in configs if shift_point(c)[1] is not None}
        xs = sorted({x for _, x in points})
        has_source = "source" in configs
        labels = (["test"] if has_source else []) + [point_label(key, x) for x in xs]
        by_point = {shift_point(c): c for c in configs}
        lines = {}
        for method, document in documents.items():
            results = document["results"]
            for family in families:
                if not any(f == family for f, _ in points):
                    continue
                series = [results.get("source")] if has_source else []
                series += [results.get(by_point.get((family, x))) for x in xs]
                name = f"{method} ({FAMILY_LABELS[family]})" if len(families) > 1 else method
                lines[name] = [values or {} for values in series]
        figure = shift_curves(lines, labels, title=title, xlabel=xlabel)
        written.append(save_figure(figure, out_dir / "plots" / f"shift_{key}.png"))
        import matplotlib.pyplot as plt

        plt.close(figure)
    return written


def reliability_configs(configs) -> list[str]:
    """``source`` and the most shifted config of each family: the configs drawn as reliability diagrams."""
    chosen = [c for c in configs if c == "source"]
    strongest = {}
    for config in configs:
        family, x = shift_point(config)
        if x is not None and (family not in strongest or x > shift_point(strongest[family])[1]):
            strongest[family] = config
    return chosen + [strongest[f] for f in FAMILY_LABELS if f in strongest]


def write_reliability(out_dir: Path, method: str, probabilities: dict, labels: dict, n_bins: int) -> Path:
    """``plots/reliability_<method>.png``: one reliability diagram per config in ``probabilities``."""
    import matplotlib.pyplot as plt

    from dialshift.plots import reliability_diagram, save_figure

    names = list(probabilities)
    figure, axes = plt.subplots(1, len(names), figsize=(4.0 * len(names), 4.0), squeeze=False,
                                constrained_layout=True)
    for ax, name in zip(axes.flat, names, strict=True):
        reliability_diagram(probabilities[name], labels[name], n_bins=n_bins, title=name, ax=ax)
    figure.suptitle(f"Reliability ({method})")
    path = save_figure(figure, out_dir / "plots" / f"reliability_{method}.png")
    plt.close(figure)
    return path
