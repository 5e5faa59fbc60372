"""Maintenance the writer runs between batches: a prune, one bounded step at a time.

A prune of a large archive takes minutes; in one transaction it held the
single writer that long, and every capture sent meanwhile missed its deadline
(an agent's hook waits 2 s for begin_call). The writer hands a `prune_before`
request to `Maintenance` instead of batching it, and alternates: one step of
the prune (`yarp.archive.prune.Pruner`, one transaction within a time budget),
then one batch of whatever was queued meanwhile, then the next step. With no
request waiting the steps run back to back. A capture waits for at most one
step and its own batch.

The prune's client hears how it stands: a progress frame when it begins and
then at least every `PRUNE_PROGRESS_INTERVAL_S` (``{"progress": {"phase",
"done", "total", "prunedCalls"}}``, never an acknowledgement), each of which
renews the client's wait; its one reply comes when the prune is done, with
the exact count. A client that left does not stop the prune: it runs to the
end and commits. The request's deadline applies to its start only.

A step that finds the archive busy is tried again after the next batch; any
other failure ends the prune with that error, naming how many calls were
deleted by then (those steps committed). A broker that shuts down stops its
prune between two steps and says so; a rerun finishes the job.
"""

from __future__ import annotations

import collections
import os
import time

from yarp import json_text
from yarp.archive.prune import Pruner
from yarp.archive.store import Outcome
from yarp.errors import ArchiveBusy, DeadlineExceeded, PruneInterrupted, ShuttingDown, YarpError
from yarp.limits import PRUNE_PROGRESS_INTERVAL_S, PRUNE_STEP_CALLS, PRUNE_STEP_MS
from yarp.wire import protocol

#: Internal settings: a prune step's time budget (ms) and most call ids per step.
STEP_MS_ENV = "YARP_BROKER_PRUNE_STEP_MS"
STEP_CALLS_ENV = "YARP_BROKER_PRUNE_CALLS"
#: How long the writer waits before it tries a busy step again.
_BUSY_PAUSE_S = 0.005


def _setting(environ, name: str, default: int) -> int:
    """A positive integer from the environment; anything else leaves the default (an internal knob)."""
    try:
        value = int(environ.get(name) or default)
    except ValueError:
        return default
    return value if value > 0 else default


class _Job:
    __slots__ = ("request", "pruner", "started", "told")

    def __init__(self, request) -> None:
        self.request = request
        self.pruner: Pruner | None = None
        self.started = 0.0
        #: When the client was last told how the prune stands (monotonic s).
        self.told = 0.0


class Maintenance:
    """The writer's prunes: queued in arrival order, run one step at a time between batches."""

    def __init__(self, writer, *, post, after_step, environ=os.environ) -> None:
        self.writer = writer
        self.broker = writer.broker
        self.store = writer.store
        self._post = post
        self._after_step = after_step
        self.step_ms = _setting(environ, STEP_MS_ENV, PRUNE_STEP_MS)
        self.step_calls = _setting(environ, STEP_CALLS_ENV, PRUNE_STEP_CALLS)
        self.jobs: collections.deque[_Job] = collections.deque()
        #: A batch ran since the last step: the next turn is the prune's.
        self.owed = False
        #: The last step committed: the next turn is the writer's checkpoint check, not another step.
        self._settle = False
        #: Set from the loop when the broker shuts down: stop between two steps.
        self.stopping = False

    @staticmethod
    def takes(request) -> bool:
        """Whether a queued request is maintenance (a prune), run by steps instead of in a batch."""
        env = request.envelope
        return env is not None and env.kind == "prune_before" and request.reply_to is None

    def add(self, request) -> None:
        """Queue a prune behind any other."""
        self.jobs.append(_Job(request))

    def due(self, queue_empty: bool) -> bool:
        """Whether the writer's next turn is a step: a prune runs and a batch went since the last step,
        or nothing else waits."""
        return bool(self.jobs) and (self.owed or queue_empty)

    def status(self) -> dict | None:
        """How the running prune stands, for the broker's status (read on the loop while the writer
        steps it); None when none runs."""
        try:
            pruner = self.jobs[0].pruner
        except IndexError:  # the last one just ended
            return None
        return pruner.progress() if pruner is not None else None

    def step(self) -> None:
        """One turn of the first prune: a step (beginning it if new), or the checkpoint check after
        one; answer the prune when it ends. A checkpoint is a turn of its own, so a batch waiting
        behind a step does not also wait for the checkpoint after it."""
        batch_ran, self.owed = self.owed, False
        if self.stopping:
            self.abandon()
            return
        if self._settle:
            self._settle = False
            if not batch_ran:  # (a batch's commit made that check itself)
                self._after_step()
                return
        job = self.jobs[0]
        if job.pruner is None and not self._begin(job):
            return
        writer = self.writer
        writer.in_transaction = True
        try:
            done = job.pruner.step()
        except ArchiveBusy:
            self.broker.stats.retries += 1
            time.sleep(_BUSY_PAUSE_S)
            return
        except YarpError as exc:
            self._end(job, _stopped_by(exc, job.pruner.pruned_calls), False)
            return
        except Exception as exc:  # an invariant broke: answer boundedly, keep writing
            self._end(job, self.broker.fault(exc, job.request), False)
            return
        finally:
            writer.in_transaction = False
        self._settle = not done
        if done:
            if not writer.in_place():
                # Its steps went into a file nobody reads any more: no count is acknowledged.
                self._end(job, writer.replaced_error(), False)
                return
            pruner = job.pruner
            self.broker.log_threadsafe("prune_done", calls=pruner.pruned_calls, payloads=pruner.removed_payloads,
                                       pages=pruner.vacuumed_pages, steps=pruner.steps,
                                       ms=int((time.monotonic() - job.started) * 1000))
            pruned, extra = pruner.answer()
            self._end(job, protocol.reply_of(Outcome(pruned_calls=pruned, extra=extra)), True)
            self._after_step()  # answered first: the checkpoint is not the client's wait
        elif time.monotonic() - job.told >= PRUNE_PROGRESS_INTERVAL_S:
            self._tell(job)

    def abandon(self) -> None:
        """The broker stops: answer every prune, saying how far a begun one got (its steps committed)."""
        while self.jobs:
            job = self.jobs[0]
            if job.pruner is None:
                error = ShuttingDown("the broker stopped before the prune began; nothing was deleted")
            else:
                error = PruneInterrupted(f"the broker stopped during the prune after {job.pruner.pruned_calls}"
                                         " call(s) were deleted; run the same prune again to finish it")
            self._end(job, error, False)

    def _begin(self, job: _Job) -> bool:
        request = job.request
        if request.deadline <= time.monotonic():
            self._end(job, DeadlineExceeded("request deadline expired before the prune began"), False)
            return False
        op = request.prepared.operation
        job.pruner = Pruner(self.store, op.timestamp_ms, step_ms=self.step_ms, max_calls=self.step_calls,
                            incomplete_before_ms=op.incomplete_before_ms, dry_run=op.dry_run)
        job.started = time.monotonic()
        self._tell(job)
        return True

    def _tell(self, job: _Job) -> None:
        job.told = time.monotonic()
        body = json_text.encode({"progress": job.pruner.progress()})
        self.broker.loop.call_soon_threadsafe(_send_progress, job.request, body)

    def _end(self, job: _Job, outcome, committed: bool) -> None:
        self.jobs.popleft()
        if job.pruner is not None:
            job.pruner.close()
        self._post([(job.request, outcome)], committed)


def _send_progress(request, body: bytes) -> None:
    """Loop side: one progress frame to a client still waiting for its prune (a closed one gets nothing)."""
    if not request.settled:
        request.conn.send(body)


def _stopped_by(error: YarpError, pruned: int) -> YarpError:
    """A step's failure, saying how many calls committed steps had deleted before it."""
    if not pruned:
        return error
    try:
        return type(error)(f"the prune stopped after {pruned} call(s) were deleted: {error.message}")
    except TypeError:
        return error
