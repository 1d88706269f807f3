"""The import graph of dialshift (and of the families shipped with it) has no cycle, and no part imports a part of a
higher layer. Read from the source with ``ast``: module-level and function-level imports alike.

``from package import name`` is an import of the submodule ``package.name`` when there is one (the package's
``__init__`` is already imported, or being imported, before any of its submodules), else of ``package`` itself.
"""

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Source folders and the package name each installs as.
PACKAGES = {"dialshift": ROOT / "dialshift", "dialshift_families": ROOT / "dataset_scripts",
            "dialshift_trainers": ROOT / "trainers"}

#: The layers, lowest first: a part may import its own layer and the layers below, never one above. A part is a
#: top-level module or subpackage of dialshift (``dialshift.shifts`` holds every ``dialshift.shifts.*``).
LAYERS = (
    # The version, the error type, atomic writes, paths, typed config declarations, fork-pool helpers, one tokenizer,
    # checked argparse types: what everything else may use.
    ("dialshift", "dialshift.errors", "dialshift.io", "dialshift.data_dir", "dialshift.configs", "dialshift.parallel",
     "dialshift.identity",
     "dialshift.text", "dialshift.arguments", "dialshift.heartbeat"),
    # Resources and pure numerics: WordNet lookup, the numpy core of every metric, the reports' verdict rule, their
    # generated parts and across-seed summaries.
    ("dialshift.wordnet", "dialshift.metrics", "dialshift.verdicts", "dialshift.verdict_simulation",
     "dialshift.reports", "dialshift.run_files", "dialshift.report_inputs", "dialshift.across_seeds"),
    # Data: raw-corpus readers, their downloader and the seeded shifts applied to them.
    ("dialshift.sources", "dialshift.shifts", "dialshift.download"),
    # The family plug-in interface (families build with shifts; the core never imports a family).
    ("dialshift.registry",),
    # What a push publishes beside a folder's files (options digests, raw-corpus checksums) and the card shows.
    ("dialshift.provenance",),
    # Hub dataset folders, one job per module, lowest first: names and paths, the lock and carrying foreign files;
    # reading a folder (marker, card, data files, fingerprints) and which folders a build may replace; rendering
    # the card, writing and validating a folder; pushing datasets and Spaces, and the package re-exporting them.
    ("dialshift.hub.layout", "dialshift.hub.locking", "dialshift.hub.carry"),
    ("dialshift.hub.marker", "dialshift.hub.reading", "dialshift.hub.fingerprints", "dialshift.hub.ownership"),
    ("dialshift.hub.card", "dialshift.hub.writing", "dialshift.hub.validation"),
    ("dialshift.hub.push", "dialshift.hub.spaces", "dialshift.hub"),
    # Models (torch) and figures: they use metrics, never scoring, training or evaluation runs.
    ("dialshift.models", "dialshift.plots"),
    # Scoring predictions against a dataset folder's gold; checking instances for their task; the lite split.
    ("dialshift.scoring", "dialshift.instances", "dialshift.lite"),
    # Training models, and running rankers or open-world classifiers over datasets (scored through dialshift.scoring);
    # the lm-evaluation-harness bridge (tasks out, logged samples in as prediction files).
    # The model adapters of `dialshift evaluate` score through the ranking loop, so they sit with it.
    ("dialshift.training", "dialshift.ranking", "dialshift.models.adapters", "dialshift.open_world_evaluation",
     "dialshift.harness"),
    # The library entry points: build a folder, load a config, publish results, bundle runs, their returned files
    # and the wheels they carry; your own shifted configs as a folder; the plug-ins installed (the shift plug-ins
    # build their shifts from your training file, as `dialshift shift` does).
    ("dialshift.build", "dialshift.loading", "dialshift.leaderboard", "dialshift.bundle", "dialshift.returned",
     "dialshift.wheels", "dialshift.custom", "dialshift.plugins", "dialshift.shifts.plugins",
     "dialshift.shifts.shipped"),
    # The command line.
    ("dialshift.commands", "dialshift.cli", "dialshift.__main__"),
    # The families and the trainers shipped with dialshift: plug-ins on top of the core.
    ("dialshift_families", "dialshift_trainers"),
)

def module_files() -> dict[str, tuple[Path, bool]]:
    """``{module name: (file, is_package)}`` for every module of :data:`PACKAGES`."""
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imported_modules(tree: ast.AST, name: str, is_package: bool, known) -> set[str]:
    """The modules of ``known`` that the module ``name`` imports anywhere in ``tree``."""
    package = name if is_package else name.rpartition(".")[0]
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            targets += [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                        for alias in node.names]
    found = set()
    for target in targets:
        while target and target not in known:  # `import a.b.c` of a name defined in a.b -> a.b
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


@functools.cache
def _source_graph() -> dict[str, frozenset[str]]:
    known = module_files()
    return {name: frozenset(imported_modules(ast.parse(path.read_text(encoding="utf-8"), str(path)), name,
                                             is_package, known))
            for name, (path, is_package) in known.items()}


def import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` of the source tree (a fresh copy each call)."""
    return {name: set(imported) for name, imported in _source_graph().items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: each strongly connected component of more than one module (or a module that
    imports itself), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def layer_of(module: str, layers=LAYERS) -> int:
    """The index of the layer holding ``module`` (its longest declared prefix)."""
    best, level = "", None
    for number, parts in enumerate(layers):
        for part in parts:
            inside = module.startswith(part + ".") and part != "dialshift"  # the root package holds only itself
            if (module == part or inside) and len(part) > len(best):
                best, level = part, number
    if level is None:
        raise KeyError(module)
    return level


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """``"a -> b"`` for every import of a higher layer's module ``b`` by ``a``."""
    return sorted(f"{module} -> {other}" for module, imported in graph.items() for other in imported
                  if layer_of(other, layers) > layer_of(module, layers))


def test_every_module_has_a_layer():
    with pytest.raises(KeyError):
        layer_of("dialshift.new_module")
    unplaced = []
    for module in import_graph():
        try:
            layer_of(module)
        except KeyError:
            unplaced.append(module)
    assert not unplaced, f"add these to a layer of LAYERS: {unplaced}"


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_no_lower_layer_imports_a_higher_one():
    assert upward_imports(import_graph()) == []


def test_the_checker_reads_function_level_and_relative_imports(tmp_path):
    source = ("from . import card\n"
              "def build():\n"
              "    from .pipeline import fold\n"
              "    import dialshift.hub\n"
              "    from dialshift.scoring import bootstrap, score\n")
    known = {"fam", "fam.card", "fam.pipeline", "dialshift.hub", "dialshift.scoring", "dialshift.scoring.bootstrap"}
    assert imported_modules(ast.parse(source), "fam", True, known) == {
        "fam.card", "fam.pipeline", "dialshift.hub", "dialshift.scoring", "dialshift.scoring.bootstrap"}


@pytest.mark.parametrize(("graph", "expected"), [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"a"}}, [["a"]]),
    ({"a": {"b"}, "b": set(), "c": {"a", "b"}}, []),
])
def test_the_checker_finds_planted_cycles(graph, expected):
    assert cycles(graph) == expected


def test_the_checker_finds_a_planted_cycle_and_upward_import_in_the_real_graph():
    graph = import_graph()
    graph["dialshift.hub.reading"] = graph["dialshift.hub.reading"] | {"dialshift.loading"}  # loading imports it
    assert any({"dialshift.hub.reading", "dialshift.loading"} <= set(cycle) for cycle in cycles(graph))
    assert "dialshift.hub.reading -> dialshift.loading" in upward_imports(graph)
    graph = import_graph()
    graph["dialshift.hub.reading"] = graph["dialshift.hub.reading"] | {"dialshift.hub.writing"}  # a higher hub module
    assert upward_imports(graph) == ["dialshift.hub.reading -> dialshift.hub.writing"]
    graph = import_graph()
    graph["dialshift.models.seq2seq"] = graph["dialshift.models.seq2seq"] | {"dialshift.training.runner"}
    assert upward_imports(graph) == ["dialshift.models.seq2seq -> dialshift.training.runner"]
    assert cycles(graph) == []
