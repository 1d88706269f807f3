"""What every paper's report reads from the dataset before the returned arrays: the test ids and candidate counts
of each config, and the check that the returned files were computed on those ids."""

from dialshift.bundle.manifest import ids_digest
from dialshift.errors import DialshiftError


def test_ids(dataset, limits: dict) -> tuple[dict, dict]:
    """``({config: ids}, {config: candidates per instance})`` of the test split of each config of ``limits``
    (``{config: max_instances or None}``, the same seeded subsample the steps read)."""
    import pyarrow.compute as pc

    from dialshift.ranking.data import read_columns

    ids, candidates = {}, {}
    for name, limit in limits.items():
        table = read_columns(dataset, name, "test", ["id", "candidates"], limit, 0)
        ids[name] = table.column("id").to_pylist()
        counts = set(pc.list_value_length(table.column("candidates")).to_pylist())
        if len(counts) != 1:
            found = f"{min(counts)} to {max(counts)} candidates per instance" if counts else "no instances"
            raise DialshiftError(f"{dataset}: config {name!r} has {found}; the bundle's report needs one candidate "
                                 "count per config")
        candidates[name] = counts.pop()
    return ids, candidates


def check_ids(found: dict, ids: dict, dataset) -> None:
    """Each returned step's id digest and instance count per config equal those of ``ids`` (from ``dataset``)."""
    from dialshift.ranking.data import dataset_revision

    revision = dataset_revision(dataset)
    sources = {entry.description["dataset_revision"] for entry in found.values()}
    for entry in found.values():
        for name, digest in entry.description["ids"].items():
            if name not in ids or ids_digest(ids[name]) != digest \
                    or entry.description["instances"][name] != len(ids[name]):
                raise DialshiftError(f"{entry.path}: the {name!r} test ids differ from those of {dataset} "
                                     f"(bundle made from {', '.join(sorted(sources))}, this folder is {revision}); "
                                     "report against the dataset folder the bundle was made from")
