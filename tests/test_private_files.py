"""The private-file rules, each tested once against real modes, links, FIFOs and a foreign owner.

A foreign owner is made the real way: as root, `chown` to the unprivileged
`nobody` uid (skipped when not root). Every caller in `yarp` and
`agent_workflow` goes through these functions, so their own tests only check
how they label and raise the problems found here.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from yarp import private_files as pf
from yarp.private_files import PrivatePathProblem

NOBODY = 65534


def _mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def open_umask():
    old = os.umask(0)
    yield
    os.umask(old)


def _foreign(path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a file another user's needs root")
    os.chown(path, NOBODY, NOBODY, follow_symlinks=False)


def test_create_private_is_0600_exclusive_and_never_follows_a_link(tmp_path, open_umask):
    path = tmp_path / "new"
    os.close(pf.create_private(str(path)))
    assert _mode(path) == 0o600
    with pytest.raises(FileExistsError):
        pf.create_private(str(path))
    target = tmp_path / "target"
    target.write_bytes(b"keep")
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for name in ("link", "dangling"):
        with pytest.raises(FileExistsError):
            pf.create_private(str(tmp_path / name))
        assert pf.create_private_empty(str(tmp_path / name)) is False
    assert target.read_bytes() == b"keep" and not (tmp_path / "nowhere").exists()


def test_replace_atomically_writes_all_or_nothing(tmp_path, open_umask):
    path = tmp_path / "settings"
    path.write_bytes(b"old")
    pf.replace_atomically(str(path), b"new" * 100_000)
    assert path.read_bytes() == b"new" * 100_000 and _mode(path) == 0o600
    pf.replace_atomically(str(path), b"shared", mode=0o644)
    assert _mode(path) == 0o644
    blocker = tmp_path / "a-directory"
    blocker.mkdir()
    with pytest.raises(IsADirectoryError):
        pf.replace_atomically(str(blocker), b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-directory", "settings"]  # no temporary left


def test_ensure_private_directory_creates_narrows_and_refuses(tmp_path, open_umask):
    made = tmp_path / "a" / "b"
    assert pf.ensure_private_directory(str(made), create=True, narrow=False) is False
    assert _mode(made) == 0o700  # missing parents are made as `mkdir -p` would: only the leaf is ours to restrict
    assert pf.ensure_private_directory(str(made), create=True, narrow=False) is True
    with pytest.raises(FileNotFoundError):
        pf.ensure_private_directory(str(tmp_path / "missing"), create=False, narrow=True)
    with pytest.raises(FileNotFoundError):
        pf.ensure_private_directory(str(tmp_path / "no" / "parent"), create=True, narrow=True, parents=False)

    broad = tmp_path / "broad"
    broad.mkdir(mode=0o755)
    with pytest.raises(PrivatePathProblem, match="broader than 0700"):
        pf.ensure_private_directory(str(broad), create=False, narrow=False)
    assert _mode(broad) == 0o755  # refused, not changed
    pf.ensure_private_directory(str(broad), create=False, narrow=True)
    assert _mode(broad) == 0o700

    (tmp_path / "link").symlink_to(made)
    (tmp_path / "file").write_bytes(b"")
    for name, problem in (("link", "is a symbolic link"), ("file", "is not a directory")):
        with pytest.raises(PrivatePathProblem) as caught:
            pf.ensure_private_directory(str(tmp_path / name), create=True, narrow=True)
        assert caught.value.problem == problem


def test_a_directory_of_another_user_is_refused_never_narrowed(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    _foreign(theirs)
    with pytest.raises(PrivatePathProblem, match="owned by another user"):
        pf.ensure_private_directory(str(theirs), create=True, narrow=True)
    assert _mode(theirs) == 0o755


def test_check_private_file(tmp_path, open_umask):
    path = tmp_path / "db"
    assert pf.check_private_file(str(path), narrow=False) is False
    path.write_bytes(b"")
    os.chmod(path, 0o640)
    with pytest.raises(PrivatePathProblem, match="broader than 0600"):
        pf.check_private_file(str(path), narrow=False)
    assert pf.check_private_file(str(path), narrow=True) is True and _mode(path) == 0o600
    (tmp_path / "link").symlink_to(path)
    with pytest.raises(PrivatePathProblem, match="symbolic link"):
        pf.check_private_file(str(tmp_path / "link"), narrow=True)
    _foreign(path)
    with pytest.raises(PrivatePathProblem, match="owned by another user"):
        pf.check_private_file(str(path), narrow=True)


def test_open_for_reading_refuses_links_fifos_and_broad_private_files(tmp_path, open_umask):
    path = tmp_path / "data"
    path.write_bytes(b"0123456789")
    os.chmod(path, 0o644)
    fd, st = pf.open_for_reading(str(path), private=False)
    try:
        assert st.st_size == 10 and pf.read_bounded(fd, 4) == b"01234"  # limit + 1: the caller sees it grew
    finally:
        os.close(fd)
    with pytest.raises(PrivatePathProblem, match="broader than 0600"):
        pf.open_for_reading(str(path), private=True)
    (tmp_path / "link").symlink_to(path)
    with pytest.raises(PrivatePathProblem, match="is a symbolic link"):
        pf.open_for_reading(str(tmp_path / "link"), private=False)
    os.mkfifo(tmp_path / "fifo")  # O_NONBLOCK: opening a FIFO with no writer must not hang
    with pytest.raises(PrivatePathProblem, match="not a regular file"):
        pf.open_for_reading(str(tmp_path / "fifo"), private=False)
    with pytest.raises(FileNotFoundError):
        pf.open_for_reading(str(tmp_path / "missing"), private=False)
    _foreign(path)
    with pytest.raises(PrivatePathProblem, match="owned by another user"):
        pf.open_for_reading(str(path), private=False)
    fd, st = pf.open_for_reading(str(path), private=False, owned=False)  # an approved source output file
    os.close(fd)
    assert st.st_uid == NOBODY
    with pytest.raises(PrivatePathProblem, match="is a symbolic link"):
        pf.open_for_reading(str(tmp_path / "link"), private=False, owned=False)


def test_open_lock_file(tmp_path, open_umask):
    path = tmp_path / "x.lock"
    fd = pf.open_lock_file(str(path))
    os.close(fd)
    assert _mode(path) == 0o600
    os.close(pf.open_lock_file(str(path)))  # an existing lock of ours opens again
    (tmp_path / "link.lock").symlink_to(path)
    with pytest.raises(PrivatePathProblem, match="is a symbolic link"):
        pf.open_lock_file(str(tmp_path / "link.lock"))
    _foreign(path)
    with pytest.raises(PrivatePathProblem, match="owned by another user"):
        pf.open_lock_file(str(path))


def test_the_module_imports_only_os_and_stat():
    """`yarp run` and the hooks import it: it must not pull anything in."""
    code = ("import sys, os, stat, __future__; before = set(sys.modules); import yarp.private_files; "
            "print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.path.join(os.path.dirname(__file__), "..", "src")})
    assert out.stdout.strip() == "['yarp', 'yarp._version', 'yarp.private_files']"
