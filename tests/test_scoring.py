"""dialshift.scoring: every task against the metric core, chunked reading, paired bootstrap coverage, `dialshift score`
end to end on a synthetic folder holding one config of each task, and hostile predictions files."""

import json
import warnings

import numpy as np
import pytest

from dialshift.cli import main as cli
from dialshift.configs import Baseline, BenchmarkConfig, ShiftGroup
from dialshift.metrics import brier, das_ratio, ece, ood_detection, open_world_f1, recall_at_k
from dialshift.scoring import ScoringSettings, bootstrap, get_task, score_directory
from dialshift.scoring.pipeline import check_output_dir, score_files

GROUP = ShiftGroup("noise", "Noise", "noise", "Toy noise shift", "noise level")
CORPUS = Baseline("toyrank", "corpus", "the unshifted toy instances")
CONFIGS = [
    BenchmarkConfig("toyrank", "toy", "response_ranking", "unshifted ranking"),
    BenchmarkConfig("toyrank_n1", "toy", "response_ranking", "noisier", GROUP, 0.5, "1/2", baselines=(CORPUS,)),
    BenchmarkConfig("toyrank_n2", "toy", "response_ranking", "noisiest, half the instances", GROUP, 1.0, "2/2",
                    baselines=(CORPUS, Baseline("toyrank_n1", "control", "a milder noise"))),
    BenchmarkConfig("toyrank_other", "toy", "response_ranking", "other instances", baselines=(CORPUS,)),
    BenchmarkConfig("toypairs", "toypairs", "pairwise_selection"),
    BenchmarkConfig("toyintent", "toyintent", "open_world_intent", parameters={"oos_label": 4}),
    BenchmarkConfig("toydistract", "toydistract", "attention_distribution"),
]
N = 60


def ranking_rows(rng, n, k=5):
    labels = rng.integers(0, k, n)
    logits = np.round(rng.normal(size=(n, k)), 1)  # rounding makes ties
    logits[np.arange(n), labels] += 1.0
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return logits, probabilities, labels


def make_folder(path):
    """A Hub folder with typed configs of all four tasks (card metadata) and the predictions for each."""
    import datasets

    from dialshift.hub import write_hub_folder

    rng = np.random.default_rng(0)
    ids = [f"toy-{i:03d}" for i in range(N)]
    data, predictions = {}, {}
    logits, probabilities, labels = ranking_rows(rng, N)
    for name, noise in (("toyrank", 0.0), ("toyrank_n1", 1.0), ("toyrank_n2", 2.0)):
        keep = ids if noise < 2 else ids[: N // 2]  # the strongest shift has fewer instances: pairing by id
        noisy = logits[: len(keep)] + rng.normal(scale=noise, size=(len(keep), 5))
        p = np.exp(noisy) / np.exp(noisy).sum(axis=1, keepdims=True)
        data[name] = {"id": keep, "label": labels[: len(keep)].tolist()}
        predictions[name] = [{"id": i, "scores": s.tolist(), "probabilities": q.tolist()}
                             for i, s, q in zip(keep, noisy, p, strict=True)]
    other = [f"other-{i:03d}" for i in range(N // 3)]  # no id in common with toyrank: no paired difference
    data["toyrank_other"] = {"id": other, "label": labels[: len(other)].tolist()}
    predictions["toyrank_other"] = [{"id": i, "probabilities": row["probabilities"]}
                                    for i, row in zip(other, predictions["toyrank"], strict=False)]
    types = rng.choice(["negation", "swap", "none"], N).tolist()
    pair_labels = rng.integers(0, 2, N)
    data["toypairs"] = {"id": ids, "label": pair_labels.tolist(), "type": types}
    predictions["toypairs"] = [{"id": i, "scores": rng.normal(size=2).tolist()} for i in ids]
    gold = rng.integers(0, 5, N)
    predicted = np.where(rng.random(N) < 0.7, gold, rng.integers(0, 5, N))
    data["toyintent"] = {"id": ids, "label": gold.tolist()}
    predictions["toyintent"] = [{"id": i, "prediction": int(p), "score": float(s)}
                                for i, p, s in zip(ids, predicted, rng.random(N) + (gold != 4), strict=True)]
    masks = [[int(x) for x in rng.permutation([1] + [0] * int(rng.integers(1, 4)))] for _ in ids]
    data["toydistract"] = {"id": ids, "distractor_mask": masks}
    predictions["toydistract"] = [{"id": i, "attention_scores": (rng.random(len(m)) + 0.1).tolist()}
                                  for i, m in zip(ids, masks, strict=True)]
    dataset = {name: datasets.DatasetDict({"test": datasets.Dataset.from_dict(columns)})
               for name, columns in data.items()}
    folder = write_hub_folder(path / "dataset", dataset, [], progress=False,
                              metadata={c.name: {"config": c.to_dict(), "facts": {}} for c in CONFIGS})
    pred_dir = path / "predictions"
    pred_dir.mkdir()
    for name, rows in predictions.items():
        (pred_dir / f"{name}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder, pred_dir, predictions, data


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return make_folder(tmp_path_factory.mktemp("scoring"))


@pytest.fixture(scope="module")
def document(toy):
    folder, pred_dir, _, _ = toy
    return score_directory(pred_dir, ScoringSettings(folder, replicates=200))


# ----------------------------------------------------------------------------------------------- tasks vs the core


def stats_of(task_name, table_rows, gold_columns, options):
    import pyarrow as pa

    task = get_task(task_name)
    table = pa.Table.from_pylist(table_rows, schema=task.schema())
    gold = {}
    for name, values in gold_columns.items():
        array = pa.array(values)
        gold[name] = array.dictionary_encode() if pa.types.is_string(array.type) else array
    return task, task.instance_stats(table, gold, options)


def test_response_ranking_equals_the_metric_core():
    rng = np.random.default_rng(1)
    logits, probabilities, labels = ranking_rows(rng, 500, k=10)
    rows = [{"id": str(i), "scores": s.tolist(), "probabilities": p.tolist()}
            for i, (s, p) in enumerate(zip(logits, probabilities, strict=True))]
    options = {"ece_bins": 15, "ks": (1, 2, 5)}
    task, stats = stats_of("response_ranking", rows, {"label": labels.tolist()}, options)
    result = task.metrics(stats, options)
    expected = recall_at_k(logits, labels, k=[1, 2, 5])
    for key in ("recall@1", "recall@2", "recall@5", "mrr"):
        assert result[key] == pytest.approx(expected[key], abs=1e-12)
    assert result["brier"] == pytest.approx(brier(probabilities, labels)["brier"], abs=1e-12)
    core_ece = ece(probabilities, labels, n_bins=15)
    assert result["ece"] == pytest.approx(core_ece["ece"], abs=1e-12)
    bins = task.reliability(stats, options)
    assert bins["bin_counts"] == core_ece["bin_counts"]
    assert task.metrics(stats, options, np.ones(500, dtype=np.int64)) == pytest.approx(result, abs=1e-12)
    assert task.label("recall@1", options) == "R@1/10" and options["candidates"] == 10


def test_open_world_and_das_and_pairwise_equal_the_core(toy):
    _, _, predictions, data = toy
    options = {"oos_label": 4, "tpr_level": 0.95}
    task, stats = stats_of("open_world_intent", predictions["toyintent"], {"label": data["toyintent"]["label"]},
                           options)
    result = task.metrics(stats, options)
    predicted = [r["prediction"] for r in predictions["toyintent"]]
    core = open_world_f1(predicted, data["toyintent"]["label"], oos_label=4)
    detection = ood_detection([r["score"] for r in predictions["toyintent"]],
                              [int(g != 4) for g in data["toyintent"]["label"]])
    assert {k: result[k] for k in core} == pytest.approx(core)
    assert result["auroc"] == pytest.approx(detection["auroc"]) and result["fpr@95tpr"] == detection["fpr@95tpr"]
    assert task.metrics(stats, options, np.ones(N, dtype=np.int64)) == pytest.approx(result)

    options = {"includes_query": False}
    task, stats = stats_of("attention_distribution", predictions["toydistract"],
                           {"distractor_mask": data["toydistract"]["distractor_mask"]}, options)
    core = das_ratio([r["attention_scores"] for r in predictions["toydistract"]],
                     data["toydistract"]["distractor_mask"])
    result = task.metrics(stats, options)
    assert result["das_ratio"] == pytest.approx(core["das_ratio"], abs=1e-12)
    assert task.metrics(stats, options, np.ones(N, dtype=np.int64)) == pytest.approx(result, abs=1e-12)

    options = {}
    task, stats = stats_of("pairwise_selection", predictions["toypairs"],
                           {"label": data["toypairs"]["label"], "type": data["toypairs"]["type"]}, options)
    result = task.metrics(stats, options)
    scores = np.array([r["scores"] for r in predictions["toypairs"]])
    hits = scores.argmax(1) == np.array(data["toypairs"]["label"])
    assert result["accuracy"] == pytest.approx(hits.mean())
    kinds = np.array(data["toypairs"]["type"])
    for kind in ("negation", "swap", "none"):
        assert result[f"accuracy/{kind}"] == pytest.approx(hits[kinds == kind].mean())


# ----------------------------------------------------------------------------------------------- bootstrap


def test_bootstrap_intervals_cover_the_true_value():
    """Percentile intervals of a mean (known p = 0.7) and of a paired difference (known 0) cover ~95% of the time."""
    rng = np.random.default_rng(7)
    covered_mean = covered_difference = 0
    trials, n = 250, 120
    for trial in range(trials):
        keys = np.arange(n, dtype=np.uint64)
        a = (rng.random(n) < 0.7).astype(float)
        b = np.where(rng.random(n) < 0.5, a, (rng.random(n) < 0.7))  # correlated with a, same mean 0.7

        def statistic(values):
            return lambda w: {"mean": float(np.dot(w, values) / w.sum())}

        samples = {"a": bootstrap.Sample(keys, statistic(a)), "b": bootstrap.Sample(keys, statistic(b))}
        draws = bootstrap.paired_replicates(samples, replicates=200, seed=trial)
        low, high = bootstrap.intervals(draws)["a"]["mean"]
        covered_mean += low <= 0.7 <= high
        points = {"a": {"mean": a.mean()}, "b": {"mean": b.mean()}}
        low, high = bootstrap.paired_differences(points, draws, {"b": ("b", "a")})["b"]["mean"]["interval"]
        covered_difference += low <= 0.0 <= high
    assert 0.89 <= covered_mean / trials <= 0.99
    assert 0.89 <= covered_difference / trials <= 0.99


def test_bootstrap_is_seeded_and_paired():
    keys = np.arange(50, dtype=np.uint64)
    values = np.linspace(0, 1, 50)
    sample = bootstrap.Sample(keys, lambda w: {"m": float(np.dot(w, values) / w.sum())})
    first = bootstrap.paired_replicates({"a": sample, "b": sample}, 30, seed=3)
    again = bootstrap.paired_replicates({"a": sample, "b": sample}, 30, seed=3)
    assert np.array_equal(first["a"]["m"], again["a"]["m"])
    assert np.array_equal(first["a"]["m"], first["b"]["m"])  # same ids -> the same resample in every config


# ----------------------------------------------------------------------------------------------- end to end


def test_bootstrap_draws_do_not_depend_on_the_other_configs():
    """A config's replicates are a function of (seed, replicate, id) only: the same alone, beside other configs and
    in another order; configs holding an id count it alike, so a difference on shared ids stays paired."""
    values = np.linspace(0.0, 1.0, 260)

    def sample(keys):
        return bootstrap.Sample(keys, lambda w: {"m": w @ values[keys.astype(np.int64)] / w.sum(axis=-1)}, True)

    a, b = np.arange(0, 80, dtype=np.uint64), np.arange(40, 120, dtype=np.uint64)
    alone = bootstrap.paired_replicates({"a": sample(a)}, 150, seed=5)["a"]["m"]
    together = bootstrap.paired_replicates({"b": sample(b), "a": sample(a),
                                            "c": sample(np.arange(200, 260, dtype=np.uint64))}, 150, seed=5)
    assert np.array_equal(together["a"]["m"], alone)
    weights = bootstrap.replicate_weights(a, range(150), seed=5)
    assert np.array_equal(bootstrap.replicate_weights(a[::-1], range(150), seed=5), weights[:, ::-1])
    assert np.array_equal(bootstrap.replicate_weights(a, range(100, 150), seed=5), weights[100:])
    assert not np.array_equal(bootstrap.paired_replicates({"a": sample(a)}, 150, seed=6)["a"]["m"], alone)
    shared = np.arange(40, 80, dtype=np.uint64)  # a and b restricted to their shared ids: the same statistic
    paired = bootstrap.paired_replicates({"a@b": sample(shared), "b": sample(b), "b@a": sample(shared)}, 150)
    assert np.all(paired["a@b"]["m"] - paired["b@a"]["m"] == 0.0) and np.ptp(paired["a@b"]["m"]) > 0
    weights = bootstrap.replicate_weights(np.arange(1000, dtype=np.uint64), range(200), seed=0)
    assert abs(weights.mean() - 1.0) < 0.01 and abs(weights.var() - 1.0) < 0.02  # Poisson(1) counts
    assert abs(np.mean(weights == 0) - np.exp(-1)) < 0.005


def test_a_config_scored_alone_gets_the_intervals_it_gets_in_a_full_submission(toy, document):
    folder, pred_dir, _, _ = toy
    alone = score_files({"toyrank_n2": pred_dir / "toyrank_n2.jsonl"}, ScoringSettings(folder, replicates=200))
    assert json.dumps(alone["intervals"]["toyrank_n2"]) == json.dumps(document["intervals"]["toyrank_n2"])
    assert alone["results"]["toyrank_n2"] == document["results"]["toyrank_n2"]


def test_score_document(document):
    assert set(document["results"]) == {c.name for c in CONFIGS}
    assert document["configs"]["toyrank_n1"]["group"]["figure"] == "noise"
    assert document["results"]["toyrank_n2"]["instances"] == N // 2
    assert set(document["results"]["toyintent"]) >= {"f1_all", "f1_in", "f1_out", "accuracy", "auroc", "fpr@95tpr"}
    assert "das_ratio" in document["results"]["toydistract"] and "accuracy/swap" in document["results"]["toypairs"]
    for config, metrics in document["intervals"].items():
        for metric, interval in metrics.items():
            assert interval is None or interval[0] <= interval[1], (config, metric)
    assert document["intervals"]["toyrank"]["recall@1"] is not None
    difference = document["differences"]["toyrank_n2"]["toyrank"]
    assert difference["kind"] == "corpus" and difference["metrics"]["recall@1"]["interval"]
    assert set(document["differences"]) == {"toyrank_n1", "toyrank_n2", "toyrank_other"}
    assert document["options"]["toyrank"]["ece_bins"] == 15 and "toyrank" in document["reliability"]


def test_paired_differences_are_on_the_shared_ids_only(toy, document):
    folder, pred_dir, predictions, data = toy
    entry = document["differences"]["toyrank_n2"]
    assert entry["toyrank"]["shared"] == N // 2 and entry["toyrank_n1"]["shared"] == N // 2
    # the point difference is toyrank_n2 minus toyrank on toyrank_n2's ids, not minus all of toyrank
    task = get_task("response_ranking")
    options = {"ece_bins": 15, "ks": (1, 2, 5)}
    rows = predictions["toyrank"][: N // 2]
    _, stats = stats_of("response_ranking", rows, {"label": data["toyrank"]["label"][: N // 2]}, options)
    base_on_shared = task.metrics(stats, options)
    for metric in ("recall@1", "brier", "ece", "mrr"):
        expected = document["results"]["toyrank_n2"][metric] - base_on_shared[metric]
        assert entry["toyrank"]["metrics"][metric]["value"] == pytest.approx(expected, abs=1e-12), metric
        low, high = entry["toyrank"]["metrics"][metric]["interval"]
        assert low <= expected <= high or metric == "ece"
    assert document["results"]["toyrank"]["recall@1"] != pytest.approx(base_on_shared["recall@1"])
    # no id in common: the comparison is listed with 0 shared ids and no difference
    assert document["differences"]["toyrank_other"]["toyrank"] == {
        "kind": "corpus", "reason": "the unshifted toy instances", "shared": 0, "metrics": {}}
    assert "toyrank" not in document["differences"] and "toypairs" not in document["differences"]


def test_chunked_reading_gives_the_same_document(toy, document):
    folder, pred_dir, _, _ = toy
    chunked = score_directory(pred_dir, ScoringSettings(folder, replicates=200, block_bytes=300))
    assert json.dumps(chunked, sort_keys=True) == json.dumps(document, sort_keys=True)


def test_score_cli_writes_results_and_plots_from_typed_configs(toy, tmp_path, capsys):
    folder, pred_dir, _, _ = toy
    out = tmp_path / "results"
    assert cli(["score", str(pred_dir), "--dataset", str(folder), "--out", str(out), "--bootstrap", "50",
                "--no-progress"]) == 0
    written = json.loads((out / "results.json").read_text())
    assert written["scoring"]["replicates"] == 50
    summary = (out / "results.md").read_text()
    assert "## Toy noise shift" in summary and "R@1/5" in summary
    assert "| toyrank_n2 | toyrank_n1 (control) | 30 |" in summary
    assert "| toyrank_n2 | toyrank (corpus) | 30 |" in summary
    assert "- `toyrank_other` vs `toyrank` (corpus): no instance id in common, no difference" in summary
    assert "| toyrank_other | toyrank" not in summary
    assert "15 equal-width" in summary
    assert {p.name for p in (out / "plots").iterdir()} >= {"shift_noise.png", "difference_noise.png",
                                                           "reliability_predictions.png"}
    curves = tmp_path / "curves.png"
    assert cli(["plot", "curves", str(out / "results.json"), "--out", str(curves)]) == 0
    assert curves.read_bytes().startswith(b"\x89PNG")


def test_score_options_override(toy):
    folder, pred_dir, _, _ = toy
    document = score_directory(pred_dir, ScoringSettings(folder, replicates=10, options={"ece_bins": 10}),
                               given={"options"})
    assert document["options"]["toyrank"]["ece_bins"] == 10


# ----------------------------------------------------------------------------------------------- hostile inputs


def rewrite(pred_dir, tmp_path, name, text):
    target = tmp_path / "predictions"
    target.mkdir(exist_ok=True)
    (target / f"{name}.jsonl").write_text(text)
    return target


@pytest.mark.parametrize("case", ["deep", "long-id", "missing", "twice", "bad-row", "not-object", "bad-type",
                                  "empty"])
def test_hostile_predictions_give_one_line(toy, tmp_path, capsys, case):
    folder, pred_dir, predictions, _ = toy
    rows = [json.dumps(row) for row in predictions["toyrank"]]
    if case == "deep":
        rows[3] = "[" * 1_000_000
    elif case == "long-id":
        rows[2] = json.dumps({**predictions["toyrank"][2], "id": "x" * 1_000_000})
    elif case == "missing":
        rows = rows[:-1]
    elif case == "twice":
        rows[5] = rows[4]
    elif case == "bad-row":
        rows[7] = json.dumps({**predictions["toyrank"][7], "probabilities": [0.9, 0.3, 0.0, 0.0, 0.0]})
    elif case == "not-object":
        rows[1] = "[1, 2]"
    elif case == "bad-type":
        rows[6] = json.dumps({**predictions["toyrank"][6], "probabilities": "high"})
    else:
        rows = [""]
    target = rewrite(pred_dir, tmp_path, "toyrank", "\n".join(rows) + "\n")
    code = cli(["score", str(target), "--dataset", str(folder), "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("dialshift score: error:") and "\n" not in err and len(err) < 600, err
    expected = {"deep": ":4: JSON nested too deeply", "long-id": ":3: id 'xxxx", "missing": "1 of the 60 ids",
                "twice": ":6: id 'toy-004' is predicted twice", "bad-row": ":8: predictions[7] sums to 1.2",
                "not-object": ":2: expected a JSON object", "bad-type": ":7: field 'probabilities' must be a list",
                "empty": "no records"}[case]
    assert expected in err


def test_unknown_config_file_and_output_checks(toy, tmp_path, capsys, monkeypatch):
    folder, pred_dir, predictions, _ = toy
    target = rewrite(pred_dir, tmp_path, "nosuch", json.dumps(predictions["toyrank"][0]) + "\n")
    assert cli(["score", str(target), "--dataset", str(folder), "--out", str(tmp_path / "o")]) == 2
    assert "has no config 'nosuch'" in capsys.readouterr().err
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    assert cli(["score", str(pred_dir), "--dataset", str(folder), "--out", str(afile)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    from dialshift.errors import DialshiftError

    with pytest.raises(DialshiftError, match="is a file, so the folder cannot be created"):
        check_output_dir(afile / "sub")
    monkeypatch.setattr("os.access", lambda *args: False)
    with pytest.raises(DialshiftError, match="is not writable"):
        check_output_dir(tmp_path / "new")


def test_replicates_warn_nothing(toy):
    """The bootstrap no longer silences warnings, so a task warning (or a numpy division warning) in any replicate of
    any task fails this test."""
    folder, pred_dir, _, _ = toy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        score_directory(pred_dir, ScoringSettings(folder, replicates=20))


def test_bootstrap_replicates_are_the_core_on_the_resampled_copies():
    """Every replicate the batched ranking task returns equals the core's public functions on the explicitly
    resampled copy (each instance repeated as often as it was drawn)."""
    rng = np.random.default_rng(3)
    n = 200
    logits, probabilities, labels = ranking_rows(rng, n, k=10)
    rows = [{"id": str(i), "scores": s.tolist(), "probabilities": p.tolist()}
            for i, (s, p) in enumerate(zip(logits, probabilities, strict=True))]
    options = {"ece_bins": 15, "ks": (1, 2, 5)}
    task, stats = stats_of("response_ranking", rows, {"label": labels.tolist()}, options)
    seen = []

    def statistic(weights):
        seen.append(np.array(weights))
        return task.metrics(stats, options, weights)

    draws = bootstrap.paired_replicates({"a": bootstrap.Sample(np.arange(n, dtype=np.uint64), statistic, True)},
                                        150, seed=7)["a"]
    counts = np.concatenate(seen)
    assert counts.shape == (150, n)
    for r in range(0, 150, 7):
        copy = np.repeat(np.arange(n), counts[r].astype(np.int64))
        expected = {**recall_at_k(logits[copy], labels[copy], k=[1, 2, 5]),
                    "brier": brier(probabilities[copy], labels[copy])["brier"],
                    "ece": ece(probabilities[copy], labels[copy], n_bins=15)["ece"]}
        for metric, value in expected.items():
            assert draws[metric][r] == pytest.approx(value, abs=1e-12), (r, metric)


def test_open_world_replicates_follow_the_point_estimates_known_class_rule():
    """A class drawn in no example of a replicate is dropped from F1_In, as the point estimate drops a class absent
    from the data; it does not score 0."""
    options = {"oos_label": 3, "num_labels": 4, "tpr_level": 0.95}
    table_rows = [{"id": str(i), "prediction": p, "score": s}
                  for i, (p, s) in enumerate(zip([0, 0, 1, 1, 2, 3, 3], [0.9, 0.8, 0.7, 0.9, 0.6, 0.1, 0.2],
                                                 strict=True))]
    task, stats = stats_of("open_world_intent", table_rows, {"label": [0, 0, 1, 1, 2, 3, 0]}, options)
    weights = np.array([1, 1, 2, 0, 0, 1, 1])  # class 2 (its one example) is not drawn
    copy = np.repeat(np.arange(7), weights)
    expected = open_world_f1(np.array([0, 0, 1, 1, 2, 3, 3])[copy], np.array([0, 0, 1, 1, 2, 3, 0])[copy],
                             oos_label=3)
    result = task.metrics(stats, options, weights)
    assert {key: result[key] for key in expected} == pytest.approx(expected, abs=1e-12)
    assert result["f1_in"] == pytest.approx((0.8 + 1.0) / 2)  # classes 0 and 1 only


def test_ece_bins_beyond_int16_in_the_scoring_path():
    """More bins than an int16 holds: the task's bins, ECE and reliability diagram agree with the core."""
    rng = np.random.default_rng(5)
    _, probabilities, labels = ranking_rows(rng, 300, k=4)
    rows = [{"id": str(i), "probabilities": p.tolist()} for i, p in enumerate(probabilities)]
    options = {"ece_bins": 40000, "ks": (1,)}
    task, stats = stats_of("response_ranking", rows, {"label": labels.tolist()}, options)
    core = ece(probabilities, labels, n_bins=40000)
    assert task.metrics(stats, options)["ece"] == pytest.approx(core["ece"], abs=1e-12)
    assert task.reliability(stats, options)["bin_counts"] == core["bin_counts"]
    replicate = task.metrics(stats, options, np.ones((2, 300)))
    assert replicate["ece"] == pytest.approx([core["ece"]] * 2, abs=1e-12)


def test_open_world_predictions_outside_the_label_range_are_refused():
    import pyarrow as pa

    from dialshift.scoring.tasks import get_task

    task = get_task("open_world_intent")
    table = pa.table({"prediction": [0, 99], "score": [0.5, 0.2]})
    gold = {"label": pa.array([0, 2])}
    with pytest.raises(ValueError, match=r"prediction\[1\] = 99 is not a label id of this config \(0 .. 2\)"):
        task.instance_stats(table, gold, {"oos_label": 2, "num_labels": 3, "tpr_level": 0.95})


def test_pairwise_selection_reports_ece_when_probabilities_are_given():
    import pyarrow as pa

    from dialshift.metrics import ece
    from dialshift.scoring.tasks import get_task

    task = get_task("pairwise_selection")
    probabilities = [[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]]
    labels = [0, 0, 1, 1]
    table = pa.table({"probabilities": probabilities, "scores": probabilities})
    gold = {"label": pa.array(labels), "type": pa.array(["a", "b", "a", "b"]).dictionary_encode()}
    options = {"ece_bins": 15}
    stats = task.instance_stats(table, gold, options)
    result = task.metrics(stats, options)
    assert result["accuracy"] == 0.5 and "ece" in task.headline(options)
    assert result["ece"] == pytest.approx(ece(np.array(probabilities), np.array(labels), n_bins=15)["ece"], abs=1e-12)
    assert task.reliability(stats, options)["bin_counts"][13] == 1


# ----------------------------------------------------------------------------------------------- task plug-ins


def test_pyproject_advertises_every_built_in_task_under_its_name():
    import inspect
    from pathlib import Path

    from dialshift import registry
    from dialshift.scoring import tasks as module

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    advertised = project["project"]["entry-points"]["dialshift.tasks"]
    built_in = [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                if issubclass(cls, module.ScoringTask) and cls is not module.ScoringTask]
    assert advertised == {task.name: f"{task.__module__}:{task.__name__}" for task in built_in}
    assert set(module.installed_tasks()) >= set(advertised) and set(registry.task_names()) >= set(advertised)


def test_a_task_plug_in_must_be_named_after_its_entry_point(monkeypatch):
    from importlib.metadata import EntryPoint

    from dialshift import registry
    from dialshift.errors import DialshiftError
    from dialshift.scoring import tasks as module

    wrong = EntryPoint("ranking", "dialshift.scoring.tasks:ResponseRanking", "dialshift.tasks")
    monkeypatch.setattr(registry, "entry_points", lambda group: [wrong])
    module.reset_tasks()
    try:
        with pytest.raises(DialshiftError, match="is named 'response_ranking'; name its entry point after the task"):
            module.installed_tasks()
    finally:
        monkeypatch.undo()
        module.reset_tasks()


def test_metric_directions_come_from_the_tasks():
    assert get_task("attention_distribution").info("das_ratio_of_means").higher_is_better is False
    assert get_task("attention_distribution").info("perplexity").higher_is_better is False
    assert get_task("attention_distribution").info("mean_as_history").higher_is_better is None
    assert get_task("open_world_intent").info("fpr@90tpr").label == "FPR@90TPR"
    assert get_task("response_ranking").label("recall@2", {"candidates": 10}) == "R@2/10"
    assert get_task("pairwise_selection").info("accuracy/tense").label == "Acc tense"
    assert get_task("response_ranking").info("unknown").higher_is_better is None


def test_difference_curves_draw_one_line_per_declared_baseline(document):
    from dialshift.scoring.report import difference_points, typed_configs

    configs = typed_configs({"m": document})
    lines, bands, x_labels = difference_points({"m": document}, configs, ["toyrank_n1", "toyrank_n2"])
    assert x_labels == ["1/2", "2/2"] and set(lines) == {"Noise − toyrank", "Noise − toyrank_n1"}
    corpus = document["differences"]["toyrank_n2"]["toyrank"]["metrics"]["recall@1"]
    assert lines["Noise − toyrank"][1]["recall@1"] == corpus["value"]
    assert bands["Noise − toyrank"][1]["recall@1"] == corpus["interval"]
    assert lines["Noise − toyrank_n1"][0] == {}  # toyrank_n1 declares no control: a gap
