"""What a built folder publishes about where its rows came from, beside the parquet files.

:func:`provenance` turns a folder's card metadata (``{config: entry}``, see :mod:`dialshift.identity`) into
:data:`PROVENANCE_FILE`: per config its options, seed and options digest and the checksums of the raw corpora it was
built from; per raw corpus its licence, source repositories at the pinned commits and the sha256 of every file
(the manifest shipped with dialshift). ``dialshift push`` uploads it; :func:`corpus_rows` is the card's table of the
raw corpora.
"""

import json

from dialshift.identity import recorded_identity

PROVENANCE_FILE = "dialshift_provenance.json"
#: How to install dialshift until a release is on the package index (the card's and README's usage lines).
INSTALL_COMMAND = 'pip install "dialshift @ git+https://github.com/dialshift/dialshift"'


def used_corpora(metadata: dict) -> list[str]:
    """The raw corpora the folder's configs record, sorted."""
    return sorted({corpus for entry in metadata.values() for corpus in (entry.get("raw_corpora") or {})})


def corpus_rows(metadata: dict) -> list[tuple[str, str, str]]:
    """``(corpus, licence, source)`` of every raw corpus the folder's configs were built from."""
    from dialshift.sources.manifest import shipped_manifest

    manifest = shipped_manifest()
    return [(name, manifest[name].licence_text, manifest[name].source_text) for name in used_corpora(metadata)
            if name in manifest]


def provenance(metadata: dict) -> dict:
    """The :data:`PROVENANCE_FILE` document of a folder whose card metadata is ``metadata``."""
    from dialshift.sources.manifest import shipped_manifest

    manifest = shipped_manifest()
    configs = {}
    for name, entry in sorted(metadata.items()):
        identity = recorded_identity(entry) or {}
        configs[name] = {"family": identity.get("family"), "options": identity.get("options"),
                         "seed": identity.get("seed"), "options_digest": identity.get("options_digest"),
                         "raw_corpora": entry.get("raw_corpora") or {}}
    corpora = {}
    for name in used_corpora(metadata):
        if name in manifest:
            corpus = manifest[name]
            corpora[name] = {"licence": corpus.licence, "licence_kind": corpus.licence_kind,
                             "sources": [{"repository": repository, "commit": commit}
                                         for repository, commit in corpus.sources],
                             "checksum": corpus.digest, "files": corpus.checksums()}
    return {"configs": configs, "raw_corpora": corpora}


def provenance_bytes(metadata: dict) -> bytes:
    """:func:`provenance` as stable JSON bytes (sorted keys, indented, trailing newline)."""
    return (json.dumps(provenance(metadata), indent=1, sort_keys=True) + "\n").encode("utf-8")
