"""The compiled kernels and their pure-Python twins, loaded for tests and benchmarks side by side.

A kernel is named by its compiled module (`_fastframe`, `_payload_kernel`); its
twin is the same name with `_py`. The compiled case is skipped, never silently
replaced, when `YARP_NO_EXTENSIONS` disables it.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from yarp import _compat

SRC = Path(__file__).resolve().parents[1] / "src"


def load(kernel: str, name: str):
    """The twin (`py`) or the compiled extension (`c`) of `kernel`; skips `c` when extensions are disabled."""
    if name == "py":
        return importlib.import_module(f"yarp.{kernel}_py")
    if _compat.NO_EXTENSIONS:
        pytest.skip("YARP_NO_EXTENSIONS is set: the compiled implementation is disabled")
    return importlib.import_module(f"yarp.{kernel}")


def both(kernel: str) -> list:
    """The twin and the compiled extension, for tests that cross the two.

    Always both, even under `YARP_NO_EXTENSIONS=1`: that switch chooses what
    YARP selects, and a crossing test that ran the twin against itself could
    not fail. Only a tree without the built extension skips.
    """
    twin = importlib.import_module(f"yarp.{kernel}_py")
    try:
        compiled = importlib.import_module(f"yarp.{kernel}")
    except ImportError:
        pytest.skip(f"yarp.{kernel} is not built: nothing to cross the twin with")
    assert (twin.IMPLEMENTATION, compiled.IMPLEMENTATION) == ("py", "c")
    return [twin, compiled]


def selected_with_the_switch(selector: str) -> str:
    """The implementation a fresh interpreter with `YARP_NO_EXTENSIONS=1` selects through `selector`."""
    env = dict(os.environ, YARP_NO_EXTENSIONS="1", PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-c", f"import {selector} as k; print(k.IMPLEMENTATION)"],
                         env=env, capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.strip()
