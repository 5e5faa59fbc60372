"""The broker wire protocol `yarp.archive-broker.v1`: handshake, envelopes, replies.

Frames in both directions are an 8-byte big-endian length and that many bytes
of UTF-8 JSON (`yarp.wire.frames`). A connection starts with one handshake each
way (at most `MAX_HANDSHAKE_BYTES`); then each request envelope gets exactly
one reply, in order.

Handshake  client → broker::

    {"schema": "yarp.archive-broker.v1", "binaryVersion": "0.1.0",
     "archiveId": "<32 hex>", "correlationId": "<connection id>"}

and the broker answers with the same four fields plus ``"ok"`` (and a bounded
``"error"`` when false). All of schema, binary version and archive id must match.

Request envelope::

    {"schema": …, "correlationId": …, "operationId": "<64 hex>",
     "sourceKey": "<64 hex>", "sequence": N, "deadlineMs": 1..30000,
     "operation": {"operation": "begin_call", …}}

or a control request ``{"schema", "correlationId", "control": "status"}``.
Reply: ``{"ok": true, "archiveRef"?, "prunedCalls"?, "view"?}`` (``view``: the
capped text a ``result_text`` with ``capBytes`` asked for) or
``{"ok": false, "code": "<errors code>", "error": "<bounded text>"}``.
Before a prune's one reply the broker sends progress frames,
``{"progress": {"phase", "done", "total", "prunedCalls"}}`` (no ``"ok"``), when
it begins and at least every second (`yarp.broker.maintenance`); the client
renews its wait on each (`yarp.clients.broker`). No other request gets one.

The broker validates envelopes and operations in `yarp.wire.validation` (compiled):
`parse_request` checks everything the event loop needs to route a request
(cheap, structural); `check_operation` validates the operation and proves the
operation identity, source key and sequence match it. Unknown fields,
schemas, identities and sequences fail.

The broker side decodes with orjson, the client side (handshake, envelopes and
replies as `yarp run`, the hooks, ingest and prune see them) with `_json`'s C
core: both through `yarp.json_text`. Identity checks use `str.translate`
rather than regular expressions: `re` is a real import on every tool call's path.
"""

from __future__ import annotations

from yarp import json_text
from yarp._record import Record
from yarp._version import SCHEMA, __version__
from yarp.errors import FrameError, FrameTooLarge, HandshakeMismatch, YarpError
from yarp.limits import MAX_CORRELATION_ID_CHARS, MAX_FRAME_BYTES
from yarp.wire import operations as ops

# typing costs milliseconds on `yarp run`'s path and is needed by annotations only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Deletion tables: a value is made only of these characters when deleting them leaves nothing.
_LOWER_HEX = str.maketrans("", "", "0123456789abcdef")
_CORRELATION_CHARS = str.maketrans("", "", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-")
CONTROLS = ("status",)


def _is_lower_hex(value: object, length: int) -> bool:
    return isinstance(value, str) and len(value) == length and not value.translate(_LOWER_HEX)


def _is_correlation_id(value: object) -> bool:
    return (isinstance(value, str) and 1 <= len(value) <= MAX_CORRELATION_ID_CHARS
            and not value.translate(_CORRELATION_CHARS))


# --- handshake ---------------------------------------------------------------


def check_handshake(frame: bytes, archive_id: str) -> str:
    """Validate a client's handshake; return its correlation id or raise."""
    obj = json_text.decode(frame, "handshake")
    if not isinstance(obj, dict) or set(obj) != {"schema", "binaryVersion", "archiveId", "correlationId"}:
        raise HandshakeMismatch("handshake fields are not the v1 set")
    if obj["schema"] != SCHEMA:
        raise HandshakeMismatch("handshake protocol schema is not supported")
    if obj["binaryVersion"] != __version__:
        raise HandshakeMismatch("handshake binary version differs from the broker's")
    if not _is_lower_hex(obj["archiveId"], 32):
        raise HandshakeMismatch("handshake archive id is malformed")
    if obj["archiveId"] != archive_id:
        raise HandshakeMismatch("handshake archive id names another archive")
    correlation = obj["correlationId"]
    if not _is_correlation_id(correlation):
        raise HandshakeMismatch("handshake correlation id is malformed")
    return correlation


def handshake_reply(archive_id: str, correlation_id: str | None, error: YarpError | None = None) -> bytes:
    """The broker's handshake answer; with `error`, a refusal carrying only its code and bounded message."""
    reply: dict[str, Any] = {
        "schema": SCHEMA,
        "binaryVersion": __version__,
        "archiveId": archive_id,
        "correlationId": correlation_id or "",
        "ok": error is None,
    }
    if error is not None:
        reply["error"] = error.message
        reply["code"] = error.code
    return json_text.encode(reply)


# --- envelopes ------------------------------------------------------------------


class Envelope(Record):
    """The routing part of a request, validated on the event loop."""

    __slots__ = ("correlation_id", "operation_id", "source_key", "sequence", "deadline_ms", "operation", "kind")
    correlation_id: str
    operation_id: str
    source_key: str
    sequence: int
    deadline_ms: int
    #: The operation's JSON object as received; `yarp.wire.validation.check_operation` proves it.
    operation: dict
    kind: str


class Control(Record):
    """A control request (such as `status`), answered at once outside admission."""

    __slots__ = ("correlation_id", "control")
    correlation_id: str
    control: str


# --- the per-tool-call clients' service requests (validated in `yarp.wire.validation`) ---


class HookRequest(Record):
    """`yarp hook <agent>`'s request: the agent, how to launch `yarp`, the rules, the deadline and the event.

    `event` is the agent's event exactly as decoded; `cap_bytes` the view's
    cap for the agents whose view the broker caps itself (their record's `CAPS_VIEW`), else None.
    """

    __slots__ = ("agent", "launcher", "pruning", "rule_packs", "deadline_ms", "event", "cap_bytes")
    agent: str
    launcher: tuple[str, ...]
    pruning: bool
    rule_packs: tuple[str, ...]
    deadline_ms: int
    event: object
    cap_bytes: int | None


class RunTarget(Record):
    """The call a `yarp run` step belongs to: an adapter's (all four set), a standalone run's own
    (`session` only; the broker adds its agent, account and call id), or a segment call's (all four
    set, begun by the run itself inside an adapter's session).

    `own`: the run began the call itself (standalone or segment), so its capture also records the
    result and finishes it; an adapter's call is left `started` for the adapter.
    """

    __slots__ = ("agent", "account", "session", "call", "own")
    _defaults = {"own": False}
    agent: str | None
    account: str | None
    session: str
    call: str | None
    own: bool


class SpoolFiles(Record):
    """A run's spool files: the exact streams as declared, and the paths where its view may be written."""

    __slots__ = ("stdout", "stderr", "stdout_after", "stderr_after")
    #: `operations.StreamFile` of each exact stream (path, device, inode, size as declared).
    stdout: ops.StreamFile
    stderr: ops.StreamFile
    stdout_after: str
    stderr_after: str


class RunBegin(Record):
    """A `yarp run`'s own call (standalone or segment), begun before its command starts."""

    __slots__ = ("deadline_ms", "target", "started_at_ms", "argv", "cwd")
    deadline_ms: int
    #: A standalone run's `{session}` or a segment call's full identity (`own` in both).
    target: RunTarget
    started_at_ms: int
    argv: tuple[str, ...]
    cwd: str


class RunCapture(Record):
    """A finished command's streams to capture, with what its view needs (rules, the cap), and the
    errno of a spool write that failed (the spool files then hold only the streams' first bytes)."""

    __slots__ = ("deadline_ms", "target", "argv", "status", "signal", "pruning", "rule_packs", "cap_bytes",
                 "spool", "spool_error")
    _defaults = {"spool_error": None}
    deadline_ms: int
    target: RunTarget
    argv: tuple[str, ...]
    status: int
    signal: int | None
    pruning: bool
    rule_packs: tuple[str, ...]
    cap_bytes: int
    spool: SpoolFiles
    spool_error: int | None


class RunNotStarted(Record):
    """A run whose own call (standalone or segment) never started its command."""

    __slots__ = ("deadline_ms", "target", "status")
    deadline_ms: int
    target: RunTarget
    status: int


class Outgoing(Record):
    """One operation, encoded once for sending (client side).

    `body` is the operation's JSON exactly as it goes on the wire; `routing`
    the envelope fields derived from it (operation identity, source key,
    sequence). A send, and every replay of it, splices these unchanged bytes
    into a fresh envelope header: only the connection's correlation id and
    the remaining deadline differ between attempts.
    """

    __slots__ = ("kind", "policy", "routing", "body")
    kind: str
    policy: ops.ReplayPolicy
    routing: bytes
    body: bytes


_HEAD = b'{"schema":"' + SCHEMA.encode() + b'","correlationId":"'
_OPERATION_FIELD = b',"operation":'


def routing(operation_id: str, source_key: str, sequence: int) -> bytes:
    """The envelope's middle: identity, key, sequence, up to the deadline's value.

    Every value is lowercase hex or a small integer, so nothing needs escaping.
    """
    return (f'","operationId":"{operation_id}","sourceKey":"{source_key}","sequence":{sequence}'
            ',"deadlineMs":').encode("ascii")


def outgoing(operation: ops.ArchiveOperation) -> Outgoing:
    """Encode `operation` once, with its routing fields.

    Raises `ValidationError` for a value JSON cannot carry (NaN, a lone
    surrogate); integers of any size travel exactly and the broker refuses
    those canonical JSON cannot store.
    """
    return Outgoing(operation.kind, ops.replay_policy(operation),
                    routing(ops.operation_id(operation), ops.source_key(operation), operation.sequence),
                    json_text.dumps(ops.operation_to_json(operation)))


def envelope_frame(out: Outgoing, correlation_id: str, deadline_ms: int) -> bytes:
    """The whole wire frame (length header included) of one envelope carrying `out`.

    One join: the operation's bytes are copied once, straight into the frame.
    """
    tail = b"%d" % deadline_ms
    size = (len(_HEAD) + len(correlation_id) + len(out.routing) + len(tail) + len(_OPERATION_FIELD)
            + len(out.body) + 1)
    if size > MAX_FRAME_BYTES:
        raise FrameTooLarge(size, MAX_FRAME_BYTES)
    return b"".join((size.to_bytes(8, "big"), _HEAD, correlation_id.encode("ascii"), out.routing, tail,
                     _OPERATION_FIELD, out.body, b"}"))


def envelope(operation: ops.ArchiveOperation, correlation_id: str, deadline_ms: int) -> bytes:
    """Encode one request envelope for `operation` (client side), without the frame header."""
    return envelope_frame(outgoing(operation), correlation_id, deadline_ms)[8:]


def control(correlation_id: str, name: str) -> bytes:
    """A control request frame, such as `status`."""
    return json_text.dumps({"schema": SCHEMA, "correlationId": correlation_id, "control": name})


# --- replies ----------------------------------------------------------------------


def reply_ok(archive_ref: str | None = None, pruned_calls: int | None = None, extra: dict | None = None) -> bytes:
    """A success reply, with the call's archive reference, the pruned-call count or extra fields when given."""
    body: dict[str, Any] = {"ok": True}
    if archive_ref is not None:
        body["archiveRef"] = archive_ref
    if pruned_calls is not None:
        body["prunedCalls"] = pruned_calls
    if extra:
        body.update(extra)
    return json_text.encode(body)


def reply_of(outcome) -> bytes:
    """The success reply of a committed operation's `Outcome` (`yarp.archive.store`)."""
    return reply_ok(outcome.archive_ref, outcome.pruned_calls, outcome.extra)


def reply_error(error: YarpError) -> bytes:
    """A failure reply: the error's code and bounded message, never a payload."""
    return json_text.encode({"ok": False, "code": error.code, "error": error.message})


def parse_reply(frame: bytes) -> dict:
    """Decode a broker reply; raises `FrameError` unless it is an object with a boolean `ok`."""
    obj = json_text.loads(frame, "broker reply")
    if not isinstance(obj, dict) or not isinstance(obj.get("ok"), bool):
        raise FrameError("broker reply is malformed")
    return obj
