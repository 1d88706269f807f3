"""A built config's identity: the options that made its rows, and their digest.

Two builds of ``uw_0.30`` with other family options (``--uw-rules sense``), another seed or other shift parameters
give other rows under the same name. Each config's card entry therefore records :func:`config_identity`: its family,
the family's options (every field of the options dataclass that has a JSON value; a field holding an object, such as
a scoring callable, is recorded by its type name), the seed, and the ``options_digest`` (sha256 over those and the
config's declaration, which holds its shift parameters). The build cache, kept-config reuse and ``dialshift
validate`` compare digests; a folder holds one set of options per family.
"""

import dataclasses
import hashlib
import json

from dialshift.errors import DialshiftError


class MixedOptionsError(DialshiftError):
    """A build would put configs of one family built with different options or seeds into one folder."""


#: The key of a config's card entry (``dialshift.configs.<name>``) that holds :func:`config_identity`.
IDENTITY_KEY = "identity"


def option_values(options) -> dict:
    """``{field: value}`` of an options dataclass instance, JSON-ready (see the module docstring)."""
    if options is None:
        return {}
    values = {}
    for item in dataclasses.fields(options):
        value = getattr(options, item.name)
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = f"<{type(value).__qualname__}>"
        values[item.name] = value
    return values


def options_digest(family: str, options: dict, seed: int, config: dict) -> str:
    """``sha256:<hex>`` over the family name, its option values, the seed and the config's declaration."""
    document = {"family": family, "options": options, "seed": seed, "config": config}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_identity(family: str, options, seed: int, config: dict) -> dict:
    """The identity recorded for one built config: ``family``, ``options``, ``seed`` and ``options_digest``."""
    values = option_values(options) if dataclasses.is_dataclass(options) else dict(options or {})
    return {"family": family, "options": values, "seed": seed,
            "options_digest": options_digest(family, values, seed, config)}


def recorded_identity(entry: dict) -> dict | None:
    """The identity a config's card entry records, or None (a folder built before identities were recorded)."""
    identity = (entry or {}).get(IDENTITY_KEY)
    return identity if isinstance(identity, dict) and "options_digest" in identity else None


def identity_problem(name: str, entry: dict) -> str | None:
    """Why a config's recorded identity is not consistent (missing, or a digest that is not its options'), else
    None."""
    identity = recorded_identity(entry)
    if identity is None:
        return f"config {name!r} records no options digest (built by an older dialshift); rebuild it"
    expected = options_digest(identity.get("family", ""), identity.get("options", {}), identity.get("seed"),
                              (entry or {}).get("config", {}))
    if identity["options_digest"] != expected:
        return (f"config {name!r}: options_digest {identity['options_digest'][:19]}... is not the digest of the "
                f"options it records ({expected[:19]}...); the card was edited, rebuild the config")
    return None


def differences(first: dict | None, second: dict | None) -> str:
    """What differs between two identities, for error lines: ``uw_rules 'sense' vs 'paper'; seed 1 vs 0``."""
    if first is None or second is None:
        return "options not recorded vs recorded"
    options = first.get("options", {}), second.get("options", {})
    parts = [f"{key} {options[0].get(key)!r} vs {options[1].get(key)!r}"
             for key in sorted(set(options[0]) | set(options[1])) if options[0].get(key) != options[1].get(key)]
    if first.get("seed") != second.get("seed"):
        parts.append(f"seed {first.get('seed')} vs {second.get('seed')}")
    return "; ".join(parts) or "the same options"


def mixed_options(metadata: dict) -> list[str]:
    """One line per family whose configs in one folder were built with different options or seeds
    (``metadata`` is ``{config: card entry}``)."""
    by_family: dict[str, dict[tuple, list[str]]] = {}
    for name, entry in sorted(metadata.items()):
        identity = recorded_identity(entry)
        if identity is None:
            continue
        key = (json.dumps(identity.get("options"), sort_keys=True, default=str), identity.get("seed"))
        by_family.setdefault(identity.get("family", "?"), {}).setdefault(key, []).append(name)
    problems = []
    for family, groups in sorted(by_family.items()):
        if len(groups) > 1:
            first, second = (names for names in list(groups.values())[:2])
            problems.append(f"family {family!r} has configs built with different options ({first[0]} vs "
                            f"{second[0]}: {differences(*(recorded_identity(metadata[n[0]]) for n in (first, second)))}"
                            "); rebuild them with one set of options")
    return problems


def identity_problems(metadata: dict) -> list[str]:
    """Every inconsistent recorded identity and every family with mixed options in a folder's card metadata
    (configs that record no identity are not checked)."""
    problems = [identity_problem(name, entry) for name, entry in sorted(metadata.items())
                if recorded_identity(entry) is not None]
    return [problem for problem in problems if problem] + mixed_options(metadata)
