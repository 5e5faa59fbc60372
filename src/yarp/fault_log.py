"""The broker's fault log: one bounded, payload-free line per internal error.

An internal error (an exception that is not a deliberate `YarpError`) in the
broker or one of its services is answered to the client as "internal broker
error"; the broker runs detached with its standard streams on /dev/null, so
without this log nobody could tell why. Each such error appends one JSON line
to ``$XDG_STATE_HOME/yarp/broker-faults.log`` (else
``~/.local/state/yarp/broker-faults.log``)::

    {"atMs": 1764866400123, "version": "0.1.0", "pid": 4242,
     "error": "FileNotFoundError", "errno": "ENOENT",
     "where": "yarp.view.salience:279 shipped_data", "via": null,
     "operation": "run:capture", "requestBytes": 812}

`where` is the innermost frame inside YARP; `via` the innermost frame of all
when that one is elsewhere (the standard library, a dependency). A line never
holds the exception's message (it can quote paths and values), payloads,
commands, paths taken from requests or source identities: only class names,
an errno name, module names, line numbers, function names, a fixed operation
name and a byte count.

The directory is 0700 and the file 0600, both checked (never followed
through a link); when the file would pass `MAX_FAULT_LOG_BYTES` it is renamed
to ``broker-faults.log.1`` (the one older generation kept) and a new one is
begun. Writing the log never raises: a fault log that cannot be written
must not turn one failure into two.
"""

from __future__ import annotations

import errno as errno_names
import json
import os
import re
import threading
import time
from collections.abc import Mapping

from yarp import private_files
from yarp._version import __version__

LOG_NAME = "broker-faults.log"
#: The log's size bound: past it the file becomes `.1`, replacing the older generation.
MAX_FAULT_LOG_BYTES = 256 * 1024
#: The most of a log `read_last` reads back (the newest records are at its end).
_TAIL_BYTES = 64 * 1024
#: Operation names longer than this are not ours to log.
_MAX_NAME = 64

_lock = threading.Lock()
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,%d}" % _MAX_NAME)
#: `File "PATH", line N, in FUNC` lines of a traceback formatted in a pool process.
_REMOTE_FRAME = re.compile(r'File "([^"\n]+)", line (\d+), in ([A-Za-z0-9_<>.]+)')


def state_dir(environ: Mapping[str, str] = os.environ) -> str:
    """`$XDG_STATE_HOME/yarp` (else `~/.local/state/yarp`)."""
    base = environ.get("XDG_STATE_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "yarp")


def log_path(environ: Mapping[str, str] = os.environ) -> str:
    """The fault log's path for this environment."""
    return os.path.join(state_dir(environ), LOG_NAME)


def shown_path(environ: Mapping[str, str] = os.environ) -> str:
    """The log's path as a user would type it: `~/…` when under the home directory."""
    path = log_path(environ)
    home = environ.get("HOME") or ""
    if home and path.startswith(home.rstrip("/") + "/"):
        return "~/" + path[len(home.rstrip("/")) + 1:]
    return path


def client_hint(environ: Mapping[str, str] = os.environ) -> str:
    """The words a client's error adds so a user knows where to look."""
    return f"details in {shown_path(environ)} (yarp doctor shows the last one)"


def _module_of(frame, filename: str) -> str:
    name = frame.f_globals.get("__name__") if frame is not None else None
    if isinstance(name, str) and _NAME.fullmatch(name):
        return name
    return _module_from_path(filename)


def _module_from_path(filename: str) -> str:
    """A module-like name for a source path, without any directory above the package."""
    parts = filename.replace("\\", "/").split("/")
    for anchor in ("yarp", "agent_workflow"):
        if anchor in parts:
            tail = parts[len(parts) - 1 - parts[::-1].index(anchor):]
            return ".".join(tail)[: -len(".py")] if tail[-1].endswith(".py") else ".".join(tail)
    return os.path.basename(filename).removesuffix(".py")


def _is_ours(module: str) -> bool:
    return module == "yarp" or module.startswith(("yarp.", "agent_workflow"))


def _place(module: str, line: int, function: str) -> str:
    return f"{module}:{line} {function}"[:160]


def frames_of(exc: BaseException) -> tuple[str | None, str | None]:
    """(`where`, `via`): the innermost frame inside YARP, and the innermost of all when that is elsewhere.

    A failure in a pool process arrives with its traceback as text (the
    executor's `_RemoteTraceback` cause); its `File … line … in …` lines are read
    for the same two places.
    """
    places: list[tuple[str, int, str]] = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        places.append((_module_of(tb.tb_frame, code.co_filename), tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    cause = exc.__cause__
    if cause is not None and type(cause).__name__ == "_RemoteTraceback":
        for path, line, function in _REMOTE_FRAME.findall(str(cause)):
            places.append((_module_from_path(path), int(line), function))
    if not places:
        return None, None
    ours = [place for place in places if _is_ours(place[0])]
    where = _place(*ours[-1]) if ours else None
    innermost = _place(*places[-1])
    return where, (innermost if innermost != where else None)


def _name(value: object) -> str | None:
    """`value` when it is a short plain name (an operation kind), else None."""
    return value if isinstance(value, str) and _NAME.fullmatch(value) else None


def make_record(exc: BaseException, operation: str | None, request_bytes: int | None) -> dict:
    """The one line logged for `exc`: names, numbers and places only, never its message."""
    where, via = frames_of(exc)
    code = getattr(exc, "errno", None)
    return {
        "atMs": int(time.time() * 1000),
        "version": __version__,
        "pid": os.getpid(),
        "error": type(exc).__qualname__[:_MAX_NAME],
        "errno": errno_names.errorcode.get(code) if isinstance(code, int) else None,
        "where": where,
        "via": via,
        "operation": _name(operation),
        "requestBytes": request_bytes if isinstance(request_bytes, int) and request_bytes >= 0 else None,
    }


def record(exc: BaseException, *, operation: str | None = None, request_bytes: int | None = None,
           environ: Mapping[str, str] = os.environ) -> bool:
    """Append one record for `exc`; whether it was written. Safe from any thread; never raises."""
    try:
        line = (json.dumps(make_record(exc, operation, request_bytes), separators=(",", ":")) + "\n").encode()
        with _lock:
            _append(log_path(environ), line)
        return True
    except Exception:  # noqa: BLE001 - the log must never add a failure of its own
        return False


def _append(path: str, line: bytes) -> None:
    """Append `line`, rotating first when the file would pass the bound.

    Several brokers (one per archive) share the log: the rotation happens under
    an exclusive lock on the file, and a writer that waited for the lock while
    another rotated it opens the new file instead of renaming it again.
    """
    import fcntl

    private_files.ensure_private_directory(os.path.dirname(path), create=True, narrow=False)
    fd = _open_append(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        while not private_files.names(path, _identity(fd)):  # rotated while we waited for the lock
            os.close(fd)
            fd = -1
            fd = _open_append(path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_size + len(line) > MAX_FAULT_LOG_BYTES:
            os.replace(path, path + ".1")
            os.close(fd)  # releases the lock on the rotated file
            fd = -1
            fd = _open_append(path)
        private_files.write_all(fd, line)
    finally:
        if fd >= 0:
            os.close(fd)


def _identity(fd: int) -> tuple[int, int]:
    held = os.fstat(fd)
    return held.st_dev, held.st_ino


def _open_append(path: str) -> int:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                     private_files.FILE_MODE)
    except OSError as exc:
        if exc.errno == private_files.ELOOP:
            raise private_files.PrivatePathProblem("is a symbolic link") from None
        raise
    problem = private_files.problem_of(os.fstat(fd), directory=False)
    if problem is not None:
        os.close(fd)
        raise private_files.PrivatePathProblem(problem)
    return fd


def read_last(environ: Mapping[str, str] = os.environ) -> dict | None:
    """The newest record of the log, or None when there is none (or the log is not ours to read).

    Raises `PrivatePathProblem` when the log or its directory is unsafe, so a
    caller can say so.
    """
    for path in (log_path(environ), log_path(environ) + ".1"):
        try:
            fd, st = private_files.open_for_reading(path, private=True)
        except FileNotFoundError:
            continue
        try:
            os.lseek(fd, max(0, st.st_size - _TAIL_BYTES), os.SEEK_SET)
            tail = private_files.read_bounded(fd, _TAIL_BYTES)
        finally:
            os.close(fd)
        for raw in reversed(tail.splitlines()):
            try:
                found = json.loads(raw)
            except ValueError:
                continue
            if isinstance(found, dict) and isinstance(found.get("atMs"), int):
                return found
    return None


def describe(found: Mapping) -> str:
    """One line for a record: when, what, where and during which operation."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(found["atMs"] / 1000))
    parts = [f"{when}: {found.get('error')}"]
    if found.get("errno"):
        parts.append(f"({found['errno']})")
    if found.get("where"):
        parts.append(f"at {found['where']}")
    if found.get("via"):
        parts.append(f"via {found['via']}")
    if found.get("operation"):
        parts.append(f"during {found['operation']}")
    if found.get("version"):
        parts.append(f"[yarp {found['version']}]")
    return " ".join(str(part) for part in parts)

