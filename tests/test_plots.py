"""dialshift.plots and `dialshift plot`: figures from arrays, predictions JSONL, results.json and a Hub-style folder."""

import json

import matplotlib
import numpy as np
import pytest

from dialshift.cli import main
from dialshift.plots import reliability_diagram, save_figure, shift_curves

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def ranking_predictions(n=200, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, 10)) * 2
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = rng.integers(0, 10, n)
    return probabilities, labels


def test_reliability_diagram_draws_bins_and_histogram(tmp_path):
    probabilities, labels = ranking_predictions()
    figure = reliability_diagram(probabilities, labels, n_bins=10, title="toy")
    diagram, histogram = figure.axes
    assert diagram.get_title() == "toy"
    assert "ECE" in diagram.get_legend().get_title().get_text()
    assert len(histogram.patches) == 10  # one histogram bar per bin
    fractions = [patch.get_height() for patch in histogram.patches]
    assert sum(fractions) == pytest.approx(1.0)
    path = save_figure(figure, tmp_path / "sub" / "reliability.png")
    assert path.read_bytes().startswith(PNG_MAGIC)
    assert not list(path.parent.glob(".*tmp"))  # no temporary file left behind
    plt.close(figure)


def test_reliability_diagram_on_given_axes():
    probabilities, labels = ranking_predictions()
    figure, axes = plt.subplots(1, 2)
    assert reliability_diagram(probabilities, labels, ax=axes[0]) is figure
    assert len(figure.axes) == 3  # the twin histogram axis was added
    with pytest.raises(ValueError, match=r"predictions\[0\] sums to"):
        reliability_diagram([[0.5, 0.6]], [0], ax=axes[1])
    plt.close(figure)


def test_shift_curves_one_line_per_method_and_gaps():
    results = {
        "vanilla": [{"accuracy": 0.9, "brier": 0.2, "ece": 0.05}, {"accuracy": 0.8, "brier": 0.3, "ece": 0.08}],
        "ensemble": [{"accuracy": 0.92, "brier": 0.15}, {"accuracy": 0.85, "brier": 0.25}],
    }
    figure = shift_curves(results, ["0.05", "0.10"], title="UW")
    accuracy, _, ece_panel = figure.axes[:3]
    assert [line.get_label() for line in accuracy.get_lines()] == ["vanilla", "ensemble"]
    assert np.isnan(ece_panel.get_lines()[1].get_ydata()).all()
    assert [tick.get_text() for tick in accuracy.get_xticklabels()] == ["0.05", "0.10"]
    plt.close(figure)
    with pytest.raises(ValueError, match="has 2 points but x_labels has 3"):
        shift_curves(results, ["a", "b", "c"])


def write_predictions(path, probabilities, labels=None):
    with path.open("w") as handle:
        for index, row in enumerate(probabilities):
            record = {"id": f"dd-{index}", "scores": list(np.log(row)), "probabilities": list(row), "uncertainty": 0.0}
            if labels is not None:
                record["label"] = int(labels[index])
            handle.write(json.dumps(record) + "\n")


def test_cli_reliability_with_labels_in_the_file(tmp_path, capsys):
    probabilities, labels = ranking_predictions()
    predictions = tmp_path / "vanilla" / "predictions" / "uw_0.30.jsonl"
    predictions.parent.mkdir(parents=True)
    write_predictions(predictions, probabilities, labels)
    out = tmp_path / "plots" / "reliability.png"
    assert main(["plot", "reliability", str(predictions), "--out", str(out), "--pdf", "--n-bins", "10"]) == 0
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert out.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
    assert "wrote" in capsys.readouterr().out


def test_cli_reliability_joins_gold_labels_from_a_dataset_folder(tmp_path):
    import datasets

    probabilities, labels = ranking_predictions(50)
    folder = tmp_path / "dialshift"
    (folder / "uw_0.30").mkdir(parents=True)
    datasets.Dataset.from_dict({"id": [f"dd-{i}" for i in range(50)][::-1], "label": labels.tolist()[::-1]}).to_parquet(
        folder / "uw_0.30" / "test.parquet"
    )
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: uw_0.30\n  data_files:\n  - split: test\n    path: uw_0.30/test.parquet\n---\n"
    )
    predictions = tmp_path / "uw_0.30.jsonl"
    write_predictions(predictions, probabilities)
    out = tmp_path / "joined.png"
    assert main(["plot", "reliability", str(predictions), "--dataset", str(folder), "--out", str(out)]) == 0
    assert out.read_bytes().startswith(PNG_MAGIC)


def test_cli_reliability_bad_input(tmp_path, capsys):
    probabilities, _ = ranking_predictions(5)
    predictions = tmp_path / "p.jsonl"
    write_predictions(predictions, probabilities)
    assert main(["plot", "reliability", str(predictions), "--out", str(tmp_path / "x.png")]) == 2
    assert "p.jsonl:1: no 'label' field; pass --dataset" in capsys.readouterr().err
    predictions.write_text('{"id": "a", "probabilities": [0.5, 0.5], "label": 0}\n{"id": "b", "probabilities": [0.9')
    assert main(["plot", "reliability", str(predictions), "--out", str(tmp_path / "x.png")]) == 2
    assert "p.jsonl:2: not valid JSON" in capsys.readouterr().err
    predictions.write_text(
        '{"id": "a", "probabilities": [0.5, 0.5], "label": 0}\n{"id": "b", "probabilities": [0.9, 0.3], "label": 1}\n'
    )
    assert main(["plot", "reliability", str(predictions), "--out", str(tmp_path / "x.png")]) == 2
    assert "predictions[1] sums to 1.2" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def write_results(path, method, values):
    """A results.json as `dialshift score` writes it: typed configs (the x axis) and metrics per config."""
    from dialshift.configs import BenchmarkConfig, ShiftGroup

    group = ShiftGroup("uw", "UW", "uw_kw", "UW / KW", "word replacement ratio")
    configs = {"dailydialog": BenchmarkConfig("dailydialog", "dailydialog", "response_ranking").to_dict()}
    for config in values:
        if config != "dailydialog":
            ratio = float(config.split("_")[1])
            configs[config] = BenchmarkConfig(config, "dailydialog", "response_ranking", "", group, ratio,
                                              f"{ratio:.2f}").to_dict()
    path.parent.mkdir(parents=True, exist_ok=True)
    results = {config: {"recall@1": a, "brier": b, "ece": c} for config, (a, b, c) in values.items()}
    intervals = {config: {"recall@1": [a - 0.02, a + 0.02]} for config, (a, _, _) in values.items()}
    options = {config: {"ece_bins": 15, "ks": [1], "candidates": 10} for config in values}
    path.write_text(json.dumps({"run": {"method": method, "model": "tiny"}, "configs": configs, "results": results,
                                "intervals": intervals, "options": options}))


def test_cli_curves(tmp_path, capsys):
    configs = [f"uw_{ratio:.2f}" for ratio in np.arange(0.05, 0.55, 0.05)]
    for method, offset in (("vanilla", 0.0), ("ensemble", 0.05)):
        values = {
            config: (0.9 - i * 0.04 + offset, 0.16 + i * 0.06, 0.03 + i * 0.02) for i, config in enumerate(configs)
        }
        values["dailydialog"] = (0.9, 0.16, 0.03)
        write_results(tmp_path / method / "results.json", method, values)
    out = tmp_path / "uw.png"
    files = [str(tmp_path / "vanilla" / "results.json"), str(tmp_path / "ensemble" / "results.json")]
    assert main(["plot", "curves", *files, "--configs", "dailydialog", "uw_*", "--out", str(out), "--title", "UW"]) == 0
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert main(["plot", "curves", *files, "--out", str(out)]) == 0  # every config, the x axis from the typed configs
    assert main(["plot", "curves", *files, "--configs", "kw_*", "--out", str(out)]) == 2
    assert "'kw_*' matches nothing" in capsys.readouterr().err
    assert main(["plot", "curves", *files, "--configs", "dailydialog", "--out", str(out)]) == 2
    assert "lies on a shift curve" in capsys.readouterr().err
    assert main(["plot", "curves", *files, "--configs", "uw_*", "--metrics", "auroc", "--out", str(out)]) == 2
    assert "metric 'auroc' is in none of the results" in capsys.readouterr().err
    assert main(["plot", "curves", files[0], files[0], "--configs", "uw_*", "--out", str(out)]) == 2
    assert "--names" in capsys.readouterr().err
    (tmp_path / "old.json").write_text(json.dumps({"config": {"method": "x"}, "results": {"uw_0.05": {}}}))
    assert main(["plot", "curves", str(tmp_path / "old.json"), "--out", str(out)]) == 2
    assert "no typed configs" in capsys.readouterr().err


def test_curve_points_follow_the_typed_intensity(tmp_path):
    from dialshift.scoring.report import curve_points, typed_configs

    values = {"dailydialog": (0.9, 0.1, 0.0), "uw_0.50": (0.5, 0.5, 0.1), "uw_0.05": (0.8, 0.2, 0.05)}
    write_results(tmp_path / "results.json", "vanilla", values)
    documents = {"vanilla": json.loads((tmp_path / "results.json").read_text())}
    configs = typed_configs(documents)
    lines, bands, labels = curve_points(documents, configs, ["uw_0.50", "uw_0.05"], "dailydialog")
    assert labels == ["dailydialog", "0.05", "0.50"]
    assert [point["recall@1"] for point in lines["vanilla"]] == [0.9, 0.8, 0.5]
    assert bands["vanilla"][2]["recall@1"] == [0.48, 0.52]


@pytest.mark.parametrize("case", ["deep", "long-id"])
def test_cli_reliability_hostile_lines(tmp_path, capsys, case):
    folder = tmp_path / "dataset"
    predictions = tmp_path / "p.jsonl"
    if case == "deep":
        predictions.write_text('{"id": "a", "probabilities": [0.5, 0.5], "label": 0}\n' + "[" * 1_000_000 + "\n")
        args = []
    else:
        import datasets

        (folder / "p").mkdir(parents=True)
        datasets.Dataset.from_dict({"id": ["a"], "label": [0]}).to_parquet(folder / "p" / "test.parquet")
        (folder / "README.md").write_text(
            "---\nconfigs:\n- config_name: p\n  data_files:\n  - split: test\n    path: p/test.parquet\n---\n"
        )
        predictions.write_text(json.dumps({"id": "y" * 1_000_000, "probabilities": [0.5, 0.5]}) + "\n")
        args = ["--dataset", str(folder)]
        capsys.readouterr()  # drop the progress output of to_parquet
    assert main(["plot", "reliability", str(predictions), *args, "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and len(err) < 400
    assert {"deep": "p.jsonl:2: JSON nested too deeply", "long-id": "p.jsonl:1: id 'yyyy"}[case] in err
