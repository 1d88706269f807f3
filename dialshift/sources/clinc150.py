"""CLINC150 / OOS-eval (Larson et al., EMNLP 2019): 150 in-scope intents in 10 domains plus out-of-scope queries.

Files: ``clinc150/data_{full,small,imbalanced,oos_plus}.json`` (objects with ``train``, ``val``, ``test``,
``oos_train``, ``oos_val``, ``oos_test``, each a list of ``[utterance, intent]``) and ``domains.json`` (domain ->
its 15 intents). Each variant is its own source (``clinc150_full``, ``clinc150_small``, ``clinc150_imbalanced``,
``clinc150_oos_plus``) with splits ``train``, ``validation``, ``test``, ``oos_train``, ``oos_validation``,
``oos_test``. Records are :class:`~dialshift.sources.base.IntentExample` with the domain as ``coarse_label``
(``None`` for ``oos``) and ids ``clinc150-{variant}-{split}-{index:05d}`` (index in the released list).

Official counts: the repository README documents ``data_full`` (150 intents x 100 / 20 / 30, out-of-scope
100 / 100 / 1,000). The other variants are not described there; their counts are the measured ones in
``clinc150/SOURCE.md`` (small: 50 per intent; imbalanced: 25/50/75/100 per intent, 10,525 in all; oos_plus: 250
out-of-scope training queries).
"""

from pathlib import Path

from dialshift.errors import SourceError
from dialshift.sources.base import IntentExample, label_count, read_json, register_reader

FOLDER = "clinc150"
OOS = "oos"
SPLITS = {"train": "train", "validation": "val", "test": "test",
          "oos_train": "oos_train", "oos_validation": "oos_val", "oos_test": "oos_test"}
VARIANTS = {
    "full": {"train": 15_000, "oos_train": 100},
    "small": {"train": 7_500, "oos_train": 100},
    "imbalanced": {"train": 10_525, "oos_train": 100},
    "oos_plus": {"train": 15_000, "oos_train": 250},
}


def read_domains(data_dir: Path) -> dict[str, str]:
    """Intent -> domain from ``domains.json``."""
    path = data_dir / FOLDER / "domains.json"
    domains = read_json(path)
    if not isinstance(domains, dict):
        raise SourceError(path, "expected an object mapping each domain to its list of intents")
    mapping = {}
    for domain, intents in domains.items():
        if not isinstance(intents, list) or not all(isinstance(intent, str) for intent in intents):
            raise SourceError(path, f"domain {domain!r}: expected a list of intent names")
        mapping.update(dict.fromkeys(intents, domain))
    return mapping


def read_variant(data_dir: Path, variant: str) -> dict[str, list[IntentExample]]:
    path = data_dir / FOLDER / f"data_{variant}.json"
    data = read_json(path)
    domains = read_domains(data_dir)
    if not isinstance(data, dict):
        raise SourceError(path, "expected a JSON object with train/val/test/oos_* lists")
    loaded = {}
    for split, key in SPLITS.items():
        if not isinstance(data.get(key), list):
            raise SourceError(path, f"missing list {key!r}")
        records = []
        for index, pair in enumerate(data[key]):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(item, str) for item in pair)):
                raise SourceError(path, f"{key}[{index}]: expected [utterance, intent], found {pair!r:.80}")
            text, intent = pair
            if intent != OOS and intent not in domains:
                raise SourceError(path, f"{key}[{index}]: intent {intent!r} is not listed in domains.json")
            if (intent == OOS) != key.startswith("oos_"):
                raise SourceError(path, f"{key}[{index}]: intent {intent!r} does not belong in {key!r}")
            records.append(IntentExample(id=f"clinc150-{variant}-{split}-{index:05d}", text=text, label=intent,
                                         coarse_label=domains.get(intent), is_ood=intent == OOS))
        loaded[split] = records
    return loaded


def _reader(variant):
    def read(data_dir: Path) -> dict[str, list[IntentExample]]:
        return read_variant(Path(data_dir), variant)

    read.__doc__ = f"Read CLINC150 ``data_{variant}.json`` into splits of IntentExample."
    return read


for _variant, _counts in VARIANTS.items():
    register_reader(
        name=f"clinc150_{_variant}",
        path=f"{FOLDER}/data_{_variant}.json",
        description=f"CLINC150 ({_variant}): 150 intents in 10 domains + out-of-scope (Larson et al. 2019)",
        license="CC BY 3.0",
        read=_reader(_variant),
        expected={"train": _counts["train"], "validation": 3_000, "test": 4_500, "oos_train": _counts["oos_train"],
                  "oos_validation": 100, "oos_test": 1_000, "intents": 150},
        unit="utterances",
        count=label_count("train", "validation", "test"),
        notes={} if _variant == "full" else {
            "counts": "variant not described in the repo README; counts as measured in clinc150/SOURCE.md"},
    )
