"""The broker's request path: from an admitted frame to its reply, with no task per request.

A request is a chain of callbacks on the event loop, never an asyncio Task:

1. `start` parses the envelope (compiled, `yarp.wire.validation`). A small request's
   operation is validated, and its identities derived and proven, right
   there; a large or file-reading one is validated in the pool with its
   preparation.
2. The sequencer checks the source's order; a replay of the operation in
   flight follows it (runs when it finishes).
3. `HANDLERS` (`dispatch`) prepares it: on the loop for a small request (a
   pool hop costs more than the work), else in the pool, whose future calls
   back (a timer answers `deadline` if the pool is slower than the request's
   deadline).
4. The writer thread commits it and posts the outcome back; `finish` sends the
   reply, releases admission and wakes followers and waiting clients. A
   `result_text` that asks for its view (`capBytes`) gets it made first, after
   the commit (`yarp.broker.result_view`).

The thin clients' hook events and run steps are the exception: each runs as
one task (`_serve`), since its service awaits several steps, and every
envelope it submits (`submit`) takes the path above with a future for its
outcome, riding on the service request's admission.
"""

from __future__ import annotations

import collections
import concurrent.futures
import functools
import os
import sys
import time

import orjson

from yarp import fault_log
from yarp._version import __version__
from yarp.broker.admission import Admission, Request
from yarp.broker.handlers import prepare_operation, prepare_request, reads_files
from yarp.broker.result_view import answer as answer_with_view
from yarp.broker.result_view import wants_view
from yarp.broker.sequencer import Sequencer
from yarp.broker.services import service_for, service_kind
from yarp.errors import BrokerError, DeadlineExceeded, YarpError
from yarp.limits import BROKER_IDLE_MS, COMMIT_LATENCY_SAMPLES, INLINE_PREPARE_BYTES
from yarp.wire import operations as ops
from yarp.wire import protocol
from yarp.wire.validation import check_operation, parse_request


class Stats:
    """The broker's counters since start, and a bounded window of recent commit latencies for `status`."""

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
        """The `q` percentile of the recent commit latencies in milliseconds, or None before the first commit."""
        if not self.commit_ms:
            return None
        ordered = sorted(self.commit_ms)
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


class Broker:
    """The single writer's state: connections, admission, ordering, the writer, statistics."""

    def __init__(self, location, paths, *, idle_ms: int = BROKER_IDLE_MS, pool_kind: str = "thread",
                 foreground: bool = False, inline_bytes: int = INLINE_PREPARE_BYTES) -> None:
        self.location = location
        self.paths = paths
        self.archive_id = paths.archive_id
        self.idle_ms = idle_ms
        self.pool_kind = pool_kind
        self.inline_bytes = inline_bytes
        self.foreground = foreground
        self.loop = None
        self.store = None
        self.writer = None
        self.clients: set = set()
        #: The clients whose handshake was accepted: only they keep the broker from going idle.
        self.opened: set = set()
        self.admission = Admission(self)
        self.sequencer = Sequencer()
        #: Requests being prepared in the pool (the writer waits for companions only while > 0).
        self.preparing = 0
        self.closing = False
        self.stats = Stats()
        self.lifecycle = None
        self._pool: concurrent.futures.Executor | None = None
        #: The thin clients' services (`yarp.broker.services.Services`), made on first use.
        self.services = None

    # logging -------------------------------------------------------------------

    def log(self, event: str, **fields) -> None:
        """One JSON event line on stderr in the foreground: codes and counts, never payloads."""
        if not self.foreground:
            return
        record = {"ts": round(time.time(), 3), "event": event, **fields}
        try:
            sys.stderr.write(orjson.dumps(record).decode() + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass

    def fault(self, exc: BaseException, request: Request | None = None, operation: str | None = None) -> BrokerError:
        """An internal error: one line in the fault log (`fault_log`), an event in the
        foreground, and the bounded error to answer; safe from any thread."""
        if operation is None and request is not None and request.envelope is not None:
            operation = request.envelope.kind
        fault_log.record(exc, operation=operation, request_bytes=request.frame_bytes if request is not None else None)
        if self.loop is not None:
            self.log_threadsafe("internal_error", kind=type(exc).__name__)
        return BrokerError("internal broker error; " + fault_log.client_hint())

    def log_threadsafe(self, event: str, **fields) -> None:
        """`log` from another thread (the writer, the pool): the line is written on the event loop."""
        if self.foreground and self.loop is not None:
            self.loop.call_soon_threadsafe(functools.partial(self.log, event, **fields))

    def make_pool(self) -> concurrent.futures.Executor:
        """Make the preparation pool, one worker per CPU (at least two): threads, or forkserver processes
        when `pool_kind` is `process`.
        """
        workers = max(2, os.cpu_count() or 2)
        if self.pool_kind == "process":
            import multiprocessing

            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("forkserver"))
        else:
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="yarp-prepare")
        return self._pool

    # connections --------------------------------------------------------------------

    def client_connected(self, client) -> None:
        """Track a client that passed the peer check (closed at shutdown); it keeps the broker awake only once
        its handshake is accepted (`client_opened`), so clients it refuses (another version, another archive)
        never hold off its idle exit."""
        self.clients.add(client)

    def client_opened(self, client) -> None:
        """A client's handshake was accepted: it counts as connected, and the idle timer stops."""
        self.opened.add(client)
        self.lifecycle.busy()

    def client_disconnected(self, client) -> None:
        """Forget a client that left; arm the idle timer when an accepted one left and nothing else goes on
        (a refused client's leaving leaves the running timer alone)."""
        self.clients.discard(client)
        self.admission.forget(client)
        if client in self.opened:
            self.opened.discard(client)
            self.lifecycle.maybe_idle()

    def is_idle(self) -> bool:
        """Whether no accepted client is connected and nothing is admitted, queued or inside a transaction:
        the condition for an idle exit."""
        writer = self.writer
        return (not self.opened and not self.admission.count
                and (writer is None or (not writer.in_transaction and not writer.queued)))

    # the request path ------------------------------------------------------------------

    def start(self, request: Request, frame: bytes, parsed=None) -> None:
        """Admission hands over one frame (and what it already decoded of it, `parsed`): route it,
        prepare it, queue it for the writer; a service request goes to its service."""
        try:
            if parsed is None:
                parsed = parse_request(frame, request.conn.correlation_id)
            elif isinstance(parsed, YarpError):  # refused when admission decoded it
                raise parsed
            del frame
            kind = type(parsed)
            if kind is protocol.Envelope:
                self._order(request, parsed)
            elif kind is protocol.Control:
                self.finish(request, protocol.reply_ok(extra={"status": self.status()}))
            else:
                self._serve(request, parsed)
        except YarpError as exc:
            self.finish(request, exc)
        except Exception as exc:  # an invariant broke: answer boundedly, keep serving others
            self.finish(request, self.fault(exc, request))

    def runs_inline(self, size: int) -> bool:
        """The one decision of where preparation runs: on the loop for work of at most
        `inline_bytes` (a pool hop costs more than the work; docs/design/broker.md, "Broker
        preparation pool"), else in the pool."""
        return size <= self.inline_bytes

    async def work(self, size: int, function, *args):
        """`function(*args)`, on the loop or in the pool as `runs_inline(size)` decides."""
        if self.runs_inline(size):
            return function(*args)
        return await self.loop.run_in_executor(self._pool, functools.partial(function, *args))

    def in_pool(self, function):
        """`function()` in the preparation pool: a future of its result, for a callback."""
        return self.loop.run_in_executor(self._pool, function)

    def _order(self, request: Request, env) -> None:
        request.envelope = env
        request.deadline = request.received + env.deadline_ms / 1000
        operation = request.operation
        if (operation is None and request.prepared is None and self.runs_inline(request.frame_bytes)
                and not reads_files(env)):
            # Validated before it is routed: the sequencer only ever sees proven identities.
            operation = check_operation(env)
        leader = self.sequencer.check(request)
        if leader is not None:
            leader.followers.append((request, operation))
            return
        self._route(request, operation)

    # the thin clients' services (yarp.broker.services) ---------------------------------------------

    def _serve(self, request: Request, service_request) -> None:
        """Hand a validated hook event or run step to its service, a task of its own."""
        service = service_for(self, service_request)
        task = self.loop.create_task(service.serve(request, service_request))
        task.add_done_callback(functools.partial(self._served, request, service_kind(service_request)))

    def _served(self, request: Request, kind: str | None, task) -> None:
        try:
            outcome = task.result()
        except YarpError as exc:
            outcome = exc
        except Exception as exc:
            outcome = self.fault(exc, request, kind)
        self.finish(request, outcome)

    def submit_operation(self, request: Request, operation, deadline_ms: int):
        """Order, prepare and commit one operation a service built, from validated parts, on
        behalf of its admitted `request`; a future of the store's `Outcome` (or the error).

        The operation is the record itself: nothing is encoded to JSON and
        parsed back. The submission rides on the service request's admission:
        it sends nothing itself and releases nothing when it finishes.
        """
        return self._submit(request, _routing(operation, request.conn.correlation_id, deadline_ms), operation, None)

    def submit_prepared(self, request: Request, operations: tuple, prepared, deadline_ms: int):
        """Commit the operations of one call a service prepared as one composite (one savepoint, one
        commit; `services.shared.prepare_composite`); a future of the store's `Outcome`."""
        env = _routing(operations[-1], request.conn.correlation_id, deadline_ms, operations[0].sequence)
        return self._submit(request, env, None, prepared)

    def _submit(self, request: Request, env, operation, prepared):
        inner = Request(request.conn, request.frame_bytes, request.received)
        inner.reply_to = self.loop.create_future()
        inner.operation = operation
        inner.prepared = prepared
        try:
            self._order(inner, env)
        except YarpError as exc:
            self.finish(inner, exc)
        return inner.reply_to

    def _route(self, request: Request, operation) -> None:
        self.sequencer.enter(request)
        if time.monotonic() >= request.deadline:
            raise DeadlineExceeded("request deadline expired before it was admitted")
        env = request.envelope
        if request.prepared is not None:
            # A service's composite: its parts were prepared (and proven) by the service.
            self.writer.submit(request)
            return
        if operation is not None and self.runs_inline(request.frame_bytes):
            request.prepared = prepare_operation(env, operation)
            self.writer.submit(request)
            return
        work = (functools.partial(prepare_request, env) if operation is None
                else functools.partial(prepare_operation, env, operation))
        self.preparing += 1
        future = self.loop.run_in_executor(self._pool, work)
        future.add_done_callback(functools.partial(self._prepared, request))
        request.timer = self.loop.call_at(self.loop.time() + max(0.0, request.deadline - time.monotonic()),
                                          self._prepare_expired, request)

    def _prepared(self, request: Request, future) -> None:
        self.preparing -= 1
        if request.timer is not None:
            request.timer.cancel()
            request.timer = None
        if request.settled:
            return
        try:
            request.prepared = future.result()
        except YarpError as exc:
            self.finish(request, exc)
            return
        except Exception as exc:
            self.finish(request, self.fault(exc, request))
            return
        self.writer.submit(request)

    def _prepare_expired(self, request: Request) -> None:
        request.timer = None
        self.finish(request, DeadlineExceeded("request deadline expired while preparing"))

    def settle_batch(self, outcomes: list, committed: bool) -> None:
        """Loop side of the writer: every outcome of one batch (reply bytes or an error)."""
        self.writer.queued -= len(outcomes)
        for request, outcome in outcomes:
            try:
                if committed and not isinstance(outcome, YarpError):
                    self.sequencer.remember(request.envelope)
                    if request.reply_to is None and wants_view(request.prepared):
                        answer_with_view(self, request, outcome)  # the view, made now, then the reply
                        continue
                self.finish(request, outcome)
            except Exception as exc:  # never leave the rest of the batch unanswered
                self.fault(exc, request)

    def finish(self, request: Request, outcome) -> None:
        """Send the one reply, give back admission, then let followers and waiting clients in."""
        if request.settled:
            return
        request.settled = True
        reply_to = request.reply_to
        if reply_to is not None:  # a service's submission: its service answers the client
            if not reply_to.done():
                if isinstance(outcome, YarpError):
                    reply_to.set_exception(outcome)
                else:
                    reply_to.set_result(outcome)
        else:
            if isinstance(outcome, YarpError):
                self.stats.failures += 1
                outcome = protocol.reply_error(outcome)
            self.stats.requests += 1
            request.conn.send(outcome)
        self.sequencer.leave(request)
        # Replays of this very operation go first (they apply now,
        # idempotently), before released room admits anything new.
        followers, request.followers = request.followers, []
        for follower, operation in followers:
            if follower.settled:
                continue
            try:
                self._route(follower, operation)
            except YarpError as exc:
                self.finish(follower, exc)
            except Exception as exc:
                self.finish(follower, self.fault(exc, follower))
        if reply_to is None:
            self.admission.release(request)
            self.lifecycle.maybe_idle()

    # status -----------------------------------------------------------------------------

    def status(self) -> dict:
        """What a status request answers: counts, queue depths and commit latencies, never payloads."""
        s = self.stats
        writer = self.writer
        prune = writer.maintenance.status() if writer is not None else None
        return {
            "pid": os.getpid(),
            "binaryVersion": __version__,
            "uptimeMs": int((time.monotonic() - s.started) * 1000),
            "clients": len(self.clients),
            "admitted": self.admission.count,
            "admittedBytes": self.admission.bytes,
            "queueDepth": writer.queue.qsize() if writer is not None else 0,
            "batchRequests": writer.batch_requests if writer is not None else 0,
            "waitingClients": len(self.admission.waiting),
            "requests": s.requests,
            "failures": s.failures,
            "batches": s.batches,
            "retries": s.retries,
            "commitLatencyMsP50": s.commit_percentile(0.50),
            "commitLatencyMsP99": s.commit_percentile(0.99),
            "checkpoints": s.checkpoints,
            "checkpointFailures": s.checkpoint_failures,
            "sequenceCacheKeys": len(self.sequencer.sequences),
            "pool": self.pool_kind,
            "eventLoop": "uvloop" if type(self.loop).__module__.startswith("uvloop") else "asyncio",
            "inlineBytes": self.inline_bytes,
            "idleMs": self.idle_ms,
            # A prune that is running: its phase, what it has done of it, the calls deleted so far.
            **({"prune": prune} if prune is not None else {}),
        }


def _routing(operation, correlation_id: str, deadline_ms: int, sequence: int | None = None) -> protocol.Envelope:
    """The routing envelope of an operation built in the broker: identities derived from the record, never sent."""
    return protocol.Envelope(correlation_id, ops.operation_id(operation), ops.source_key(operation),
                             operation.sequence if sequence is None else sequence, deadline_ms, None, operation.kind)
