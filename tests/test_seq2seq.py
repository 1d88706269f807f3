"""The LSTM seq2seq models (eqs. 3-6), attention scores (eq. 7), the attention loss (eq. 9) and trainers/seq2seq.py."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dialshift.errors import DialshiftError  # noqa: E402
from dialshift.models.seq2seq import (  # noqa: E402
    STRUCTURES,
    Batch,
    Output,
    Seq2Seq,
    Seq2SeqConfig,
    Vocabulary,
    attention_loss,
    attention_scores,
    collate,
    token_nll,
    unigram_perplexity,
)

TEXTS = ["how do i mount a drive", "use sudo mount", "it says permission denied", "are you root ?", "yes i am",
         "then check dmesg", "thanks that worked"]


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models: one torch thread is faster than several on a shared CI machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def vocab():
    return Vocabulary.build(TEXTS, 60)


def tiny_batch(distract=True):
    examples = [(TEXTS[:3], TEXTS[3], [1, 0, 0] if distract else [0, 0, 0]),
                (TEXTS[2:6], TEXTS[6], [0, 1, 1, 0] if distract else [0, 0, 0, 0])]
    return collate(vocab(), examples)


def model_of(structure, seed=0, dim=8):
    torch.manual_seed(seed)
    return Seq2Seq(Seq2SeqConfig(len(vocab()), structure, dim=dim, layers=1, dropout=0.0)).eval()


def test_collate_marks_utterances_and_eou():
    batch = tiny_batch()
    v = vocab()
    eou = v.index["__eou__"]
    assert batch.utterance_count.tolist() == [3, 4]
    for row in range(2):
        ends = batch.utterance_ends[row, : batch.utterance_count[row]]
        assert (batch.tokens[row, ends] == eou).all()
    assert batch.target[0, : len(TEXTS[3].split()) + 1].tolist()[-1] == v.index["</s>"]
    assert batch.distractor[1].tolist() == [0, 1, 1, 0]


def test_unigram_perplexity_by_hand():
    v = Vocabulary.build(["a b"], 10)  # the 5 specials, a, b
    # training targets: a a </s> | b </s>; add-one over all 7 words: a 3, b 2, </s> 3, the 4 other specials 1: total 12
    assert unigram_perplexity(v, ["a a", "b"], ["a"], 15) == {"perplexity": pytest.approx(4.0), "tokens": 2,
                                                              "vocabulary": 7}
    # every response, training ones too, is cut to max_response_tokens before </s>: a 2, b 2, </s> 3, others 1 (of 11);
    # an unknown word is <unk>
    assert unigram_perplexity(v, ["a a", "b"], ["c a a"], 1)["perplexity"] == pytest.approx((11 * 11 / 3) ** 0.5)
    with pytest.raises(DialshiftError, match="no test responses"):
        unigram_perplexity(v, ["a"], [], 15)


@pytest.mark.parametrize("structure", STRUCTURES)
def test_attention_is_the_equation_of_its_structure(structure):
    """Recompute eqs. 3-6 by hand from the model's own encoder outputs and decoder cell, step by step."""
    model, batch = model_of(structure), tiny_batch()
    with torch.no_grad():
        output = model(batch)
        hidden, utterances, state = model.encode(batch)
        for row in range(2):
            q, m = int(batch.utterance_count[row]), int(batch.token_lengths[row])
            H, HC = hidden[row, :m], utterances[row, :q]
            if structure.endswith("_ui"):  # eq. 6: the decoder starts from LSTM(H_1..H_q)
                _, (h0, c0) = model.integration(HC[None])
            else:
                _, (h0, c0) = model.encoder(model.embedding(batch.tokens[row : row + 1, :m]))
            assert torch.allclose(state[0][:, row], h0[:, 0], atol=1e-5)
            dec_state = (h0, c0)
            keys = H if structure == "non_hier" else HC
            if structure.startswith("static"):  # eq. 4
                expected = torch.softmax(HC @ HC[-1], dim=0)
                assert torch.allclose(output.attention[row, :q], expected, atol=1e-5)
                assert output.attention[row, q:].sum() == 0
                context = expected @ HC
            else:
                context = torch.zeros(H.shape[-1])
            steps = int(batch.target_mask[row].sum())
            for t in range(steps):
                x = torch.cat([model.embedding(batch.decoder_input[row, t]), context])[None, None]
                out, dec_state = model.decoder(x, dec_state)
                h_t = out[0, 0]
                if not structure.startswith("static"):  # eqs. 3 and 5
                    a_t = torch.softmax(keys @ h_t, dim=0)
                    assert torch.allclose(output.attention[row, t, : len(keys)], a_t, atol=1e-5)
                    context = a_t @ keys
                logits = model.output(torch.tanh(model.combine(torch.cat([h_t, context]))))
                assert torch.allclose(output.logits[row, t], logits, atol=1e-4)


def fake(attention, batch):
    return Output(torch.zeros(*batch.target.shape, 5), torch.as_tensor(attention, dtype=torch.float))


def handmade_batch():
    """One row: utterances of 2, 1 and 1 tokens (with __eou__ each: 3, 2, 2 tokens), response of 1 token + </s>."""
    v = Vocabulary.build(["a b c d e"], 20)
    return collate(v, [(["a b", "c", "d"], "e", [1, 0, 0])])


def test_attention_scores_eq7_by_hand():
    batch = handmade_batch()
    assert batch.token_utterance[0].tolist() == [0, 0, 0, 1, 1, 2, 2]
    static = fake([[0.2, 0.3, 0.5]], batch)
    assert np.allclose(attention_scores(static, batch, 0, "static_ui"), [0.6, 0.9, 1.5])
    dynamic = fake([[[0.2, 0.3, 0.5], [0.4, 0.1, 0.5]]], batch)
    assert np.allclose(attention_scores(dynamic, batch, 0, "dynamic"), [0.9, 0.6, 1.5])
    tokens = fake([[[0.1, 0.1, 0.1, 0.2, 0.1, 0.2, 0.2], [0.0, 0.1, 0.2, 0.1, 0.1, 0.3, 0.2]]], batch)
    # utterance shares per step: (0.3, 0.3, 0.4) and (0.3, 0.2, 0.5); mean (0.3, 0.25, 0.45); times q = 3
    assert np.allclose(attention_scores(tokens, batch, 0, "non_hier"), [0.9, 0.75, 1.35])


def test_attention_loss_eq9_by_hand():
    batch = handmade_batch()  # utterance 0 is the distraction; 2 decoding steps
    static = fake([[0.2, 0.3, 0.5]], batch)
    assert attention_loss(static, batch, "static").item() == pytest.approx(0.2 ** 2 / 3)
    dynamic = fake([[[0.2, 0.3, 0.5], [0.4, 0.1, 0.5]]], batch)
    assert attention_loss(dynamic, batch, "dynamic_ui").item() == pytest.approx((0.04 / 3 + 0.16 / 3) / 2)
    tokens = fake([[[0.1, 0.1, 0.1, 0.2, 0.1, 0.2, 0.2], [0.0, 0.1, 0.2, 0.1, 0.1, 0.3, 0.2]]], batch)
    expected = ((0.01 * 3) / 7 + (0.0 + 0.01 + 0.04) / 7) / 2
    assert attention_loss(tokens, batch, "non_hier").item() == pytest.approx(expected)


@pytest.mark.parametrize("structure", STRUCTURES)
def test_attention_loss_gradient_reaches_only_its_path(structure):
    model, batch = model_of(structure), tiny_batch()
    model.train()
    attention_loss(model(batch), batch, structure).backward()

    def norm(module):
        return sum(float(p.grad.abs().sum()) if p.grad is not None else 0.0 for p in module.parameters())

    assert norm(model.encoder) > 0 and norm(model.embedding) > 0
    assert norm(model.combine) == 0 and norm(model.output) == 0  # the token predictor is not on the path
    if structure.startswith("static"):  # attention from H_q only: the decoder is not on the path
        assert norm(model.decoder) == 0
        if model.integration is not None:
            assert norm(model.integration) == 0  # H_m only starts the decoder
    else:
        assert norm(model.decoder) > 0
        if model.integration is not None:
            assert norm(model.integration) > 0  # via the decoder's start state
    model.zero_grad()
    token_nll(model(batch), batch).sum().backward()
    assert norm(model.output) > 0


@pytest.mark.parametrize("structure", STRUCTURES)
def test_a_few_steps_of_every_structure_learn(structure):
    model, batch = model_of(structure, dim=16), tiny_batch()
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(15):
        output = model(batch)
        loss = token_nll(output, batch).sum() / batch.target_mask.sum() + attention_loss(output, batch, structure)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert np.isfinite(losses).all() and losses[-1] < 0.7 * losses[0]


def test_bad_structure_and_vocabulary_errors(tmp_path):
    with pytest.raises(DialshiftError, match="unknown structure"):
        Seq2SeqConfig(10, "hierarchical")
    with pytest.raises(DialshiftError, match="missing; not a seq2seq model folder"):
        Vocabulary.load(tmp_path)
    with pytest.raises(DialshiftError, match="empty context"):
        collate(vocab(), [([], "x", [])])
    assert isinstance(tiny_batch(), Batch)


# ----------------------------------------------------------------------------------------------- the trainer


@pytest.fixture(scope="module")
def lowe_dataset(tmp_path_factory):
    from dialshift.cli import main
    from tests.test_distracting import write_lowe

    root = tmp_path_factory.mktemp("seq2seq")
    train_csv = write_lowe(root / "lowe")
    out = root / "dataset"
    assert main(["build", "--family", "distracting", "--config", "ubuntu", "--config", "ubuntu_distract_random_1.0",
                 "--config", "ubuntu_distract_rare_end", "--ubuntu-csv", str(train_csv), "--out", str(out),
                 "--no-progress"]) == 0
    return out


def test_trainer_trains_predicts_and_scores(lowe_dataset, tmp_path):
    from trainers.seq2seq import main

    out = tmp_path / "model"
    assert main(["--dataset", str(lowe_dataset), "--output-dir", str(out), "--structure", "dynamic_ui",
                 "--train-probability", "0.7", "--dim", "8", "--num-epochs", "2", "--batch-size", "8",
                 "--no-progress", "--predict", "ubuntu*", "--replicates", "20", "--torch-threads", "1"]) == 0
    meta = json.loads((out / "dialshift_model.json").read_text())
    assert meta["attention_loss"] and meta["structure"] == "dynamic_ui" and len(meta["history"]) == 2
    lines = [json.loads(line) for line in (out / "predictions" / "ubuntu_distract_rare_end.jsonl").open()]
    assert all(len(line["attention_scores"]) == line["tokens"] * 0 + len(line["attention_scores"]) for line in lines)
    results = json.loads((out / "predictions" / "results" / "results.json").read_text())
    assert set(results["results"]) == {"ubuntu_distract_random_1.0", "ubuntu_distract_rare_end"}
    assert results["results"]["ubuntu_distract_rare_end"]["das_ratio"] > 0
    original = json.loads((out / "predictions" / "original.json").read_text())
    assert original["ubuntu"]["perplexity"] > 1 and original["ubuntu"]["mean_as_history"] > 0
    # the same model re-predicted from its folder gives the same lines
    again = tmp_path / "again"
    assert main(["--predict-only", str(out), "--dataset", str(lowe_dataset), "--predict", "ubuntu_distract_rare_end",
                 "--predictions-dir", str(again), "--replicates", "20"]) == 0
    assert (again / "ubuntu_distract_rare_end.jsonl").read_text() == \
        (out / "predictions" / "ubuntu_distract_rare_end.jsonl").read_text()


def test_predictions_without_attention_are_a_one_line_error(lowe_dataset, tmp_path):
    from dialshift.scoring import ScoringSettings, score_files
    from trainers.seq2seq import load_rows

    rows = load_rows(lowe_dataset, "ubuntu_distract_rare_end", "test")
    path = tmp_path / "ubuntu_distract_rare_end.jsonl"
    path.write_text("".join(json.dumps({"id": row["id"], "tokens": 3}) + "\n" for row in rows))
    with pytest.raises(DialshiftError, match=r"attention_scores\[0\] is missing") as error:
        score_files({"ubuntu_distract_rare_end": path}, ScoringSettings(dataset=lowe_dataset, replicates=10))
    assert "\n" not in str(error.value)


def test_self_contained_distractions_change_per_epoch_and_skip_own_dialogue(lowe_dataset):
    from trainers.seq2seq import Seq2SeqTask, parse_args

    args = parse_args(["--dataset", str(lowe_dataset), "--output-dir", "unused", "--train-probability", "1.0"])
    task = Seq2SeqTask(args)
    rows = task.train_rows[:10]
    first, second = task.distracted(rows, 0), task.distracted(rows, 1)
    assert first != second and first == task.distracted(rows, 0)
    for row, (context, _, mask) in zip(rows, first, strict=True):
        assert sum(mask) == 2 and mask[-1] == 0
        own = set(row["context"]) | {row["response"]}
        assert not any(text in own for text, flag in zip(context, mask, strict=True) if flag)


def test_attention_scores_use_float64_softmax_of_the_dot_products():
    """float32 weights of far-apart dot products are exactly 0; the AS comes from the logits in float64."""
    batch = handmade_batch()
    logits = torch.tensor([[-60.0, -40.0, 60.0]])
    output = Output(torch.zeros(1, 2, 5), torch.softmax(logits, dim=-1), logits)
    assert output.attention[0, 0] == 0
    scores = attention_scores(output, batch, 0, "static")
    assert scores[0] > 0 and np.isclose(scores[1] / scores[0], np.exp(20.0))


def test_output_bias_unigram_starts_the_model_at_the_unigram_baseline(lowe_dataset):
    """With zero output weights the initial model predicts exactly the add-one unigram distribution, so its
    perplexity on any responses equals unigram_perplexity's; torch's default bias does not."""
    from trainers.seq2seq import Seq2SeqTask, parse_args

    def initial_perplexity(output_bias):
        args = parse_args(["--dataset", str(lowe_dataset), "--output-dir", "unused", "--dim", "8",
                           "--output-bias", output_bias])
        task = Seq2SeqTask(args)
        task.accelerator = type("CPU", (), {"device": "cpu"})()
        model = task.build(task.accelerator)
        with torch.no_grad():
            model.output.weight.zero_()
        rows = task.validation
        examples = [(row["context"], row["response"], [0] * len(row["context"])) for row in rows]
        batch = collate(task.vocab, examples, args.max_utterance_tokens, args.max_response_tokens)
        model.eval()
        nll = token_nll(model(batch), batch)
        perplexity = float(torch.exp(nll.sum() / batch.target_mask.sum()))
        baseline = unigram_perplexity(task.vocab, [row["response"] for row in task.train_rows],
                                      [row["response"] for row in rows], args.max_response_tokens)
        return perplexity, baseline["perplexity"]

    ours, baseline = initial_perplexity("unigram")
    assert ours == pytest.approx(baseline, rel=1e-5)
    ours, baseline = initial_perplexity("default")
    assert ours != pytest.approx(baseline, rel=1e-2)
