"""Benchmark fixtures: the same `c`/`py` switch the tests use.

Benchmarks compare both implementations side by side in one run; the `c` case
is skipped (not silently replaced) when the extension is disabled or missing.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

_SRC = str(Path(__file__).resolve().parent.parent / "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)

from yarp import _compat  # noqa: E402


def _load_impl(kernel: str, name: str):
    if name == "py":
        return importlib.import_module(f"yarp.{kernel}_py")
    if _compat.NO_EXTENSIONS:
        pytest.skip("YARP_NO_EXTENSIONS is set: the compiled implementation is disabled")
    return importlib.import_module(f"yarp.{kernel}")


@pytest.fixture(params=["c", "py"], scope="session")
def fastframe_impl(request):
    """The compiled frame kernel (`c`) and its pure-Python twin (`py`)."""
    return _load_impl("_fastframe", request.param)


@pytest.fixture(params=["c", "py"], scope="session")
def payload_impl(request):
    """The compiled payload kernel (`c`) and its pure-Python twin (`py`)."""
    return _load_impl("_payload_kernel", request.param)
