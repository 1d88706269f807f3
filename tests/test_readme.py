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
    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    train = [["The car is red .", "Is it fast ?"], ["We went home .", "Good ."]]
    test = [[f"Turn {k} about the big automobile and the weather today ." for k in range(8)],
            ["Is the house big ?", "Yes , a very big house ."]]
    for name, dialogues in (("my_train", train), ("my_test", test)):
        lines = [json.dumps({"id": f"{name}-{i}", "context": turns}) for i, turns in enumerate(dialogues)]
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    exec(compile(readme_block("shift-example"), "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("UnknownWord(") and "ratio=0.3" in printed[0] and "'replacement'" in printed[0]
    assert printed[1].startswith("InsufficientContext(") and "deleted=2" in printed[1] and ") 1 [" in printed[1]
    assert printed[2] != "None"


def test_the_quick_start_installs_downloads_and_builds_as_written():
    from dialshift.cli import build_parser
    from dialshift.provenance import INSTALL_COMMAND

    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Quick start \(any machine\)\n\n```bash\n(.*?)```", text, re.S)[1]
    commands = [line.split("  #")[0].strip() for line in block.splitlines()]
    assert commands[0] == INSTALL_COMMAND
    parser = build_parser()
    download = parser.parse_args(commands[1].split()[1:])
    assert download.command == "download" and download.corpus == ["dailydialog"]
    assert download.accept_licence == ["dailydialog"]
    assert parser.parse_args(commands[2].split()[1:]).family == ["dailydialog"]


def test_the_licence_table_is_the_manifest():
    from dialshift.sources.manifest import shipped_manifest

    text = README.read_text(encoding="utf-8")
    table = re.search(r"<!-- corpora -->\n(.*?)<!-- /corpora -->", text, re.S)[1].splitlines()[2:]
    assert table == [f"| `{name}` | {corpus.licence_text} | {corpus.source_text} |"
                     for name, corpus in shipped_manifest().items()]
