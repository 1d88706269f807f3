"""Per-utterance [CLS] attention of the ranker and `dialshift evaluate --attention` (DAS ratio), on a tiny ranker."""

import json

import numpy as np
import pytest
from test_ranker import WORDS, ranking_split, run_trainer

from dialshift.cli import main as cli
from dialshift.ranking.attention import utterance_attention, utterance_owners

CONFIGS = ("dailydialog_distract_random_1.0", "dailydialog_distract_rare_end")


def distracting_folder(path):
    """A small ``dailydialog`` ranking config plus two distracting configs of 6 rows each (the family's features;
    2 inserted utterances, masked)."""
    import datasets
    from dialshift_families.distracting import to_dataset

    from dialshift.hub import write_hub_folder

    rng = np.random.default_rng(7)
    configs = {"dailydialog": datasets.DatasetDict({"train": ranking_split("train", 4, 1),
                                                    "validation": ranking_split("validation", 2, 2),
                                                    "test": ranking_split("test", 2, 3)})}
    for c, name in enumerate(CONFIGS):
        rows = []
        for d in range(6):
            history = [" ".join(rng.choice(WORDS, size=rng.integers(2, 7))) for _ in range(2 + d % 3)]
            distractors = ["rare words zyx", "qwv more rare words"]
            slot = len(history) if c else int(rng.integers(0, len(history) + 1))
            context = history[:slot] + distractors + history[slot:] + ["how are you today"]
            mask = [0] * slot + [1, 1] + [0] * (len(history) - slot)
            rows.append({"id": f"dd-test-{d:05d}", "dialogue_id": f"dd-test-{d:05d}", "context": context,
                         "response": "fine thanks", "distractor_mask": mask, "distractors": distractors,
                         "context_turns": len(context), "truncated_turns": [], "shift": None})
        configs[name] = datasets.DatasetDict({"test": to_dataset(rows)})
    return write_hub_folder(path, configs, [], progress=False)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models: one torch thread is faster than several on a shared CI machine."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def setup(tmp_path_factory, one_thread):
    root = tmp_path_factory.mktemp("ranker_attention")
    folder = distracting_folder(root / "distracting")
    ranker = root / "tiny"
    assert run_trainer("--dataset", str(folder), "--output-dir", str(ranker), "--model", "tiny", "--max-length", "48",
                       "--batch-size", "4", "--learning-rate", "1e-3") == 0
    return folder, ranker


def test_owners_follow_the_encoder_layout():
    sep = 99
    # turns 2 and 3 empty: a [SEP] after every turn before the last non-empty one (turn 4)
    turns = [[1, 2], [3], [], [], [4, 5]]
    ids = [7, 1, 2, sep, 3, sep, sep, sep, 4, 5, sep, 8, 8, sep]
    assert utterance_owners(turns, sep, ids, 11) == [None, 0, 0, None, 1, None, None, None, 4, 4, None, None, None,
                                                     None]
    truncated = [7, 2, sep, 3, sep, sep, sep, 4, 5, sep, 8, sep]  # the oldest token cut
    assert utterance_owners(turns, sep, truncated, 10)[:3] == [None, 0, None]
    with pytest.raises(RuntimeError, match="differ"):
        utterance_owners(turns, sep, [7, 1, 2, 3, sep, 4, 5, sep, 8, sep], 8)


def test_attention_matches_an_independent_computation(setup):
    """Against the model run on the tokenizer's own pair encoding, utterances split at its [SEP] tokens."""
    import torch
    from transformers import AutoTokenizer

    from dialshift.models.ranker import load_ranker

    _, ranker_dir = setup
    contexts = [["good morning", "how are you", "fine thanks"], ["see you later"], ["", "the park", "nice"]]
    responses = ["sure pizza", "bye", "lets go to the park"]
    scores = utterance_attention(ranker_dir, contexts, responses, batch_size=2, progress=False)
    assert [len(s) for s in scores] == [3, 1, 3] and scores[2][0] == 0.0
    tokenizer = AutoTokenizer.from_pretrained(ranker_dir)
    model = load_ranker(ranker_dir, attn_implementation="eager").model
    for context, response, got in zip(contexts, responses, scores, strict=True):
        batch = tokenizer(" [SEP] ".join(context), response, return_tensors="pt")
        with torch.inference_mode():
            row = model(**batch, output_attentions=True).attentions[-1][0, :, 0, :].mean(0).numpy()
        ids, first = batch["input_ids"][0].tolist(), batch["token_type_ids"][0].tolist().index(1)
        expected, turn = [0.0] * len(context), 0
        for position in range(1, first - 1):
            if ids[position] == tokenizer.sep_token_id:
                turn += 1
            else:
                expected[turn] += float(row[position])
        assert turn == len(context) - 1 and np.allclose(got, expected, atol=1e-5)
        assert 0 < sum(got) < 1  # [CLS], [SEP] and the response take the rest


def test_truncation_zeroes_the_oldest_utterance(setup):
    _, ranker_dir = setup
    long = " ".join(["good"] * 60)
    scores = utterance_attention(ranker_dir, [["pizza", long, "fine"]], ["sure"], progress=False)[0]
    assert scores[0] == 0.0 and scores[1] > 0 and scores[2] > 0


def test_evaluate_attention_writes_and_scores_predictions(setup, tmp_path):
    folder, ranker_dir = setup
    out = tmp_path / "out"
    assert cli(["evaluate", "--attention", "--model-dir", str(ranker_dir), "--dataset", str(folder), "--out", str(out),
                "--bootstrap", "50", "--no-plots", "--no-progress"]) == 0
    document = json.loads((out / "attention" / "results.json").read_text())
    assert set(document["results"]) == set(CONFIGS) and document["run"]["method"] == "attention"
    from datasets import load_dataset

    for name in CONFIGS:
        gold = {row["id"]: row for row in load_dataset(str(folder), name, split="test")}
        lines = [json.loads(line) for line in (out / "attention" / "predictions" / f"{name}.jsonl").read_text()
                 .splitlines()]
        assert len(lines) == len(gold) == document["results"][name]["instances"]
        for line in lines:  # one AS per context utterance: the mask's History values, then the Query's
            assert len(line["attention_scores"]) == len(gold[line["id"]]["distractor_mask"]) + 1
        masks = [np.array(gold[line["id"]]["distractor_mask"], bool) for line in lines]
        ratios = [np.mean(np.array(line["attention_scores"][:-1])[m]) / np.mean(np.array(line["attention_scores"][:-1])
                                                                                [~m]) for line, m in zip(lines, masks,
                                                                                                         strict=True)]
        assert document["results"][name]["das_ratio"] == pytest.approx(np.mean(ratios), rel=1e-6)
    assert (out / "attention" / "results.md").is_file()
    rescored = tmp_path / "rescored"
    assert cli(["score", str(out / "attention" / "predictions"), "--dataset", str(folder), "--out", str(rescored),
                "--no-plots", "--no-progress"]) == 0
    again = json.loads((rescored / "results.json").read_text())
    assert again["results"] == document["results"]


@pytest.mark.parametrize("extra, message", [
    (["--configs", "dailydialog"], "is a response_ranking config"),
    (["--method", "dropout"], "drop --method"),
])
def test_attention_bad_input_is_one_line(setup, tmp_path, capsys, extra, message):
    folder, ranker_dir = setup
    argv = ["evaluate", "--attention", "--model-dir", str(ranker_dir), "--dataset", str(folder), "--out",
            str(tmp_path / "out"), "--no-progress", *extra]
    assert cli(argv) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and "\n" not in error


def test_ranking_mode_points_to_attention(setup, tmp_path, capsys):
    folder, ranker_dir = setup
    assert cli(["evaluate", "--model-dir", str(ranker_dir), "--dataset", str(folder), "--configs", CONFIGS[0],
                "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert "add --attention" in capsys.readouterr().err
