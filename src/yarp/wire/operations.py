"""The agent-neutral archive operations, their strict validation and replay policy.

An operation is what an adapter asks the archive to record. The same camelCase
JSON shape (tagged by ``"operation"``) is used by the ingest frames and inside
broker envelopes, so one validator serves both. Validation here is structural
and bounded: types, required and unknown fields, identity lengths, enumerations.
Canonicalisation, hashing and file snapshots happen later, in `yarp.archive.prepare`.

This module never touches SQLite, the filesystem or the network.
"""

from __future__ import annotations

from yarp._digest import identity_sha256
from yarp._record import Record

# typing costs milliseconds on `yarp run`'s path and is needed by annotations only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

#: Unix milliseconds must fit SQLite's signed 64-bit integers and be non-negative.
MAX_TIME_MS = 2**63 - 1
COMPLETENESS = ("complete", "incomplete", "unknown")
UNIT_SEPARATOR = "\x1f"


# --- Shared parts -----------------------------------------------------------


class Session(Record):
    """The agent session a call belongs to: agent, account and the agent's own session id."""

    __slots__ = ("agent", "account", "source_session_id", "started_at_ms")
    _defaults = {"started_at_ms": None}
    agent: str
    account: str
    source_session_id: str
    started_at_ms: int | None


class CallMeta(Record):
    """One call's metadata, fixed at `begin_call`: replaying it with different metadata is refused.

    `requires_streams`: the shell command was wrapped by `yarp run`, so its four stream snapshots are required.
    """

    __slots__ = (
        "source_call_id", "tool_name", "started_at_ms", "requires_streams", "provider", "model",
        "working_directory",
    )
    _defaults = {"provider": None, "model": None, "working_directory": None}
    source_call_id: str
    tool_name: str
    started_at_ms: int
    requires_streams: bool
    provider: str | None
    model: str | None
    working_directory: str | None


class StreamFile(Record):
    """A spool or source-output file named by path, with the identity the sender saw.

    `device`, `inode` and `size` are None when the sender did not declare them
    (an ingest adapter names only the path); the broker then records what it
    opens and relies on content checks for replays.
    """

    __slots__ = ("path", "device", "inode", "size")
    _defaults = {"device": None, "inode": None, "size": None}
    path: str
    device: int | None
    inode: int | None
    size: int | None


# --- Operations -----------------------------------------------------------------


class BeginCall(Record):
    """Record a call and its input before the tool runs (`input/before`, `input/after`); status `started`."""

    __slots__ = ("session", "call", "input_before", "input_after", "captured_at_ms", "deadline_at_ms")
    _defaults = {"deadline_at_ms": None}
    session: Session
    call: CallMeta
    input_before: Any
    input_after: Any
    captured_at_ms: int
    deadline_at_ms: int | None

    kind = "begin_call"
    sequence = 0

    @property
    def source_call_id(self) -> str:
        """The call's id in its agent's session (every other operation names it directly)."""
        return self.call.source_call_id


class CaptureStreams(Record):
    """A wrapped command's exact stdout and stderr, before and after pruning, from spool files."""

    __slots__ = (
        "session", "source_call_id", "captured_at_ms", "stdout_before", "stderr_before", "stdout_after",
        "stderr_after",
    )
    session: Session
    source_call_id: str
    captured_at_ms: int
    stdout_before: StreamFile
    stderr_before: StreamFile
    stdout_after: StreamFile
    stderr_after: StreamFile

    kind = "capture_streams"
    sequence = 1


class CapturePassthroughStreams(Record):
    """A wrapped command's output that was not pruned: each stream's before and after share one payload."""

    __slots__ = ("session", "source_call_id", "captured_at_ms", "stdout", "stderr")
    session: Session
    source_call_id: str
    captured_at_ms: int
    stdout: StreamFile
    stderr: StreamFile

    kind = "capture_passthrough_streams"
    sequence = 1


class ResultBefore(Record):
    """The tool's result before YARP changes it; with `full_output`, the source's complete output file
    is stored in the same operation (both or neither).
    """

    __slots__ = ("session", "source_call_id", "result", "captured_at_ms", "full_output")
    _defaults = {"full_output": None}
    session: Session
    source_call_id: str
    result: Any
    captured_at_ms: int
    full_output: StreamFile | None

    kind = "result_before"
    sequence = 2


class ResultText(Record):
    """The exact text a cap or summary may shorten, with the host's word on its completeness
    (`complete`, `incomplete` or `unknown`).

    `cap_bytes` (optional, not archived) asks the broker for the view of the text
    under that cap, made once the text is committed and sent back with the
    acknowledgement (`yarp.broker.result_view`): the adapters that cannot replace a
    result from a hook get the same view as those that can.
    """

    __slots__ = ("session", "source_call_id", "text", "source_completeness", "captured_at_ms", "cap_bytes")
    _defaults = {"cap_bytes": None}
    session: Session
    source_call_id: str
    text: str
    source_completeness: str
    captured_at_ms: int
    cap_bytes: int | None

    kind = "result_text"
    sequence = 3


class StageResult(Record):
    """The visible result (`result/after`) while the raw result can still be restored; the call stays `started`."""

    __slots__ = ("session", "source_call_id", "result", "is_error", "captured_at_ms")
    session: Session
    source_call_id: str
    result: Any
    is_error: bool
    captured_at_ms: int

    kind = "stage_result"
    sequence = 4


class FinishCall(Record):
    """The final result, and the call is `finished`; `executed` is False for a call that never reached its
    tool (then no result before or streams are required).
    """

    __slots__ = ("session", "source_call_id", "result", "is_error", "executed", "finished_at_ms")
    session: Session
    source_call_id: str
    result: Any
    is_error: bool
    executed: bool
    finished_at_ms: int

    kind = "finish_call"
    sequence = 5


class UpdateFinalResult(Record):
    """Confirm the final result: finishes a started call, and on a finished call succeeds only if the result
    is identical (nothing is ever replaced).
    """

    __slots__ = ("session", "source_call_id", "result", "is_error", "finished_at_ms")
    session: Session
    source_call_id: str
    result: Any
    is_error: bool
    finished_at_ms: int

    kind = "update_final_result"
    sequence = 6


class PruneBefore(Record):
    """Delete finished calls older than `timestamp_ms` (Unix milliseconds).

    `incomplete_before_ms` (optional): also delete the calls still `started`
    whose last record (their start, every snapshot) is older than it, calls a
    crash or a lost finish left behind. `dry_run`: delete nothing, and report
    what the prune would delete (calls, payloads and their bytes).
    """

    __slots__ = ("timestamp_ms", "incomplete_before_ms", "dry_run")
    _defaults = {"incomplete_before_ms": None, "dry_run": False}
    timestamp_ms: int
    incomplete_before_ms: int | None
    dry_run: bool

    kind = "prune_before"
    sequence = 0


class ImportedCall(Record):
    """One past call as a transcript proves it (an element of `ImportCalls`).

    `result` is None for a call the transcript shows without a result: it is
    recorded as `started` (incomplete) with no result snapshots. With a result
    the call is `finished`; `executed` is False for a call the transcript
    shows answered without running (an agent's refusals); `is_error` is what the
    transcript says, False when it says nothing (the live adapters record the
    same default). `result_text` is a text of the result stored as
    `result_text/before` with `result_text_completeness` (a transcript's cut
    outputs); `source_output` is the exact complete output the transcript
    holds, stored as `source_output/before` as live capture stores it, and
    `source_output_path` names a file holding it (an agent's spilled outputs).
    """

    __slots__ = ("session", "call", "input", "result", "has_result", "is_error", "finished_at_ms",
                 "source_output_path", "result_text", "executed", "source_output", "result_text_completeness")
    _defaults = {"result": None, "has_result": False, "is_error": False, "finished_at_ms": None,
                 "source_output_path": None, "result_text": None, "executed": True, "source_output": None,
                 "result_text_completeness": "complete"}
    session: Session
    call: CallMeta
    input: Any
    result: Any
    has_result: bool
    is_error: bool
    finished_at_ms: int | None
    source_output_path: str | None
    result_text: str | None
    executed: bool
    source_output: str | None
    result_text_completeness: str


class ImportCalls(Record):
    """A batch of past calls read from agent transcripts (`yarp import`).

    Validated like every operation (`yarp.wire.validation`), prepared and applied by
    `yarp.transcripts.batch`; its source identity is the batch's own
    (`batch_id`, see `import_batch_id`), not one call's.
    """

    __slots__ = ("batch_id", "calls", "captured_at_ms")
    batch_id: str
    calls: tuple
    captured_at_ms: int

    kind = "import_calls"
    sequence = 0


CaptureOperation = (
    BeginCall
    | CaptureStreams
    | CapturePassthroughStreams
    | ResultBefore
    | ResultText
    | StageResult
    | FinishCall
    | UpdateFinalResult
)
ArchiveOperation = CaptureOperation | PruneBefore | ImportCalls

#: Every operation type, in sequence order. Tests enumerate this tuple.
OPERATION_TYPES: tuple[type, ...] = (
    BeginCall,
    CaptureStreams,
    CapturePassthroughStreams,
    ResultBefore,
    ResultText,
    StageResult,
    FinishCall,
    UpdateFinalResult,
    PruneBefore,
    ImportCalls,
)
OPERATIONS_BY_KIND: dict[str, type] = {t.kind: t for t in OPERATION_TYPES}
#: Operations after which a call's recent-sequence cache entry is dropped.
FINISHING_KINDS = frozenset({"finish_call", "update_final_result"})


# --- Replay policy --------------------------------------------------------------


class ReplayPolicy:
    """What a client does with an unacknowledged request after a transport failure.

    Exactly two instances, `SAFE_REPLAY` and `UNKNOWN_ON_DISCONNECT`, compared
    by identity. A plain class rather than `enum.Enum`: importing enum costs
    every shell command `yarp run` wraps a few milliseconds.
    """

    __slots__ = ("value",)
    SAFE_REPLAY: ClassVar[ReplayPolicy]
    UNKNOWN_ON_DISCONNECT: ClassVar[ReplayPolicy]

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"ReplayPolicy({self.value})"


#: Reconnect (starting a broker if needed) and send the identical request again,
#: same identity, original deadline. Stable identities make the replay exactly-once.
ReplayPolicy.SAFE_REPLAY = ReplayPolicy("SafeReplay")
#: Never re-send; report a bounded unknown outcome (rows cannot prove the count).
ReplayPolicy.UNKNOWN_ON_DISCONNECT = ReplayPolicy("UnknownOnDisconnect")
#: Every policy, for exhaustive checks.
REPLAY_POLICIES = (ReplayPolicy.SAFE_REPLAY, ReplayPolicy.UNKNOWN_ON_DISCONNECT)


def replay_policy(operation: ArchiveOperation) -> ReplayPolicy:
    """The exhaustive policy: every operation type must appear here explicitly.

    There is deliberately no default: an operation type added to
    `OPERATION_TYPES` without a policy raises `TypeError`, and a test enumerates
    every type so the omission fails the suite.
    """
    match operation:
        case BeginCall() | CaptureStreams() | CapturePassthroughStreams() | ResultBefore():
            return ReplayPolicy.SAFE_REPLAY
        case ResultText() | StageResult() | FinishCall() | UpdateFinalResult():
            return ReplayPolicy.SAFE_REPLAY
        case PruneBefore():
            return ReplayPolicy.UNKNOWN_ON_DISCONNECT
        case ImportCalls():
            return ReplayPolicy.SAFE_REPLAY
    raise TypeError(f"operation type {type(operation).__name__} has no replay policy")


# --- Identities ------------------------------------------------------------------


MAINTENANCE_IDENTITY = UNIT_SEPARATOR.join(("maintenance", "prune"))


def _sha256_hex(text: str) -> str:
    return identity_sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def source_identity(operation: ArchiveOperation) -> str:
    """agent␟account␟sourceSessionId␟sourceCallId, or the maintenance identity."""
    if isinstance(operation, PruneBefore):
        return MAINTENANCE_IDENTITY
    if isinstance(operation, ImportCalls):
        return UNIT_SEPARATOR.join(("import", operation.batch_id))
    s = operation.session
    return UNIT_SEPARATOR.join((s.agent, s.account, s.source_session_id, operation.source_call_id))


def source_key(operation: ArchiveOperation) -> str:
    """The ordering key: SHA-256 hex of the source identity (raw ids never routed)."""
    return _sha256_hex(source_identity(operation))


def operation_id(operation: ArchiveOperation) -> str:
    """The stable operation identity: SHA-256 of the source identity and operation kind."""
    if isinstance(operation, PruneBefore):
        return prune_operation_id(operation.timestamp_ms, operation.incomplete_before_ms, operation.dry_run)
    return _sha256_hex(f"{source_identity(operation)}{UNIT_SEPARATOR}{operation.kind}")


def identities(ids: tuple[str, str, str, str], kind: str) -> tuple[str, str]:
    """(operation identity, source key) of a capture operation from its four source ids.

    The same digests as `operation_id` and `source_key`, for a caller that has
    the ids but no parsed operation (the ingest relay, the broker's request path).
    """
    identity = UNIT_SEPARATOR.join(ids)
    return _sha256_hex(f"{identity}{UNIT_SEPARATOR}{kind}"), _sha256_hex(identity)


def import_batch_id(calls) -> str:
    """An import batch's identity: SHA-256 over its calls' source identities, in order.

    It keys the envelope (one source key per batch), so replaying the same
    batch after a lost acknowledgement is the same request.
    """
    h = identity_sha256(b"import_calls\x1f")
    for c in calls:
        s = c.session
        h.update("\x1f".join((s.agent, s.account, s.source_session_id, c.call.source_call_id)).encode(
            "utf-8", "surrogatepass") + b"\x1e")
    return h.hexdigest()


def import_calls(calls, captured_at_ms: int) -> ImportCalls:
    """The `import_calls` operation for these calls (its batch id derived)."""
    calls = tuple(calls)
    return ImportCalls(import_batch_id(calls), calls, captured_at_ms)


def prune_operation_id(timestamp_ms: int, incomplete_before_ms: int | None = None, dry_run: bool = False) -> str:
    """The operation id of a prune at `timestamp_ms`: the same time always gives the same id, so a replay is one.

    A prune of incomplete calls too, or a dry run, has an id of its own (a
    plain prune keeps the reference's: its time alone).
    """
    extra = ("" if incomplete_before_ms is None else f"{UNIT_SEPARATOR}incomplete{incomplete_before_ms}") + (
        f"{UNIT_SEPARATOR}dry-run" if dry_run else "")
    return _sha256_hex(f"{MAINTENANCE_IDENTITY}{UNIT_SEPARATOR}{timestamp_ms}{extra}")


MAINTENANCE_SOURCE_KEY = _sha256_hex(MAINTENANCE_IDENTITY)
#: Each operation kind's replay policy, read off `replay_policy` (the one place that decides).
REPLAY_BY_KIND: dict[str, ReplayPolicy] = {t.kind: replay_policy(object.__new__(t)) for t in OPERATION_TYPES}


# --- operation -> JSON --------------------------------------------------------------


def _session_json(s: Session) -> dict:
    out = {"agent": s.agent, "account": s.account, "sourceSessionId": s.source_session_id}
    if s.started_at_ms is not None:
        out["startedAtMs"] = s.started_at_ms
    return out


def _file_json(sf: StreamFile) -> Any:
    if sf.device is None and sf.inode is None and sf.size is None:
        return sf.path
    return {"path": sf.path, "device": sf.device, "inode": sf.inode, "size": sf.size}


def _call_json(c: CallMeta) -> dict:
    call = {"sourceCallId": c.source_call_id, "toolName": c.tool_name, "startedAtMs": c.started_at_ms,
            "requiresStreams": c.requires_streams}
    for key, value in (("provider", c.provider), ("model", c.model), ("workingDirectory", c.working_directory)):
        if value is not None:
            call[key] = value
    return call


def imported_call_json(c: ImportedCall) -> dict:
    """One imported call's JSON (an element of an `import_calls` operation's `calls`)."""
    out: dict[str, Any] = {"session": _session_json(c.session), "call": _call_json(c.call), "input": c.input}
    if c.has_result:
        out.update(result=c.result, isError=c.is_error, finishedAtMs=c.finished_at_ms)
        if not c.executed:
            out["executed"] = False
        if c.source_output_path is not None:
            out["sourceOutputPath"] = c.source_output_path
        if c.source_output is not None:
            out["sourceOutput"] = c.source_output
        if c.result_text is not None:
            out["resultText"] = c.result_text
            if c.result_text_completeness != "complete":
                out["resultTextCompleteness"] = c.result_text_completeness
    return out


def operation_to_json(op: ArchiveOperation) -> dict:
    """The inverse of `yarp.wire.validation.parse_operation` (used by clients building envelopes)."""
    if isinstance(op, PruneBefore):
        out = {"operation": op.kind, "timestampMs": op.timestamp_ms}
        if op.incomplete_before_ms is not None:
            out["incompleteBeforeMs"] = op.incomplete_before_ms
        if op.dry_run:
            out["dryRun"] = True
        return out
    if isinstance(op, ImportCalls):
        return {"operation": op.kind, "batchId": op.batch_id, "capturedAtMs": op.captured_at_ms,
                "calls": [imported_call_json(c) for c in op.calls]}
    out: dict[str, Any] = {"operation": op.kind, "session": _session_json(op.session)}
    if isinstance(op, BeginCall):
        out.update(call=_call_json(op.call), inputBefore=op.input_before, inputAfter=op.input_after,
                   capturedAtMs=op.captured_at_ms)
        if op.deadline_at_ms is not None:
            out["deadlineAtMs"] = op.deadline_at_ms
        return out
    out["sourceCallId"] = op.source_call_id
    if isinstance(op, ResultBefore):
        out.update(result=op.result, capturedAtMs=op.captured_at_ms)
        if op.full_output is not None:
            out["fullOutputPath"] = _file_json(op.full_output)
    elif isinstance(op, ResultText):
        out.update(text=op.text, sourceCompleteness=op.source_completeness, capturedAtMs=op.captured_at_ms)
        if op.cap_bytes is not None:
            out["capBytes"] = op.cap_bytes
    elif isinstance(op, StageResult):
        out.update(result=op.result, isError=op.is_error, capturedAtMs=op.captured_at_ms)
    elif isinstance(op, FinishCall):
        out.update(result=op.result, isError=op.is_error, requirePreResult=op.executed,
                   finishedAtMs=op.finished_at_ms)
    elif isinstance(op, UpdateFinalResult):
        out.update(result=op.result, isError=op.is_error, finishedAtMs=op.finished_at_ms)
    elif isinstance(op, CaptureStreams):
        out.update(capturedAtMs=op.captured_at_ms, stdoutBeforePath=_file_json(op.stdout_before),
                   stderrBeforePath=_file_json(op.stderr_before), stdoutAfterPath=_file_json(op.stdout_after),
                   stderrAfterPath=_file_json(op.stderr_after))
    elif isinstance(op, CapturePassthroughStreams):
        out.update(capturedAtMs=op.captured_at_ms, stdoutPath=_file_json(op.stdout),
                   stderrPath=_file_json(op.stderr))
    else:  # pragma: no cover - exhaustive above
        raise TypeError(type(op).__name__)
    return out
