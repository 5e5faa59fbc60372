"""Benchmark fixtures: the same `c`/`py` switch the tests use.

Benchmarks compare both implementations side by side in one run; the `c` case
is skipped (not silently replaced) when the extension is disabled or missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent
for _path in (str(_ROOT / "tests"), str(_ROOT / "src")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import kernel_impls  # noqa: E402


@pytest.fixture(params=["c", "py"], scope="session")
def fastframe_impl(request):
    """The compiled frame kernel (`c`) and its pure-Python twin (`py`)."""
    return kernel_impls.load("_fastframe", request.param)


@pytest.fixture(params=["c", "py"], scope="session")
def payload_impl(request):
    """The compiled payload kernel (`c`) and its pure-Python twin (`py`)."""
    return kernel_impls.load("_payload_kernel", request.param)
