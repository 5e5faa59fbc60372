"""Every registered command answers `--help`; `--version`, `python -m yarp` and the console script work."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from archive_factory import yarp_env

from yarp import __version__
from yarp.cli import COMMANDS

ROOT = Path(__file__).resolve().parent.parent


def _yarp(*args: str, home) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "yarp", *args], env=yarp_env(home), capture_output=True,
                          timeout=60)


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=lambda p: " ".join(p))
def test_every_command_has_help(path, tmp_path):
    module = f"yarp.commands.{COMMANDS[path]}"
    if importlib.util.find_spec(module) is None:
        # Registered before its module landed; the test becomes strict once it exists.
        pytest.skip(f"{module} is not in the tree yet")
    result = _yarp(*path, "--help", home=tmp_path)
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert text.startswith(f"usage: yarp {' '.join(path)}")
    assert "--archive" in text or not getattr(importlib.import_module(module), "ARCHIVE_OPTION", True)
    assert importlib.import_module(module).SUMMARY.strip() in " ".join(text.split())
    assert result.stderr == b""


def test_overview_lists_every_command(tmp_path):
    result = _yarp("--help", home=tmp_path)
    assert result.returncode == 0
    text = result.stdout.decode()
    for path in COMMANDS:
        assert re.search(rf"^\s+{re.escape(path[0])}\s", text, re.M), path


def test_version(tmp_path):
    result = _yarp("--version", home=tmp_path)
    assert (result.returncode, result.stdout.decode()) == (0, f"yarp {__version__}\n")
    assert re.fullmatch(r"yarp \d+\.\d+\.\d+\n", result.stdout.decode())


def test_console_script_entry_point(tmp_path):
    """The `yarp` script declared in pyproject.toml runs the same main()."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["yarp"].partition(":")
    # Exactly what a console-script wrapper does.
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    result = subprocess.run([sys.executable, "-c", code, "--version"], env=yarp_env(tmp_path),
                            capture_output=True, timeout=60)
    assert (result.returncode, result.stdout.decode()) == (0, f"yarp {__version__}\n")
    installed = shutil.which("yarp", path=os.path.dirname(sys.executable))
    if installed:
        # When the distribution is installed, its generated script must agree too.
        real = subprocess.run([installed, "--version"], env=yarp_env(tmp_path), capture_output=True, timeout=60)
        assert real.stdout.decode() == f"yarp {__version__}\n"


def test_unknown_command_is_usage_error(tmp_path):
    result = _yarp("no-such-command", home=tmp_path)
    assert result.returncode == 64
    assert result.stderr.startswith(b"yarp: ") and result.stderr.count(b"\n") == 1
