"""The GPU bundle on CPU: create it, run its steps through run.sh from the bundle alone, report the returned logits."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_ranker import make_dataset_folder

from dialshift.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    root = tmp_path_factory.mktemp("bundle")
    folder = make_dataset_folder(root / "dialshift")
    out = root / "gpu-bundle"
    assert cli(["bundle", "create", "--dataset", str(folder), "--out", str(out), "--model", "tiny", "--seeds", "2",
                "--dropout-passes", "2", "--max-length", "64", "--max-train-instances", "24", "--no-wheels",
                "--configs", "dailydialog", "uw_*", "ic_*", "sr_*", "--no-progress"]) == 0
    return root, folder, out


def run_sh(bundle_dir: Path, step: str, out: Path, work: Path):
    """run.sh with this interpreter, no PYTHONPATH and a cwd outside the repository: only the bundle's code."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHON=sys.executable, DIALSHIFT_WORK=str(work), OUT=str(out))
    return subprocess.run(["bash", str(bundle_dir / "run.sh"), step], cwd=work.parent, env=env, capture_output=True,
                          text=True)


@pytest.fixture(scope="module")
def returned(bundle):
    """lee-train-0 through run.sh (the bundle alone), then the other steps in-process on the same work folder."""
    root, _, out = bundle
    work, back = root / "work", root / "returned"
    work.mkdir()
    result = run_sh(out, "lee-train-0", back, work)
    assert result.returncode == 0, result.stderr[-2000:]
    for step in ("lee-dropout-0", "lee-fp32-0", "lee-train-1"):
        assert cli(["bundle", "run", str(out), step, "--out", str(back), "--work", str(work)]) == 0
    return back, work


def test_bundle_is_small_and_self_describing(bundle):
    _, _, out = bundle
    manifest = json.loads((out / "bundle.json").read_text())
    assert manifest["total_bytes"] < 60 * 2**20
    assert [w.split("-")[0] for w in manifest["wheels"]] == ["dialshift"]
    import pyarrow as pa
    from safetensors.torch import load

    packed = (out / "backbone" / "model.safetensors.zst").read_bytes()
    weights = load(pa.Codec("zstd").decompress(packed[8:], decompressed_size=int.from_bytes(packed[:8], "little"),
                                               asbytes=True))
    assert {str(v.dtype) for v in weights.values() if v.is_floating_point()} == {"torch.float16"}
    names = [s["name"] for s in manifest["steps"]]
    assert names[:4] == ["smoke", "lee-train-0", "lee-dropout-0", "lee-fp32-0"] and "lee-dropout-1" in names
    assert all(len(s["returns"]) <= 8 and max(s["return_bytes"].values()) <= 16_000_000 for s in manifest["steps"])
    assert (out / "trainers" / "ranker.py").is_file() and os.access(out / "run.sh", os.X_OK)


def test_slim_splits_read_like_the_dataset(bundle):
    from dialshift.ranking.data import load_split

    _, folder, out = bundle
    for config in ("dailydialog", "uw_0.10", "sr_3"):
        assert load_split(out / "data", config, "test") == load_split(folder, config, "test")
    full, slim = load_split(folder, "dailydialog", "train"), load_split(out / "data", "dailydialog", "train")
    assert slim["id"] == full["id"] and slim["context"] == full["context"]
    assert [c[0] for c in slim["candidates"]] == [c[k] for c, k in zip(full["candidates"], full["label"], strict=True)]


def test_steps_run_from_the_bundle_alone(returned, bundle):
    back, work = returned
    description = json.loads((back / "lee-train-0.json").read_text())
    assert description["dialshift_from"].startswith(str(work))  # the wheel installed from the bundle, not the repo
    assert description["training"]["steps"] == 2 and description["scoring"]["device"] == "cpu"
    with np.load(back / "lee-train-0.npz") as z:
        assert z["test/uw_0.10"].shape == (18, 10) and z["validation"].shape == (18, 10)
        assert np.isfinite(z["test/dailydialog"]).all()
    assert len(list(work.glob("encoded-*.npz"))) == 1  # one encoding per machine, reused by the later steps
    assert sorted(p.name for p in back.glob("lee-dropout-0*")) == ["lee-dropout-0-p0.npz", "lee-dropout-0-p1.npz",
                                                                    "lee-dropout-0.json"]


def test_dropout_step_without_its_ranker_fails_in_one_line(bundle, tmp_path, capsys):
    _, _, out = bundle
    code = cli(["bundle", "run", str(out), "lee-dropout-1", "--out", str(tmp_path / "back"), "--work",
                str(tmp_path / "work")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "run step lee-train-1 first" in err and "\n" not in err


def test_report_scores_returned_logits_like_evaluate(returned, bundle, tmp_path):
    """The report's vanilla seed-0 predictions equal `dialshift evaluate` on the same ranker (fp32 on CPU)."""
    back, work = returned
    root, folder, _ = bundle
    out = tmp_path / "report"
    assert cli(["bundle", "report", str(back), "--dataset", str(folder), "--out", str(out), "--bootstrap", "50",
                "--no-plots", "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["methods"]) == {"vanilla", "temperature", "dropout", "ensemble", "vanilla_fp32"}
    assert summary["methods"]["vanilla"]["seeds"] == [0, 1]
    assert all(v == 0 for row in summary["precision"]["differences"].values() for v in row.values())  # CPU: fp32
    t = summary["temperatures"]["0"] if "0" in summary["temperatures"] else summary["temperatures"][0]
    assert t["temperature"] == pytest.approx(t["remote"], rel=1e-6)
    markdown = (out / "results.md").read_text()
    assert "## ensemble" in markdown and "uw_0.20" in markdown and "Precision check" in markdown

    evaluated = tmp_path / "evaluated"
    assert cli(["evaluate", "--model-dir", str(work / "lee-seed0"), "--dataset", str(folder), "--configs",
                "dailydialog", "uw_0.10", "--out", str(evaluated), "--no-progress", "--no-plots"]) == 0
    for config in ("dailydialog", "uw_0.10"):
        ours = [json.loads(line) for line in (out / "seed0/vanilla/predictions" / f"{config}.jsonl").open()]
        theirs = [json.loads(line) for line in (evaluated / "vanilla/predictions" / f"{config}.jsonl").open()]
        assert [r["id"] for r in ours] == [r["id"] for r in theirs]
        assert np.allclose([r["probabilities"] for r in ours], [r["probabilities"] for r in theirs], atol=2e-6)
    document = json.loads((out / "ensemble" / "results.json").read_text())
    assert document["run"]["method"] == "ensemble" and document["run"]["seeds"] == [0, 1]


def test_report_refuses_another_dataset(returned, tmp_path):
    back, _ = returned
    other = make_dataset_folder(tmp_path / "other")
    # the same generator makes the same ids: change one config's ids
    import pyarrow.parquet as pq

    from dialshift.hub import data_files

    path = data_files(other)["uw_0.10"]["test"][0]
    table = pq.read_table(path)
    pq.write_table(table.slice(1), path)
    code = cli(["bundle", "report", str(back), "--dataset", str(other), "--out", str(tmp_path / "r"), "--no-plots",
                "--no-progress", "--bootstrap", "10"])
    assert code == 2


def test_a_bundle_over_the_limit_leaves_nothing_behind(bundle, tmp_path):
    from dialshift.bundle import Protocol, create_bundle
    from dialshift.errors import DialshiftError

    _, dataset, _ = bundle
    out = tmp_path / "too-big"
    with pytest.raises(DialshiftError, match="over the 0 MiB limit"):
        create_bundle(dataset, out, Protocol(), backbone="tiny", wheels=False, limit_bytes=1, progress=False)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".too-big")]
