"""`yarp archive broker`: the on-demand process that owns the archive's only writer.

Shape: a uvloop `asyncio.Protocol` per client whose `data_received` only feeds
the frame splitter; decoded envelopes are routed on the loop; validation,
canonical JSON, hashing, compression and file snapshots run in a worker pool;
one writer coroutine assembles batches and applies them through
`yarp.store.ArchiveStore` on one dedicated thread, so the loop never waits on
fsync. Acknowledgements are sent only after the batch's commit.

Admission: one request per client, at most `MAX_ADMITTED_TOTAL` overall, and
admitted body bytes within `MAX_ADMITTED_BODY_BYTES`; a client whose next frame
cannot be admitted stops being read (`pause_reading`) until room frees up —
nothing is dropped or acknowledged early, and the request's own deadline
stays in force. Each source's sequence is preserved; regressions and
incompatible concurrent use of one source are rejected.

The broker exits after `YARP_BROKER_IDLE_MS` (default 60 s) without clients,
admitted work or an open transaction: it takes the startup lock, stops
accepting, removes its socket, drains, checkpoints and closes.

It never logs payloads, command text or source identities, opens no TCP port
and answers only peers with its own user id.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import os
import signal
import socket
import sqlite3
import struct
import sys
import time
from dataclasses import dataclass, field

import orjson

from . import operations as ops
from . import protocol
from .errors import (
    ArchiveBusy,
    BrokerError,
    DeadlineExceeded,
    FrameError,
    ShuttingDown,
    ValidationError,
    YarpError,
)
from .fastframe import FrameSplitter, encode_frame
from .limits import (
    BATCH_WAIT_MS,
    BROKER_IDLE_MS,
    COMMIT_LATENCY_SAMPLES,
    COMMIT_MARGIN_S,
    INLINE_PREPARE_BYTES,
    MAX_ADMITTED_BODY_BYTES,
    MAX_ADMITTED_TOTAL,
    MAX_BATCH_PAYLOAD_BYTES,
    MAX_BATCH_REQUESTS,
    MAX_CONTROL_FRAME_BYTES,
    MAX_FRAME_BYTES,
    MAX_HANDSHAKE_BYTES,
    MAX_SEQUENCE_CACHE_KEYS,
    SQLITE_BUSY_TIMEOUT_MS,
    WAL_CHECKPOINT_BYTES,
)
from .paths import ArchiveLocation
from .prepare import Prepared, prepare
from .runtime import (
    READY_FD_ENV,
    STARTUP_FD_ENV,
    RuntimePaths,
    check_socket_entry,
    open_lock_file,
    runtime_paths,
    try_lock,
)
from .sqlite import map_error
from .validate import check_operation, parse_envelope
from .store import ArchiveStore

IDLE_ENV = "YARP_BROKER_IDLE_MS"
POOL_ENV = "YARP_BROKER_POOL"
#: Measurement knob: frames up to this many bytes are prepared on the event loop.
INLINE_ENV = "YARP_BROKER_INLINE_BYTES"
_PEERCRED = struct.Struct("3i")


def prepare_request(env: protocol.Envelope) -> Prepared:
    """Validate the envelope's operation, prove its identities, prepare its payloads (pool or loop)."""
    return prepare(check_operation(env))


@dataclass(eq=False)
class Request:
    conn: "ClientProtocol"
    frame_bytes: int
    received: float
    deadline: float = 0.0
    envelope: protocol.Envelope | None = None
    prepared: Prepared | None = None
    done: asyncio.Future = field(default=None)  # type: ignore[assignment]


class Stats:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.requests = 0
        self.failures = 0
        self.batches = 0
        self.retries = 0
        self.commit_ms: collections.deque[float] = collections.deque(maxlen=COMMIT_LATENCY_SAMPLES)
        self.checkpoints = 0
        self.checkpoint_failures = 0

    def commit_percentile(self, q: float) -> float | None:
        if not self.commit_ms:
            return None
        ordered = sorted(self.commit_ms)
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


class ClientProtocol(asyncio.Protocol):
    """One client connection: feeds the splitter, hands whole frames to the broker."""

    def __init__(self, broker: "Broker") -> None:
        self.broker = broker
        self.transport: asyncio.Transport | None = None
        self.splitter = FrameSplitter(MAX_HANDSHAKE_BYTES)
        self.correlation_id: str | None = None
        #: Whole frames read but not yet admitted, with their arrival time: a
        #: request's deadline runs from arrival, not from admission.
        self.pending: collections.deque[tuple[bytes, float]] = collections.deque()
        self.admitted: Request | None = None
        self.paused = False
        self.write_paused = False
        self.closed = False

    # asyncio callbacks ---------------------------------------------------------

    def connection_made(self, transport) -> None:  # type: ignore[override]
        self.transport = transport
        sock = transport.get_extra_info("socket")
        try:
            _pid, uid, _gid = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))
        except (OSError, AttributeError, struct.error):
            uid = -1
        if uid != os.geteuid():
            self.broker.log("peer_rejected", reason="peer uid differs")
            self.closed = True
            transport.abort()
            return
        self.broker.client_connected(self)

    def data_received(self, data: bytes) -> None:
        try:
            frames = self.splitter.feed(data)
        except FrameError as exc:
            self.broker.log("frame_rejected", code=exc.code)
            self.fail_connection(exc)
            return
        arrived = None
        for frame in frames:
            if self.closed:
                return
            if self.correlation_id is None:
                self._handshake(frame)
            else:
                if arrived is None:
                    arrived = self.broker.loop.time()
                self.pending.append((frame, arrived))
        if self.pending:
            self.broker.admit(self)

    def eof_received(self):
        return False

    def connection_lost(self, exc) -> None:
        self.closed = True
        self.pending.clear()
        self.broker.client_disconnected(self)

    # helpers -------------------------------------------------------------------

    def _handshake(self, frame: bytes) -> None:
        broker = self.broker
        try:
            if broker.closing:
                raise ShuttingDown("broker is shutting down; start a new one")
            self.correlation_id = protocol.check_handshake(frame, broker.archive_id)
        except YarpError as exc:
            self.send(protocol.handshake_reply(broker.archive_id, None, exc))
            self.close()
            return
        if self.splitter.buffered:
            self.fail_connection(FrameError("request sent before the handshake reply"))
            return
        self.splitter = FrameSplitter(MAX_FRAME_BYTES)
        self.send(protocol.handshake_reply(broker.archive_id, self.correlation_id))

    def send(self, body: bytes) -> None:
        if not self.closed and self.transport is not None:
            self.transport.write(encode_frame(body))

    def fail_connection(self, error: YarpError) -> None:
        if self.correlation_id is not None:
            self.send(protocol.reply_error(error))
        self.close()

    def close(self) -> None:
        if not self.closed and self.transport is not None:
            self.closed = True
            self.transport.close()

    def pause(self) -> None:
        if not self.paused and not self.closed and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self.paused and not self.closed and not self.write_paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()

    # The transport's write buffer passed its high-water mark: the client is
    # not reading its replies. Stop admitting and reading until it drains.
    def pause_writing(self) -> None:
        self.write_paused = True
        self.pause()

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.closed:
            return
        if self.pending:
            self.broker.admit(self)
        if not self.pending:
            self.resume()


class Broker:
    """The single writer: admission, scheduling, batching and idle shutdown."""

    def __init__(
        self,
        location: ArchiveLocation,
        paths: RuntimePaths,
        *,
        idle_ms: int = BROKER_IDLE_MS,
        pool_kind: str = "thread",
        foreground: bool = False,
        inline_bytes: int = INLINE_PREPARE_BYTES,
    ) -> None:
        self.location = location
        self.paths = paths
        self.archive_id = paths.archive_id
        self.idle_ms = idle_ms
        self.pool_kind = pool_kind
        self.inline_bytes = inline_bytes
        self.foreground = foreground
        self.loop: asyncio.AbstractEventLoop | None = None
        self.store: ArchiveStore | None = None
        self.clients: set[ClientProtocol] = set()
        self.waiting: collections.deque[ClientProtocol] = collections.deque()
        self.admitted_count = 0
        self.admitted_bytes = 0
        self.preparing = 0
        self.ready: collections.deque[Request] = collections.deque()
        self.ready_event: asyncio.Event | None = None
        self.in_flight: dict[str, Request] = {}
        self.sequences: collections.OrderedDict[str, int] = collections.OrderedDict()
        self.in_transaction = False
        #: Requests in the batch being committed (or retried while busy).
        self.batch_requests = 0
        self.closing = False
        self.stats = Stats()
        self._idle_handle: asyncio.TimerHandle | None = None
        self._stopped: asyncio.Future | None = None
        self._server: asyncio.AbstractServer | None = None
        self._socket_inode: tuple[int, int] | None = None
        self._lifetime_fd: int | None = None
        self._pool: concurrent.futures.Executor | None = None
        self._busy_ms = SQLITE_BUSY_TIMEOUT_MS
        self._writer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="yarp-writer")

    # logging -------------------------------------------------------------------

    def log(self, event: str, **fields) -> None:
        if not self.foreground:
            return
        record = {"ts": round(time.time(), 3), "event": event, **fields}
        try:
            sys.stderr.write(orjson.dumps(record).decode() + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass

    # start and stop ----------------------------------------------------------------

    def open(self, startup_fd: int | None) -> socket.socket:
        """Take the lifetime lock, open the archive, bind the socket (startup lock held)."""
        self._lifetime_fd = open_lock_file(self.paths.lifetime_lock)
        if not try_lock(self._lifetime_fd):
            raise BrokerError("another broker already owns this archive")
        self.store = ArchiveStore.open(self.location)
        if check_socket_entry(self.paths.socket):
            # We hold the lifetime lock, so whatever is there is a stale leftover.
            os.unlink(self.paths.socket)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(self.paths.socket)
        finally:
            os.umask(old_umask)
        os.chmod(self.paths.socket, 0o600)
        st = os.lstat(self.paths.socket)
        self._socket_inode = (st.st_dev, st.st_ino)
        sock.listen(512)
        sock.setblocking(False)
        return sock

    def _make_pool(self) -> concurrent.futures.Executor:
        workers = max(2, os.cpu_count() or 2)
        if self.pool_kind == "process":
            import multiprocessing

            return concurrent.futures.ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("forkserver")
            )
        return concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="yarp-prepare")

    async def serve(self, sock: socket.socket, on_ready=None) -> None:
        self.loop = asyncio.get_running_loop()
        self.ready_event = asyncio.Event()
        self._stopped = self.loop.create_future()
        self._pool = self._make_pool()
        self._server = await self.loop.create_unix_server(lambda: ClientProtocol(self), sock=sock)
        for signum in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(signum, lambda: asyncio.ensure_future(self.shutdown("signal")))
        writer = asyncio.ensure_future(self._writer_loop())
        self.log("ready", pid=os.getpid(), pool=self.pool_kind, idle_ms=self.idle_ms)
        if on_ready is not None:
            on_ready()
        self._arm_idle()
        try:
            await self._stopped
        finally:
            writer.cancel()

    async def shutdown(self, reason: str) -> None:
        """Stop accepting, remove the socket, drain admitted work, checkpoint, close."""
        if self.closing:
            return
        self.closing = True
        self.log("shutdown", reason=reason)
        if self._server is not None:
            self._server.close()
        self._remove_socket()
        for client in list(self.clients):
            if client.admitted is None:
                client.fail_connection(ShuttingDown("broker is shutting down; start a new one"))
        while self.admitted_count or self.in_transaction:
            await asyncio.sleep(0.002)
        store = self.store
        if store is not None:
            try:
                busy, log_frames, done = await self.loop.run_in_executor(self._writer, store.wal_checkpoint, "TRUNCATE")
                if busy or log_frames != done:
                    # A reader kept the WAL in use: the data is durable, but the
                    # checkpoint did not happen and must not look clean.
                    self.stats.checkpoint_failures += 1
                    self.log("checkpoint_failed", code="busy", error="a reader blocked the shutdown checkpoint")
                else:
                    self.stats.checkpoints += 1
            except YarpError as exc:
                self.stats.checkpoint_failures += 1
                self.log("checkpoint_failed", code=exc.code, error=exc.message)
            await self.loop.run_in_executor(self._writer, store.close)
        self._writer.shutdown(wait=True)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self._lifetime_fd is not None:
            os.close(self._lifetime_fd)
            self._lifetime_fd = None
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)

    def _remove_socket(self) -> None:
        try:
            st = os.lstat(self.paths.socket)
        except FileNotFoundError:
            return
        if (st.st_dev, st.st_ino) == self._socket_inode:
            os.unlink(self.paths.socket)

    # idle ------------------------------------------------------------------------

    def is_idle(self) -> bool:
        return not self.clients and not self.admitted_count and not self.in_transaction and not self.ready

    def _arm_idle(self) -> None:
        if self.closing or self.loop is None:
            return
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None
        if self.is_idle():
            self._idle_handle = self.loop.call_later(self.idle_ms / 1000, self._idle_fire)

    def _idle_fire(self) -> None:
        self._idle_handle = None
        if not self.is_idle() or self.closing:
            return
        try:
            fd = open_lock_file(self.paths.startup_lock)
        except (OSError, YarpError) as exc:
            # The runtime directory was tampered with: keep serving, and make
            # the reason visible instead of dying inside a timer callback.
            self.log("idle_exit_deferred", error=type(exc).__name__)
            self._idle_handle = self.loop.call_later(self.idle_ms / 1000, self._idle_fire)
            return
        if not try_lock(fd):
            # A client is starting up (it will find us, or will wait for us): retry soon.
            os.close(fd)
            self._idle_handle = self.loop.call_later(0.05, self._idle_fire)
            return
        self._startup_fd_at_exit = fd  # released when the process exits
        asyncio.ensure_future(self.shutdown("idle"))

    # connections --------------------------------------------------------------------

    def client_connected(self, client: ClientProtocol) -> None:
        self.clients.add(client)
        if self._idle_handle is not None:
            self._idle_handle.cancel()
            self._idle_handle = None

    def client_disconnected(self, client: ClientProtocol) -> None:
        self.clients.discard(client)
        try:
            self.waiting.remove(client)
        except ValueError:
            pass
        self._arm_idle()

    # admission ----------------------------------------------------------------------

    def admit(self, client: ClientProtocol) -> None:
        """Admit the client's next frame if the budgets allow; else stop reading it.

        A client whose replies are piling up unread (its transport asked us to
        pause writing) gets nothing admitted or answered until it drains them,
        so an unread reply stream cannot grow the broker's memory.
        """
        while True:
            if client.closed:
                return
            if client.admitted is not None or not client.pending or client.write_paused:
                if client.pending:
                    client.pause()
                return
            frame, arrived = client.pending[0]
            if len(frame) <= MAX_CONTROL_FRAME_BYTES and b'"control"' in frame and self._answer_control(client, frame):
                client.pending.popleft()
                continue
            over_count = self.admitted_count >= MAX_ADMITTED_TOTAL
            over_bytes = self.admitted_bytes and self.admitted_bytes + len(frame) > MAX_ADMITTED_BODY_BYTES
            if over_count or over_bytes or self.closing:
                client.pause()
                if client not in self.waiting:
                    self.waiting.append(client)
                return
            client.pending.popleft()
            request = Request(client, len(frame), arrived)
            request.done = self.loop.create_future()
            client.admitted = request
            self.admitted_count += 1
            self.admitted_bytes += len(frame)
            if client.pending:
                client.pause()
            asyncio.ensure_future(self._handle(request, frame))
            return

    def _answer_control(self, client: ClientProtocol, frame: bytes) -> bool:
        """Answer a status request at once, outside the admission budget.

        Status must stay observable exactly when the queue is full. Only a
        client with nothing admitted gets here, so replies stay in order.
        """
        try:
            env = parse_envelope(frame, client.correlation_id)
        except YarpError:
            return False
        if not isinstance(env, protocol.Control):
            return False
        client.send(protocol.reply_ok(extra={"status": self.status()}))
        return True

    def _release(self, request: Request) -> None:
        client = request.conn
        if client.admitted is request:
            client.admitted = None
        self.admitted_count -= 1
        self.admitted_bytes -= request.frame_bytes
        if request.envelope is not None and self.in_flight.get(request.envelope.source_key) is request:
            del self.in_flight[request.envelope.source_key]
        # Round-robin: clients that waited for room go first, then this client.
        for _ in range(len(self.waiting)):
            waiting = self.waiting.popleft()
            if waiting.closed:
                continue
            self.admit(waiting)
            if waiting.admitted is None and waiting.pending:
                break
        if not client.closed:
            if client.pending:
                self.admit(client)
            if not client.pending:
                client.resume()
        self._arm_idle()

    # one request -----------------------------------------------------------------------

    async def _handle(self, request: Request, frame: bytes) -> None:
        client = request.conn
        try:
            reply = await self._process(request, frame)
        except YarpError as exc:
            self.stats.failures += 1
            reply = protocol.reply_error(exc)
        except Exception as exc:  # an invariant broke: answer boundedly, keep serving others
            self.stats.failures += 1
            self.log("internal_error", kind=type(exc).__name__)
            reply = protocol.reply_error(BrokerError("internal broker error"))
        self.stats.requests += 1
        client.send(reply)
        self._release(request)

    async def _process(self, request: Request, frame: bytes) -> bytes:
        env = parse_envelope(frame, request.conn.correlation_id)
        del frame
        if isinstance(env, protocol.Control):
            return protocol.reply_ok(extra={"status": self.status()})
        request.envelope = env
        request.deadline = request.received + env.deadline_ms / 1000
        last = self.sequences.get(env.source_key)
        if last is not None and env.sequence < last:
            raise ValidationError("operation arrived after a later operation for the same source")
        other = self.in_flight.get(env.source_key)
        if other is not None:
            if other.envelope.operation_id != env.operation_id:
                raise ValidationError("incompatible concurrent use of one source")
            # A replay of a request still in flight (its first connection died):
            # wait for it, then apply ours, which the stored rows make idempotent.
            try:
                await asyncio.shield(other.done)
            except Exception:
                pass
        self.in_flight[env.source_key] = request
        if self.loop.time() >= request.deadline:
            raise DeadlineExceeded("request deadline expired before it was admitted")
        if request.frame_bytes <= self.inline_bytes and not _reads_files(env):
            # Small requests are prepared on the loop: a pool hop costs more
            # than the work, and the GIL serialises pure-Python work anyway
            # (measurements: docs/decisions.md, "Broker preparation pool").
            request.prepared = prepare_request(env)
            self._enqueue(request)
            return await self._wait_done(request)
        self.preparing += 1
        try:
            request.prepared = await asyncio.wait_for(
                self.loop.run_in_executor(self._pool, prepare_request, env),
                timeout=max(0.0, request.deadline - self.loop.time()),
            )
        except asyncio.TimeoutError:
            raise DeadlineExceeded("request deadline expired while preparing") from None
        finally:
            self.preparing -= 1
        self._enqueue(request)
        return await self._wait_done(request)

    def _enqueue(self, request: Request) -> None:
        self.ready.append(request)
        self.ready_event.set()

    async def _wait_done(self, request: Request) -> bytes:
        try:
            return await request.done
        finally:
            if not request.done.done():
                request.done.cancel()

    # the writer ----------------------------------------------------------------------

    async def _writer_loop(self) -> None:
        loop = self.loop
        while True:
            await self.ready_event.wait()
            if not self.ready:
                self.ready_event.clear()
                continue
            batch = [self.ready.popleft()]
            size = batch[0].prepared.payload_bytes
            if size <= MAX_BATCH_PAYLOAD_BYTES:
                wait_until = loop.time() + BATCH_WAIT_MS / 1000
                while len(batch) < MAX_BATCH_REQUESTS:
                    if self.ready:
                        nxt = self.ready[0]
                        if size + nxt.prepared.payload_bytes > MAX_BATCH_PAYLOAD_BYTES:
                            break
                        batch.append(self.ready.popleft())
                        size += nxt.prepared.payload_bytes
                        continue
                    # Wait for companions only when some are actually on their way.
                    remaining = wait_until - loop.time()
                    if remaining <= 0 or not self.preparing:
                        break
                    self.ready_event.clear()
                    try:
                        await asyncio.wait_for(self.ready_event.wait(), remaining)
                    except asyncio.TimeoutError:
                        break
            if not self.ready:
                self.ready_event.clear()
            await self._commit(batch)

    async def _commit(self, batch: list[Request]) -> None:
        try:
            await self._commit_attempts(batch)
        finally:
            self.batch_requests = 0

    async def _commit_attempts(self, batch: list[Request]) -> None:
        loop = self.loop
        live = batch
        attempt = 0
        while live:
            now = loop.time()
            # After a busy attempt, a request too close to its deadline to
            # commit before it is refused rather than risked: its client must
            # never be told "deadline" for a request that then commits.
            cutoff = now + (COMMIT_MARGIN_S if attempt else 0.0)
            for r in live:
                if r.deadline <= cutoff:
                    _settle(r, DeadlineExceeded("request deadline expired before commit"))
            live = [r for r in live if r.deadline > cutoff]
            if not live:
                return
            self.batch_requests = len(live)
            started = time.perf_counter()
            self.in_transaction = True
            try:
                # SQLite's busy wait inside BEGIN IMMEDIATE ends a margin before
                # the earliest deadline in the batch, for the same reason.
                earliest_ms = (min(r.deadline for r in live) - now - COMMIT_MARGIN_S) * 1000
                busy_ms = max(1, min(SQLITE_BUSY_TIMEOUT_MS, int(earliest_ms)))
                results = await loop.run_in_executor(self._writer, self._apply_batch, [r.prepared for r in live], busy_ms)
            except ArchiveBusy:
                self.in_transaction = False
                self.stats.retries += 1
                attempt += 1
                await asyncio.sleep(min(0.001 * (2**attempt), 0.05))
                # Requests queued behind a blocked batch keep their own
                # deadlines, and may join it since nothing has started yet.
                self._expire_ready()
                live = self._top_up(live)
                continue
            except YarpError as exc:
                self.in_transaction = False
                self.log("batch_failed", code=exc.code, error=exc.message, size=len(live))
                for r in live:
                    _settle(r, exc)
                return
            self.in_transaction = False
            self.stats.batches += 1
            self.stats.commit_ms.append((time.perf_counter() - started) * 1000)
            vacuum = False
            for r, result in zip(live, results):
                if isinstance(result, YarpError):
                    _settle(r, result)
                    continue
                env = r.envelope
                self._remember_sequence(env)
                vacuum = vacuum or env.kind == "prune_before"
                _settle(r, protocol.reply_ok(result.archive_ref, result.pruned_calls))
            await self._after_commit(vacuum)
            return

    def _apply_batch(self, prepared: list[Prepared], busy_ms: int):
        """Writer thread: apply one batch with SQLite's busy wait bounded to `busy_ms`."""
        if busy_ms != self._busy_ms:
            try:
                self.store.conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
            except sqlite3.Error as exc:
                raise map_error(exc, "setting the archive busy timeout") from None
            self._busy_ms = busy_ms
        return self.store.apply_batch(prepared)

    def _expire_ready(self) -> None:
        now = self.loop.time()
        if not any(r.deadline <= now for r in self.ready):
            return
        keep: collections.deque[Request] = collections.deque()
        for r in self.ready:
            if r.deadline <= now:
                _settle(r, DeadlineExceeded("request deadline expired before commit"))
            else:
                keep.append(r)
        self.ready = keep

    def _top_up(self, live: list[Request]) -> list[Request]:
        size = sum(r.prepared.payload_bytes for r in live)
        while self.ready and len(live) < MAX_BATCH_REQUESTS:
            nxt = self.ready[0]
            if size + nxt.prepared.payload_bytes > MAX_BATCH_PAYLOAD_BYTES:
                break
            live.append(self.ready.popleft())
            size += nxt.prepared.payload_bytes
        return live

    def _remember_sequence(self, env: protocol.Envelope) -> None:
        if env.kind in ops.FINISHING_KINDS or env.kind == "prune_before":
            self.sequences.pop(env.source_key, None)
            return
        previous = self.sequences.pop(env.source_key, -1)
        self.sequences[env.source_key] = max(previous, env.sequence)
        while len(self.sequences) > MAX_SEQUENCE_CACHE_KEYS:
            self.sequences.popitem(last=False)

    async def _after_commit(self, vacuum: bool) -> None:
        """Maintenance between batches, never inside a request transaction."""
        if vacuum:
            try:
                await self.loop.run_in_executor(self._writer, self.store.incremental_vacuum)
            except YarpError as exc:
                self.log("vacuum_failed", code=exc.code)
        try:
            wal_size = os.stat(self.location.path + "-wal").st_size
        except OSError:
            return
        if wal_size >= WAL_CHECKPOINT_BYTES:
            try:
                await self.loop.run_in_executor(self._writer, self.store.wal_checkpoint, "PASSIVE")
                self.stats.checkpoints += 1
            except YarpError as exc:
                self.stats.checkpoint_failures += 1
                self.log("checkpoint_failed", code=exc.code, error=exc.message)

    # status -----------------------------------------------------------------------------

    def status(self) -> dict:
        s = self.stats
        return {
            "pid": os.getpid(),
            "uptimeMs": int((time.monotonic() - s.started) * 1000),
            "clients": len(self.clients),
            "admitted": self.admitted_count,
            "admittedBytes": self.admitted_bytes,
            "queueDepth": len(self.ready),
            "batchRequests": self.batch_requests,
            "waitingClients": len(self.waiting),
            "requests": s.requests,
            "failures": s.failures,
            "batches": s.batches,
            "retries": s.retries,
            "commitLatencyMsP50": s.commit_percentile(0.50),
            "commitLatencyMsP99": s.commit_percentile(0.99),
            "checkpoints": s.checkpoints,
            "checkpointFailures": s.checkpoint_failures,
            "sequenceCacheKeys": len(self.sequences),
            "pool": self.pool_kind,
            "inlineBytes": self.inline_bytes,
            "idleMs": self.idle_ms,
        }


_FILE_KINDS = frozenset({"capture_streams", "capture_passthrough_streams"})


def _reads_files(env: protocol.Envelope) -> bool:
    """Operations that snapshot files always go to the pool: their size is not the frame's."""
    return env.kind in _FILE_KINDS or (env.kind == "result_before" and env.operation.get("fullOutputPath") is not None)


def _settle(request: Request, outcome) -> None:
    if request.done.done():
        return
    if isinstance(outcome, YarpError):
        request.done.set_exception(outcome)
    else:
        request.done.set_result(outcome)


def idle_ms_from_env(environ=os.environ) -> int:
    raw = environ.get(IDLE_ENV)
    if not raw:
        return BROKER_IDLE_MS
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(f"{IDLE_ENV} must be an integer number of milliseconds") from None
    if value < 1:
        raise ValidationError(f"{IDLE_ENV} must be positive")
    return value


def inline_bytes_from_env(environ=os.environ) -> int:
    raw = environ.get(INLINE_ENV)
    if not raw:
        return INLINE_PREPARE_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError(f"{INLINE_ENV} must be an integer number of bytes") from None
    if value < 0:
        raise ValidationError(f"{INLINE_ENV} must not be negative")
    return value


def pool_kind_from_env(environ=os.environ) -> str:
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
        sock = broker.open(startup_fd)
    except YarpError as exc:
        _signal_ready(exc)
        if startup_fd is not None:
            os.close(startup_fd)
        raise

    def ready() -> None:
        # Socket bound and serving: other clients may now find us, so the
        # startup lock (our copy of it) can go.
        nonlocal startup_fd
        if startup_fd is not None:
            os.close(startup_fd)
            startup_fd = None
        _signal_ready(None)

    import uvloop

    uvloop.run(broker.serve(sock, on_ready=ready))
    return 0
