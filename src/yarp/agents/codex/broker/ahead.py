"""The Codex post event's work done ahead: when the transcript shows the execution, before the event comes.

A Codex `PostToolUse` for a large output is the costliest hook event: the
view is capped and the output, Codex's cut and the view are hashed and
compressed before its commit. Codex writes the command's execution to the
transcript before it starts the post hook process, so for each shell call it
has begun the broker watches the transcript (`watch.TranscriptWatch`) and,
as soon as the execution is written, reads it from the call's mark and does
that work in its pool (`work_ahead`, `Ahead`), while that process starts.
The post event uses the work when its own reading shows the very same
record, cap and reference (`Ahead.holds`), and does it itself otherwise
(`outcome.Finish.prepare`).

Only an optimisation: nothing here is needed for a call to be archived, and
any failure (no inotify, an unreadable transcript, the pool shut down) leaves
the post event to do all the work. `WorkAhead` keeps the calls expecting it
(at most `evidence.MAX_MARKED_CALLS`, the work of at most `MAX_WORKED_AHEAD`)
and runs one task per transcript.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from yarp.agents.codex.broker.evidence import MAX_MARKED_CALLS, Mark, read_since
from yarp.agents.codex.broker.outcome import capped_view
from yarp.errors import YarpError
from yarp.agents.codex.transcripts.evidence import CallEvidence, result_record, source_bytes

#: Calls whose post event's work done ahead is held (each about twice its output, at most 64 KiB).
MAX_WORKED_AHEAD = 32


class Ahead:
    """A post event's costly work done before the event came: when the transcript first showed
    the call executed (`work_ahead`), while Codex was still starting the post hook process.

    `view` and `result_after` (None: the result stands unchanged) as `call_outcome` makes
    them for this output, exit code, cap and reference; `results` holds `result_after`'s
    payload for `services.prepare_parts`; `source` is the complete output's payload.
    """

    __slots__ = ("output", "exit_code", "status", "form", "cap", "archive_ref", "view", "result_after", "results",
                 "source")

    def __init__(self, evidence: CallEvidence, cap: int, archive_ref: str) -> None:
        from yarp.archive.codec import bytes_payload, json_payload

        self.output, self.exit_code, self.status = evidence.output, evidence.exit_code, evidence.status
        self.form = evidence.form
        self.cap, self.archive_ref = cap, archive_ref
        self.view = capped_view(evidence, cap=cap, archive_ref=archive_ref)
        self.result_after = None if self.view is None else {**result_record(evidence, None), "output": self.view}
        self.results = {} if self.result_after is None else {
            id(self.result_after): (self.result_after, json_payload(self.result_after))}
        self.source = bytes_payload(source_bytes(evidence)) if evidence.complete else None

    def holds(self, evidence: CallEvidence, cap: int, archive_ref: str | None) -> bool:
        """Whether this work is what the post event would do for `evidence` (the same
        output and exit code: a later record of the call supersedes what was seen)."""
        return (evidence.recorded and evidence.output == self.output and evidence.exit_code == self.exit_code
                and evidence.status == self.status and evidence.form == self.form and cap == self.cap
                and archive_ref == self.archive_ref)


def work_ahead(transcript: str, marks: dict[str, Mark], expected: dict[str, tuple[int, str]]
               ) -> tuple[dict[str, Mark], dict[str, Ahead]]:
    """Read the calls of `marks` from their marks and do the post event's work (`Ahead`) for each one
    the transcript now shows executed (`expected`: call -> (cap, reference)). The marks at the end of
    this reading come back too. Runs in the pool; raises `ValidationError` as `read_since` does."""
    found, ends = read_since(transcript, marks)
    ahead = {call_id: Ahead(evidence, *expected[call_id]) for call_id, evidence in found.items()
             if evidence.recorded}
    return ends, ahead


class Expected:
    """A begun shell call's post event, as far as it is known before it comes: its transcript,
    the cap and the call's reference, and the work done for it ahead (`Ahead`), once done."""

    __slots__ = ("transcript", "cap", "archive_ref", "ahead")

    def __init__(self, transcript: str, cap: int, archive_ref: str) -> None:
        self.transcript = transcript
        self.cap = cap
        self.archive_ref = archive_ref
        self.ahead: Ahead | None = None


class WorkAhead:
    """The work ahead for one broker's begun shell calls: which calls expect it (`Expected`),
    the transcript watch that says when to try, and one task per transcript doing it.

    `marks` is the service's own mapping (session, call) -> `Mark`: the work
    ahead reads each call from its mark and keeps the marks its reading ends
    at through `remember`, so that the post event reads no further.
    """

    def __init__(self, broker, marks: OrderedDict, remember) -> None:
        self.broker = broker
        self._marks = marks
        self._remember = remember
        #: (session, call) -> Expected for a shell call begun and not yet finished: what its
        #: post event's work needs, and that work once done ahead (the oldest forgotten first).
        self._expected: OrderedDict[tuple[str, str], Expected] = OrderedDict()
        #: Transcript path -> the task doing work ahead for its calls (one at a time per file).
        self._working: dict[str, asyncio.Task] = {}
        #: Transcripts written again while their task ran: it is run once more.
        self._again: set[str] = set()
        self._watch = None

    def working(self, transcript: str | None) -> asyncio.Task | None:
        """The task doing work ahead for `transcript`'s calls right now, if any: a post event waits for it."""
        return self._working.get(transcript)

    def done(self, key: tuple[str, str]) -> Ahead | None:
        """The work done ahead for the call `key`, if it is held."""
        expected = self._expected.get(key)
        return expected.ahead if expected is not None else None

    def expect(self, key: tuple[str, str], transcript: str, cap: int, archive_ref: object) -> None:
        """A shell call was begun: watch its transcript, so that its execution, once written, is
        capped and prepared while Codex starts the post hook (`_work`)."""
        if not isinstance(archive_ref, str):
            return
        if self._watch is None:
            from yarp.agents.codex.broker.watch import TranscriptWatch

            self._watch = TranscriptWatch(self.broker.loop, self._written)
        if not self._watch.watch(transcript):
            return
        self._expected[key] = Expected(transcript, cap, archive_ref)
        self._expected.move_to_end(key)
        while len(self._expected) > MAX_MARKED_CALLS:
            self.unexpect(next(iter(self._expected)))

    def unexpect(self, key: tuple[str, str]) -> None:
        """The call is finished (or forgotten): no more work ahead for it. Its transcript stays
        watched (the session's next call is begun soon; removing an inotify watch waits for
        the kernel's grace period, milliseconds at times) until more recent ones push it out."""
        self._expected.pop(key, None)

    def _written(self, transcript: str) -> None:
        """The transcript was written (on the loop): do the work ahead for its calls, one task per file."""
        if transcript in self._working:
            self._again.add(transcript)
            return
        if any(e.transcript == transcript and e.ahead is None for e in self._expected.values()):
            self._working[transcript] = self.broker.loop.create_task(self._work(transcript))

    async def _work(self, transcript: str) -> None:
        """Read the transcript's expecting calls from their marks (in the pool) and keep the work
        done for those it shows executed. Only an optimisation: any failure leaves the post event
        to do the work itself."""
        try:
            waiting = [key for key, e in self._expected.items() if e.transcript == transcript and e.ahead is None
                       and self._marks.get(key) is not None]  # never a scan of the whole file
            if not waiting:
                return
            sid = waiting[0][0]
            marks = {call_id: self._marks[(s, call_id)] for s, call_id in waiting if s == sid}
            wants = {call_id: (self._expected[(sid, call_id)].cap, self._expected[(sid, call_id)].archive_ref)
                     for call_id in marks}
            try:
                ends, done = await self.broker.loop.run_in_executor(self.broker._pool, work_ahead, transcript,
                                                                    marks, wants)
            except (YarpError, OSError, RuntimeError):  # RuntimeError: the pool is shut down with the broker
                return
            for call_id, mark in ends.items():
                if (sid, call_id) in self._expected:  # not finished meanwhile
                    self._remember((sid, call_id), mark)
            for call_id, ahead in done.items():
                expected = self._expected.get((sid, call_id))
                if expected is not None and expected.transcript == transcript:
                    expected.ahead = ahead
            held = [e for e in self._expected.values() if e.ahead is not None]
            for expected in held[:max(0, len(held) - MAX_WORKED_AHEAD)]:
                expected.ahead = None  # the oldest calls' work: their post event does it again
        finally:
            del self._working[transcript]
            if transcript in self._again:
                self._again.discard(transcript)
                self._written(transcript)

    def close(self) -> None:
        """At the broker's shutdown: stop watching transcripts and the work ahead still running
        (only an optimisation; the events it was for are answered or never come)."""
        self._expected.clear()  # nothing more to do ahead: a cancelled task starts no other
        self._again.clear()
        for task in list(self._working.values()):
            task.cancel()
        if self._watch is not None:
            self._watch.close()
