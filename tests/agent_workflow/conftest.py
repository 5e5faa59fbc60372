"""Fixtures for the evidence-index tests: real state roots unpacked once per session.

The real archives live outside the repository (`/work/shared/data/agent-workflow`
or `$AGENT_WORKFLOW_DATA`); tests that need them skip cleanly when absent. The
unpacked trees are shared read-only; a test that mutates evidence copies the
runs it needs into its own state root first.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile

import pytest

DATA_DIR = os.environ.get("AGENT_WORKFLOW_DATA", "/work/shared/data/agent-workflow")


def unpack(archive: str, destination: str) -> str:
    """Unpack one `*.tar.zst` (a single `state/` folder) into destination/agent-workflow."""
    import zstandard

    with open(archive, "rb") as handle:
        data = zstandard.ZstdDecompressor().stream_reader(handle).read()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(destination, filter="tar")
    root = os.path.join(destination, "agent-workflow")
    os.rename(os.path.join(destination, "state"), root)
    return root


def _archive(name: str) -> str:
    path = os.path.join(DATA_DIR, name)
    if not os.path.exists(path):
        pytest.skip(f"real evidence {name} is not available")
    return path


@pytest.fixture(scope="session")
def launched_source(tmp_path_factory) -> str:
    """The 200 real launched runs (read-only: never mutate, never index in place)."""
    return unpack(_archive("launched-200.tar.zst"), str(tmp_path_factory.mktemp("launched")))


@pytest.fixture(scope="session")
def journals_source(tmp_path_factory) -> str:
    """The 200 real journal runs (read-only)."""
    return unpack(_archive("journals-200.tar.zst"), str(tmp_path_factory.mktemp("journals")))


def copy_runs(source_root: str, target_root: str, names=None) -> list[str]:
    """Copy runs (metadata preserved, like `cp -a`) from one state root into another."""
    os.makedirs(os.path.join(target_root, "runs"), mode=0o700, exist_ok=True)
    os.chmod(target_root, 0o700)
    available = sorted(os.listdir(os.path.join(source_root, "runs")))
    chosen = available if names is None else [n for n in available if n in set(names)] if not isinstance(names, int) else available[:names]
    for name in chosen:
        shutil.copytree(os.path.join(source_root, "runs", name), os.path.join(target_root, "runs", name), symlinks=True)
    return chosen


@pytest.fixture
def state_home(tmp_path, monkeypatch):
    """An isolated XDG state home; returns the (not yet created) state root path."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    os.makedirs(home / ".local" / "state", mode=0o700)
    return str(home / ".local" / "state" / "agent-workflow")


@pytest.fixture
def mixed_root(state_home, launched_source, journals_source) -> str:
    """A private state root with 6 launched and 3 journal runs, free to mutate."""
    os.makedirs(state_home, mode=0o700)
    copy_runs(launched_source, state_home, 6)
    copy_runs(journals_source, state_home, 3)
    return state_home


@pytest.fixture(scope="session")
def launched_indexed(tmp_path_factory, launched_source) -> str:
    """A session-wide copy of the 200 launched runs, indexed once; tests only read it."""
    from agent_workflow import index_store

    root = str(tmp_path_factory.mktemp("launched-indexed") / "agent-workflow")
    shutil.copytree(launched_source, root, symlinks=True)
    index_store.sync(index_store.open_root(root), rebuild=True)
    return root


@pytest.fixture(scope="session")
def journals_indexed(tmp_path_factory, journals_source) -> str:
    from agent_workflow import index_store

    root = str(tmp_path_factory.mktemp("journals-indexed") / "agent-workflow")
    shutil.copytree(journals_source, root, symlinks=True)
    index_store.sync(index_store.open_root(root), rebuild=True)
    return root
