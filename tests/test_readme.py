"""The README's examples run as written."""

import json
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_block(marker: str) -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {marker} -->\n```python\n(.*?)```\n<!-- /{marker} -->", text, re.S)
    assert match, f"README.md has no python block between <!-- {marker} --> markers"
    return match.group(1)


@pytest.mark.wordnet
def test_shift_example_runs_on_a_user_corpus(tmp_path, monkeypatch, capsys):
    if not Path("/usr/share/wordnet/data.noun").is_file():
        pytest.skip("wordnet-base not installed")
    from dialshift.hub import folder_configs

    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    candidates = ["Fine , thanks .", "It is late .", "No idea ."]
    train = [["The car is red .", "Is it fast ?"], ["We went home .", "Good ."]]
    test = [["Is the house big ?", "Yes , a very big house ."], ["The automobile is big and the weather is cold ."],
            ["Hello .", "Is the car big today ?", "Yes , the house is big ."]]
    for name, dialogues in (("my_train", train), ("my_test", test)):
        lines = [json.dumps({"id": f"{name}-{i}", "context": turns, "candidates": candidates, "label": i % 3})
                 for i, turns in enumerate(dialogues)]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    exec(compile(readme_block("shift-example"), "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("UnknownWord(") and "3 shifted rows from 3 rows" in printed[0]
    assert printed[1].startswith("InsufficientContext(") and "left out (too_few_turns 1)" in printed[1]
    assert printed[2].startswith("(") and printed[2] != "('Is the car big?', 'Yes, very big.')"
    configs = folder_configs(tmp_path / "my_shifted")
    assert set(configs) == {"my_test", "my_uw", "my_ic"} and configs["my_uw"].parameters["ratio"] == 0.3


def test_training_texts_give_the_published_uw_vocabulary(raw_data_dir):
    """On DailyDialog, the contexts plus gold responses of the dailydialog train instances are the words of the
    training dialogues the published uw_* configs treat as known; the contexts alone miss some."""
    from dialshift.custom import training_texts
    from dialshift.ranking.instances import ranking_instances
    from dialshift.shifts.words import Vocabulary
    from dialshift.sources import dailydialog

    dialogues = dailydialog.read(raw_data_dir)
    published = Vocabulary.from_texts(turn for dialogue in dialogues["train"] for turn in dialogue.turns)
    rows = ranking_instances(dialogues["train"], 0, "source")
    assert set(Vocabulary.from_texts(training_texts(rows)).counts) == set(published.counts)
    assert set(Vocabulary.from_texts(turn for row in rows for turn in row["context"]).counts) < set(published.counts)


def test_the_quick_start_installs_downloads_and_builds_as_written():
    from dialshift.cli import build_parser
    from dialshift.provenance import INSTALL_COMMAND

    text = README.read_text(encoding="utf-8")
    install = re.search(r"## Install\n\n.*?```bash\n(.*?)```", text, re.S)[1]
    assert install.split("  #")[0].strip() == INSTALL_COMMAND
    block = re.search(r"## Quick start \(any machine\)\n\n.*?```bash\n(.*?)```", text, re.S)[1]
    commands = [line.split("  #")[0].strip() for line in block.splitlines()]
    parser = build_parser()
    download = parser.parse_args(commands[0].split()[1:])
    assert download.command == "download" and download.corpus == ["dailydialog"]
    assert download.accept_licence == ["dailydialog"]
    assert parser.parse_args(commands[1].split()[1:]).family == ["dailydialog"]


def test_every_readme_block_is_run_or_says_why_not():
    """The markers tests/readme_blocks.py reads: few skips, each with its reason; one install block, pinning the CPU
    torch of constraints.txt and installing with it; every append names a command of its block."""
    from readme_blocks import readme_blocks

    blocks = readme_blocks()
    skipped = [block for block in blocks if block.skip is not None]
    assert all(len(block.skip) > 20 for block in skipped) and len(skipped) <= 4, [b.line for b in skipped]
    (install,) = [block for block in blocks if block.install]
    pins = dict(line.split("==") for line in (README.parent / "constraints.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    torch, package = install.commands()
    assert f'"torch=={pins["torch"]}+cpu"' in torch and "--index-url https://download.pytorch.org/whl/cpu" in torch
    assert package.startswith("pip install -c constraints.txt") and '"dialshift[train] @ git+https://' in package
    for block in blocks:
        for prefix, args, reason in block.appends:
            assert args and len(reason) > 20, (block.line, prefix)
            assert any(command.startswith(prefix) for command in block.commands()), (block.line, prefix)
    run = [block for block in blocks if block.skip is None and not block.install]
    assert {block.language for block in run} == {"bash", "python"} and len(run) >= 5


def test_the_licence_table_is_the_manifest():
    from dialshift.sources.manifest import shipped_manifest

    text = README.read_text(encoding="utf-8")
    table = re.search(r"<!-- corpora -->\n(.*?)<!-- /corpora -->", text, re.S)[1].splitlines()[2:]
    assert table == [f"| `{name}` | {corpus.licence_text} | {corpus.source_text} |"
                     for name, corpus in shipped_manifest().items()]


def test_the_metrics_section_names_every_metric_module_and_their_count():
    from dialshift.metrics.installed import metric_names

    MODULES = metric_names()  # the shipped modules: the dialshift.metrics entry points
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- metric-modules -->\n(.*?)<!-- /metric-modules -->", text, re.S)[1]
    numbers = "zero one two three four five six seven eight nine ten eleven twelve".split()
    assert block.split()[:2] == [numbers[len(MODULES)].capitalize(), "modules:"], block[:40]
    named = re.findall(r"`(\w+)` \(", block)
    assert named == sorted(MODULES), named
