"""Codex CLI hooks: exact output from the session transcript, YARP's capped view for the model.

Measured with the real Codex CLI 0.171.0 (docs/decisions.md, "Codex: capture from
the transcript, replace the view after the command"):

- The model's `exec_command {"cmd"}` reaches hooks as tool `Bash` with
  `{"command"}`; the hook never sees `sandbox_permissions` or `justification`.
  A rewrite needs `permissionDecision: "allow"`, which a hook cannot give
  without knowing whether the call asked to leave the sandbox, and a rewritten
  `yarp run` cannot spool inside Codex's read-only sandbox. So nothing is
  rewritten: Codex runs the command under the user's own sandbox and approvals.
  The model's own call (`function_call`, `exec_command` and its arguments) is
  in the transcript before `PreToolUse` runs; `input/before` holds it.
- `PostToolUse` carries no exit code and an output Codex already cut to about
  10 KB. The complete output and the exit code are in the session transcript
  (`transcript_path`, an `event_msg` / `item_completed` line whose `item` is a
  `CommandExecution` with `id` = the call id, `aggregated_output`, `exit_code`,
  `status`), written before the post hook runs. Codex persists at most 64 KiB
  of an output (head and tail); a cut one is archived as an incomplete
  `result_text`, never as the exact source output.
- A `PostToolUse` answer `{"decision": "block", "reason": T}` replaces the
  whole tool output the model receives with T. That is how the model gets
  YARP's capped view with its `yr_` marker; the call itself already ran.
- A call Codex refuses or that is still running at `yield_time_ms` gets no
  post event. The next hook event of the session (any `PreToolUse`,
  `PostToolUse`, `Stop` or `SessionEnd`) settles it from the transcript: a
  `CommandExecution` finishes it with its exit code; a tool output the model
  got without any execution finishes it as not executed, an error. Codex kills
  commands still running when the session ends and records them (exit code
  137) before `SessionEnd`; only a call the transcript never completes (Codex
  itself killed) stays `started`, and `yarp archive verify` lists it.

All of this runs in the warm broker (`CodexService`, reached through
`yarp.broker.services.hooks`): `yarp hook codex` is the same thin client as Claude
Code's (`yarp.clients.hook`) and only forwards the event's bytes with the cap and
pruning switch of its configuration. The broker reads the transcript the
event names (no-follow, bounded, a regular file owned by the broker's own
user), builds every operation of the event, and commits them as one composite
request: one savepoint and one commit per event, however many earlier calls
it settles. The broker remembers, for each call it has begun and not yet
finished, where its reading of the transcript ended (`Mark`), so each event
reads only what Codex appended since. Codex writes a command's execution to
the transcript before it starts the post hook process, so the broker watches
the transcript of each begun shell call (`yarp.broker.services.watch`) and,
as soon as the execution is written, caps the view and prepares the payloads
(`work_ahead`) while that process starts; the post event uses that work when
its own reading shows the same record, and does it itself otherwise. Besides
the transcript reader (`read_evidence` and `read_since`, run in the broker's
pool) and `CodexService` (the archive's state and the request), everything
here is a function over plain data.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from yarp.wire import operations as ops
from yarp import private_files
from yarp.archive.codec import parse_json
from yarp.errors import ValidationError, YarpError
from yarp.limits import MAX_IDENTITY_CHARS, MAX_NAME_CHARS
from yarp.transcripts.codex_evidence import (CallEvidence, output_source, output_text, record_evidence,
                                             result_record, source_bytes)

AGENT = "codex"
#: The name Codex gives its `exec_command` tool in hook events.
SHELL_TOOL = "Bash"
PRE = "PreToolUse"
POST = "PostToolUse"
#: Events that only settle the session's earlier calls.
SETTLE_ONLY = ("Stop", "SessionEnd")
#: A transcript larger than this is not scanned (the call keeps Codex's own result).
MAX_TRANSCRIPT_BYTES = 512 * 1024 * 1024
#: The end of the transcript read next for a call's records (about 128 outputs as Codex keeps them).
TAIL_BYTES = 8 * 1024 * 1024
#: The end read before that: a call's records are nearly always in it (the call just made).
FIRST_TAIL_BYTES = 256 * 1024
#: Open calls whose transcript mark the broker keeps (each holds at most an output of 64 KiB and
#: the text the model got); one forgotten is read from the transcript's end, else its start, again.
MAX_MARKED_CALLS = 512
#: Calls whose post event's work done ahead is held (each about twice its output, at most 64 KiB).
MAX_WORKED_AHEAD = 32
#: How much of the transcript is held in memory at once while it is scanned (plus one line).
SCAN_BLOCK_BYTES = 8 * 1024 * 1024


# --- the transcript ------------------------------------------------------------------


def _recorded(evidence: CallEvidence) -> bool:
    return evidence.recorded


def _settled(evidence: CallEvidence) -> bool:
    return evidence.settled


def read_evidence(transcript_path: str, call_ids: list[str] | tuple[str, ...], *,
                  enough=_recorded, tail_bytes: int = TAIL_BYTES, tail_only: bool = False) -> dict[str, CallEvidence]:
    """Evidence for `call_ids` from a Codex session transcript (JSONL).

    Reads only complete lines, never follows a symlink, refuses a file that is
    not regular, not owned by this process's user (the broker reads only what
    the user who runs it could) or larger than `MAX_TRANSCRIPT_BYTES`
    (`ValidationError`), and
    parses only lines that name one of the wanted ids. The last record of each
    kind wins (a later `item_completed` supersedes an earlier one).

    The records of a call just made are at the end of the file: the last
    `FIRST_TAIL_BYTES`, then the last `tail_bytes` are read first, and the
    whole file only when the tail does not hold `enough` evidence for every id
    (a record in the tail is later than any before it, so the tail's answer is
    the whole file's), unless `tail_only`. The broker reads a transcript on
    every Codex event, so the common case reads a few hundred KiB.
    """
    wanted = set(call_ids)
    if not wanted:
        return {}
    fd, st = _open_transcript(transcript_path)
    try:
        found = None
        for found in _tails(fd, st.st_size, wanted, tail_bytes):
            if all(enough(evidence) for evidence in found.values()):
                return found
        if tail_only and found is not None:
            return found
        return _scan(fd, 0, st.st_size, wanted, _needles(wanted))
    finally:
        os.close(fd)


def _tails(fd: int, size: int, wanted: set[str], tail_bytes: int = TAIL_BYTES):
    """The evidence in the transcript's last `FIRST_TAIL_BYTES`, then its last `tail_bytes`
    (each only while the file is longer)."""
    for tail in sorted({min(FIRST_TAIL_BYTES, tail_bytes), tail_bytes}):
        if size <= tail:
            return
        yield _scan(fd, size - tail, size, wanted, _needles(wanted))


def _open_transcript(transcript_path: str) -> tuple[int, os.stat_result]:
    """(fd, fstat) of a transcript the broker may read: no-follow, a regular file of ours, bounded."""
    try:
        fd, st = private_files.open_for_reading(transcript_path, private=False)
    except private_files.PrivatePathProblem as exc:
        raise ValidationError(f"the Codex transcript {exc.problem}") from None
    except OSError:
        raise ValidationError("the Codex transcript cannot be opened") from None
    if st.st_size > MAX_TRANSCRIPT_BYTES:
        os.close(fd)
        raise ValidationError(f"the Codex transcript is larger than {MAX_TRANSCRIPT_BYTES} bytes")
    return fd, st


def _needles(wanted) -> list[bytes]:
    return [json.dumps(call_id).encode("utf-8") for call_id in wanted]


@dataclass(frozen=True, slots=True)
class Mark:
    """How far one transcript has been read for one open call, and what that reading found.

    A call's execution and the tool output the model got are written after its
    `PreToolUse` was answered, so a call's reading starts at the transcript's
    size then; each later reading starts where the last one ended, and records
    are absorbed in file order as if the whole range were read at once.
    """

    path: str
    device: int
    inode: int
    offset: int
    fields: tuple[tuple[str, Any], ...] = ()

    def holds(self, path: str, st: os.stat_result) -> bool:
        """Whether this mark is of the file `st` describes, which has not shrunk since."""
        return (self.path, self.device, self.inode) == (path, st.st_dev, st.st_ino) and self.offset <= st.st_size


def mark_at_end(transcript_path: str) -> Mark | None:
    """A mark at the transcript's current end (for a call whose `PreToolUse` is being answered), or None."""
    try:
        fd, st = _open_transcript(transcript_path)
    except ValidationError:
        return None
    os.close(fd)
    return Mark(transcript_path, st.st_dev, st.st_ino, st.st_size)


def read_since(transcript_path: str, marks: dict[str, Mark | None]) -> tuple[dict[str, CallEvidence], dict[str, Mark]]:
    """Evidence for the calls of `marks`, reading each only from its mark (the whole file without one),
    and the marks at the end of this reading.

    One pass from the earliest mark: a record before a call's own mark was
    absorbed into that mark already, and absorbing it again before the later
    records leaves the same last record of each kind. Calls without a mark (the
    broker started since their `PreToolUse`) are settled from the transcript's
    end when it settles them all, as `read_evidence` does, and read from the
    start otherwise. Raises `ValidationError` like `read_evidence`.
    """
    fd, st = _open_transcript(transcript_path)
    try:
        starts = {call_id: mark if mark is not None and mark.holds(transcript_path, st) else None
                  for call_id, mark in marks.items()}
        unmarked = {call_id for call_id, mark in starts.items() if mark is None}
        evidence: dict[str, CallEvidence] = {}
        if unmarked:
            for probe in _tails(fd, st.st_size, unmarked):
                if all(found.settled for found in probe.values()):
                    evidence = probe
                    break
        found = {call_id: dict(mark.fields) if mark is not None else {} for call_id, mark in starts.items()
                 if call_id not in evidence}
        end = st.st_size
        if found:
            start = min((starts[call_id].offset if starts[call_id] is not None else 0) for call_id in found)
            end = _scan_lines(fd, start, st.st_size, _needles(found), found)
    finally:
        os.close(fd)
    evidence.update((call_id, CallEvidence(call_id, **fields)) for call_id, fields in found.items())
    # A mark ends after the last whole line read: a line still being written is read whole next time.
    ends = {call_id: Mark(transcript_path, st.st_dev, st.st_ino, end, tuple(fields.items()))
            for call_id, fields in found.items()}
    return evidence, ends


def _scan(fd: int, start: int, size: int, wanted: set[str], needles: list[bytes]) -> dict[str, CallEvidence]:
    """The evidence in the whole lines between `start` and `size` (`_scan_lines`)."""
    found: dict[str, dict] = {call_id: {} for call_id in wanted}
    _scan_lines(fd, start, size, needles, found)
    return {call_id: CallEvidence(call_id, **fields) for call_id, fields in found.items()}


def _scan_lines(fd: int, start: int, size: int, needles: list[bytes], found: dict[str, dict]) -> int:
    """Absorb into `found` (fields per wanted id) the whole lines between `start` and `size`
    (the size checked at open: a line still being written after it is not read), a block at
    a time; the offset where the last whole line read ends (`start` if none was)."""
    # From inside the file, the byte before `start` says whether a whole line begins there.
    position = start - 1 if start else 0
    skip = bool(start)
    carry = b""
    while position < size:
        block = os.pread(fd, min(SCAN_BLOCK_BYTES, size - position), position)
        if not block:
            break  # the file shrank: what was read is all there is
        position += len(block)
        data = carry + block if carry else block
        begin = 0
        if skip:
            begin = data.find(b"\n") + 1
            if not begin:
                carry = data
                continue
            skip = False
        end = data.rfind(b"\n", begin) + 1
        if end:
            _match(data, begin, end, needles, found)
            carry = data[end:]
        else:
            carry = data[begin:]
    return max(start, position - len(carry))


def _match(data: bytes, begin: int, end: int, needles: list[bytes], found: dict[str, dict]) -> None:
    """Absorb, in file order, each whole line in `data[begin:end]` that names a wanted id."""
    lines = set()
    for needle in needles:
        at = data.find(needle, begin, end)
        while at != -1:
            line_start = max(begin, data.rfind(b"\n", begin, at) + 1)
            line_end = data.find(b"\n", at, end) + 1
            lines.add((line_start, line_end))
            at = data.find(needle, line_end, end)
    for line_start, line_end in sorted(lines):
        _absorb(data[line_start:line_end], found)


def _absorb(line: bytes, found: dict[str, dict]) -> None:
    """Absorb one line into the fields of the call it names, when that call is wanted (`record_evidence`)."""
    try:
        record = parse_json(line)  # a 50 KB output line parses in a sixth of `json`'s time
    except ValueError:
        return
    hit = record_evidence(record)
    if hit is not None and hit[0] in found:
        found[hit[0]].update(hit[1])


def _called(evidence: CallEvidence) -> bool:
    return evidence.arguments is not None


def model_call(evidence: CallEvidence | None, event) -> tuple[str, Any]:
    """(tool name, input) of the call as the model made it, else as the hook event shows it.

    Codex presents `exec_command {"cmd", "yield_time_ms", "sandbox_permissions", …}`
    to hooks as `Bash {"command"}`; the transcript's `function_call` keeps the
    model's own name and arguments, which are what `input/before` must hold.
    """
    if evidence is not None and evidence.arguments is not None and 0 < len(evidence.tool_name or "") <= MAX_NAME_CHARS:
        try:
            arguments = json.loads(evidence.arguments)
        except ValueError:
            arguments = evidence.arguments
        return evidence.tool_name, arguments
    return event.tool_name, event.tool_input


# --- what is archived and what the model sees ----------------------------------------


def is_recovery(command: object) -> bool:
    """Whether a shell command is `yarp search` / `yarp read`, whose output is never capped."""
    if not isinstance(command, str) or "yarp" not in command:
        return False
    from yarp.view.plan import RECOVERY_COMMANDS, simple_argv

    argv, _ = simple_argv(command)
    return bool(argv) and os.path.basename(argv[0]) == "yarp" and len(argv) > 1 and argv[1] in RECOVERY_COMMANDS


def capped_view(evidence: CallEvidence, *, cap: int, archive_ref: str) -> str | None:
    """The text that replaces Codex's tool output, or None to leave Codex's own.

    Only an executed command whose complete output is over the cap is replaced:
    Codex's header line for the exit code, then the output capped exactly as
    every YARP result is (head, marker naming `source_output` and the call's
    reference, tail).
    """
    if not evidence.recorded or cap <= 0:
        return None
    data = source_bytes(evidence)
    if len(data) <= cap:
        return None
    from yarp.view.cap import cap_text

    source, completeness = output_source(evidence)
    capped = cap_text(data, cap=cap, archive_ref=archive_ref, source=source, completeness=completeness)
    code = "unknown" if evidence.code is None else str(evidence.code)
    return f"Process exited with code {code}\nOutput:\n{capped.decode('utf-8', 'replace')}"


def post_answer(view: str) -> dict:
    """The `PostToolUse` answer that replaces the whole tool output the model receives."""
    return {"decision": "block", "reason": view}


class Outcome:
    """The operations that finish one call, in order, and what goes with them.

    `source`: the complete output the call's `result_before` stores as
    `source_output/before` (held in memory: it came from the transcript, not
    from a file). `view`: the text that replaces the model's tool output, or
    None when Codex's own stands.
    """

    __slots__ = ("operations", "source", "view")

    def __init__(self, operations: list, source: bytes | None = None, view: str | None = None) -> None:
        self.operations = operations
        self.source = source
        self.view = view


def call_outcome(session: ops.Session, evidence: CallEvidence, shown: str | None, archive_ref: str | None, *,
                 cap: int, now_ms: int, ahead: Ahead | None = None) -> Outcome:
    """How a call is finished from its evidence (`cap` 0: Codex's own view stands).

    Executed: raw result with the output the transcript holds as
    `CallEvidence.stored_output` says (the complete output as source output,
    a cut one as an incomplete `result_text`, none when only the model's
    output proved the run); then the visible result (YARP's capped view when
    the output is over the cap) and the finish, an error as
    `CallEvidence.is_error` says. Not executed (refused, blocked): raw result
    and finish as an error, no source output and no visible result. `ahead`:
    the view and visible result computed for this evidence, cap and reference
    already (`Ahead.holds`).
    """
    call_id = evidence.call_id
    record = result_record(evidence, shown)
    if not evidence.executed:
        return Outcome([ops.ResultBefore(session, call_id, record, now_ms),
                        ops.FinishCall(session, call_id, record, evidence.is_error, False, now_ms)])
    if ahead is not None:
        view, result_after = ahead.view, ahead.result_after or record
    else:
        view = capped_view(evidence, cap=cap, archive_ref=archive_ref) if archive_ref else None
        result_after = record if view is None else {**record, "output": view}
    operations: list = [ops.ResultBefore(session, call_id, record, now_ms)]
    source = None
    stored = evidence.stored_output()
    if stored is not None:
        subject, completeness, text = stored
        if subject == "source_output":
            source = source_bytes(evidence)
        else:
            operations.append(ops.ResultText(session, call_id, text, completeness, now_ms))
    operations += [ops.StageResult(session, call_id, result_after, evidence.is_error, now_ms),
                   ops.FinishCall(session, call_id, result_after, evidence.is_error, True, now_ms)]
    return Outcome(operations, source, view)


class Finish:
    """How the call of a post event is finished if it is still open after the transcript is read:
    what is known before the reading, so that `prepare` runs in the pool right after it."""

    __slots__ = ("session", "shown", "archive_ref", "cap")

    def __init__(self, session: ops.Session, shown: str | None, archive_ref: str | None, cap: int) -> None:
        self.session = session
        self.shown = shown
        self.archive_ref = archive_ref
        self.cap = cap

    def prepare(self, evidence: CallEvidence, ahead: Ahead | None = None) -> tuple[Outcome, Any]:
        """`call_outcome` and its prepared parts (`services.prepare_parts`, raising the same errors),
        with what `ahead` holds for this very evidence, cap and reference taken as it is.

        Capping the view and hashing and compressing the output are most of a
        post event's work; done here, off the loop, other clients' requests go
        on meanwhile. (Preparing the raw half in a second worker while this one
        caps the view measured no faster: both halves hold the GIL most of the time.)
        """
        from yarp.broker.services.shared import now_ms, prepare_parts

        if ahead is not None and not ahead.holds(evidence, self.cap, self.archive_ref):
            ahead = None
        outcome = call_outcome(self.session, evidence, self.shown, self.archive_ref, cap=self.cap, now_ms=now_ms(),
                               ahead=ahead)
        sources: dict = _sources([outcome])
        if ahead is not None and ahead.source is not None and sources:
            sources = {index: ahead.source for index in sources}
        return outcome, prepare_parts(tuple(outcome.operations), sources, ahead.results if ahead else None)


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


def _sources(outcomes: list[Outcome]) -> dict[int, bytes]:
    """The outcomes' source outputs by the index of their part in the outcomes' operations joined."""
    sources: dict[int, bytes] = {}
    index = 0
    for outcome in outcomes:
        if outcome.source is not None:
            sources[index] = outcome.source
        index += len(outcome.operations)
    return sources


def other_outcome(session: ops.Session, event, now_ms: int) -> Outcome:
    """A tool other than the shell (patches, MCP tools): Codex's post event is its only
    evidence, and Codex sends none for a failure, so the result stands as it came."""
    response = event.response
    return Outcome([ops.ResultBefore(session, event.call_id, response, now_ms),
                    ops.StageResult(session, event.call_id, response, False, now_ms),
                    ops.FinishCall(session, event.call_id, response, False, True, now_ms)])


def begin_operation(session: ops.Session, event, evidence: CallEvidence | None, *, now_ms: int,
                    deadline_at_ms: int) -> ops.BeginCall:
    """The call as the model made it (nothing is rewritten: input before = after)."""
    tool_name, tool_input = model_call(evidence, event)
    meta = ops.CallMeta(source_call_id=event.call_id, tool_name=tool_name, started_at_ms=now_ms,
                        requires_streams=False, model=event.model, working_directory=event.cwd)
    return ops.BeginCall(session, meta, tool_input, tool_input, now_ms, deadline_at_ms)


def _command(event) -> object:
    return event.tool_input.get("command") if isinstance(event.tool_input, dict) else None


def _cap(hook, event) -> int:
    """The cap of the view of the shell call `event` finishes: 0 (Codex's own view) without
    pruning and for `yarp search`/`yarp read`, whose output is never capped."""
    return hook.cap_bytes if hook.pruning and not is_recovery(_command(event)) else 0


class Reading:
    """What the transcript says for one event, read off the broker's loop (`read_transcript`)."""

    __slots__ = ("called", "settled", "current", "warnings", "marks", "finished")

    def __init__(self) -> None:
        self.called: CallEvidence | None = None
        self.settled: list[CallEvidence] = []
        self.current: CallEvidence | None = None
        self.warnings: list[str] = []
        #: Where the reading of each call read ended (a call just begun: the transcript's end).
        self.marks: dict[str, Mark] = {}
        #: (outcome, prepared parts) finishing `current` (`Finish.prepare`), or the error preparing them raised.
        self.finished: tuple | YarpError | None = None


def read_transcript(transcript: str | None, *, begun: str | None, pending: dict[str, Mark | None],
                    finishing: str | None, finishing_mark: Mark | None = None) -> Reading:
    """The evidence one event needs: the model's call for a call just begun (`begun`,
    the tail only: never a scan of a long transcript before a command runs), the
    earlier calls that can be settled now (`pending`, each read from its mark), and
    the execution of the call a post event finishes (`finishing`; from its mark
    when there is one, else the tail first). Blocking file I/O: run in the pool."""
    reading = Reading()
    if transcript is not None and begun is not None:
        mark = mark_at_end(transcript)
        if mark is not None:
            reading.marks[begun] = mark
        try:
            reading.called = read_evidence(transcript, [begun], enough=_called, tail_only=True)[begun]
        except YarpError:
            pass  # the hook's view of the input is still worth archiving
    marked = dict(pending)
    if finishing is not None and finishing_mark is not None:
        marked[finishing] = finishing_mark
    if marked and transcript is not None:
        try:
            found, ends = read_since(transcript, marked)
            reading.marks.update(ends)
        except YarpError as exc:
            if pending:
                reading.warnings.append(f"the Codex transcript is unreadable; earlier calls stay incomplete: "
                                        f"{exc.message}")
            if finishing in marked:
                reading.warnings.append(f"the Codex transcript is unreadable; the call stays incomplete: {exc.message}")
        else:
            reading.settled = [found[call_id] for call_id in pending if found[call_id].settled]
            reading.current = found.get(finishing) if finishing in marked else None
    if finishing is not None and finishing not in marked:
        if transcript is None:
            reading.warnings.append("the Codex event names no transcript; the call stays incomplete")
        else:
            try:
                reading.current = read_evidence(transcript, [finishing])[finishing]
            except YarpError as exc:
                reading.warnings.append(f"the Codex transcript is unreadable; the call stays incomplete: {exc.message}")
    return reading


def _session_id(payload: dict) -> str | None:
    value = payload.get("session_id")
    ok = isinstance(value, str) and 0 < len(value) <= MAX_IDENTITY_CHARS and "\x00" not in value
    return value if ok else None


class Expected:
    """A begun shell call's post event, as far as it is known before it comes: its transcript,
    the cap and the call's reference, and the work done for it ahead (`Ahead`), once done."""

    __slots__ = ("transcript", "cap", "archive_ref", "ahead")

    def __init__(self, transcript: str, cap: int, archive_ref: str) -> None:
        self.transcript = transcript
        self.cap = cap
        self.archive_ref = archive_ref
        self.ahead: Ahead | None = None


class CodexService:
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
        #: (session, call) -> Expected for a shell call begun and not yet finished: what its
        #: post event's work needs, and that work once done ahead (the oldest forgotten first).
        self._expected: OrderedDict[tuple[str, str], Expected] = OrderedDict()
        #: Transcript path -> the task doing work ahead for its calls (one at a time per file).
        self._working: dict[str, asyncio.Task] = {}
        #: Transcripts written again while their task ran: it is run once more.
        self._again: set[str] = set()
        self._watch = None

    async def serve(self, request, hook) -> bytes:
        """Answer one Codex hook event: settle the session's open calls the transcript now proves, and begin or
        finish this one, in one composite request. Events without a session, or unparseable, are answered ok.
        """
        from yarp.wire import protocol

        payload = hook.event
        name = payload.get("hook_event_name") if isinstance(payload, dict) else None
        session_id = _session_id(payload) if name in (PRE, POST, *SETTLE_ONLY) else None
        if session_id is None:
            return protocol.reply_ok()
        event = None
        if name in (PRE, POST):
            from yarp.hooks.events import parse_event

            try:
                event = parse_event(AGENT, payload)
            except YarpError:
                event = None
            if event is None:
                return protocol.reply_ok()
        transcript = payload.get("transcript_path")
        transcript = transcript if isinstance(transcript, str) and os.path.isabs(transcript) else None
        working = self._working.get(transcript) if name == POST else None
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
                finish = Finish(session, output_text(event.response), known[finishing][1], _cap(hook, event))
                expected = self._expected.get((sid, finishing))
                ahead = expected.ahead if expected is not None else None
            # File I/O, and the cap and preparation of the call this event finishes, off the
            # loop: other clients' requests go on meanwhile.
            reading = await self.broker.loop.run_in_executor(
                self.broker._pool, lambda: self._read(transcript, begun, marks, finishing, finishing_mark, finish,
                                                      ahead))
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

    def _read(self, transcript: str | None, begun: str | None, marks: dict, finishing: str | None,
              finishing_mark: Mark | None, finish: Finish | None, ahead: Ahead | None) -> Reading:
        """`read_transcript`, then (`finish`) the finishing call's outcome prepared (from the work
        done `ahead`, when it holds), in the pool.

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

    # --- work ahead of the post event -------------------------------------------------

    def _expect(self, key: tuple[str, str], transcript: str, cap: int, archive_ref: object) -> None:
        """A shell call was begun: watch its transcript, so that its execution, once written, is
        capped and prepared while Codex starts the post hook (`_work_ahead`)."""
        if not isinstance(archive_ref, str):
            return
        if self._watch is None:
            from yarp.broker.services.watch import TranscriptWatch

            self._watch = TranscriptWatch(self.broker.loop, self._written)
        if not self._watch.watch(transcript):
            return
        self._expected[key] = Expected(transcript, cap, archive_ref)
        self._expected.move_to_end(key)
        while len(self._expected) > MAX_MARKED_CALLS:
            self._unexpect(next(iter(self._expected)))

    def _unexpect(self, key: tuple[str, str]) -> None:
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
            self._working[transcript] = self.broker.loop.create_task(self._work_ahead(transcript))

    async def _work_ahead(self, transcript: str) -> None:
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
        from yarp.wire import protocol
        from yarp.broker.services.shared import PreparedParts, envelope_for, now_ms, prepare_composite

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
                prepared = await prepare_composite(self.broker, request, tuple(operations), sources=_sources(outcomes))
            else:  # the settled calls' parts, then the prepared ones of the call this event finishes
                settled = outcomes[:-1]
                head = await prepare_composite(self.broker, request, tuple(operations[:-len(main.operations)]),
                                               sources=_sources(settled)) if settled else PreparedParts(())
                prepared = PreparedParts(head.parts + main_parts.parts)
            env = envelope_for(last[-1], request.conn.correlation_id, hook.deadline_ms, sequence=last[0].sequence)
            reply = await self.broker.submit(request, env, prepared)
        finally:
            self._finishing -= keys
            self._finished_requests += finishes
        for op in operations:
            if isinstance(op, ops.FinishCall):  # a finished call is never read for again
                self._marks.pop((session.source_session_id, op.source_call_id), None)
                self._unexpect((session.source_session_id, op.source_call_id))
        if event is not None and event.event == PRE and event.tool_name == SHELL_TOOL and transcript is not None:
            self._expect((session.source_session_id, event.call_id), transcript, _cap(hook, event),
                         orjson.loads(reply).get("archiveRef"))
        if main is not None and main.view is not None:
            extra["answer"] = orjson.dumps(post_answer(main.view)).decode()
        return protocol.reply_ok(extra=extra or None)
