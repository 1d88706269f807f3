"""`dialshift leaderboard`: submissions checked and scored from gold into the results store, hostile submissions
refused with one line and nothing written, model-index export, and `dialshift push --spaces`."""

import json
import os
import shutil
import stat
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from dialshift.cli import main
from dialshift.leaderboard.store import record_path
from dialshift.metrics.installed import metric_names
from dialshift.scoring.gold import config_fingerprints

RECORD = ("dailydialog", "org/tiny-ranker", "vanilla")

CONFIGS = ("dailydialog", "uw_0.10", "uw_0.20")
ROWS = 30


def make_dataset(path: Path) -> Path:
    """A tiny response-ranking dataset folder with DailyDialog config names (test splits of 30 instances)."""
    import datasets

    from dialshift.hub import write_hub_folder
    from dialshift.registry import all_configs

    registered = all_configs()
    built = {}
    for index, name in enumerate(CONFIGS):
        rows = {"id": [f"dd-{k:03d}" for k in range(ROWS)], "context": [[f"turn {k}"] for k in range(ROWS)],
                "candidates": [[f"c{j}" for j in range(10)] for _ in range(ROWS)],
                "label": [(k * 7 + index) % 10 for k in range(ROWS)]}
        built[name] = datasets.DatasetDict({"test": datasets.Dataset.from_dict(rows)})
    metadata = {name: {"config": registered[name].to_dict(), "facts": {}} for name in CONFIGS}
    return write_hub_folder(path, built, [], metadata=metadata, progress=False)


def write_predictions(folder: Path, dataset: Path, seed: int = 0, configs=CONFIGS, extra=None) -> Path:
    """A complete submission folder of seeded 10-way predictions (a bonus on the gold candidate)."""
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    (folder / "predictions").mkdir(parents=True, exist_ok=True)
    for name in configs:
        table = pq.read_table(dataset / name / "test-00000-of-00001.parquet", columns=["id", "label"])
        ids, labels = table.column("id").to_pylist(), table.column("label").to_numpy()
        logits = rng.normal(size=(len(ids), 10))
        logits[np.arange(len(ids)), labels] += 2.0
        probabilities = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        with open(folder / "predictions" / f"{name}.jsonl", "w") as handle:
            for uid, scores, probs in zip(ids, logits.tolist(), probabilities.tolist(), strict=True):
                handle.write(json.dumps({"id": uid, "scores": scores, "probabilities": probs, **(extra or {})}) + "\n")
    (folder / "submission.json").write_text(json.dumps({
        "model": "org/tiny-ranker", "method": "vanilla", "link": "https://example.org/tiny", "licence": "apache-2.0",
        "dataset_revision": config_fingerprints(dataset, configs), "parameters": 4_400_000, "seeds": [seed]}))
    return folder


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("lb") / "dialshift")


@pytest.fixture
def submission(tmp_path, dataset):
    return write_predictions(tmp_path / "submission", dataset)


def score(path, dataset, store, *extra):
    return main(["leaderboard", "score", str(path), "--dataset", str(dataset), "--results", str(store),
                 "--bootstrap", "50", "--no-progress", *extra])


def one_line_error(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("dialshift leaderboard: error: "), err[0]
    return err[0]


def zip_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                handle.write(path, prefix + path.relative_to(folder).as_posix())
    return archive


# ----------------------------------------------------------------------------------------------- scoring


def test_a_submission_is_scored_from_gold_into_the_store(submission, dataset, tmp_path, capsys):
    store = tmp_path / "results"
    assert score(submission, dataset, store) == 0
    assert "scored org/tiny-ranker (vanilla) on 3 dailydialog configs" in capsys.readouterr().out
    path = record_path(store, *RECORD)
    record = json.loads(path.read_text())
    assert record["config"]["model_name"] == "org/tiny-ranker" and record["config"]["family"] == "dailydialog"
    assert record["config"]["configs"] == list(CONFIGS) and record["config"]["parameters"] == 4_400_000
    assert set(record["results"]) == set(CONFIGS)
    assert all(isinstance(v, (int, float)) for values in record["results"].values() for v in values.values())
    assert record["intervals"]["uw_0.10"]["recall@1"][0] <= record["results"]["uw_0.10"]["recall@1"]
    assert set(record["differences"]) == {"uw_0.10", "uw_0.20"}
    # the same numbers as `dialshift score` on the same predictions with the same settings
    assert main(["score", str(submission / "predictions"), "--dataset", str(dataset), "--out", str(tmp_path / "s"),
                 "--bootstrap", "50", "--no-plots", "--no-progress"]) == 0
    plain = json.loads((tmp_path / "s" / "results.json").read_text())
    assert plain["results"] == record["results"] and plain["intervals"] == record["intervals"]


def test_a_zip_submission_scores_like_the_folder(submission, dataset, tmp_path):
    assert score(submission, dataset, tmp_path / "a") == 0
    assert score(zip_folder(submission, tmp_path / "s.zip", prefix="mine/"), dataset, tmp_path / "b") == 0
    a, b = (json.loads(record_path(tmp_path / x, *RECORD).read_text()) for x in "ab")
    assert a["results"] == b["results"]


def test_a_forged_score_in_the_prediction_lines_changes_nothing(dataset, tmp_path):
    honest = write_predictions(tmp_path / "honest", dataset)
    forged = write_predictions(tmp_path / "forged", dataset, extra={"recall@1": 1.0, "ece": 0.0, "label": 0})
    assert score(honest, dataset, tmp_path / "a") == 0 and score(forged, dataset, tmp_path / "b") == 0
    a, b = (json.loads(record_path(tmp_path / x, *RECORD).read_text()) for x in "ab")
    assert a["results"] == b["results"] and a["results"]["dailydialog"]["recall@1"] < 1.0


def test_a_declared_subset_is_accepted_and_a_missing_config_is_not(dataset, tmp_path, capsys):
    folder = write_predictions(tmp_path / "subset", dataset, configs=("dailydialog", "uw_0.20"))
    assert score(folder, dataset, tmp_path / "r") == 2
    assert "no predictions for uw_0.10" in one_line_error(capsys)
    meta = json.loads((folder / "submission.json").read_text())
    (folder / "submission.json").write_text(json.dumps({**meta, "configs": ["dailydialog", "uw_0.20"]}))
    assert score(folder, dataset, tmp_path / "r") == 0


# ----------------------------------------------------------------------------------------------- hostile input


def _edit_line(submission, config="uw_0.10", line=3, **changes):
    path = submission / "predictions" / f"{config}.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[line])
    record.update(changes)
    lines[line] = json.dumps(record).replace("NaN", "NaN")
    path.write_text("\n".join(lines) + "\n")


def _meta(submission, **changes):
    path = submission / "submission.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _zip_member(submission, tmp_path, name, symlink=False):
    archive = zip_folder(submission, tmp_path / "evil.zip")
    with zipfile.ZipFile(archive, "a") as handle:
        info = zipfile.ZipInfo(name)
        if symlink:
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
        handle.writestr(info, "/etc/passwd" if symlink else "x")
    return archive


def _duplicate(submission):
    path = submission / "predictions" / "dailydialog.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + lines[:1]) + "\n")


def _drop(submission):
    path = submission / "predictions" / "dailydialog.jsonl"
    path.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")


def _huge(submission):
    with open(submission / "predictions" / "uw_0.20.jsonl", "r+b") as handle:
        handle.truncate(1 << 30)  # a sparse 1 GB file: refused from its size, never read


HOSTILE = {
    "malformed submission.json": (lambda s, t: (s / "submission.json").write_text("{\"model\": "), "not valid JSON"),
    "malformed predictions line": (
        lambda s, t: (s / "predictions" / "uw_0.10.jsonl").write_text("{\"id\": \"dd-000\", \"probab\n"),
        "uw_0.10.jsonl:1: not valid JSON"),
    "missing field": (lambda s, t: _meta(s, link=None), "missing field 'link'"),
    "javascript link": (lambda s, t: _meta(s, link="javascript:alert(1)"), "must be an http:// or https://"),
    "missing id": (lambda s, t: _drop(s), "have no prediction (e.g. 'dd-000')"),
    "duplicate id": (lambda s, t: _duplicate(s), "id 'dd-000' is predicted twice"),
    "unknown id": (lambda s, t: _edit_line(s, id="dd-999"), "id 'dd-999' is not in config 'uw_0.10'"),
    "wrong length": (lambda s, t: _edit_line(s, probabilities=[0.5, 0.5]), "probabilities[3] has 2 values"),
    "NaN probability": (lambda s, t: _edit_line(s, probabilities=[float("nan")] + [0.1] * 9), "uw_0.10.jsonl:4"),
    "probabilities not summing to 1": (lambda s, t: _edit_line(s, probabilities=[0.5] * 10), "uw_0.10.jsonl:4"),
    "unknown config": (lambda s, t: shutil.copy(s / "predictions" / "uw_0.10.jsonl", s / "predictions" / "uw_9.jsonl"),
                       "the dataset has no config 'uw_9'"),
    "1 GB file": (lambda s, t: _huge(s), "1,073,741,824 bytes, more than the 268,435,456 allowed per file"),
    "forged score in submission.json": (lambda s, t: _meta(s, results={"dailydialog": {"recall@1": 1.0}}),
                                        "field 'results' is not accepted: the leaderboard recomputes every score"),
    "forged results file": (lambda s, t: (s / "results.json").write_text("{}"), "results.json: unexpected file"),
    "symlink in the folder": (lambda s, t: os.symlink("/etc/passwd", s / "README.md"), "is a symbolic link"),
}
ZIP_HOSTILE = {
    "zip with ../": ("../../evil.txt", False, "climbs out of the archive with '..'"),
    "zip with an absolute member": ("/tmp/evil.txt", False, "is an absolute path"),
    "zip with a symlink": ("predictions/link.jsonl", True, "is a symbolic link"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_submission_is_refused_with_one_line_and_nothing_written(case, submission, dataset, tmp_path,
                                                                          capsys):
    change, message = HOSTILE[case]
    change(submission, tmp_path)
    store = tmp_path / "results"
    assert score(submission, dataset, store) == 2
    line = one_line_error(capsys)
    assert message in line, line
    assert not store.exists() or not any(store.rglob("*"))


@pytest.mark.parametrize("case", list(ZIP_HOSTILE))
def test_a_hostile_zip_is_refused_before_extraction(case, submission, dataset, tmp_path, capsys):
    name, symlink, message = ZIP_HOSTILE[case]
    archive = _zip_member(submission, tmp_path, name, symlink)
    assert score(archive, dataset, tmp_path / "results") == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "results").exists() and not (tmp_path.parent / "evil.txt").exists()
    assert not Path("/tmp/evil.txt").exists()


def test_a_rejected_rescore_keeps_the_stored_record(submission, dataset, tmp_path, capsys):
    store = tmp_path / "results"
    assert score(submission, dataset, store) == 0
    before = {p: p.read_bytes() for p in store.rglob("*.json")}
    _edit_line(submission, probabilities=[0.5] * 10)
    assert score(submission, dataset, store) == 2
    assert {p: p.read_bytes() for p in store.rglob("*.json")} == before


# ----------------------------------------------------------------------------------------------- export


def test_model_index_has_one_entry_per_config_and_metric(submission, dataset, tmp_path, capsys):
    from huggingface_hub.repocard_data import model_index_to_eval_results

    store = tmp_path / "results"
    assert score(submission, dataset, store) == 0
    record_file = record_path(store, *RECORD)
    out = tmp_path / "model-index.yaml"
    assert main(["leaderboard", "export", str(record_file), "--dataset-id", "org/dialshift", "--out", str(out)]) == 0
    name, results = model_index_to_eval_results(yaml.safe_load(out.read_text())["model-index"])
    record = json.loads(record_file.read_text())
    expected = {(config, metric) for config, values in record["results"].items() for metric in values
                if metric != "instances"}
    assert name == "org/tiny-ranker (vanilla)"
    assert {(r.dataset_config, r.metric_type) for r in results} == expected and len(results) == len(expected)
    ece = next(r for r in results if r.dataset_config == "uw_0.20" and r.metric_type == "ece")
    assert ece.metric_value == pytest.approx(record["results"]["uw_0.20"]["ece"]) and ece.dataset_type == \
        "org/dialshift" and ece.dataset_split == "test" and ece.metric_name == "ECE"


# ----------------------------------------------------------------------------------------------- push --spaces


class RecordingApi:
    def __init__(self):
        self.repos, self.commits = [], {}

    def create_repo(self, repo_id, **kwargs):
        self.repos.append((repo_id, kwargs.get("repo_type"), kwargs.get("space_sdk")))

    def list_repo_files(self, repo_id, **kwargs):
        return []

    def create_commit(self, repo_id, operations, **kwargs):
        self.commits[repo_id] = {op.path_in_repo: (op.path_or_fileobj if isinstance(op.path_or_fileobj, bytes)
                                                   else Path(op.path_or_fileobj).read_bytes()) for op in operations}
        return f"https://example.invalid/{repo_id}/commit"


def test_push_publishes_the_dataset_the_metric_spaces_and_the_leaderboard_space(dataset, tmp_path, monkeypatch,
                                                                                 capsys, submission):

    api = RecordingApi()
    monkeypatch.setattr("dialshift.hub.push.make_api", lambda token=None: api)
    wheel = tmp_path / "dialshift-0.2.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    store = tmp_path / "results"
    assert score(submission, dataset, store) == 0
    capsys.readouterr()
    argv = ["push", str(dataset), "--repo-id", "org/dialshift", "--spaces", "--wheel", str(wheel),
            "--leaderboard-results", str(store)]
    assert main([*argv, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    for metric in metric_names():
        assert f"would upload 5 files to spaces/org/{metric}:" in printed and f"  {metric}.py" in printed
    assert "would upload 5 files to spaces/org/dialshift-leaderboard:" in printed
    assert f"  results/{record_path('', *RECORD).as_posix()}" in printed and "  app.py" in printed
    assert api.commits == {}  # a dry run commits nothing
    assert main(argv) == 0
    assert set(api.commits) == {"org/dialshift", *(f"org/{m}" for m in metric_names()),
                                "org/dialshift-leaderboard"}
    assert ("org/ece", "space", "gradio") in api.repos
    requirements = api.commits["org/ece"]["requirements.txt"].decode().splitlines()
    assert requirements[0] == f"./{wheel.name}" and "evaluate==0.4.6" in requirements
    board = api.commits["org/dialshift-leaderboard"]
    assert f"./{wheel.name}[leaderboard]" in board["requirements.txt"].decode().splitlines()
    assert board[wheel.name] == wheel.read_bytes() and b"sdk: gradio" in board["README.md"]


def test_render_writes_only_into_a_page_it_owns(tmp_path, dataset, submission, capsys):
    """`render --out` on a user's folder must not delete its results/ or plots/: it is refused in one line."""
    store = tmp_path / "store"
    assert score(submission, dataset, store) == 0
    mine = tmp_path / "thesis"
    (mine / "results").mkdir(parents=True)
    (mine / "results" / "table.csv").write_text("keep me")
    assert main(["leaderboard", "render", str(store), "--out", str(mine), "--no-plots"]) == 2
    assert "not a page dialshift rendered" in one_line_error(capsys)
    assert (mine / "results" / "table.csv").read_text() == "keep me"
    site = tmp_path / "site"
    assert main(["leaderboard", "render", str(store), "--out", str(site), "--no-plots"]) == 0
    assert main(["leaderboard", "render", str(store), "--out", str(site), "--no-plots"]) == 0  # re-render its own
    assert (site / "index.html").is_file()
