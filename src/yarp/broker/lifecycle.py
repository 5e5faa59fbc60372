"""The broker process's life: locks, socket, ready pipe, serving, idle exit, shutdown.

Start (the startup lock held, handed over by the client that started us or
taken here): take the lifetime lock, open (creating or migrating) the
archive, bind the socket 0600, start the writer thread, signal `ready` on the
readiness pipe, release the startup lock. Idle — no clients, nothing
admitted, nothing queued, no open transaction — for `YARP_BROKER_IDLE_MS`:
take the startup lock, stop accepting, remove our own socket (same inode
only), drain admitted work, stop the writer (its sentinel), checkpoint the WAL
(`TRUNCATE`), close the archive, start the refresh of a large archive's read
summaries (`refresh`) and exit. SIGTERM and SIGINT run the same
shutdown, and so does the writer finding that the archive file was removed or
replaced under it (`archive_replaced`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time

from yarp import private_files
from yarp.archive.store import ArchiveStore
from yarp.broker import refresh
from yarp.broker.connection import ClientConnection
from yarp.broker.server import Broker
from yarp.broker.writer import Writer
from yarp.errors import BrokerError, ShuttingDown, UsageError, ValidationError, YarpError
from yarp.limits import BROKER_IDLE_MS, INLINE_PREPARE_BYTES
from yarp.paths import ArchiveLocation
from yarp.runtime import (
    READY_FD_ENV,
    STARTUP_FD_ENV,
    check_socket_entry,
    open_lock_file,
    runtime_paths,
    try_lock,
    write_owner,
)

IDLE_ENV = "YARP_BROKER_IDLE_MS"
POOL_ENV = "YARP_BROKER_POOL"
#: Measurement knob: frames up to this many bytes are prepared on the event loop.
INLINE_ENV = "YARP_BROKER_INLINE_BYTES"


class Lifecycle:
    """The broker's start, idle exit and shutdown: its locks, listening socket and the idle timer."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        broker.lifecycle = self
        self._idle_handle: asyncio.TimerHandle | None = None
        self._stopped: asyncio.Future | None = None
        self._server: asyncio.AbstractServer | None = None
        self._socket_inode: tuple[int, int] | None = None
        self._lifetime_fd: int | None = None
        self._startup_fd_at_exit: int | None = None
        self._refresher = refresher_from_env(broker)

    # start ----------------------------------------------------------------------------

    def open(self) -> socket.socket:
        """Take the lifetime lock, open the archive, bind the socket (startup lock held)."""
        broker = self.broker
        self._lifetime_fd = open_lock_file(broker.paths.lifetime_lock)
        if not try_lock(self._lifetime_fd):
            raise BrokerError("another broker already owns this archive")
        write_owner(self._lifetime_fd)
        broker.store = ArchiveStore.open(broker.location)
        path = broker.paths.socket
        if check_socket_entry(path):
            # We hold the lifetime lock, so whatever is there is a stale leftover.
            os.unlink(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(path)
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        st = os.lstat(path)
        self._socket_inode = (st.st_dev, st.st_ino)
        sock.listen(512)
        sock.setblocking(False)
        return sock

    async def serve(self, sock: socket.socket, on_ready=None) -> None:
        """Serve clients on the bound socket until shutdown completes.

        Starts the preparation pool and the writer, routes SIGTERM and SIGINT to `shutdown`, calls `on_ready` once
        accepting, and arms the idle timer.
        """
        broker = self.broker
        loop = broker.loop = asyncio.get_running_loop()
        self._stopped = loop.create_future()
        broker.make_pool()
        broker.writer = Writer(broker, broker.store)
        broker.writer.start()
        self._server = await loop.create_unix_server(lambda: ClientConnection(broker), sock=sock)
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, lambda: asyncio.ensure_future(self.shutdown("signal")))
        broker.log("ready", pid=os.getpid(), pool=broker.pool_kind, idle_ms=broker.idle_ms)
        if on_ready is not None:
            on_ready()
        self._refresher.started_serving()
        self.maybe_idle()
        await self._stopped

    # idle -------------------------------------------------------------------------------

    def busy(self) -> None:
        """Cancel the idle timer: a client connected or work arrived."""
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None

    def maybe_idle(self) -> None:
        """Arm the idle timer if the broker is idle now; nothing while it is closing."""
        broker = self.broker
        if broker.closing or broker.loop is None:
            return
        self.busy()
        if broker.is_idle():
            self._refresher.served(broker.stats.requests)
            self._idle_handle = broker.loop.call_later(broker.idle_ms / 1000, self._idle_fire)

    def _idle_fire(self) -> None:
        broker = self.broker
        self._idle_handle = None
        if not broker.is_idle() or broker.closing:
            return
        if not self._socket_is_ours():
            # The socket path no longer leads here (the runtime directory was
            # removed, as at logout, or the socket replaced): no client can
            # reach this broker again, and it has nothing admitted, so it stops.
            asyncio.ensure_future(self.shutdown("unreachable"))
            return
        try:
            fd = open_lock_file(broker.paths.startup_lock)
        except (OSError, YarpError) as exc:
            # The runtime directory was tampered with: keep serving, and make
            # the reason visible instead of dying inside a timer callback.
            broker.log("idle_exit_deferred", error=type(exc).__name__)
            self._idle_handle = broker.loop.call_later(broker.idle_ms / 1000, self._idle_fire)
            return
        if not try_lock(fd):
            # A client is starting up (it will find us, or will wait for us): retry soon.
            os.close(fd)
            self._idle_handle = broker.loop.call_later(0.05, self._idle_fire)
            return
        self._startup_fd_at_exit = fd  # released when the process exits
        asyncio.ensure_future(self.shutdown("idle"))

    def archive_replaced(self) -> None:
        """The writer found the archive file removed or replaced: stop, so that the next client
        starts a broker on the file at the archive path (creating it, as first use does)."""
        asyncio.ensure_future(self.shutdown("archive_replaced"))

    # stop ---------------------------------------------------------------------------------

    async def shutdown(self, reason: str) -> None:
        """Stop accepting, remove the socket, drain admitted work, checkpoint, close."""
        broker = self.broker
        if broker.closing:
            return
        broker.closing = True
        self.busy()
        broker.log("shutdown", reason=reason)
        if self._server is not None:
            self._server.close()
        self._remove_socket()
        for client in list(broker.clients):
            if client.admitted is None:
                client.fail(ShuttingDown("broker is shutting down; start a new one"))
        writer = broker.writer
        if writer is not None:
            writer.maintenance.stopping = True  # a running prune stops between two steps and says so
        while broker.admission.count or (writer is not None and (writer.in_transaction or writer.queued)):
            await asyncio.sleep(0.002)
        loop = broker.loop
        if broker.services is not None:
            broker.services.close()
        if writer is not None:
            await loop.run_in_executor(None, writer.stop)
        store = broker.store
        if store is not None:
            await loop.run_in_executor(None, self._checkpoint_and_close, store)
        if broker._pool is not None:
            broker._pool.shutdown(wait=False, cancel_futures=True)
        if self._lifetime_fd is not None:
            os.close(self._lifetime_fd)
            self._lifetime_fd = None
        if reason == "idle":
            self._refresher.exiting(broker.stats.requests)
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)

    def _checkpoint_and_close(self, store: ArchiveStore) -> None:
        stats = self.broker.stats
        try:
            busy, log_frames, done = store.wal_checkpoint("TRUNCATE")
            if busy or log_frames != done:
                # A reader kept the WAL in use: the data is durable, but the
                # checkpoint did not happen and must not look clean.
                stats.checkpoint_failures += 1
                self.broker.log_threadsafe("checkpoint_failed", code="busy",
                                           error="a reader blocked the shutdown checkpoint")
            else:
                stats.checkpoints += 1
        except YarpError as exc:
            stats.checkpoint_failures += 1
            self.broker.log_threadsafe("checkpoint_failed", code=exc.code, error=exc.message)
        store.close()

    def _socket_is_ours(self) -> bool:
        """Whether the socket path still names the socket this broker listens on."""
        return private_files.names(self.broker.paths.socket, self._socket_inode)

    def _remove_socket(self) -> None:
        if self._socket_is_ours():
            os.unlink(self.broker.paths.socket)


# --- the environment ---------------------------------------------------------------------


def _int_from_env(environ, name: str, default: int, unit: str, minimum: int, bound: str) -> int:
    """`name` as an integer of at least `minimum`, else `default` when unset; `ValidationError` otherwise."""
    raw = environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(f"{name} must be an integer number of {unit}") from None
    if value < minimum:
        raise ValidationError(f"{name} must {bound}")
    return value


def idle_ms_from_env(environ=os.environ) -> int:
    """The idle timeout from `YARP_BROKER_IDLE_MS`, else the default.

    Raises `ValidationError` unless a positive integer.
    """
    return _int_from_env(environ, IDLE_ENV, BROKER_IDLE_MS, "milliseconds", 1, "be positive")


def inline_bytes_from_env(environ=os.environ) -> int:
    """The largest frame prepared on the event loop, from `YARP_BROKER_INLINE_BYTES`, else the default.

    Raises `ValidationError` unless a non-negative integer.
    """
    return _int_from_env(environ, INLINE_ENV, INLINE_PREPARE_BYTES, "bytes", 0, "not be negative")


def refresher_from_env(broker: Broker, environ=os.environ) -> refresh.Refresher:
    """The broker's refresher of its archive's read summaries, its thresholds from
    `YARP_BROKER_REFRESH_BYTES` and `YARP_BROKER_REFRESH_REQUESTS`, else the defaults.

    Raises `ValidationError` unless each is a non-negative integer.
    """
    return refresh.Refresher(
        broker.location.path, log=broker.log,
        min_bytes=_int_from_env(environ, refresh.BYTES_ENV, refresh.DEFAULT_BYTES, "bytes", 0, "not be negative"),
        every_requests=_int_from_env(environ, refresh.REQUESTS_ENV, refresh.DEFAULT_REQUESTS, "requests", 0,
                                     "not be negative"))


def pool_kind_from_env(environ=os.environ) -> str:
    """The pool kind from `YARP_BROKER_POOL` (`thread` by default); raises `ValidationError` for any other."""
    kind = environ.get(POOL_ENV) or "thread"
    if kind not in ("thread", "process"):
        raise ValidationError(f"{POOL_ENV} must be 'thread' or 'process'")
    return kind


def _signal_ready(error: YarpError | None) -> None:
    fd_text = os.environ.pop(READY_FD_ENV, None)
    if not fd_text:
        return
    try:
        fd = int(fd_text)
        message = b"ready\n" if error is None else f"error {error.code} {error.message}\n".encode()
        os.write(fd, message)
        os.close(fd)
    except (ValueError, OSError):
        pass


def run(location: ArchiveLocation, *, foreground: bool = False, environ=os.environ) -> int:
    """Run a broker for `location` until it goes idle or is signalled; return an exit status."""
    inherited = environ.get(STARTUP_FD_ENV)
    startup_fd: int | None = None
    try:
        paths = runtime_paths(location.path, environ)
        if inherited:
            startup_fd = int(inherited)
        else:
            startup_fd = open_lock_file(paths.startup_lock)
            deadline = time.monotonic() + 5.0
            while not try_lock(startup_fd):
                if time.monotonic() > deadline:
                    raise BrokerError("timed out waiting for the broker startup lock")
                time.sleep(0.01)
        broker = Broker(location, paths, idle_ms=idle_ms_from_env(environ),
                        pool_kind=pool_kind_from_env(environ), foreground=foreground,
                        inline_bytes=inline_bytes_from_env(environ))
        lifecycle = Lifecycle(broker)
        sock = lifecycle.open()
    except YarpError as exc:
        _signal_ready(exc)
        if startup_fd is not None:
            os.close(startup_fd)
        raise
    except Exception as exc:  # a broken installation or invariant: logged, then answered boundedly
        error = _internal_error(exc, "startup")
        _signal_ready(error)
        if startup_fd is not None:
            os.close(startup_fd)
        raise error from None

    def ready() -> None:
        # Socket bound and serving: other clients may now find us, so the
        # startup lock (our copy of it) can go.
        nonlocal startup_fd
        if startup_fd is not None:
            os.close(startup_fd)
            startup_fd = None
        _signal_ready(None)

    try:
        run_loop(lifecycle.serve(sock, on_ready=ready))
    except YarpError:
        raise
    except Exception as exc:
        raise _internal_error(exc, "serve") from None
    return 0


def _internal_error(exc: Exception, operation: str) -> BrokerError:
    """Log an internal error of the broker's own start or loop, and the bounded error that reports it."""
    from yarp import fault_log

    fault_log.record(exc, operation=operation)
    return BrokerError(f"internal broker error at {operation}; " + fault_log.client_hint())


def run_loop(main) -> None:
    """Run the broker's coroutine on uvloop, or on asyncio's own loop when `YARP_EVENT_LOOP=asyncio`."""
    from yarp._compat import event_loop

    name = event_loop()
    if name == "uvloop":
        import uvloop

        uvloop.run(main)
    elif name == "asyncio":
        import asyncio

        asyncio.run(main)
    else:
        main.close()
        raise UsageError("YARP_EVENT_LOOP must be uvloop or asyncio")
