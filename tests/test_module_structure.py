"""Structure guards: no import cycles between modules, each module's exported names exist, and each
accelerated kernel's twin and extension offer what its selector exports.

The import graph counts every import, at module level or inside a function: a
lazy import still makes two modules depend on each other, and a cycle between
them is a design knot even when it never deadlocks at import time.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("yarp", "agent_workflow")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (SRC / package).rglob("*.py"):
            found[_module_name(path)] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports (resolved: `from . import x` names module `x` when it is one)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    # A name imported from a module is that module; only names that are modules count.
    resolved = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        # A package importing its own submodules is not a dependency back on the package.
        if not target or target == name or (is_package and target.startswith(name + ".")):
            continue
        resolved.add(target)
    return resolved


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        # A package's __init__ re-exporting its submodules is the package's face, not a dependency
        # of theirs: drop edges from a submodule to its own parent package.
        edges = _imports(name, path, known)
        graph[name] = {t for t in edges if not name.startswith(t + ".")}
    return graph


def test_the_import_graph_has_no_cycles():
    assert _cycles(_graph()) == []


def test_the_graph_sees_relative_and_lazy_imports():
    graph = _graph()
    assert "agent_workflow.index_schema" in graph["agent_workflow.reconciler"]  # `from .index_schema import`
    assert "agent_workflow.reconciler" in graph["agent_workflow.index_store"]  # imported inside a function
    assert "yarp.archive.recovery.lookup" in graph["yarp.archive.recovery.search"]


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _exporting_modules() -> list[str]:
    return sorted(n for n, p in _modules().items() if "\n__all__" in p.read_text())


def _exporting_packages() -> list[str]:
    return sorted(n for n in _exporting_modules() if _modules()[n].name == "__init__.py")


@pytest.mark.parametrize("name", _exporting_modules())
def test_every_exported_name_exists(name):
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(set(exported)) == len(exported), "duplicate names in __all__"
    missing = [name for name in exported if not hasattr(module, name)]
    assert missing == []


#: Each selector, with its pure-Python twin and its compiled extension.
KERNELS = {"yarp.wire.frames": ("yarp._fastframe_py", "yarp._fastframe"),
           "yarp.archive.payload_kernel": ("yarp._payload_kernel_py", "yarp._payload_kernel"),
           "yarp.wire.validation": ("yarp._validate_py", "yarp._validate"),
           "yarp.view.scan": ("yarp._scan_py", "yarp._scan"),
           "yarp.view.templates": ("yarp._templates_py", "yarp._templates"),
           "yarp.view.lines": ("yarp._lines_py", "yarp._lines"),
           "yarp.view.shapes": ("yarp._shapes_py", "yarp._shapes")}
#: Names a selector defines itself instead of taking them from the implementation it selected.
SELECTOR_OWN = {"FrameSplitterC", "FrameSplitterPy"}


def test_the_kernel_list_is_complete():
    pyx = {"yarp." + path.stem for path in (SRC / "yarp").glob("*.pyx")}
    assert pyx == {compiled for _, compiled in KERNELS.values()}


@pytest.mark.parametrize("selector", sorted(KERNELS))
def test_twin_and_extension_offer_what_the_selector_exports(selector):
    twin_name, compiled_name = KERNELS[selector]
    wanted = set(importlib.import_module(selector).__all__) - SELECTOR_OWN
    twin = importlib.import_module(twin_name)
    assert sorted(name for name in wanted if not hasattr(twin, name)) == []
    assert twin.IMPLEMENTATION == "py"
    try:
        compiled = importlib.import_module(compiled_name)
    except ImportError:
        pytest.skip("the extension is not built")
    assert sorted(name for name in wanted if not hasattr(compiled, name)) == []
    assert compiled.IMPLEMENTATION == "c"


@pytest.mark.parametrize("package", _exporting_packages())
def test_public_names_defined_by_a_package_are_exported(package):
    """A package that declares `__all__` lists every public name it binds itself (no silent extras)."""
    module = importlib.import_module(package)
    exported = module.__all__
    submodules = {n.rpartition(".")[2] for n in _modules() if n.startswith(package + ".")}
    public = {name for name in vars(module) if not name.startswith("_") and name not in submodules
              and name != "annotations"}
    assert sorted(public - set(exported)) == []
