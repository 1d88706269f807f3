"""Ranker trainer, uncertainty methods and word importance, on a tiny random BERT and a small synthetic folder."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import trainers.ranker as trainer

pytestmark = pytest.mark.slow  # trains tiny rankers: minutes of CPU (`-m "not slow"` leaves it out)

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("good morning how are you today fine thanks what about dinner tonight sure pizza sounds great see "
         "later the weather is nice lets go to the park i need a new coat this one costs fifty dollars").split()


def ranking_split(split: str, dialogues: int, seed: int, turns: int = 4):
    """DailyDialog ranking instances with the DailyDialog family's features, made of random words."""
    import datasets

    rng = np.random.default_rng(seed)
    utterances = [[" ".join(rng.choice(WORDS, size=rng.integers(3, 9))) for _ in range(turns)]
                  for _ in range(dialogues)]
    responses = [u for d in utterances for u in d[1:]]
    rows = []
    for d, dialogue in enumerate(utterances):
        for t in range(1, turns):
            gold = dialogue[t]
            negatives = [r for r in rng.permutation(responses) if r != gold][:9]
            label = int(rng.integers(0, 10))
            rows.append({
                "id": f"dd-{split}-{d:05d}-t{t:02d}", "dialogue_id": f"dd-{split}-{d:05d}", "turn": t,
                "context": dialogue[:t], "candidates": negatives[:label] + [gold] + negatives[label:], "label": label,
                "context_turns": t, "replacements": [], "deleted_turns": [],
            })
    features = datasets.Features({
        "id": datasets.Value("string"), "dialogue_id": datasets.Value("string"), "turn": datasets.Value("int32"),
        "context": datasets.Sequence(datasets.Value("string")),
        "candidates": datasets.Sequence(datasets.Value("string")),
        "label": datasets.Value("int32"), "context_turns": datasets.Value("int32"),
        "replacements": [{"turn": datasets.Value("int32"), "index": datasets.Value("int32"),
                          "original": datasets.Value("string"), "replacement": datasets.Value("string")}],
        "deleted_turns": datasets.Sequence(datasets.Value("string")),
    })
    return datasets.Dataset.from_list(rows, features=features)


def shifted(test, name: str, seed: int):
    """A shifted copy of the test split: words of the context replaced (uw/kw) or oldest turns dropped (ic)."""
    rng = np.random.default_rng(seed)

    def shift(row):
        if name.startswith("ic_"):
            k = int(name[3])
            row["context"] = row["context"][k:] or row["context"][-1:]
        else:
            row["context"] = [" ".join(w if rng.random() > 0.3 else "zyx" for w in turn.split())
                              for turn in row["context"]]
        row["context_turns"] = len(row["context"])
        return row

    return test.map(shift)


def make_dataset_folder(path: Path) -> Path:
    """A Hub folder (via dialshift.hub) with ``dailydialog`` (train/validation/test) and a few shifted test configs."""
    import datasets

    from dialshift.hub import write_hub_folder

    test = ranking_split("test", 6, 3)
    configs = {"dailydialog": datasets.DatasetDict({"train": ranking_split("train", 16, 1),
                                               "validation": ranking_split("validation", 6, 2), "test": test})}
    for i, name in enumerate(["uw_0.10", "uw_0.20", "kw_0.10", "kw_0.20", "ic_0of6", "ic_1of6"]):
        configs[name] = datasets.DatasetDict({"test": shifted(test, name, i)})
    configs["sr_3"] = datasets.DatasetDict({"test": test.filter(lambda r: r["context_turns"] == 3)})
    configs["sr_2"] = datasets.DatasetDict({"test": test.filter(lambda r: r["context_turns"] == 2)})
    return write_hub_folder(path, configs, [], progress=False)


def run_trainer(*args: str) -> int:
    return trainer.main([*args, "--no-progress"])


@pytest.fixture(scope="session")
def dataset_folder(tmp_path_factory):
    return make_dataset_folder(tmp_path_factory.mktemp("hub") / "dialshift")


@pytest.fixture(scope="session")
def tiny_ranker(dataset_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("models") / "tiny-seed0"
    assert run_trainer("--dataset", str(dataset_folder), "--output-dir", str(out), "--model", "tiny",
                       "--max-length", "64", "--batch-size", "4", "--learning-rate", "1e-3", "--seed", "0") == 0
    return out


def test_trained_folder_is_a_self_describing_ranker(tiny_ranker):
    from dialshift.models.ranker import load_ranker

    ranker = load_ranker(tiny_ranker)
    meta = ranker.meta
    assert meta["task"] == "ranking" and meta["model_class"].endswith("BertForSequenceClassification")
    assert type(ranker.model).__name__ == "BertForSequenceClassification" and not ranker.model.training
    assert meta["backbone"] == "tiny-bert-random" and meta["training"]["config"] == "dailydialog"
    assert meta["training"]["learning_rate"] == 1e-3 and meta["versions"]["torch"]
    assert meta["validation"]["recall@1"] == max(h["validation_recall@1"] for h in meta["history"])
    assert meta["max_length"] == 64 and meta["seed"] == 0 and meta["separator"] == "[SEP]"
    assert meta["train_instances"] == 48 and meta["steps"] == 12  # 16 dialogues x 3 responses, batch 4, 1 epoch
    assert meta["temperature"] > 0 and np.isfinite(meta["temperature"])
    assert meta["validation"]["nll_temperature"] <= meta["validation"]["nll"] + 1e-9
    assert not (tiny_ranker / "checkpoints").exists()


def test_encoder_truncates_the_oldest_turn():
    from transformers import AutoTokenizer

    from dialshift.models.backbones import minilm_path
    from dialshift.models.ranker import PairEncoder

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    encoder = PairEncoder(tokenizer, 12)
    [(ids, first)] = encoder.encode_pairs([(["one two three", "four five", "six"], "seven eight")])
    assert tokenizer.convert_ids_to_tokens(ids) == ["[CLS]", "three", "[SEP]", "four", "five", "[SEP]", "six",
                                                    "[SEP]", "seven", "eight", "[SEP]"][-len(ids):] or len(ids) <= 12
    assert len(ids) <= 12 and ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    tokens = tokenizer.convert_ids_to_tokens(ids)
    assert tokens[first:] == ["seven", "eight", "[SEP]"] and tokens[first - 2 : first] == ["six", "[SEP]"]
    assert "one" not in tokens  # the oldest turn is cut first


def test_a_folder_without_model_metadata_is_not_a_ranker(tiny_ranker, tmp_path):
    """Only dialshift_model.json makes a folder a ranker (the first trainer's dialshift_ranker.json does not)."""
    import shutil

    from dialshift.errors import DialshiftError
    from dialshift.models.ranker import load_ranker

    old = tmp_path / "old"
    shutil.copytree(tiny_ranker, old)
    meta = json.loads((old / "dialshift_model.json").read_text())
    (old / "dialshift_ranker.json").write_text(json.dumps({**meta, "format": "dialshift-ranker/1"}))
    (old / "dialshift_model.json").unlink()
    with pytest.raises(DialshiftError, match="not a dialshift ranker \\(no dialshift_model.json"):
        load_ranker(old)


def test_a_folder_of_another_task_is_not_a_ranker(tmp_path):
    from dialshift.errors import DialshiftError
    from dialshift.models.ranker import read_ranker_meta
    from dialshift.training import write_model_meta

    write_model_meta(tmp_path, {"task": "intent_classification", "model_class": "x.Y", "max_length": 8})
    with pytest.raises(DialshiftError, match="not 'ranking'"):
        read_ranker_meta(tmp_path)


def test_negatives_are_distinct_and_never_gold():
    from dialshift.training import epoch_rng

    gold = np.arange(200) % 15
    order, negatives = trainer.epoch_plan(gold, 15, 9, epoch_rng(3, 0))
    assert sorted(order) == list(range(200)) and negatives.shape == (200, 9)
    assert not (negatives == gold[:, None]).any()
    assert all(len(set(row)) == 9 for row in negatives)
    again = trainer.epoch_plan(gold, 15, 9, epoch_rng(3, 0))
    other = trainer.epoch_plan(gold, 15, 9, epoch_rng(3, 1))
    assert (again[1] == negatives).all() and not (other[1] == negatives).all()


def test_resume_from_checkpoint_matches_uninterrupted_run(dataset_folder, tmp_path):
    from safetensors.numpy import load_file

    common = ["--dataset", str(dataset_folder), "--model", "tiny", "--max-length", "48", "--batch-size", "8",
              "--learning-rate", "1e-3", "--seed", "5", "--max-train-instances", "40", "--eval-steps", "2"]
    assert run_trainer(*common, "--output-dir", str(tmp_path / "full"), "--checkpointing-steps", "2") == 0
    resumed = tmp_path / "resumed"
    assert run_trainer(*common, "--output-dir", str(resumed),
                       "--resume-from-checkpoint", str(tmp_path / "full" / "checkpoints" / "step_2")) == 0
    a = load_file(tmp_path / "full" / "model.safetensors")
    b = load_file(resumed / "model.safetensors")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    meta_a = json.loads((tmp_path / "full" / "dialshift_model.json").read_text())
    meta_b = json.loads((resumed / "dialshift_model.json").read_text())
    assert meta_a["temperature"] == meta_b["temperature"] and meta_a["steps"] == meta_b["steps"] == 5
    logits = [np.load(folder / "validation_logits.npy") for folder in (tmp_path / "full", resumed)]
    assert np.array_equal(*logits)


def test_trainer_bad_input_is_one_line(tmp_path, capsys):
    missing = str(tmp_path / "missing")
    assert run_trainer("--dataset", missing, "--output-dir", str(tmp_path / "o"), "--model", "tiny") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "does not exist" in err


def test_trainer_names_a_missing_config(dataset_folder, tmp_path, capsys):
    assert run_trainer("--dataset", str(dataset_folder), "--output-dir", str(tmp_path / "o"), "--model", "tiny",
                       "--config", "source") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no 'source' config" in err and "dailydialog" in err


def test_fit_temperature_recovers_a_known_temperature():
    from dialshift.models.uncertainty import fit_temperature, predictive, softmax

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4000, 10)) * 3
    labels = np.array([rng.choice(10, p=p) for p in softmax(logits / 2.0)])
    assert fit_temperature(logits, labels) == pytest.approx(2.0, rel=0.1)
    out = predictive(logits[None], temperature=2.0)
    assert out["uncertainty"] is None and np.allclose(out["probabilities"].sum(1), 1)


def test_cli_help_runs():
    result = subprocess.run([sys.executable, str(ROOT / "trainers" / "ranker.py"), "--help"], capture_output=True,
                            text=True, check=True)
    assert "--resume-from-checkpoint" in result.stdout


def test_word_importance_has_the_shape_of_the_contexts(tiny_ranker):
    from dialshift.models.importance import word_importance

    contexts = [[["good", "morning"], [], ["how", "are", "you", "today"]], [["unbelievably", "fine"]],
                [["a"] * 40, ["the", "end"]]]
    scores = word_importance(tiny_ranker, contexts, batch_size=2, max_length=16, progress=False)
    assert [[len(turn) for turn in c] for c in scores] == [[len(turn) for turn in c] for c in contexts]
    flat = [x for c in scores for turn in c for x in turn]
    assert all(x >= 0 for x in flat) and sum(scores[0][0] + scores[0][2]) < 1.0 + 1e-6
    assert scores[2][0][0] == 0.0 and scores[2][0][-1] > 0  # the oldest words are truncated away at 16 tokens
    alone = word_importance(tiny_ranker, contexts[1:2], batch_size=1, max_length=16, progress=False)
    assert np.allclose(alone[0][0], scores[1][0], atol=1e-5)  # independent of the batch it is in
