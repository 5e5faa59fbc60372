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
Reply: ``{"ok": true, "archiveRef"?, "prunedCalls"?}`` or
``{"ok": false, "code": "<errors code>", "error": "<bounded text>"}``.

The broker validates envelopes and operations in `yarp.wire.validation` (compiled):
`parse_envelope` checks everything the event loop needs to route a request
(cheap, structural); `check_operation` validates the operation and proves the
operation identity, source key and sequence match it. Unknown fields,
schemas, identities and sequences fail.

The broker side encodes and decodes with orjson. The client side (handshake,
envelopes, replies as seen by `yarp run`, ingest and prune) encodes one small
envelope and decodes one small reply at a time, on the path of every shell
command `yarp run` wraps: importing orjson costs about 20 ms there, and the
`json` package 3-5 ms (it imports `re`). So the client uses `_json`, the C
accelerator that `json` itself runs on, directly: the same encoder with the
same settings and output as ``json.dumps(obj, separators=(",", ":"),
ensure_ascii=False, allow_nan=False)``, and the same scanner as `json.loads`,
falling back to the `json` package where the accelerator is missing or the
input needs its slower paths. Identity checks use `str.translate` rather than
regular expressions for the same reason.
"""

from __future__ import annotations

from yarp.wire import operations as ops
from yarp._record import Record
from yarp._version import __version__
from yarp.errors import FrameError, FrameTooLarge, HandshakeMismatch, ValidationError, YarpError, bounded_text
from yarp.limits import MAX_CORRELATION_ID_CHARS, MAX_FRAME_BYTES

# typing costs milliseconds on `yarp run`'s path and is needed by annotations only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMA = "yarp.archive-broker.v1"
#: Deletion tables: a value is made only of these characters when deleting them leaves nothing.
_LOWER_HEX = str.maketrans("", "", "0123456789abcdef")
_CORRELATION_CHARS = str.maketrans("", "", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-")
CONTROLS = ("status",)


#: A run of 20 or more digits may be an integer literal beyond 64 bits, which
#: orjson silently turns into a (rounded) float. Found by mapping digits to "0"
#: and everything else to " " and searching for 20 zeros: C-speed, about 40x
#: faster than the equivalent regular expression.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_TWENTY_DIGITS = b"0" * 20


def _exact_int(text: str) -> int:
    # Kept exact: the operation's preparation refuses what canonical JSON cannot
    # store, as one request-local error, instead of ending the connection here.
    # Python's digit limit (4,300) bounds the conversion cost.
    return int(text)


def _no_constant(_name: str):
    raise FrameError("JSON holds NaN or Infinity")


def _is_lower_hex(value: object, length: int) -> bool:
    return isinstance(value, str) and len(value) == length and not value.translate(_LOWER_HEX)


def _is_correlation_id(value: object) -> bool:
    return (isinstance(value, str) and 1 <= len(value) <= MAX_CORRELATION_ID_CHARS
            and not value.translate(_CORRELATION_CHARS))


def _orjson():
    import orjson  # broker side only; see the module docstring

    return orjson


try:
    from _json import encode_basestring as _c_encode_string
    from _json import make_encoder as _c_make_encoder
    from _json import make_scanner as _c_make_scanner
except ImportError:  # an interpreter without the accelerator: the json package does it all
    _c_make_encoder = _c_make_scanner = None


def _not_json(value: object):
    raise TypeError("not a JSON type")


class _ScanSettings:
    """What the C scanner reads off `json.JSONDecoder`: the defaults of `json.loads`."""

    def __init__(self) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = _no_constant


_scan_once = _c_make_scanner(_ScanSettings()) if _c_make_scanner is not None else None


def _client_dumps(obj: Any) -> bytes:
    try:
        if _c_make_encoder is not None:
            encode = _c_make_encoder({}, _not_json, _c_encode_string, None, ":", ",", False, False, False)
            return "".join(encode(obj, 0)).encode("utf-8")
        import json

        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        raise ValidationError("operation holds a value that cannot be archived (NaN, a lone surrogate "
                              "or a non-JSON type)") from None


def _client_loads(frame: bytes, what: str) -> Any:
    try:
        text = frame.decode("utf-8")
        if _scan_once is not None:
            try:
                value, end = _scan_once(text, 0)
            except (StopIteration, ValueError, SystemError):
                # Not JSON. The accelerator reports its errors through the
                # `json` package; before that is imported it may fail without
                # a proper exception (SystemError). Either way the full parser
                # below gives the answer.
                end = -1
            if end == len(text):
                return value
        # Surrounding whitespace, or not JSON: the full parser decides.
        import json

        return json.loads(text)
    except (ValueError, RecursionError):
        raise FrameError(f"{what} is not valid UTF-8 JSON") from None


#: The client side's codec, for other short-lived processes (the ingest relay):
#: exact integers, compact output, no orjson import.
client_dumps = _client_dumps
client_loads = _client_loads


def decode_json(frame: bytes, what: str) -> Any:
    """Decode one frame's JSON; integer literals are never rounded into floats."""
    orjson = _orjson()
    try:
        value = orjson.loads(frame)
    except orjson.JSONDecodeError:
        raise FrameError(f"{what} is not valid UTF-8 JSON") from None
    if _TWENTY_DIGITS not in frame.translate(_DIGITS_ONLY):
        return value
    # Rare: re-read with a parser that sees integer literals as written.
    import json

    try:
        return json.loads(frame, parse_int=_exact_int, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, YarpError):
            raise
        raise FrameError(f"{what} is not valid UTF-8 JSON") from None


# --- handshake ---------------------------------------------------------------


def handshake(archive_id: str, correlation_id: str) -> bytes:
    """The client's handshake frame: schema, binary version, the archive it expects and its correlation id."""
    return _client_dumps(
        {"schema": SCHEMA, "binaryVersion": __version__, "archiveId": archive_id, "correlationId": correlation_id}
    )


def check_handshake(frame: bytes, archive_id: str) -> str:
    """Validate a client's handshake; return its correlation id or raise."""
    obj = decode_json(frame, "handshake")
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
    return _orjson().dumps(reply)


def check_handshake_reply(frame: bytes, archive_id: str, correlation_id: str) -> None:
    """Accept the broker's handshake answer or raise `HandshakeMismatch`.

    Refused: a refusal, another schema or binary version, or an answer for another archive or correlation id.
    """
    obj = _client_loads(frame, "handshake reply")
    if not isinstance(obj, dict):
        raise HandshakeMismatch("handshake reply is not an object")
    if obj.get("ok") is not True:
        raise HandshakeMismatch(bounded_text(str(obj.get("error") or "broker refused the handshake")))
    if obj.get("schema") != SCHEMA or obj.get("binaryVersion") != __version__:
        raise HandshakeMismatch("broker speaks another protocol or binary version")
    if obj.get("archiveId") != archive_id or obj.get("correlationId") != correlation_id:
        raise HandshakeMismatch("broker answered for another archive or connection")


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
                    _client_dumps(ops.operation_to_json(operation)))


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
    return _client_dumps({"schema": SCHEMA, "correlationId": correlation_id, "control": name})


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
    return _orjson().dumps(body)


def reply_error(error: YarpError) -> bytes:
    """A failure reply: the error's code and bounded message, never a payload."""
    return _orjson().dumps({"ok": False, "code": error.code, "error": error.message})


def parse_reply(frame: bytes) -> dict:
    """Decode a broker reply; raises `FrameError` unless it is an object with a boolean `ok`."""
    obj = _client_loads(frame, "broker reply")
    if not isinstance(obj, dict) or not isinstance(obj.get("ok"), bool):
        raise FrameError("broker reply is malformed")
    return obj
