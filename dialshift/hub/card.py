"""The dataset card: YAML metadata (licences, tags, ``configs``, ``dataset_info``, the ``dialshift`` block) and the
body rendered from ``dialshift_cards/dataset_card.md`` with each family's section."""

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from dialshift import __version__
from dialshift.hub.fingerprints import folder_fingerprint
from dialshift.hub.layout import METADATA_KEY
from dialshift.provenance import INSTALL_COMMAND, corpus_rows

CARD_TEMPLATE = "dataset_card.md"
SECTION_START = "<!-- dialshift:family {name} -->"
SECTION_END = "<!-- dialshift:end {name} -->"


@dataclass
class FamilyCard:
    """What a family contributes to the card: its section of the body and its YAML metadata."""

    name: str
    section: str
    license: str = ""
    languages: tuple = ()
    task_categories: tuple = ()
    citation: str = ""


def render_card(infos: dict, cards: list[FamilyCard], *, folder: Path, pretty_name: str = "dialshift",
                metadata: dict | None = None) -> str:
    """The README for ``folder`` (whose parquet files are written), from ``{config: DatasetInfo}``: YAML (licences,
    tags, ``configs``, ``dataset_info``, the ``dialshift`` metadata block) and the body from ``hub_cards``."""
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    licenses = sorted({card.license for card in cards if card.license})
    card_data = DatasetCardData(
        pretty_name=pretty_name,
        license=licenses[0] if len(licenses) == 1 else (licenses or None),
        language=sorted({language for card in cards for language in card.languages}) or None,
        task_categories=sorted({task for card in cards for task in card.task_categories}) or None,
        tags=["dialogue", "distribution-shift", "calibration", "robustness", "dialshift"],
    )
    metadata_configs = MetadataConfigs()
    ordered = DatasetInfosDict()
    for name in sorted(infos):
        splits = sorted(infos[name].splits)
        metadata_configs[name] = {"data_files": [{"split": split, "path": f"{name}/{split}-*"} for split in splits]}
        ordered[name] = infos[name]
    metadata_configs.to_dataset_card_data(card_data)
    ordered.to_dataset_card_data(card_data)
    if metadata:
        card_data[METADATA_KEY] = {"version": __version__,
                                   "configs": {name: metadata[name] for name in sorted(metadata)}}

    sections = [
        SECTION_START.format(name=card.name) + "\n" + card.section.strip() + "\n" + SECTION_END.format(name=card.name)
        for card in sorted(cards, key=lambda c: c.name)
        if card.section.strip()
    ]
    rows = [
        (name, ", ".join(f"{split} {infos[name].splits[split].num_examples:,}" for split in sorted(infos[name].splits)))
        for name in sorted(infos)
    ]
    template = resources.files("dialshift_cards").joinpath(CARD_TEMPLATE).read_text(encoding="utf-8")
    card = DatasetCard.from_template(
        card_data,
        template_str=template,
        pretty_name=pretty_name,
        version=__version__,
        config_rows=rows,
        family_sections="\n\n".join(sections),
        citations=[card.citation.strip() for card in sorted(cards, key=lambda c: c.name) if card.citation.strip()],
        fingerprint=folder_fingerprint(folder),
        install=INSTALL_COMMAND,
        raw_corpora=corpus_rows(metadata or {}),
    )
    return str(card).rstrip("\n") + "\n"
