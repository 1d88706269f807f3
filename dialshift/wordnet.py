"""WordNet 3.0 for NLTK, prepared once from the Debian ``wordnet-base`` files.

nltk 3.10 only reads corpora below a directory on its data path and refuses symlinks that leave it, and Debian's
package lacks the ``lexnames`` file NLTK's reader opens. :func:`prepare_wordnet` therefore copies the database files
into ``<cache>/nltk_data/corpora/wordnet`` (``<cache>`` = ``$DIALSHIFT_CACHE_DIR`` or ``~/.cache/dialshift``) and
writes ``lexnames`` from the lexicographer-file table of WordNet 3.0 (``lexnames(5WN)``). The preparation is
idempotent and atomic (a temporary directory renamed into place). :func:`load_wordnet` returns a ready reader.
See ``../shared/data/wordnet/SOURCE.md``.
"""

import os
import shutil
import warnings
from functools import cache
from pathlib import Path

from dialshift.data_dir import cache_dir
from dialshift.errors import DialshiftError
from dialshift.io import temporary_sibling

WORDNET_DIR_ENV = "DIALSHIFT_WORDNET_DIR"
DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")
INSTALL_HINT = "apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index"

#: Files NLTK's WordNetCorpusReader reads (``lexnames`` is generated, not copied).
REQUIRED_FILES = tuple(
    f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")
) + ("noun.exc", "verb.exc", "adj.exc", "adv.exc")
OPTIONAL_FILES = ("index.sense", "cntlist.rev")

#: The 45 lexicographer files of WordNet 3.0 in number order (``man 5 lexnames``); category from the name prefix.
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition "
    "noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object "
    "noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession "
    "verb.social verb.stative verb.weather adj.ppl"
).split()
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    """The ``lexnames`` file NLTK expects: ``NN<TAB>name<TAB>category`` per line."""
    return "".join(f"{number:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for number, name in enumerate(LEXNAMES))


def source_dir(wordnet_dir=None) -> Path:
    """The installed WordNet database (``wordnet_dir``, ``$DIALSHIFT_WORDNET_DIR`` or ``/usr/share/wordnet``).

    Raises a one-line :class:`DialshiftError` with the install command when a required file is missing.
    """
    path = Path(wordnet_dir or os.environ.get(WORDNET_DIR_ENV) or DEFAULT_WORDNET_DIR)
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if missing:
        raise DialshiftError(
            f"WordNet 3.0 not found: {path / missing[0]} is missing; install it with `{INSTALL_HINT}` "
            f"(or point {WORDNET_DIR_ENV} at a directory holding data.noun, index.noun, ...)"
        )
    return path


def _fingerprint(files: list[Path]) -> str:
    from dialshift.io import files_digest

    return files_digest(files)[:16]


def prepare_wordnet(wordnet_dir=None, cache=None) -> Path:
    """Copy WordNet into ``<cache>/nltk_data/corpora/wordnet`` once and return the ``nltk_data`` directory."""
    source = source_dir(wordnet_dir)
    nltk_data = Path(cache or cache_dir()) / "nltk_data"
    target = nltk_data / "corpora" / "wordnet"
    if (target / "lexnames").is_file() and all((target / name).is_file() for name in REQUIRED_FILES):
        return nltk_data
    target.parent.mkdir(parents=True, exist_ok=True)
    files = [source / name for name in REQUIRED_FILES + OPTIONAL_FILES if (source / name).is_file()]
    staging = temporary_sibling(target)
    staging.mkdir()
    try:
        for file in files:
            shutil.copyfile(file, staging / file.name)
        (staging / "lexnames").write_text(lexnames_text(), encoding="utf-8")
        (staging / "FINGERPRINT").write_text(_fingerprint(files) + "\n", encoding="utf-8")
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / "lexnames").is_file():  # not a concurrent preparation that won the race
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return nltk_data


def wordnet_fingerprint(reader) -> str:
    """A short hash of the prepared database files (for keying caches derived from WordNet)."""
    path = Path(reader.root.path if hasattr(reader.root, "path") else reader.root)
    stamp = path / "FINGERPRINT"
    return stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else "unknown"


@cache
def english_reader_class():
    """:class:`EnglishWordNetReader`, a subclass of NLTK's ``WordNetCorpusReader`` (made on first use: importing
    NLTK takes seconds)."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class EnglishWordNetReader(WordNetCorpusReader):
        """NLTK's reader, opened in a fraction of its time: without the Open Multilingual Wordnet's sense mapping (its
        constructor reads ``index.sense`` twice to map WordNet 3.0 onto itself, for multilingual look-ups never made
        here), and with the index and adjective files read as plain text files rather than through NLTK's seekable
        stream reader (a Python call per character); the maps it builds are NLTK's (``tests/test_wordnet.py``)."""

        def map_wn(self, version="wordnet"):
            return None

        def _scan_satellites(self):
            with open(Path(self.root.path) / "data.adj", encoding="utf-8") as lines:
                fields = (line.split(None, 3) for line in lines if line[:1] not in ("", " ", "\n"))
                self.satellite_offsets = {int(found[0]) for found in fields if len(found) >= 3 and found[2] == "s"}

        def _load_lemma_pos_offset_map(self):
            from nltk.corpus.reader.wordnet import ADJ, ADJ_SAT

            satellites, table = self.satellite_offsets, self._lemma_pos_offset_map
            for suffix in self._FILEMAP.values():
                with open(Path(self.root.path) / f"index.{suffix}", encoding="utf-8") as lines:
                    for line in lines:
                        if line.startswith(" "):
                            continue
                        fields = line.split()
                        lemma, pos, count, first = fields[0], fields[1], int(fields[2]), 6 + int(fields[3])
                        offsets = [int(offset) for offset in fields[first:first + count]]
                        table[lemma][pos] = offsets
                        if pos == ADJ:
                            table[lemma][ADJ_SAT] = [offset for offset in offsets if offset in satellites]

    return EnglishWordNetReader


@cache
def _load(wordnet_dir, cache):
    import nltk

    nltk_data = prepare_wordnet(wordnet_dir, cache)
    if str(nltk_data) not in nltk.data.path:
        nltk.data.path.insert(0, str(nltk_data))
    with warnings.catch_warnings():  # Open Multilingual Wordnet is not needed: English synonyms only
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return english_reader_class()(str(nltk_data / "corpora" / "wordnet"), None)


def load_wordnet(wordnet_dir=None, cache=None):
    """A ready NLTK ``WordNetCorpusReader`` over WordNet 3.0 (prepared on first use, cached per process)."""
    return _load(str(wordnet_dir) if wordnet_dir else None, str(Path(cache or cache_dir())))


class LazyWordNet:
    """A WordNet reader opened on first use: :func:`load_wordnet` takes about 10 s, which a synonym table whose
    answers all come from its disk cache (:mod:`dialshift.shifts.table_cache`) never needs to spend. ``root`` (the
    prepared database folder, for :func:`wordnet_fingerprint`) is known without opening it; any other attribute
    opens the reader and is the reader's."""

    def __init__(self, wordnet_dir=None, cache=None):
        self._arguments = (wordnet_dir, cache)
        self.root = prepare_wordnet(wordnet_dir, cache) / "corpora" / "wordnet"

    @property
    def reader(self):
        """The NLTK ``WordNetCorpusReader`` (opened now if it is not yet)."""
        return load_wordnet(*self._arguments)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_arguments", "root"):  # not set yet (unpickling, copying)
            raise AttributeError(name)
        return getattr(self.reader, name)


def lazy_wordnet(wordnet_dir=None, cache=None) -> LazyWordNet:
    """WordNet 3.0 prepared now (a one-line error when it is not installed) and opened on first use."""
    return LazyWordNet(wordnet_dir, cache)
