"""`dialshift evaluate` on open-world intent configs: a Hugging Face classifier's MSP, on a tiny covariate build.

The build is the covariate family's own (`dialshift build`, lite and cov_lite splits included) on the toy corpora of
tests/test_covariate.py (no raw data); the classifiers are tiny random BERT heads made here (no downloads). The
predictions are checked against a plain per-utterance forward and the project's own threshold rule, and the written
files score the same through `dialshift score`.
"""

import json
import shutil

import numpy as np
import pytest
import torch
from test_covariate import toy_sources

from dialshift.cli import main as cli
from dialshift.models.backbones import minilm_path, tiny_config
from tests.conftest import one_line_error

CONFIGS = ("hwu12_cov", "hwu12_cov_5shot")


@pytest.fixture(scope="module")
def covariate_build(tmp_path_factory):
    from dialshift_families.covariate.pipeline import Sources

    from dialshift.build import build

    root = tmp_path_factory.mktemp("cov")
    (root / "raw").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Sources, "load", classmethod(lambda cls, data_dir, corpora: toy_sources()))
        build(list(CONFIGS), data_dir=root / "raw", out=root / "hub", progress=False)
    return root / "hub"


def intents(dataset, config="hwu12_cov"):
    from dialshift.hub.reading import data_files
    from dialshift.ranking.open_world import config_labels

    names, oos = config_labels(dataset, config, data_files(dataset))
    return names[:oos]


def classifier_folder(path, num_labels: int, id2label: dict | None = None, permutation=None):
    """A tiny random BERT classifier with the MiniLM tokenizer; ``permutation`` reorders the head's rows (output
    ``j`` is the seed-0 model's output ``permutation[j]``)."""
    from transformers import AutoTokenizer, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(0)
    model = BertForSequenceClassification(tiny_config(len(tokenizer), num_labels=num_labels))
    if permutation is not None:
        with torch.no_grad():
            model.classifier.weight.copy_(model.classifier.weight[permutation])
            model.classifier.bias.copy_(model.classifier.bias[permutation])
    if id2label is not None:
        model.config.id2label = id2label
        model.config.label2id = {name: i for i, name in id2label.items()}
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def plain_msp(folder, texts):
    """``(argmax, max softmax)`` of each text by one unbatched forward (the tokenizer on the text alone)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.inference_mode():
        logits = np.stack([model(**tokenizer(text, return_tensors="pt")).logits[0].numpy() for text in texts])
    probabilities = torch.softmax(torch.from_numpy(logits), dim=1).numpy()
    return probabilities.argmax(axis=1), probabilities.max(axis=1)


def read_split(dataset, config, split):
    from dialshift.ranking.data import read_columns

    table = read_columns(dataset, config, split, ["id", "text", "label"])
    return {name: table.column(name).to_pylist() for name in ("id", "text", "label")}


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_head_order_by_name_by_position_or_a_one_line_error():
    from dialshift.errors import DialshiftError
    from dialshift.models.adapters.classifier import head_order

    names = ["alarm", "weather", "music"]
    columns, rule = head_order({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, names, "m")
    assert rule == "position" and columns.tolist() == [0, 1, 2]
    columns, rule = head_order({0: "music", 1: "alarm", 2: "weather"}, names, "m")
    assert rule == "name" and columns.tolist() == [1, 2, 0]  # the config's intent k is the head's output columns[k]
    with pytest.raises(DialshiftError, match=r"^m: the classification head has 2 labels, the config has 3 known "):
        head_order({0: "LABEL_0", 1: "LABEL_1"}, names, "m")
    with pytest.raises(DialshiftError, match="not in the head: 'weather'; not an intent: 'rain'"):
        head_order({0: "alarm", 1: "rain", 2: "music"}, names, "m")


def test_evaluate_scores_a_classifier_by_its_msp_on_test_and_cov_test(covariate_build, tmp_path):
    from dialshift.models.open_world import select_threshold

    dataset, known = covariate_build, intents(covariate_build)
    folder = classifier_folder(tmp_path / "clf", len(known))
    out = tmp_path / "out"
    assert cli(["evaluate", "--model-dir", str(folder), "--dataset", str(dataset), "--configs", *CONFIGS,
                "--bootstrap", "20", "--out", str(out), "--no-progress", "--no-plots"]) == 0

    # The threshold is the project's MSP rule on validation_hold, from a plain unbatched forward.
    oos = len(known)
    hold = read_split(dataset, "hwu12_cov", "validation_hold")
    classes, msp = plain_msp(folder, hold["text"])
    labels = np.array(hold["label"])
    threshold = select_threshold(msp, classes == labels, labels == oos)
    for split in ("test", "cov_test"):
        run = json.loads((out / "msp" / split / "predictions" / "run.json").read_text())
        assert run["run"]["thresholds"]["hwu12_cov"] == pytest.approx(threshold, abs=1e-6)
        assert run["run"]["adapter"]["labels"] == "position" and run["scoring"]["split"] == split
        rows = read_split(dataset, "hwu12_cov", split)
        classes, msp = plain_msp(folder, rows["text"])
        expected = {i: (int(c) if m >= threshold else oos, float(m))
                    for i, c, m in zip(rows["id"], classes, msp, strict=True)}
        got = {line["id"]: (line["prediction"], line["score"])
               for line in lines(out / "msp" / split / "predictions" / "hwu12_cov.jsonl")}
        assert got.keys() == expected.keys()
        assert all(got[i][0] == expected[i][0] and got[i][1] == pytest.approx(expected[i][1], abs=1e-5)
                   for i in got if abs(expected[i][1] - threshold) > 1e-5)
        results = json.loads((out / "msp" / split / "results.json").read_text())["results"]
        assert set(CONFIGS) <= set(results)
        assert {"f1_all", "f1_in", "f1_out", "accuracy", "auroc"} <= set(results["hwu12_cov"])

    # `dialshift score` on the written predictions gives the same results.
    assert cli(["score", str(out / "msp" / "cov_test" / "predictions"), "--dataset", str(dataset), "--bootstrap",
                "20", "--no-plots", "--no-progress", "--out", str(tmp_path / "rescored")]) == 0
    again = json.loads((tmp_path / "rescored" / "results.json").read_text())["results"]["hwu12_cov"]
    first = json.loads((out / "msp" / "cov_test" / "results.json").read_text())["results"]["hwu12_cov"]
    assert again["f1_all"] == first["f1_all"] and again["accuracy"] == first["accuracy"]
    assert "msp (test)" in (out / "results.md").read_text() and "msp (cov_test)" in (out / "results.md").read_text()


def test_a_head_naming_the_intents_is_mapped_by_name(covariate_build, tmp_path):
    dataset, known = covariate_build, intents(covariate_build)
    permutation = np.random.default_rng(0).permutation(len(known))
    plain = classifier_folder(tmp_path / "plain", len(known))
    named = classifier_folder(tmp_path / "named", len(known), {j: known[p] for j, p in enumerate(permutation)},
                              permutation=torch.as_tensor(permutation))
    outputs = {}
    for folder in (plain, named):
        out = tmp_path / f"out-{folder.name}"
        assert cli(["evaluate", "--model-dir", str(folder), "--dataset", str(dataset), "--configs", "hwu12_cov",
                    "--bootstrap", "5", "--out", str(out), "--no-progress", "--no-plots"]) == 0
        outputs[folder.name] = lines(out / "msp" / "test" / "predictions" / "hwu12_cov.jsonl")
    assert [line["prediction"] for line in outputs["named"]] == [line["prediction"] for line in outputs["plain"]]
    assert np.allclose([line["score"] for line in outputs["named"]], [line["score"] for line in outputs["plain"]],
                       atol=1e-6)


def test_split_lite_evaluates_lite_and_cov_lite(covariate_build, tmp_path):
    from dialshift.lite import LITE_SIZE

    dataset, known = covariate_build, intents(covariate_build)
    assert cli(["validate", "--partial", str(dataset)]) == 0
    lite = {split: read_split(dataset, "hwu12_cov", split) for split in ("test", "lite", "cov_test", "cov_lite")}
    assert len(lite["cov_test"]["id"]) > LITE_SIZE == len(lite["cov_lite"]["id"])
    assert set(lite["cov_lite"]["id"]) <= set(lite["cov_test"]["id"])
    # stratified by intent, out-of-scope included: every class of cov_test keeps rows in proportion
    counts = {label: lite["cov_test"]["label"].count(label) for label in set(lite["cov_test"]["label"])}
    kept = {label: lite["cov_lite"]["label"].count(label) for label in counts}
    assert all(abs(kept[label] - counts[label] * LITE_SIZE / len(lite["cov_test"]["id"])) < 1 for label in counts)
    # the out-of-scope rows both test splits share keep the same lite ids, and every config keeps the same rows
    oos = len(known)
    shared = [{i for i, label in zip(lite[s]["id"], lite[s]["label"], strict=True) if label == oos}
              for s in ("lite", "cov_lite")]
    assert min(shared, key=len) <= max(shared, key=len)
    assert read_split(dataset, "hwu12_cov_5shot", "cov_lite")["id"] == lite["cov_lite"]["id"]

    folder = classifier_folder(tmp_path / "clf", len(known))
    out = tmp_path / "out"
    assert cli(["evaluate", "--model-dir", str(folder), "--dataset", str(dataset), "--configs", *CONFIGS, "--split",
                "lite", "--bootstrap", "5", "--out", str(out), "--no-progress", "--no-plots"]) == 0
    for split in ("lite", "cov_lite"):
        written = lines(out / "msp" / split / "predictions" / "hwu12_cov.jsonl")
        assert sorted(line["id"] for line in written) == sorted(lite[split]["id"])
        document = json.loads((out / "msp" / split / "results.json").read_text())
        assert document["scoring"]["split"] == split
        assert document["results"]["hwu12_cov_5shot"]["instances"] == len(lite[split]["id"])
    assert not (out / "msp" / "test").exists()

    # OUT/msp/lite/predictions, with OUT/msp/cov_lite/predictions as its cov_lite folder and a submission.json
    # beside it, is a lite-track leaderboard submission scored on both splits (docs/leaderboard.md)
    from dialshift.leaderboard import read_store

    submission = submission_folder(out, tmp_path / "submission", "lite", track="lite", configs=list(CONFIGS))
    assert cli(["leaderboard", "score", str(submission), "--dataset", str(dataset), "--results",
                str(tmp_path / "store"), "--bootstrap", "5", "--no-progress"]) == 0
    (record,) = read_store(tmp_path / "store")
    assert record["scoring"]["split"] == "lite" and "f1_all" in record["results"]["hwu12_cov"]
    cov_lite = record["shifted_splits"]["cov_lite"]
    assert cov_lite["results"]["hwu12_cov"]["instances"] == len(lite["cov_lite"]["id"])
    drop = cov_lite["drops"]["hwu12_cov"]
    assert drop["shared"] == len(set(lite["lite"]["id"]) & set(lite["cov_lite"]["id"])) > 0
    assert drop["metrics"]["accuracy"]["value"] == pytest.approx(
        record["results"]["hwu12_cov"]["accuracy"] - cov_lite["results"]["hwu12_cov"]["accuracy"])


def submission_folder(out, target, split="test", **fields):
    """The submission docs/leaderboard.md makes of `dialshift evaluate`'s open-world output: OUT/msp/<split>/predictions
    as predictions/, OUT/msp/cov_<split>/predictions as predictions/cov_<split>/, and a submission.json whose
    dataset_revision is that of OUT/msp/<split>/results.json."""
    shutil.copytree(out / "msp" / split / "predictions", target / "predictions")
    shutil.copytree(out / "msp" / f"cov_{split}" / "predictions", target / "predictions" / f"cov_{split}")
    revision = json.loads((out / "msp" / split / "results.json").read_text())["dataset_revision"]
    metadata = {"model": "org/tiny-intents", "method": "msp", "link": "https://example.org/tiny", "licence": "mit",
                "dataset_revision": revision, **fields}
    (target / "submission.json").write_text(json.dumps(metadata))
    return target


def test_heads_and_models_that_do_not_fit_are_refused_in_one_line(covariate_build, tmp_path, capsys):
    from test_adapters import tiny_folder

    dataset, known = covariate_build, intents(covariate_build)
    argv = ["--dataset", str(dataset), "--configs", "hwu12_cov", "--out", str(tmp_path / "out"), "--no-progress"]
    three = classifier_folder(tmp_path / "three", 3)
    wrong = classifier_folder(tmp_path / "wrong", len(known), {i: f"intent{i}" for i in range(len(known))})
    bi = tiny_folder(tmp_path / "bi", "bi-encoder")
    folder = classifier_folder(tmp_path / "clf", len(known))
    capsys.readouterr()
    assert cli(["evaluate", "--model-dir", str(three), *argv]) == 2
    err = one_line_error(capsys, "evaluate")
    assert f"the classification head has 3 labels, the config has {len(known)} known intents" in err
    assert cli(["evaluate", "--model-dir", str(wrong), *argv]) == 2
    assert "the head's labels do not name the config's intents" in one_line_error(capsys)
    assert cli(["evaluate", "--model-dir", str(bi), *argv]) == 2
    assert "a sentence-embedding model has no intent head" in one_line_error(capsys)
    assert cli(["evaluate", "--model-dir", str(folder), "--method", "dropout", *argv]) == 2
    assert "use --method vanilla" in one_line_error(capsys)
    assert cli(["evaluate", "--model-dir", str(folder), "--model-type", "cross-encoder", *argv]) == 2
    assert "use --model-type auto or classifier" in one_line_error(capsys)
    assert not (tmp_path / "out" / "msp").exists()


@pytest.mark.slow
def test_a_classifier_trained_by_the_trainer_gets_the_trainers_own_msp_predictions(covariate_build, tmp_path):
    """The adapter reuses the trainer's MSP rule: on a model trainers/open_world.py trained (and kept), `dialshift
    evaluate` writes the predictions the trainer wrote for its MSP method, on both test splits."""
    import sys

    sys.path.insert(0, "trainers")
    from open_world import main as train

    run = tmp_path / "run"
    assert train(["--dataset", str(covariate_build), "--config", "hwu12_cov", "--output-dir", str(run), "--model",
                  "tiny", "--num-seeds", "1", "--max-steps", "2", "--methods", "msp", "--replicates", "5",
                  "--keep-models", "--no-progress"]) == 0
    seed = run / "hwu12_cov" / "seed_0"
    out = tmp_path / "out"
    assert cli(["evaluate", "--model-dir", str(seed / "model"), "--dataset", str(covariate_build), "--configs",
                "hwu12_cov", "--max-length", "64", "--bootstrap", "5", "--out", str(out), "--no-progress",
                "--no-plots"]) == 0
    for split in ("test", "cov_test"):
        trainer = sorted((line["id"], line["prediction"], line["score"])
                         for line in lines(seed / "predictions" / "msp" / split / "hwu12_cov.jsonl"))
        adapter = sorted((line["id"], line["prediction"], line["score"])
                         for line in lines(out / "msp" / split / "predictions" / "hwu12_cov.jsonl"))
        assert [row[:2] for row in adapter] == [row[:2] for row in trainer]
        assert np.allclose([row[2] for row in adapter], [row[2] for row in trainer], atol=1e-5)
