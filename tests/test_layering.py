"""The folders tell the path of a tool call, and each may import only what lies below it on that path.

    base         yarp's root modules: errors, limits, paths, runtime, config, private files, the fault log
    wire         what travels: protocol, operations, frames, validation, JSON text (and their kernels)
    view         what the agent is shown: rules, reducers, salience, the cap, planning
    archive      where a call lands: schema, store, preparation, codec and the read-only readers
    hooks        agents' hook events, installation, launcher, notices
    clients      the processes that ask the broker (never the archive's writer)
    transcripts  past sessions read and sent to the broker
    broker       the one writer and its services
    commands     the CLI's commands
    app          `yarp.cli`, `yarp.doctor`, `yarp.__main__`

An agent's folder (`yarp.agents.<agent>`) spans the path: its record and the
registry (`yarp.agents`) are base, and each of its parts belongs to the layer
it is named for (`yarp.agents.codex.broker.service` is broker). A part is
reached through `yarp.agents.part(name, LAYER)`, a dynamic import, so a call
of it counts as an import of LAYER (`test_parts_are_asked_for_by_layers_that_may_import_them`).

An import the table does not allow fails `test_each_folder_imports_only_what_it_may`,
lazy imports and `TYPE_CHECKING` ones included (a dependency is a dependency).
Module and function sizes are held here too: no module over 600 lines (the
evidence index's declarative contract table aside), no function over 80.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from test_module_structure import SRC, _imports, _modules

FOLDERS = ("wire", "view", "archive", "hooks", "clients", "transcripts", "broker", "commands")
#: Top-level packages that are no layer of their own: `yarp.agents` (see `folder_of`).
SPANNING = ("agents",)
APP = ("yarp.cli", "yarp.doctor", "yarp.__main__")
#: The kernels sit at the package root where the design names them; they belong to their selector's folder.
KERNEL_FOLDERS = {"yarp._fastframe": "wire", "yarp._fastframe_py": "wire", "yarp._validate": "wire",
                  "yarp._validate_services": "wire",
                  "yarp._validate_py": "wire", "yarp._payload_kernel": "archive", "yarp._payload_kernel_py": "archive",
                  "yarp._scan": "view", "yarp._scan_py": "view"}
#: folder -> the folders it may import (itself always).
ALLOWED = {
    "base": set(),
    "wire": {"base"},
    "view": {"base", "wire"},
    "archive": {"base", "wire"},
    "hooks": {"base", "wire", "view", "clients"},
    "clients": {"base", "wire"},
    "transcripts": {"base", "wire", "archive", "clients", "hooks"},
    "broker": {"base", "wire", "view", "archive", "hooks", "transcripts"},
    "commands": {"base", "wire", "view", "archive", "hooks", "clients", "transcripts", "broker", "app"},
    "app": {"base", "wire", "view", "archive", "hooks", "clients", "transcripts", "commands"},
}
#: The layers an agent's part may be named for (`yarp.agents.PARTS`).
AGENT_PARTS = ("hooks", "transcripts", "broker")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
#: A declarative table, not code: the evidence index's record contracts.
LONG_ALLOWED = {"agent_workflow.contracts"}


def folder_of(module: str) -> str | None:
    """The folder a `yarp` module belongs to (None outside `yarp`)."""
    if module == "yarp" or not module.startswith("yarp."):
        return "base" if module == "yarp" else None
    if module in APP:
        return "app"
    if module in KERNEL_FOLDERS:
        return KERNEL_FOLDERS[module]
    parts = module.split(".")
    if parts[1] == "agents":
        # The registry and each agent's record are base; a part is the layer it is named for.
        return "base" if len(parts) <= 3 else parts[3] if parts[3] in AGENT_PARTS else "misplaced"
    return parts[1] if parts[1] in FOLDERS else "base"


def violations() -> list[str]:
    modules = _modules()
    known = set(modules)
    found = []
    for name, path in sorted(modules.items()):
        source = folder_of(name)
        if source is None:
            continue
        if source == "misplaced":
            found.append(f"{name} is in an agent's folder but not named for a layer ({', '.join(AGENT_PARTS)})")
            continue
        for target in sorted(_imports(name, path, known) | _parts_asked_for(name, path)):
            into = folder_of(target)
            if into is None or into == source or into in ALLOWED[source]:
                continue
            found.append(f"{name} ({source}) imports {target} ({into})")
    return found


def _parts_asked_for(name: str, path: Path) -> set[str]:
    """`yarp.agents.part(AGENT, "LAYER")` calls, as the imports of a module of LAYER they are
    (`yarp.agents.<any>.LAYER`); a layer that is not a literal is reported as `?`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "part" \
                and len(node.args) == 2 and name != "yarp.agents":
            layer = node.args[1]
            found.add(f"yarp.agents.?.{layer.value}" if isinstance(layer, ast.Constant) else "yarp.agents.?.?")
    return found


def test_each_folder_imports_only_what_it_may():
    assert violations() == []


def test_every_module_has_a_folder():
    # A new folder under src/yarp must be placed in the table before it is used.
    folders = {p.name for p in (SRC / "yarp").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= set(FOLDERS) | set(SPANNING), sorted(folders - set(FOLDERS) - set(SPANNING))


def test_the_check_sees_a_violation(tmp_path, monkeypatch):
    # A planted upward import (the view importing the broker, lazily) is reported.
    planted = dict(_modules())
    fake = tmp_path / "planted.py"
    fake.write_text("def f():\n    from yarp.broker import server\n")
    planted["yarp.view.planted"] = fake
    monkeypatch.setattr(sys.modules[__name__], "_modules", lambda: planted)
    assert [v for v in violations() if v.startswith("yarp.view.planted")] == [
        "yarp.view.planted (view) imports yarp.broker (broker)",
        "yarp.view.planted (view) imports yarp.broker.server (broker)"]


def test_the_check_sees_a_part_asked_for_by_a_lower_layer(tmp_path, monkeypatch):
    # Asking the registry for an agent's broker part from the view is an upward import too.
    planted = dict(_modules())
    fake = tmp_path / "planted.py"
    fake.write_text("def f(name):\n    from yarp import agents\n    return agents.part(name, 'broker')\n")
    planted["yarp.view.planted"] = fake
    misplaced = tmp_path / "misplaced.py"
    misplaced.write_text("X = 1\n")
    planted["yarp.agents.pi.helpers"] = misplaced
    monkeypatch.setattr(sys.modules[__name__], "_modules", lambda: planted)
    found = violations()
    assert "yarp.view.planted (view) imports yarp.agents.?.broker (broker)" in found
    assert any(v.startswith("yarp.agents.pi.helpers is in an agent's folder but not named for a layer") for v in found)


def _functions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def _sources() -> list[tuple[str, Path]]:
    return sorted(_modules().items())


@pytest.mark.parametrize("name,path", _sources(), ids=[n for n, _ in _sources()])
def test_no_module_or_function_is_too_long(name, path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if name not in LONG_ALLOWED:
        assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines"
    long = [f"{fn} (line {at}, {size} lines)" for fn, at, size in _functions(path) if size > MAX_FUNCTION_LINES]
    assert long == []
