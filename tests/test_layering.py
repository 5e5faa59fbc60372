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

An agent's name (its `NAME`, its module's name, its `LABEL` and that label's
first word) appears in `src/yarp` only inside its own folder
(`test_agent_names_stay_in_their_folders`), and an agent's folder imports no
other agent's, so adding an agent touches its folder, its tests and its docs.

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
                  "yarp._scan": "view", "yarp._scan_py": "view", "yarp._templates": "view",
                  "yarp._templates_py": "view", "yarp._lines": "view", "yarp._lines_py": "view",
                  "yarp._shapes": "view", "yarp._shapes_py": "view"}
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


#: Package data of the agent-neutral code that may hold an agent's name: none. (The specification names
#: Pi's adapter folder and timing, and the hosts' event names, but forces no name into neutral code.)
NAME_ALLOWED: dict[str, str] = {}
#: Files of `src/yarp` searched for agents' names.
_NAMED_SUFFIXES = (".py", ".pyi", ".pyx", ".pxi", ".ts", ".json", ".toml")


def _agent_words() -> dict[str, str]:
    """Every way the source names an agent, lower-cased -> the agent."""
    from yarp import agents

    words = {}
    for name in agents.names():
        label = agents.record(name).LABEL
        for word in (name, name.replace("-", "_"), label, label.split()[0] if " " in label else label):
            words[word.lower()] = name
    return words


def _mentions(text: str, words: dict[str, str]):
    """(line number, agent, the word) of each agent name in `text`, whole words only, any case."""
    import re

    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True))
                         + r")(?![A-Za-z0-9_])", re.IGNORECASE)
    for number, line in enumerate(text.splitlines(), 1):
        for found in pattern.finditer(line):
            yield number, words[found.group(1).lower()], found.group(1)


def _bases() -> dict[str, str]:
    """agent -> the agent it is built on (its record's `EXTENSION_BASE`), which its folder may name and import."""
    from yarp import agents

    return {name: base for name in agents.names() if (base := getattr(agents.record(name), "EXTENSION_BASE", None))}


def name_violations(root: Path = SRC / "yarp") -> list[str]:
    """Agent names outside their agent's folder (the registry and the shared `agents/ts/` are neutral); an
    agent built on another may name that one."""
    words = _agent_words()
    bases = _bases()
    found = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in _NAMED_SUFFIXES or "__pycache__" in path.parts or not path.is_file():
            continue
        parts = path.relative_to(root).parts
        own = parts[1].replace("_", "-") if parts[0] == "agents" and len(parts) > 2 else None
        rel = "/".join(parts)
        for line, agent, word in _mentions(path.read_text(encoding="utf-8", errors="replace"), words):
            if agent != own and (own is None or bases.get(own) != agent) and rel not in NAME_ALLOWED:
                found.append(f"{rel}:{line} names {agent} ({word!r})")
    return found


def test_agent_names_stay_in_their_folders():
    assert name_violations() == []


def test_no_agent_folder_imports_another_agents():
    # Except the agent it is built on (an opencode fork reads opencode's store).
    bases = {name.replace("-", "_"): base.replace("-", "_") for name, base in _bases().items()}
    found = []
    for name, path in sorted(_modules().items()):
        parts = name.split(".")
        if parts[:2] != ["yarp", "agents"] or len(parts) < 3:
            continue
        for target in _imports(name, path, set(_modules())):
            other = target.split(".")
            if other[:2] == ["yarp", "agents"] and len(other) > 2 and other[2] not in (parts[2], bases.get(parts[2])):
                found.append(f"{name} imports {target}")
    assert found == []


def test_the_name_check_sees_a_name_in_neutral_code(tmp_path):
    # A planted neutral module naming an agent is reported; the same text in that agent's folder is not.
    (tmp_path / "view").mkdir()
    (tmp_path / "view" / "planted.py").write_text('"""Shown as Gemini CLI shows it."""\n')
    (tmp_path / "agents" / "gemini").mkdir(parents=True)
    (tmp_path / "agents" / "gemini" / "hooks.py").write_text('"""Gemini CLI\'s own."""\n')
    (tmp_path / "agents" / "pi").mkdir()
    (tmp_path / "agents" / "pi" / "hooks.py").write_text("# like claude-code's\n")
    assert name_violations(tmp_path) == ["agents/pi/hooks.py:1 names claude-code ('claude-code')",
                                         "view/planted.py:1 names gemini ('Gemini CLI')"]


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
