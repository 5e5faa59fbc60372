"""The writer: one thread, fed through a queue, that owns every SQLite write.

The event loop puts prepared requests on a `queue.SimpleQueue`; the writer
thread takes one, gathers whatever else is already queued into a batch (at most
`MAX_BATCH_REQUESTS` and `MAX_BATCH_PAYLOAD_BYTES`; a larger request runs alone;
it waits up to `BATCH_WAIT_MS` for companions only while others are being
prepared), applies the batch in one `BEGIN IMMEDIATE` transaction with a
savepoint per request, and hands every outcome back to the loop in one
`call_soon_threadsafe`. `stop` queues the sentinel: work queued before it is
still applied, then the thread ends. The loop never waits on fsync, and no
coroutine or executor hop sits between a prepared request and its commit.

Group commit: where a flush is slow, clients that each have one request in
flight fall into two halves that take turns, each committing while the other
waits, so every batch holds half of them. After a batch of several requests
whose commit took at least `GROUP_WAIT_MIN_COMMIT_MS`, the next one waits a
share of that time (`GROUP_WAIT_SHARE`, at most `GROUP_WAIT_MAX_MS`) for the
clients just answered (by connection) to send again, and commits both halves
with one flush; it stops waiting as soon as each of them has, and never so
long that a request in the batch could miss its deadline. A single client, a
fast disk or a pause in the traffic never waits.

Deadlines: a request whose deadline passed before its batch begins is
answered `deadline` and never committed. SQLite's busy wait inside
`BEGIN IMMEDIATE` ends `COMMIT_MARGIN_S` before the batch's earliest deadline;
after a busy attempt, a request with less than that left is refused rather
than risked, so a client is never told "deadline" for a request that then
commits. Only typed busy/locked outcomes are retried.

Maintenance: a prune is never batched. `Maintenance` runs it a bounded step
(one transaction) at a time, and the thread alternates a step with a batch of
whatever is queued, so captures commit while a prune of any size goes on.

The archive at its path: a batch is acknowledged only when the database the
writer has open is still the file at the archive path (`in_place`). A batch
committed into a file that was removed or replaced meanwhile is answered
`archive_replaced` and acknowledges nothing; a batch that finds the file gone
before it begins is answered `shutting_down` unwritten, so its clients replay
it to the next broker; and this broker stops.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
import time

from yarp.archive.sqlite import map_error
from yarp.broker.maintenance import Maintenance
from yarp.broker.result_view import wants_view
from yarp.errors import ArchiveBusy, ArchiveReplaced, DeadlineExceeded, ShuttingDown, YarpError
from yarp.limits import (
    ARCHIVE_RECHECK_S,
    BATCH_WAIT_MS,
    COMMIT_MARGIN_S,
    GROUP_WAIT_MAX_MS,
    GROUP_WAIT_MIN_COMMIT_MS,
    GROUP_WAIT_RECENT_MS,
    GROUP_WAIT_SHARE,
    MAX_BATCH_PAYLOAD_BYTES,
    MAX_BATCH_REQUESTS,
    PRUNE_CHECKPOINT_BYTES,
    SQLITE_BUSY_TIMEOUT_MS,
    WAL_CHECKPOINT_BYTES,
)
from yarp.wire import protocol

#: Put on the queue by `stop`: everything before it is applied, then the thread ends.
_SENTINEL = object()
#: What a client is told when the archive file was removed or replaced under the broker.
_REPLACED = "the archive file was removed or replaced under the broker"


class Writer:
    """The one thread that applies prepared requests to SQLite, in batches, and posts the outcomes to the loop."""

    def __init__(self, broker, store) -> None:
        self.broker = broker
        self.store = store
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        #: Requests submitted and not yet answered (read on the loop: idle, status).
        self.queued = 0
        #: Requests in the batch being committed (or retried while busy).
        self.batch_requests = 0
        self.in_transaction = False
        self._busy_ms = SQLITE_BUSY_TIMEOUT_MS
        self._carry = None
        #: The last committed batch: its clients' connections, how long its commit took and when it
        #: ended (monotonic s).
        self._last_batch: tuple[set, float, float] = (set(), 0.0, 0.0)
        #: When the open database was last found to be the file at the archive path (monotonic s).
        self._in_place_at = time.monotonic()
        #: It was not: the archive was removed or replaced, and the broker is stopping.
        self.replaced = False
        #: Prunes, run a bounded step at a time between batches.
        self.maintenance = Maintenance(self, post=self._post, after_step=self._after_commit)
        self._thread = threading.Thread(target=self._run, name="yarp-writer", daemon=True)

    def start(self) -> None:
        """Start the writer thread."""
        self._thread.start()

    def submit(self, request) -> None:
        """Loop side: queue one prepared request."""
        self.queued += 1
        self.queue.put(request)

    def stop(self) -> None:
        """Queue the sentinel and wait for the thread to apply what came before it."""
        if self._thread.is_alive():
            self.queue.put(_SENTINEL)
            self._thread.join()

    # --- the thread -------------------------------------------------------------

    def _run(self) -> None:
        maintenance = self.maintenance
        while True:
            if maintenance.due(self._carry is None and self.queue.empty()):
                maintenance.step()  # a prune's step, then a batch of what waits, in turn
                continue
            first = self._carry if self._carry is not None else self.queue.get()
            self._carry = None
            if first is _SENTINEL:
                maintenance.abandon()
                return
            if maintenance.takes(first):
                maintenance.add(first)
                continue
            batch, stop = self._gather(first)
            try:
                self._commit(batch)
            except Exception as exc:  # an invariant broke: answer boundedly, keep writing
                kinds = sorted({r.envelope.kind for r in batch if r.envelope is not None})
                error = self.broker.fault(exc, operation="batch:" + ",".join(kinds) if len(kinds) == 1 else "batch")
                self._post([(r, error) for r in batch], False)
            finally:
                self.batch_requests = 0
                self.in_transaction = False
                maintenance.owed = True
            if stop:
                maintenance.abandon()
                return

    def _gather(self, first) -> tuple[list, bool]:
        batch = [first]
        size = first.prepared.payload_bytes
        if size > MAX_BATCH_PAYLOAD_BYTES:
            return batch, False
        wait_until = time.monotonic() + BATCH_WAIT_MS / 1000
        group_until, returning, commit_s = self._group_wait()
        returning.discard(first.conn)
        earliest = first.deadline
        while len(batch) < MAX_BATCH_REQUESTS:
            try:
                nxt = self.queue.get_nowait()
            except queue.Empty:
                now = time.monotonic()
                # Never so long that a request waiting here could miss its deadline at commit.
                until = min(group_until, earliest - COMMIT_MARGIN_S - commit_s)
                if returning and now < until:
                    timeout = until - now
                elif self.broker.preparing and now < wait_until:
                    # Companions actually on their way: being prepared.
                    timeout = wait_until - now
                else:
                    break
                try:
                    nxt = self.queue.get(timeout=timeout)
                except queue.Empty:
                    returning = set()  # the wait ended: take what came, or stop
                    continue
            if nxt is _SENTINEL:
                return batch, True
            if self.maintenance.takes(nxt):
                self.maintenance.add(nxt)
                continue
            if size + nxt.prepared.payload_bytes > MAX_BATCH_PAYLOAD_BYTES:
                self._carry = nxt
                break
            batch.append(nxt)
            returning.discard(nxt.conn)
            earliest = min(earliest, nxt.deadline)
            size += nxt.prepared.payload_bytes
        return batch, False

    def _group_wait(self) -> tuple[float, set, float]:
        """(until when, the connections) the next batch waits for, those the last batch answered, and how
        long that batch's commit took."""
        conns, commit_s, ended = self._last_batch
        now = time.monotonic()
        if len(conns) < 2 or commit_s * 1000 < GROUP_WAIT_MIN_COMMIT_MS or (now - ended) * 1000 > GROUP_WAIT_RECENT_MS:
            return 0.0, set(), 0.0
        return now + min(commit_s * GROUP_WAIT_SHARE, GROUP_WAIT_MAX_MS / 1000), set(conns), commit_s

    def _top_up(self, live: list) -> list:
        """After a busy attempt: requests queued meanwhile may join, nothing has started yet."""
        if self._carry is not None:
            return live
        size = sum(r.prepared.payload_bytes for r in live)
        while len(live) < MAX_BATCH_REQUESTS:
            try:
                nxt = self.queue.get_nowait()
            except queue.Empty:
                break
            if nxt is not _SENTINEL and self.maintenance.takes(nxt):
                self.maintenance.add(nxt)
                continue
            if nxt is _SENTINEL or size + nxt.prepared.payload_bytes > MAX_BATCH_PAYLOAD_BYTES:
                self._carry = nxt
                break
            live.append(nxt)
            size += nxt.prepared.payload_bytes
        return live

    def _commit(self, batch: list) -> None:
        stats = self.broker.stats
        live = batch
        attempt = 0
        if not self.in_place(before=True):
            # Nothing was written: another broker, on the file at the path, can take these.
            self._post([(r, ShuttingDown(_REPLACED + "; nothing was written, retry with a new broker"))
                        for r in live], False)
            return
        while live:
            now = time.monotonic()
            cutoff = now + (COMMIT_MARGIN_S if attempt else 0.0)
            expired = [r for r in live if r.deadline <= cutoff]
            if expired:
                self._post([(r, DeadlineExceeded("request deadline expired before commit")) for r in expired], False)
                live = [r for r in live if r.deadline > cutoff]
                if not live:
                    return
            self.batch_requests = len(live)
            started = time.perf_counter()
            self.in_transaction = True
            try:
                earliest_ms = (min(r.deadline for r in live) - now - COMMIT_MARGIN_S) * 1000
                results = self._apply_batch([r.prepared for r in live],
                                            max(1, min(SQLITE_BUSY_TIMEOUT_MS, int(earliest_ms))))
            except ArchiveBusy:
                self.in_transaction = False
                stats.retries += 1
                attempt += 1
                time.sleep(min(0.001 * (2**attempt), 0.05))
                live = self._top_up(live)
                continue
            except YarpError as exc:
                self.in_transaction = False
                self.broker.log_threadsafe("batch_failed", code=exc.code, error=exc.message, size=len(live))
                self._post([(r, exc) for r in live], False)
                return
            self.in_transaction = False
            if not self.in_place():
                self._post([(r, self.replaced_error()) for r in live], False)
                return
            stats.batches += 1
            took = time.perf_counter() - started
            stats.commit_ms.append(took * 1000)
            self._last_batch = ({r.conn for r in live}, took, time.monotonic())
            # A client gets its reply's bytes, made here off the loop; a service's
            # submission, and a result text whose reply carries its view, the store's
            # `Outcome` record itself.
            outcomes = [(r, result if isinstance(result, YarpError) or r.reply_to is not None
                         or wants_view(r.prepared) else protocol.reply_of(result)) for r, result in zip(live, results)]
            self._post(outcomes, True)
            self._after_commit()
            return

    def replaced_error(self) -> ArchiveReplaced:
        """What a request committed into a removed or replaced archive file is answered."""
        return ArchiveReplaced(_REPLACED + "; nothing was acknowledged")

    def in_place(self, before: bool = False) -> bool:
        """Whether the open database is still the file at the archive path (`FilePin`: one fstat and
        one stat). Checked after every commit, before any acknowledgement, and before a batch
        when the last check is older than `ARCHIVE_RECHECK_S`. Once it is not, it never is again
        for this broker, which stops: the next client starts one on the file at the path."""
        if self.replaced:
            return False
        now = time.monotonic()
        if before and now - self._in_place_at < ARCHIVE_RECHECK_S:
            return True
        if self.store.still_at_path():
            self._in_place_at = now
            return True
        self.replaced = True
        broker = self.broker
        broker.log_threadsafe("archive_replaced")
        broker.loop.call_soon_threadsafe(broker.lifecycle.archive_replaced)
        return False

    def _apply_batch(self, prepared: list, busy_ms: int):
        """Apply one batch with SQLite's busy wait bounded to `busy_ms`."""
        if busy_ms != self._busy_ms:
            try:
                self.store.conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
            except sqlite3.Error as exc:
                raise map_error(exc, "setting the archive busy timeout") from None
            self._busy_ms = busy_ms
        return self.store.apply_batch(prepared)

    def _after_commit(self) -> None:
        """Between batches and a prune's steps, never inside a transaction: report a failed vacuum
        (a prune's), and checkpoint the WAL once it has grown past its bound, a smaller one while
        a prune runs (its steps fill the WAL fast, and a smaller checkpoint is a shorter wait for
        the captures queued behind it)."""
        stats = self.broker.stats
        vacuum_error = self.store.last_vacuum_error
        if vacuum_error is not None:
            self.store.last_vacuum_error = None
            self.broker.log_threadsafe("vacuum_failed", code=vacuum_error.code)
        try:
            wal_size = os.stat(self.store.location.path + "-wal").st_size
        except OSError:
            return
        if wal_size >= (PRUNE_CHECKPOINT_BYTES if self.maintenance.jobs else WAL_CHECKPOINT_BYTES):
            try:
                self.store.wal_checkpoint("PASSIVE")
                stats.checkpoints += 1
            except YarpError as exc:
                stats.checkpoint_failures += 1
                self.broker.log_threadsafe("checkpoint_failed", code=exc.code, error=exc.message)

    def _post(self, outcomes: list, committed: bool) -> None:
        """Hand outcomes (reply bytes, a service's `Outcome`, or a YarpError) to the loop, in one wake-up."""
        self.broker.loop.call_soon_threadsafe(self.broker.settle_batch, outcomes, committed)
