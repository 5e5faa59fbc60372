"""`yarp archive ingest`: the framed adapter bridge to the broker.

Adapters (one long-lived bridge per agent session) write frames on our stdin:
an 8-byte big-endian length and that many bytes of UTF-8 JSON, one request
each. We answer one compact JSON line per request on stdout, flushed:
``{"requestId": N, "ok": true|false, "archiveRef"?, "prunedCalls"?, "error"?}``.

Requests follow the reference contract (camelCase fields, ``schemaVersion: 1``,
``requestId``, snake_case ``operation``). We validate them strictly, turn them
into agent-neutral operations, and send them through `yarp.client`, which owns
reconnect and replay. This process never opens SQLite for writing.

Exit statuses: 0 on EOF at a frame boundary; 74 for a malformed frame or JSON,
a request that breaks the contract, a wrong schemaVersion, an expired or
invalid deadline, or a transport failure that survives replay (after one
bounded line on stderr). A broker rejection is answered ``ok: false`` and the
bridge goes on.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from dataclasses import dataclass
from typing import BinaryIO

import orjson

from . import operations as ops
from .client import BrokerClient
from .errors import (
    BrokerUnavailable,
    DataError,
    DeadlineExceeded,
    FrameError,
    HandshakeMismatch,
    UnknownOutcome,
    ValidationError,
    YarpError,
    bounded_text,
)
from .fastframe import FrameSplitter
from .limits import DEFAULT_DEADLINE_MS, MAX_DEADLINE_MS, MAX_FRAME_BYTES
from .paths import ArchiveLocation
from .protocol import decode_json

SCHEMA_VERSION = 1
#: Time allowed to reach (or start) the broker before any input is read.
CONNECT_TIMEOUT_S = 5.0
_READ_CHUNK = 1024 * 1024
_MAX_REQUEST_ID = 2**53 - 1
#: Shortest identity prefix that is still redacted when an error text cut an identity short.
_MIN_REDACTED_PREFIX = 8
#: Operations whose acknowledgement carries the call's archive reference.
_REF_KINDS = frozenset({"begin_call", "result_text"})
_STREAM_FIELDS = ("stdoutBeforePath", "stderrBeforePath", "stdoutAfterPath", "stderrAfterPath",
                  "stdoutPath", "stderrPath", "fullOutputPath")


class BridgeExit(Exception):
    """Internal: end the bridge with status 74 after reporting `error` once."""

    def __init__(self, error: YarpError) -> None:
        super().__init__(error.message)
        self.error = error


@dataclass(frozen=True, slots=True)
class IngestRequest:
    request_id: int
    operation: ops.ArchiveOperation
    deadline_ms: int
    identities: tuple[str, ...]


def _identities(obj: dict) -> tuple[str, ...]:
    found: list[str] = []
    session = obj.get("session")
    if isinstance(session, dict):
        found += [session.get(k) for k in ("agent", "account", "sourceSessionId")]
    call = obj.get("call")
    if isinstance(call, dict):
        found.append(call.get("sourceCallId"))
    found.append(obj.get("sourceCallId"))
    return tuple(sorted({s for s in found if isinstance(s, str) and s}, key=len, reverse=True))


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


def _declare_files(obj: dict) -> dict:
    """Add the identity (device, inode, size) of each named stream file as we see it now.

    The broker then snapshots only that very file; a swap in between is refused.
    Paths that cannot be stat'ed are passed on unchanged for the broker to refuse.
    """
    out = dict(obj)
    for name in _STREAM_FIELDS:
        path = out.get(name)
        if isinstance(path, str) and path.startswith("/"):
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out[name] = {"path": path, "device": st.st_dev, "inode": st.st_ino, "size": st.st_size}
    return out


def parse_request(frame: bytes, now_ms: int) -> IngestRequest:
    """Validate one ingest frame; raise `BridgeExit` for contract violations."""
    try:
        # The protocol's decoder never rounds an integer literal into a float.
        obj = decode_json(frame, "request frame")
    except YarpError as exc:
        raise BridgeExit(exc) from None
    if not isinstance(obj, dict):
        raise BridgeExit(ValidationError("request must be a JSON object"))
    request_id = obj.get("requestId")
    if not isinstance(request_id, int) or isinstance(request_id, bool) or not 0 <= request_id <= _MAX_REQUEST_ID:
        raise BridgeExit(ValidationError("requestId must be an unsigned integer"))
    identities = _identities(obj)
    if obj.get("schemaVersion") != SCHEMA_VERSION:
        raise BridgeExit(ValidationError("schemaVersion must be 1"))
    body = {k: v for k, v in obj.items() if k not in ("requestId", "schemaVersion")}
    if body.get("operation") in ("capture_streams", "capture_passthrough_streams", "result_before"):
        for name in _STREAM_FIELDS:
            if name in body and not (body[name] is None or isinstance(body[name], str)):
                raise BridgeExit(ValidationError(f"{name} must be a path string"))
        body = _declare_files(body)
    try:
        operation = ops.parse_operation(body)
    except ValidationError as exc:
        raise BridgeExit(ValidationError(redact(exc.message, identities))) from None
    deadline_ms = DEFAULT_DEADLINE_MS
    if isinstance(operation, ops.BeginCall) and operation.deadline_at_ms is not None:
        remaining = operation.deadline_at_ms - now_ms
        if remaining <= 0:
            raise BridgeExit(DeadlineExceeded("begin_call deadlineAtMs has already passed"))
        if remaining > MAX_DEADLINE_MS:
            raise BridgeExit(ValidationError(f"begin_call deadlineAtMs is more than {MAX_DEADLINE_MS} ms ahead"))
        deadline_ms = remaining
        # The absolute deadline is ingest-side routing data, not archived content.
        operation = operation.replace(deadline_at_ms=None)
    return IngestRequest(request_id, operation, deadline_ms, identities)


def ack(request_id: int, reply: dict | None = None, error: str | None = None, kind: str = "") -> bytes:
    body: dict = {"requestId": request_id, "ok": error is None}
    if reply is not None:
        if kind in _REF_KINDS and reply.get("archiveRef"):
            body["archiveRef"] = reply["archiveRef"]
        if reply.get("prunedCalls") is not None:
            body["prunedCalls"] = reply["prunedCalls"]
    if error is not None:
        body["error"] = error
    return orjson.dumps(body) + b"\n"


class Bridge:
    """Reads frames from `stdin`, answers acks on `stdout`, talks to the broker."""

    def __init__(self, location: ArchiveLocation, stdin: BinaryIO, stdout: BinaryIO, environ=os.environ) -> None:
        self.client = BrokerClient(location, environ)
        self.stdin_fd = stdin.fileno()
        self.stdout = stdout

    def _write(self, line: bytes) -> None:
        self.stdout.write(line)
        self.stdout.flush()

    def serve(self) -> int:
        try:
            self.client.connect(time.monotonic() + CONNECT_TIMEOUT_S)
        except YarpError as exc:
            raise BridgeExit(exc) from None
        splitter = FrameSplitter(MAX_FRAME_BYTES)
        while True:
            try:
                chunk = os.read(self.stdin_fd, _READ_CHUNK)
            except InterruptedError:
                continue
            if not chunk:
                if splitter.at_boundary:
                    return 0
                raise BridgeExit(FrameError("input ended inside a frame"))
            try:
                frames = splitter.feed(chunk)
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
        op = request.operation
        try:
            reply = self.client.request(op, started + request.deadline_ms / 1000)
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
        self._write(ack(request.request_id, reply, kind=op.kind))


#: Failures that end the bridge (exit 74) after their acknowledgement line.
_FATAL = (BrokerUnavailable, DeadlineExceeded, HandshakeMismatch)


def _peek_request_id(frame: bytes) -> int | None:
    try:
        obj = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return None
    if isinstance(obj, dict):
        rid = obj.get("requestId")
        if isinstance(rid, int) and not isinstance(rid, bool) and 0 <= rid <= _MAX_REQUEST_ID:
            return rid
    return None


def main(location: ArchiveLocation, environ=os.environ) -> int:
    bridge = Bridge(location, sys.stdin.buffer, sys.stdout.buffer, environ)
    try:
        return bridge.serve()
    except BridgeExit as exc:
        message = exc.error.message
    except OSError as exc:
        # stdin/stdout failed (the adapter closed its end): the acknowledgement
        # cannot be delivered, which is a transport failure, not a clean end.
        if isinstance(exc, BrokenPipeError):
            # Keep interpreter shutdown from flushing the unwritable buffer again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        message = bounded_text(f"adapter stream failed: {exc.strerror or type(exc).__name__}")
    finally:
        bridge.client.close()
    sys.stderr.write(f"yarp: archive ingest: {message}\n")
    sys.stderr.flush()
    return 74
