"""The broker keeps a large archive's read summaries up to date, so that a person's first report is warm.

Real brokers started by `yarp run` over a real socket, the refresh a real child
process (`python -m yarp.archive.refresh`), the summaries the real files of the
private HOME's cache directory. "Large" is set low through
`YARP_BROKER_REFRESH_BYTES` so that a small archive counts; with the default, a
small archive never starts a child.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time

import pytest

from broker_helpers import BrokerProcess, broker_pids, cmdline, pid_alive
from run_helpers import close_run_env, make_run_env, yarp, yrun
from yarp.archive import stats_summary
from yarp.archive.savings import projection

pytestmark = pytest.mark.slow


@pytest.fixture
def renv():
    benv = make_run_env(idle_ms=300)
    try:
        yield benv
    finally:
        close_run_env(benv)


def _cache_files(renv) -> tuple[str, str]:
    environ = {"XDG_CACHE_HOME": os.path.join(renv.environ["HOME"], ".cache")}
    return (stats_summary.summary_path(renv.archive, environ), projection.projection_path(renv.location, environ))


def _refresh_pids() -> set[int]:
    return {int(name) for name in os.listdir("/proc") if name.isdigit() and b"yarp.archive.refresh" in cmdline(int(name))}


def _settled(renv, timeout: float = 60.0) -> None:
    """Wait until the brokers of `renv` exited and their refresh children are done."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not broker_pids(renv.archive) and not any(pid_alive(pid) for pid in _refresh_pids()):
            return
        time.sleep(0.05)
    raise AssertionError("the broker or its refresh did not finish")


def _last_ref(renv) -> str:
    with sqlite3.connect(f"file:{renv.archive}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT archive_ref FROM tool_calls ORDER BY id DESC LIMIT 1").fetchone()[0]


def test_a_large_archives_summaries_are_refreshed_by_the_broker_and_the_reports_read_them(renv):
    renv.environ["YARP_BROKER_REFRESH_BYTES"] = "0"
    for n in range(3):
        assert yrun(renv, "seq", "1", str(1000 * (n + 1))).returncode == 0
    _settled(renv)
    summary_file, projection_file = _cache_files(renv)
    summary = json.loads(open(summary_file, "rb").read())
    # The summary holds the call written last: the broker's exit refreshed what its session wrote.
    assert summary["last_ref"] == _last_ref(renv) and summary["frozen"]["calls"] == 3
    with sqlite3.connect(f"file:{projection_file}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT count(*) FROM call_savings").fetchone()[0] == 3
    before = os.stat(summary_file).st_mtime_ns
    # The report reads the summary as it stands (nothing to add, nothing rewritten) and agrees with
    # one computed from nothing in another cache.
    warm = yarp(renv, "archive", "stats", "--json")
    cold_env = dict(renv.environ, XDG_CACHE_HOME=os.path.join(renv.root, "other-cache"))
    cold = yarp(renv, "archive", "stats", "--json", env=cold_env)
    assert warm.returncode == cold.returncode == 0
    assert json.loads(warm.stdout) == json.loads(cold.stdout)
    assert os.stat(summary_file).st_mtime_ns == before
    savings = yarp(renv, "archive", "savings", "--json")
    cold_savings = yarp(renv, "archive", "savings", "--json", env=cold_env)
    assert savings.returncode == 0 and json.loads(savings.stdout) == json.loads(cold_savings.stdout)


def test_a_small_archive_never_starts_a_refresh(renv):
    assert yrun(renv, "seq", "1", "10").returncode == 0
    _settled(renv)
    summary_file, projection_file = _cache_files(renv)
    assert not os.path.exists(summary_file) and not os.path.exists(projection_file)


def test_a_refresh_that_fails_costs_nothing_but_its_time(renv):
    # The cache directory is a file: neither summary can be kept, the calls are archived all the same.
    renv.environ["YARP_BROKER_REFRESH_BYTES"] = "0"
    with open(os.path.join(renv.environ["HOME"], ".cache"), "wb"):
        pass
    run = yrun(renv, "seq", "1", "5")
    assert run.returncode == 0 and run.stdout == b"1\n2\n3\n4\n5\n"
    _settled(renv)
    assert yarp(renv, "archive", "verify").returncode == 0


def test_a_broker_that_serves_on_refreshes_every_so_many_requests():
    benv = make_run_env(idle_ms=600_000)
    benv.environ.update(YARP_BROKER_REFRESH_BYTES="0", YARP_BROKER_REFRESH_REQUESTS="4")
    broker = BrokerProcess(benv).wait_ready()
    try:
        for n in range(4):
            assert yrun(benv, "seq", "1", str(n + 1)).returncode == 0
        started = [e for e in broker.events() if e["event"] == "refresh_started"]
        # One when it started serving, then one each time 4 more requests were served (two a call).
        assert [e["reason"] for e in started][:1] == ["start"] and "requests" in [e["reason"] for e in started]
        assert broker.proc.poll() is None  # still serving: nothing waited for the child
        summary_file, _ = _cache_files(benv)
        end = time.monotonic() + 60
        while not os.path.exists(summary_file) and time.monotonic() < end:
            time.sleep(0.05)
        assert os.path.exists(summary_file)
    finally:
        broker.stop()
        close_run_env(benv, timeout=0)


def test_the_refresh_thresholds_are_read_like_every_broker_setting():
    from types import SimpleNamespace

    from yarp.broker.lifecycle import refresher_from_env
    from yarp.errors import ValidationError

    broker = SimpleNamespace(location=SimpleNamespace(path="/nowhere/tool-calls.sqlite3"), log=None)
    refresher = refresher_from_env(broker, {"YARP_BROKER_REFRESH_BYTES": "0", "YARP_BROKER_REFRESH_REQUESTS": "7"})
    assert (refresher.min_bytes, refresher.every_requests) == (0, 7)
    default = refresher_from_env(broker, {})
    assert (default.min_bytes, default.every_requests) == (64 * 1024 * 1024, 10_000)
    for name, value in (("YARP_BROKER_REFRESH_BYTES", "lots"), ("YARP_BROKER_REFRESH_REQUESTS", "-1")):
        with pytest.raises(ValidationError, match=name):
            refresher_from_env(broker, {name: value})
