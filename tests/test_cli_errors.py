"""What the command lines say when something is wrong: the real cause, the path, once.

Every test runs the real CLI as a child process (`python -m yarp`, `python -m
agent_workflow`) in its own temporary home: usage errors carry one `yarp: ` or
`agent-workflow: ` prefix, a path the user named that does not exist is refused
instead of created or read as empty, and an error names the path it is about.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from archive_factory import run_yarp, yarp_env

from agent_workflow import __version__ as aw_version



def _agent_workflow(*args: str, home) -> subprocess.CompletedProcess:
    env = yarp_env(home)
    env["XDG_STATE_HOME"] = str(Path(home) / ".local" / "state")
    return subprocess.run([sys.executable, "-m", "agent_workflow", *args], env=env, capture_output=True,
                          text=True, timeout=60)


# --- one prefix, once -------------------------------------------------------------------------


@pytest.mark.parametrize("args,expected", [
    (("archive", "export", "out"), "yarp: archive export: the following arguments are required: --format\n"),
    (("search", "--no-such-option"), "yarp: search: unrecognized arguments: --no-such-option\n"),
    (("run",), "yarp: run: expected -- followed by a command\n"),
])
def test_yarp_usage_errors_have_one_prefix(tmp_path, args, expected):
    done = run_yarp(*args, home=tmp_path)
    assert done.returncode == 64
    assert done.stderr.decode() == expected


def test_agent_workflow_version_and_usage_errors(tmp_path):
    done = _agent_workflow("--version", home=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"agent-workflow {aw_version}\n", "")
    done = _agent_workflow(home=tmp_path)
    assert (done.returncode, done.stderr) == (64, "agent-workflow: the following arguments are required: GROUP\n")
    done = _agent_workflow("index", "query", "nothing", home=tmp_path)
    assert done.returncode == 64
    assert done.stderr.startswith("agent-workflow: index query: argument kind: invalid choice: 'nothing'")
    assert done.stderr.count("agent-workflow") == 1 and done.stderr.count("\n") == 1


# --- no silent typos --------------------------------------------------------------------------


@pytest.mark.parametrize("command", [("index", "rebuild"), ("index", "sync"), ("supervisor", "once"),
                                     ("index", "status"), ("index", "verify", "--full")])
def test_agent_workflow_missing_state_root_is_refused_not_created(tmp_path, command):
    missing = tmp_path / "no" / "such" / "root"
    done = _agent_workflow(*command, "--state-root", str(missing), home=tmp_path)
    assert (done.returncode, done.stdout) == (64, "")
    assert done.stderr == f"agent-workflow: --state-root {missing} does not exist\n"
    assert not (tmp_path / "no").exists()


def test_agent_workflow_default_state_root_is_still_created(tmp_path):
    (tmp_path / ".local" / "state").mkdir(parents=True, mode=0o700)
    default = tmp_path / ".local" / "state" / "agent-workflow"
    done = _agent_workflow("index", "rebuild", "--state-root", str(default), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("rebuild: 0 indexed")
    assert oct(os.stat(default).st_mode & 0o777) == "0o700"


def test_run_into_a_missing_directory_is_refused_before_the_command_runs(tmp_path):
    archive = tmp_path / "no" / "such" / "dir" / "a.sqlite3"
    marker = tmp_path / "ran"
    done = run_yarp("run", "--archive", str(archive), "--", "touch", str(marker), home=tmp_path)
    assert done.returncode == 64
    assert done.stderr.decode() == (f"yarp: run: --archive: archive directory {archive.parent} does not exist "
                                    "(yarp creates the database, not its directory)\n")
    assert not marker.exists() and not (tmp_path / "no").exists()


def test_run_into_a_directory_is_refused_as_a_directory(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir(mode=0o755)  # its parent's mode is not what is wrong
    done = run_yarp("run", "--archive", str(directory), "--", "true", home=tmp_path)
    assert done.returncode == 64
    assert done.stderr.decode() == (f"yarp: run: --archive: archive path {directory} is a directory; name the "
                                    f"database file in it, e.g. {directory / 'tool-calls.sqlite3'}\n")


def test_reading_commands_name_the_path_and_the_real_cause(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)  # the directory's parent is broad too: it is not the archive's, so not the cause
    done = run_yarp("archive", "stats", "--archive", str(directory), home=tmp_path)
    assert done.returncode == 74
    assert done.stderr.decode() == (f"yarp: archive path {directory} is a directory; name the database file in "
                                    f"it, e.g. {directory / 'tool-calls.sqlite3'}\n")
    done = run_yarp("archive", "stats", "--archive", str(directory / "absent.sqlite3"), home=tmp_path)
    assert (done.returncode, done.stderr.decode()) == (
        74, f"yarp: archive directory {directory} permissions are broader than 0700\n")
    directory.chmod(0o700)
    done = run_yarp("search", "--archive", str(directory / "absent.sqlite3"), home=tmp_path)
    assert (done.returncode, done.stderr.decode()) == (
        74, f"yarp: archive database {directory / 'absent.sqlite3'} does not exist\n")
    done = run_yarp("archive", "stats", "--archive", str(tmp_path / "none" / "a.sqlite3"), home=tmp_path)
    assert (done.returncode, done.stderr.decode()) == (
        74, f"yarp: archive directory {tmp_path / 'none'} does not exist\n")


def test_import_of_a_missing_path_or_a_mistyped_agent_is_refused(tmp_path):
    done = run_yarp("import", "claude-code", str(tmp_path / "no" / "such" / "path"), home=tmp_path)
    assert (done.returncode, done.stdout) == (64, b"")
    assert done.stderr.decode() == f"yarp: {tmp_path / 'no' / 'such' / 'path'} does not exist\n"
    done = run_yarp("import", "claud-code", home=tmp_path)
    assert done.returncode == 64
    said = done.stderr.decode()
    assert said.startswith("yarp: claud-code is neither an agent (") and "claude-code, " in said
    assert said.endswith(", all) nor an existing path\n")
    done = run_yarp("import", "pi", str(tmp_path), "--archive", str(tmp_path / "none" / "a.sqlite3"),
                    home=tmp_path)
    assert done.returncode == 64 and b"archive directory" in done.stderr and b"does not exist" in done.stderr
    assert not (tmp_path / "none").exists()


# --- doctor: the fix for the state it found ---------------------------------------------------


def _doctor(home, archive, **extra) -> dict[str, list[dict]]:
    import json

    env = {**yarp_env(home), "XDG_STATE_HOME": str(Path(home) / ".local" / "state"), **extra}
    done = subprocess.run([sys.executable, "-m", "yarp", "doctor", "--json", "--archive", str(archive)], env=env,
                          capture_output=True, text=True, timeout=120)
    checks: dict[str, list[dict]] = {}
    for check in json.loads(done.stdout)["checks"]:
        checks.setdefault(check["name"], []).append(check)
    return checks


def _private(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True)
    os.chmod(path, 0o700)
    return path


@pytest.fixture
def short_runtime():
    """A private runtime directory with a path short enough for a Unix socket under it."""
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="yr", dir="/tmp")
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


def test_doctor_fix_for_a_file_at_the_socket_path_is_to_remove_it(tmp_path, short_runtime):
    from yarp.runtime import runtime_paths

    runtime, archive = short_runtime, _private(tmp_path / "data") / "a.sqlite3"
    socket_path = runtime_paths(str(archive), {"XDG_RUNTIME_DIR": str(runtime)}).socket
    Path(socket_path).write_bytes(b"")
    os.chmod(socket_path, 0o600)
    check = _doctor(tmp_path, archive, XDG_RUNTIME_DIR=str(runtime))["runtime directory"][0]
    assert check["status"] == "fail"
    assert check["detail"] == f"broker socket {socket_path} is not a socket"
    assert check["fix"] == f"remove {socket_path}: no broker uses it, and yarp makes it anew"


def test_doctor_fix_for_a_broad_runtime_directory_is_its_chmod(tmp_path):
    runtime, archive = tmp_path / "run", _private(tmp_path / "data") / "a.sqlite3"
    runtime.mkdir(mode=0o755)
    os.chmod(runtime, 0o755)
    check = _doctor(tmp_path, archive, XDG_RUNTIME_DIR=str(runtime))["runtime directory"][0]
    assert check["detail"] == f"XDG_RUNTIME_DIR {runtime} permissions are broader than 0700"
    assert check["fix"] == f"chmod 700 {runtime}, or unset XDG_RUNTIME_DIR"
    # Without XDG_RUNTIME_DIR the fallback under the temporary directory is named, and never XDG_RUNTIME_DIR.
    temp = _private(tmp_path / "tmp")
    (temp / f"yarp-runtime-{os.geteuid()}").mkdir(mode=0o711)
    os.chmod(temp / f"yarp-runtime-{os.geteuid()}", 0o711)
    check = _doctor(tmp_path, archive, TMPDIR=str(temp))["runtime directory"][0]
    assert check["fix"] == f"chmod 700 {temp / f'yarp-runtime-{os.geteuid()}'}"


def test_doctor_fix_for_an_archive_named_wrongly(tmp_path):
    runtime = _private(tmp_path / "run")
    directory = _private(tmp_path / "archives")
    check = _doctor(tmp_path, directory, XDG_RUNTIME_DIR=str(runtime))["archive"][0]
    assert check["status"] == "fail" and check["detail"].startswith(f"archive path {directory} is a directory")
    assert check["fix"] == f"name the database file in it: --archive {directory / 'tool-calls.sqlite3'}"
    missing = tmp_path / "typo" / "a.sqlite3"
    check = _doctor(tmp_path, missing, XDG_RUNTIME_DIR=str(runtime))["archive"][0]
    assert check["status"] == "fail" and check["fix"] == f"mkdir -m 700 {missing.parent}, or name another archive"
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o750)
    os.chmod(loose, 0o750)
    check = _doctor(tmp_path, loose / "a.sqlite3", XDG_RUNTIME_DIR=str(runtime))["archive"][0]
    assert check["detail"] == f"archive directory {loose} permissions are broader than 0700 (0750)"
    assert check["fix"] == f"chmod 700 {loose}"


def test_doctor_fix_for_a_broker_that_does_not_answer_points_at_no_missing_line(tmp_path, short_runtime):
    import fcntl
    import socket

    from yarp.runtime import runtime_paths

    runtime, archive = short_runtime, _private(tmp_path / "data") / "a.sqlite3"
    paths = runtime_paths(str(archive), {"XDG_RUNTIME_DIR": str(runtime)})
    # A listener that owns the archive (its lifetime lock) and never answers: a stopped broker.
    lock = os.open(paths.lifetime_lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.write(lock, b"%d\n" % os.getpid())
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(paths.socket)
    os.chmod(paths.socket, 0o600)
    listener.listen(8)
    try:
        checks = _doctor(tmp_path, archive, XDG_RUNTIME_DIR=str(runtime))
    finally:
        listener.close()
        os.close(lock)
    broker = checks["broker"][0]
    assert broker["status"] == "fail"
    assert f"broker pid {os.getpid()} does not answer on {paths.socket}" in broker["detail"]
    assert broker["fix"].startswith("end the broker process named above (kill PID")
    assert checks["broker errors"] == [{"name": "broker errors", "status": "ok", "detail": "none logged", "fix": None}]
    assert not any("below" in (check["fix"] or "") for found in checks.values() for check in found)


# --- the smaller ones -------------------------------------------------------------------------


def test_agent_workflow_export_without_pyarrow_names_the_install_command(tmp_path):
    import shlex

    (tmp_path / ".local" / "state").mkdir(parents=True, mode=0o700)
    env = {**yarp_env(tmp_path), "XDG_STATE_HOME": str(tmp_path / ".local" / "state")}
    assert subprocess.run([sys.executable, "-m", "agent_workflow", "index", "rebuild"], env=env,
                          capture_output=True, timeout=60).returncode == 0
    code = ("import sys; sys.modules['pyarrow'] = None; from agent_workflow.cli import main; "
            f"sys.exit(main(['index', 'export', '--format', 'parquet', {str(tmp_path / 'out')!r}]))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 74
    assert done.stderr == ("agent-workflow: Parquet export needs pyarrow, which is not installed; install it with: "
                           f"{shlex.quote(sys.executable)} -m pip install 'pyarrow>=14'\n")


def test_config_show_names_the_file_it_read(tmp_path):
    config = tmp_path / ".config" / "yarp" / "config.toml"
    done = run_yarp("config", "show", home=tmp_path)
    first = done.stdout.decode().splitlines()[0]
    assert first == f"# configuration file: {config} does not exist; these are the defaults"
    config.parent.mkdir(parents=True)
    config.write_text("version = 1\n[output]\ncap_bytes = 2048\n")
    lines = run_yarp("config", "show", home=tmp_path).stdout.decode().splitlines()
    assert lines[0] == f"# configuration file: {config}" and "output.cap_bytes = 2048" in lines
    other = tmp_path / "other.toml"
    env = {**yarp_env(tmp_path), "YARP_CONFIG": str(other)}
    done = subprocess.run([sys.executable, "-m", "yarp", "config", "show"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.splitlines()[0] == (f"# configuration file: {other} (named by $YARP_CONFIG) does not exist; "
                                           "these are the defaults")
    # --json stays the reference's object: nothing but its keys.
    assert run_yarp("config", "show", "--json", home=tmp_path).stdout.startswith(b'{"version":1,')


def test_stats_adds_the_files_up(tmp_path):
    import json

    from archive_factory import ArchiveFactory

    path = tmp_path / "data" / "tool-calls.sqlite3"
    factory = ArchiveFactory(path)  # held open: the -wal and -shm files exist, as under a live broker
    try:
        factory.shell_call("c", b"out\n" * 1000)
        lines = run_yarp("archive", "stats", "--archive", str(path), home=tmp_path).stdout.decode().splitlines()
        values = json.loads(run_yarp("archive", "stats", "--json", "--archive", str(path), home=tmp_path).stdout)
        sizes = [os.path.getsize(f"{path}{suffix}") for suffix in ("", "-wal", "-shm")]
    finally:
        factory.close()
    assert sizes[1] > 0 and values["wal_bytes"] == sizes[1]
    assert values["total_file_bytes"] == values["database_bytes"] + values["wal_bytes"] + values["shm_bytes"]
    shm = lines.index(f"shm_bytes: {values['shm_bytes']}")
    assert lines[shm + 1] == f"total_file_bytes: {values['total_file_bytes']}"
    assert list(values).index("total_file_bytes") == list(values).index("shm_bytes") + 1


@pytest.mark.slow
def test_demo_into_a_pipe_is_plain_text_and_leaves_nothing_behind(tmp_path):
    import shutil
    import tempfile

    temp = tempfile.mkdtemp(prefix="yd", dir="/tmp")  # short, as a socket path under it needs
    try:
        env = {**yarp_env(tmp_path), "TMPDIR": temp, "TERM": "xterm"}
        done = subprocess.run([sys.executable, str(Path(__file__).resolve().parent.parent / "examples" / "demo.py")],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "\n$ yarp archive verify\n" in done.stdout and "archive: ok" in done.stdout
        assert "\x1b" not in done.stdout  # no bold headings in a pipe (TERM says a terminal could show them)
        assert os.listdir(temp) == []  # no runtime directory, spool or demo directory left behind
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def test_a_file_at_the_socket_path_is_named_with_its_path(tmp_path, short_runtime):
    from yarp.runtime import runtime_paths

    archive = _private(tmp_path / "data") / "a.sqlite3"
    socket_path = runtime_paths(str(archive), {"XDG_RUNTIME_DIR": str(short_runtime)}).socket
    Path(socket_path).write_bytes(b"")
    os.chmod(socket_path, 0o600)
    env = {**yarp_env(tmp_path), "XDG_RUNTIME_DIR": str(short_runtime)}
    done = subprocess.run([sys.executable, "-m", "yarp", "run", "--archive", str(archive), "--", "echo", "hi"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "hi\n")  # the command's output and status, raw
    assert done.stderr == f"yarp: archive failed after command execution: broker socket {socket_path} is not a socket\n"
    done = subprocess.run([sys.executable, "-m", "yarp", "archive", "broker", "status", "--archive", str(archive)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 74 and done.stderr == f"yarp: broker socket {socket_path} is not a socket\n"
