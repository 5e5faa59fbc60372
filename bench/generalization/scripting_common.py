"""What the scripting recipes share: where tools and projects live, the recipe type, file helpers."""

from __future__ import annotations

import base64
import hashlib
import os
import textwrap
import zipfile
from dataclasses import dataclass, field
from typing import Callable

GEN = "/tmp/yarp-gen"
VENV = os.path.join(GEN, "venv")
NPM = os.path.join(GEN, "npm")
WORK = os.path.join(GEN, "work", "scripting")
HOME = os.path.join(GEN, "home")


@dataclass
class Recipe:
    """One case: how to build its project, the command an agent types, and the lines that matter."""

    name: str
    tool: str
    category: str
    argv: list[str]
    setup: Callable[[str], None]
    signals: list[tuple[str, str, str]]  # (stream, regex, why), written from the output's meaning
    version: list[str]
    needs: tuple[str, ...] = ()
    cwd: str = ""
    prep: list[list[str]] = field(default_factory=list)
    prep_may_fail: bool = False
    env: dict[str, str] = field(default_factory=dict)
    path_first: str = ""  # a project-relative bin directory put first on PATH (a project venv)
    expect_exit: int | None = None


def run_env(recipe: Recipe) -> dict[str, str]:
    """A fixed environment: the pinned tools first on PATH, a private HOME, no colours, UTC."""
    path = [os.path.join(VENV, "bin"), os.path.join(NPM, "node_modules", ".bin"), "/usr/local/bin", "/usr/bin", "/bin"]
    if recipe.path_first:
        path.insert(0, os.path.join(WORK, recipe.name, recipe.path_first))
    os.makedirs(HOME, exist_ok=True)
    env = {
        "PATH": os.pathsep.join(path), "HOME": HOME, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
        "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "100", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INPUT": "1",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false", "NPM_CONFIG_FUND": "false", "NPM_CONFIG_AUDIT": "false",
        "UV_NO_PROGRESS": "1", "UV_CACHE_DIR": os.path.join(HOME, ".cache", "uv"),
    }
    env.update(recipe.env)
    return env


def write(root: str, files: dict[str, str]) -> None:
    """Write each relative path's text (dedented, one leading newline dropped) under root."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if text.startswith("\n"):
            text = text[1:]
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(textwrap.dedent(text))


def link_node_modules(root: str) -> None:
    """Give a project the pinned npm tools as its own node_modules (a symlink)."""
    os.symlink(os.path.join(NPM, "node_modules"), os.path.join(root, "node_modules"))


def wheel(dest: str, name: str, version: str, requires: list[str] = ()) -> str:
    """Build a minimal pure-Python wheel by hand (one module, real METADATA and RECORD)."""
    module = name.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": f'"""{name} {version}."""\n__version__ = "{version}"\n',
        f"{info}/METADATA": "Metadata-Version: 2.1\n" f"Name: {name}\nVersion: {version}\n"
                            + "".join(f"Requires-Dist: {req}\n" for req in requires),
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: handmade\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for rel, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join(record + [f"{info}/RECORD,,"]) + "\n"
    os.makedirs(dest, exist_ok=True)
    path = os.path.join(dest, f"{module}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as archive:
        for rel, text in files.items():
            archive.writestr(rel, text)
    return path
