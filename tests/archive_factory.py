"""Build real archives for tests, only through `yarp.archive.store.ArchiveStore`.

Every row a test reads was written by the one writer, so tests exercise the
real schema, payload encoding and lifecycle rules. Typical use::

    from archive_factory import ArchiveFactory

    with ArchiveFactory(tmp_path / "db" / "tool-calls.sqlite3") as factory:
        ref = factory.shell_call("c1", stdout=b"line 1\\nerror here\\n", stderr=b"warn\\n")
        ref2 = factory.tool_call("c2", result_text="exact text", completeness="incomplete")
        ref3 = factory.begin("c3")            # left incomplete (status 'started')
    # leaving the block closes the writer (WAL checkpointed, -wal/-shm removed)

`archive_dir` is created 0700 (the spec's private directory). Stream bytes are
spooled to private 0600 files in a sibling directory, as the runner does.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path

from yarp.wire import operations as ops
from yarp.paths import resolve_archive
from yarp.archive.store import ArchiveStore

SESSION = ops.Session(agent="pi", account="tester", source_session_id="session-1", started_at_ms=1_700_000_000_000)
#: Default start time of calls; each call advances one second so ordering is stable.
BASE_MS = 1_700_000_000_000


class ArchiveFactory:
    """One writable archive plus helpers that record whole calls."""

    def __init__(self, path: os.PathLike | str, session: ops.Session = SESSION) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        self.spool = self.path.parent.parent / (self.path.parent.name + "-spool")
        self.spool.mkdir(mode=0o700, exist_ok=True)
        self.session = session
        self.store = ArchiveStore.open(resolve_archive(str(self.path), {}))
        self._clock = itertools.count(BASE_MS, 1000)

    def __enter__(self) -> ArchiveFactory:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    # --- building blocks ------------------------------------------------------

    def begin(self, call_id: str, *, tool: str = "bash", requires_streams: bool = False,
              input_before: object = None, input_after: object = None, started_at_ms: int | None = None) -> str:
        """Begin a call and return its archive_ref (the call stays 'started')."""
        started = next(self._clock) if started_at_ms is None else started_at_ms
        before = {"command": f"echo {call_id}"} if input_before is None else input_before
        after = before if input_after is None else input_after
        meta = ops.CallMeta(source_call_id=call_id, tool_name=tool, started_at_ms=started,
                            requires_streams=requires_streams, provider="prov", model="model-1",
                            working_directory="/work")
        outcome = self.store.apply_operation(ops.BeginCall(self.session, meta, before, after, started))
        return outcome.archive_ref

    def _file(self, data: bytes) -> ops.StreamFile:
        fd, path = tempfile.mkstemp(dir=self.spool, prefix="stream-")  # created 0600, like the runner's spool
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return ops.StreamFile(str(path))

    def streams(self, call_id: str, stdout: bytes, stderr: bytes,
                stdout_after: bytes | None = None, stderr_after: bytes | None = None) -> None:
        files = [self._file(b) for b in (stdout, stderr,
                                         stdout if stdout_after is None else stdout_after,
                                         stderr if stderr_after is None else stderr_after)]
        self.store.apply_operation(ops.CaptureStreams(self.session, call_id, next(self._clock), *files))

    def result_before(self, call_id: str, result: object, full_output: bytes | None = None) -> None:
        source = self._file(full_output) if full_output is not None else None
        self.store.apply_operation(ops.ResultBefore(self.session, call_id, result, next(self._clock), source))

    def result_text(self, call_id: str, text: str, completeness: str = "complete") -> None:
        self.store.apply_operation(ops.ResultText(self.session, call_id, text, completeness, next(self._clock)))

    def finish(self, call_id: str, result: object, *, is_error: bool = False, executed: bool = True) -> None:
        self.store.apply_operation(ops.FinishCall(self.session, call_id, result, is_error, executed,
                                                  next(self._clock)))

    # --- whole calls --------------------------------------------------------------

    def shell_call(self, call_id: str, stdout: bytes, stderr: bytes = b"", *, is_error: bool = False,
                   stdout_after: bytes | None = None, tool: str = "bash") -> str:
        """A wrapped shell call: streams, result/before, finished executed."""
        ref = self.begin(call_id, tool=tool, requires_streams=True)
        self.streams(call_id, stdout, stderr, stdout_after=stdout_after)
        self.result_before(call_id, {"exitCode": 1 if is_error else 0})
        self.finish(call_id, {"exitCode": 1 if is_error else 0, "pruned": True}, is_error=is_error)
        return ref

    def tool_call(self, call_id: str, *, tool: str = "read", result_text: str | None = None,
                  completeness: str = "complete", full_output: bytes | None = None,
                  result: object = None, is_error: bool = False) -> str:
        """A finished non-shell call with optional result_text and source_output."""
        ref = self.begin(call_id, tool=tool, input_before={"path": f"/src/{call_id}.py"})
        body = {"content": [{"type": "text", "text": "ok"}]} if result is None else result
        self.result_before(call_id, body, full_output)
        if result_text is not None:
            self.result_text(call_id, result_text, completeness)
        self.finish(call_id, body, is_error=is_error)
        return ref

    def preflight_failure(self, call_id: str) -> str:
        """A call that finished without executing (no result/before)."""
        ref = self.begin(call_id, tool="bash", requires_streams=True)
        self.finish(call_id, {"error": "blocked"}, is_error=True, executed=False)
        return ref


def build_sample(path: os.PathLike | str) -> dict[str, str]:
    """A small archive holding one call of every kind; returns name -> archive_ref."""
    with ArchiveFactory(path) as f:
        refs = {
            "shell": f.shell_call("shell-1", b"compiling\nerror: bad thing\nline 3\n", b"warning: w\n",
                                  stdout_after=b"error: bad thing\n", is_error=True),
            "text": f.tool_call("read-1", result_text="alpha\nbeta\ngamma\n", completeness="incomplete",
                                full_output=b"full alpha\nfull beta\n"),
            "plain": f.tool_call("read-2"),
            "preflight": f.preflight_failure("shell-2"),
            "incomplete": f.begin("shell-3", requires_streams=True),
        }
    return refs


#: Switches a test run sets for every process it starts (`make test-twin`); isolated
#: environments drop every other YARP_ variable but keep these.
RUN_SWITCHES = ("YARP_NO_EXTENSIONS", "YARP_EVENT_LOOP")


def run_switches() -> dict[str, str]:
    """The test run's own implementation switches, for a child environment built from scratch."""
    return {name: os.environ[name] for name in RUN_SWITCHES if name in os.environ}


def yarp_env(home: os.PathLike | str) -> dict[str, str]:
    """An environment for a `python -m yarp` child isolated under `home`."""
    home = Path(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YARP_", "XDG_"))}
    src = str(Path(__file__).resolve().parent.parent / "src")
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local" / "share"),
               PYTHONPATH=src + os.pathsep + env.get("PYTHONPATH", ""), **run_switches())
    return env


def run_yarp(*args: str, home: os.PathLike | str, input: bytes | None = None, **kwargs):
    """Run `python -m yarp ARGS` as a real child process; returns CompletedProcess (bytes)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "yarp", *args], env=yarp_env(home), input=input,
                          capture_output=True, timeout=60, **kwargs)
