"""The reproduction reports regenerate from their committed files: the generated part of each report is exactly what
its table generator writes."""

import importlib.util
import json
import re
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
    shutil.copyfile(han.SUMMARY, tmp_path / "summary.json")
    monkeypatch.setattr(han, "RUNS", tmp_path / "runs")
    monkeypatch.setattr(han, "REAL_ENV", tmp_path / "real_env")
    monkeypatch.setattr(han, "REPORT", tmp_path / "reproduction_han.md")
    monkeypatch.setattr(han, "SUMMARY", tmp_path / "summary.json")
    assert han.main(["--check"]) == 0
    return tmp_path


def tamper_summary(generator, capsys) -> None:
    """``--check`` of a generator whose ``summary.json`` copy (``generator.SUMMARY``) matches its tables fails, in
    one line, once any count of that summary changes or the file goes; rendering writes it back."""
    original = generator.SUMMARY.read_text(encoding="utf-8")
    summary = json.loads(original)
    changes = [lambda s: s["outcomes"].update(reproduced=s["outcomes"].get("reproduced", 0) + 1), lambda s: s.update(cells=s["cells"] + 1),
               lambda s: s["groups"][0].update(seeds=[s["groups"][0]["seeds"][0] + 1]),
               lambda s: s["cost"].update(runs=s["cost"]["runs"] + 1)]
    for change in changes:
        changed = json.loads(original)
        change(changed)
        assert changed != summary
        generator.SUMMARY.write_text(json.dumps(changed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        capsys.readouterr()
        assert generator.main(["--check"]) == 1
        assert capsys.readouterr().err.count("\n") == 1
    generator.SUMMARY.unlink()
    assert generator.main(["--check"]) == 1 and "summary.json is missing" in capsys.readouterr().err
    assert generator.main([]) == 0 and generator.SUMMARY.read_text(encoding="utf-8") == original
    assert generator.main(["--check"]) == 0


def test_han_check_fails_when_its_summary_changes(han, han_copy, capsys):
    tamper_summary(han, capsys)


def test_han_summary_counts_the_verdicts_of_its_tables(han):
    """The summary make_status renders from is the verdict table's outcomes, the seeds the verdicts rest on and the
    seed-runs committed."""
    summary = json.loads(han.SUMMARY.read_text(encoding="utf-8"))
    rows = han.REPORT.read_text(encoding="utf-8").split("(verdicts): begin -->")[1].split("<!--")[0]
    outcomes = [o for line in rows.splitlines()[3:] for o in han.OUTCOMES if f"{o} (" in line.split(" | ")[2]]
    assert summary["cells"] == len(outcomes) == sum(summary["outcomes"].values())
    assert summary["outcomes"] == {o: outcomes.count(o) for o in han.OUTCOMES if o in outcomes}
    assert summary["cost"]["runs"] == sum(map(len, han.committed_runs().values()))


def test_han_check_fails_when_a_sentence_with_a_number_changes(han, han_copy):
    report = han_copy / "reproduction_han.md"
    text = report.read_text(encoding="utf-8")
    for old, new in (("Tables 3-4 are: 9 underpowered", "Tables 3-4 are: 9 reproduced"),
                     ("+UMS − baseline is +2.1", "+UMS − baseline is +3.1"),  # the status, the seed-0 reading
                     ("Debiasing adds -0.1 [-1.1, +0.9]", "Debiasing adds +0.1 [-1.1, +0.9]"),  # the seeds reading
                     ("-9.8 / +5.5 on Repetition", "-9.8 / +4.5 on Repetition"),
                     # the readings beside the tables: seed 0, ECE, Interrogative Word, real environment, costs
                     ("Repetition -9.8, Negation -0.7", "Repetition -8.9, Negation -0.7"), ("(26 → 15 %", "(26 → 16 %"),
                     ("(0.001-0.051 over", "(0.001-0.050 over"), ("69-78 % at seed 0", "70-78 % at seed 0"),
                     ("median rank 2,911 of", "median rank 2,910 of"), ("reach 22.7-24.7 %", "reach 22.7-24.8 %"),
                     ("it is -2.0 [-4.3, +0.2]", "it is -2.0 [-4.3, +0.3]"), ("59.6 / 46.6 / 47.5 %", "59.6 / 46.6 %"),
                     ("1,356 CPU s (23", "1,365 CPU s (23"), ("228-319 CPU s each", "228-320 CPU s each"),
                     ("UMS halves the pairs/s** (0.48-0.62)", "UMS halves the pairs/s** (0.48-0.60)")):
        assert old in text, old
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
    shutil.copyfile(lee.SUMMARY, tmp_path / "summary.json")
    monkeypatch.setattr(lee, "CPU", tmp_path / "cpu")
    monkeypatch.setattr(lee, "REPORT", tmp_path / "reproduction_lee.md")
    monkeypatch.setattr(lee, "SUMMARY", tmp_path / "summary.json")
    assert lee.main(["--check"]) == 0
    return tmp_path


def test_lee_check_fails_when_its_summary_changes(lee, lee_copy, capsys):
    tamper_summary(lee, capsys)


def test_lee_summary_counts_its_seeds_from_the_run(lee, lee_copy):
    """The seeds of Lee's summary are those its verdicts rest on (every seed folder; MC dropout's where it has
    fewer) and its seed-runs the seed folders: a seed less changes them."""
    import shutil

    def expected():
        folders = sorted((lee_copy / "cpu").glob("seed_*"), key=lambda p: int(p.name.removeprefix("seed_")))
        return sorted({len(folders), sum((p / "dropout").is_dir() for p in folders)}), len(folders), folders

    seeds, runs, folders = expected()
    summary = json.loads(lee.SUMMARY.read_text(encoding="utf-8"))
    assert summary["groups"][0]["seeds"] == seeds and summary["cost"]["runs"] == runs
    shutil.rmtree(folders[-1])
    assert lee.main(["--checksums"]) == 0
    assert lee.main([]) == 0
    seeds, runs, _ = expected()
    summary = json.loads(lee.SUMMARY.read_text(encoding="utf-8"))
    assert summary["groups"][0]["seeds"] == seeds and summary["cost"]["runs"] == runs


def test_lee_what_ran_names_the_seeds_of_the_run(lee, lee_copy):
    """"What ran" lists the seed folders and those with MC dropout; a changed seed list fails --check."""
    report = lee_copy / "reproduction_lee.md"
    text = report.read_text(encoding="utf-8")
    block = text.split("(what ran): begin -->\n")[1].split("<!--")[0]
    folders = sorted((lee_copy / "cpu").glob("seed_*"), key=lambda p: int(p.name.removeprefix("seed_")))
    seeds = ", ".join(p.name.removeprefix("seed_") for p in folders)
    dropout = [p.name.removeprefix("seed_") for p in folders if (p / "dropout").is_dir()]
    named = f"seed{'s' * (len(dropout) != 1)} {', '.join(dropout)}" if dropout else "no seed"
    assert f"rankers of seeds {seeds} and" in block and f"MC dropout of {named}" in block
    report.write_text(text.replace(f"rankers of seeds {seeds} and", f"rankers of seeds {seeds}, 99 and", 1),
                      encoding="utf-8")
    assert lee.main(["--check"]) == 1


def test_lee_without_a_run_has_no_summary(lee, lee_copy, capsys):
    """A report with no run collected has no summary: a stale summary.json fails --check and rendering removes it."""
    import shutil

    shutil.rmtree(lee_copy / "cpu")
    (lee_copy / "cpu").mkdir()
    assert lee.main(["--check"]) == 1  # the report says no run was collected
    assert lee.main([]) == 0 and not lee.SUMMARY.exists()
    assert lee.main(["--check"]) == 0
    lee.SUMMARY.write_text("{}", encoding="utf-8")
    capsys.readouterr()
    assert lee.main(["--check"]) == 1 and "no longer committed" in capsys.readouterr().err


def edit_json(path: Path, change) -> None:
    import json

    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=1), encoding="utf-8")


def test_lee_check_fails_when_a_status_sentence_with_a_number_changes(lee, lee_copy, capsys):
    report = lee_copy / "reproduction_lee.md"
    text = report.read_text(encoding="utf-8")
    status = text.split("(status): begin -->\n")[1].split("<!--")[0]
    absent = re.search(r"\d+ absent", status).group()  # a count the rule renders, whatever it is
    for old, new in ((absent, absent.replace("absent", "reproduced")), ("about 29 CPU hours", "about 2 CPU hours")):
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
    other set gets 1.0; the command, settings and digests agree with the folder."""
    import json

    structure, probability = variant.split("@")
    base, no_loss = structure.removesuffix("_no_loss"), structure.endswith("_no_loss")
    folder = root / f"{structure}_p{probability}" / f"seed_{seed}"
    folder.mkdir(parents=True)
    training = {"config": "ubuntu", "max_train_instances": 6000, "num_epochs": 2, "learning_rate": 0.003,
                "batch_size": 64, "dim": 64, "layers": 1, "vocab_size": 2000, "max_utterance_tokens": 10,
                "max_response_tokens": 10, "output_bias": "unigram", "max_eval_instances": 300, "replicates": 200,
                "seed": seed, "structure": base, "train_probability": float(probability), "no_attention_loss": no_loss}
    sets = ("random_0.5", "random_0.7", "random_1.0", "frequent_begin", "frequent_middle", "frequent_end",
            "rare_begin", "rare_middle", "rare_end")
    results = {f"ubuntu_distract_{name}": {"das_ratio": das.get(name, 1.0), "das_ratio_of_means": 1.0,
                                           "mean_as_distractor": 0.5, "mean_as_history_distracted": 0.9,
                                           "as_first_history": 0.8, "as_last_history": 1.1, "perplexity": perplexity}
               for name in sets}
    command = ["python", "trainers/seq2seq.py", "--seed", str(seed), "--structure", base, "--train-probability",
               probability] + ["--no-attention-loss"] * no_loss
    files = {"run": {"training": training}, "results": {"results": results},
             "original": {"ubuntu": {"perplexity": perplexity, "mean_as_history": history}}
             | {f"ubuntu_distract_{name}": {"perplexity": perplexity} for name in sets},
             "command": {"commit": "0123456789abcdef", "cpu_seconds": 40.0, "wall_seconds": 200.0, "command": command},
             "sha256": {f"{name}.jsonl": "0" * 64 for name in ["ubuntu", *(f"ubuntu_distract_{s}" for s in sets)]}}
    for name, value in files.items():
        (folder / f"{name}.json").write_text(json.dumps(value), encoding="utf-8")


XING_TAMPERING = {
    "a DAS ratio of results.json": ("results.json", lambda d: d["results"]["ubuntu_distract_frequent_middle"].update(
        das_ratio=d["results"]["ubuntu_distract_frequent_middle"]["das_ratio"] + 0.5), 1),
    "an interval of results.json": ("results.json", lambda d: d.update(intervals={}), 1),
    "a perplexity of results.json": ("results.json", lambda d: d["results"]["ubuntu_distract_rare_end"].update(
        perplexity=1.0), 2),
    "run.json's settings": ("run.json", lambda d: d["training"].update(seed=5), 2),
    "run.json's history": ("run.json", lambda d: d.update(validation=[]), 1),
    "command.json's commit": ("command.json", lambda d: d.update(commit="f" * 40), 1),
    "command.json's structure": ("command.json", lambda d: d["command"].__setitem__(
        d["command"].index("--structure") + 1, "dynamic"), 2),
    "a digest of sha256.json": ("sha256.json", lambda d: d.update({"ubuntu.jsonl": "1" * 64}), 1),
    "a file of sha256.json": ("sha256.json", lambda d: d.pop("ubuntu.jsonl"), 2),
    "original.json's perplexity": ("original.json", lambda d: d["ubuntu"].update(perplexity=1.0), 1),
}


@pytest.mark.parametrize("tampering", list(XING_TAMPERING))
def test_xing_check_fails_when_a_committed_run_file_changes(xing, tmp_path, monkeypatch, capsys, tampering):
    """Every run file counts: a changed value, command, setting or digest fails ``--check``; one that contradicts
    another file or its folder is a one-line error naming it (exit 2)."""
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(xing.RUNS, runs)
    monkeypatch.setattr(xing, "RUNS", runs)
    name, change, status = XING_TAMPERING[tampering]
    change_json(runs / "static_ui_p0.7" / "seed_0" / name, change)
    assert xing.main(["--check"]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    if status == 2:
        assert "static_ui_p0.7/seed_0" in err


def changed_numbers(text: str, block: str, picks) -> list[str]:
    """``text`` with one number of the generated ``block`` (the text between its begin and end markers) incremented,
    for each index in ``picks`` (of the block's numbers)."""
    import re

    start = text.index(f"({block}): begin -->") + len(f"({block}): begin -->")
    numbers = list(re.finditer(r"\d+", text[start:text.index(f"({block}): end -->")]))
    return [text[:start + numbers[i].start()] + str(int(numbers[i].group()) + 1) + text[start + numbers[i].end():]
            for i in picks]


def test_xing_check_fails_when_a_prose_sentence_with_a_number_changes(xing, tmp_path, monkeypatch):
    """The runs' count and seeds (intro), the margin and the runs' validation perplexity (setting) are rendered."""
    report = tmp_path / "reproduction_xing.md"
    text = xing.REPORT.read_text(encoding="utf-8")
    monkeypatch.setattr(xing, "REPORT", report)
    for changed in changed_numbers(text, "intro", [0, -1]) + changed_numbers(text, "setting", [0, -1]):
        report.write_text(changed, encoding="utf-8")
        assert xing.main(["--check"]) == 1
    report.write_text(text, encoding="utf-8")
    assert xing.main(["--check"]) == 0


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_xing_damaged_or_missing_run_file_is_a_one_line_error(xing, tmp_path, monkeypatch, capsys, damage):
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(xing.RUNS, runs)
    monkeypatch.setattr(xing, "RUNS", runs)
    path = runs / "static_p0.5" / "seed_1" / "results.json"
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    else:
        path.unlink()
    assert xing.main(["--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err


def test_xing_check_fails_when_a_seed_folder_goes(xing, tmp_path, monkeypatch):
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(xing.RUNS, runs)
    monkeypatch.setattr(xing, "RUNS", runs)
    shutil.rmtree(runs / "static_p0.5" / "seed_1")
    assert xing.main(["--check"]) == 1


def test_xing_verdicts_weigh_the_paper_s_value_and_give_none_from_one_seed(xing, tmp_path):
    """Six seeds of StaticUI 0.0 and 0.7 whose frequent-middle DAS ratios differ by about 0.10: the cell is
    the rule's verdict on those paired differences with the paper's difference (0.75 - 0.66); on frequent begin the
    paper's numbers (0.32 - 0.36) go against its claim, so that cell is marked and tests the paper's sign; a variant
    pair with one seed gets no verdict."""
    from dialshift.verdicts import verdict

    differences = [0.10, 0.12, 0.08, 0.11, 0.09, 0.10]
    for seed, difference in enumerate(differences):
        xing_run(tmp_path, "static_ui@0.0", seed, {"frequent_middle": 1.0 + difference,
                                                   "frequent_begin": 1.0 - difference})
        xing_run(tmp_path, "static_ui@0.7", seed, {})
    xing_run(tmp_path, "static@0.0", 0, {"frequent_middle": 1.5})
    xing_run(tmp_path, "static@0.7", 0, {})
    lines, cells = xing.comparison_table(xing.collect(tmp_path))
    row = next(line for line in lines if "| StaticUI 0.0 − StaticUI 0.7 |" in line).split(" | ")
    middle = verdict(differences, "+", 0.09)
    assert row[2 + xing.SETS.index("frequent_middle")].startswith(
        f"{middle.outcome}: {middle.mean:+.3f} [{middle.low:+.3f}, {middle.high:+.3f}], 6 seeds; paper +0.09; "
        f"power {middle.power:.2f}")
    begin = verdict([-d for d in differences], "-", -0.04)
    assert row[2 + xing.SETS.index("frequent_begin")].startswith(
        f"{xing.AGAINST}{begin.outcome}: {begin.mean:+.3f} [{begin.low:+.3f}, {begin.high:+.3f}], 6 seeds; "
        "paper -0.04")
    assert (middle.outcome, begin.outcome) == ("reproduced", "stronger than the paper")
    single = next(line for line in lines if "| Static 0.0 − Static 0.7 |" in line)
    assert f"{xing.ONE_SEED} (+0.500, 1 seed; paper +0.10)" in single
    assert sum(cell["outcome"] == xing.ONE_SEED for cell in cells) == len(xing.SETS)


def test_xing_marks_every_cell_whose_paper_numbers_go_against_the_claim(xing):
    """The marked cells are exactly those where the paper's own Table 3 difference is 0 or below."""
    generated = xing.generate()
    expected = sum(round(xing.paper_das(first, name) - xing.paper_das(second, name), 2) <= 0
                   for _, first, second in xing.COMPARISONS for name in xing.SETS)
    expected += sum(round(xing.paper_das(f"{s}@0.0", f"{k}_end") - xing.paper_das(f"{s}@0.0", f"{k}_begin"), 2) <= 0
                    for s in xing.STRUCTURES for k in ("frequent", "rare"))
    verdicts = generated.split("## Verdicts (generated)")[1].split("## What ran")[0]
    assert verdicts.count(xing.AGAINST) - 1 == expected  # one in the legend
    assert f"{expected} cells (marked {xing.AGAINST})" in generated


def test_xing_summary_renders_the_paper_s_das_range_from_table_3(xing):
    values = [value for row in xing.PAPER.values() for value in row[2:]]
    assert f"the paper's Table 3 values range {min(values):.2f} to {max(values):.2f}." in xing.generate()
    assert max(values) == 1.53


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
    """A run folder as collect.py writes it, MSP's and Maha's predictions right on a share ``acc`` of 100 utterances
    per split (the rest wrong), and run.json, results.json, command.json and sha256.json that agree with
    them."""
    import hashlib
    import json

    import numpy as np

    from dialshift.metrics.open_world import open_world_f1

    folder = root / build / config / f"seed_{seed}"
    folder.mkdir(parents=True)
    gold = np.tile(np.arange(4, dtype=np.int8), 25)
    arrays, metrics = {"names": np.array(["a", "b", "c", "oos"])}, {}
    for split, acc in (("test", test_acc), ("cov_test", cov_acc)):
        predicted = gold.copy()
        predicted[round(100 * acc):] = (gold[round(100 * acc):] + 1) % 4
        arrays |= {f"gold/{split}": gold, f"argmax/{split}": gold, f"msp/{split}": predicted,
                   f"maha/{split}": predicted}
        metrics[split] = open_world_f1(predicted, gold, oos_label=3, labels=[0, 1, 2]) | {"auroc": 0.9,
                                                                                             "instances": 100}
    np.savez_compressed(folder / "predictions.npz", **arrays)
    (folder / "run.json").write_text(json.dumps({"results": {"msp": metrics, "maha": metrics},
                                                 "validation_accuracy": 0.9,
                                                 "options": {"features": "pooler", "cosine_scoring": "nearest"}}))
    for method in ("msp", "maha"):
        for split in ("test", "cov_test"):
            (folder / "results" / method / split).mkdir(parents=True)
            (folder / "results" / method / split / "results.json").write_text(
                json.dumps({"results": {config: metrics[split]}}))
    build_command = ["dialshift", "build", "--family", "covariate"] + (["--cov-dedup", "none"] * (build == "nodedup"))
    (folder / "command.json").write_text(json.dumps({
        "commit": "0" * 40, "threads": 2, "cpu_seconds": 60.0, "build": build_command,
        "command": ["python", "trainers/open_world.py", "--config", config, "--seed", str(seed), "--num-epochs", "2",
                    "--learning-rate", "1e-4"]}))
    (folder / "sha256.json").write_text(json.dumps({f"predictions/{m}/{split}/{config}.jsonl": hashlib.sha256(
        f"{m}{split}".encode()).hexdigest() for m in ("msp", "maha") for split in ("test", "cov_test")}))


def test_khosla_few_shot_finding_is_the_rule_on_the_difference_of_drops(khosla, tmp_path):
    from dialshift.verdicts import paired_differences, verdict

    full = {0: (0.90, 0.80), 1: (0.92, 0.81), 2: (0.91, 0.79), 3: (0.90, 0.81), 4: (0.93, 0.81), 5: (0.91, 0.80)}
    few = {0: (0.70, 0.68), 1: (0.72, 0.69), 2: (0.71, 0.70), 3: (0.70, 0.67), 4: (0.72, 0.70), 5: (0.71, 0.70)}
    for seed in full:
        fake_seed(tmp_path, "default", "clinc14_cov", seed, *full[seed])
        fake_seed(tmp_path, "default", "clinc14_cov_5shot", seed, *few[seed])
    generated = khosla.generate(tmp_path)
    paper = ((91.2 - 84.2) - (84.3 - 78.6)) / 100  # Tables 4 and 5, MSP's Acc on CLINC14-COV full and 5-shot
    expected = verdict(paired_differences({s: a - b for s, (a, b) in full.items()},
                                          {s: a - b for s, (a, b) in few.items()}), "+", paper)
    row = next(line for line in generated.splitlines() if line.startswith("| Few-shot loses less Acc")
               and "| MSP |" in line)
    assert "Tables 4, 5, CLINC14-COV, MSP: Acc drop 7.0 full, 5.7 5shot" in row
    assert expected.low is not None and expected.outcome == "stronger than the paper"
    assert f"| {100 * expected.mean:.1f} [{100 * expected.low:.1f}, {100 * expected.high:.1f}], 6 seeds |" in row
    assert f"| **{expected.outcome}** | {expected.power:.2f} | {expected.seeds_for_power} |" in row


def test_khosla_tables_are_computed_from_the_kept_predictions(khosla, tmp_path):
    """MSP right on 90 and 80 of 100 in-scope-and-oos utterances: the table's Acc columns are the predictions'."""
    for seed in range(2):
        fake_seed(tmp_path, "default", "clinc14_cov", seed, 0.90, 0.80)
    row = next(line for line in khosla.generate(tmp_path).splitlines() if line.startswith("| MSP | 2 |"))
    cells = row.split(" | ")
    assert cells[5] == "90.0 ± 0.0" and cells[9] == "80.0 ± 0.0"


def khosla_copy(khosla, tmp_path, monkeypatch) -> Path:
    """A copy of the committed CLINC14-COV runs and of the report rendered from them, for ``main`` to check."""
    import shutil

    runs = tmp_path / "runs"
    shutil.copytree(khosla.RUNS / "default" / "clinc14_cov", runs / "default" / "clinc14_cov")
    report = tmp_path / "reproduction_khosla.md"
    report.write_text(khosla.REPORT.read_text(encoding="utf-8"), encoding="utf-8")
    for name, value in (("RUNS", runs), ("REPORT", report), ("SUMMARY", tmp_path / "summary.json")):
        monkeypatch.setattr(khosla, name, value)
    monkeypatch.setattr(khosla, "figure", lambda *args, **kwargs: [])
    assert khosla.main([]) == 0 and khosla.main(["--check"]) == 0
    return runs / "default" / "clinc14_cov" / "seed_1"


def change_json(path: Path, change) -> None:
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def change_prediction(path: Path) -> None:
    import numpy as np

    arrays = dict(np.load(path))
    arrays["maha/test"] = arrays["maha/test"].copy()
    arrays["maha/test"][0] = (arrays["maha/test"][0] + 1) % len(arrays["names"])
    np.savez_compressed(path, **arrays)


KHOSLA_TAMPERING = {
    "a kept prediction": (lambda seed: change_prediction(seed / "predictions.npz"), 2),
    "a truncated predictions.npz": (lambda seed: (seed / "predictions.npz").write_bytes(
        (seed / "predictions.npz").read_bytes()[:300]), 2),
    "a metric of run.json": (lambda seed: change_json(seed / "run.json", lambda d: d["results"]["msp"]["test"].update(
        f1_in=d["results"]["msp"]["test"]["f1_in"] + 0.001)), 2),
    "another field of run.json": (lambda seed: change_json(seed / "run.json", lambda d: d["fitted"]["adb"].update(
        epochs_run=d["fitted"]["adb"]["epochs_run"] + 1)), 1),
    "results.json's AUROC": (lambda seed: change_json(seed / "results" / "maha" / "test" / "results.json",
                                                      lambda d: d["results"]["clinc14_cov"].update(auroc=0.5)), 2),
    "results.json's interval": (lambda seed: change_json(
        seed / "results" / "maha" / "test" / "results.json",
        lambda d: d["intervals"]["clinc14_cov"]["auroc"].reverse()), 1),
    "command.json's commit": (lambda seed: change_json(seed / "command.json", lambda d: d.update(commit="f" * 40)), 1),
    "command.json's seed": (lambda seed: change_json(seed / "command.json", lambda d: d["command"].__setitem__(
        d["command"].index("--seed") + 1, "7")), 2),
    "a digest of sha256.json": (lambda seed: change_json(seed / "sha256.json", lambda d: d.update(
        {next(iter(d)): "0" * 64})), 1),
    "a missing seed folder": (lambda seed: __import__("shutil").rmtree(seed), 1),
    "a missing run.json": (lambda seed: (seed / "run.json").unlink(), 2),
}


@pytest.mark.parametrize("tampering", list(KHOSLA_TAMPERING))
def test_khosla_check_fails_when_a_committed_run_file_changes(khosla, tmp_path, monkeypatch, capsys, tampering):
    """Every run file counts: a changed prediction, metric, command, digest or folder fails ``--check``; one that
    contradicts another file, or cannot be read, is a one-line error naming it (exit 2)."""
    seed = khosla_copy(khosla, tmp_path, monkeypatch)
    change, status = KHOSLA_TAMPERING[tampering]
    capsys.readouterr()
    change(seed)
    assert khosla.main(["--check"]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    if status == 2:
        assert str(seed) in err


def test_khosla_check_fails_when_its_summary_changes(khosla, tmp_path, monkeypatch):
    khosla_copy(khosla, tmp_path, monkeypatch)
    khosla.SUMMARY.write_text(khosla.SUMMARY.read_text().replace('"cells": 18', '"cells": 19', 1))
    assert khosla.main(["--check"]) == 1


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


@pytest.fixture(scope="module")
def status():
    return load(DOCS / "make_status.py")


@pytest.fixture(scope="module")
def status_found(status):
    """The four reports' summaries (each report's ``summary.json``)."""
    return status.summaries()


def test_readme_status_and_khosla_cost_are_what_make_status_renders(status):
    assert status.main(["--check"]) == 0


def status_copy(status, status_found, tmp_path, monkeypatch) -> tuple[Path, Path]:
    monkeypatch.setattr(status, "summaries", lambda: status_found)
    readme, full_scale = tmp_path / "README.md", tmp_path / "full_scale.md"
    readme.write_text(status.README.read_text(encoding="utf-8"), encoding="utf-8")
    full_scale.write_text(status.FULL_SCALE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(status, "README", readme)
    monkeypatch.setattr(status, "FULL_SCALE", full_scale)
    assert status.main(["--check"]) == 0
    return readme, full_scale


def test_make_status_check_fails_when_a_number_of_the_status_paragraph_changes(status, status_found, tmp_path,
                                                                                monkeypatch):
    """Each number of the paragraph is rendered: change any one (here every seventh in turn) and --check fails."""
    import re

    readme, _ = status_copy(status, status_found, tmp_path, monkeypatch)
    original = readme.read_text(encoding="utf-8")
    begin, end = status.markers("status")
    paragraph = original.split(begin)[1].split(end)[0]
    numbers = list(re.finditer(r"\d+", paragraph))
    assert len(numbers) > 20
    offset = original.index(begin) + len(begin)
    for match in numbers[::7]:
        start, stop = offset + match.start(), offset + match.end()
        readme.write_text(original[:start] + str(int(match.group()) + 1) + original[stop:], encoding="utf-8")
        assert status.main(["--check"]) == 1, match.group()


def test_make_status_check_fails_when_the_khosla_cost_changes(status, status_found, tmp_path, monkeypatch):
    _, full_scale = status_copy(status, status_found, tmp_path, monkeypatch)
    text = full_scale.read_text(encoding="utf-8")
    khosla = json.loads((DOCS / "reproduction_khosla" / "summary.json").read_text(encoding="utf-8"))
    sentence = f"the {khosla['cost']['runs']} seed-runs"
    assert sentence in text
    full_scale.write_text(text.replace(sentence, "all 60 runs"), encoding="utf-8")
    assert status.main(["--check"]) == 1


def test_make_status_renders_each_summary_s_counts(status, tmp_path):
    """A report's summary.json drives its sentence: its groups, seeds and outcome counts, and the totals."""
    summary = {"paper": "P (2020)", "report": "docs/reproduction_p.md", "cells": 5,
               "outcomes": {"absent": 2, "reproduced": 3},
               "groups": [{"name": "B", "seeds": [2, 3], "cells": 5, "outcomes": {"reproduced": 3, "absent": 2},
                           "note": "drops 0.5 x the paper's"}], "notes": ["one note."], "cost": {"runs": 4}}
    assert status.paper_sentence(summary) == ("P (2020) (`docs/reproduction_p.md`, 4 seed-runs): B (2 to 3 seeds): 5 "
                                              "verdicts, 3 reproduced, 2 absent (drops 0.5 x the paper's). One note.")
    paragraph = status.status_paragraph({"lee": summary, "xing": None})
    assert "Over the 1 reports with a summary: 5 verdict cells, 3 reproduced, 2 absent." in paragraph
    assert "No summary yet (so not counted here): `docs/reproduction_xing.md`." in paragraph


def test_make_status_counts_lee_and_han_as_their_reports_do(status_found):
    """Lee's and Han's summary.json state the counts their reports' status paragraphs state."""
    lee, han = status_found["lee"], status_found["han"]
    lee_text = (DOCS.parent / "docs" / "reproduction_lee.md").read_text(encoding="utf-8")
    listed = ", ".join(f"{n} {o}" for o, n in lee["outcomes"].items() if o != "not decidable")
    assert f"its {lee['cells']} findings are: {listed}" in lee_text
    han_text = (DOCS / "reproduction_han.md").read_text(encoding="utf-8")
    assert f"{han['cells']} findings on Tables 3-4 are: " + ", ".join(
        f"{n} {o}" for o, n in han["outcomes"].items()) in han_text


def test_make_status_reads_each_report_s_summary_and_computes_none(status, tmp_path):
    """Every report's counts come from its summary.json alone; a report without one has no summary (the paragraph
    names it), none is computed here."""
    (tmp_path / "reproduction_lee").mkdir()
    (tmp_path / "reproduction_han").mkdir()
    mine = {"paper": "P", "report": "r", "cells": 1, "outcomes": {"absent": 1}, "groups": []}
    (tmp_path / "reproduction_lee" / "summary.json").write_text(json.dumps(mine), encoding="utf-8")
    assert status.summaries(tmp_path) == {"lee": mine, "xing": None, "khosla": None, "han": None}
    assert not hasattr(status, "FROM_GENERATOR")


def test_make_status_names_a_broken_summary_in_one_line(status, tmp_path):
    (tmp_path / "reproduction_lee").mkdir()
    (tmp_path / "reproduction_lee" / "summary.json").write_text('{"paper": 1', encoding="utf-8")
    with pytest.raises(SystemExit, match=r"reproduction_lee/summary.json: not a report summary"):
        status.summaries(tmp_path)


def test_khosla_collect_leaves_a_seed_still_running(tmp_path):
    """A seed whose trainer wrote run.json but whose command.json run_all.sh has not yet written is not finished:
    collect.py leaves it for a later call instead of committing a seed make_tables would refuse."""
    collect = load(DOCS / "reproduction_khosla" / "collect.py")
    seed = tmp_path / "out" / "default" / "clinc14_cov" / "seed_4"
    seed.mkdir(parents=True)
    (seed / "run.json").write_text(json.dumps({"results": {"msp": {}}}), encoding="utf-8")
    assert collect.collect(tmp_path / "out", tmp_path / "runs") == 0
    assert not (tmp_path / "runs").exists()
