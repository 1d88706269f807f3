"""The Unknown Word synonym table kept on disk, keyed by everything that decides its answers.

Filling a :class:`~dialshift.shifts.replace.SynonymTable` means reading WordNet (about 10 s to open it) and ranking
every word's synonyms; a first UW call on 2,000 contexts spent most of its 14.6 s there. A table with a
:class:`TableCache` loads the answers of earlier runs from ``<dialshift cache>/uw_tables/<key>.json``
(``$DIALSHIFT_CACHE_DIR``, else ``~/.cache/dialshift``) and writes the words it adds back after each
:meth:`~dialshift.shifts.replace.SynonymTable.precompute`, atomically (a temporary file renamed into place, so a
reader never sees half a file and concurrent writers each leave a whole one). The key (:func:`table_key`) is a digest
of the WordNet database's fingerprint, the training vocabulary (every token and count), the case rule, the number
rule, the word rules and mode, the source of the modules that compute the answers and the versions of lemminflect and
scikit-learn (its stop-word list): change any of them and the table is another file. A file that cannot be read or
does not hold this key's table is ignored and rewritten. The answers are the same with or without the cache; only
the time to get them differs (``benchmarks/shift_dataset.py`` measures both).
"""

import json
import logging
from functools import cache
from importlib import metadata
from pathlib import Path

from dialshift.shifts.base import digest

logger = logging.getLogger(__name__)

#: The layout of a cache file; bump it when the stored answers change shape.
FORMAT = 1
#: The modules whose code decides a table's answers (their source is part of the key).
RULE_MODULES = ("dialshift.shifts.replace", "dialshift.shifts.senses", "dialshift.shifts.meaning",
                "dialshift.shifts.words")


@cache
def code_digest() -> str:
    """A digest of the source of :data:`RULE_MODULES` and the versions of the libraries whose data they use."""
    import importlib

    sources = [Path(importlib.import_module(name).__file__).read_text(encoding="utf-8") for name in RULE_MODULES]
    versions = []
    for package in ("lemminflect", "scikit-learn", "nltk"):
        try:
            versions.append(metadata.version(package))
        except metadata.PackageNotFoundError:
            versions.append(None)
    return digest(FORMAT, sources, versions)


def synonym_table_digest(synonyms) -> str:
    """What decides a synonym table's answers: its WordNet database, vocabulary and rules."""
    from dialshift.wordnet import wordnet_fingerprint

    wordnet = synonyms.wordnet
    source = wordnet_fingerprint(wordnet) if hasattr(wordnet, "root") else type(wordnet).__qualname__
    vocabulary = synonyms.vocabulary
    return digest(source, sorted(vocabulary.counts.items()), vocabulary.case_sensitive,
                  synonyms.exclude_number_senses, synonyms.rules.key())


def table_key(table) -> str:
    """The cache key of a synonym table: its answers depend on nothing else."""
    return digest(code_digest(), synonym_table_digest(table))


class TableCache:
    """Where a table's answers live on disk (``directory``/``<key>.json``); shared by a table's rule variants."""

    def __init__(self, directory=None):
        from dialshift.data_dir import cache_dir

        self.directory = Path(directory) if directory is not None else cache_dir() / "uw_tables"

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def load(self, key: str) -> dict:
        """The stored answers of table ``key`` (empty when there is no readable file for it)."""
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            logger.warning("ignoring the unreadable UW table cache %s (%s); it will be rewritten", path, error)
            return {}
        if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("words"), dict):
            logger.warning("ignoring the UW table cache %s: it does not hold table %s; it will be rewritten", path, key)
            return {}
        return data["words"]

    def save(self, key: str, words: dict) -> None:
        """Write the answers of table ``key`` atomically; a cache that cannot be written only costs time."""
        from dialshift.io import atomic_write

        try:
            atomic_write(self.path(key), json.dumps({"key": key, "format": FORMAT, "words": words},
                                                    sort_keys=True, ensure_ascii=False, separators=(",", ":")))
        except OSError as error:
            logger.warning("could not write the UW table cache %s (%s); the next run recomputes it",
                           self.path(key), error)


def attach(table, directory=None):
    """Give ``table`` (and the rule variants it makes later) a disk cache and load its stored answers; returns it."""
    table.store = TableCache(directory)
    load_into(table)
    return table


def load_into(table) -> None:
    """Merge the stored answers of ``table``'s key into it (words it already has keep their answers)."""
    key = table_key(table)
    table.store_key = key
    for word, answer in table.store.load(key).items():
        table._best.setdefault(word, answer)
    table.stored = len(table._best)


def save_from(table) -> None:
    """Write ``table``'s answers when it has more than its file holds."""
    if len(table._best) > table.stored:
        table.store.save(table.store_key, table._best)
        table.stored = len(table._best)
