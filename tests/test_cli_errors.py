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

SRC = str(Path(__file__).resolve().parent.parent / "src")


def _agent_workflow(*args: str, home) -> subprocess.CompletedProcess:
    env = yarp_env(home)
    env["XDG_STATE_HOME"] = str(Path(home) / ".local" / "state")
    return subprocess.run([sys.executable, "-m", "agent_workflow", *args], env=env, capture_output=True,
                          text=True, timeout=60)


# --- one prefix, once -------------------------------------------------------------------------


@pytest.mark.parametrize("args,expected", [
    (("archive", "prune"), "yarp: archive prune: the following arguments are required: --before\n"),
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
    assert done.stderr.decode().startswith("yarp: claud-code is neither an agent (pi, claude-code")
    done = run_yarp("import", "pi", str(tmp_path), "--archive", str(tmp_path / "none" / "a.sqlite3"),
                    home=tmp_path)
    assert done.returncode == 64 and b"archive directory" in done.stderr and b"does not exist" in done.stderr
    assert not (tmp_path / "none").exists()
