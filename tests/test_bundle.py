"""The GPU bundle on CPU: create it, run its steps through run.sh from the bundle alone, report the returned logits."""

import json
import os
import shutil
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


def run_sh(bundle_dir: Path, step: str, out: Path, work: Path, *options: str):
    """run.sh with this interpreter, no PYTHONPATH and a cwd outside the repository: only the bundle's code."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHON=sys.executable, DIALSHIFT_WORK=str(work), OUT=str(out))
    return subprocess.run(["bash", str(bundle_dir / "run.sh"), step, *options], cwd=work.parent, env=env,
                          capture_output=True, text=True)


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


def test_a_lease_runs_whole_seeds_by_its_deadline_and_the_next_resumes(returned, bundle, tmp_path):
    """Lease 1 (in-process, a clock that runs each step at twice its estimate) resumes from the returned seed-0
    steps and lee-train-1, runs smoke, and leaves seed 1 whole: its projected time no longer fits. Lease 2 through
    run.sh resumes from both folders: it retrains seed 1 off the returned files and returns only lee-dropout-1."""
    from dialshift.bundle.lease import run_lease, summary_line
    from dialshift.bundle.steps import run_step
    from dialshift.returned import find_returned

    back, _ = returned
    _, _, out = bundle
    steps = {s["name"]: s for s in json.loads((out / "bundle.json").read_text())["steps"]}
    now = [1000.0]

    def slow_step(bundle_dir, step, target, work, progress=False):
        now[0] += 2 * steps[step]["seconds"]
        return run_step(bundle_dir, step, target, work, progress=progress)

    first, second = tmp_path / "lease1", tmp_path / "lease2"
    deadline = 2 * steps["smoke"]["seconds"] + 1  # smoke fits at the assumed speed; seed 1 not at the measured one
    os.environ["DIALSHIFT_LEASE_START"] = "1000"
    try:
        summary = run_lease(out, first, tmp_path / "work1", deadline, [back], clock=lambda: now[0],
                            run_step=slow_step)
    finally:
        del os.environ["DIALSHIFT_LEASE_START"]
    assert summary["ran"] == ["smoke"] and summary["left"] == ["lee-train-1", "lee-dropout-1"]
    assert summary["speed_factor"] == 2.0 and summary["left_leases"] == 1
    assert summary["skipped_returned"] == ["lee-dropout-0", "lee-fp32-0", "lee-train-0", "lee-train-1"]
    assert sorted(p.name for p in first.iterdir()) == ["lease.jsonl", "smoke.json"]
    assert "left: 2 steps" in summary_line(summary)

    result = run_sh(out, "lease", second, tmp_path / "work2", "--resume", str(back), str(first))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ran lee-dropout-1 in" in result.stdout and "nothing left" in result.stdout
    assert sorted(p.name for p in second.iterdir()) == ["lease.jsonl", "lee-dropout-1-p0.npz",
                                                        "lee-dropout-1-p1.npz", "lee-dropout-1.json"]
    lines = [json.loads(line) for line in (second / "lease.jsonl").read_text().splitlines()]
    assert [line["ran"] for line in lines] == [["smoke"], ["lee-dropout-1"]] and lines[1]["left"] == []
    assert set(find_returned([back, second])) == {"lee-train-0", "lee-dropout-0", "lee-fp32-0", "lee-train-1",
                                                  "lee-dropout-1"}  # lease.jsonl is no stray file

    root = tmp_path / "returned"
    shutil.copytree(back, root / "lee")
    plan = subprocess.run([sys.executable, "-m", "dialshift", "bundle", "plan", str(out), "--paper", "lee",
                           "--returned", str(root)], capture_output=True, text=True, check=True).stdout
    assert "by the last measured figures" in plan and "returned:" in plan and "lee-train-1 + lee-dropout-1" in plan
    assert "by the assumed figures" in cli_output(["bundle", "plan", str(out), "--returned", str(tmp_path / "no")])


def cli_output(argv) -> str:
    return subprocess.run([sys.executable, "-m", "dialshift", *argv], capture_output=True, text=True,
                          check=True).stdout


def test_a_unit_over_the_whole_deadline_is_named_and_never_started(bundle, tmp_path):
    from dialshift.bundle.lease import run_lease, summary_line

    _, _, out = bundle
    steps = {s["name"]: s for s in json.loads((out / "bundle.json").read_text())["steps"]}
    seed0 = sum(steps[n]["seconds"] for n in ("lee-train-0", "lee-dropout-0", "lee-fp32-0"))
    now, calls = [0.0], []

    def step_at_its_estimate(bundle_dir, step, target, work, progress=False):
        calls.append(step)
        now[0] += steps[step]["seconds"]

    deadline = seed0 - 1  # smoke fits, seed 0 never does, seed 1 no longer does after smoke
    seed1 = steps["lee-train-1"]["seconds"] + steps["lee-dropout-1"]["seconds"]
    assert seed1 <= deadline < steps["smoke"]["seconds"] + seed1
    os.environ["DIALSHIFT_LEASE_START"] = "0"
    try:
        summary = run_lease(out, tmp_path / "back", tmp_path / "work", deadline, clock=lambda: now[0],
                            run_step=step_at_its_estimate)
    finally:
        del os.environ["DIALSHIFT_LEASE_START"]
    assert calls == ["smoke"] and summary["over_deadline"] == ["lee-train-0"] and summary["speed_factor"] == 1.0
    assert summary["left"] == ["lee-train-0", "lee-dropout-0", "lee-fp32-0", "lee-train-1", "lee-dropout-1"]
    assert "lee-train-0 and the steps that need it project over the deadline" in summary_line(summary)


def test_a_lease_with_no_time_runs_nothing_and_says_what_is_left(bundle, tmp_path, capsys):
    _, _, out = bundle
    assert cli(["bundle", "run", str(out), "lease", "--deadline", "1", "--out", str(tmp_path / "back"), "--work",
                str(tmp_path / "work")]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("lease: ran nothing") and "left: 6 steps" in line and "\n" not in line
    assert json.loads((tmp_path / "back" / "lease.jsonl").read_text())["ran"] == []


@pytest.mark.parametrize(("argv", "message"), [
    (["lease", "--resume", "NOPE"], "no such folder"), (["lease", "--deadline", "-3"], "give the seconds"),
    (["lee-train-0", "--deadline", "3"], "go with the step `lease` only")])
def test_bad_lease_options_are_one_line(argv, message, bundle, tmp_path, capsys):
    _, _, out = bundle
    argv = [str(tmp_path / a) if a == "NOPE" else a for a in argv]
    code = cli(["bundle", "run", str(out), *argv, "--out", str(tmp_path / "back"), "--work", str(tmp_path / "w")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and "\n" not in err


def test_seeds_trained_side_by_side_come_back_as_one_seed_steps(bundle, tmp_path):
    """--concurrent-seeds on: lee-train-0 (through run.sh) trains seeds 0 and 1 as one stacked computation; lee-train-1
    finds its ranker trained and only scores; both return the files and fields of the one-seed path."""
    root, folder, _ = bundle
    out = tmp_path / "gpu-bundle"
    assert cli(["bundle", "create", "--dataset", str(folder), "--out", str(out), "--model", "tiny", "--seeds", "2",
                "--dropout-passes", "1", "--max-length", "64", "--max-train-instances", "24", "--no-wheels",
                "--configs", "dailydialog", "--concurrent-seeds", "on", "--no-progress"]) == 0
    work, back = tmp_path / "work", tmp_path / "back"
    work.mkdir()
    result = run_sh(out, "lee-train-0", back, work)
    assert result.returncode == 0, result.stderr[-2000:]
    assert cli(["bundle", "run", str(out), "lee-train-1", "--out", str(back), "--work", str(work)]) == 0
    first, second = (json.loads((back / f"lee-train-{s}.json").read_text()) for s in (0, 1))
    assert first["training"]["concurrent_seeds"] == second["training"]["concurrent_seeds"] == [0, 1]
    assert second["train_seconds"] == 0 and first["training"]["steps"] == second["training"]["steps"] == 2
    assert [first["training"]["seed"], second["training"]["seed"]] == [0, 1]
    with np.load(back / "lee-train-0.npz") as a, np.load(back / "lee-train-1.npz") as b:
        assert a["validation"].shape == b["validation"].shape and not np.allclose(a["validation"], b["validation"])
    assert cli(["bundle", "run", str(out), "lee-dropout-1", "--out", str(back), "--work", str(work)]) == 0


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
    # a report may be written again into the folder it wrote (fewer replicates: faster)
    assert cli(["bundle", "report", str(back), "--dataset", str(folder), "--out", str(out), "--bootstrap", "5",
                "--no-plots", "--no-progress"]) == 0


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


# ----------------------------------------------------------------------------------------------- forged returned files


def _edit_json(name, **changes):
    def edit(back):
        path = back / name
        description = json.loads(path.read_text())
        for key, value in changes.items():
            target = description
            *parents, last = key.split(".")
            for parent in parents:
                target = target[parent]
            if value is _DELETE:
                del target[last]
            else:
                target[last] = value
        path.write_text(json.dumps(description))
    return edit


_DELETE = object()


def _edit_npz(name, change):
    def edit(back):
        with np.load(back / name) as z:
            arrays = {key: z[key] for key in z.files}
        change(arrays)
        np.savez_compressed(back / name, **arrays)
    return edit


def _write(name, data):
    def edit(back):
        (back / name).write_bytes(data(back / name) if callable(data) else data)
    return edit


def _flip_middle(path):
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = bytes(b ^ 0xFF for b in data[middle:middle + 64])
    return bytes(data)


def _copy_seed(back):
    """lee-train-0's files under lee-train-1's name, its description edited to claim seed 1 throughout."""
    (back / "lee-train-1.npz").write_bytes((back / "lee-train-0.npz").read_bytes())
    description = json.loads((back / "lee-train-0.json").read_text())
    description.update(step="lee-train-1", seed=1)
    description["training"]["seed"] = 1
    (back / "lee-train-1.json").write_text(json.dumps(description))


def _huge_header(back):
    """A header declaring 10**12 rows: refused from the header, before any memory is taken."""
    import io
    import zipfile

    with np.load(back / "lee-fp32-0.npz") as z:
        arrays = {key: z[key] for key in z.files}
    buffer = io.BytesIO()
    header = {"descr": "<f4", "fortran_order": False, "shape": (10**12, 10)}
    np.lib.format.write_array_header_1_0(buffer, header)
    with zipfile.ZipFile(back / "lee-fp32-0.npz", "w") as archive:
        for key, value in arrays.items():
            if key == "test/uw_0.10":
                archive.writestr(f"{key}.npy", buffer.getvalue())
            else:
                with archive.open(f"{key}.npy", "w") as member:
                    np.lib.format.write_array(member, value)


def _remove(*names):
    return lambda back: [(back / name).unlink() for name in names]


def _device(name):
    def forge(back):
        (back / name).unlink()
        (back / name).symlink_to("/dev/zero")  # endless: reading it would never finish
    return forge


FORGED = {
    "broken JSON": (_write("lee-train-0.json", lambda p: p.read_bytes()[:-40]), "lee-train-0.json",
                    "not readable JSON"),
    "JSON of another kind": (_write("lee-fp32-0.json", b"[1, 2]"), "lee-fp32-0.json", "holds a JSON list"),
    "missing key": (_edit_json("lee-train-1.json", ids=_DELETE), "lee-train-1.json", "no 'ids' field"),
    "seed of the wrong type": (_edit_json("lee-train-1.json", seed="1"), "lee-train-1.json", "field 'seed' must be 1"),
    "protocol of the wrong type": (_edit_json("lee-train-0.json", **{"protocol.test_configs": "uw_0.10"}),
                                   "lee-train-0.json", "'protocol.test_configs' must be a non-empty list"),
    "renamed step": (_edit_json("lee-train-1.json", step="lee-train-0"), "lee-train-1.json", "renamed copy"),
    "seed collision": (_edit_json("lee-train-1.json", seed=0), "lee-train-1.json", "would swap two seeds"),
    "ranker of another seed": (_edit_json("lee-train-1.json", **{"training.seed": 0}), "lee-train-1.json",
                               "trained with seed 0, not 1"),
    "another seed's logits": (_copy_seed, "lee-train-1.npz", "a copy of step lee-train-0"),
    "truncated archive": (_write("lee-train-0.npz", lambda p: p.read_bytes()[: len(p.read_bytes()) // 2]),
                          "lee-train-0.npz", "not a readable .npz archive"),
    "corrupt archive": (_write("lee-train-1.npz", _flip_middle), "lee-train-1.npz", "not a readable .npz archive"),
    "plain .npy, not .npz": (_write("lee-fp32-0.npz", lambda p: b"\x93NUMPY" + p.read_bytes()[6:200]),
                             "lee-fp32-0.npz", "not a readable .npz archive"),
    "wrong shape": (_edit_npz("lee-train-0.npz", lambda a: a.update({"test/uw_0.10": a["test/uw_0.10"][:, :9]})),
                    "lee-train-0.npz", "array 'test/uw_0.10' is float32 of shape 18x9, expected floating-point of "
                                       "shape 18x10"),
    "wrong dtype": (_edit_npz("lee-dropout-0-p1.npz", lambda a: a.update({"test/sr_2": a["test/sr_2"].astype(str)})),
                    "lee-dropout-0-p1.npz", "expected floating-point of shape 6x10"),
    "float labels": (_edit_npz("lee-train-1.npz", lambda a: a.update(validation_labels=a["validation_labels"] * 1.0)),
                     "lee-train-1.npz", "array 'validation_labels' is float64"),
    "missing array": (_edit_npz("lee-fp32-0.npz", lambda a: a.pop("test/sr_3")), "lee-fp32-0.npz",
                      "no array test/sr_3"),
    "extra array": (_edit_npz("lee-dropout-0-p0.npz", lambda a: a.update(extra=np.zeros(3))), "lee-dropout-0-p0.npz",
                    "unexpected array extra"),
    "NaN logit": (_edit_npz("lee-train-0.npz", lambda a: a["test/dailydialog"].__setitem__((3, 4), np.nan)),
                  "lee-train-0.npz", "'test/dailydialog' holds 1 non-finite values"),
    "label out of range": (_edit_npz("lee-train-0.npz", lambda a: a["validation_labels"].__setitem__(0, 10)),
                           "lee-train-0.npz", "candidate indices in 0..9"),
    "huge declared shape": (_huge_header, "lee-fp32-0.npz", "of shape 1000000000000x10, expected"),
    "unknown step": (_write("lee-eval-0.json", b"{}"), "lee-eval-0.json", "not a step of the bundle"),
    "extra file": (_write("notes.txt", b"my notes"), "notes.txt", "not a file any returned step describes"),
    "extra dropout pass": (_write("lee-dropout-0-p7.npz", lambda p: (p.parent / "lee-dropout-0-p0.npz").read_bytes()),
                           "lee-dropout-0-p7.npz", "not a file any returned step describes"),
    "missing pass": (_remove("lee-dropout-0-p1.npz"), "lee-dropout-0.json", "lee-dropout-0-p1.npz not beside it"),
    "fp32 without its ranker's step": (_remove("lee-train-0.json", "lee-train-0.npz"), "lee-fp32-0.json",
                                       "compares it with step lee-train-0"),
    "another bundle's file": (_edit_json("lee-train-1.json", bundle="0123456789ab"), "lee-train-1.json",
                              "its bundle differs"),
    "ECE bins out of range": (_edit_json("lee-train-0.json", **{"protocol.ece_bins": 0}), "lee-train-0.json",
                              "protocol.ece_bins = 0: must be an integer from 1 to 10,000"),
    "a device, not a file": (_device("lee-fp32-0.json"), "lee-fp32-0.json", "not a regular file"),
    "a forged instance count": (_edit_json("lee-fp32-0.json", **{"instances.sr_2": 10**30}), "lee-fp32-0.json",
                                "the 'sr_2' test ids differ"),
    "deeply nested JSON": (_write("lee-train-1.json", b"[" * 100_000 + b"]" * 100_000), "lee-train-1.json",
                           "nested too deeply"),
}


@pytest.mark.parametrize("case", FORGED)
def test_a_forged_returned_file_is_one_line_naming_it(case, returned, bundle, tmp_path, capsys):
    import shutil

    forge, name, expected = FORGED[case]
    back, _ = returned
    root, folder, _ = bundle
    copy = tmp_path / "returned"
    shutil.copytree(back, copy)
    forge(copy)
    out = tmp_path / "report"
    capsys.readouterr()
    code = cli(["bundle", "report", str(copy), "--dataset", str(folder), "--out", str(out), "--bootstrap", "10",
                "--no-plots", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("dialshift bundle: error: ") and str(copy / name) in err[0] and expected in err[0], err[0]
    assert not out.exists()  # nothing written


def test_report_refuses_to_write_into_its_inputs(returned, bundle, tmp_path, capsys):
    back, _ = returned
    _, folder, _ = bundle
    for out in (back, folder):
        code = cli(["bundle", "report", str(back), "--dataset", str(folder), "--out", str(out), "--no-plots",
                    "--no-progress", "--bootstrap", "10"])
        err = capsys.readouterr().err
        assert code == 2 and f"--out {out} is the input" in err, err


def _manifest(edit):
    def forge(path):
        manifest = json.loads(path.read_text())
        edit(manifest)
        path.write_text(json.dumps(manifest))
    return forge


FORGED_MANIFESTS = {
    "broken JSON": (lambda p: p.write_bytes(p.read_bytes()[:-30]), "not readable JSON"),
    "not an object": (lambda p: p.write_text("[]"), "holds a JSON list, not a bundle manifest"),
    "another format": (_manifest(lambda m: m.update(format="dialshift-bundle/0")), "unknown bundle format"),
    "deeply nested": (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested too deeply"),
    "no steps": (_manifest(lambda m: m.pop("steps")), "field 'steps' must be a list"),
    "step not an object": (_manifest(lambda m: m["steps"].__setitem__(1, "lee-train-0")), "steps[1] must be an object"),
    "seconds as text": (_manifest(lambda m: m["steps"][2].update(seconds="600")),
                        "steps[2].seconds has the wrong type"),
    "return sizes as text": (_manifest(lambda m: m["steps"][0]["return_bytes"].update({"smoke.json": "1 MB"})),
                             "steps[0].returns or return_bytes has the wrong type"),
}


@pytest.mark.parametrize("case", FORGED_MANIFESTS)
def test_a_forged_bundle_manifest_is_one_line(case, bundle, tmp_path, capsys):
    import shutil

    forge, expected = FORGED_MANIFESTS[case]
    _, _, out = bundle
    copy = tmp_path / "bundle"
    copy.mkdir()
    shutil.copy2(out / "bundle.json", copy / "bundle.json")
    forge(copy / "bundle.json")
    capsys.readouterr()
    assert cli(["bundle", "steps", str(copy)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(copy / "bundle.json") in err[0] and expected in err[0], err


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_damaged_weights_in_a_bundle_are_refused_before_use(damage, bundle, tmp_path):
    import shutil

    from dialshift.bundle import WEIGHTS_FILE, upcast_backbone
    from dialshift.errors import DialshiftError

    _, _, out = bundle
    copy = tmp_path / "bundle"
    shutil.copytree(out / "backbone", copy / "backbone")
    for name in ("data", "trainers", "wheels", "bundle.json"):
        (copy / name).symlink_to(out / name)
    weights = copy / "backbone" / WEIGHTS_FILE
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2] if damage == "truncated" else
                        data[:100] + bytes(b ^ 0xFF for b in data[100:164]) + data[164:])  # zstd decodes it silently
    with pytest.raises(DialshiftError, match="differ from those of bundle .* copy the bundle again"):
        upcast_backbone(copy, tmp_path / "work")
    weights.write_bytes(data)
    assert (upcast_backbone(copy, tmp_path / "work") / "model.safetensors").is_file()
