"""DRiFt debiasing (Han et al. 2021 §3): the Jaccard features, the loss identity of Appendix A, gradient isolation,
the UMS examples, and a few steps of every variant of trainers/debias.py on the tiny model (real data: ``data``)."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dialshift.models.debias import (  # noqa: E402
    BiasFeatures,
    drift_loss,
    drift_loss_decomposed,
    jaccard,
    train_biased_model,
    ums_examples,
)


class WhitespaceTokenizer:
    """Subword stand-in: one id per whitespace token (enough to check which sets are compared)."""

    def __init__(self):
        self.vocab = {}

    def __call__(self, texts, add_special_tokens=False):
        return {"input_ids": [[self.vocab.setdefault(word, len(self.vocab)) for word in text.split()]
                              for text in texts]}


@pytest.fixture(scope="module")
def features():
    pytest.importorskip("kiwipiepy")
    return BiasFeatures(WhitespaceTokenizer())


def test_jaccard():
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard([], []) == 0.0 and jaccard(["a", "a"], ["a"]) == 1.0


def test_features_on_hand_made_korean_pairs(features):
    context = ("나 배고파", "뭐 먹고 싶어?")
    repetition, fitting = "나 배고파", "치킨 먹고 싶어!"
    rows = features([(context, repetition), (context, fitting), (context, "완전히 다른 이야기")])
    # JS over whole context vs response, then last utterance vs response; morphemes (0, 1) then subwords (2, 3)
    # the repetition copies the first turn; with the last it shares only the sentence ending 어/EF
    assert rows[0, 1] < rows[0, 0]
    assert features._morphs["나 배고파"] & features._morphs["뭐 먹고 싶어?"] == {"어/EF"}
    assert rows[0, 2] == pytest.approx(2 / 5) and rows[0, 3] == 0.0  # {나, 배고파} of {나, 배고파, 뭐, 먹고, 싶어?}
    assert rows[1, 1] > 0 and rows[1, 3] == pytest.approx(1 / 5)  # 먹고 shared with the last turn ({먹고} of 5)
    morphs = features._morphs["치킨 먹고 싶어!"]
    assert "먹/VV" in morphs and "싶/VX" in morphs  # morphemes with their tags: 먹고 -> 먹 + 고
    assert rows[2, 2] == 0.0 and rows[2, 3] == 0.0
    assert features([((), "응")])[0].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_drift_loss_equals_appendix_a_and_reaches_only_the_debiased_model():
    generator = torch.Generator().manual_seed(0)
    features = torch.rand(32, 4, generator=generator)
    labels = torch.randint(0, 2, (32,), generator=generator)
    biased = torch.nn.Linear(4, 2)
    debiased = torch.randn(32, 2, generator=generator, requires_grad=True)
    b = biased(features)
    loss = drift_loss(b, debiased, labels)
    assert loss.item() == pytest.approx(drift_loss_decomposed(b, debiased, labels).item(), rel=1e-6)
    assert loss.item() == pytest.approx(torch.nn.functional.cross_entropy(b + debiased, labels).item(), rel=1e-6)
    loss.backward()
    assert biased.weight.grad is None and biased.bias.grad is None  # no gradient to the biased model
    assert debiased.grad is not None and debiased.grad.abs().sum() > 0
    # the gradient is that of CE(softmax(b + d)) with respect to d: softmax(b + d) - onehot(y), over the batch
    expected = (torch.softmax(b.detach() + debiased.detach(), -1) - torch.nn.functional.one_hot(labels, 2)) / 32
    torch.testing.assert_close(debiased.grad, expected)


def test_biased_model_learns_overlap_and_is_frozen():
    rng = np.random.default_rng(0)
    overlap = rng.random((512, 4)).astype(np.float32)
    labels = (overlap.mean(axis=1) > 0.5).astype(np.int64)  # positives overlap more: the bias to be captured
    model, accuracy = train_biased_model(overlap, labels, seed=0, learning_rate=5e-2, epochs=30)
    assert accuracy > 0.8
    assert not any(p.requires_grad for p in model.parameters())


def test_ums_examples_have_the_right_gold():
    rng = np.random.default_rng(0)
    context = ["a", "b", "c", "d"]
    for _ in range(20):
        turns, second, gaps, gold = ums_examples(context, "r", "insertion", rng)
        assert turns[:gold] + [second] + turns[gold:] == context and gaps == list(range(4))
        turns, second, gaps, gold = ums_examples(context, "r", "deletion", rng, other_utterance="x")
        assert turns[gold] == "x" and [t for t in turns if t != "x"] == context and second == "r"
        turns, second, gaps, gold = ums_examples(context, "r", "search", rng)
        assert turns[-1] == "d" and turns[gold] == "c" and sorted(turns[:-1]) == ["a", "b", "c"]
    assert ums_examples(["a"], "r", "insertion", rng) is None and ums_examples(["a", "b"], "r", "search", rng) is None
    with pytest.raises(ValueError, match="unknown UMS task"):
        ums_examples(context, "r", "shuffle", rng)


# --- the trainer on the tiny model --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def korean_dataset(raw_data_dir, tmp_path_factory):
    from dialshift.cli import main

    out = tmp_path_factory.mktemp("korean") / "ds"
    assert main(["build", "--family", "korean", "--out", str(out), "--no-progress", "--data-dir", str(raw_data_dir),
                 "--config", "kor_adv", "--config", "kor_chitchat"]) == 0
    return out


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("flags", [[], ["--debias"], ["--ums"], ["--ums", "--debias"]])
def test_each_variant_trains_a_few_steps(korean_dataset, tmp_path, flags):
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    from trainers import debias

    out = tmp_path / "model"
    argv = ["--dataset", str(korean_dataset), "--output-dir", str(out), "--model", "tiny", "--num-epochs", "1",
            "--max-train-instances", "24", "--batch-size", "8", "--max-eval-instances", "6", "--max-length", "48",
            "--no-progress", *flags]
    predictions = tmp_path / "predictions"
    if flags == ["--ums", "--debias"]:
        argv += ["--predictions", str(predictions), "--max-test-instances", "12"]
    assert debias.main(argv) == 0
    meta = json.loads((out / "dialshift_model.json").read_text())
    assert meta["variant"] == {(): "baseline", ("--debias",): "+deb", ("--ums",): "+UMS",
                               ("--ums", "--debias"): "+UMS+deb"}[tuple(flags)]
    assert meta["train_pairs"] == 48 and (meta["biased_model"] is not None) == ("--debias" in flags)
    assert not any("ums_head" in key for key in __import__("safetensors.torch").torch.load_file(
        str(out / "model.safetensors")))
    if predictions.exists():
        adversarial = json.loads((predictions / "kor_adv/results.json").read_text())["results"]["kor_adv"]
        assert adversarial["instances"] == 2_220 and "accuracy/repetition" in adversarial and "ece" in adversarial
        in_domain = json.loads((predictions / "kor_chitchat/results.json").read_text())["results"]["kor_chitchat"]
        assert in_domain["instances"] == 12 and "recall@1" in in_domain
