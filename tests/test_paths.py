"""Archive location and private permissions, on real directories and files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from yarp.errors import ArchiveMissing, UnsafePath
from yarp.paths import (
    ArchiveLocation,
    canonical_archive_path,
    default_archive_path,
    resolve_archive,
    secure_archive_location,
)
from yarp.archive.sqlite import open_readonly, open_writer
from yarp.archive.store import ArchiveStore
from yarp.wire import operations as ops

NOBODY = 65534


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_default_under_xdg_data_home(private_home):
    expected = private_home / "home" / ".local" / "share" / "yarp" / "tool-calls.sqlite3"
    assert default_archive_path() == str(expected)
    location = resolve_archive()
    assert location == ArchiveLocation(str(expected), True)


def test_default_without_xdg_uses_home(private_home, monkeypatch):
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_archive_path() == str(private_home / "home" / ".local/share/yarp/tool-calls.sqlite3")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # not absolute: ignored, as XDG says
    assert default_archive_path() == str(private_home / "home" / ".local/share/yarp/tool-calls.sqlite3")
    monkeypatch.setenv("XDG_DATA_HOME", str(private_home / "data"))
    assert default_archive_path() == str(private_home / "data/yarp/tool-calls.sqlite3")


def test_override_order(private_home, monkeypatch):
    monkeypatch.setenv("YARP_ARCHIVE", str(private_home / "env.sqlite3"))
    assert resolve_archive(configured="/cfg.sqlite3").path == str(private_home / "env.sqlite3")
    assert resolve_archive(str(private_home / "flag.sqlite3")) == ArchiveLocation(
        str(private_home / "flag.sqlite3"), False)
    monkeypatch.delenv("YARP_ARCHIVE")
    assert resolve_archive(configured="/cfg.sqlite3") == ArchiveLocation("/cfg.sqlite3", False)
    # Naming the default path explicitly still counts as the known default.
    assert resolve_archive(default_archive_path()).is_default


def _write_something(store: ArchiveStore) -> None:
    session = ops.Session("pi", "me", "s1")
    store.apply_operation(ops.BeginCall(session, ops.CallMeta("c1", "bash", 1, False), {"a": 1}, {"a": 1}, 2))


def test_writer_creates_private_default_tree(private_home):
    store = ArchiveStore.open()
    try:
        _write_something(store)
        path = store.location.path
        assert store.location.is_default
        assert mode(os.path.dirname(path)) == 0o700
        for name in (path, path + "-wal", path + "-shm"):
            assert os.path.exists(name), name
            assert mode(name) == 0o600, name
    finally:
        store.close()


def test_default_broad_permissions_are_narrowed(private_home):
    ArchiveStore.open().close()
    location = resolve_archive()
    os.chmod(location.directory, 0o755)
    os.chmod(location.path, 0o644)
    Path(location.path + "-wal").touch()
    os.chmod(location.path + "-wal", 0o666)
    store = ArchiveStore.open()
    try:
        assert mode(location.directory) == 0o700
        assert mode(location.path) == 0o600
        assert mode(location.path + "-wal") == 0o600
    finally:
        store.close()


def _override(tmp_path, dir_mode=0o700) -> ArchiveLocation:
    directory = tmp_path / "override"
    directory.mkdir()
    os.chmod(directory, dir_mode)
    return resolve_archive(str(directory / "mine.sqlite3"))


def test_explicit_override_with_broad_directory_is_refused_and_unchanged(tmp_path):
    location = _override(tmp_path, 0o755)
    with pytest.raises(UnsafePath):
        ArchiveStore.open(location)
    assert mode(location.directory) == 0o755
    assert not os.path.exists(location.path)


def test_explicit_override_with_broad_database_is_refused_and_unchanged(tmp_path):
    location = _override(tmp_path)
    ArchiveStore.open(location).close()
    os.chmod(location.path, 0o640)
    with pytest.raises(UnsafePath):
        ArchiveStore.open(location)
    with pytest.raises(UnsafePath):
        open_readonly(location)
    assert mode(location.path) == 0o640


def test_explicit_override_missing_directory_is_created_private(tmp_path):
    location = resolve_archive(str(tmp_path / "new" / "a.sqlite3"))
    ArchiveStore.open(location).close()
    assert mode(location.directory) == 0o700
    assert mode(location.path) == 0o600


def test_env_override_is_used(private_home, monkeypatch, tmp_path):
    location = _override(tmp_path)
    monkeypatch.setenv("YARP_ARCHIVE", location.path)
    store = ArchiveStore.open()
    try:
        assert store.location.path == location.path and not store.location.is_default
        assert os.path.exists(location.path)
        assert not os.path.exists(default_archive_path())
    finally:
        store.close()


def test_symlinked_directory_refused(private_home, tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    data = private_home / "home" / ".local" / "share"
    data.mkdir(parents=True)
    (data / "yarp").symlink_to(real)
    with pytest.raises(UnsafePath):
        ArchiveStore.open()
    assert list(real.iterdir()) == []
    link_dir = tmp_path / "linkdir"
    link_dir.symlink_to(real)
    with pytest.raises(UnsafePath):
        ArchiveStore.open(str(link_dir / "a.sqlite3"))
    assert list(real.iterdir()) == []


def test_symlinked_database_refused(tmp_path):
    location = _override(tmp_path)
    target = tmp_path / "elsewhere.sqlite3"
    ArchiveStore.open(str(target.parent / "sub" / "t.sqlite3")).close()
    os.symlink(tmp_path / "sub" / "t.sqlite3", location.path)
    with pytest.raises(UnsafePath):
        ArchiveStore.open(location)
    with pytest.raises(UnsafePath):
        open_readonly(location)


def test_symlinked_wal_refused(tmp_path):
    location = _override(tmp_path)
    ArchiveStore.open(location).close()
    if os.path.exists(location.path + "-wal"):
        os.unlink(location.path + "-wal")
    os.symlink(tmp_path / "nowhere", location.path + "-wal")
    with pytest.raises(UnsafePath):
        ArchiveStore.open(location)


def test_foreign_owned_directory_and_database_refused(tmp_path):
    location = _override(tmp_path)
    ArchiveStore.open(location).close()
    os.chown(location.path, NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match="another user"):
        ArchiveStore.open(location)
    os.chown(location.path, os.geteuid(), os.getegid())
    os.chown(location.directory, NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match="another user"):
        ArchiveStore.open(location)
    with pytest.raises(UnsafePath):
        open_readonly(location)


def test_foreign_owned_default_is_not_narrowed(private_home):
    ArchiveStore.open().close()
    location = resolve_archive()
    os.chmod(location.path, 0o644)
    os.chown(location.path, NOBODY, NOBODY)
    with pytest.raises(UnsafePath):
        ArchiveStore.open()
    assert mode(location.path) == 0o644


def test_database_that_is_a_directory_refused(tmp_path):
    location = _override(tmp_path)
    os.mkdir(location.path, 0o700)
    with pytest.raises(UnsafePath, match="is a directory; name the database file in it"):
        ArchiveStore.open(location)


def test_readonly_needs_an_existing_archive(tmp_path):
    location = _override(tmp_path)
    with pytest.raises(ArchiveMissing):
        open_readonly(location)
    with pytest.raises(ArchiveMissing):
        open_readonly(resolve_archive(str(tmp_path / "absent" / "a.sqlite3")))
    assert not os.path.exists(location.path)
    assert not os.path.exists(tmp_path / "absent")


def test_secure_location_reports_existence(tmp_path):
    location = _override(tmp_path)
    assert secure_archive_location(location, create=True) is False
    open_writer(location).close()
    assert secure_archive_location(location, create=False) is True


def test_canonical_path_resolves_through_nearest_existing_parent(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert canonical_archive_path(str(tmp_path / "link" / "x" / "a.sqlite3")) == str(real / "x" / "a.sqlite3")
    assert canonical_archive_path(str(tmp_path / "link" / ".." / "real")) == str(real)


def test_archive_paths_with_uri_special_characters_open(tmp_path):
    # The read-only connection is opened through a URI filename: "?", "#", "%",
    # spaces and non-ASCII bytes in the path must be percent-encoded exactly.
    directory = tmp_path / "odd ?#% é"
    directory.mkdir(mode=0o700)
    location = resolve_archive(str(directory / "a?b#c%d é.sqlite3"))
    store = ArchiveStore.open(location)
    store.apply_operation(ops.BeginCall(ops.Session("pi", "me", "s"), ops.CallMeta("c", "bash", 1, False), {}, {}, 1))
    store.close()
    conn = open_readonly(location)
    try:
        assert conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == 1
    finally:
        conn.close()
    # No stray database named after a mangled URI (only the archive, its WAL and shared memory).
    assert {name for name in os.listdir(directory)} <= {"a?b#c%d é.sqlite3", "a?b#c%d é.sqlite3-wal",
                                                        "a?b#c%d é.sqlite3-shm"}
