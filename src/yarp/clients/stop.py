"""`yarp archive broker stop`: ask the archive's broker, of any YARP version, to drain and exit.

With the startup lock held (so no client starts or replaces a broker
meanwhile, and the broker's own idle exit waits), find the broker on the
archive's socket: this version's answers its status first; another
version's is known by its handshake (`BrokerVersionMismatch`: its version
and pid). Then SIGTERM to that verified process (`yarp.clients.handover`),
and wait until it has released the archive's lifetime lock: it has answered
what it had not admitted, finished and acknowledged what it had, checkpointed
the WAL and closed the archive. The next client starts a new broker.
"""

from __future__ import annotations

import os
import time

from yarp._record import Record
from yarp._version import __version__
from yarp.clients import handover
from yarp.clients.broker import BrokerClient
from yarp.errors import BrokerUnavailable, BrokerVersionMismatch
from yarp.runtime import open_lock_file, try_lock

#: How long `stop` waits, in all, for the startup lock and for the broker to drain: admitted
#: requests have deadlines of at most 30 s, and the checkpoint follows them.
STOP_TIMEOUT_S = 40.0


class Stopped(Record):
    """A broker that was asked to exit and has released the archive.

    `status` is what it answered just before (this version's broker), or None
    for a broker of another version, which answers only its handshake.
    """

    __slots__ = ("pid", "version", "status", "waited_ms")
    pid: int
    version: str
    status: dict | None
    waited_ms: int


def stop_broker(location, environ=os.environ, timeout_s: float = STOP_TIMEOUT_S) -> Stopped | None:
    """Stop the broker of `location`'s archive; None when none is running.

    Raises `BrokerUnavailable` when the process on the socket is not our
    user's YARP broker, or it still owns the archive when the time is up.
    """
    deadline = time.monotonic() + timeout_s
    client = BrokerClient(location, environ)
    lock_fd = open_lock_file(client.paths.startup_lock)
    try:
        while not try_lock(lock_fd):
            if time.monotonic() >= deadline:
                raise BrokerUnavailable("timed out waiting for the broker startup lock")
            time.sleep(0.01)
        found = _find(client, deadline)
        if found is None:
            # Nothing answers; a broker that is still draining holds the lifetime lock.
            if not handover.wait_released(client.paths.lifetime_lock, deadline):
                raise BrokerUnavailable("a broker owns the archive but does not answer on its socket")
            return None
        pid, version, status = found
        if not handover.ask_to_exit(pid):
            raise BrokerUnavailable("the process answering on the broker socket is not a YARP broker of this "
                                    "user; it was not stopped")
        asked = time.monotonic()
        if not handover.wait_released(client.paths.lifetime_lock, deadline):
            raise BrokerUnavailable(f"broker pid {pid} was asked to exit and still owns the archive after "
                                    f"{int(timeout_s)} s")
        return Stopped(pid, version, status, int((time.monotonic() - asked) * 1000))
    finally:
        client.close()
        os.close(lock_fd)


def _find(client: BrokerClient, deadline: float) -> tuple[int | None, str, dict | None] | None:
    """(pid, version, status) of the broker answering on the socket, or None when none answers."""
    try:
        if not client.try_connect(deadline):
            return None
    except BrokerVersionMismatch as exc:
        return exc.pid, exc.broker_version, None
    pid = handover.peer_pid(client.sock)
    try:
        status = client.status(deadline)
    except BrokerUnavailable:
        status = None
    return pid, __version__, status


__all__ = ["STOP_TIMEOUT_S", "Stopped", "stop_broker"]
