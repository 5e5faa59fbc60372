"""Fixtures of the installed-wheel smoke suite: the installed `yarp`, and a private home to run it in.

Run by `tests/installed/run.py` under the fresh venv's interpreter, from a
directory outside the checkout. `installed` proves, before any test, that
`yarp` and the `yarp` module both come from that venv and not from the
checkout; every test then drives the installed `yarp` command as a user's
shell would (`World.yarp`), with HOME, XDG directories, the runtime directory
and TMPDIR private to it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("YARP_TEST_SOURCE") or Path(__file__).resolve().parents[2])
VENV = Path(os.environ.get("YARP_TEST_VENV") or sys.prefix)
DIST = Path(os.environ["YARP_TEST_DIST"]) if os.environ.get("YARP_TEST_DIST") else None
# The checkout's test helpers that import nothing of yarp (scripted model servers, the namespace).
sys.path.insert(0, str(SOURCE / "tests"))


@pytest.fixture(scope="session", autouse=True)
def installed() -> Path:
    """The installed `yarp` console script, after proving it and its package are the venv's, not the tree's."""
    import yarp

    package = Path(yarp.__file__).resolve()
    assert VENV.resolve() in package.parents, f"yarp imported from {package}, not from the venv {VENV}"
    assert SOURCE.resolve() not in package.parents, "yarp imported from the checkout"
    assert not os.environ.get("PYTHONPATH")
    script = VENV / "bin" / "yarp"
    assert shutil.which("yarp") == str(script), "the yarp on PATH is not the installed one"
    assert SOURCE.resolve() not in Path.cwd().resolve().parents and Path.cwd().resolve() != SOURCE.resolve()
    return script


@dataclass
class World:
    """A private home for one test: its environment, working directory and archive."""

    root: Path
    env: dict[str, str]
    work: Path

    @property
    def home(self) -> Path:
        return Path(self.env["HOME"])

    @property
    def archive(self) -> Path:
        return self.home / ".local" / "share" / "yarp" / "tool-calls.sqlite3"

    def yarp(self, *argv: str, input: bytes | None = None, timeout: float = 120,
             check: bool = True) -> subprocess.CompletedProcess:
        """Run the installed `yarp ARGV` (bytes in and out); by default it must exit 0."""
        result = subprocess.run(["yarp", *argv], env=self.env, cwd=self.work, input=input, capture_output=True,
                                timeout=timeout)
        if check:
            assert result.returncode == 0, (argv, result.returncode, result.stderr.decode()[-2000:])
        return result

    def yarp_json(self, *argv: str):
        return json.loads(self.yarp(*argv).stdout)

    def shell(self, command: str, input: bytes | None = None) -> subprocess.CompletedProcess:
        """A command as an agent's shell tool runs it: `sh -c`, output kept apart."""
        return subprocess.run(["sh", "-c", command], env=self.env, cwd=self.work, input=input,
                              capture_output=True, timeout=120)


def broker_pids(runtime: Path) -> list[int]:
    """Brokers whose command line names this world's archive (found through /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"broker" in argv and str(runtime).encode() in environ:
            found.append(int(entry.name))
    return found


@pytest.fixture
def world(tmp_path) -> World:
    # The broker socket path must stay under 104 bytes: a short runtime directory under /tmp.
    root = Path(tempfile.mkdtemp(prefix="yw"))
    home, runtime, work, tmp = root / "h", root / "r", tmp_path / "work", root / "t"
    for path in (home, runtime, work, tmp):
        path.mkdir(mode=0o700, parents=True)
    # A user's terminal: no CI variable either (pytest, for one, prints its summary differently under CI).
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("YARP_", "XDG_", "PI_", "CODEX_", "CLAUDE_")) and key not in ("HOME", "TMPDIR", "CI")}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_STATE_HOME=str(home / ".local" / "state"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_RUNTIME_DIR=str(runtime), TMPDIR=str(tmp), YARP_BROKER_IDLE_MS="400")
    yield World(root, env, work)
    deadline = time.monotonic() + 10
    while list((runtime / "yarp").glob("archive-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in broker_pids(runtime):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(root, ignore_errors=True)
