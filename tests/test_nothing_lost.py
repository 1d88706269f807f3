"""The second hostile probe's findings (issue 36), each as a case of its own: nothing a user owns is moved,
overwritten or deleted; nothing wrong passes silently; every bad option is one line, never a traceback."""

import json
import re
import shutil

import pytest

from dialshift.cli import main

# ----------------------------------------------------------------------------------------------- sources


@pytest.mark.data
def test_sources_fails_when_a_corpus_file_is_not_the_pinned_one_though_it_reads(raw_data_dir, tmp_path, capsys):
    shutil.copytree(raw_data_dir / "hwu64", tmp_path / "hwu64")
    text = tmp_path / "hwu64" / "test" / "seq.in"
    body = text.read_bytes()
    index = body.index(b"a")
    text.write_bytes(body[:index] + b"e" + body[index + 1:])  # same lines, same labels: the counts still match
    assert main(["sources", "hwu64", "--data-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "all 1 sources ok" not in captured.out
    assert re.search(r"error: 1 raw corpus folder\(s\) not intact: hwu64: 1 of 10 files bad: test/seq.in sha256 "
                     r"differs.*dialshift download --corpus hwu64$", captured.err.strip())


# ----------------------------------------------------------------------------------------------- the ledger


def _cells(row: str) -> list[str]:
    """A markdown table row's cells, split on the pipes that are not escaped."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_the_ledger_escapes_a_pipe_from_a_returned_file(tmp_path):
    from dialshift.bundle.ledger import render_ledger

    folder = tmp_path / "returned" / "lee"
    folder.mkdir(parents=True)
    (folder / "lee-train-0.json").write_text(json.dumps({"started": "2026-01-01 | x", "device": "H100 | evil | y",
                                                         "seconds": 3}))
    (folder / "lee-train-0.npz").write_bytes(b"z")
    lines = render_ledger(tmp_path / "returned").splitlines()
    assert len(_cells(lines[0])) == 8
    row = _cells(lines[2])
    assert len(row) == 8 and row[3] == "H100 \\| evil \\| y" and row[2] == "2026-01-01 \\| x"
