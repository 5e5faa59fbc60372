"""Trusted state root: location, ownership, symlinks, private modes, the writer lock."""

from __future__ import annotations

import fcntl
import os
import stat

import pytest
from aw_helpers import cli

from agent_workflow import index_store
from agent_workflow.errors import IndexBusy, StateRootUnsafe
from agent_workflow.state_root import default_state_root, resolve_state_root


def test_default_location_follows_xdg_then_home(tmp_path):
    assert default_state_root({"XDG_STATE_HOME": "/x/state"}) == "/x/state/agent-workflow"
    assert default_state_root({"XDG_STATE_HOME": "relative"}).endswith("/.local/state/agent-workflow")


def test_cli_uses_xdg_state_home(mixed_root):
    code, out, err = cli("index", "rebuild")
    assert code == 0, err
    assert os.path.exists(os.path.join(mixed_root, "index", "agent-workflow.sqlite3"))


def test_index_files_are_private(mixed_root):
    cli("index", "rebuild", "--state-root", mixed_root)
    index_dir = os.path.join(mixed_root, "index")
    assert stat.S_IMODE(os.lstat(index_dir).st_mode) == 0o700
    for name in os.listdir(index_dir):
        assert stat.S_IMODE(os.lstat(os.path.join(index_dir, name)).st_mode) & 0o077 == 0, name


def test_symlinked_component_is_refused(mixed_root, tmp_path):
    link = tmp_path / "link"
    os.symlink(os.path.dirname(mixed_root), link)
    with pytest.raises(StateRootUnsafe):
        resolve_state_root(str(link / "agent-workflow"))
    code, _, err = cli("index", "sync", "--state-root", str(link / "agent-workflow"))
    assert code == 74 and "symbolic" in err


def test_broad_mode_is_refused(mixed_root):
    os.chmod(mixed_root, 0o755)
    with pytest.raises(StateRootUnsafe, match="broader"):
        resolve_state_root(mixed_root)


def test_writable_runs_directory_is_refused(mixed_root):
    os.chmod(os.path.join(mixed_root, "runs"), 0o777)
    with pytest.raises(StateRootUnsafe, match="runs directory"):
        resolve_state_root(mixed_root)


@pytest.mark.skipif(os.geteuid() != 0, reason="changing an owner needs root")
def test_foreign_owned_root_is_refused(mixed_root):
    os.chown(mixed_root, 65534, 65534)
    with pytest.raises(StateRootUnsafe, match="another user"):
        resolve_state_root(mixed_root)


def test_writer_holds_an_exclusive_lock(mixed_root):
    root = index_store.open_root(mixed_root)
    cli("index", "rebuild", "--state-root", mixed_root)
    fd = os.open(root.lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(IndexBusy):
            with index_store.writer_lock(root, wait=0.2):
                pass
    finally:
        os.close(fd)
    with index_store.writer_lock(root, wait=0.2):
        probe = os.open(root.lock, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)
