"""What a built folder publishes about where its rows came from, beside each config's parquet files.

:func:`provenance` turns a config's card entry (see :mod:`dialshift.identity`) into ``<config>/``
:data:`PROVENANCE_FILE`: its options, seed and options digest, and for each raw corpus it was built from the
checksum found at build time, the licence, the source repositories at the pinned commits and the sha256 of every
file (the manifest shipped with dialshift). ``dialshift push`` uploads one per config, so a partial push keeps the
other configs' files consistent; :func:`corpus_rows` is the card's table of the raw corpora.
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


def provenance(name: str, entry: dict) -> dict:
    """The :data:`PROVENANCE_FILE` document of the config ``name`` whose card entry is ``entry``."""
    from dialshift.sources.manifest import shipped_manifest

    manifest = shipped_manifest()
    identity = recorded_identity(entry) or {}
    corpora = {}
    for corpus_name, state in sorted((entry.get("raw_corpora") or {}).items()):
        corpora[corpus_name] = dict(state)
        if corpus_name in manifest:
            corpus = manifest[corpus_name]
            corpora[corpus_name].update(
                licence=corpus.licence, licence_kind=corpus.licence_kind,
                sources=[{"repository": repository, "commit": commit} for repository, commit in corpus.sources],
                files=corpus.checksums())
    return {"config": name, "family": identity.get("family"), "options": identity.get("options"),
            "seed": identity.get("seed"), "options_digest": identity.get("options_digest"), "raw_corpora": corpora}


def provenance_bytes(name: str, entry: dict) -> bytes:
    """:func:`provenance` as stable JSON bytes (sorted keys, indented, trailing newline)."""
    return (json.dumps(provenance(name, entry), indent=1, sort_keys=True) + "\n").encode("utf-8")
