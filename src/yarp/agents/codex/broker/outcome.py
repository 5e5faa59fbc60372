"""How a Codex call is finished in the broker, and the view the model is given.

Everything here is a function over plain data: the evidence the transcript
holds for a call (`yarp.agents.codex.transcripts.evidence.CallEvidence`, read by
`evidence`) becomes the operations that begin or finish it
(`begin_operation`, `call_outcome`, `other_outcome`), and an output over the
cap becomes the view that replaces Codex's own (`capped_view`, answered as
`post_answer`). What is executed, an error, complete or cut is the shared
reader's rule; what is added here is live capture's own: the post event's
`tool_response` as the shown output, YARP's capped view and the visible
result, and the preparation of the payloads off the loop (`Finish`).
"""

from __future__ import annotations

from typing import Any

from yarp.agents.codex import RESULT_VIEW
from yarp.errors import ValidationError
from yarp.json_text import loads_record
from yarp.limits import MAX_NAME_CHARS
from yarp.agents.codex.transcripts.evidence import CallEvidence, output_source, result_record, source_bytes
from yarp.view.plan import is_recovery_command
from yarp.wire import operations as ops
from yarp.wire.validation import check_json

# `Ahead` in the annotations is `ahead.Ahead`; that module builds on this one, so it is not imported here.


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
        sources: dict = part_sources([outcome])
        if ahead is not None and ahead.source is not None and sources:
            sources = {index: ahead.source for index in sources}
        return outcome, prepare_parts(tuple(outcome.operations), sources, ahead.results if ahead else None)


def part_sources(outcomes: list[Outcome]) -> dict[int, bytes]:
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


#: The largest cap of a view that replaces Codex's output. Codex cuts hook text over 2,500 of its
#: tokens (4 bytes a token, rounded up: 10,000 bytes) to a preview and saves the whole of it under
#: `$CODEX_HOME/hook_outputs/` (openai/codex `hooks/src/output_spill.rs`; in 0.171.0), so the view,
#: its `Process exited with code N` header included, stays under that. (The record holds the
#: number, where `yarp doctor` reads it too.)
MAX_VIEW_CAP = RESULT_VIEW["max_cap"]


def view_cap(hook, event) -> int:
    """The cap of the view of the shell call `event` finishes: 0 (Codex's own view) without
    pruning and for `yarp search`/`yarp read`, whose output is never capped; at most `MAX_VIEW_CAP`."""
    return min(hook.cap_bytes, MAX_VIEW_CAP) if hook.pruning and not is_recovery_command(_command(event)) else 0


def model_call(evidence: CallEvidence | None, event) -> tuple[str, Any]:
    """(tool name, input) of the call as the model made it, else as the hook event shows it.

    Codex presents `exec_command {"cmd", "yield_time_ms", "sandbox_permissions", …}`
    to hooks as `Bash {"command"}`; the transcript's `function_call` keeps the
    model's own name and arguments, which are what `input/before` must hold.
    """
    if evidence is not None and evidence.arguments is not None and 0 < len(evidence.tool_name or "") <= MAX_NAME_CHARS:
        try:
            # Checked like every input the broker archives: no JSON round trip later validates it.
            arguments = check_json(loads_record(evidence.arguments.encode("utf-8", "surrogatepass")),
                                   "the transcript's call arguments")
        except (ValueError, RecursionError, ValidationError):
            arguments = evidence.arguments  # kept as the exact text the model sent
        return evidence.tool_name, arguments
    return event.tool_name, event.tool_input
