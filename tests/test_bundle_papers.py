"""The Han and Xing GPU bundles on CPU with tiny models: created, a step run through run.sh from the bundle alone and
one in-process, the returned files checked, `bundle report` computing the papers' tables; forged files refused in one
line; the ledger rendered from returned folders."""

import hashlib
import json
import shutil

import numpy as np
import pytest
from test_bundle import _edit_json, _edit_npz, run_sh

from dialshift.cli import main as cli

pytestmark = pytest.mark.slow  # creates and runs the Han and Xing bundles: about a CPU minute


def _create(dataset, out, paper, *options):
    assert cli(["bundle", "create", "--paper", paper, "--dataset", str(dataset), "--out", str(out), "--seeds", "2",
                "--num-epochs", "1", "--batch-size", "8", "--no-wheels", "--no-progress", *options]) == 0
    return json.loads((out / "bundle.json").read_text())


def _run(bundle, root, steps):
    """The first step through run.sh (the bundle's code alone), the others in-process on the same work folder."""
    work, back = root / "work", root / "returned"
    work.mkdir()
    result = run_sh(bundle, steps[0], back, work)
    assert result.returncode == 0, result.stderr[-2000:]
    for step in steps[1:]:
        assert cli(["bundle", "run", str(bundle), step, "--out", str(back), "--work", str(work)]) == 0
    return back, work


@pytest.fixture(scope="module")
def han(raw_data_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("han")
    dataset = root / "korean"
    assert cli(["build", "--family", "korean", "--out", str(dataset), "--no-progress", "--data-dir",
                str(raw_data_dir), "--config", "kor_adv", "--config", "kor_chitchat"]) == 0
    bundle = root / "bundle"
    manifest = _create(dataset, bundle, "han", "--model", "tiny", "--variants", "ums-deb", "--max-length", "48",
                       "--max-train-instances", "24", "--max-eval-instances", "6", "--max-instances", "12")
    back, work = _run(bundle, root, ["han-ums-deb-0", "han-ums-deb-1"])
    return root, dataset, bundle, manifest, back, work


@pytest.fixture(scope="module")
def xing(tmp_path_factory):
    from test_distracting import write_lowe

    root = tmp_path_factory.mktemp("xing")
    dataset = root / "distracting"
    assert cli(["build", "--family", "distracting", "--config", "ubuntu", "--config", "ubuntu_distract_*",
                "--ubuntu-csv", str(write_lowe(root / "lowe")), "--out", str(dataset), "--no-progress"]) == 0
    bundle = root / "bundle"
    manifest = _create(dataset, bundle, "xing", "--variants", "static_ui@0.7", "--dim", "8", "--layers", "1",
                       "--vocab-size", "200")
    back, work = _run(bundle, root, ["xing-static_ui-p0.7-0", "xing-static_ui-p0.7-1"])
    return root, dataset, bundle, manifest, back, work


# ----------------------------------------------------------------------------------------------- Han et al.


@pytest.mark.data
def test_han_bundle_carries_its_configs_features_and_plan(han):
    _, _, bundle, manifest, back, work = han
    assert manifest["paper"] == "han" and [s["name"] for s in manifest["steps"]] == ["han-ums-deb-0", "han-ums-deb-1"]
    curve = manifest["biased_model"]
    assert manifest["protocol"]["bias_epochs"] == curve["epochs"] == 1 + int(np.argmin(curve["validation_loss"]))
    with np.load(bundle / "data" / "bias_features.npz") as z:
        assert z["features"].shape == (24, 2, 4) and len(z["ids"]) == 24
    assert sorted(p.name for p in (bundle / "data").iterdir() if p.is_dir()) == ["kor_adv", "kor_chitchat"]
    description = json.loads((back / "han-ums-deb-0.json").read_text())
    assert description["dialshift_from"].startswith(str(work))  # the bundle's wheel, not the repository
    assert description["training"]["biased_model"] is not None and description["training"]["seed"] == 0
    with np.load(back / "han-ums-deb-1.npz") as z:
        assert z["test/kor_adv"].shape == (12, 2) and z["test/kor_chitchat"].shape == (12, 10)


@pytest.mark.data
def test_han_backbone_carries_the_embedding_rows_its_texts_use(han):
    """The reduced word-embedding matrix arrives with every used row in place (fp16) and zeros elsewhere."""
    import torch
    from safetensors.torch import load_file

    from dialshift.bundle.han import _texts
    from dialshift.models.backbones import load_backbone

    _, _, bundle, manifest, _, work = han
    model, tokenizer, _ = load_backbone("tiny", seed=0)
    original = model.base_model.embeddings.word_embeddings.weight.detach().to(torch.float16).to(torch.float32)
    arrived = load_file(str(work / f"backbone-{manifest['id']}" / "model.safetensors"))
    matrix = arrived["embeddings.word_embeddings.weight"]
    used = {i for ids in tokenizer(_texts(bundle / "data", {"kor_adv": ["test"], "kor_chitchat": ["train",
                                                                                                   "validation",
                                                                                                   "test"]}),
                                   add_special_tokens=False)["input_ids"] for i in ids}
    used |= set(tokenizer.all_special_ids)
    kept = torch.as_tensor(sorted(used))
    assert matrix.shape == original.shape and len(used) < len(tokenizer) // 2
    assert manifest["embedding_rows"] == {"kept": len(used), "of": len(matrix)}
    assert torch.equal(matrix[kept], original[kept])
    others = torch.ones(len(matrix), dtype=torch.bool)
    others[kept] = False
    assert not matrix[others].any()


@pytest.mark.data
def test_han_report_computes_tables_3_and_4(han, tmp_path):
    _, dataset, _, _, back, _ = han
    out = tmp_path / "report"
    assert cli(["bundle", "report", str(back), "--dataset", str(dataset), "--out", str(out), "--bootstrap", "20",
                "--no-progress", "--no-plots"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    row = summary["variants"]["ums-deb"]
    assert row["seeds"] == [0, 1] and row["in_domain_p@1"]["n"] == 2 and row["instances"]["kor_adv"] == 12
    seed1 = json.loads((out / "ums-deb/seed1/kor_adv/results.json").read_text())["results"]["kor_adv"]
    assert row["adversarial_p@1"]["max"] >= seed1["accuracy"] >= row["adversarial_p@1"]["min"]
    with np.load(back / "han-ums-deb-0.npz") as z:  # P@1 recomputed from the returned scores by hand
        scores = z["test/kor_chitchat"]
    from dialshift.ranking.data import load_split

    labels = load_split(dataset, "kor_chitchat", "test", 12, 0)["label"]
    seed0 = json.loads((out / "ums-deb/seed0/kor_chitchat/results.json").read_text())["results"]["kor_chitchat"]
    assert seed0["recall@1"] == pytest.approx(np.mean(scores.argmax(1) == np.asarray(labels)))
    assert "+UMS+deb" in (out / "results.md").read_text() and "Table 4" in (out / "results.md").read_text()


def _copy_seed(paper_step, other):
    def edit(back):
        (back / f"{other}.npz").write_bytes((back / f"{paper_step}.npz").read_bytes())
    return edit


FORGED_HAN = {
    "wrong shape": (_edit_npz("han-ums-deb-0.npz", lambda a: a.update({"test/kor_adv": np.zeros((12, 3))})),
                    "han-ums-deb-0.npz", "array 'test/kor_adv' is float64 of shape 12x3, expected floating-point"),
    "NaN score": (_edit_npz("han-ums-deb-1.npz", lambda a: a["test/kor_chitchat"].__setitem__((0, 0), np.nan)),
                  "han-ums-deb-1.npz", "holds 1 non-finite values"),
    "seed swapped": (_edit_json("han-ums-deb-1.json", seed=0), "han-ums-deb-1.json", "would swap two seeds"),
    "another seed's scores": (_copy_seed("han-ums-deb-0", "han-ums-deb-1"), "han-ums-deb-1.npz",
                              "a copy of step han-ums-deb-0"),
    "unknown variant": (lambda back: (back / "han-lex-0.json").write_text("{}"), "han-lex-0.json",
                        "not a step of the bundle (steps: han-VARIANT-S"),
    "another paper's file": (lambda back: (back / "lee-train-0.json").write_text("{}"), "lee-train-0.json",
                             "not a step of the bundle"),
}


@pytest.mark.data
@pytest.mark.parametrize("case", FORGED_HAN)
def test_a_forged_han_file_is_one_line(case, han, tmp_path, capsys):
    _, dataset, _, _, back, _ = han
    _refused(FORGED_HAN[case], back, dataset, tmp_path, capsys)


def _refused(case, back, dataset, tmp_path, capsys):
    forge, name, expected = case
    copy = tmp_path / "returned"
    shutil.copytree(back, copy)
    forge(copy)
    capsys.readouterr()
    out = tmp_path / "report"
    code = cli(["bundle", "report", str(copy), "--dataset", str(dataset), "--out", str(out), "--bootstrap", "5",
                "--no-plots", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and str(copy / name) in err[0] and expected in err[0], err
    assert not out.exists()


def test_bias_features_of_other_rows_are_refused(tmp_path):
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    from dialshift.errors import DialshiftError
    from trainers.debias import read_bias_features

    path = tmp_path / "features.npz"
    np.savez(path, ids=np.array(["a", "b"]), features=np.arange(16, dtype=np.float32).reshape(2, 2, 4))
    assert read_bias_features(path, ["b", "a"], 2)[0].tolist() == [8, 9, 10, 11]  # by id, not by position
    with pytest.raises(DialshiftError, match="no features of 1 training rows"):
        read_bias_features(path, ["a", "c"], 2)
    with pytest.raises(DialshiftError, match="expected floats of shape"):
        read_bias_features(path, ["a"], 3)


def test_an_option_of_another_paper_is_one_line(tmp_path, capsys):
    code = cli(["bundle", "create", "--paper", "han", "--dataset", str(tmp_path), "--out", str(tmp_path / "b"),
                "--dim", "8"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["dialshift bundle: error: --dim: not an option of the han protocol"]


# ----------------------------------------------------------------------------------------------- Xing & Gulla


def test_xing_bundle_carries_redraws_and_plans_seeded_variants(xing):
    from dialshift.bundle.xing import SEEDED, VARIANTS, XingProtocol, choose_size, plan

    _, _, bundle, manifest, back, work = xing
    assert manifest["paper"] == "xing" and manifest["backbone"] is None and "backbone" not in manifest["sizes"]
    assert sorted(p.name for p in (bundle / "data").glob("redraw-*")) == ["redraw-1", "redraw-2"]
    seed0, seed1 = (json.loads((back / f"xing-static_ui-p0.7-{s}.json").read_text()) for s in (0, 1))
    assert (seed0["redraw_seed"], seed1["redraw_seed"]) == (1, 2)
    assert seed0["dialshift_from"].startswith(str(work)) and seed0["training"]["attention_loss"] is True
    # the full protocol: 23 variants, 3 seeds for the 11 Table 3's findings rest on
    full = {**manifest, "protocol": {**manifest["protocol"], "variants": list(VARIANTS),
                                     "seeded_variants": list(SEEDED), "seeds": 3}}
    names = [s["name"] for s in plan(full)]
    assert len(VARIANTS) == 23 and len(names) == 23 + 2 * 11 and names[0] == "xing-non_hier-p0.0-0"
    assert "xing-static_ui-p0.7-noloss-2" in names and "xing-dynamic_ui-p1.0-1" not in names
    big = {"train_instances": 30_095, "validation_instances": 1_213, "test_instances": {"ubuntu": 2_342},
           "protocol": {**XingProtocol().__dict__, "lease_budget_seconds": 10**9}}
    assert choose_size(big) == (512, 4)  # the paper's size when the budget allows
    assert choose_size({**big, "protocol": {**big["protocol"], "lease_budget_seconds": 1}}) == (128, 1)


def test_xing_report_computes_table_3_on_the_redraws(xing, tmp_path):
    _, dataset, _, _, back, _ = xing
    out = tmp_path / "report"
    assert cli(["bundle", "report", str(back), "--dataset", str(dataset), "--out", str(out), "--bootstrap", "20",
                "--no-progress", "--no-plots"]) == 0
    row = json.loads((out / "summary.json").read_text())["variants"]["static_ui@0.7"]
    assert row["seeds"] == [0, 1] and row["perplexity"]["n"] == 2 and row["perplexity"]["min"] > 1
    with np.load(back / "xing-static_ui-p0.7-1.npz") as z:
        ll, tokens = z["test/ubuntu/ll"], z["test/ubuntu/tokens"]
    seed1 = float(np.exp(-ll.sum() / tokens.sum()))
    assert row["perplexity"]["min"] <= seed1 <= row["perplexity"]["max"]
    lines = [json.loads(line) for line in (out / "static_ui@0.7/seed1/ubuntu_distract_random_1.0.jsonl").open()]
    random = json.loads((out / "static_ui@0.7/seed1/results-random/results.json").read_text())
    assert random["results"]["ubuntu_distract_random_1.0"]["instances"] == len(lines)
    assert "StaticUI" in (out / "results.md").read_text()


def _ids_edit(name, config):
    def edit(back):
        description = json.loads((back / name).read_text())
        description["ids"][config] = "0" * 40
        (back / name).write_text(json.dumps(description))
    return edit


FORGED_XING = {
    "attention scores cut short": (
        _edit_npz("xing-static_ui-p0.7-0.npz", lambda a: a.update({"test/ubuntu/as": a["test/ubuntu/as"][:-1]})),
        "xing-static_ui-p0.7-0.npz", "array 'test/ubuntu/as' is float32 of shape"),
    "NaN attention": (_edit_npz("xing-static_ui-p0.7-1.npz",
                                lambda a: a["test/ubuntu_distract_rare_end/as"].__setitem__(0, np.nan)),
                      "xing-static_ui-p0.7-1.npz", "holds 1 non-finite values"),
    "ids of another draw": (_ids_edit("xing-static_ui-p0.7-1.json", "ubuntu_distract_random_0.5"),
                            "xing-static_ui-p0.7-1.json", "the 'ubuntu_distract_random_0.5' test ids differ"),
    # seed 1 evaluated on another draw of the random sets: seed 0's arrays do not fit its contexts
    "another seed's arrays": (_copy_seed("xing-static_ui-p0.7-0", "xing-static_ui-p0.7-1"),
                              "xing-static_ui-p0.7-1.npz", "expected floating-point of shape"),
}


@pytest.mark.parametrize("case", FORGED_XING)
def test_a_forged_xing_file_is_one_line(case, xing, tmp_path, capsys):
    _, dataset, _, _, back, _ = xing
    _refused(FORGED_XING[case], back, dataset, tmp_path, capsys)


# ----------------------------------------------------------------------------------------------- the ledger


def test_ledger_lists_every_step_with_its_files_sha256(xing, tmp_path, capsys):
    _, _, _, _, back, _ = xing
    root = tmp_path / "returned"
    shutil.copytree(back, root / "xing")
    capsys.readouterr()
    assert cli(["bundle", "ledger", str(root)]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if line.startswith("| xing |")]
    assert [row.split(" | ")[1] for row in rows] == ["xing-static_ui-p0.7-0", "xing-static_ui-p0.7-1"]  # run order
    digest = hashlib.sha256((back / "xing-static_ui-p0.7-1.npz").read_bytes()).hexdigest()
    assert f"`xing-static_ui-p0.7-1.npz` `{digest}`" in rows[1] and " | cpu | " in rows[1]
    description = json.loads((back / "xing-static_ui-p0.7-1.json").read_text())
    assert f" | {description['seconds']:,.0f} | " in rows[1]
    doc = tmp_path / "full_scale.md"
    doc.write_text("# x\n<!-- generated by dialshift bundle ledger: begin -->\nold\n"
                   "<!-- generated by dialshift bundle ledger: end -->\n")
    assert cli(["bundle", "ledger", str(root), "--doc", str(doc), "--check"]) == 1
    assert cli(["bundle", "ledger", str(root), "--doc", str(doc)]) == 0
    assert cli(["bundle", "ledger", str(root), "--doc", str(doc), "--check"]) == 0 and table in doc.read_text()


def test_committed_ledger_is_what_the_returned_files_render():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    assert cli(["bundle", "ledger", str(root / "docs/full_scale/returned"), "--doc",
                str(root / "docs/full_scale.md"), "--check"]) == 0


@pytest.mark.parametrize("paper", ["han", "xing"])
def test_a_lease_through_run_sh_resumes_after_the_returned_seed(paper, request, tmp_path):
    """The returned seed-0 step as an earlier lease's files: `run.sh lease --resume` runs the seed-1 step only."""
    from dialshift.returned import find_returned

    _, _, bundle, manifest, back, _ = request.getfixturevalue(paper)
    first = manifest["steps"][0]
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    for name in first["returns"]:
        shutil.copyfile(back / name, earlier / name)
    result = run_sh(bundle, "lease", tmp_path / "back", tmp_path / "work", "--resume", str(earlier))
    assert result.returncode == 0, result.stderr[-2000:]
    second = manifest["steps"][1]
    assert f"ran {second['name']} in" in result.stdout and "nothing left" in result.stdout
    assert sorted(p.name for p in (tmp_path / "back").iterdir()) == sorted(["lease.jsonl", *second["returns"]])
    assert set(find_returned([earlier, tmp_path / "back"], paper)) == {first["name"], second["name"]}
