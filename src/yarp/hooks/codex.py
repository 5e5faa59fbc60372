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

Everything below the I/O boundary is a function over plain data (the event's
dict, a transcript path, the broker's reply), so the same rules can run in the
hook process or in the broker. `handle` is the hook process's driver.
"""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import dataclass
from typing import Any

from .. import operations as ops
from ..errors import ArchiveMissing, ValidationError, YarpError
from ..limits import MAX_NAME_CHARS

AGENT = "codex"
#: The name Codex gives its `exec_command` tool in hook events.
SHELL_TOOL = "Bash"
PRE = "PreToolUse"
POST = "PostToolUse"
#: Events that only settle the session's earlier calls.
SETTLE_ONLY = ("Stop", "SessionEnd")
#: A transcript larger than this is not scanned (the call keeps Codex's own result).
MAX_TRANSCRIPT_BYTES = 512 * 1024 * 1024
#: The end of the transcript read first for a call's records (about 128 outputs as Codex keeps them).
TAIL_BYTES = 8 * 1024 * 1024
#: What Codex puts in the middle of an output it cut to 64 KiB before writing the transcript.
PERSISTENCE_CUT = "\n... command output truncated for persistence ...\n"
#: Codex's answer when a command is still running at `yield_time_ms`.
RUNNING_PREFIX = "Process running with session ID"
BEGIN_TIMEOUT_S = 2.0
RESULT_TIMEOUT_S = 20.0


# --- the transcript ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallEvidence:
    """What the transcript proves about one call.

    `output`/`exit_code`/`status` come from the `CommandExecution` item (None
    when there is none); `model_output` is the text of the `function_call_output`
    the model received (None when not yet written); `tool_name`/`arguments` are
    the model's own `function_call` (for example `exec_command` with its JSON
    arguments string), written before `PreToolUse` runs.
    """

    call_id: str
    output: str | None = None
    exit_code: int | None = None
    status: str | None = None
    model_output: str | None = None
    tool_name: str | None = None
    arguments: str | None = None

    @property
    def executed(self) -> bool:
        return self.output is not None

    @property
    def complete(self) -> bool:
        """Whether `output` is the whole output: Codex cuts what it persists at 64 KiB."""
        return self.output is not None and PERSISTENCE_CUT not in self.output

    @property
    def running(self) -> bool:
        """Codex answered "still running" and no execution has completed since."""
        if self.executed or self.model_output is None:
            return False
        header = self.model_output.split("\nOutput:", 1)[0]
        return any(line.startswith(RUNNING_PREFIX) for line in header.splitlines())

    @property
    def settled(self) -> bool:
        """Whether a call without a post event can be finished now.

        Codex writes the tool output it gives the model after the post hook ran,
        so requiring it never races a post hook still at work; then the call
        either ran to its end or got an answer without running.
        """
        return self.model_output is not None and (self.executed or not self.running)

    @property
    def is_error(self) -> bool:
        """A non-zero (or missing) exit code, or an answer the model got instead of a run."""
        if self.executed:
            return self.exit_code != 0
        return True


def _output_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content items
        return "".join(part.get("text", "") for part in value if isinstance(part, dict)
                       and isinstance(part.get("text"), str))
    return None


def _executed(evidence: CallEvidence) -> bool:
    return evidence.executed


def _settled(evidence: CallEvidence) -> bool:
    return evidence.settled


def read_evidence(transcript_path: str, call_ids: list[str] | tuple[str, ...], *,
                  enough=_executed, tail_bytes: int = TAIL_BYTES, tail_only: bool = False) -> dict[str, CallEvidence]:
    """Evidence for `call_ids` from a Codex session transcript (JSONL).

    Reads only complete lines, never follows a symlink, refuses a file that is
    not regular or larger than `MAX_TRANSCRIPT_BYTES` (`ValidationError`), and
    parses only lines that name one of the wanted ids. The last record of each
    kind wins (a later `item_completed` supersedes an earlier one).

    The records of a call just made are at the end of the file: the last
    `tail_bytes` are read first, and the whole file only when the tail does not
    hold `enough` evidence for every id (a record in the tail is later than any
    before it, so the tail's answer is the whole file's), unless `tail_only`.
    """
    wanted = set(call_ids)
    if not wanted:
        return {}
    try:
        fd = os.open(transcript_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        raise ValidationError("the Codex transcript cannot be opened") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_TRANSCRIPT_BYTES:
        os.close(fd)
        raise ValidationError(f"the Codex transcript is not a regular file of at most {MAX_TRANSCRIPT_BYTES} bytes")
    needles = [json.dumps(call_id).encode("utf-8") for call_id in wanted]
    with os.fdopen(fd, "rb") as handle:
        if st.st_size > tail_bytes:
            found = _scan(handle, st.st_size - tail_bytes, st.st_size, wanted, needles)
            if tail_only or all(enough(evidence) for evidence in found.values()):
                return found
        return _scan(handle, 0, st.st_size, wanted, needles)


def _scan(handle, start: int, size: int, wanted: set[str], needles: list[bytes]) -> dict[str, CallEvidence]:
    found: dict[str, dict] = {call_id: {} for call_id in wanted}
    handle.seek(start)
    position = start
    if start:  # begin at the first whole line
        position += len(handle.readline())
    for line in handle:
        position += len(line)
        if position > size or not line.endswith(b"\n"):
            break  # a line still being written after our size check
        if any(needle in line for needle in needles):
            _absorb(line, found)
    return {call_id: CallEvidence(call_id, **fields) for call_id, fields in found.items()}


def _absorb(line: bytes, found: dict[str, dict]) -> None:
    try:
        record = json.loads(line)
    except ValueError:
        return
    payload = record.get("payload") if isinstance(record, dict) else None
    if not isinstance(payload, dict):
        return
    kind = payload.get("type")
    if record.get("type") == "event_msg" and kind == "item_completed":
        item = payload.get("item")
        if not isinstance(item, dict) or item.get("type") != "CommandExecution" or item.get("id") not in found:
            return
        output = item.get("aggregated_output")
        exit_code = item.get("exit_code")
        if not isinstance(output, str):
            return
        fields = found[item["id"]]
        fields["output"] = output
        fields["exit_code"] = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
        fields["status"] = item.get("status") if isinstance(item.get("status"), str) else None
    elif record.get("type") != "response_item" or payload.get("call_id") not in found:
        return
    elif kind == "function_call_output":
        text = _output_text(payload.get("output"))
        if text is not None:
            found[payload["call_id"]]["model_output"] = text
    elif kind == "function_call" and isinstance(payload.get("name"), str) and isinstance(payload.get("arguments"), str):
        found[payload["call_id"]].update(tool_name=payload["name"], arguments=payload["arguments"])


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


def result_record(evidence: CallEvidence, shown: str | None) -> dict:
    """`result/before` (and, unchanged, `result/after`): the exit code and status the
    transcript proves, with the text Codex produced for the model (`shown`: the
    post event's `tool_response`, or the tool output in the transcript)."""
    return {"exit_code": evidence.exit_code, "status": evidence.status, "output": shown}


def source_bytes(evidence: CallEvidence) -> bytes:
    """The complete output as stored in `source_output/before`."""
    return (evidence.output or "").encode("utf-8", "surrogatepass")


def is_recovery(command: object) -> bool:
    """Whether a shell command is `yarp search` / `yarp read`, whose output is never capped."""
    if not isinstance(command, str) or "yarp" not in command:
        return False
    from ..shell.plan import RECOVERY_COMMANDS, simple_argv

    argv, _ = simple_argv(command)
    return bool(argv) and os.path.basename(argv[0]) == "yarp" and len(argv) > 1 and argv[1] in RECOVERY_COMMANDS


def output_source(evidence: CallEvidence) -> tuple[str, str]:
    """(subject, completeness) under which the transcript's output is archived and named in the marker.

    A complete output is the source output, exactly. One Codex cut for
    persistence is only a text of the result, with the cut in it: stored as
    `result_text`, `incomplete`, never passed off as the exact output.
    """
    return ("source_output", "complete") if evidence.complete else ("result_text", "incomplete")


def capped_view(evidence: CallEvidence, *, cap: int, archive_ref: str) -> str | None:
    """The text that replaces Codex's tool output, or None to leave Codex's own.

    Only an executed command whose complete output is over the cap is replaced:
    Codex's header line for the exit code, then the output capped exactly as
    every YARP result is (head, marker naming `source_output` and the call's
    reference, tail).
    """
    if not evidence.executed or cap <= 0:
        return None
    data = source_bytes(evidence)
    if len(data) <= cap:
        return None
    from ..shell.cap import cap_text

    source, completeness = output_source(evidence)
    capped = cap_text(data, cap=cap, archive_ref=archive_ref, source=source, completeness=completeness)
    code = "unknown" if evidence.exit_code is None else str(evidence.exit_code)
    return f"Process exited with code {code}\nOutput:\n{capped.decode('utf-8', 'replace')}"


def post_answer(view: str) -> dict:
    """The `PostToolUse` answer that replaces the whole tool output the model receives."""
    return {"decision": "block", "reason": view}


def finishing_operations(session: ops.Session, evidence: CallEvidence, shown: str | None,
                         full_output: ops.StreamFile | None, now_ms: int) -> list:
    """The operations that finish a call from its evidence, without its visible result.

    Executed: raw result with the complete output as source output (from the
    file `full_output` names), or, when Codex cut it, the raw result and the
    cut text as an incomplete `result_text`; the caller then stages and
    finishes with the visible result (`visible_operations`).
    Not executed (refused, blocked): raw result and finish as an error, no
    source output.
    """
    record = result_record(evidence, shown)
    if not evidence.executed:
        return [ops.ResultBefore(session, evidence.call_id, record, now_ms),
                ops.FinishCall(session, evidence.call_id, record, True, False, now_ms)]
    if evidence.complete:
        return [ops.ResultBefore(session, evidence.call_id, record, now_ms, full_output)]
    return [ops.ResultBefore(session, evidence.call_id, record, now_ms),
            ops.ResultText(session, evidence.call_id, evidence.output, "incomplete", now_ms)]


def visible_operations(session: ops.Session, evidence: CallEvidence, result_after: dict, now_ms: int) -> list:
    return [ops.StageResult(session, evidence.call_id, result_after, evidence.is_error, now_ms),
            ops.FinishCall(session, evidence.call_id, result_after, evidence.is_error, True, now_ms)]


# --- the hook process ----------------------------------------------------------------


def _now_ms() -> int:
    return int(time.time() * 1000)


def session_calls(location, account: str, session_id: str) -> dict[str, tuple[str, str]]:
    """(status, archive_ref) of every call of this Codex session, read-only."""
    from ..sqlite import open_readonly

    conn = open_readonly(location)
    try:
        rows = conn.execute(
            "SELECT c.source_call_id, c.status, c.archive_ref FROM tool_calls c JOIN sessions s"
            " ON s.id = c.session_id WHERE s.agent = ? AND s.account = ? AND s.source_session_id = ?",
            (AGENT, account, session_id),
        ).fetchall()
    finally:
        conn.close()
    return {row[0]: (row[1], row[2]) for row in rows}


class _OutputFile:
    """The complete output in a private file the broker reads (0600 in the 0700 runtime directory)."""

    def __init__(self, location, data: bytes, environ) -> None:
        from ..runtime import runtime_paths

        directory = runtime_paths(location.path, environ).directory
        self.path = os.path.join(directory, f"codex-output-{os.urandom(8).hex()}")
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            st = os.fstat(fd)
        finally:
            os.close(fd)
        self.stream = ops.StreamFile(self.path, st.st_dev, st.st_ino, st.st_size)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass


class CodexHook:
    """One Codex hook event against the broker: settle earlier calls, then begin or finish this one."""

    def __init__(self, payload: dict, *, config, location, environ=os.environ, account: str | None = None) -> None:
        from .events import local_account

        self.payload = payload
        self.config = config
        self.location = location
        self.environ = environ
        self.account = account or local_account()
        self.session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
        transcript = payload.get("transcript_path")
        self.transcript = transcript if isinstance(transcript, str) and os.path.isabs(transcript) else None

    def warn(self, text: str) -> None:
        from .notice import warn_once

        if self.session_id:
            warn_once(AGENT, self.session_id, text, self.environ)

    def session(self) -> ops.Session:
        return ops.Session(AGENT, self.account, self.session_id)

    def _finish(self, client, evidence: CallEvidence, shown: str | None, archive_ref: str | None,
                *, may_replace: bool, deadline: float) -> dict | None:
        """Commit the call's outcome; return the answer that replaces the model's view, if any."""
        session = self.session()
        if not evidence.executed:
            for operation in finishing_operations(session, evidence, shown, None, _now_ms()):
                client.request(operation, deadline)
            return None
        if evidence.complete:
            with _OutputFile(self.location, source_bytes(evidence), self.environ) as output:
                raw = finishing_operations(session, evidence, shown, output.stream, _now_ms())
                reply = client.request(raw[0], deadline)
        else:
            raw = finishing_operations(session, evidence, shown, None, _now_ms())
            for operation in raw:
                reply = client.request(operation, deadline)
        archive_ref = reply.get("archiveRef") or archive_ref
        record = raw[0].result
        view = None
        if may_replace and archive_ref and self.config.pruning_enabled:
            view = capped_view(evidence, cap=self.config.cap_bytes, archive_ref=archive_ref)
        result_after = record if view is None else {**record, "output": view}
        for operation in visible_operations(session, evidence, result_after, _now_ms()):
            client.request(operation, deadline)
        return None if view is None else post_answer(view)

    def settle(self, client, known: dict[str, tuple[str, str]], current: str | None, deadline: float) -> None:
        """Finish this session's earlier calls that never got a post event, from the transcript."""
        pending = [call_id for call_id, (status, _) in known.items() if status == "started" and call_id != current]
        if not pending or self.transcript is None:
            return
        try:
            found = read_evidence(self.transcript, pending, enough=_settled)
        except YarpError as exc:
            self.warn(f"the Codex transcript is unreadable; earlier calls stay incomplete: {exc.message}")
            return
        for evidence in found.values():
            if evidence.settled:
                self._finish(client, evidence, evidence.model_output, known[evidence.call_id][1],
                             may_replace=False, deadline=deadline)

    def run(self) -> dict | None:
        from ..client import BrokerClient
        from .events import parse_event

        name = self.payload.get("hook_event_name")
        event = parse_event(AGENT, self.payload) if name in (PRE, POST) else None
        if self.session_id is None or (name in (PRE, POST) and event is None):
            return None
        current = event.call_id if event is not None else None
        try:
            known = session_calls(self.location, self.account, self.session_id)
        except ArchiveMissing:
            known = {}
        except YarpError as exc:
            self.warn(f"archive capture failed; the call runs without capture: {exc.message}")
            return None
        deadline = time.monotonic() + (BEGIN_TIMEOUT_S if name == PRE else RESULT_TIMEOUT_S)
        try:
            with BrokerClient(self.location, self.environ) as client:
                if name == PRE:
                    # The call is begun first: it must be durable before the command runs.
                    client.request(self._begin(event, deadline), deadline)
                    # Codex waits for this process before it runs the command: settle briefly.
                    deadline = time.monotonic() + BEGIN_TIMEOUT_S
                self.settle(client, known, current, deadline)
                if name != POST or known.get(current, ("", ""))[0] != "started":
                    return None  # never begun (capture failed before the tool) or already finished
                if event.tool_name != SHELL_TOOL:
                    self._finish_other(client, event, deadline)
                    return None
                evidence = self._evidence(current)
                if evidence is None or not evidence.executed:
                    return None  # left started: the next event of the session settles it
                return self._finish(client, evidence, _output_text(event.response), known[current][1],
                                    may_replace=not is_recovery(self._command(event)), deadline=deadline)
        except (YarpError, OSError) as exc:
            self.warn(f"archive capture failed; this session's calls run without capture or YARP's view "
                      f"until the archive answers again: {_reason(exc)}")
            return None

    def _begin(self, event, deadline: float) -> ops.BeginCall:
        """The call as the model made it (nothing is rewritten: input before = after)."""
        evidence = None
        if self.transcript is not None:
            try:
                # The model's call was just written: never scan a whole long transcript before a command.
                evidence = read_evidence(self.transcript, [event.call_id], enough=_called,
                                         tail_only=True)[event.call_id]
            except YarpError:
                evidence = None  # the hook's view of the input is still worth archiving
        tool_name, tool_input = model_call(evidence, event)
        now = _now_ms()
        meta = ops.CallMeta(source_call_id=event.call_id, tool_name=tool_name, started_at_ms=now,
                            requires_streams=False, model=event.model, working_directory=event.cwd)
        remaining_ms = max(1, int((deadline - time.monotonic()) * 1000))
        return ops.BeginCall(self.session(), meta, tool_input, tool_input, now, now + remaining_ms)

    def _finish_other(self, client, event, deadline: float) -> None:
        """A tool other than the shell (patches, MCP tools): Codex's post event is its only
        evidence, and Codex sends none for a failure, so the result stands as it came."""
        session = self.session()
        now = _now_ms()
        client.request(ops.ResultBefore(session, event.call_id, event.response, now), deadline)
        client.request(ops.StageResult(session, event.call_id, event.response, False, now), deadline)
        client.request(ops.FinishCall(session, event.call_id, event.response, False, True, now), deadline)

    def _evidence(self, call_id: str) -> CallEvidence | None:
        if self.transcript is None:
            self.warn("the Codex event names no transcript; the call stays incomplete")
            return None
        try:
            return read_evidence(self.transcript, [call_id])[call_id]
        except YarpError as exc:
            self.warn(f"the Codex transcript is unreadable; the call stays incomplete: {exc.message}")
            return None

    @staticmethod
    def _command(event) -> object:
        return event.tool_input.get("command") if isinstance(event.tool_input, dict) else None


def _reason(exc: BaseException) -> str:
    """Bounded and payload-free: a YARP error's own message, else only the OS error's name."""
    if isinstance(exc, YarpError):
        return exc.message
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__


def handle(payload: Any, *, archive: str | None = None, environ=os.environ) -> dict | None:
    """Process one Codex hook event; return the JSON answer to print, or None.

    Never raises for archive trouble: the tool always runs and Codex's own
    result stands whenever the archive could not take the call.
    """
    if not isinstance(payload, dict) or payload.get("hook_event_name") not in (PRE, POST, *SETTLE_ONLY):
        return None
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return None
    from ..config import load
    from ..paths import resolve_archive
    from .notice import warn_once

    try:
        config = load(environ)
        if not config.archive_enabled:
            return None
        location = resolve_archive(archive, environ, config.archive_path)
    except YarpError as exc:
        warn_once(AGENT, session_id, f"archive capture is off for this session: {exc.message}", environ)
        return None
    try:
        return CodexHook(payload, config=config, location=location, environ=environ).run()
    except ValidationError:
        return None
