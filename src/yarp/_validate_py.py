"""Request validation in the broker: the envelope, then the operation it carries.

This is the pure-Python twin and the reference: `yarp._validate` is the typed
Cython implementation of the same rules (C-level scanning of the frame and of
the operation's fields), and `yarp.wire.validation` picks one. Every case runs
against both (the c/py fixture of tests/test_operations.py), and
tests/test_validate_twins.py crosses them on generated requests: the same
result, or the same error class and text. The service requests of the hooks
and `yarp run` are validated by one shared source, `yarp._validate_services`.

Validation is structural and bounded: types, required and unknown fields,
identity lengths, enumerations, nesting depth. Canonicalisation, hashing and
file snapshots happen later, in `yarp.archive.prepare`. Identities are derived once,
here, from the validated operation, and compared with what the envelope
claims: the broker routes and stores by the proven values.

A change to a rule here is made in `yarp._validate.pyx` too (same order of
checks, same error text); the crossing tests fail until it is.
"""

from yarp._validate_services import hook_request, run_request
from yarp.errors import ContractViolation, ValidationError
from yarp.json_text import decode as decode_json
from yarp.limits import (
    MAX_CAP_BYTES,
    MAX_DEADLINE_MS,
    MAX_IDENTITY_CHARS,
    MAX_IMPORT_BATCH_CALLS,
    MAX_JSON_DEPTH,
    MAX_NAME_CHARS,
    MAX_WORKING_DIRECTORY_CHARS,
    MIN_CAP_BYTES,
    MIN_DEADLINE_MS,
)
from yarp.wire import operations as ops
from yarp.wire.protocol import CONTROLS, SCHEMA, Control, Envelope

IMPLEMENTATION = "py"
__all__ = ["IMPLEMENTATION", "check_json", "check_operation", "event_text", "parse_imported_call",
           "parse_operation", "parse_request"]

#: Unix milliseconds must fit SQLite's signed 64-bit integers and be non-negative.
MAX_TIME_MS = ops.MAX_TIME_MS
COMPLETENESS = ops.COMPLETENESS
_ENVELOPE_FIELDS = frozenset({"schema", "correlationId", "operationId", "sourceKey", "sequence", "deadlineMs",
                              "operation"})
_CONTROL_FIELDS = frozenset({"schema", "correlationId", "control"})
#: Deletion table: a value made only of these characters is empty after deleting them.
_LOWER_HEX = str.maketrans("", "", "0123456789abcdef")


def _is_lower_hex(value, length):
    return type(value) is str and len(value) == length and not value.translate(_LOWER_HEX)


# --- the envelope ------------------------------------------------------------------


def parse_request(frame, correlation_id):
    """Decode one request frame, once, and validate its outer form.

    An `Envelope` (an archive operation, checked further by
    `check_operation`), a `Control`, or a service request of the per-tool-call
    clients: a `HookRequest`, or a `RunBegin`, `RunCapture` or
    `RunNotStarted`. What a frame is comes from its decoded members, never
    from its bytes.
    """
    obj = decode_json(frame, "envelope")
    if type(obj) is not dict:
        raise ValidationError("envelope must be a JSON object")
    if obj.get("schema") != SCHEMA:
        raise ValidationError("envelope schema is not supported")
    if obj.get("correlationId") != correlation_id:
        raise ValidationError("envelope correlation id does not match the connection")
    if "hook" in obj:
        return hook_request(obj)
    if "run" in obj:
        return run_request(obj)
    return _envelope(obj, correlation_id)


def _envelope(obj, correlation_id):
    """The routing envelope of a decoded request whose schema and correlation id were checked.

    Structural only: the operation inside is checked by `check_operation`,
    on the loop for a small request or in the pool for a large one.
    """
    if "control" in obj:
        if obj.keys() != _CONTROL_FIELDS or obj["control"] not in CONTROLS:
            raise ValidationError("unknown control request")
        return Control(correlation_id, obj["control"])
    if obj.keys() != _ENVELOPE_FIELDS:
        raise ValidationError("envelope has unknown or missing fields")
    op_id = obj["operationId"]
    key = obj["sourceKey"]
    seq = obj["sequence"]
    deadline = obj["deadlineMs"]
    operation = obj["operation"]
    if not _is_lower_hex(op_id, 64):
        raise ValidationError("envelope operation identity is malformed")
    if not _is_lower_hex(key, 64):
        raise ValidationError("envelope source key is malformed")
    if type(seq) is not int or not 0 <= seq <= 6:
        raise ValidationError("envelope sequence is not a known operation sequence")
    if type(deadline) is not int or not MIN_DEADLINE_MS <= deadline <= MAX_DEADLINE_MS:
        raise ValidationError(f"envelope deadline must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms")
    if type(operation) is not dict:
        raise ValidationError("envelope operation must be a JSON object")
    kind = operation.get("operation")
    op_type = ops.OPERATIONS_BY_KIND.get(kind) if type(kind) is str else None
    if op_type is None:
        raise ValidationError("unknown operation")
    if seq != op_type.sequence:
        raise ValidationError("envelope sequence does not match the operation")
    return Envelope(correlation_id, op_id, key, seq, deadline, operation, kind)


def check_operation(env):
    """Validate the envelope's operation and prove the envelope's identities; return the operation.

    A malformed operation is a `ContractViolation` (the adapter contract's
    own rules); identities that do not match it are the envelope's fault.
    """
    try:
        operation = parse_operation(env.operation)
    except ValidationError as exc:
        raise ContractViolation(exc.message) from None
    if env.kind == "prune_before":
        operation_id = ops.prune_operation_id(operation.timestamp_ms, operation.incomplete_before_ms,
                                              operation.dry_run)
        source_key = ops.MAINTENANCE_SOURCE_KEY
    elif env.kind == "import_calls":
        operation_id, source_key = ops.operation_id(operation), ops.source_key(operation)
    else:
        s = operation.session
        operation_id, source_key = ops.identities(
            (s.agent, s.account, s.source_session_id, operation.source_call_id), env.kind)
    if source_key != env.source_key:
        raise ValidationError("envelope source key does not match the operation")
    if operation_id != env.operation_id:
        raise ValidationError("envelope operation identity does not match the operation")
    return operation


# --- the operation ------------------------------------------------------------------

_MISSING = object()


class _Fields:
    """Strict reader over one JSON object: typed getters, unknown fields rejected."""

    def __init__(self, obj, where, *, tolerate_unknown=False):
        if not isinstance(obj, dict):
            raise ValidationError(f"{where} must be a JSON object")
        self.obj = obj
        self.where = where
        self.used = set()
        self.tolerate_unknown = tolerate_unknown

    def _get(self, name, required):
        self.used.add(name)
        value = self.obj.get(name, _MISSING)
        if value is _MISSING or value is None:
            # Optional fields may be absent or null; a required one may be neither.
            if required:
                raise ValidationError(f"{self.where}.{name} is required")
            return None
        return value

    def text(self, name, limit, *, required=True, allow_empty=False):
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValidationError(f"{self.where}.{name} must be a string")
        if len(value) > limit:
            raise ValidationError(f"{self.where}.{name} is longer than {limit} characters")
        if not value and not allow_empty:
            raise ValidationError(f"{self.where}.{name} must not be empty")
        _check_scalar_text(value, f"{self.where}.{name}")
        return value

    def any_text(self, name):
        value = self._get(name, True)
        if not isinstance(value, str):
            raise ValidationError(f"{self.where}.{name} must be a string")
        _check_scalar_text(value, f"{self.where}.{name}")
        return value

    def time_ms(self, name, *, required=True):
        value = self._get(name, required)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_TIME_MS:
            raise ValidationError(f"{self.where}.{name} must be a non-negative integer of milliseconds")
        return value

    def cap_bytes(self, name):
        """An optional cap in bytes, with `output.cap_bytes`'s range: 0 or MIN_CAP_BYTES..MAX_CAP_BYTES."""
        value = self._get(name, False)
        if value is None:
            return None
        if (not isinstance(value, int) or isinstance(value, bool)
                or not (value == 0 or MIN_CAP_BYTES <= value <= MAX_CAP_BYTES)):
            raise ValidationError(f"{self.where}.{name} must be 0 or {MIN_CAP_BYTES} to {MAX_CAP_BYTES} bytes")
        return value

    def flag(self, name, *, required=True):
        value = self._get(name, required)
        if value is None and not required:
            return False
        if not isinstance(value, bool):
            raise ValidationError(f"{self.where}.{name} must be a boolean")
        return value

    def json(self, name):
        self.used.add(name)
        if name not in self.obj:
            raise ValidationError(f"{self.where}.{name} is required")
        value = self.obj[name]
        if _too_deep(value, MAX_JSON_DEPTH):
            raise ValidationError(f"{self.where}.{name} is nested deeper than {MAX_JSON_DEPTH} levels")
        return value

    def choice(self, name, allowed):
        value = self._get(name, True)
        if value not in allowed:
            raise ValidationError(f"{self.where}.{name} must be one of {', '.join(allowed)}")
        return value

    def finish(self):
        if self.tolerate_unknown:
            return
        unknown = set(self.obj) - self.used
        if unknown:
            names = ", ".join(sorted(_bounded_name(n) for n in unknown)[:5])
            raise ValidationError(f"{self.where} has unknown field(s): {names}")


def _too_deep(value, limit):
    """Whether a JSON value nests containers more than `limit` levels (level by level: no recursion).

    Only containers are carried to the next level, so a wide object of
    scalars (the common tool input) costs one pass over its values.
    """
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 1
    while level:
        if depth > limit:
            return True
        deeper = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, (dict, list)):
                    deeper.append(child)
        level = deeper
        depth += 1
    return False


def _bounded_name(name):
    return name[:40] if name.isprintable() else "<non-printable>"


def _check_scalar_text(value, where):
    # Lone surrogates cannot be stored as UTF-8; refuse them at the boundary.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(f"{where} is not valid Unicode text") from None


def _session(obj):
    f = _Fields(obj, "session", tolerate_unknown=True)
    # Positional construction (in field order) is the records' fast path.
    return ops.Session(
        f.text("agent", MAX_NAME_CHARS),
        f.text("account", MAX_IDENTITY_CHARS),
        f.text("sourceSessionId", MAX_IDENTITY_CHARS),
        f.time_ms("startedAtMs", required=False),
    )


def _call(obj):
    f = _Fields(obj, "call", tolerate_unknown=True)
    # Checked in this order (the first failure is the one reported), built positionally.
    source_call_id = f.text("sourceCallId", MAX_IDENTITY_CHARS)
    tool_name = f.text("toolName", MAX_NAME_CHARS)
    provider = f.text("provider", MAX_NAME_CHARS, required=False)
    model = f.text("model", MAX_NAME_CHARS, required=False)
    working_directory = f.text("workingDirectory", MAX_WORKING_DIRECTORY_CHARS, required=False)
    started_at_ms = f.time_ms("startedAtMs")
    requires_streams = f.flag("requiresStreams")
    return ops.CallMeta(source_call_id, tool_name, started_at_ms, requires_streams, provider, model,
                        working_directory)


def parse_imported_call(obj, where):
    """One element of an `import_calls` operation's `calls`."""
    f = _Fields(obj, where)
    session = _session(f.json("session"))
    meta = _call(f.json("call"))
    if meta.requires_streams:
        raise ValidationError(f"{where}.call.requiresStreams must be false for an imported call")
    value = f.json("input")
    has_result = "result" in f.obj
    result = is_error = finished = path = text = source = None
    executed = True
    completeness = "complete"
    if has_result:
        result = f.json("result")
        is_error = f.flag("isError")
        finished = f.time_ms("finishedAtMs")
        if "executed" in f.obj:
            executed = f.flag("executed")
        path = f.text("sourceOutputPath", MAX_WORKING_DIRECTORY_CHARS, required=False)
        if path is not None and (not path.startswith("/") or "\x00" in path):
            raise ValidationError(f"{where}.sourceOutputPath must be an absolute path")
        if "sourceOutput" in f.obj:
            if path is not None:
                raise ValidationError(f"{where} names a sourceOutputPath and holds a sourceOutput")
            source = f.any_text("sourceOutput")
        if "resultText" in f.obj:
            text = f.any_text("resultText")
            if "resultTextCompleteness" in f.obj:
                completeness = f.choice("resultTextCompleteness", COMPLETENESS)
    f.finish()
    return ops.ImportedCall(session, meta, value, result, has_result, bool(is_error), finished, path, text,
                            executed, source, completeness)


def _import_calls(obj):
    f = _Fields(obj, "import_calls")
    f.used.add("operation")
    batch_id = f.text("batchId", MAX_IDENTITY_CHARS)
    captured_at_ms = f.time_ms("capturedAtMs")
    raw = f.json("calls")
    f.finish()
    if not isinstance(raw, list) or not raw:
        raise ValidationError("import_calls.calls must be a non-empty list")
    if len(raw) > MAX_IMPORT_BATCH_CALLS:
        raise ValidationError(f"import_calls.calls holds more than {MAX_IMPORT_BATCH_CALLS} calls")
    calls = tuple(parse_imported_call(item, f"import_calls.calls[{i}]") for i, item in enumerate(raw))
    if batch_id != ops.import_batch_id(calls):
        raise ValidationError("import_calls.batchId does not match its calls")
    return ops.ImportCalls(batch_id, calls, captured_at_ms)


def _stream_file(f, name, *, required=True):
    """A path string (ingest form) or {path, device, inode, size} (runner form)."""
    value = f._get(name, required)
    if value is None:
        return None
    if isinstance(value, str):
        sub_path = value
        device = inode = size = None
    else:
        g = _Fields(value, f"{f.where}.{name}")
        sub_path = g.text("path", MAX_WORKING_DIRECTORY_CHARS)
        device, inode, size = (g.time_ms(k, required=False) for k in ("device", "inode", "size"))
        g.finish()
    if not isinstance(sub_path, str) or not sub_path.startswith("/") or "\x00" in sub_path:
        raise ValidationError(f"{f.where}.{name} must be an absolute path")
    if len(sub_path) > MAX_WORKING_DIRECTORY_CHARS:
        raise ValidationError(f"{f.where}.{name} is too long")
    return ops.StreamFile(sub_path, device, inode, size)


def _call_target(f):
    return _session(f.json("session")), f.text("sourceCallId", MAX_IDENTITY_CHARS)


def parse_operation(obj):
    """Validate one operation object (without requestId/schemaVersion) strictly."""
    if not isinstance(obj, dict):
        raise ValidationError("operation must be a JSON object")
    kind = obj.get("operation")
    if not isinstance(kind, str) or kind not in ops.OPERATIONS_BY_KIND:
        raise ValidationError("unknown operation")
    if kind == "import_calls":
        return _import_calls(obj)
    f = _Fields(obj, kind)
    f.used.add("operation")
    if kind == "begin_call":
        op = ops.BeginCall(
            _session(f.json("session")),
            _call(f.json("call")),
            f.json("inputBefore"),
            f.json("inputAfter"),
            f.time_ms("capturedAtMs"),
            f.time_ms("deadlineAtMs", required=False),
        )
    elif kind == "prune_before":
        op = ops.PruneBefore(f.time_ms("timestampMs"), f.time_ms("incompleteBeforeMs", required=False),
                             f.flag("dryRun", required=False))
    else:
        session, call_id = _call_target(f)
        if kind == "result_before":
            op = ops.ResultBefore(session, call_id, f.json("result"), f.time_ms("capturedAtMs"),
                              _stream_file(f, "fullOutputPath", required=False))
        elif kind == "result_text":
            op = ops.ResultText(session, call_id, f.any_text("text"), f.choice("sourceCompleteness", COMPLETENESS),
                                f.time_ms("capturedAtMs"), f.cap_bytes("capBytes"))
        elif kind == "stage_result":
            op = ops.StageResult(session, call_id, f.json("result"), f.flag("isError"), f.time_ms("capturedAtMs"))
        elif kind == "finish_call":
            op = ops.FinishCall(session, call_id, f.json("result"), f.flag("isError"),
                            f.flag("requirePreResult"), f.time_ms("finishedAtMs"))
        elif kind == "update_final_result":
            op = ops.UpdateFinalResult(session, call_id, f.json("result"), f.flag("isError"),
                                   f.time_ms("finishedAtMs"))
        elif kind == "capture_streams":
            op = ops.CaptureStreams(session, call_id, f.time_ms("capturedAtMs"),
                                *(_stream_file(f, n) for n in ("stdoutBeforePath", "stderrBeforePath",
                                                               "stdoutAfterPath", "stderrAfterPath")))
        else:
            op = ops.CapturePassthroughStreams(session, call_id, f.time_ms("capturedAtMs"),
                                           _stream_file(f, "stdoutPath"), _stream_file(f, "stderrPath"))
    f.finish()
    return op


# --- records built in the broker ---------------------------------------------------------


def check_json(value, where):
    """Refuse a JSON value (an agent's tool input or response) nested deeper than `MAX_JSON_DEPTH`."""
    if _too_deep(value, MAX_JSON_DEPTH):
        raise ValidationError(f"{where} is nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def event_text(payload, name, limit, required=True):
    """The string field `name` of an agent's hook event, bounded; None when absent and not `required`."""
    value = payload.get(name)
    if value is None or value == "":
        if required:
            raise ValidationError(f"hook event field {name} is missing")
        return None
    if type(value) is not str or len(value) > limit or "\x00" in value:
        raise ValidationError(f"hook event field {name} is not a string of at most {limit} characters")
    _check_scalar_text(value, f"hook event field {name}")
    return value
