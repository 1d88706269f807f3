"""The training runner (dialshift.training) on a toy task: a tiny linear model with dropout on synthetic data."""

import json
import shutil

import numpy as np
import pytest

from dialshift.errors import DialshiftError
from dialshift.training import (
    MODEL_FILE,
    Task,
    TrainingArguments,
    pad_batch,
    process_share,
    read_model_meta,
    resolve_checkpoint,
    sorted_batches,
    train,
)
from dialshift.training.runner import share_size


class ToyRegression(Task):
    """y = x @ w + noise; batches of 5 rows in a seeded order; score = -MSE on a validation set (higher is better).

    ``scores`` replaces the validation score by a fixed sequence (to test selection); every validation call keeps a
    copy of the weights it saw in ``seen``.
    """

    name, metric = "toy_regression", "neg_mse"

    def __init__(self, scores=None, rows: int = 40, batch: int = 5, dropout: float = 0.2):
        rng = np.random.default_rng(0)
        self.x = rng.normal(size=(rows + 20, 4)).astype(np.float32)
        self.y = (self.x @ np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32))[:, None]
        self.rows, self.scores, self.seen = rows, list(scores or []), []
        self.batch, self.dropout, self.rates = batch, dropout, []

    def build(self, accelerator):
        import torch

        return torch.nn.Sequential(torch.nn.Dropout(self.dropout), torch.nn.Linear(4, 1))  # dropout: RNG matters

    def optimizer(self, model, args):
        self.optimizer_ = super().optimizer(model, args)
        return self.optimizer_

    def epoch_batches(self, epoch, rng):
        order = rng.permutation(self.rows)
        return [order[i : i + self.batch] for i in range(0, self.rows, self.batch)]

    def loss(self, model, rows):
        import torch

        self.rates.append(self.optimizer_.param_groups[0]["lr"])  # the learning rate this batch is stepped with
        x, y = torch.from_numpy(self.x[rows]), torch.from_numpy(self.y[rows])
        return torch.nn.functional.mse_loss(model(x), y)

    def validation_size(self):
        return len(self.x) - self.rows

    def validation_outputs(self, model, rows):
        import torch

        model.eval()
        with torch.no_grad():
            predictions = model(torch.from_numpy(self.x[self.rows :][rows])).numpy()
        self.seen.append({k: v.detach().clone().numpy() for k, v in model.state_dict().items()})
        return {"predictions": predictions}

    def validation_score(self, outputs):
        predictions = outputs["predictions"]
        mse = float(np.mean((predictions - self.y[self.rows :]) ** 2))
        score = self.scores[len(self.seen) - 1] if self.scores else -mse
        return score, {"mse": mse, "predictions": predictions}

    def describe(self):
        return {"backbone": "linear-4", "rows": self.rows}

    def finalize(self, output_dir, selection):
        (output_dir / "artefact.txt").write_text(f"selected {selection.step}\n")
        return {"validation": {"predictions_mean": float(selection.arrays["predictions"].mean())}, "extra": 1}


def run(tmp_path, name, task=None, **overrides):
    options = {"learning_rate": 0.05, "seed": 3, "num_epochs": 2, "progress": False, **overrides}
    task = task or ToyRegression()
    meta = train(task, TrainingArguments(output_dir=tmp_path / name, **options))
    return task, meta, tmp_path / name


def weights(folder):
    return (folder / "model.safetensors").read_bytes()


def test_same_seed_same_weights_other_seed_other_weights(tmp_path):
    _, _, a = run(tmp_path, "a")
    _, _, b = run(tmp_path, "b")
    _, _, c = run(tmp_path, "c", seed=4)
    assert weights(a) == weights(b) != weights(c)


@pytest.mark.parametrize("checkpoint", ["step_6", "step_9", "latest"])
def test_resume_mid_epoch_gives_byte_identical_weights(tmp_path, checkpoint):
    _, full_meta, full = run(tmp_path, "full", checkpointing_steps=3, eval_steps=4)  # 8 steps per epoch, 16 in all
    assert sorted(p.name for p in (full / "checkpoints").iterdir()) == [f"step_{s}" for s in (12, 15, 3, 6, 9)]
    source = "latest" if checkpoint == "latest" else str(full / "checkpoints" / checkpoint)
    if checkpoint == "latest":  # a run interrupted after step 9 resumes in its own folder
        resumed = tmp_path / "full"
        for later in ("step_12", "step_15"):
            shutil.rmtree(full / "checkpoints" / later)
        reference = weights(full)
        (full / MODEL_FILE).unlink()
    else:
        resumed, reference = tmp_path / "resumed", weights(full)
    _, meta, _ = run(tmp_path, resumed.name, resume_from_checkpoint=source, eval_steps=4)
    assert weights(resumed) == reference
    assert np.array_equal(np.load(resumed / "validation_predictions.npy"), np.load(full / "validation_predictions.npy"))
    assert meta["history"] == full_meta["history"] and meta["selected_step"] == full_meta["selected_step"]
    assert meta["steps"] == 16


def test_selection_keeps_the_best_step_and_ties_keep_the_earlier(tmp_path):
    # validation after steps 4, 8 (epoch end), 12, 16: scores 0.1, 0.7, 0.7 (tie), 0.2 -> step 8
    task, meta, folder = run(tmp_path, "select", task=ToyRegression(scores=[0.1, 0.7, 0.7, 0.2]), eval_steps=4)
    from safetensors.numpy import load_file

    assert [h["step"] for h in meta["history"]] == [4, 8, 12, 16]
    assert meta["selected_step"] == meta["selection"]["step"] == 8 and meta["validation"]["neg_mse"] == 0.7
    saved = load_file(folder / "model.safetensors")
    assert all(np.array_equal(saved[k], task.seen[1][k]) for k in saved)
    assert not np.array_equal(saved["1.weight"], task.seen[-1]["1.weight"])  # not simply the last weights
    assert meta["validation"]["mse"] == meta["history"][1]["validation_mse"]
    assert (folder / "artefact.txt").read_text() == "selected 8\n"


def test_metadata_describes_the_model_folder(tmp_path):
    _, meta, folder = run(tmp_path, "meta", max_steps=5)
    on_disk = read_model_meta(folder)
    assert on_disk == {**meta, "format": "dialshift-model/1"}
    assert meta["task"] == "toy_regression" and meta["model_class"] == "torch.nn.modules.container.Sequential"
    assert meta["backbone"] == "linear-4" and meta["rows"] == 40 and meta["extra"] == 1 and meta["seed"] == 3
    assert meta["training"]["learning_rate"] == 0.05 and "output_dir" not in meta["training"]
    assert {"python", "dialshift", "torch", "accelerate", "numpy"} <= set(meta["versions"])
    assert meta["steps"] == 5 and meta["train_steps_per_second"] > 0
    assert set(meta["validation"]) == {"neg_mse", "mse", "predictions_mean"}
    assert meta["validation"]["neg_mse"] == pytest.approx(-meta["validation"]["mse"])
    assert [h["step"] for h in meta["history"]] == [5]  # max_steps stops mid-epoch and validates there
    with pytest.raises(DialshiftError, match="not 'ranking'"):
        read_model_meta(folder, task="ranking")


def test_resume_errors_are_one_line(tmp_path):
    with pytest.raises(DialshiftError, match="no checkpoint to resume from"):
        resolve_checkpoint(tmp_path, "latest")
    with pytest.raises(DialshiftError, match="not a trainer checkpoint"):
        resolve_checkpoint(tmp_path, str(tmp_path))
    run(tmp_path, "a", checkpointing_steps=4, max_steps=4)
    with pytest.raises(DialshiftError, match="other seed"):
        run(tmp_path, "a", seed=9, resume_from_checkpoint="latest")
    assert not (tmp_path / "missing").exists()
    with pytest.raises(DialshiftError, match="does not exist"):
        read_model_meta(tmp_path / "missing")


def test_gradient_accumulation_steps_like_the_larger_batch(tmp_path):
    # 8 batches of 5 rows in groups of 3 (3, 3, 2): the rows and mean losses of batches of 15, 15 and 10
    _, large_meta, large = run(tmp_path, "large", task=ToyRegression(batch=15, dropout=0.0))
    _, meta, accumulated = run(tmp_path, "accumulated", task=ToyRegression(batch=5, dropout=0.0),
                               gradient_accumulation_steps=3)
    from safetensors.numpy import load_file

    assert meta["steps"] == large_meta["steps"] == 6 and [h["step"] for h in meta["history"]] == [3, 6]
    a, b = load_file(large / "model.safetensors"), load_file(accumulated / "model.safetensors")
    assert all(np.allclose(a[k], b[k], rtol=1e-5, atol=1e-6) for k in a)
    assert meta["training"]["gradient_accumulation_steps"] == 3


def test_resume_mid_epoch_with_accumulation_is_byte_identical(tmp_path):
    _, _, full = run(tmp_path, "full", gradient_accumulation_steps=3, checkpointing_steps=2)  # 3 steps per epoch
    _, meta, resumed = run(tmp_path, "resumed", gradient_accumulation_steps=3,
                           resume_from_checkpoint=str(full / "checkpoints" / "step_2"))
    assert weights(resumed) == weights(full) and meta["steps"] == 6
    with pytest.raises(DialshiftError, match="other gradient_accumulation_steps"):
        run(tmp_path, "again", resume_from_checkpoint=str(full / "checkpoints" / "step_2"))


def test_learning_rate_follows_the_schedule_with_warmup(tmp_path):
    task, meta, _ = run(tmp_path, "linear", lr_scheduler_type="linear", num_warmup_steps=4)  # 16 steps
    expected = [0.05 * (t / 4 if t < 4 else (16 - t) / 12) for t in range(16)]
    assert task.rates == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert meta["training"]["lr_scheduler_type"] == "linear" and meta["training"]["num_warmup_steps"] == 4
    constant, _, _ = run(tmp_path, "constant")
    assert constant.rates == [0.05] * 16
    with pytest.raises(DialshiftError, match="constant_with_warmup"):
        TrainingArguments(output_dir=tmp_path / "x", learning_rate=0.1, num_warmup_steps=2)


def test_plateau_factor_scales_the_rate_and_survives_resume(tmp_path):
    class Plateau(ToyRegression):
        plateau_lr_factor = 0.5

    # validation after steps 4, 8, 12, 16: 0.1, 0.05 (worse: halve), 0.2, 0.2 (a tie is no better: halve)
    task, meta, full = run(tmp_path, "full", task=Plateau(scores=[0.1, 0.05, 0.2, 0.2]), eval_steps=4,
                           checkpointing_steps=5)
    assert task.rates == [0.05] * 8 + [0.025] * 8
    state = json.loads((full / "checkpoints" / "step_15" / "trainer_state.json").read_text())
    assert state["lr_scale"] == 0.5
    resumed_task, meta_b, resumed = run(tmp_path, "resumed", task=Plateau(scores=[0.2, 0.2]), eval_steps=4,
                                        resume_from_checkpoint=str(full / "checkpoints" / "step_10"))
    assert resumed_task.rates == [0.025] * 6 and weights(resumed) == weights(full)
    assert meta_b["history"] == meta["history"]


def test_tensorboard_tracker_logs_under_runs_and_stays_out_of_checkpoints(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _, meta, folder = run(tmp_path, "tracked", report_to="tensorboard", checkpointing_steps=8)
    [events] = (folder / "runs" / "toy_regression").glob("events.out.tfevents.*")
    scalars = EventAccumulator(str(events)).Reload()
    logged = set(scalars.Tags()["scalars"])
    assert {"validation/neg_mse", "validation/mse", "train/loss", "train/learning_rate"} <= logged
    assert [event.step for event in scalars.Scalars("validation/neg_mse")] == [8, 16]
    assert scalars.Scalars("validation/neg_mse")[-1].value == pytest.approx(meta["validation"]["neg_mse"])
    assert "report_to" not in meta["training"]
    assert not (folder / "checkpoints" / "step_8" / "best" / "runs").exists()


def test_a_missing_tracker_is_one_line(tmp_path):
    import argparse

    from dialshift.training.arguments import tracker

    if __import__("importlib.util").util.find_spec("wandb") is not None:
        pytest.skip("wandb is installed here")
    with pytest.raises(DialshiftError, match="--report-to wandb: no such tracker is installed"):
        run(tmp_path, "wandb", report_to="wandb")
    assert not (tmp_path / "wandb").exists()
    assert tracker("tensorboard") == "tensorboard"
    with pytest.raises(argparse.ArgumentTypeError, match="one of none, all, "):
        tracker("tensorbored")


def test_process_share_slices_arrays_and_keeps_numbers():
    batch = ({"rows": np.arange(5), "outliers": [7, 8, 9], "pair_seed": 11}, 3, np.arange(10).reshape(5, 2))
    share = process_share(batch, 1, 2)
    assert share[0]["rows"].tolist() == [1, 3] and share[0]["outliers"] == [8] and share[0]["pair_seed"] == 11
    assert share[1] == 3 and share[2].tolist() == [[2, 3], [6, 7]]
    assert process_share(batch, 0, 1) is batch
    shares = [process_share(np.arange(7), index, 3) for index in range(3)]
    assert sorted(np.concatenate(shares).tolist()) == list(range(7))
    assert share_size(share) == 2 and share_size((3, {"seed": 1})) is None
    assert share_size(process_share((np.arange(1), 5), 1, 2)) == 0


def test_sorted_batches_and_padding():
    lengths = [5, 2, 9, 2, 7]
    batches = sorted_batches(lengths, 2)
    assert [b.tolist() for b in batches] == [[1, 3], [0, 4], [2]]
    assert sorted(np.concatenate(batches).tolist()) == list(range(5))
    with pytest.raises(ValueError):
        sorted_batches(lengths, 0)
    batch = pad_batch([[1, 2, 3], [4]], pad_id=0, first_segment_lengths=[2, 1])
    assert batch["input_ids"].tolist() == [[1, 2, 3], [4, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["token_type_ids"].tolist() == [[0, 0, 1], [0, 0, 0]]
    assert "token_type_ids" not in pad_batch([[1]], pad_id=0)


def test_atomic_json_write(tmp_path):
    from dialshift.io import atomic_write, write_json_atomic

    path = write_json_atomic(tmp_path / "sub" / "a.json", {"b": 1, "a": [1, 2]})
    assert path.read_text() == json.dumps({"a": [1, 2], "b": 1}, indent=2) + "\n"
    atomic_write(path, b"raw")
    assert path.read_bytes() == b"raw" and [p.name for p in path.parent.iterdir()] == ["a.json"]


@pytest.mark.parametrize("name", ["ranker", "open_world", "seq2seq", "debias"])
def test_every_trainer_says_how_the_installed_module_runs(name, capsys):
    """`--help` names the installed module (`accelerate launch -m dialshift_trainers.<name>`), as the README does."""
    import importlib

    trainer = importlib.import_module(f"dialshift_trainers.{name}")
    with pytest.raises(SystemExit):
        trainer.parse_args(["--help"])
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: accelerate launch -m dialshift_trainers.{name} ")
    assert f"python -m dialshift_trainers.{name} " in shown and f"trainers/{name}.py of a source checkout" in shown
    assert "--resume-from-checkpoint" in shown
