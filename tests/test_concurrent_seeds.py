"""Seeds side by side (dialshift.training.concurrent): each stacked seed ends where training it alone ends."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROWS, CANDIDATES, STEPS = 3, 4, 3


def ranker_batch(seed: int, step: int, vocab: int) -> dict:
    """A batch of ROWS instances x CANDIDATES pairs of random tokens and lengths, padded to its own longest pair."""
    rng = np.random.default_rng([seed, step])
    lengths = rng.integers(4, 17, size=ROWS * CANDIDATES)
    ids = np.zeros((len(lengths), lengths.max()), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, length in enumerate(lengths):
        ids[row, :length] = rng.integers(5, vocab, size=length)
        mask[row, :length] = 1
    return {"input_ids": torch.as_tensor(ids), "attention_mask": torch.as_tensor(mask),
            "token_type_ids": torch.zeros_like(torch.as_tensor(ids))}


def ranking_loss(call, batch):
    """Lee et al.'s loss: cross-entropy of the softmax over each instance's candidates, the gold one first."""
    logits = call(**batch).logits[:, 0].reshape(ROWS, CANDIDATES)
    return torch.nn.functional.cross_entropy(logits, torch.zeros(ROWS, dtype=torch.long))


def test_stacked_seeds_train_to_the_parameters_of_each_seed_alone():
    """Tiny BERT rankers, dropout off, AdamW at lr 1e-3 (large enough to move every weight), 3 steps: the stacked
    path gives each seed the parameters of training it alone on the same batches."""
    from dialshift.models.backbones import load_backbone
    from dialshift.training.concurrent import StackedSeeds, stack_batches

    seeds = (0, 1)
    models = [load_backbone("tiny", seed)[0] for seed in seeds]
    vocab = models[0].config.vocab_size
    start = [{k: v.clone() for k, v in m.state_dict().items()} for m in models]
    stacked = StackedSeeds(models, ranking_loss, learning_rate=1e-3)
    for step in range(STEPS):
        losses = stacked.step(stack_batches([ranker_batch(seed, step, vocab) for seed in seeds]))
        assert losses.shape == (len(seeds),) and torch.isfinite(losses).all()

    for index, seed in enumerate(seeds):
        alone = load_backbone("tiny", seed)[0].eval()
        optimizer = torch.optim.AdamW(alone.parameters(), lr=1e-3, weight_decay=0.0)
        for step in range(STEPS):
            loss = ranking_loss(lambda **inputs: alone(**inputs), ranker_batch(seed, step, vocab))  # noqa: B023
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        got = stacked.state_dict(index)
        moved = 0
        for name, value in alone.state_dict().items():
            if name == "classifier.bias":
                # its gradient is 0 in exact arithmetic (a softmax over candidates ignores a shift shared by all of
                # them), so Adam turns rounding noise of either sign into steps of +-lr: no scale of tolerance holds,
                # and the bias changes no ranking, loss or probability
                continue
            torch.testing.assert_close(got[name], value, rtol=1e-4, atol=1e-5, msg=f"seed {seed}: {name}")
            moved += not torch.equal(value, start[index][name])
        assert moved > 10  # the check compares trained weights, not the initial ones
    # the seeds stayed apart: seed 0 and seed 1 differ
    assert not torch.allclose(stacked.state_dict(0)["classifier.weight"], stacked.state_dict(1)["classifier.weight"])



def test_stacked_batches_pad_each_seed_to_the_longest():
    from dialshift.training.concurrent import stack_batches

    a = {"input_ids": torch.ones(2, 3, dtype=torch.long)}
    b = {"input_ids": torch.ones(2, 5, dtype=torch.long)}
    out = stack_batches([a, b], {"input_ids": 7})["input_ids"]
    assert out.shape == (2, 2, 5) and out[0, :, 3:].eq(7).all() and out[1].eq(1).all()
