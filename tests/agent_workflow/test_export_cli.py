"""Parquet export read back with pyarrow and through DuckDB; command-line help and errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from aw_helpers import cli, db

from agent_workflow.index_schema import TYPED_TABLES


def test_parquet_export_reads_back(mixed_root, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    cli("index", "rebuild", "--state-root", mixed_root)
    out = tmp_path / "export"
    code, text, err = cli("index", "export", "--format", "parquet", str(out), "--state-root", mixed_root)
    assert code == 0, err
    conn = db(mixed_root)
    for table in TYPED_TABLES:
        data = pq.read_table(out / f"{table}.parquet")
        assert data.num_rows == conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0], table
    runs = pq.read_table(out / "runs.parquet").to_pydict()
    assert sorted(runs["session_id"]) == sorted(r[0] for r in conn.execute("SELECT session_id FROM runs"))
    import duckdb  # a test dependency: the DuckDB check never skips

    engine = duckdb.connect()
    count = engine.execute(f"SELECT COUNT(*) FROM read_parquet('{out / 'health_samples.parquet'}')").fetchone()[0]
    assert count == conn.execute("SELECT COUNT(*) FROM health_samples").fetchone()[0]


def test_every_command_has_help():
    commands = [("index", c) for c in ("status", "sync", "rebuild", "verify", "query", "export")]
    commands.append(("supervisor", "once"))
    for argv in commands + [("index",), ("supervisor",), ()]:
        code, out, err = cli(*argv, "--help")
        assert code == 0 and "usage: agent-workflow" in out, argv


def test_errors_are_one_bounded_line(state_home):
    code, out, err = cli("index", "status", "--state-root", state_home)
    assert code == 74 and err.count("\n") == 1 and "rebuild" in err and not out
    assert cli("index", "verify", "--state-root", state_home)[0] == 64


def test_module_entry_point_runs_as_a_process(mixed_root):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p.endswith("src")) or "src")
    done = subprocess.run([sys.executable, "-m", "agent_workflow", "index", "rebuild", "--state-root", mixed_root],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("rebuild: 9 indexed")
