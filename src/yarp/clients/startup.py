"""Starting the broker when no broker answers: the lock protocol of the specification.

A client that finds no broker takes the startup lock and looks again (another
client may have started one meanwhile); waits while a broker that is still
draining holds the lifetime lock; removes a stale socket only when no process
holds that lock; then starts the same YARP binary as `archive broker` in its
own session (stdio on /dev/null, so it outlives the client and its terminal)
and waits at most `BROKER_START_TIMEOUT_S` for its ready signal. Liveness is
judged by the handshake and the lifetime lock, never by a pidfile. A broker
that answers as another YARP version is asked to drain and exit first, with
the startup lock held (`yarp.clients.handover`).

A permanent error in the runtime directory (read-only, not ours, the wrong
type) is reported at once, naming the path and the cause
(`RuntimeDirUnusable`), and a broker that owns the archive but does not
answer is named by its pid and socket (`BrokerUnresponsive`).

Only a client that starts a broker imports this module (and `fcntl`,
`select`, `subprocess`): a tool call that finds its broker running never pays
for it.
"""

from __future__ import annotations

import os
import sys
import time

from yarp.clients import handover
from yarp.errors import BrokerUnavailable, BrokerUnresponsive, BrokerVersionMismatch, from_code
from yarp.limits import BROKER_START_TIMEOUT_S
from yarp.paths import ArchiveLocation
from yarp.runtime import (
    READY_FD_ENV,
    STARTUP_FD_ENV,
    open_lock_file,
    remove_stale_socket,
    runtime_paths,
    silent_broker,
    try_lock,
    unusable,
)


def broker_command(location: ArchiveLocation) -> list[str]:
    """The same YARP binary, as `archive broker`, for this archive."""
    return [sys.executable, "-m", "yarp", "archive", "broker", "--archive", location.path]


def connect_or_start(client, deadline: float) -> None:
    """Connect `client` (a `BrokerClient`) to its archive's broker, starting one if none answers.

    A broker of another YARP version is asked to drain and exit first
    (`yarp.clients.handover`), under the startup lock, so two clients that
    meet it at once replace it once. Raises `BrokerUnavailable` when none can
    be reached or started before `deadline`.
    """
    started = time.monotonic()
    try:
        # The runtime directory may have been removed since the client resolved
        # it (a cleaned /tmp, a finished session): check or recreate it first.
        client.paths = runtime_paths(client.location.path, client.environ)
        lock_fd = open_lock_file(client.paths.startup_lock)
    except OSError as exc:
        # Read-only, not ours, the wrong type: permanent, so reported at once (`unusable`), never retried.
        raise unusable(exc, f"the broker startup lock {client.paths.startup_lock}") from None
    try:
        while not try_lock(lock_fd):
            # Another client is starting a broker or replacing one of another
            # version, or the broker is stopping at idle: look again.
            if _answers(client, deadline) is True:
                return
            if time.monotonic() >= deadline:
                raise BrokerUnavailable("timed out waiting for the broker startup lock")
            time.sleep(0.005)
        other = _answers(client, deadline)
        if other is True:
            return
        if other is not None and not handover.ask_to_exit(other.pid):
            other.pid = None  # not ours to signal: wait below for it to exit by itself
        # A broker that is draining (at idle, or because we asked) holds the lifetime lock: let it finish.
        if not handover.wait_released(client.paths.lifetime_lock, deadline):
            if other is not None:
                raise BrokerUnavailable(_still_running(other))
            raise BrokerUnresponsive(silent_broker(client.paths, deadline - started))
        if other is not None:
            client.replaced = other
        try:
            remove_stale_socket(client.paths)
        except OSError as exc:
            raise unusable(exc, f"the stale broker socket {client.paths.socket}") from None
        _start_broker(client, lock_fd, min(deadline, time.monotonic() + BROKER_START_TIMEOUT_S))
        if not client.try_connect(deadline):
            raise BrokerUnavailable("the broker started but did not answer")
    finally:
        os.close(lock_fd)


def _answers(client, deadline: float):
    """True when a broker of this version answers (the client is connected), the
    `BrokerVersionMismatch` when one of another version does, None when none does."""
    try:
        return True if client.try_connect(deadline) else None
    except BrokerVersionMismatch as exc:
        return exc


def _still_running(other: BrokerVersionMismatch) -> str:
    pid = f" (pid {other.pid})" if other.pid else ""
    if other.pid:
        return (f"the broker of yarp {other.broker_version}{pid} was asked to exit and still owns the archive; "
                "it is finishing its work: try again, or see `yarp archive broker status`")
    return (f"a broker of yarp {other.broker_version}, another version, serves this archive and is not a "
            "process this user may stop; wait for its idle exit or stop it with that version's "
            "`yarp archive broker stop`")


def _start_broker(client, lock_fd: int, deadline: float) -> None:
    """Spawn the broker with our startup lock and a ready pipe; wait for its `ready` line."""
    import fcntl
    import select
    import subprocess

    read_fd, write_fd = os.pipe()
    env = dict(client.environ)
    env[STARTUP_FD_ENV] = str(lock_fd)
    env[READY_FD_ENV] = str(write_fd)
    flags = fcntl.fcntl(lock_fd, fcntl.F_GETFD)
    try:
        proc = subprocess.Popen(
            broker_command(client.location),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(lock_fd, write_fd),
            start_new_session=True,
            env=env,
        )
    except OSError as exc:
        raise BrokerUnavailable(f"cannot start the broker: {exc.strerror}") from None
    finally:
        os.close(write_fd)
        fcntl.fcntl(lock_fd, fcntl.F_SETFD, flags)
    try:
        message = b""
        while not message.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BrokerUnavailable("the broker did not become ready within 5 s")
            ready, _, _ = select.select([read_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(read_fd, 4096)
            if not chunk:
                if proc.poll() is not None:
                    from yarp.fault_log import client_hint

                    raise BrokerUnavailable("the broker exited during start-up; " + client_hint(client.environ))
                raise BrokerUnavailable("the broker closed its ready pipe without a signal")
            message += chunk
    finally:
        os.close(read_fd)
    text = message.decode("utf-8", "replace").strip()
    if text != "ready":
        _, _, rest = text.partition(" ")
        code, _, detail = rest.partition(" ")
        raise from_code(code, detail or "the broker failed to start")
