"""`yarp archive ingest`: the framed adapter bridge to the broker, a relay.

Adapters (one long-lived bridge per agent session) write frames on our stdin:
an 8-byte big-endian length and that many bytes of UTF-8 JSON, one request
each. We answer one compact JSON line per request on stdout, flushed:
``{"requestId": N, "ok": true|false, "archiveRef"?, "prunedCalls"?, "view"?, "error"?}``
(``view``: the capped text a ``result_text`` with ``capBytes`` asked for, made by
the broker after the commit; absent when the text fits the cap).

The bridge checks only what it owns — frame bounds, ``requestId``,
``schemaVersion``, ``begin_call``'s ``deadlineAtMs``, and the identity of the
stream and source files a request names (which only this process can see as
the adapter left them) — and forwards the adapter's operation otherwise
unchanged: one decode, one encode, both in C (`_json`, as every short-lived
client does: importing orjson alone costs a bridge more start-up CPU than
all its other work, see `yarp.wire.protocol`). The broker is the only
validator of the operation; a contract violation comes back with its own code
(`ContractViolation`) and ends the bridge with 74 as before. `yarp.clients.broker`
owns reconnect and replay, and a replay re-sends the exact forwarded bytes.
This process never opens SQLite for writing.

Per request the bridge makes four system calls: one read of stdin (straight
into the splitter's buffer), one send and one recv on the broker socket (the
kernel's timeouts are set once per connection, see `yarp.clients.broker`), one write
of the acknowledgement.

Exit statuses: 0 on EOF at a frame boundary; 74 for a malformed frame or JSON,
a request that breaks the contract, a wrong schemaVersion, an expired or
invalid deadline, or a transport failure that survives replay (after one
bounded line on stderr). A broker rejection is answered ``ok: false`` and the
bridge goes on.
"""

from __future__ import annotations

import os
import sys
import time

from yarp.clients.broker import BrokerClient
from yarp.errors import (
    BrokerUnavailable,
    ContractViolation,
    DataError,
    DeadlineExceeded,
    FrameError,
    HandshakeMismatch,
    UnknownOutcome,
    ValidationError,
    YarpError,
    bounded_text,
)
from yarp.json_text import dumps as client_dumps
from yarp.json_text import loads as client_loads
from yarp.limits import DEFAULT_DEADLINE_MS, MAX_DEADLINE_MS, MAX_FRAME_BYTES, MAX_SAFE_INTEGER
from yarp.paths import ArchiveLocation
from yarp.wire import operations as ops
from yarp.wire.frames import FrameSplitter
from yarp.wire.protocol import Outgoing, routing

SCHEMA_VERSION = 1
#: Time allowed to reach (or start) the broker before any input is read.
CONNECT_TIMEOUT_S = 5.0
#: Bytes asked of one read of stdin (a frame in progress is read straight into its body).
_READ_CHUNK = 256 * 1024
_MAX_REQUEST_ID = MAX_SAFE_INTEGER
#: Shortest identity prefix that is still redacted when an error text cut an identity short.
_MIN_REDACTED_PREFIX = 8
#: Operations whose acknowledgement carries the call's archive reference.
_REF_KINDS = frozenset({"begin_call", "result_text"})
#: The file fields each operation may name, whose identity the bridge declares.
_FILE_FIELDS = {
    "capture_streams": ("stdoutBeforePath", "stderrBeforePath", "stdoutAfterPath", "stderrAfterPath"),
    "capture_passthrough_streams": ("stdoutPath", "stderrPath"),
    "result_before": ("fullOutputPath",),
}
#: Routing for an operation whose identity fields are not all strings: the
#: broker refuses the operation itself (a contract violation) before it
#: looks at the envelope's identities.
_UNROUTABLE = "0" * 64


class BridgeExit(Exception):
    """Internal: end the bridge with status 74 after reporting `error` once."""

    def __init__(self, error: YarpError) -> None:
        super().__init__(error.message)
        self.error = error


class IngestRequest:
    """One relayed request: what the bridge answers with, and what it forwards."""

    __slots__ = ("request_id", "kind", "deadline_ms", "identities", "outgoing")

    def __init__(self, request_id: int, kind: str, deadline_ms: int, identities: tuple[str, ...],
                 outgoing: Outgoing) -> None:
        self.request_id = request_id
        self.kind = kind
        self.deadline_ms = deadline_ms
        self.identities = identities
        self.outgoing = outgoing


def _identities(obj: dict) -> tuple[str | None, ...]:
    """agent, account, sourceSessionId, sourceCallId as sent (None where absent or not a string)."""
    session = obj.get("session")
    if not isinstance(session, dict):
        session = {}
    call = obj.get("call")
    call_id = call.get("sourceCallId") if isinstance(call, dict) else obj.get("sourceCallId")
    found = (session.get("agent"), session.get("account"), session.get("sourceSessionId"), call_id)
    return tuple(v if isinstance(v, str) else None for v in found)


def _redaction_set(ids: tuple[str | None, ...]) -> tuple[str, ...]:
    return tuple(sorted({s for s in ids if s}, key=len, reverse=True))


def redact(text: str, identities: tuple[str, ...]) -> str:
    """Bound an error text and replace source identities with `<source>`.

    Error texts are cut (field names at 40 characters, whole messages at
    `MAX_ERROR_CHARS`), so an identity may appear only as a prefix: any run of
    at least `_MIN_REDACTED_PREFIX` leading characters of an identity is
    replaced too.
    """
    for identity in identities:
        text = text.replace(identity, "<source>")
        if len(identity) >= _MIN_REDACTED_PREFIX:
            text = _redact_prefixes(text, identity)
    return bounded_text(text)


def _redact_prefixes(text: str, identity: str) -> str:
    head = identity[:_MIN_REDACTED_PREFIX]
    out: list[str] = []
    start = 0
    while (found := text.find(head, start)) >= 0:
        end = found + _MIN_REDACTED_PREFIX
        while end < len(text) and end - found < len(identity) and text[end] == identity[end - found]:
            end += 1
        out.append(text[start:found])
        out.append("<source>")
        start = end
    out.append(text[start:])
    return "".join(out)


def _declare_files(obj: dict, names: tuple[str, ...]) -> None:
    """Replace each named file path with the identity (device, inode, size) we see now.

    The broker then snapshots only that very file; a swap in between is
    refused. A path that cannot be stat'ed, or is not a regular file, is
    passed on unchanged for the broker to refuse; anything but a string is
    the broker's to judge too.
    """
    for name in names:
        path = obj.get(name)
        if isinstance(path, str) and path.startswith("/"):
            try:
                st = os.lstat(path)
            except (OSError, ValueError):
                continue
            if st.st_mode & 0o170000 == 0o100000:  # S_ISREG, without importing stat
                obj[name] = {"path": path, "device": st.st_dev, "inode": st.st_ino, "size": st.st_size}


def _decode(frame: bytes) -> object:
    """The C scanner `json` runs on: integers stay exact, NaN and Infinity are refused."""
    try:
        return client_loads(frame, "request frame")
    except YarpError as exc:
        raise BridgeExit(exc) from None


def _encode(operation: dict) -> bytes:
    try:
        return client_dumps(operation)
    except ValidationError as exc:  # a lone surrogate: not UTF-8, cannot be forwarded
        raise BridgeExit(exc) from None


def parse_request(frame: bytes, now_ms: int) -> IngestRequest:
    """Check what the bridge owns in one frame and encode the operation to forward.

    Raises `BridgeExit` for a frame the bridge cannot route: not a JSON
    object, a bad `requestId` or `schemaVersion`, an unknown operation, an
    invalid or expired `deadlineAtMs`. Everything else about the operation is
    the broker's to validate.
    """
    obj = _decode(frame)
    if not isinstance(obj, dict):
        raise BridgeExit(ValidationError("request must be a JSON object"))
    request_id = obj.pop("requestId", None)
    if type(request_id) is not int or not 0 <= request_id <= _MAX_REQUEST_ID:
        raise BridgeExit(ValidationError("requestId must be an unsigned integer"))
    if obj.pop("schemaVersion", None) != SCHEMA_VERSION:
        raise BridgeExit(ValidationError("schemaVersion must be 1"))
    kind = obj.get("operation")
    op_type = ops.OPERATIONS_BY_KIND.get(kind) if isinstance(kind, str) else None
    if op_type is None:
        raise BridgeExit(ValidationError("unknown operation"))
    deadline_ms = DEFAULT_DEADLINE_MS
    if kind == "begin_call":
        # The absolute deadline is ingest-side routing data, not archived content.
        deadline_at = obj.pop("deadlineAtMs", None)
        if deadline_at is not None:
            if type(deadline_at) is not int or deadline_at < 0:
                raise BridgeExit(ValidationError("begin_call.deadlineAtMs must be a non-negative integer of "
                                                 "milliseconds"))
            remaining = deadline_at - now_ms
            if remaining <= 0:
                raise BridgeExit(DeadlineExceeded("begin_call deadlineAtMs has already passed"))
            if remaining > MAX_DEADLINE_MS:
                raise BridgeExit(ValidationError(f"begin_call deadlineAtMs is more than {MAX_DEADLINE_MS} ms ahead"))
            deadline_ms = remaining
    files = _FILE_FIELDS.get(kind)
    if files is not None:
        _declare_files(obj, files)
    ids = _identities(obj)
    if kind == "prune_before":
        out_routing = routing(_prune_id(obj), ops.MAINTENANCE_SOURCE_KEY, op_type.sequence)
    elif None in ids:
        out_routing = routing(_UNROUTABLE, _UNROUTABLE, op_type.sequence)
    else:
        out_routing = routing(*ops.identities(ids, kind), op_type.sequence)
    policy = ops.REPLAY_BY_KIND[kind]
    return IngestRequest(request_id, kind, deadline_ms, _redaction_set(ids), Outgoing(kind, policy, out_routing,
                                                                                     _encode(obj)))


def _prune_id(obj: dict) -> str:
    timestamp, incomplete = obj.get("timestampMs"), obj.get("incompleteBeforeMs")
    if type(timestamp) is not int:
        return _UNROUTABLE
    # A wrong type of the optional fields is the broker's to refuse (by their names); the id is the plain one's.
    return ops.prune_operation_id(timestamp, incomplete if type(incomplete) is int else None,
                                  obj.get("dryRun") is True)


def ack(request_id: int, reply: dict | None = None, error: str | None = None, kind: str = "") -> bytes:
    """One acknowledgement line for the adapter: ok or the bounded error, the archive ref where the kind has
    one, and the view a `result_text` asked for."""
    body: dict = {"requestId": request_id, "ok": error is None}
    if reply is not None:
        if kind in _REF_KINDS and reply.get("archiveRef"):
            body["archiveRef"] = reply["archiveRef"]
        if reply.get("prunedCalls") is not None:
            body["prunedCalls"] = reply["prunedCalls"]
            for name in ("prunedIncompleteCalls", "dryRun"):  # a prune that asked for them
                if name in reply:
                    body[name] = reply[name]
        if kind == "result_text" and isinstance(reply.get("view"), str):
            body["view"] = reply["view"]
    if error is not None:
        body["error"] = error
    return client_dumps(body) + b"\n"


class Bridge:
    """Reads frames from `stdin`, answers acks on `stdout`, relays to the broker."""

    def __init__(self, location: ArchiveLocation, stdin, stdout, environ=os.environ) -> None:
        self.client = BrokerClient(location, environ)
        self.stdin_fd = stdin.fileno()
        self.stdout_fd = stdout.fileno()

    def _write(self, line: bytes) -> None:
        # One write system call, no buffered layer to flush.
        view = memoryview(line)
        while view:
            view = view[os.write(self.stdout_fd, view):]

    def serve(self) -> int:
        """Relay frames until stdin ends at a frame boundary, then return 0.

        Raises `BridgeExit` when the broker cannot be reached or a frame is malformed or cut short.
        """
        try:
            self.client.connect(time.monotonic() + CONNECT_TIMEOUT_S)
        except YarpError as exc:
            raise BridgeExit(exc) from None
        splitter = FrameSplitter(MAX_FRAME_BYTES)
        fd = self.stdin_fd
        while True:
            try:
                # Straight into the splitter: its reused scratch buffer, or the
                # body of a large frame in progress (no staging copy).
                count = os.readv(fd, (splitter.get_buffer(_READ_CHUNK),))
            except InterruptedError:
                continue
            if not count:
                if splitter.at_boundary:
                    return 0
                raise BridgeExit(FrameError("input ended inside a frame"))
            try:
                frames = splitter.buffer_updated(count)
            except FrameError as exc:
                raise BridgeExit(exc) from None
            for frame in frames:
                self._handle(frame)

    def _handle(self, frame: bytes) -> None:
        started = time.monotonic()
        try:
            request = parse_request(frame, int(time.time() * 1000))
        except BridgeExit as exit_:
            request_id = _peek_request_id(frame)
            if request_id is not None:
                self._write(ack(request_id, error=exit_.error.message))
            raise
        try:
            reply = self.client.send(request.outgoing, started + request.deadline_ms / 1000)
        except ContractViolation as exc:
            # The broker found the operation breaks the adapter contract: as
            # fatal as a malformed frame, exactly as if we had checked it here.
            message = redact(exc.message, request.identities)
            self._write(ack(request.request_id, error=message))
            raise BridgeExit(ValidationError(message)) from None
        except (DataError, UnknownOutcome) as exc:
            # A broker rejection (or an unknown prune outcome) is answered and we go on.
            self._write(ack(request.request_id, error=redact(exc.message, request.identities)))
            return
        except YarpError as exc:
            message = redact(exc.message, request.identities)
            self._write(ack(request.request_id, error=message))
            if isinstance(exc, _FATAL):
                # Transport failures that survived replay, and expired deadlines, end the bridge.
                raise BridgeExit(type(exc)(message)) from None
            return
        self._write(ack(request.request_id, reply, kind=request.kind))


#: Failures that end the bridge (exit 74) after their acknowledgement line.
_FATAL = (BrokerUnavailable, DeadlineExceeded, HandshakeMismatch)


def _peek_request_id(frame: bytes) -> int | None:
    try:
        obj = client_loads(frame, "request frame")
    except YarpError:
        return None
    if isinstance(obj, dict):
        rid = obj.get("requestId")
        if isinstance(rid, int) and not isinstance(rid, bool) and 0 <= rid <= _MAX_REQUEST_ID:
            return rid
    return None


def main(location: ArchiveLocation, environ=os.environ) -> int:
    """Run the ingest bridge on stdin and stdout; return 0 at a clean end, else report one line and return 74.

    A broken adapter stream is a transport failure too: acknowledgements could not be delivered.
    """
    bridge = Bridge(location, sys.stdin, sys.stdout, environ)
    try:
        return bridge.serve()
    except BridgeExit as exc:
        message = exc.error.message
    except OSError as exc:
        # stdin/stdout failed (the adapter closed its end): the acknowledgement
        # cannot be delivered, which is a transport failure, not a clean end.
        if isinstance(exc, BrokenPipeError):
            # Keep interpreter shutdown from flushing the unwritable stream.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        message = bounded_text(f"adapter stream failed: {exc.strerror or type(exc).__name__}")
    finally:
        bridge.client.close()
    sys.stderr.write(f"yarp: archive ingest: {message}\n")
    sys.stderr.flush()
    return 74
