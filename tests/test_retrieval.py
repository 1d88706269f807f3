"""Retrieved response candidates (dialshift.ranking.retrieval, ``dialshift retrieve``) on a hand-made Korean
chit-chat folder and a tiny random bi-encoder, and the real-environment table of the Han report on synthetic
re-rankings."""

import gzip
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dialshift.errors import DialshiftError  # noqa: E402
from dialshift.ranking import retrieval  # noqa: E402

DIALOGUES = [
    ("d0", ("배고파", "뭐 먹고 싶어?", "피자 먹자", "좋아 시켜줘")),
    ("d1", ("오늘 날씨 좋다", "산책 갈래?", "배고파")),
    ("d2", ("시험 잘 봤어?", "망했어", "다음에 잘 보면 되지")),
    ("d3", ("영화 볼래?", "무슨 영화?", "조커", "좋아")),
    ("d4", ("안녕", "안녕! 잘 지냈어?", "응 너는?")),
    ("d5", ("주말에 뭐 해?", "집에 있을 거야", "나도", "같이 놀자")),
]


def write_folder(root: Path, dialogues=DIALOGUES, validation: bool = False) -> Path:
    """A Hub dataset folder with a ``kor_chitchat`` config: d0-d3 in train, d4-d5 in test (and, with
    ``validation``, in validation too), ranking rows as the Korean family writes them (every turn after the first is
    the gold response to the turns before it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    splits = {"train": dialogues[:4], "test": dialogues[4:], **({"validation": dialogues[4:]} if validation else {})}
    utterances = sorted({text for _, turns in dialogues for text in turns})
    (root / "kor_chitchat").mkdir(parents=True)
    for split, members in splits.items():
        rows = []
        for dialogue, turns in members:
            for turn in range(1, len(turns)):
                negatives = [u for u in utterances if u != turns[turn]][:1]
                rows.append({"id": f"{dialogue}-t{turn:02d}", "dialogue_id": dialogue, "turn": turn,
                             "context": list(turns[:turn]), "candidates": [turns[turn], *negatives], "label": 0})
        pq.write_table(pa.Table.from_pylist(rows), root / "kor_chitchat" / f"{split}.parquet")
    entries = "".join(f"  - split: {split}\n    path: kor_chitchat/{split}.parquet\n" for split in splits)
    (root / "README.md").write_text(f"---\nconfigs:\n- config_name: kor_chitchat\n  data_files:\n{entries}---\n")
    return root


@pytest.fixture(scope="module")
def bi_encoder(tmp_path_factory):
    """A tiny random BERT with the MiniLM tokenizer, saved as a folder ``load_converted`` reads."""
    from transformers import AutoTokenizer, BertModel

    from dialshift.models.backbones import minilm_path, tiny_config

    folder = tmp_path_factory.mktemp("bi_encoder")
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()))
    torch.manual_seed(0)
    BertModel(tiny_config(len(tokenizer)), add_pooling_layer=False).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_folder(tmp_path_factory.mktemp("kor") / "ds")


def test_pool_names_each_distinct_utterance_once_by_its_smallest_turn_name(dataset):
    pool = retrieval.utterance_pool(dataset, "kor_chitchat", ("train", "test"))
    texts = [text for _, turns in DIALOGUES for text in turns]
    assert sorted(pool.texts) == sorted(set(texts)) and len(pool.ids) == len(set(pool.ids))
    name = dict(zip(pool.texts, pool.ids, strict=True))
    assert name["배고파"] == "d0#0"  # also d1#2: the smaller name
    assert name["좋아"] == "d3#3" and name["안녕"] == "d4#0"
    assert pool.digest() == retrieval.utterance_pool(dataset, "kor_chitchat", ("test", "train")).digest()
    assert retrieval.utterance_pool(dataset, "kor_chitchat", ("test",)).digest() != pool.digest()


def test_top_k_skips_the_excluded_and_breaks_ties_by_index():
    similarities = np.array([0.5, 0.9, 0.9, 0.1, 0.7])
    assert retrieval.top_k(similarities, 3, {1}) == ([2, 4, 0], [0.9, 0.7, 0.5])
    assert retrieval.top_k(similarities, 2, set())[0] == [1, 2]
    assert retrieval.query_text(["a", "b", "c"], 2) == "b c" and retrieval.query_text(["a", "b"], None) == "a b"


def test_retrieve_gives_k_candidates_plus_the_gold_and_resolves_back(dataset, bi_encoder, tmp_path):
    rows, summary = retrieval.retrieve(dataset, bi_encoder, k=4, pool_splits=("train", "test"), progress=False)
    pool = retrieval.utterance_pool(dataset, "kor_chitchat", ("train", "test"))
    text = dict(zip(pool.ids, pool.texts, strict=True))
    test = {f"{d}-t{t:02d}": turns for d, turns in DIALOGUES[4:] for t in range(1, len(turns))}
    assert [row["id"] for row in rows] == sorted(test) and summary["instances"] == summary["split_instances"] == 5
    assert summary["pool_size"] == len(pool.ids) and summary["candidates_per_instance"] == 5
    for row in rows:
        turns, turn = test[row["id"]], int(row["id"][-2:])
        names = row["candidates"]
        assert len(names) == 5 == len(set(names)) == len(row["cosine"]) == len(row["repeats_context"])
        assert text[names[row["label"]]] == turns[turn]  # the gold, once
        assert sum(text[name] == turns[turn] for name in names) == 1
        assert row["repeats_context"] == [text[name] in turns[:turn] for name in names]
        others = [c for j, c in enumerate(row["cosine"]) if j != row["label"]]
        assert others == sorted(others, reverse=True)  # retrieval order kept around the gold
        assert 1 <= row["gold_pool_rank"] <= len(pool.ids)
    retrieval.write_candidates(tmp_path / "a", rows)
    again, _ = retrieval.retrieve(dataset, bi_encoder, k=4, pool_splits=("train", "test"), progress=False)
    retrieval.write_candidates(tmp_path / "b", again)
    assert (tmp_path / "a" / retrieval.CANDIDATES_FILE).read_bytes() == \
        (tmp_path / "b" / retrieval.CANDIDATES_FILE).read_bytes()
    split = retrieval.load_candidates(dataset, tmp_path / "a", summary)
    assert split["id"] == [row["id"] for row in rows]
    assert [c[label] for c, label in zip(split["candidates"], split["label"], strict=True)] == \
        [test[i][int(i[-2:])] for i in split["id"]]
    assert split["context"] == [list(test[i][:int(i[-2:])]) for i in split["id"]]


def test_a_gold_outside_the_pool_and_a_changed_pool_are_refused(dataset, bi_encoder, tmp_path):
    with pytest.raises(DialshiftError, match="not in the pool of the splits train; include test"):
        retrieval.retrieve(dataset, bi_encoder, k=2, pool_splits=("train",), progress=False)
    rows, summary = retrieval.retrieve(dataset, bi_encoder, k=2, pool_splits=("train", "test"), progress=False)
    retrieval.write_candidates(tmp_path, rows)
    changed = write_folder(tmp_path / "other", [*DIALOGUES[:5], ("d5", ("주말에 뭐 해?", "잠"))])
    with pytest.raises(DialshiftError, match="utterance pool .* is not the one the candidates"):
        retrieval.load_candidates(changed, tmp_path, summary)


def test_a_damaged_candidate_file_is_a_one_line_error(tmp_path):
    (tmp_path / retrieval.CANDIDATES_FILE).write_bytes(b"not gzip")
    with pytest.raises(DialshiftError, match="unreadable candidate file"):
        retrieval.read_candidates(tmp_path)
    bad = '{"id": "x", "candidates": ["a"], "label": 0}\n{"id": "y", "candidates": ["a"], "label": 3}\n'
    (tmp_path / retrieval.CANDIDATES_FILE).write_bytes(gzip.compress(bad.encode()))
    with pytest.raises(DialshiftError, match=r"candidates.jsonl.gz: line 2: .*label an index"):
        retrieval.read_candidates(tmp_path)


def test_the_command_writes_candidates_and_run_json_and_refuses_a_bad_bi_encoder(dataset, bi_encoder, tmp_path,
                                                                                 capsys):
    from dialshift.cli import main

    out = tmp_path / "cands"
    assert main(["retrieve", "--dataset", str(dataset), "--bi-encoder", str(bi_encoder), "--out", str(out), "-k",
                 "3", "--max-instances", "2", "--pool-splits", "train,test", "--no-progress"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["retrieval"]["instances"] == 2 and run["retrieval"]["k"] == 3
    assert len(retrieval.read_candidates(out)) == 2
    assert main(["retrieve", "--dataset", str(dataset), "--bi-encoder", str(tmp_path / "none"), "--out",
                 str(tmp_path / "c2"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "not a converted e5 folder" in err and len(err.strip().splitlines()) == 1


def test_embed_keeps_the_order_of_the_texts(bi_encoder):
    from dialshift.models.e5 import embed, load_converted

    model, tokenizer = load_converted(bi_encoder)
    texts = ["a much longer sentence than the others here", "hi", "medium length one", "ok"]
    together = embed(model, tokenizer, texts, batch_size=2)
    alone = np.concatenate([embed(model, tokenizer, [text], batch_size=1) for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)


# --- the Han report's real-environment table ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def han():
    path = Path(__file__).resolve().parent.parent / "docs" / "reproduction_han" / "make_tables.py"
    spec = importlib.util.spec_from_file_location("make_tables_han_real_env", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synthetic_real_env(folder: Path, right: dict) -> None:
    """Four contexts, 3 candidates, gold at 0, candidate 1 repeats the context; ``right[(variant, seed)]`` is how
    many of the four each model gets right (it picks the repetition otherwise)."""
    rows = [{"id": f"c{i}", "candidates": ["g", "r", "x"], "label": 0, "cosine": [0.5, 0.9, 0.1],
             "repeats_context": [False, True, False], "gold_pool_rank": 3} for i in range(4)]
    retrieval.write_candidates(folder, rows)
    summary = {"config": "kor_chitchat", "split": "test", "pool_splits": ["test"], "pool_size": 9,
               "split_instances": 8, "k": 2, "candidates_per_instance": 3}
    (folder / "run.json").write_text(json.dumps({"retrieval": summary}))
    (folder / "command.json").write_text(json.dumps({"commit": "abc", "cpu_seconds": 3.0, "wall_seconds": 60.0}))
    for (variant, seed), count in right.items():
        out = folder / "rerank" / f"{variant}-seed{seed}"
        out.mkdir(parents=True)
        lines = "".join(json.dumps({"id": f"c{i}", "scores": [1.0, 0.0, -1.0] if i < count else [0.0, 1.0, -1.0]})
                        + "\n" for i in range(4))
        (out / "predictions.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
        (out / "run.json").write_text(json.dumps({"variant": variant, "seed": seed,
                                                  "history": [{"validation_precision@1": 0.2}]}))
        (out / "command.json").write_text(json.dumps({"commit": "abc", "cpu_seconds": 1.0, "training": None}))


def test_real_env_table_counts_precision_repetitions_and_applies_the_rule(han, tmp_path):
    from dialshift.verdicts import verdict

    synthetic_real_env(tmp_path, {("baseline", 0): 1, ("baseline", 1): 2, ("+deb", 0): 3, ("+deb", 1): 3})
    text = "\n".join(han.real_env_lines(tmp_path))
    assert "| bi-encoder alone (cosine; reference) | - | 0.0 | 100.0 % |" in text  # its top cosine is the repetition
    assert "| baseline | 36.2 ± 0.9 | 37.5 ± 17.7 | 62.5 ± 17.7 % |" in text
    assert "| +deb | 36.5 ± 0.6 | 75.0 ± 0.0 | 25.0 ± 0.0 % |" in text
    assert "| retrieved candidates that repeat a context turn | 50.0 % |" in text
    expected = verdict([50.0, 25.0], "+", 36.5 - 36.2)
    assert expected.outcome == "underpowered"  # two seeds: the rule decides nothing
    assert "| +deb − baseline | +0.3 (+deb 36.5 − baseline 36.2) | +50.0 / +25.0 | +37.5 [" in text
    assert f"| {expected.cell()} |" in text


def test_rerank_scores_the_candidates_with_a_trained_model_and_refuses_a_misnamed_one(han, bi_encoder, tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from trainers import debias

    dataset = write_folder(tmp_path / "ds", validation=True)
    model = tmp_path / "model"
    assert debias.main(["--dataset", str(dataset), "--output-dir", str(model), "--model", "tiny", "--num-epochs", "1",
                        "--batch-size", "4", "--max-length", "32", "--no-progress"]) == 0
    folder = tmp_path / "real_env"
    rows, summary = retrieval.retrieve(dataset, bi_encoder, k=3, pool_splits=("train", "test"), progress=False)
    retrieval.write_candidates(folder, rows)
    (folder / "run.json").write_text(json.dumps({"retrieval": summary}))
    (folder / "command.json").write_text(json.dumps({"commit": "c0ffee", "cpu_seconds": 3.0, "wall_seconds": 60.0}))
    (model / "command.json").write_text(json.dumps({"commit": "c0ffee", "threads": 1, "cpu_seconds": 2.0}))
    [out] = han.rerank(dataset, [("baseline", str(model))], folder)
    assert out == folder / "rerank" / "baseline-seed0"
    predictions = [json.loads(line) for line in gzip.decompress((out / "predictions.jsonl.gz").read_bytes()).splitlines()]
    split = retrieval.load_candidates(dataset, folder, summary)
    model_, encoder, _ = debias.load_model(model)
    expected = debias.instance_scores(model_, encoder, split)
    assert [p["id"] for p in predictions] == split["id"]
    np.testing.assert_allclose([p["scores"] for p in predictions], expected, atol=1e-5)
    command = json.loads((out / "command.json").read_text())
    assert command["training"]["commit"] == "c0ffee" and command["commit"]
    assert json.loads((out / "run.json").read_text())["variant"] == "baseline"
    assert "| baseline | 36.2 ± 0.9 |" in "\n".join(han.real_env_lines(folder))
    with pytest.raises(DialshiftError, match="is a 'baseline' model; name it by its variant"):
        han.rerank(dataset, [("+deb", str(model))], folder)
