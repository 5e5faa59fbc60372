"""Ordered migrations: older projections upgrade, newer and foreign databases are refused."""

from __future__ import annotations

import os
import sqlite3

import pytest
from aw_helpers import cli, cli_json, db

from agent_workflow import index_schema, index_store
from agent_workflow.errors import IndexIncompatible


def _database(root):
    return os.path.join(root, "index", "agent-workflow.sqlite3")


def _make_v1(root):
    os.makedirs(os.path.join(root, "index"), mode=0o700)
    fd = os.open(_database(root), os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    conn = sqlite3.connect(_database(root), isolation_level=None)
    index_schema.migrate(conn, target=1)
    conn.execute(
        "INSERT INTO runs(session_id, source_dir, storage_class, index_state, source_fingerprint, indexed_at)"
        " VALUES ('gen-0000', 'runs', 'active', 'current', 'old', 'then')"
    )
    conn.close()


def test_older_projection_is_upgraded_in_order(mixed_root):
    _make_v1(mixed_root)
    code, report = cli_json("index", "sync", "--state-root", mixed_root)
    assert code == 0 and report["migrations_applied"] == [2, 3, 4]
    conn = db(mixed_root)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
    assert conn.execute("PRAGMA application_id").fetchone()[0] == 0x41574631
    assert [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")] == [1, 2, 3, 4]
    # The v1 row had no typed outcomes: the upgrade forced its re-projection.
    assert conn.execute(
        "SELECT attempt_classification FROM runs WHERE session_id = 'gen-0000'"
    ).fetchone() == ("acceptance-eligible",)
    # v4 records directory mtimes for the freshness probe, for every re-projected run.
    assert conn.execute("SELECT COUNT(DISTINCT session_id) FROM source_dirs").fetchone()[0] == 9
    assert conn.execute(
        "SELECT relative_path FROM source_dirs WHERE session_id = 'gen-0000' AND relative_path = ''"
    ).fetchone() == ("",)


def test_reader_refuses_an_older_projection_until_synced(mixed_root):
    _make_v1(mixed_root)
    code, _, err = cli("index", "query", "runs", "--state-root", mixed_root)
    assert code == 74 and "upgrade" in err


def test_newer_projection_is_refused_but_rebuild_is_allowed(mixed_root):
    cli("index", "rebuild", "--state-root", mixed_root)
    conn = sqlite3.connect(_database(mixed_root), isolation_level=None)
    conn.execute("PRAGMA user_version = 5")
    conn.close()
    for argv in (("index", "status"), ("index", "sync"), ("index", "query", "runs"), ("index", "verify", "--full")):
        code, _, err = cli(*argv, "--state-root", mixed_root)
        assert code == 74 and "newer" in err, argv
    code, _, err = cli("index", "rebuild", "--state-root", mixed_root)
    assert code == 0, err
    assert db(mixed_root).execute("PRAGMA user_version").fetchone()[0] == 4


@pytest.mark.parametrize("content", ["foreign-app", "not-sqlite"])
def test_foreign_database_is_refused(mixed_root, content):
    os.makedirs(os.path.join(mixed_root, "index"), mode=0o700)
    if content == "foreign-app":
        conn = sqlite3.connect(_database(mixed_root))
        conn.execute("PRAGMA application_id = 1234")
        conn.execute("CREATE TABLE other(x)")
        conn.close()
    else:
        with open(_database(mixed_root), "wb") as handle:
            handle.write(b"this is not a database at all" * 100)
    os.chmod(_database(mixed_root), 0o600)
    code, _, err = cli("index", "sync", "--state-root", mixed_root)
    assert code == 74 and ("another application" in err or "not a SQLite" in err)
    with pytest.raises(IndexIncompatible):
        index_store.status(index_store.open_root(mixed_root))
    code, _, _ = cli("index", "rebuild", "--state-root", mixed_root)
    assert code == 0


def test_migrations_are_monotonic_and_complete():
    versions = [v for v, _, _ in index_schema.MIGRATIONS]
    assert versions == sorted(set(versions)) == list(range(1, index_schema.SCHEMA_VERSION + 1))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    index_schema.migrate(conn)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    for table in index_schema.TYPED_TABLES + ("schema_migrations", "index_metadata"):
        assert table in names
    for view in ("run_overview", "incident_summary", "permission_summary", "performance_summary", "attempt_summary",
                 "incident_latest", "permission_latest"):
        assert view in names
    runs = [r[1] for r in conn.execute("PRAGMA table_info(runs)")]
    for column in ("executor_result", "completion_result", "policy_result", "acceptance_eligible",
                   "attempt_classification", "score_verdict", "evaluation_state"):
        assert column in runs
