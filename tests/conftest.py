"""Shared fixtures: the `c`/`py` implementation switches and private temporary homes.

Tests that run YARP point HOME, XDG_* and the runtime directory into their own
temporary directory (`private_home` here, the broker and run helpers for
subprocesses), so no test can touch the developer's real archive or runtime
directory, and brokers started by one test never answer another. The whole
session's XDG_CACHE_HOME (the parse cache) is a private temporary directory too.
"""

from __future__ import annotations

import os

import kernel_impls
import pytest


@pytest.fixture(params=["c", "py"], scope="session")
def fastframe_impl(request):
    """The compiled frame kernel (`c`) and its pure-Python twin (`py`), one after the other."""
    return kernel_impls.load("_fastframe", request.param)


@pytest.fixture(params=["c", "py"], scope="session")
def payload_impl(request):
    """The compiled payload kernel (`c`) and its pure-Python twin (`py`), one after the other."""
    return kernel_impls.load("_payload_kernel", request.param)


@pytest.fixture(autouse=True, scope="session")
def _private_cache_home(tmp_path_factory):
    """Keep the parse cache of in-process and child YARP runs out of the developer's ~/.cache."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture
def private_home(tmp_path, monkeypatch):
    """An isolated HOME / XDG tree for one test; returns its root."""
    home = tmp_path / "home"
    runtime = tmp_path / "run"
    for path in (home, runtime):
        path.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("YARP_ARCHIVE", raising=False)
    monkeypatch.delenv("YARP_CONFIG", raising=False)
    os.chmod(runtime, 0o700)
    return tmp_path
