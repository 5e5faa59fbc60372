"""A prune done in bounded steps, each its own transaction, so captures commit between them.

`Pruner` deletes what `prune_before` asks (finished calls with
`finished_at_ms` strictly before the time; their snapshots by the schema's
cascade; payloads no snapshot references any more; then the freed pages
returned by incremental vacuum) in steps the caller runs one at a time.
The broker's writer runs one step, then a batch of whatever requests are
waiting, then the next step (`yarp.broker.maintenance`); the library runs
them back to back (`ArchiveStore.prune`).

The phases, in order:

- `count`: the calls the prune will judge are those the archive held when it
  began (`id <= last_id`; a call begun later is never judged, so an import of
  old history during a prune stays). They are counted for progress, in id
  windows, reading only. A dry run would be this phase alone (`count_window`).
- `calls`: one id window per step, in one `BEGIN IMMEDIATE` transaction: the
  window's prunable calls are deleted, then the payloads their snapshots named
  that nothing references now. Each step commits atomically, so a crash
  leaves whole steps done and no orphan behind, and a rerun finishes the job.
- `payloads`: payloads no snapshot referenced before the prune began (an
  archive another writer left so), found by walking the `sha256` index in
  windows and deleted only in the windows that hold one.
- `vacuum`: `PRAGMA incremental_vacuum(N)` a window of pages at a time until
  the free list is empty, also when a crashed prune left free pages and this
  one deleted nothing. A failed vacuum does not fail the prune (its deletions
  committed): it is kept in `ArchiveStore.last_vacuum_error`.

Asked to (`incomplete_before_ms`), a prune also deletes the calls still
`started` that nothing has touched since that time: started before it, and no
snapshot captured since (`ABANDONED`), the calls a crash or a lost finish left
`started` for good. They go like finished ones: in the same steps, with their
snapshots and the payloads only they referenced.

A dry run (`dry_run`) writes nothing: after the `count` phase it walks the
payloads as the `payloads` phase does and adds up those every snapshot of
which belongs to a call the prune would delete (or none at all), with their
logical and stored bytes (`GOING`); then it is done.

Each window adapts to the time its last step took, aiming under `step_ms`;
windows of calls never exceed `max_calls` ids. The counts are exact: they are
summed from the rows each committed step deleted. While a prune runs, the
connection's page cache is `PRUNE_CACHE_KIB` (SQLite's default is 2 MiB):
every step deletes entries of three indexes whose keys are random (payload
digests, archive references), and with the small cache most of a step's time
went to reading their pages again (`close` puts the cache back).
"""

from __future__ import annotations

import time

from yarp.archive.sqlite import map_error, sqlite3
from yarp.errors import ArchiveBusy, YarpError
from yarp.limits import PRUNE_CACHE_KIB, PRUNE_STEP_CALLS, PRUNE_STEP_MS

#: The calls a prune deletes, within an id window of those it judges.
PRUNABLE = "id > ? AND id <= ? AND status = 'finished' AND finished_at_ms < ?"
#: What marks a call still `started` as abandoned: started before the time, and no snapshot since it.
_IDLE = ("status = 'started' AND started_at_ms < ? AND NOT EXISTS (SELECT 1 FROM snapshots later"
         " WHERE later.tool_call_id = tool_calls.id AND later.captured_at_ms >= ?)")
#: The incomplete calls a prune deletes when asked to, within an id window (the idle time twice).
ABANDONED = f"id > ? AND id <= ? AND {_IDLE}"
#: A dry run's payloads that would go, in a window of the `sha256` index: every snapshot that names one
#: belongs to a call the prune deletes (ids up to the last it judges; the finish time; the idle time twice).
GOING = ("SELECT count(*), total(uncompressed_byte_length), total(length(body)) FROM payloads"
         " WHERE sha256 > ? AND sha256 <= ? AND NOT EXISTS (SELECT 1 FROM snapshots"
         " JOIN tool_calls ON tool_calls.id = snapshots.tool_call_id"
         " WHERE snapshots.payload_sha256 = payloads.sha256"
         f" AND NOT (tool_calls.id <= ? AND ((status = 'finished' AND finished_at_ms < ?) OR ({_IDLE}))))")
#: Payloads nothing references, within a window of the `sha256` index.
_ORPHANS = ("SELECT sha256 FROM payloads WHERE sha256 > ? AND sha256 <= ? AND NOT EXISTS"
            " (SELECT 1 FROM snapshots WHERE snapshots.payload_sha256 = payloads.sha256)")
_DELETE_ORPHAN = ("DELETE FROM payloads WHERE sha256 = ? AND NOT EXISTS"
                  " (SELECT 1 FROM snapshots WHERE snapshots.payload_sha256 = payloads.sha256)")
PHASES = ("count", "calls", "payloads", "vacuum", "done")


def count_window(conn, first_after: int, last: int, before_ms: int) -> int:
    """How many calls with ids in (`first_after`, `last`] a prune at `before_ms` deletes."""
    return conn.execute(f"SELECT count(*) FROM tool_calls WHERE {PRUNABLE}", (first_after, last, before_ms)).fetchone()[0]


def count_abandoned(conn, first_after: int, last: int, idle_ms: int) -> int:
    """How many calls still `started` with ids in (`first_after`, `last`] have had no record since `idle_ms`."""
    return conn.execute(f"SELECT count(*) FROM tool_calls WHERE {ABANDONED}",
                        (first_after, last, idle_ms, idle_ms)).fetchone()[0]


class _Window:
    """A step's amount of work, adapted to how long the last step took against the time budget."""

    def __init__(self, size: int, low: int, high: int) -> None:
        low = min(low, high)
        self.size, self.low, self.high = max(low, min(size, high)), low, high

    def adapt(self, took_s: float, budget_s: float) -> None:
        factor = 2.0 if took_s <= 0 else max(0.25, min(2.0, 0.8 * budget_s / took_s))
        self.size = max(self.low, min(self.high, int(self.size * factor)))


class Pruner:
    """One prune of the calls finished before `before_ms` (and, given `incomplete_before_ms`, of the
    incomplete calls idle since then), run a bounded step at a time (`step`); a `dry_run` only counts."""

    def __init__(self, store, before_ms: int, *, step_ms: int = PRUNE_STEP_MS,
                 max_calls: int = PRUNE_STEP_CALLS, incomplete_before_ms: int | None = None,
                 dry_run: bool = False) -> None:
        self.store = store
        self.before_ms = before_ms
        self.incomplete_before_ms = incomplete_before_ms
        self.dry_run = dry_run
        #: Incomplete calls deleted by committed steps, and found abandoned when the prune began.
        self.pruned_incomplete = self.total_incomplete = 0
        #: A dry run's payloads that would go: count, logical bytes, stored bytes.
        self.going = [0, 0, 0]
        self.budget_s = step_ms / 1000
        self.phase = "count"
        #: Calls and payloads deleted by committed steps; calls found prunable when the prune began.
        self.pruned_calls = 0
        self.removed_payloads = 0
        self.total_calls = 0
        #: Free pages when the vacuum began, and those it returned since.
        self.free_pages = 0
        self.vacuumed_pages = 0
        self.steps = 0
        self.last_id: int | None = None
        self._cursor: int | bytes = 0
        #: The connection's own page cache size, put back by `close`.
        self._cache: int | None = None
        self._windows = {"count": _Window(64 * max_calls, 1024, 1 << 20), "calls": _Window(256, 16, max_calls),
                         "payloads": _Window(4096, 256, 1 << 18), "vacuum": _Window(256, 16, 1 << 16)}

    @property
    def done(self) -> bool:
        """Whether every phase is over."""
        return self.phase == "done"

    def progress(self) -> dict:
        """Where the prune stands: its phase, what it has done of that phase, and the calls deleted."""
        deleted = self.pruned_calls + self.pruned_incomplete
        done, total = {"count": (0, 0), "calls": (deleted, self.total_calls + self.total_incomplete),
                       "vacuum": (self.vacuumed_pages, self.free_pages)}.get(self.phase, (0, 0))
        return {"phase": self.phase, "done": done, "total": total, "prunedCalls": deleted}

    def answer(self) -> tuple[int, dict | None]:
        """The reply of a prune that is done: (`prunedCalls`, the finished calls deleted; further fields:
        `prunedIncompleteCalls` when incomplete calls were asked for, a dry run's `dryRun` counts)."""
        extra: dict = {}
        if self.incomplete_before_ms is not None:
            extra["prunedIncompleteCalls"] = self.pruned_incomplete
        if self.dry_run:
            payloads, logical, stored = self.going
            extra["dryRun"] = {"calls": self.total_calls, "incompleteCalls": self.total_incomplete,
                               "payloads": payloads, "logicalBytes": logical, "storedBytes": stored}
        return self.pruned_calls, extra or None

    def run(self) -> int:
        """Every step, back to back; the number of calls deleted. A step's error is raised (what
        earlier steps committed stays, and running the prune again finishes it)."""
        try:
            while not self.step():
                pass
        finally:
            self.close()
        return self.pruned_calls

    def close(self) -> None:
        """Give the connection its own page cache size back (done or not, the prune holds nothing else)."""
        if self._cache is not None:
            try:
                self.store.conn.execute(f"PRAGMA cache_size = {int(self._cache)}")
            except sqlite3.Error:
                pass  # a cache size is no reason to fail what committed
            self._cache = None

    def step(self) -> bool:
        """One bounded step of the current phase; True once the prune is done.

        Raises a `YarpError` when a step could not commit (`ArchiveBusy` is
        worth another try); what earlier steps committed stays.
        """
        if self.done:
            return True
        window = self._windows.get(self.phase)
        started = time.perf_counter()
        getattr(self, "_" + self.phase)(window.size)
        if window is not None:
            window.adapt(time.perf_counter() - started, self.budget_s)
        self.steps += 1
        return self.done

    def _next(self, phase: str, cursor: int | bytes = 0) -> None:
        self.phase, self._cursor = phase, cursor

    # --- phases ---------------------------------------------------------------------------

    def _count(self, size: int) -> None:
        conn = self.store.conn
        try:
            if self.last_id is None:
                self._cache = conn.execute("PRAGMA cache_size").fetchone()[0]
                conn.execute(f"PRAGMA cache_size = {-PRUNE_CACHE_KIB}")
                self.last_id = conn.execute("SELECT max(id) FROM tool_calls").fetchone()[0] or 0
            upto = min(self._cursor + size, self.last_id)
            self.total_calls += count_window(conn, self._cursor, upto, self.before_ms)
            if self.incomplete_before_ms is not None:
                self.total_incomplete += count_abandoned(conn, self._cursor, upto, self.incomplete_before_ms)
        except sqlite3.Error as exc:
            raise map_error(exc, "counting calls to prune") from None
        self._cursor = upto
        if upto >= self.last_id:
            found = (self.total_calls or self.total_incomplete) and not self.dry_run
            self._next("calls" if found else "payloads", 0 if found else b"")

    def _calls(self, size: int) -> None:
        upto = min(self._cursor + size, self.last_id)
        window = (self._cursor, upto, self.before_ms)
        deleted, digests = self.store.in_transaction("pruning calls", self._delete_calls, window)
        self.store.forget_payloads(digests)
        self.pruned_calls += deleted[0]
        self.pruned_incomplete += sum(deleted[1:])
        self._cursor = upto
        if upto >= self.last_id:
            self._next("payloads", b"")

    def _delete_calls(self, conn, window: tuple) -> tuple[list[int], list]:
        doomed = [(PRUNABLE, window)]
        if self.incomplete_before_ms is not None:
            doomed.append((ABANDONED, window[:2] + (self.incomplete_before_ms,) * 2))
        digests = list({row[0]: None for where, args in doomed for row in conn.execute(
            f"SELECT DISTINCT payload_sha256 FROM snapshots WHERE tool_call_id IN"
            f" (SELECT id FROM tool_calls WHERE {where})", args)})
        deleted = [conn.execute(f"DELETE FROM tool_calls WHERE {where}", args).rowcount for where, args in doomed]
        removed = 0
        for digest in digests:
            removed += conn.execute(_DELETE_ORPHAN, (digest,)).rowcount
        self.removed_payloads += removed
        return deleted, digests

    def _payloads(self, size: int) -> None:
        conn = self.store.conn
        try:
            row = conn.execute("SELECT sha256 FROM payloads WHERE sha256 > ? ORDER BY sha256 LIMIT 1 OFFSET ?",
                               (self._cursor, size - 1)).fetchone()
            end = row[0] if row is not None else b"\xff" * 33
            if self.dry_run:
                idle = -1 if self.incomplete_before_ms is None else self.incomplete_before_ms
                found = conn.execute(GOING, (self._cursor, end, self.last_id, self.before_ms, idle, idle)).fetchone()
                self.going = [int(total + part) for total, part in zip(self.going, found)]
            orphans = [] if self.dry_run else [r[0] for r in conn.execute(_ORPHANS, (self._cursor, end))]
        except sqlite3.Error as exc:
            raise map_error(exc, "looking for unreferenced payloads") from None
        if orphans:
            self.removed_payloads += self.store.in_transaction("removing unreferenced payloads",
                                                               _delete_orphans, orphans)
            self.store.forget_payloads(orphans)
        self._cursor = end
        if row is None and self.dry_run:
            self._next("done")
        elif row is None:
            self._next("vacuum")
            self.free_pages = self._free_pages()

    def _vacuum(self, size: int) -> None:
        left = 0
        if self.free_pages:
            try:
                self.store.incremental_vacuum(size)
                left = self._free_pages()
            except ArchiveBusy:
                raise
            except YarpError as exc:
                # The deletions committed; the next vacuum returns these pages.
                self.store.last_vacuum_error = exc
                self._next("done")
                return
            returned = self.free_pages - left
            if left and returned > self.vacuumed_pages:
                self.vacuumed_pages = returned
                return  # pages still free, and this step returned some: another step
            self.vacuumed_pages = max(self.vacuumed_pages, returned)
        self.store.last_vacuum_error = None
        self._next("done")

    def _free_pages(self) -> int:
        try:
            return self.store.conn.execute("PRAGMA freelist_count").fetchone()[0]
        except sqlite3.Error as exc:
            raise map_error(exc, "reading the archive's free pages") from None


def _delete_orphans(conn, orphans: list) -> int:
    return sum(conn.execute(_DELETE_ORPHAN, (digest,)).rowcount for digest in orphans)
