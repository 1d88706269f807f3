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
