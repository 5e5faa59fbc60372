"""Every public definition of the library modules says what it is for.

The walk is static (``ast``), so it never imports the modules and stays fast. Command modules under
``src/yarp/commands/`` follow their own convention (``SUMMARY``, ``configure(parser)``, ``run(args)``) and are
exempt from the per-definition check; every module, commands included, still needs a module docstring.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGES = (SRC / "yarp", SRC / "agent_workflow")
COMMANDS = SRC / "yarp" / "commands"

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@functools.cache
def _modules() -> tuple[Path, ...]:
    return tuple(sorted(path for package in PACKAGES for path in package.rglob("*.py")))


def _is_public(name: str) -> bool:
    return not name.startswith("_")


def _public_definitions(tree: ast.Module) -> list[tuple[str, Definition]]:
    """Module-level functions and classes, and the public methods and properties of public classes."""
    found: list[tuple[str, Definition]] = []
    for node in tree.body:
        if not isinstance(node, Definition) or not _is_public(node.name):
            continue
        found.append((node.name, node))
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef) and _is_public(member.name):
                    found.append((f"{node.name}.{member.name}", member))
    return found


@functools.cache
def _parse(path: Path) -> ast.Module:
    # Parsed once for all three tests: the walk is most of their time.
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_every_module_has_a_docstring() -> None:
    missing = [str(path.relative_to(SRC)) for path in _modules() if ast.get_docstring(_parse(path)) is None]
    assert not missing, "modules without a docstring:\n" + "\n".join(missing)


def test_every_public_definition_has_a_docstring() -> None:
    missing: list[str] = []
    for path in _modules():
        if path.is_relative_to(COMMANDS):
            continue
        for qualified, node in _public_definitions(_parse(path)):
            if ast.get_docstring(node) is None:
                missing.append(f"{path.relative_to(SRC)}:{node.lineno} {qualified}")
    assert not missing, f"{len(missing)} public definitions without a docstring:\n" + "\n".join(missing)


def test_the_walk_sees_the_library() -> None:
    # Guards against a path change that would make the checks above pass vacuously.
    modules = _modules()
    assert len(modules) > 20
    assert sum(len(_public_definitions(_parse(path))) for path in modules) > 100
