"""WordNet preparation: lexnames, copy into the cache (idempotent, atomic), the missing-install error."""

import gzip
import re
from pathlib import Path

import pytest

from dialshift.errors import DialshiftError
from dialshift.wordnet import INSTALL_HINT, LEXNAMES, REQUIRED_FILES, lexnames_text, prepare_wordnet, source_dir

DEBIAN = Path("/usr/share/wordnet")
MAN_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")


def fake_install(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in REQUIRED_FILES + ("index.sense",):
        (folder / name).write_text(f"{name}\n", encoding="utf-8")
    return folder


def test_lexnames_has_45_numbered_files_with_categories():
    lines = lexnames_text().splitlines()
    assert len(lines) == 45 == len(LEXNAMES)
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1" and lines[44] == "44\tadj.ppl\t3"
    assert lines[29] == "29\tverb.body\t2" and lines[2] == "02\tadv.all\t4"


@pytest.mark.skipif(not MAN_PAGE.is_file(), reason="wordnet man pages not installed")
def test_lexnames_matches_the_debian_man_page():
    text = gzip.decompress(MAN_PAGE.read_bytes()).decode("utf-8", "replace")
    table = re.findall(r"^(\d\d)\t(\S+)", text, flags=re.MULTILINE)
    assert [name for _, name in table] == LEXNAMES
    assert [int(number) for number, _ in table] == list(range(45))


def test_prepare_copies_once_and_atomically(tmp_path):
    source = fake_install(tmp_path / "wordnet")
    nltk_data = prepare_wordnet(source, tmp_path / "cache")
    target = nltk_data / "corpora" / "wordnet"
    assert (target / "lexnames").read_text(encoding="utf-8") == lexnames_text()
    assert (target / "data.noun").read_text(encoding="utf-8") == "data.noun\n"
    assert (target / "index.sense").is_file() and (target / "FINGERPRINT").is_file()
    stamp = (target / "data.noun").stat().st_mtime_ns
    (source / "data.noun").write_text("changed\n", encoding="utf-8")
    assert prepare_wordnet(source, tmp_path / "cache") == nltk_data  # idempotent: nothing copied again
    assert (target / "data.noun").stat().st_mtime_ns == stamp
    assert sorted(path.name for path in target.parent.iterdir()) == ["wordnet"]  # no staging directory left


def test_missing_wordnet_is_a_one_line_error_with_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALSHIFT_WORDNET_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(DialshiftError) as error:
        source_dir()
    message = str(error.value)
    assert "\n" not in message and INSTALL_HINT in message and "data.noun" in message
    partial = fake_install(tmp_path / "partial")
    (partial / "index.verb").unlink()
    with pytest.raises(DialshiftError, match="index.verb"):
        prepare_wordnet(partial, tmp_path / "cache")


@pytest.mark.wordnet
@pytest.mark.skipif(not (DEBIAN / "data.noun").is_file(), reason="wordnet-base not installed")
def test_real_wordnet_loads_from_the_debian_files(tmp_path, monkeypatch):
    from dialshift.wordnet import load_wordnet, wordnet_fingerprint

    monkeypatch.setenv("DIALSHIFT_CACHE_DIR", str(tmp_path))
    wordnet = load_wordnet()
    assert wordnet.get_version() == "3.0"
    names = {name for synset in wordnet.synsets("computer") for name in synset.lemma_names()}
    assert {"calculator", "reckoner", "data_processor"} <= names
    assert wordnet.morphy("geese") == "goose" and wordnet.synset("car.n.01").lexname() == "noun.artifact"
    assert len(wordnet_fingerprint(wordnet)) == 16


@pytest.mark.wordnet
@pytest.mark.skipif(not (DEBIAN / "data.noun").is_file(), reason="wordnet-base not installed")
def test_the_fast_reader_builds_nltks_maps(tmp_path, monkeypatch):
    """The reader's own index and satellite loading gives NLTK's maps, on a slice of every WordNet file (the head
    of each index and data file: licence lines, lemmas with pointers, adjective satellites)."""
    import warnings

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from dialshift.wordnet import english_reader_class

    folder = tmp_path / "nltk_data" / "corpora" / "wordnet"  # NLTK reads corpora only below its data path
    folder.mkdir(parents=True)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk_data"), *nltk.data.path])
    for name in REQUIRED_FILES:
        lines = (DEBIAN / name).read_text(encoding="utf-8").splitlines(keepends=True)
        (folder / name).write_text("".join(lines[:3000]), encoding="utf-8")
    (folder / "lexnames").write_text(lexnames_text(), encoding="utf-8")

    class Stock(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):  # the OMW mapping reads the installed WordNet: not under test
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast, stock = english_reader_class()(str(folder), None), Stock(str(folder), None)
    assert fast.satellite_offsets == stock.satellite_offsets and fast.satellite_offsets
    assert dict(fast._lemma_pos_offset_map) == dict(stock._lemma_pos_offset_map)
    assert any("s" in entry for entry in fast._lemma_pos_offset_map.values())
