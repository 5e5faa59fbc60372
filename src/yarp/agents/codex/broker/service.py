"""The Codex hook service: one broker request per Codex hook event, one commit.

`Service` holds what the broker keeps between a session's events — the
calls being finished by a request in flight, each open call's transcript
mark (`evidence.Mark`), the work done ahead (`ahead.WorkAhead`) — and serves
each event: it reads the archive's state of the session's unfinished calls
(read-only), has the transcript read and the call this event finishes
prepared in the pool (`evidence.read_transcript`, `outcome.Finish`), builds
the operations of every call the event settles or begins or finishes
(`outcome`), and submits them as one composite request: one savepoint and
one commit per event, however many earlier calls it settles. The answer
carries the capped view when one replaces Codex's output
(`outcome.post_answer`) and a warning when the transcript could not be read.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict

import orjson

from yarp.agents.codex.broker.ahead import Ahead, WorkAhead
from yarp.agents.codex.broker.evidence import MAX_MARKED_CALLS, Mark, Reading, read_transcript
from yarp.agents.codex.broker.outcome import (
    Finish,
    Outcome,
    begin_operation,
    call_outcome,
    other_outcome,
    part_sources,
    post_answer,
    view_cap,
)
from yarp.agents.codex.hooks import POST, PRE, CodexEvent
from yarp.errors import YarpError
from yarp.agents.codex.transcripts.evidence import output_text
from yarp.wire import operations as ops

AGENT = "codex"
#: The name Codex gives its `exec_command` tool in hook events.
SHELL_TOOL = "Bash"


class Service:
    """Codex hook events in the broker: settle the session's earlier calls, then begin
    or finish this one, all in one composite request (one commit)."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm
        #: (session, call) pairs a request in flight is finishing: another event of
        #: the session must not finish them too before that commit is visible.
        self._finishing: set[tuple[str, str]] = set()
        #: How many requests that finish calls have left `_finishing` (committed or not): unchanged across
        #: a transcript reading, the archive's state read before it still stands.
        self._finished_requests = 0
        #: (session, call) -> how far the transcript was read for an open call, so that
        #: each event reads only what was appended since (the oldest forgotten first).
        self._marks: OrderedDict[tuple[str, str], Mark] = OrderedDict()
        #: The post events' work done ahead for the begun shell calls.
        self._ahead = WorkAhead(broker, self._marks, self._remember)

    async def serve(self, request, hook, codex_event: CodexEvent) -> bytes:
        """Answer one Codex hook event (`hooks.parse_event`'s): settle the session's open calls the transcript
        now proves, and begin or finish this one, in one composite request."""
        name, session_id, event = codex_event.name, codex_event.session_id, codex_event.call
        transcript = codex_event.transcript_path
        working = self._ahead.working(transcript) if name == POST else None
        if working is not None:  # its work may be this call's: wait for it rather than do it twice
            await asyncio.wait([working])
        session = ops.Session(AGENT, self.warm.account, session_id)
        current = event.call_id if event is not None else None
        finished_before = self._finished_requests
        known = self.warm.session_calls(session, current)
        pending = [call_id for call_id in known if call_id != current and self._open(session, known, call_id)]
        finishing = current if name == POST and event.tool_name == SHELL_TOOL and self._open(session, known, current) \
            else None
        begun = current if name == PRE and transcript is not None else None
        if begun is None and finishing is None and not (pending and transcript is not None):
            reading = Reading()  # nothing to read (a tool other than the shell, no earlier call open)
        else:
            sid = session.source_session_id
            marks = {call_id: self._marks.get((sid, call_id)) for call_id in pending}
            finishing_mark = self._marks.get((sid, finishing)) if finishing is not None else None
            finish = ahead = None
            if finishing is not None:
                finish = Finish(session, output_text(event.response), known[finishing][1], view_cap(hook, event))
                ahead = self._ahead.done((sid, finishing))
            # File I/O, and the cap and preparation of the call this event finishes, off the
            # loop: other clients' requests go on meanwhile.
            reading = await self.broker.loop.run_in_executor(
                self.broker._pool, functools.partial(read_and_prepare, transcript, begun, marks, finishing,
                                                     finishing_mark, finish, ahead))
            for call_id, mark in reading.marks.items():
                self._remember((sid, call_id), mark)
        # Another event of the session may have finished a call while the transcript
        # was read: decide on the archive's state as it is now, without awaiting
        # anything until the calls decided on are marked as being finished. A call
        # such a request finishes is in `_finishing` until it is committed (then
        # `_open` says no) and counted in `_finished_requests` when it leaves: the
        # archive is read again only when one left meanwhile. (Only other clients'
        # own operations could change the state otherwise, and they can as well
        # between this reading and the commit.)
        if self._finished_requests != finished_before:
            known = self.warm.session_calls(session, current)
        return await self._commit(request, hook, session, event, known, reading, transcript)

    def close(self) -> None:
        """At the broker's shutdown: stop the transcript watch and the work ahead still running."""
        self._ahead.close()

    def _remember(self, key: tuple[str, str], mark: Mark) -> None:
        """Keep a call's mark unless a later reading of the same file is kept already."""
        kept = self._marks.get(key)
        if kept is not None and (kept.path, kept.device, kept.inode) == (mark.path, mark.device, mark.inode) \
                and kept.offset > mark.offset:
            return
        self._marks[key] = mark
        self._marks.move_to_end(key)
        while len(self._marks) > MAX_MARKED_CALLS:
            self._marks.popitem(last=False)

    def _open(self, session: ops.Session, known: dict, call_id: str) -> bool:
        """Whether a call is begun, unfinished, and not being finished by a request in flight."""
        return known.get(call_id, ("",))[0] == "started" and (session.source_session_id, call_id) not in self._finishing

    async def _commit(self, request, hook, session: ops.Session, event, known: dict, reading: Reading,
                      transcript: str | None) -> bytes:
        """Build the event's operations and submit them as one composite request."""
        from yarp.broker.services.shared import PreparedParts, now_ms, prepare_composite
        from yarp.wire import protocol

        now = now_ms()
        main_parts = failure = None
        outcomes = [call_outcome(session, evidence, evidence.model_output, known[evidence.call_id][1], cap=0,
                                 now_ms=now) for evidence in reading.settled if self._open(session, known,
                                                                                           evidence.call_id)]
        main = None
        if event is not None and event.event == PRE:
            main = Outcome([begin_operation(session, event, reading.called, now_ms=now,
                                            deadline_at_ms=now + hook.deadline_ms)])
        elif event is not None and self._open(session, known, event.call_id):
            if event.tool_name != SHELL_TOOL:
                main = other_outcome(session, event, now)
            elif isinstance(reading.finished, tuple):  # prepared with the reading (`_read`)
                main, main_parts = reading.finished
            elif reading.finished is not None:
                main, failure = Outcome([]), reading.finished
            # else: not executed yet, left started; the next event of the session settles it
        if main is not None:
            outcomes.append(main)
        extra = {"warning": reading.warnings[0]} if reading.warnings else {}
        if not outcomes:
            return protocol.reply_ok(extra=extra or None)
        operations = [op for outcome in outcomes for op in outcome.operations]
        last = outcomes[-1].operations
        keys = {(session.source_session_id, op.source_call_id) for op in operations}
        finishes = any(isinstance(op, ops.FinishCall) for op in operations)
        self._finishing |= keys
        try:
            if failure is not None:
                raise failure
            if main_parts is None:
                prepared = await prepare_composite(self.broker, request, tuple(operations),
                                                   sources=part_sources(outcomes))
            else:  # the settled calls' parts, then the prepared ones of the call this event finishes
                settled = outcomes[:-1]
                head = await prepare_composite(self.broker, request, tuple(operations[:-len(main.operations)]),
                                               sources=part_sources(settled)) if settled else PreparedParts(())
                prepared = PreparedParts(head.parts + main_parts.parts)
            committed = await self.broker.submit_prepared(request, last, prepared, hook.deadline_ms)
        finally:
            self._finishing -= keys
            self._finished_requests += finishes
        for op in operations:
            if isinstance(op, ops.FinishCall):  # a finished call is never read for again
                self._marks.pop((session.source_session_id, op.source_call_id), None)
                self._ahead.unexpect((session.source_session_id, op.source_call_id))
        if event is not None and event.event == PRE and event.tool_name == SHELL_TOOL and transcript is not None:
            self._ahead.expect((session.source_session_id, event.call_id), transcript, view_cap(hook, event),
                               committed.archive_ref)
        if main is not None and main.view is not None:
            extra["answer"] = orjson.dumps(post_answer(main.view)).decode()
        return protocol.reply_ok(extra=extra or None)


def read_and_prepare(transcript: str | None, begun: str | None, marks: dict, finishing: str | None,
                     finishing_mark: Mark | None, finish: Finish | None, ahead: Ahead | None) -> Reading:
    """`read_transcript`, then (`finish`) the finishing call's outcome prepared (from the work
    done `ahead`, when it holds): run in the pool, a module function so a process pool can run it too.

    Whether the call is still open is decided after this, on the loop; an
    outcome prepared for a call another event finished meanwhile is dropped.
    """
    reading = read_transcript(transcript, begun=begun, pending=marks, finishing=finishing,
                              finishing_mark=finishing_mark)
    if finish is not None and reading.current is not None and reading.current.recorded:
        try:
            reading.finished = finish.prepare(reading.current, ahead)
        except YarpError as exc:  # the request's own failure, raised where it commits
            reading.finished = exc
    return reading
