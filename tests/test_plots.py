"""dialshift.plots and `dialshift plot`: figures from arrays, predictions JSONL, results.json and a Hub-style folder."""

import json

import matplotlib
import numpy as np
import pytest

from dialshift.cli import main
from dialshift.commands.plot import expand_configs, natural_key
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


def test_natural_order_of_configs():
    names = ["uw_0.50", "uw_0.05", "uw_0.10", "ic_10of6", "ic_2of6", "sr_6", "sr_1"]
    assert sorted(names, key=natural_key) == ["ic_2of6", "ic_10of6", "sr_1", "sr_6", "uw_0.05", "uw_0.10", "uw_0.50"]
    assert expand_configs(["source", "uw_*"], names + ["source"]) == ["source", "uw_0.05", "uw_0.10", "uw_0.50"]


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
    path.parent.mkdir(parents=True, exist_ok=True)
    results = {config: {"accuracy": a, "brier": b, "ece": c} for config, (a, b, c) in values.items()}
    path.write_text(json.dumps({"config": {"method": method, "model": "tiny"}, "results": results}))


def test_cli_curves(tmp_path, capsys):
    configs = [f"uw_{ratio:.2f}" for ratio in np.arange(0.05, 0.55, 0.05)]
    for method, offset in (("vanilla", 0.0), ("ensemble", 0.05)):
        values = {
            config: (0.9 - i * 0.04 + offset, 0.16 + i * 0.06, 0.03 + i * 0.02) for i, config in enumerate(configs)
        }
        values["source"] = (0.9, 0.16, 0.03)
        write_results(tmp_path / method / "results.json", method, values)
    out = tmp_path / "uw.png"
    files = [str(tmp_path / "vanilla" / "results.json"), str(tmp_path / "ensemble" / "results.json")]
    assert (
        main(
            [
                "plot",
                "curves",
                *files,
                "--configs",
                "uw_*",
                "--out",
                str(out),
                "--title",
                "UW",
                "--xlabel",
                "word replacement ratio",
            ]
        )
        == 0
    )
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert main(["plot", "curves", *files, "--configs", "kw_*", "--out", str(out)]) == 2
    assert "'kw_*' matches no config" in capsys.readouterr().err
    assert main(["plot", "curves", *files, "--configs", "uw_*", "--metrics", "auroc", "--out", str(out)]) == 2
    assert "metric 'auroc' is in none of the results" in capsys.readouterr().err
    assert main(["plot", "curves", files[0], files[0], "--configs", "uw_*", "--out", str(out)]) == 2
    assert "--names" in capsys.readouterr().err
