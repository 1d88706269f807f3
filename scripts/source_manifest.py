"""Write dialshift/sources/manifest.json: where every raw corpus comes from and what each of its files must be.

For each corpus (a folder of the data directory) the manifest names its licence, the public repositories and pinned
commits it comes from, and every file of the layout the readers expect: its path, size, sha256 and where to fetch it
(a raw-file URL at the pinned commit, or a member of an archive fetched from such a URL). Sizes and hashes are
computed from a data directory that holds that layout (each folder's SOURCE.md records the same sources)::

    python scripts/source_manifest.py /path/to/data            # writes dialshift/sources/manifest.json
    python scripts/source_manifest.py /path/to/data --check    # exits 1 if the committed manifest differs

Archives are not in the data directory (only their extracted members are); their size and sha256 are kept from the
committed manifest (they were measured on the archives at the pinned commit).
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "dialshift" / "sources" / "manifest.json"
RAW = "https://raw.githubusercontent.com"

DAILYDIALOG = ("Ls-Dai/Deep-Reinforcement-Learning-for-Dialogue-Generation-in-PyTorch",
               "bae51b16e3e8c0ce4ffd70b75ecfc40fbeb8e7ee")
CLINC = ("clinc/oos-eval", "828f8093932c8fe6ca7936c3d2e52903b1c523de")
JIANGUOZ = ("jianguoz/Few-Shot-Intent-Detection", "fa9553312b1dba54b1be0aae2d30b13171f898e5")
POLYAI = ("PolyAI-LDN/task-specific-datasets", "57ec275d8078af65b7731c2a98be812d844a6d6b")
SONOS = ("sonos/nlu-benchmark", "b86ac7f1577868c42158d0dec77db50956046696")
ROSTD = ("vgtomahawk/LR_GC_OOD", "7650edfbedea05a3c4e66d98bdfc94a0d2fba737")
SETFIT = ("muaaznoor/IntentClassificationLSTM", "75c796d911419c8fd4ba52c77cb7d8edcd4a5dfa")
MASSIVE = ("alexa/massive", "f966f21846043aabef9b0f974fa7970027f43738")
KORADV = ("kakaoenterprise/KorAdvMRSTestData", "329cb6451594d7d8bbad7c11d0ce46be67e66b0f")
XPERSONA = ("HLTCHKUST/Xpersona", "1da049a1bbf3b01548f98cc23ba75ef871416e50")
SONGYS = ("songys/Chatbot_data", "4cf20d13fc46f5037fd1c531cd566e2dd9f72974")
IRC = ("jkkummerfeld/irc-disentanglement", "82ed04f9627a45d0d6f2ec3c8683c88eb408a0d5")

#: corpus -> licence, its kind (``open``, ``non-commercial`` or ``unknown``: the last two need --accept-licence),
#: and the rules mapping local paths to sources: ``(local prefix, repository, remote prefix)`` (the first rule whose
#: prefix matches wins; a prefix ending in ``/`` maps a folder, else one file), or ``(local prefix, archive, member
#: prefix)`` for files taken out of an archive named in ``archives``.
CORPORA = {
    "banking77": {
        "licence": "CC BY 4.0", "kind": "open",
        "note": "PolyAI-LDN/task-specific-datasets LICENSE; the jianguoz splits are derived from the PolyAI data",
        "rules": [("LICENSE", POLYAI, "LICENSE"), ("polyai_original/", POLYAI, "banking_data/"),
                  ("jianguoz_BANKING77/", JIANGUOZ, "Datasets/BANKING77/"),
                  ("jianguoz_BANKING77-OOS/", JIANGUOZ, "Datasets/BANKING77-OOS/")],
    },
    "clinc150": {
        "licence": "CC BY 3.0", "kind": "open", "note": "clinc/oos-eval LICENSE",
        "rules": [("LICENSE", CLINC, "LICENSE"), ("", CLINC, "data/")],
    },
    "dailydialog": {
        "licence": "CC BY-NC-SA 4.0", "kind": "non-commercial",
        "note": "as the Hugging Face daily_dialog card states; the release and the source repository state none",
        "archives": {f"{split}.zip": (DAILYDIALOG, f"data/{split}.zip") for split in ("train", "validation", "test")},
        "rules": [(f"{split}/", f"{split}.zip", f"{split}/") for split in ("train", "validation", "test")]
                 + [("", DAILYDIALOG, "data/")],
    },
    "hwu64": {
        "licence": "CC BY 4.0", "kind": "open", "note": "xliuhw/NLU-Evaluation-Data README (the original release)",
        "rules": [("", JIANGUOZ, "Datasets/HWU64/")],
    },
    "koradvmrs": {
        "licence": "Apache 2.0", "kind": "open", "note": "kakaoenterprise/KorAdvMRSTestData LICENSE",
        "rules": [("README_upstream.md", KORADV, "README.md"), ("", KORADV, "")],
    },
    "korean_chitchat": {
        "licence": "MIT (XPersona), MIT (Chatbot_data)", "kind": "open",
        "note": "HLTCHKUST/Xpersona LICENSE; songys/Chatbot_data LICENSE",
        "rules": [("xpersona_ko/LICENSE", XPERSONA, "LICENSE"),
                  ("xpersona_ko/README_dataset_upstream.md", XPERSONA, "dataset/README.md"),
                  ("xpersona_ko/", XPERSONA, "dataset/"),
                  ("songys_Chatbot_data/README_upstream.md", SONGYS, "README.md"),
                  ("songys_Chatbot_data/", SONGYS, "")],
    },
    "massive": {
        "licence": "CC BY 4.0", "kind": "open", "note": "alexa/massive NOTICE.md",
        "rules": [("NOTICE_alexa_massive.md", MASSIVE, "NOTICE.md"),
                  ("setfit_en-US/README_from_repo.md", SETFIT, "data/README.md"), ("setfit_en-US/", SETFIT, "data/")],
    },
    "rostd": {
        "licence": "unknown", "kind": "unknown", "note": "no licence in vgtomahawk/LR_GC_OOD",
        "rules": [("", ROSTD, "")],
    },
    "snips": {
        "licence": "CC0 1.0", "kind": "open", "note": "sonos/nlu-benchmark LICENSE (the original data)",
        "rules": [("LICENSE_sonos_nlu-benchmark", SONOS, "LICENSE"), ("", JIANGUOZ, "Datasets/SNIPS/")],
    },
    "ubuntu_irc": {
        "licence": "CC BY 4.0", "kind": "open", "note": "jkkummerfeld/irc-disentanglement data/LICENSE-data.txt",
        "rules": [("", IRC, "data/")],
    },
}
#: Files of the data directory that are this team's notes, not data (never downloaded).
NOT_DATA = {"SOURCE.md"}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def raw_url(source: tuple[str, str], remote: str) -> str:
    repository, commit = source
    return f"{RAW}/{repository}/{commit}/{remote}"


def where(corpus: str, spec: dict, local: str) -> dict:
    """The ``url`` or ``archive``/``member`` of one local file, from the first matching rule."""
    for prefix, source, remote in spec["rules"]:
        if local == prefix or (prefix.endswith("/") or not prefix) and local.startswith(prefix):
            target = remote + local[len(prefix):] if local != prefix else remote
            if isinstance(source, str):
                return {"archive": source, "member": target}
            return {"url": raw_url(source, target)}
    raise SystemExit(f"{corpus}/{local}: no rule says where it comes from")


def corpus_entry(name: str, spec: dict, data_dir: Path, previous: dict) -> dict:
    folder = data_dir / name
    files = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in NOT_DATA):
        local = path.relative_to(folder).as_posix()
        files.append({"path": local, "size": path.stat().st_size, "sha256": sha256(path), **where(name, spec, local)})
    sources = sorted({source for _, source, _ in spec["rules"] if not isinstance(source, str)}
                     | {source for source, _ in spec.get("archives", {}).values()})
    entry = {"licence": spec["licence"], "licence_kind": spec["kind"], "licence_note": spec["note"],
             "sources": [{"repository": repository, "commit": commit} for repository, commit in sources],
             "files": files}
    if "archives" in spec:
        known = previous.get("corpora", {}).get(name, {}).get("archives", {})
        entry["archives"] = {
            archive: {"url": raw_url(source, remote), "size": known.get(archive, {}).get("size"),
                      "sha256": known.get(archive, {}).get("sha256")}
            for archive, (source, remote) in spec["archives"].items()}
    return entry


def manifest(data_dir: Path, previous: dict) -> dict:
    return {"format": 1, "raw_base_url": RAW,
            "corpora": {name: corpus_entry(name, spec, data_dir, previous) for name, spec in CORPORA.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path, help="a data directory holding every corpus (e.g. ../shared/data)")
    parser.add_argument("--check", action="store_true", help="compare with the committed manifest, write nothing")
    args = parser.parse_args(argv)
    previous = json.loads(MANIFEST.read_text(encoding="utf-8")) if MANIFEST.is_file() else {}
    text = json.dumps(manifest(args.data_dir, previous), indent=1, sort_keys=True) + "\n"
    if args.check:
        same = MANIFEST.is_file() and MANIFEST.read_text(encoding="utf-8") == text
        print(f"{MANIFEST.relative_to(ROOT)} {'is up to date' if same else 'differs; run without --check'}")
        return 0 if same else 1
    MANIFEST.write_text(text, encoding="utf-8")
    print(f"wrote {MANIFEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
