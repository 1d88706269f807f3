"""Build benchmark configs into a local Hub dataset folder: the one build entry point.

``dialshift build`` and :func:`dialshift.load_dataset` both call :func:`build`::

    from dialshift.build import build

    result = build(["uw_0.30"], data_dir="/data/dialshift", out="build/dialshift")
    result.built, result.kept, result.folder

Every config built gets a ``lite`` split beside its ``test`` split (the lite track, :mod:`dialshift.lite`). Configs
already in the folder that are not rebuilt are kept as they are (their files checked and copied, not
re-read); the folder is replaced atomically, and files in it that dialshift did not write are carried over. Only an
empty folder or one dialshift built is accepted as ``out``; two builds into one folder wait for each other and merge.
"""

import copy
import dataclasses
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dialshift.arguments import MAX_SEED
from dialshift.errors import DialshiftError
from dialshift.identity import IDENTITY_KEY, config_identity

#: Where ``dialshift build`` writes when no ``--out`` is given.
DEFAULT_OUT = "build/dialshift"


@dataclass(frozen=True)
class BuildSummary:
    """What :func:`build` did: the folder, the configs built now and those kept from before (both sorted as the
    folder's card lists them), the family of every config in the folder, and the build's wall time."""

    folder: Path
    built: tuple[str, ...]
    kept: tuple[str, ...]
    family_of: Mapping[str, str]
    seconds: float

    @property
    def configs(self) -> tuple[str, ...]:
        """Every config in the folder now (built or kept)."""
        return self.built + self.kept


def _as_tuple(value: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


def family_options(family, given) -> object:
    """``family``'s options dataclass from ``given``: None (the defaults), an instance of the family's options class,
    or a mapping of its field names."""
    from dialshift.registry import check_options

    options_class = family.options_class
    if given is None:
        options = options_class()
    elif isinstance(given, options_class):
        options = given
    elif isinstance(given, Mapping):
        fields = {item.name for item in dataclasses.fields(options_class)}
        unknown = sorted(set(given) - fields)
        if unknown:
            raise DialshiftError(f"family {family.name!r} has no option {', '.join(map(repr, unknown))}; its options "
                                 f"are {', '.join(sorted(fields)) or 'none'}")
        options = options_class(**given)
    else:
        raise DialshiftError(f"options for family {family.name!r}: expected a {options_class.__name__} or a "
                             f"mapping, got {type(given).__name__}")
    check_options(options, family.name)
    return options


def raw_corpus_checksums(data_dir, source_names) -> dict:
    """``{corpus: {"checksum": "sha256:...", "matches_manifest": bool}}`` of the raw corpora the sources
    ``source_names`` read (see :func:`dialshift.sources.manifest.folder_checksum`)."""
    from dialshift.sources import sources
    from dialshift.sources.manifest import folder_checksum, shipped_manifest

    manifest, known = shipped_manifest(), sources()
    corpora = sorted({known[name].path.split("/")[0] for name in source_names if name in known})
    return {corpus: folder_checksum(data_dir, manifest[corpus]) for corpus in corpora if corpus in manifest}


def _refuse_mixed_options(out: Path, kept, owner, metadata: dict, recorded: dict) -> None:
    """Refuse to keep configs of a family built now that were built with other options or another seed: a folder
    holds one set of options per family."""
    from dialshift.identity import MixedOptionsError, differences, recorded_identity

    now = {}
    for entry in metadata.values():
        now.setdefault(entry[IDENTITY_KEY]["family"], entry[IDENTITY_KEY])
    clashes = [name for name in kept if owner.get(name) in now and
               differences(recorded_identity(recorded.get(name)), now[owner[name]]) != "the same options"]
    if clashes:
        first = clashes[0]
        shown = ", ".join(clashes[:4]) + (f" and {len(clashes) - 4} more" if len(clashes) > 4 else "")
        raise MixedOptionsError(
            f"{out} holds {shown} built with other options than this build (folder vs this build: "
            f"{differences(recorded_identity(recorded.get(first)), now[owner[first]])}); a folder holds one set of "
            f"options per family: rebuild those configs too (add them to --config) or build into another --out")


def build(configs: str | Iterable[str] | None = None, data_dir=None, out=DEFAULT_OUT,
          options: Mapping[str, object] | None = None, *, families: str | Iterable[str] | None = None,
          num_proc: int = 1, seed: int = 0, progress: bool = True) -> BuildSummary:
    """Build benchmark configs from the raw corpora into the Hub dataset folder ``out``.

    ``configs`` are config names or shell patterns (``"uw_*"``) and ``families`` family names; with neither, every
    config of every installed family is built. ``data_dir`` is the raw data directory (default:
    ``$DIALSHIFT_DATA_DIR``, else ``../shared/data``, else the download folder; looked up only when a family reads
    raw corpora). ``options`` maps a family name to its options (an instance of the family's ``options_class`` or a
    mapping of its fields; families not named use their defaults). ``num_proc`` worker processes do the per-instance
    work; every random choice is seeded per instance from ``seed``. Returns a :class:`BuildSummary`.
    """
    from dialshift import registry
    from dialshift.configs import natural_key
    from dialshift.data_dir import find_data_dir
    from dialshift.hub.card import FamilyCard
    from dialshift.hub.layout import README
    from dialshift.hub.locking import folder_lock
    from dialshift.hub.ownership import check_output_folder
    from dialshift.hub.reading import declared_configs, folder_metadata
    from dialshift.hub.writing import write_hub_folder
    from dialshift.lite import with_lite
    from dialshift.sources import recording_reads

    if not isinstance(num_proc, int) or num_proc < 1:
        raise DialshiftError(f"num_proc must be at least 1, got {num_proc}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise DialshiftError(f"seed must be an integer in 0..{MAX_SEED}, got {seed!r}")
    patterns, family_names = _as_tuple(configs), _as_tuple(families)
    selection = registry.select_configs(family_names, patterns)
    registered = registry.families()
    options = dict(options or {})
    unknown = sorted(set(options) - set(registered))
    if unknown:
        raise DialshiftError(f"options given for unknown famil{'y' if len(unknown) == 1 else 'ies'} "
                             f"{', '.join(map(repr, unknown))}; known families: {', '.join(registered)}")
    # None when no folder was named and none exists: looked up (with the error saying how to fetch the corpora) only
    # by a family that reads raw corpora, so e.g. the distracting family's --ubuntu-csv builds without any.
    data_dir = find_data_dir(data_dir)
    # Refuse a folder we may not replace before the (long) build; checked again under the lock when writing.
    out = check_output_folder(out, protected=[data_dir] if data_dir else [],
                              rebuilding=[config.name for chosen in selection.values() for config in chosen])
    start = time.perf_counter()
    built, metadata, chosen = {}, {}, {}
    for family_name, family_configs in selection.items():
        family = registered[family_name]
        chosen[family_name] = family_options(family, options.get(family_name))
        context = registry.BuildContext(data_dir=data_dir, num_proc=num_proc, seed=seed, progress=progress,
                                        options=chosen[family_name], requested=patterns or None)
        with recording_reads() as read:
            result = family.build(family_configs, context)
        corpora = raw_corpus_checksums(context.data_dir, read) if read else {}
        declared = {config.name: config for config in family_configs}
        built.update({name: with_lite(splits, declared[name].task) for name, splits in result.datasets.items()})
        for name in result.datasets:
            config = declared[name].to_dict()
            metadata[name] = {"config": config, "facts": result.facts.get(name, {}),
                              "raw_corpora": copy.deepcopy(corpora),
                              IDENTITY_KEY: config_identity(family_name, chosen[family_name], seed, config)}
    if not built:
        raise DialshiftError("no config was built; check the family/config selection (see `dialshift configs`)")
    owner = {config.name: family.name for family in registered.values() for config in family.configs()}
    # The folder's state (kept configs, their facts) is read under the lock: a build that finished meanwhile is
    # merged, never overwritten.
    with folder_lock(out):
        present = declared_configs(out) if (out / README).is_file() else {}
        kept = [name for name in present if name not in built]
        _refuse_mixed_options(out, kept, owner, metadata, folder_metadata(out))
        facts = {**{name: entry.get("facts", {}) for name, entry in folder_metadata(out).items() if name in kept},
                 **{name: entry["facts"] for name, entry in metadata.items()}}
        cards = []
        for family in registered.values():
            mine = {name: fact for name, fact in facts.items() if owner.get(name) == family.name}
            if mine:
                cards.append(FamilyCard(name=family.name, section=family.card_section(mine), license=family.license,
                                        languages=tuple(family.languages),
                                        task_categories=tuple(family.task_categories), citation=family.citation))
        write_hub_folder(out, built, cards, keep=kept, metadata=metadata, progress=progress)
    return BuildSummary(folder=out, built=tuple(sorted(built, key=natural_key)),
                        kept=tuple(sorted(kept, key=natural_key)),
                        family_of={name: owner.get(name, "?") for name in [*built, *kept]},
                        seconds=time.perf_counter() - start)
