"""Broker failures are diagnosable: one bounded, payload-free line per internal error.

The fault is real, the one a user of the first wheel met: a copy of the
package without `rules/salience.json`, run as the real `yarp run` and the real
broker it starts. The command's exact output still reaches the user, the
client's error names the log, and the log holds the error's class, place and
operation, but none of the command, its output, its directory or the session.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from broker_helpers import broker_env  # noqa: F401  (fixture)

from yarp import fault_log

SRC = Path(__file__).resolve().parents[1] / "src"
SECRET = "s3cr3t-payload-7f1e"


@pytest.fixture
def broken_package(tmp_path):
    """A copy of this package (compiled kernels included) without the salience data."""
    copy = tmp_path / "pkg"
    shutil.copytree(SRC / "yarp", copy / "yarp", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "yarp" / "rules" / "salience.json").unlink()
    return copy


def _run(env: dict, *argv: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "yarp", *argv], env=env, cwd=cwd, capture_output=True,
                          timeout=120)


def test_a_broker_fault_is_logged_without_a_payload_byte(broker_env, broken_package, tmp_path):  # noqa: F811
    # The fixture's archive, so that its teardown stops the broker this run starts.
    env = broker_env.with_env(PYTHONPATH=str(broken_package), YARP_ARCHIVE=broker_env.archive)
    work = tmp_path / f"work-{SECRET}"
    work.mkdir()
    command = f"echo {SECRET}-out; seq 1 30000; echo {SECRET}-err >&2; exit 3"
    result = _run(env, "run", "--", "sh", "-c", command, cwd=str(work))
    # The tool never depends on the archive: exact raw output, the child's status.
    assert result.returncode == 3
    expected = f"{SECRET}-out\n" + "".join(f"{i}\n" for i in range(1, 30001))
    assert result.stdout == expected.encode()
    assert result.stderr.startswith(f"{SECRET}-err\n".encode())
    said = result.stderr.decode()
    assert "internal broker error; details in ~/.local/state/yarp/broker-faults.log" in said

    state = Path(env["HOME"]) / ".local" / "state" / "yarp"
    log = state / "broker-faults.log"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    data = log.read_bytes()
    lines = data.splitlines()
    assert len(lines) == 1
    found = json.loads(lines[0])
    assert found["error"] == "FileNotFoundError" and found["errno"] == "ENOENT"
    assert found["where"].startswith("yarp.view.salience:") and found["where"].endswith(" read_data")
    assert found["operation"] == "run:capture"
    assert isinstance(found["requestBytes"], int) and found["requestBytes"] > 0
    assert set(found) == {"atMs", "version", "pid", "error", "errno", "where", "via", "operation", "requestBytes"}
    # Not a byte of the command, its output, its working directory, the archive path or the session.
    for forbidden in (SECRET, "seq 1 30000", str(tmp_path), broker_env.archive, "run-", "salience.json", "30000"):
        assert forbidden.encode() not in data, forbidden

    # `yarp doctor` from the same broken installation says what is wrong and what was logged.
    doctor = _run(env, "doctor", "--json", cwd=str(work))
    assert doctor.returncode == 1
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["data files"]["status"] == "fail" and "salience.json" in checks["data files"]["detail"]
    assert checks["broker errors"]["status"] == "warn"
    assert "FileNotFoundError (ENOENT) at yarp.view.salience:" in checks["broker errors"]["detail"]
    assert "during run:capture" in checks["broker errors"]["detail"]


def _raise_inside_yarp():
    fault_log._module_from_path(None)  # an AttributeError raised inside YARP's own code


def test_records_rotate_at_the_bound_and_stay_private(tmp_path):
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    try:
        _raise_inside_yarp()
    except AttributeError as exc:
        error = exc
    assert fault_log.record(error, operation="begin_call", request_bytes=10, environ=env)
    line = (Path(fault_log.log_path(env))).read_bytes()
    where, via = json.loads(line)["where"], json.loads(line)["via"]
    assert where.startswith("yarp.fault_log:") and where.endswith(" _module_from_path")
    assert via is None
    count = fault_log.MAX_FAULT_LOG_BYTES // len(line) + 5
    for _ in range(count):
        assert fault_log.record(error, operation="begin_call", request_bytes=10, environ=env)
    path = Path(fault_log.log_path(env))
    older = Path(str(path) + ".1")
    assert older.exists() and path.exists()
    assert path.stat().st_size <= fault_log.MAX_FAULT_LOG_BYTES
    assert older.stat().st_size <= fault_log.MAX_FAULT_LOG_BYTES
    assert path.stat().st_size + older.stat().st_size == (count + 1) * len(line)
    for each in (path, older):
        assert stat.S_IMODE(each.stat().st_mode) == 0o600
    assert fault_log.read_last(env)["operation"] == "begin_call"


_WRITER = """
import sys
from yarp import fault_log
env = {"XDG_STATE_HOME": sys.argv[1], "HOME": sys.argv[1]}
try:
    fault_log._module_from_path(None)
except AttributeError as exc:
    error = exc
for _ in range(int(sys.argv[2])):
    assert fault_log.record(error, operation="begin_call", request_bytes=10, environ=env)
"""


def test_brokers_writing_at_once_rotate_once_and_lose_no_record(tmp_path):
    # Each archive has its own broker, and they share the log: four writers cross the bound
    # together. One rotation, every record in the log or its older file.
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    try:
        _raise_inside_yarp()
    except AttributeError as exc:
        assert fault_log.record(exc, operation="begin_call", request_bytes=10, environ=env)
    path = Path(fault_log.log_path(env))
    size = path.stat().st_size
    path.unlink()
    each = (fault_log.MAX_FAULT_LOG_BYTES // size) // 4 + 40  # together: one bound and a little more
    child_env = dict(os.environ, PYTHONPATH=str(SRC))
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path / "state"), str(each)], env=child_env)
               for _ in range(4)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    older = Path(str(path) + ".1")
    lines = path.read_bytes().splitlines() + older.read_bytes().splitlines()
    assert len(lines) == 4 * each
    assert all(json.loads(line)["operation"] == "begin_call" for line in lines)
    assert older.stat().st_size <= fault_log.MAX_FAULT_LOG_BYTES


def test_a_linked_log_is_neither_followed_nor_written(tmp_path):
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    os.makedirs(fault_log.state_dir(env), mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_bytes(b"keep\n")
    os.symlink(target, fault_log.log_path(env))
    assert fault_log.record(ValueError("x"), environ=env) is False
    assert target.read_bytes() == b"keep\n"
    with pytest.raises(fault_log.private_files.PrivatePathProblem):
        fault_log.read_last(env)


def test_an_operation_name_that_is_not_a_plain_name_is_not_logged(tmp_path):
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    assert fault_log.record(KeyError("k"), operation="rm -rf /home/me/secret", request_bytes=-1, environ=env)
    found = fault_log.read_last(env)
    assert found["operation"] is None and found["requestBytes"] is None and found["where"] is None
