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

    data = json.loads(han.BLOCKS["two seeds"].read_text())
    seeds = [s["adversarial"] for s in data["table"]["+deb"]["seeds"]], \
        [s["adversarial"] for s in data["table"]["baseline"]["seeds"]]
    expected = verdict([a - b for a, b in zip(*seeds, strict=True)], "+").cell()
    assert f"| +0.7 / +2.6 | {expected} |" in "\n".join(han.verdict_lines(data))
    assert expected.startswith("not decidable")


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


def test_lee_verdicts_are_the_rule_on_first_minus_second(lee):
    from dialshift.verdicts import verdict

    table = lee.parse(lee.RESULTS[150])
    difference = table["test"]["vanilla"]["Acc"] - table["uw_0.50"]["vanilla"]["Acc"]
    row = next(line for line in lee.verdict_rows({25: lee.parse(lee.RESULTS[25]), 150: table})
               if line.startswith("| Accuracy falls with word replacement"))
    assert f"| {difference:+.3f} (150) | {0.895 - 0.441:+.3f} |" in row
    assert verdict([difference], "+").outcome == "not decidable" and "| not decidable (" in row


def test_xing_report_is_what_make_tables_renders(xing):
    assert xing.main(["--check"]) == 0


def test_xing_check_fails_when_a_committed_value_changes(xing, tmp_path, monkeypatch):
    import json

    data = json.loads(xing.EARLIER.read_text(encoding="utf-8"))
    data["das_ratio"]["static_ui@0.7"]["frequent_middle"] += 0.5
    changed = tmp_path / "earlier_run.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(xing, "EARLIER", changed)
    assert xing.main(["--check"]) == 1


def test_xing_unigram_row_and_perplexity_verdict_read_unigram_json(xing):
    import json

    unigram = json.loads(xing.UNIGRAM.read_text(encoding="utf-8"))
    generated = xing.generate()
    assert f"| – | add-one unigram (no context) | ours | {unigram['perplexity']:.1f} |" in generated
    assert f"against the add-one unigram's {unigram['perplexity']:.1f}" in generated
