"""Shifts, metrics and corpora plug in like families and tasks: a distribution written out of tree (a package and its
``.dist-info`` with entry points, on ``sys.path``) adds one of each, and the command line finds them; what dialshift
ships is listed from its entry points, and docs/plugins.md is that list."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dialshift
from dialshift import plugins, registry
from dialshift.cli import main as cli
from dialshift.hub import folder_configs
from dialshift.metrics.installed import metric_folder, metric_names
from dialshift.scoring.tasks import reset_tasks
from dialshift.shifts.plugins import REQUIRED, installed_shifts
from dialshift.sources import load_source, plugin_sources
from dialshift.sources import reset as reset_sources

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "dialshift_toyplugins"

SHIFT_MODULE = '''
"""A third-party shift: reverse the order of the last N turns."""
from dataclasses import dataclass

from dialshift.shifts import Shift, ShiftResult, Skipped
from dialshift.shifts.plugins import Parameter, ShiftPlugin


@dataclass(frozen=True)
class ReverseParams:
    last: int = 2


class ReverseTurns(Shift):
    name = "reverse"
    Params = ReverseParams

    def transform(self, turns, rng):
        if len(turns) < self.params.last:
            return Skipped("too_few_turns", f"{len(turns)} turns")
        cut = len(turns) - self.params.last
        return ShiftResult(turns[:cut] + tuple(reversed(turns[cut:])))


class ReversePlugin(ShiftPlugin):
    name = "reverse"
    description = "reverse the order of the last LAST turns"
    parameters = (Parameter("last", int, "how many of the last turns are reversed", default=2, minimum=2),)
    params_class = ReverseParams

    def make(self, parameters, train):
        return ReverseTurns(**parameters)
'''

CORPUS_MODULE = '''
"""A third-party corpus: lines of ``toy/{split}.txt``, one utterance each."""
from pathlib import Path

from dialshift.sources.base import read_lines, reader_source


def read(data_dir):
    folder = Path(data_dir) / "toy"
    return {split: [text for _, text in read_lines(folder / f"{split}.txt")] for split in ("train", "test")}


SOURCE = reader_source(name="toy_corpus", path="toy", description="a toy corpus of one-line utterances",
                       license="CC0", read=read, expected={"train": 3, "test": 2}, unit="utterances")
'''

METRIC_MODULE = '''
"""A third-party evaluate module: the share of exact matches."""
import datasets
import evaluate


class ToyMatch(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(description="exact matches", citation="", inputs_description="",
                                   features=datasets.Features({"predictions": datasets.Value("int64"),
                                                               "references": datasets.Value("int64")}))

    def _compute(self, predictions, references):
        return {"toy_match": sum(p == r for p, r in zip(predictions, references)) / len(references)}
'''

METRIC_CARD = '''---
title: Toy match
sdk: gradio
description: >-
  The share of predictions equal to their reference.
---

# Toy match
'''


def write_distribution(site: Path) -> None:
    """A package and its .dist-info (what `pip install` leaves), with one plug-in of each new kind."""
    package = site / PACKAGE
    (package / "toy_match").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "shifts.py").write_text(SHIFT_MODULE)
    (package / "corpus.py").write_text(CORPUS_MODULE)
    (package / "toy_match" / "toy_match.py").write_text(METRIC_MODULE)
    (package / "toy_match" / "README.md").write_text(METRIC_CARD)
    (package / "toy_match" / "app.py").write_text("# the Space's app\n")
    (package / "toy_match" / "requirements.txt").write_text("dialshift\n")
    info = site / "dialshift_toyplugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dialshift-toyplugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(f"""\
        [dialshift.shifts]
        reverse = {PACKAGE}.shifts:ReversePlugin

        [dialshift.metrics]
        toy_match = {PACKAGE}.toy_match

        [dialshift.corpora]
        toy_corpus = {PACKAGE}.corpus:SOURCE
        """))


def forget_plugins():
    for name in [name for name in sys.modules if name == PACKAGE or name.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]  # each test writes the distribution afresh
    reset_sources()
    registry.reset()
    reset_tasks()


@pytest.fixture
def toy_site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    write_distribution(site)
    monkeypatch.syspath_prepend(str(site))
    forget_plugins()
    yield site
    forget_plugins()


def test_a_shift_plugin_is_listed_and_runs_through_dialshift_shift(toy_site, tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        cli(["shift", "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert "reverse: reverse the order of the last LAST turns" in shown
    assert "last (int >= 2; default 2): how many of the last turns are reversed" in shown
    assert "uw: Unknown Word" in shown and "ratio (float in (0, 1); required)" in shown
    rows = [{"id": f"r{k}", "context": ["one .", "two .", "three ."][: 1 + k % 3], "candidates": ["a", "b"],
             "label": 0} for k in range(6)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    assert cli(["shift", str(tmp_path / "in.jsonl"), "--shift", "reverse", "--param", "last=3", "--name", "rev",
                "--source-name", "orig", "--out", str(out)]) == 0
    assert "2 shifted rows from 6 rows" in capsys.readouterr().out
    stored = folder_configs(out)["rev"]
    assert stored.parameters["shift"] == "reverse" and stored.parameters["last"] == 3
    assert cli(["shift", str(tmp_path / "in.jsonl"), "--shift", "reverse", "--param", "last=1", "--name", "rev",
                "--source-name", "orig", "--out", str(out)]) == 2
    assert "parameter last=1: out of range: int >= 2" in capsys.readouterr().err
    assert cli(["plugins"]) == 0
    assert "reverse   reverse the order of the last LAST turns [dialshift-toyplugins]" in capsys.readouterr().out


def test_a_corpus_plugin_is_read_and_checked_by_dialshift_sources(toy_site, tmp_path, capsys):
    data = tmp_path / "data"
    (data / "toy").mkdir(parents=True)
    (data / "toy" / "train.txt").write_text("hello .\nhi .\nbye .\n")
    (data / "toy" / "test.txt").write_text("yes .\nno .\n")
    assert "toy_corpus" in plugin_sources()
    assert load_source("toy_corpus", data) == {"train": ["hello .", "hi .", "bye ."], "test": ["yes .", "no ."]}
    assert cli(["sources", "toy_corpus", "--data-dir", str(data)]) == 0
    printed = capsys.readouterr().out
    assert "toy_corpus" in printed and "train 3, test 2" in printed and " ok" in printed
    (data / "toy" / "test.txt").write_text("yes .\n")
    assert cli(["sources", "toy_corpus", "--data-dir", str(data)]) == 2
    assert "count mismatch: test 1 (official 2)" in capsys.readouterr().out


def test_a_metric_plugin_is_listed_loaded_and_published(toy_site, tmp_path, capsys):
    assert "toy_match" in metric_names() and set(metric_names()) > {"ece", "brier"}
    folder = Path(dialshift.metric_path("toy_match"))
    assert folder == toy_site / PACKAGE / "toy_match"
    from dialshift.hub.spaces import space_plans

    plans = {plan.repo_id: plan for plan in space_plans("org")}
    assert set(plans["org/toy_match"].files) == {"toy_match.py", "README.md", "app.py", "requirements.txt"}
    assert cli(["plugins"]) == 0
    assert "toy_match      The share of predictions equal to their reference. [dialshift-toyplugins]" in \
        capsys.readouterr().out
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(toy_site), str(ROOT)]), "HF_HOME": str(tmp_path / "hf"),
           "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env.pop("HF_MODULES_CACHE", None)
    code = ("import evaluate, dialshift; m = evaluate.load(dialshift.metric_path('toy_match')); "
            "print(m.compute(predictions=[1, 2, 3, 4], references=[1, 2, 0, 0])['toy_match'])")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "0.5"


def test_broken_plugins_are_one_line(tmp_path, monkeypatch, capsys):
    site = tmp_path / "site"
    write_distribution(site)
    (site / PACKAGE / "corpus.py").write_text("SOURCE = 'not a source'\n")
    (site / PACKAGE / "toy_match" / "toy_match.py").unlink()
    monkeypatch.syspath_prepend(str(site))
    forget_plugins()
    try:
        assert cli(["sources", "--data-dir", str(tmp_path)]) == 2
        assert "corpus plug-in 'toy_corpus' (dialshift_toyplugins.corpus:SOURCE) is not a SourceInfo" in \
            capsys.readouterr().err
        with pytest.raises(dialshift.errors.DialshiftError, match="holds no toy_match.py"):
            dialshift.metric_path("toy_match")
    finally:
        forget_plugins()


def test_shipped_metric_folders_are_the_installed_metrics():
    folders = sorted(path.parent.name for path in (ROOT / "metrics").glob("*/*.py") if path.stem == path.parent.name)
    assert [name for name in metric_names() if metric_folder(name).parent == ROOT / "metrics"] == folders


def test_shipped_shift_parameters_match_their_dataclasses():
    """Every field of a shipped shift's parameters dataclass is declared, with its default (and required when it
    has none), so `--param` reaches every parameter."""
    for name, plugin in installed_shifts().items():
        if plugin.params_class is None or type(plugin).__module__ != "dialshift.shifts.shipped":
            continue
        fields = {item.name: item for item in dataclasses.fields(plugin.params_class)}
        assert {item.name for item in plugin.parameters} == set(fields), name
        for item in plugin.parameters:
            default = fields[item.name].default
            assert item.default == (REQUIRED if default is dataclasses.MISSING else default), (name, item.name)


def test_docs_plugins_md_is_what_dialshift_ships():
    expected = plugins.markdown(plugins.installed(shipped_only=True)) + "\n"
    assert (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8") == expected, \
        "regenerate it: dialshift plugins --markdown --shipped > docs/plugins.md"


WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
         "ten": 10, "eleven": 11, "twelve": 12}


def test_docs_counts_of_metrics_and_shifts_come_from_the_code():
    """A count of metric modules / metric Spaces / shifts written in docs/ is the number installed."""
    import re

    counts = {"metric modules": len(plugins.installed(shipped_only=True)["metrics"]),
              "metric spaces": len(plugins.installed(shipped_only=True)["metrics"]),
              "evaluate modules": len(plugins.installed(shipped_only=True)["metrics"]),
              "public shifts": len(plugins.installed(shipped_only=True)["shifts"])}
    pattern = re.compile(rf"\b({'|'.join(WORDS)}|\d+) ({'|'.join(counts)})\b", re.IGNORECASE)
    wrong = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            stated = WORDS.get(match[1].lower()) or int(match[1])
            if stated != counts[match[2].lower()]:
                wrong.append(f"{path.name}: {match[0]!r}, installed {counts[match[2].lower()]}")
    assert not wrong, wrong


def test_declared_parameters_read_and_check_values():
    import numpy as np

    from dialshift.errors import DialshiftError
    from dialshift.shifts.plugins import Parameter, get_shift_plugin

    ratio = Parameter("ratio", float, "share", minimum=0, maximum=1, open_minimum=True, open_maximum=True)
    assert ratio.domain() == "float in (0, 1)" and ratio.parse(" 0.5") == 0.5 and ratio.check(np.float32(0.5)) == 0.5
    for text, says in (("0", "out of range"), ("1", "out of range"), ("inf", "finite"), ("x", "expected a number")):
        with pytest.raises(DialshiftError, match=says):
            ratio.parse(text)
    flag = Parameter("inflect", bool, "inflect", default=False)
    assert flag.parse("Yes") is True and flag.parse("0") is False
    ic = get_shift_plugin("ic")
    assert ic.check({"deleted": np.int64(2)}) == {"deleted": 2, "window": 6, "selection": "at_least"}
    with pytest.raises(DialshiftError, match="deleted=True: expected int >= 0, got bool"):
        ic.check({"deleted": True})
    with pytest.raises(DialshiftError, match="no installed shift 'swap'; the shifts: distract, ic, kw, .*uw"):
        get_shift_plugin("swap")
