"""The card's front matter as the scoring reads it (``card_fields``): the library's reading, parsed faster."""

import pytest
from huggingface_hub import DatasetCard

from dialshift.errors import DialshiftError
from dialshift.hub import reading

CARD = """---
license: cc-by-4.0
pretty_name: null
language:
- en
configs:
- config_name: toy
  data_files:
  - split: test
    path: toy/test-*
dialshift:
  configs:
    toy: {{task: response_ranking, note: "a: b", empty: null, ratio: 0.10, when: 2024-01-02}}
{extra}---
# Toy

Body text with --- inside.
"""


@pytest.mark.parametrize("extra", ["", "train-eval-index:\n- config: toy\n", "tags: []\n"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_card_fields_are_the_librarys_front_matter(tmp_path, extra, newline):
    """Null values dropped, nested values, dates and a CRLF card as ``DatasetCard.load(...).data.to_dict()`` gives
    them; a card with the fields the library renames is read by the library."""
    text = CARD.format(extra=extra).replace("\n", newline)
    (tmp_path / "README.md").write_bytes(text.encode())
    reading._FIELDS_CACHE.clear()
    fields = reading.card_fields(tmp_path)
    assert fields == DatasetCard.load(tmp_path / "README.md").data.to_dict()
    assert "pretty_name" not in fields and fields["dialshift"]["configs"]["toy"]["empty"] is None
    if not extra:
        assert reading._plain_front_matter(tmp_path / "README.md") == fields
    if "train-eval-index" in extra:
        assert reading._plain_front_matter(tmp_path / "README.md") is None


def test_an_unreadable_card_is_still_refused_in_one_line(tmp_path):
    (tmp_path / "README.md").write_text("---\nconfigs: [unclosed\n---\nbody\n")
    reading._FIELDS_CACHE.clear()
    with pytest.raises(DialshiftError, match="unreadable card front matter"):
        reading.card_fields(tmp_path)
    (tmp_path / "README.md").write_bytes(b"---\nlicense: \xff\n---\n")
    assert reading._plain_front_matter(tmp_path / "README.md") is None
