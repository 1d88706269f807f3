"""ROSTD (Gangal et al., AAAI 2020): out-of-domain sentences added to the English task-oriented data of Schuster et
al. (NAACL 2019), as released in vgtomahawk/LR_GC_OOD.

Files (4 tab-separated fields: label, vestigial, sentence, vestigial):
``rostd/code/data/fbrelease/unsup/{OODRemovedtrain,eval,test}.tsv`` (fine labels such as ``alarm/set_alarm``,
``outOfDomain`` for OOD) and the line-parallel ``fbreleasecoarse/unsup/*.tsv`` (same sentences, coarse labels
``alarm``, ``reminder``, ``weather``, ``outOfDomain``); ``rostd/data/fbrelease/OODrelease.tsv`` (the 4,590 OOD
sentences of the release).

Sources:
- ``rostd``: splits ``train`` (in-domain only), ``validation`` (eval) and ``test``, each an
  :class:`~dialshift.sources.base.IntentExample` with fine ``label``, ``coarse_label`` and ``is_ood``; the reader
  checks that both files hold the same sentence on every line and that the fine label starts with the coarse one.
  Counted as ID / OOD per split: train 30,521 / 0, validation 4,181 / 1,500, test 8,621 / 3,090, 12 fine ID intents.
- ``rostd_ood``: split ``ood``, the 4,590 sentences of ``OODrelease.tsv``. The README says "~4500"; 4,590 is the
  file, and equals validation + test OOD (1,500 + 3,090), i.e. the release is wholly inside those splits.

Ids: ``rostd-{split}-{line index:05d}`` and ``rostd-ood-{line index:05d}``.
"""

from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import IntentExample, read_parallel, read_tsv, register_reader, split_fields

FOLDER = "rostd"
OOD = "outOfDomain"
SPLITS = {"train": "OODRemovedtrain.tsv", "validation": "eval.tsv", "test": "test.tsv"}
FIELDS = 4


def read_split(data_dir: Path, split: str) -> list[IntentExample]:
    fine_path = data_dir / FOLDER / "code/data/fbrelease/unsup" / SPLITS[split]
    coarse_path = data_dir / FOLDER / "code/data/fbreleasecoarse/unsup" / SPLITS[split]
    records = []
    for number, (fine_line, coarse_line) in read_parallel([fine_path, coarse_path]):
        fine, _, text, _ = split_fields(fine_path, number, fine_line, FIELDS)
        coarse, _, coarse_text, _ = split_fields(coarse_path, number, coarse_line, FIELDS)
        if text != coarse_text:
            raise SourceError(coarse_path, f"sentence differs from line {number} of {fine_path}", line=number)
        if fine.split("/", 1)[0] != coarse:
            raise SourceError(coarse_path, f"coarse label {coarse!r} does not match the fine label {fine!r} on line "
                                           f"{number} of {fine_path}", line=number)
        if not text.strip():
            raise SourceError(fine_path, "empty sentence", line=number)
        records.append(IntentExample(id=f"rostd-{split}-{number - 1:05d}", text=text, label=fine,
                                     coarse_label=coarse, is_ood=fine == OOD))
    return records


def read(data_dir: Path) -> dict[str, list[IntentExample]]:
    """Read ROSTD train / validation / test with fine and coarse labels."""
    return {split: read_split(Path(data_dir), split) for split in SPLITS}


def count(loaded: dict) -> dict[str, int]:
    """ID and OOD sentences per split, as the ROSTD statistics count them, plus the number of fine ID intents."""
    counts = {}
    for split, records in loaded.items():
        ood = sum(r.is_ood for r in records)
        counts[f"{split}_id"], counts[f"{split}_ood"] = len(records) - ood, ood
    counts["intents"] = len({r.label for records in loaded.values() for r in records if not r.is_ood})
    return counts


def read_release(data_dir: Path) -> dict[str, list[IntentExample]]:
    """Read the ROSTD OOD release (every line must be labelled ``outOfDomain``)."""
    path = Path(data_dir) / FOLDER / "data/fbrelease/OODrelease.tsv"
    records = []
    for number, (label, _, text, _) in read_tsv(path, FIELDS):
        if label != OOD:
            raise SourceError(path, f"label {label!r}; every line of the OOD release should be {OOD!r}", line=number)
        records.append(IntentExample(id=f"rostd-ood-{number - 1:05d}", text=text, label=OOD, coarse_label=OOD,
                                     is_ood=True))
    return {"ood": records}


register_reader(
    name="rostd",
    path=f"{FOLDER}/code/data",
    description="ROSTD: FB task-oriented English ID (fine+coarse labels) + OOD sentences (Gangal et al. 2020)",
    license="unknown (no licence in the source repository)",
    read=read,
    expected={"train_id": 30_521, "train_ood": 0, "validation_id": 4_181, "validation_ood": 1_500,
              "test_id": 8_621, "test_ood": 3_090, "intents": 12},
    unit="sentences",
    count=count,
    notes={"counts": "in-domain totals are measured; only the alarm domain could be checked against Schuster et al."},
)
register_reader(
    name="rostd_ood",
    path=f"{FOLDER}/data/fbrelease/OODrelease.tsv",
    description="ROSTD OOD release: out-of-domain sentences (Gangal et al. 2020)",
    license="unknown (no licence in the source repository)",
    read=read_release,
    expected={"ood": 4_590},
    unit="sentences",
    notes={"counts": 'README says "~4500"; the file has 4,590 = validation 1,500 + test 3,090 OOD of rostd'},
)
