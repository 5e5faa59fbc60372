"""Stopping a running broker: the hand-over after an upgrade, and `yarp archive broker stop`.

A client whose handshake meets a broker of another YARP version for its
archive (`BrokerVersionMismatch`) cannot use it, and that broker may never go
idle while such clients keep arriving. So the start-up path, holding the
startup lock, asks it to drain and exit (`ask_to_exit`), waits until it has
released the archive's lifetime lock, and starts this version's broker
(`yarp.clients.startup`). `yarp archive broker stop` does the same for any
broker of the archive.

Which process: the one listening on the archive's socket, as the kernel names
it (`SO_PEERCRED` of our connection gives the process that called `listen`),
and only when it runs as our user, its command line is a YARP broker's
(`… yarp archive broker …`), and it is still that process when signalled: a
pidfd is opened before the command line is read and the signal goes through
it, so a pid reused in between is never signalled. How: SIGTERM, which every
YARP broker, this version's and the ones before it, answers with its clean
shutdown (stop accepting, remove its socket, answer what it has not admitted
`shutting_down`, finish and acknowledge what it has, checkpoint, release the
lifetime lock, exit). Clients meeting that shutdown retry within their
deadline, so nothing is lost.

Only a client that meets another version, or a person stopping a broker,
imports this module.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from yarp.runtime import lock_held_elsewhere

#: `struct ucred`: pid, uid, gid as C ints.
_UCRED_BYTES = 12


def peer_pid(sock) -> int | None:
    """The pid of the process listening at the other end of the connected Unix socket `sock`,
    when the kernel says and it runs as our user; else None."""
    try:
        from _socket import SO_PEERCRED, SOL_SOCKET

        raw = sock.getsockopt(SOL_SOCKET, SO_PEERCRED, _UCRED_BYTES)
    except (ImportError, OSError):
        return None
    pid = int.from_bytes(raw[0:4], sys.byteorder, signed=True)
    uid = int.from_bytes(raw[4:8], sys.byteorder, signed=True)
    return pid if pid > 0 and uid == os.geteuid() else None


def is_broker_command(argv: list[bytes]) -> bool:
    """Whether a command line runs a YARP broker: `yarp` (a script or `-m yarp`), then `archive broker`,
    and not one of its subcommands (`status`, `stop`)."""
    for i, arg in enumerate(argv[:-2]):
        if os.path.basename(arg) == b"yarp" and argv[i + 1:i + 3] == [b"archive", b"broker"]:
            rest = argv[i + 3:]
            return not rest or rest[0] not in (b"status", b"stop")
    return False


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 16)
    except OSError:
        return b""


def _runs_as_us(pid: int) -> bool:
    """Whether every uid of process `pid` (real, effective, saved, filesystem) is ours."""
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith(b"Uid:"):
            return all(int(uid) == os.geteuid() for uid in line.split()[1:])
    return False


def ask_to_exit(pid: int | None) -> bool:
    """Send SIGTERM to broker process `pid` once it is verified to be our user's YARP broker.

    False, with nothing sent, when it is not (or no longer) such a process;
    True when the signal was delivered (the broker drains and exits).
    """
    if not pid or pid == os.getpid():
        return False
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    except (AttributeError, OSError):
        handle = None  # no pidfds here: the checks below, then a plain kill
    try:
        if not _runs_as_us(pid) or not is_broker_command(_read(f"/proc/{pid}/cmdline").split(b"\0")):
            return False
        if handle is not None:
            signal.pidfd_send_signal(handle, signal.SIGTERM)
        else:
            os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    finally:
        if handle is not None:
            os.close(handle)
    return True


def wait_released(lifetime_lock: str, deadline: float) -> bool:
    """Wait until no process holds the archive's lifetime lock (a broker that drained and exited),
    or `deadline` (`time.monotonic()`); whether it was released."""
    while lock_held_elsewhere(lifetime_lock):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def pid_alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie counts as gone)."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return False
    fields = stat.rsplit(b")", 1)[-1].split()
    return bool(fields) and fields[0] not in (b"Z", b"X")


__all__ = ["ask_to_exit", "is_broker_command", "peer_pid", "pid_alive", "wait_released"]
