"""The ranker trainer under ``accelerate launch`` with two CPU processes (torchrun through ``--multi_gpu`` with
``ACCELERATE_USE_CPU``: Accelerate's CPU multi-process mode, gloo), on a tiny random BERT and the synthetic folder of
``test_ranker``: it trains, each process computes the validation outputs of half the rows, the gathered outputs
hold every row once and in order, and the main process alone writes one model folder."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.test_ranker import make_dataset_folder

pytestmark = pytest.mark.slow  # launches training processes: tens of CPU seconds

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def two_process_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("two")
    dataset, out = make_dataset_folder(root / "hub"), root / "model"
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               str(ROOT / "trainers" / "ranker.py"), "--dataset", str(dataset), "--output-dir", str(out),
               "--model", "tiny", "--max-length", "48", "--batch-size", "8", "--learning-rate", "1e-3", "--seed", "5",
               "--max-train-instances", "17", "--eval-steps", "2", "--no-progress"]
    launch = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                              start_new_session=True)
    try:
        _, log = launch.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(launch.pid, signal.SIGKILL)  # the launcher and both workers
        launch.communicate()
        pytest.fail("the two-process run did not finish in 300 s")
    assert launch.returncode == 0, log[-3000:]
    return dataset, out, log


def test_two_processes_share_the_validation_rows(two_process_run):
    _, out, log = two_process_run
    shares = {int(index): (int(rows), int(total)) for index, rows, total in
              re.findall(r"process (\d): validation outputs of (\d+) of (\d+) rows", log)}
    assert sorted(shares) == [0, 1]
    total = shares[0][1]
    assert shares[0][1] == shares[1][1] == 18 and shares[0][0] + shares[1][0] == total
    assert all(rows < total for rows, _ in shares.values())  # neither process validated every row


def test_two_processes_write_one_trained_model(two_process_run):
    from safetensors.numpy import load_file

    from dialshift.models.backbones import load_backbone

    _, out, _ = two_process_run
    assert sorted(p.name for p in out.iterdir()) == [
        ".dialshift-output", "config.json", "dialshift_model.json", "model.safetensors", "tokenizer.json",
        "tokenizer_config.json", "validation_logits.npy"]
    meta = json.loads((out / "dialshift_model.json").read_text())
    # 17 instances, batch 8: the last batch has one row, so process 1 trains on none of it
    assert meta["steps"] == 3 and [h["step"] for h in meta["history"]] == [2, 3]
    assert meta["train_instances"] == 17 and all(np.isfinite(h["validation_recall@1"]) for h in meta["history"])
    initial, _, _ = load_backbone("tiny", 5)
    trained = load_file(out / "model.safetensors")
    name = "classifier.weight"
    assert all(np.isfinite(value).all() for value in trained.values())
    assert not np.allclose(trained[name], initial.state_dict()[name].numpy())


def test_gathered_validation_logits_are_every_row_once_in_order(two_process_run):
    """The saved validation logits (gathered from both processes) equal the selected model's logits of every
    validation row computed in one process."""
    from dialshift.models.ranker import load_ranker
    from dialshift.ranking.data import load_split
    from dialshift.ranking.inference import instance_pairs, score_pairs

    dataset, out, _ = two_process_run
    validation = load_split(dataset, "dailydialog", "validation")
    ranker = load_ranker(out)
    logits = score_pairs(ranker, instance_pairs(validation), 64, progress=False).reshape(len(validation["id"]), -1)
    saved = np.load(out / "validation_logits.npy")
    assert saved.shape == logits.shape == (18, 10)
    assert np.allclose(saved, logits, atol=1e-5)
    meta = json.loads((out / "dialshift_model.json").read_text())
    recall = float(np.mean(logits.argmax(axis=1) == np.asarray(validation["label"])))
    assert meta["validation"]["recall@1"] == pytest.approx(recall)
