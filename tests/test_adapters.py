"""Model adapters of `dialshift evaluate` (cross-encoder, bi-encoder, causal LM) on tiny random models made here.

Each adapter's logits are checked against a plain per-pair computation with the same model (the tokenizer called on
the pair's text, one forward, no batching), so batching, padding, length sorting and token caching cannot change a
score; then `dialshift evaluate` runs every adapter end to end, on response ranking and on pairwise selection.
"""

import json

import numpy as np
import pytest
import torch
from test_ranker import make_dataset_folder

from dialshift.cli import main as cli
from dialshift.models.adapters import AdapterOptions, detect_model_type, load_scorer
from dialshift.models.backbones import minilm_path, tiny_config

PAIRS = [(("good morning how are you", "fine thanks"), "what about dinner tonight"),
         (("the weather is nice",), "lets go to the park"),
         (("i need a new coat", "this one costs fifty dollars", "sure"), "see you later"),
         (("good morning how are you", "fine thanks"), "pizza sounds great")]
CHAT_TEMPLATE = ("{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}<assistant> {% endif %}")


def tiny_folder(path, kind: str, **config):
    """A tiny random model of ``kind`` saved with the MiniLM tokenizer (offline)."""
    from transformers import (AutoTokenizer, BertForSequenceClassification, BertModel, GPT2Config, GPT2LMHeadModel,
                              LlamaConfig, LlamaForCausalLM)

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(0)
    if kind == "cross-encoder":
        model = BertForSequenceClassification(tiny_config(len(tokenizer), num_labels=config.pop("num_labels", 1)))
    elif kind == "bi-encoder":
        model = BertModel(tiny_config(len(tokenizer)))
    elif kind == "gpt2":
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_positions=128, n_embd=64, n_layer=2,
                                           n_head=2))
    else:
        model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
                                             num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                             max_position_embeddings=128))
        tokenizer.chat_template = CHAT_TEMPLATE
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("adapters")
    return {name: tiny_folder(root / name, kind, **extra) for name, kind, extra in (
        ("cross1", "cross-encoder", {}), ("cross2", "cross-encoder", {"num_labels": 2}),
        ("bi", "bi-encoder", {}), ("gpt2", "gpt2", {}), ("llama", "llama", {}))}


def test_model_type_comes_from_the_folder(folders, tmp_path):
    from dialshift.errors import DialshiftError

    assert [detect_model_type(folders[n]) for n in ("cross1", "cross2", "bi", "gpt2", "llama")] == [
        "cross-encoder", "cross-encoder", "bi-encoder", "causal-lm", "causal-lm"]
    assert detect_model_type(minilm_path()) == "bi-encoder"  # a sentence-transformers folder
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertForTokenClassification"]}))
    with pytest.raises(DialshiftError, match="--model-type"):
        detect_model_type(tmp_path)


def direct_cross_encoder(scorer, context, candidate):
    tokenizer = scorer.tokenizer
    batch = tokenizer(f" {tokenizer.sep_token} ".join(context), candidate, return_tensors="pt")
    with torch.no_grad():
        logits = scorer.model(**batch).logits[0]
    return float(logits[0] if len(logits) == 1 else logits[1] - logits[0])


@pytest.mark.parametrize("name", ["cross1", "cross2"])
def test_cross_encoder_logits_match_a_plain_forward(folders, name):
    scorer = load_scorer(folders[name])
    got = scorer.score(scorer.encode(PAIRS), batch_size=3, progress=False)
    assert np.allclose(got, [direct_cross_encoder(scorer, c, r) for c, r in PAIRS], atol=1e-5)


def test_bi_encoder_is_scaled_cosine_of_mean_pooled_embeddings(folders):
    scorer = load_scorer(folders["bi"], options=AdapterOptions(scale=7.0))

    def embed(text):
        batch = scorer.tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            hidden = scorer.model(**batch).last_hidden_state[0]
        return hidden.mean(0).numpy()

    expected = []
    for context, candidate in PAIRS:
        a, b = embed(" ".join(context)), embed(candidate)
        expected.append(7.0 * a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    got = scorer.score(scorer.encode(PAIRS), batch_size=2, progress=False)
    assert np.allclose(got, expected, atol=1e-4)
    dot = load_scorer(folders["bi"], options=AdapterOptions(similarity="dot"))
    assert not np.allclose(dot.score(dot.encode(PAIRS), progress=False), got)


def direct_log_likelihood(scorer, prompt: str, candidate: str, special: bool) -> float:
    tokenizer = scorer.tokenizer
    prompt_ids = tokenizer(prompt, add_special_tokens=special)["input_ids"]
    continuation = tokenizer(candidate, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt_ids + continuation])
    with torch.no_grad():
        logprobs = scorer.model(input_ids=ids).logits[0].log_softmax(-1)
    return sum(float(logprobs[len(prompt_ids) + i - 1, token]) for i, token in enumerate(continuation))


@pytest.mark.parametrize("name", ["gpt2", "llama"])
@pytest.mark.parametrize("norm", ["chars", "tokens", "none"])
def test_causal_lm_scores_the_candidate_log_likelihood(folders, name, norm):
    scorer = load_scorer(folders[name], options=AdapterOptions(length_norm=norm))
    assert scorer.chat == (name == "llama")  # the tiny Llama's tokenizer has a chat template
    expected = []
    for context, candidate in PAIRS:
        if scorer.chat:
            roles = ["user", "assistant", "user"][-len(context):] if len(context) % 2 else ["assistant", "user"]
            prompt = "".join(f"<{role}> {turn}\n" for role, turn in zip(roles, context, strict=True)) + "<assistant> "
        else:
            prompt = "\n".join(context) + "\n"
        total = direct_log_likelihood(scorer, prompt, candidate, special=not scorer.chat)
        tokens = len(scorer.tokenizer(candidate, add_special_tokens=False)["input_ids"])
        expected.append(total / {"chars": len(candidate), "tokens": tokens, "none": 1}[norm])
    got = scorer.score(scorer.encode(PAIRS), batch_size=3, progress=False)
    assert np.allclose(got, expected, atol=1e-4)


def test_int8_quantisation_changes_scores_slightly(folders):
    exact = load_scorer(folders["cross1"])
    quantized = load_scorer(folders["cross1"], options=AdapterOptions(quantize="int8"))
    assert type(quantized.model.bert.encoder.layer[0].attention.self.query).__name__ == "Linear"
    a = exact.score(exact.encode(PAIRS), progress=False)
    b = quantized.score(quantized.encode(PAIRS), progress=False)
    assert not np.array_equal(a, b) and np.allclose(a, b, atol=0.05)


def pairwise_folder(path):
    """A Hub folder with one pairwise_selection config (two responses, a gold ``type``)."""
    import datasets

    from dialshift.configs import BenchmarkConfig
    from dialshift.hub import write_hub_folder

    rows = [{"id": f"p{i}", "context": list(c), "candidates": [r, PAIRS[(i + 1) % len(PAIRS)][1]], "label": i % 2,
             "type": "neg" if i % 2 else "pos"} for i, (c, r) in enumerate(PAIRS)]
    for row in rows:
        if row["label"]:
            row["candidates"].reverse()
    config = BenchmarkConfig("pairs", "toy", "pairwise_selection", "two responses")
    return write_hub_folder(path, {"pairs": datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})}, [],
                            metadata={"pairs": {"config": config.to_dict()}}, progress=False)


@pytest.mark.parametrize("name", ["cross2", "bi", "llama"])
def test_evaluate_runs_every_adapter_on_ranking_and_pairwise_selection(folders, tmp_path, name):
    ranking = make_dataset_folder(tmp_path / "ranking")
    out = tmp_path / "out"
    assert cli(["evaluate", "--model-dir", str(folders[name]), "--dataset", str(ranking), "--configs", "dailydialog",
                "uw_0.10", "--max-instances", "4", "--out", str(out), "--no-progress", "--no-plots"]) == 0
    document = json.loads((out / "vanilla" / "results.json").read_text())
    assert document["run"]["model_type"] == detect_model_type(folders[name])
    assert "logit" in document["run"]["adapter"] and set(document["results"]) == {"dailydialog", "uw_0.10"}
    rows = [json.loads(line) for line in (out / "vanilla" / "predictions" / "uw_0.10.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and np.allclose([sum(r["probabilities"]) for r in rows], 1, atol=1e-5)

    pairs_out = tmp_path / "pairs-out"
    assert cli(["evaluate", "--model-dir", str(folders[name]), "--dataset", str(pairwise_folder(tmp_path / "pairs")),
                "--configs", "pairs", "--out", str(pairs_out), "--no-progress", "--no-plots"]) == 0
    result = json.loads((pairs_out / "vanilla" / "results.json").read_text())["results"]["pairs"]
    assert {"accuracy", "accuracy/pos", "accuracy/neg", "ece"} <= set(result) and result["instances"] == 4


def test_adapters_refuse_a_temperature_and_bad_heads(folders, tmp_path, capsys):
    from transformers import AutoTokenizer, BertForSequenceClassification

    ranking = make_dataset_folder(tmp_path / "ranking")
    argv = ["--dataset", str(ranking), "--configs", "dailydialog", "--out", str(tmp_path / "out"), "--no-progress"]
    assert cli(["evaluate", "--model-dir", str(folders["bi"]), "--method", "temperature", *argv]) == 2
    assert "no fitted temperature" in capsys.readouterr().err
    three = tmp_path / "three"
    BertForSequenceClassification(tiny_config(30522, num_labels=3)).save_pretrained(three)
    AutoTokenizer.from_pretrained(minilm_path()).save_pretrained(three)
    capsys.readouterr()
    assert cli(["evaluate", "--model-dir", str(three), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert "3 labels" in err and "\n" not in err


def test_threads_follow_the_flag_then_the_environment_then_the_machine(monkeypatch):
    from dialshift.models.adapters import machine_threads, set_threads

    before = torch.get_num_threads()
    try:
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        assert set_threads(2) == 2 == torch.get_num_threads()
        assert set_threads() == 1 == torch.get_num_threads()
        monkeypatch.delenv("OMP_NUM_THREADS")
        monkeypatch.setattr("os.getloadavg", lambda: (0.0, 0.0, 0.0))
        idle = machine_threads()
        monkeypatch.setattr("os.getloadavg", lambda: (99.0, 99.0, 99.0))
        assert machine_threads() == 1 <= idle and set_threads() == 1
    finally:
        torch.set_num_threads(before)
