"""The reproduction reports regenerate from their committed files: the generated part of each report is exactly what
its table generator writes."""

import importlib.util
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"make_tables_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def han():
    return load(DOCS / "reproduction_han" / "make_tables.py")


def test_han_report_is_what_make_tables_renders(han):
    assert han.main(["--check"]) == 0


def test_han_verdicts_follow_the_rule_on_the_per_seed_differences(han):
    import json

    from dialshift.verdicts import verdict

    labels = json.loads((han.RUNS / "labels.json").read_text())
    runs = han.committed_runs((0, 1))
    data = han.from_predictions(labels, runs)
    seeds = [s["adversarial"] for s in data["table"]["+deb"]["seeds"]], \
        [s["adversarial"] for s in data["table"]["baseline"]["seeds"]]
    differences = [a - b for a, b in zip(*seeds, strict=True)]
    assert len(differences) == 2
    expected = verdict(differences, "+", 43.5 - 39.4)
    assert expected.outcome == "underpowered" and expected.seeds_for_power >= 6
    row = (f"| {' / '.join(f'{d:+.1f}' for d in differences)} | {expected.cell()} | +4.1 (Table 3, adversarial: "
           f"+deb 43.5 − baseline 39.4) | {expected.seeds_for_power} (")
    assert row in "\n".join(han.verdict_lines(han.finding_results(data, labels, runs), 270.0))


def test_han_tables_are_computed_from_the_kept_predictions(han):
    """Each committed seed's P@1 recomputed from its predictions file and the gold candidates equals its scored
    results.json, so the tables rest on the kept predictions."""
    import json

    labels = json.loads((han.RUNS / "labels.json").read_text())
    for folders in han.committed_runs().values():
        for folder in folders:
            correct = han.correctness(folder, "kor_adv", labels["kor_adv"])
            scored = json.loads((folder / "kor_adv" / "results.json").read_text())["results"]["kor_adv"]
            assert len(correct) == scored["instances"] == 2220
            assert abs(sum(correct.values()) / len(correct) - scored["accuracy"]) < 1e-12


def test_han_check_fails_when_a_kept_prediction_changes(han, tmp_path, monkeypatch):
    import gzip
    import json
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(han.RUNS, runs)
    path = runs / "deb" / "seed_1" / "kor_adv" / "kor_adv.jsonl.gz"
    rows = [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    labels = json.loads((runs / "labels.json").read_text())["kor_adv"]
    wrong = next(row for row in rows if int(max(range(len(row["scores"])), key=row["scores"].__getitem__))
                 == labels[row["id"]])
    wrong["scores"] = [-s for s in wrong["scores"]]  # the gold is no longer chosen
    path.write_bytes(gzip.compress("".join(json.dumps(row) + "\n" for row in rows).encode(), mtime=0))
    shutil.copytree(han.REAL_ENV, tmp_path / "real_env")
    monkeypatch.setattr(han, "RUNS", runs)
    monkeypatch.setattr(han, "REAL_ENV", tmp_path / "real_env")
    assert han.main(["--check"]) == 2  # its checksum
    assert han.main(["--checksums"]) == 0
    assert han.main(["--check"]) == 2  # with the checksums rewritten: the P@1 of results.json


@pytest.fixture
def han_copy(han, tmp_path, monkeypatch):
    """The committed runs and report copied to ``tmp_path`` with the generator pointed at them."""
    import shutil

    for name in ("runs", "real_env"):
        shutil.copytree(getattr(han, name.upper()), tmp_path / name)
    shutil.copyfile(han.REPORT, tmp_path / "reproduction_han.md")
    monkeypatch.setattr(han, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(han, "REAL_ENV", tmp_path / "real_env")
    monkeypatch.setattr(han, "REPORT", tmp_path / "reproduction_han.md")
    assert han.main(["--check"]) == 0
    return tmp_path


def test_han_check_fails_when_a_sentence_with_a_number_changes(han, han_copy):
    report = han_copy / "reproduction_han.md"
    text = report.read_text(encoding="utf-8")
    for old, new in (("Tables 3-4 are: 9 underpowered", "Tables 3-4 are: 9 reproduced"),
                     ("+UMS − baseline is +2.1", "+UMS − baseline is +3.1")):  # the status, the seed-0 reading
        assert old in text
        report.write_text(text.replace(old, new, 1), encoding="utf-8")
        assert han.main(["--check"]) == 1


@pytest.mark.parametrize("relative, change", [
    ("runs/ums/seed_0/kor_adv/results.json", lambda v: v["results"]["kor_adv"].update({"accuracy": 0.6})),
    ("runs/deb/seed_1/kor_chitchat/run.json", lambda v: v["run"].update({"seeds": [0]})),
    ("runs/baseline/seed_1/command.json", lambda v: v.update({"cpu_seconds": 9999.0})),
    ("runs/ums_deb/seed_0/command.json", lambda v: v["command"].remove("--ums")),
    ("real_env/rerank/+deb-seed1/run.json", lambda v: v.update({"seed": 2})),
    ("real_env/rerank/baseline-seed2/command.json", lambda v: v.update({"cpu_seconds": 1.0})),
])
def test_han_check_fails_when_a_committed_run_file_changes(han, han_copy, capsys, relative, change):
    edit_json(han_copy / relative, change)
    assert han.main(["--check"]) == 2  # the checksum
    assert capsys.readouterr().err.count("\n") == 1
    assert han.main(["--checksums"]) == 0
    assert han.main(["--check"]) != 0  # the file's content: a mismatch, or a report that differs


def test_han_check_fails_when_the_checksums_change(han, han_copy):
    manifest = han_copy / "real_env" / "sha256.json"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert han.main(["--check"]) == 1  # its digest is in the status paragraph


def test_han_missing_seed_or_truncated_gz_is_a_one_line_error(han, han_copy, capsys):
    import shutil

    path = han_copy / "runs" / "ums" / "seed_1" / "kor_adv" / "kor_adv.jsonl.gz"
    path.write_bytes(path.read_bytes()[:300])
    assert han.main(["--checksums"]) == 0  # past the checksums: the reading itself must say it in one line
    assert han.main(["--check"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "kor_adv.jsonl.gz: truncated or corrupt gzip" in error
    shutil.rmtree(han_copy / "runs" / "ums" / "seed_1")
    assert han.main(["--checksums"]) == 0
    assert han.main(["--check"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "holds seeds [0]" in error


def test_han_collect_refuses_an_incomplete_folder_in_one_line(han, tmp_path, capsys):
    (tmp_path / "P" / "kor_adv").mkdir(parents=True)
    assert han.main(["--dataset", str(tmp_path), "--run", f"+deb={tmp_path / 'P'}", "--out",
                     str(tmp_path / "runs")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "missing command.json" in error and str(tmp_path / "P") in error
    assert not (tmp_path / "runs").exists()


@pytest.fixture(scope="module")
def lee():
    return load(DOCS / "reproduction_lee" / "make_tables.py")


@pytest.fixture(scope="module")
def xing():
    return load(DOCS / "reproduction_xing" / "make_tables.py")


def test_lee_report_is_what_make_tables_renders(lee):
    assert lee.main(["--check"]) == 0


def test_lee_check_fails_when_a_committed_result_changes(lee, tmp_path, monkeypatch):
    changed = tmp_path / "results_n150.md"
    text = lee.RESULTS[150].read_text(encoding="utf-8")
    changed.write_text(text.replace("| uw_0.50 | 0.147 |", "| uw_0.50 | 0.247 |", 1), encoding="utf-8")
    assert changed.read_text(encoding="utf-8") != text
    monkeypatch.setitem(lee.RESULTS, 150, changed)
    assert lee.main(["--check"]) == 1


def fake_lee_run(root: Path, configs: dict, seeds: dict) -> None:
    """A ``cpu/`` folder as collect.py writes it: ``configs`` ``{config: {id: gold}}``, ``seeds`` ``{seed: {config:
    {id: top-ranked candidate}}}`` (vanilla; the top candidate gets logit 2, the others 0)."""
    import gzip
    import json

    def write(path, value):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))

    command = {"commit": "0" * 40, "threads": 1, "command": ["python"], "wall_seconds": 2.0, "cpu_seconds": 1.0}
    write(root / "build.json", command)
    write(root / "labels.json", configs)
    for seed, tops in seeds.items():
        folder = root / f"seed_{seed}"
        write(folder / "ranker.json", {"history": [{"step": 12, "validation_recall@1": 0.3}], "selected_step": 12,
                                       "temperature": 0.5, "validation": {"nll": 2.3, "nll_temperature": 2.2}})
        write(folder / "train.json", command)
        write(folder / "vanilla" / "run.json", {})
        write(folder / "vanilla" / "results.json", {"options": {c: {"ece_bins": 15} for c in tops}})
        for config, top in tops.items():
            lines = []
            for instance, candidate in top.items():
                scores = [2.0 if k == candidate else 0.0 for k in range(10)]
                total = sum(2.718281828459045 ** x for x in scores)
                lines.append(json.dumps({"id": instance, "scores": scores,
                                         "probabilities": [2.718281828459045 ** x / total for x in scores]}))
            with gzip.open(folder / "vanilla" / f"{config}.jsonl.gz", "wt") as out:
                out.write("\n".join(lines) + "\n")


def test_lee_verdicts_are_the_rule_on_per_seed_differences_over_the_shared_ids(lee, tmp_path):
    from dialshift.verdicts import verdict

    gold = {f"i{k}": 0 for k in range(8)}
    configs = {"dailydialog": gold, "uw_0.50": {i: 0 for i in ("i0", "i1", "i2", "i3", "x0", "x1")}}
    # per seed, dailydialog right on i0-i3 (and on 0-2 of i4-i7: ids uw_0.50 does not hold, so the pairing must drop
    # them), uw_0.50 right on 2, 1 and 2 of its shared ids i0-i3 and on both of its ids x0, x1 (also dropped)
    seeds = {}
    for seed, right in ((0, 2), (1, 1), (2, 2)):
        seeds[seed] = {"dailydialog": {f"i{k}": 0 if k < 4 + seed else 1 for k in range(8)},
                       "uw_0.50": {**{f"i{k}": 0 if k < right else 1 for k in range(4)}, "x0": 0, "x1": 0}}
    fake_lee_run(tmp_path, configs, seeds)
    run = lee.load_run(tmp_path)
    row = next(line for line in lee.verdict_rows(run, lee.finding_results(run))
               if line.startswith("| Accuracy falls with word replacement (Table 3)"))
    differences = [1 - 2 / 4, 1 - 1 / 4, 1 - 2 / 4]
    expected = verdict(differences, "+", 0.895 - 0.441)
    assert expected.outcome == "underpowered" and expected.power == 0.0  # three seeds: the rule decides nothing
    assert (f"| 4 | +0.500, +0.750, +0.500 | {expected.cell(digits=3)} | {0.895 - 0.441:+.3f} (Table 3, Acc: "
            f"vanilla test 0.895 − vanilla uw_0.50 0.441) | {expected.seeds_for_power} (") in row


def test_lee_ensemble_is_the_mean_softmax_of_every_seeds_kept_logits(lee, tmp_path):
    configs = {"dailydialog": {"a": 0, "b": 3}}
    fake_lee_run(tmp_path, configs, {0: {"dailydialog": {"a": 0, "b": 1}}, 1: {"dailydialog": {"a": 0, "b": 3}}})
    run = lee.load_run(tmp_path)
    scores, probabilities = run["ensemble"]["dailydialog"]["b"]
    top, other = 2.718281828459045 ** 2 / (2.718281828459045 ** 2 + 9), 1 / (2.718281828459045 ** 2 + 9)
    assert scores[1] == scores[3] == 1.0 and probabilities[1] == pytest.approx((top + other) / 2, abs=1e-12)
    assert lee.scores(run, run["ensemble"]["dailydialog"], "dailydialog", ["a", "b"])["Acc"] == 0.5  # ties: wrong


def test_lee_kept_predictions_score_as_dialshift_evaluate_scored_them(lee):
    run = lee.load_run(lee.CPU)
    checked = 0
    for seed, data in run["seeds"].items():
        for method, found in data["methods"].items():
            for config, predictions in found["predictions"].items():
                ours = lee.scores(run, predictions, config, sorted(predictions))
                theirs = found["results"]["results"][config]
                assert ours["Acc"] == pytest.approx(theirs["recall@1"], abs=1e-12)
                assert ours["Brier"] == pytest.approx(theirs["brier"], abs=1e-12)
                assert ours["ECE"] == pytest.approx(theirs["ece"], abs=1e-12)
                checked += 1
            difference = found["results"]["differences"].get("uw_0.50", {}).get("dailydialog")
            if difference:
                paired, shared = lee.paired(run, "Acc", (method, "uw_0.50"), (method, "dailydialog"))
                assert shared == difference["shared"]
                assert paired[seed] == pytest.approx(difference["metrics"]["recall@1"]["value"], abs=1e-12)
    assert checked >= 12


def test_lee_check_fails_when_a_kept_prediction_changes(lee, tmp_path, monkeypatch):
    import gzip
    import json
    import shutil

    shutil.copytree(lee.CPU, tmp_path / "cpu")
    path = tmp_path / "cpu" / "seed_0" / "vanilla" / "ic_0of6.jsonl.gz"
    rows = [json.loads(line) for line in gzip.open(path, "rt")]
    labels = json.loads((tmp_path / "cpu" / "labels.json").read_text())["ic_0of6"]
    for row in rows:  # every instance ranked right
        row["scores"] = [1.0 if k == labels[row["id"]] else 0.0 for k in range(len(row["scores"]))]
    with gzip.open(path, "wt") as out:
        out.write("".join(json.dumps(row) + "\n" for row in rows))
    monkeypatch.setattr(lee, "CPU", tmp_path / "cpu")
    assert lee.main(["--check"]) == 2  # its checksum
    assert lee.main(["--checksums"]) == 0
    assert lee.main(["--check"]) == 2  # with the checksums rewritten: the metrics of results.json


@pytest.fixture
def lee_copy(lee, tmp_path, monkeypatch):
    """The committed run and report copied to ``tmp_path`` with the generator pointed at them."""
    import shutil

    shutil.copytree(lee.CPU, tmp_path / "cpu")
    shutil.copyfile(lee.REPORT, tmp_path / "reproduction_lee.md")
    monkeypatch.setattr(lee, "CPU", tmp_path / "cpu")
    monkeypatch.setattr(lee, "REPORT", tmp_path / "reproduction_lee.md")
    assert lee.main(["--check"]) == 0
    return tmp_path


def edit_json(path: Path, change) -> None:
    import json

    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")


def test_lee_check_fails_when_a_status_sentence_with_a_number_changes(lee, lee_copy, capsys):
    report = lee_copy / "reproduction_lee.md"
    text = report.read_text(encoding="utf-8")
    status = text.split("(status): begin -->\n")[1].split("<!--")[0]
    for old, new in (("12 underpowered", "12 reproduced"), ("about 29 CPU hours", "about 2 CPU hours")):
        assert old in status
        report.write_text(text.replace(old, new, 1), encoding="utf-8")
        assert lee.main(["--check"]) == 1
    report.write_text(text.replace("**15 equal-width bins**", "**10 equal-width bins**"), encoding="utf-8")
    assert lee.main(["--check"]) == 2 and "ECE with **15 equal-width bins**" in capsys.readouterr().err


@pytest.mark.parametrize("relative, change", [
    ("seed_1/vanilla/results.json", lambda v: v["results"]["uw_0.50"].update({"recall@1": 0.5})),
    ("seed_0/dropout/run.json", lambda v: v["run"].update({"method": "vanilla"})),
    ("seed_2/train.json", lambda v: v.update({"cpu_seconds": 1.0})),
    ("seed_0/vanilla_temperature.json", lambda v: v.update({"command": ["python", "seed_9"]})),
    ("labels.json", lambda v: v["uw_0.50"].update({next(iter(v["uw_0.50"])): 9})),
])
def test_lee_check_fails_when_a_committed_run_file_changes(lee, lee_copy, capsys, relative, change):
    edit_json(lee_copy / "cpu" / relative, change)
    assert lee.main(["--check"]) == 2  # the checksum
    assert capsys.readouterr().err.count("\n") == 1
    assert lee.main(["--checksums"]) == 0
    assert lee.main(["--check"]) != 0  # the file's content: a mismatch, or a report that differs


def test_lee_check_fails_when_the_checksums_change(lee, lee_copy):
    manifest = lee_copy / "cpu" / "sha256.json"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert lee.main(["--check"]) == 1  # its digest is in the status paragraph


def test_lee_missing_seed_or_truncated_gz_is_a_one_line_error(lee, lee_copy, capsys):
    import shutil

    path = lee_copy / "cpu" / "seed_2" / "vanilla" / "sr_2.jsonl.gz"
    path.write_bytes(path.read_bytes()[:200])
    assert lee.main(["--check"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "sr_2.jsonl.gz: truncated or corrupt gzip" in error
    shutil.rmtree(lee_copy / "cpu" / "seed_2")
    assert lee.main(["--check"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "seed_2" in error and "missing" in error


def test_lee_collect_without_a_run_folder_is_a_one_line_error(tmp_path, capsys):
    collect = load(DOCS / "reproduction_lee" / "collect.py")
    before = sorted(collect.TARGET.rglob("*"))
    assert collect.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and sorted(collect.TARGET.rglob("*")) == before


def test_xing_report_is_what_make_tables_renders(xing):
    assert xing.main(["--check"]) == 0


def xing_run(root: Path, variant: str, seed: int, das: dict, perplexity: float = 50.0, history: float = 0.9):
    """A run folder as collect.py writes it: ``das`` maps a set (e.g. ``frequent_middle``) to its DAS ratio, every
    other set gets 1.0."""
    import json

    structure, probability = variant.split("@")
    folder = root / f"{structure}_p{probability}" / f"seed_{seed}"
    folder.mkdir(parents=True)
    training = {"config": "ubuntu", "max_train_instances": 6000, "num_epochs": 2, "learning_rate": 0.003,
                "batch_size": 64, "dim": 64, "layers": 1, "vocab_size": 2000, "max_utterance_tokens": 10,
                "max_response_tokens": 10, "output_bias": "unigram", "max_eval_instances": 300, "replicates": 200}
    results = {f"ubuntu_distract_{name}": {"das_ratio": das.get(name, 1.0), "mean_as_distractor": 0.5,
                                           "mean_as_history_distracted": 0.9, "as_first_history": 0.8,
                                           "as_last_history": 1.1} for name in
               ("random_0.5", "random_0.7", "random_1.0", "frequent_begin", "frequent_middle", "frequent_end",
                "rare_begin", "rare_middle", "rare_end")}
    files = {"run": {"training": training}, "results": {"results": results},
             "original": {"ubuntu": {"perplexity": perplexity, "mean_as_history": history}},
             "command": {"commit": "0123456789abcdef", "cpu_seconds": 40.0, "wall_seconds": 200.0}}
    for name, value in files.items():
        (folder / f"{name}.json").write_text(json.dumps(value), encoding="utf-8")


def test_xing_check_fails_when_a_committed_value_changes(xing, tmp_path, monkeypatch):
    import json
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(xing.RUNS, runs)
    path = sorted(runs.glob("static_ui_p0.7/seed_0/results.json"))[0]
    data = json.loads(path.read_text(encoding="utf-8"))
    data["results"]["ubuntu_distract_frequent_middle"]["das_ratio"] += 0.5
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(xing, "RUNS", runs)
    assert xing.main(["--check"]) == 1


@pytest.mark.parametrize("sign, outcome", [(1, "reproduced"), (-1, "not reproduced")])
def test_xing_verdicts_are_the_rule_on_per_seed_paired_differences(xing, tmp_path, sign, outcome):
    """Three seeds of StaticUI 0.0 and 0.7 whose frequent-middle DAS ratios differ by +-0.10, 0.12, 0.08: the
    cell is the rule's verdict on those paired differences, with its interval; a single seed is not decidable."""
    from dialshift.verdicts import verdict

    differences = [0.10, 0.12, 0.08]
    for seed, difference in enumerate(differences):
        xing_run(tmp_path, "static_ui@0.0", seed, {"frequent_middle": 1.0 + sign * difference})
        xing_run(tmp_path, "static_ui@0.7", seed, {"frequent_middle": 1.0})
    xing_run(tmp_path, "static@0.0", 0, {"frequent_middle": 1.5})
    xing_run(tmp_path, "static@0.7", 0, {"frequent_middle": 1.0})
    lines, outcomes = xing.comparison_table(xing.collect(tmp_path))
    row = next(line for line in lines if "| StaticUI 0.0 − StaticUI 0.7 |" in line)
    cells = row.split(" | ")
    middle = cells[2 + xing.SETS.index("frequent_middle")]
    expected = verdict([sign * d for d in differences], "+")
    assert middle.startswith(f"{outcome}: {expected.mean:+.3f} [{expected.low:+.3f}, {expected.high:+.3f}], 3 seeds")
    assert cells[2 + xing.SETS.index("frequent_end")].startswith("not decidable: +0.000, 3 seeds")  # no spread
    single = next(line for line in lines if "| Static 0.0 − Static 0.7 |" in line)
    assert "not decidable: +0.500, 1 seed;" in single
    assert outcomes.count(outcome) == 1


def test_xing_unigram_row_and_margin_read_unigram_json(xing):
    import json

    unigram = json.loads(xing.UNIGRAM.read_text(encoding="utf-8"))
    generated = xing.generate()
    assert f"| – | add-one unigram (no context) | ours | – | {unigram['perplexity']:.1f} |" in generated
    assert f"x the unigram's {unigram['perplexity']:.1f}." in generated
    assert f"against the unigram's {unigram['perplexity']:.1f}" in generated


def test_xing_margin_counts_the_runs_over_the_rule(xing, tmp_path):
    xing_run(tmp_path, "static_ui@0.0", 0, {}, perplexity=80.0)
    xing_run(tmp_path, "static_ui@0.0", 1, {}, perplexity=90.0)
    sentence = xing.margin_sentence(xing.collect(tmp_path), {"perplexity": 100.0})
    assert "1 of 2 runs meet it; their perplexity is 0.80 to 0.90 x the unigram's 100.0." in sentence


def test_xing_collect_copies_the_report_files_and_hashes_the_predictions(tmp_path):
    import hashlib
    import json

    collect = load(DOCS / "reproduction_xing" / "collect.py")
    run = tmp_path / "out" / "runs" / "static_ui_p0.7" / "seed_1"
    (run / "predictions" / "results").mkdir(parents=True)
    for name in ("dialshift_model.json", "command.json", "predictions/original.json",
                 "predictions/results/results.json"):
        (run / name).write_text(json.dumps({"name": name}), encoding="utf-8")
    (run / "predictions" / "ubuntu.jsonl").write_text('{"id": "a"}\n', encoding="utf-8")
    unfinished = tmp_path / "out" / "runs" / "static_ui_p0.0" / "seed_0"
    unfinished.mkdir(parents=True)
    assert collect.collect(tmp_path / "out", tmp_path / "runs") == 1
    dest = tmp_path / "runs" / "static_ui_p0.7" / "seed_1"
    assert json.loads((dest / "run.json").read_text()) == {"name": "dialshift_model.json"}
    assert json.loads((dest / "results.json").read_text()) == {"name": "predictions/results/results.json"}
    digest = hashlib.sha256(b'{"id": "a"}\n').hexdigest()
    assert json.loads((dest / "sha256.json").read_text()) == {"ubuntu.jsonl": digest}
    assert not (tmp_path / "runs" / "static_ui_p0.0").exists()
    (run / "predictions" / "original.json").unlink()
    with pytest.raises(SystemExit, match=r"seed_1: finished \(command.json\) but without predictions/original.json"):
        collect.collect(tmp_path / "out", tmp_path / "runs2")


@pytest.fixture(scope="module")
def khosla():
    return load(DOCS / "reproduction_khosla" / "make_tables.py")


def fake_seed(root: Path, build: str, config: str, seed: int, test_acc: float, cov_acc: float) -> None:
    """A run folder as collect.py writes it, with MSP's test and cov_test accuracy given (other metrics follow)."""
    import json

    import numpy as np

    folder = root / build / config / f"seed_{seed}"
    folder.mkdir(parents=True)
    metrics = {split: {"f1_all": acc - 0.05, "f1_in": acc - 0.06, "f1_out": acc, "accuracy": acc, "auroc": 0.9}
               for split, acc in (("test", test_acc), ("cov_test", cov_acc))}
    (folder / "run.json").write_text(json.dumps({"results": {"msp": metrics, "maha": metrics},
                                                 "validation_accuracy": 0.9,
                                                 "options": {"features": "pooler", "cosine_scoring": "nearest"}}))
    (folder / "command.json").write_text(json.dumps({"commit": "0" * 40, "threads": 2, "cpu_seconds": 60.0,
                                                     "command": ["python", "trainers/open_world.py", "--num-epochs",
                                                                 "2", "--learning-rate", "1e-4"]}))
    gold = np.array([0, 1, 2, 3, 0, 1, 2, 3], dtype=np.int8)
    arrays = {"names": np.array(["a", "b", "c", "oos"])}
    for split in ("test", "cov_test"):
        arrays |= {f"gold/{split}": gold, f"argmax/{split}": gold, f"msp/{split}": gold, f"maha/{split}": gold}
    np.savez_compressed(folder / "predictions.npz", **arrays)


def test_khosla_few_shot_finding_is_the_rule_on_the_difference_of_drops(khosla, tmp_path):
    from dialshift.verdicts import paired_differences, verdict

    full = {0: (0.90, 0.80), 1: (0.92, 0.81), 2: (0.91, 0.79)}  # drops 10, 11, 12 points
    few = {0: (0.70, 0.68), 1: (0.72, 0.69), 2: (0.71, 0.70)}  # drops 2, 3, 1 points
    for seed in full:
        fake_seed(tmp_path, "default", "clinc14_cov", seed, *full[seed])
        fake_seed(tmp_path, "default", "clinc14_cov_5shot", seed, *few[seed])
    generated = khosla.generate(tmp_path)
    expected = verdict(paired_differences({s: a - b for s, (a, b) in full.items()},
                                          {s: a - b for s, (a, b) in few.items()}), "+")
    assert expected.outcome == "reproduced"
    row = next(line for line in generated.splitlines() if line.startswith("| Few-shot loses less Acc"))
    assert "| **reproduced** for MSP, Maha |" in row and f"MSP {expected.cell(100)}" in row


def test_khosla_check_fails_when_a_committed_run_changes(khosla, tmp_path):
    import json
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(khosla.RUNS, runs)
    run_json = sorted(runs.glob("*/*/seed_*/run.json"))[0]
    run = json.loads(run_json.read_text())
    method = next(iter(run["results"]))
    before = khosla.generate(runs)
    run["results"][method]["cov_test"]["accuracy"] -= 0.1
    run_json.write_text(json.dumps(run))
    assert khosla.generate(runs) != before


def test_khosla_report_is_what_make_tables_renders(khosla):
    assert khosla.main(["--check"]) == 0


def test_splice_replaces_only_the_generated_part_and_names_a_report_without_markers(tmp_path):
    from dialshift.reports import markers, splice, write_or_check

    begin, end = markers("docs/x/make_tables.py")
    report = f"# head\n{begin}\nold\nlines\n{end}\ntail\n"
    assert splice(report, "new\n", begin, end, tmp_path / "x.md") == f"# head\n{begin}\nnew\n{end}\ntail\n"
    for broken in ("# head\n", f"{end}\n{begin}\n", f"{begin}\n{begin}\n{end}\n"):
        with pytest.raises(SystemExit, match="x.md: needs one"):
            splice(broken, "new\n", begin, end, tmp_path / "x.md")
    path = tmp_path / "x.md"
    assert write_or_check(path, report, check=False) == 0 and path.read_text() == report
    assert write_or_check(path, report, check=True) == 0
    assert write_or_check(path, report + "more\n", check=True) == 1 and path.read_text() == report


def test_khosla_figures_draw_figure_1_and_the_appendix_layout(khosla, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    shapes, subplots = [], plt.subplots
    monkeypatch.setattr(plt, "subplots", lambda *shape, **kw: shapes.append(shape) or subplots(*shape, **kw))
    fake_seed(tmp_path / "runs", "default", "clinc14_cov", 0, 0.9, 0.8)
    written = khosla.figure(tmp_path / "runs", tmp_path)
    assert [path.name for path in written] == [khosla.FIGURE.name, "figure_a1_clinc14_cov_maha.png"]
    assert shapes == [(1, 3), (2, 2)] and all(path.stat().st_size > 10_000 for path in written)
    from dialshift.plots import open_world_confusion_figure

    with pytest.raises(Exception, match="layout 'grid' must be"):
        open_world_confusion_figure({}, ["a", "oos"], tmp_path / "x.png", layout="grid")


def test_xing_unigram_of_a_folder_without_the_config_is_a_one_line_error(xing, tmp_path, capsys):
    before = xing.UNIGRAM.read_bytes()
    assert xing.main(["--unigram", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "make_tables.py: error:" in error and str(tmp_path) in error
    assert xing.UNIGRAM.read_bytes() == before


def test_lee_context_turns_of_a_folder_without_dailydialog_is_a_one_line_error(lee, tmp_path, capsys):
    before = lee.CONTEXT_TURNS.read_bytes()
    assert lee.main(["--context-turns", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and lee.CONTEXT_TURNS.read_bytes() == before


def test_lee_context_table_shows_the_committed_turns(lee):
    import json

    turns = json.loads(lee.CONTEXT_TURNS.read_text(encoding="utf-8"))
    row = turns["uw_0.50"]
    assert f"| uw_0.50 | {row['rows']:,} | {row['mean_turns']:.2f} |" in "\n".join(lee.context_table())


def test_collect_main_needs_one_folder_and_fails_when_nothing_was_collected(tmp_path, capsys):
    from dialshift.reports import collect_main

    doc = "Title.\n\n    collect.py OUT\n\nMore."
    calls = []

    def collect(out, target):
        calls.append((out, target))
        return len(calls) - 1

    assert collect_main(doc, collect, tmp_path, []) == 2 and not calls
    assert capsys.readouterr().err == "    collect.py OUT\n"
    assert collect_main(doc, collect, tmp_path, ["OUT"]) == 2  # nothing collected
    assert collect_main(doc, collect, tmp_path, ["OUT"]) == 0
    assert calls[-1] == (Path("OUT"), tmp_path) and f"1 run folder(s) -> {tmp_path}" in capsys.readouterr().out
