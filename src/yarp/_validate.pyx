# cython: language_level=3, boundscheck=False, wraparound=False, binding=False
"""Compiled request validation: the typed twin of `yarp._validate_py`.

The broker runs this for every request. It applies the twin's rules, in the
twin's order and with the twin's error texts, but reads the frame and the
operation at C level: the envelope's identities and the long-integer guard
are scanned over the bytes and code points, a field reader (`_Fields`) is a
C struct with C methods, and the records are filled slot by slot without
running their Python constructor. The twin stays the reference:
tests/test_operations.py runs every case against both, and
tests/test_validate_twins.py crosses them on generated requests.

The service requests of the hooks and `yarp run` are validated by one shared
source, included below.
"""

from cpython.bool cimport PyBool_Check
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Check, PyDict_GetItem, PyDict_Next, PyDict_Size
from cpython.list cimport PyList_Check, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_Check
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_Check

cdef extern from "Python.h":
    int PyObject_GenericSetAttr(object obj, object name, object value) except -1
    bint PyUnicode_IS_ASCII(object o)
    int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    int PyUnicode_1BYTE_KIND
    int PyUnicode_2BYTE_KIND
    ctypedef unsigned short Py_UCS2
    ctypedef unsigned int Py_UCS4
    ctypedef unsigned char Py_UCS1

from yarp.errors import ContractViolation, ValidationError
from yarp import json_text
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

include "_validate_services.py"

IMPLEMENTATION = "c"
__all__ = ["IMPLEMENTATION", "check_json", "check_operation", "event_text", "parse_imported_call",
           "parse_operation", "parse_request"]

MAX_TIME_MS = ops.MAX_TIME_MS
COMPLETENESS = ops.COMPLETENESS
cdef object _OPERATIONS_BY_KIND = ops.OPERATIONS_BY_KIND
cdef object _MAINTENANCE_SOURCE_KEY = ops.MAINTENANCE_SOURCE_KEY
cdef object _prune_operation_id = ops.prune_operation_id
cdef object _operation_id = ops.operation_id
cdef object _source_key = ops.source_key
cdef object _import_batch_id = ops.import_batch_id
cdef object _identities = ops.identities
cdef int _MAX_DEPTH = MAX_JSON_DEPTH
#: orjson, loaded on the first frame: the hooks import this module for `check_json` and `event_text`.
cdef object _loads = None
cdef object _decode_error = None

# The records built for most requests, looked up once.
cdef type _Session = ops.Session
cdef type _CallMeta = ops.CallMeta
cdef type _StreamFile = ops.StreamFile
cdef type _Envelope = Envelope


# --- scanning --------------------------------------------------------------------------


cdef bint _long_digit_run(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """Whether 20 or more ASCII digits follow each other somewhere in p[0:n].

    Such a run holds one of the positions 19, 39, 59, ...: only those are read
    first, and the run around a digit found there is measured.
    """
    cdef Py_ssize_t i = 19, left, right
    while i < n:
        if 48 <= p[i] <= 57:
            left = i
            while left > 0 and 48 <= p[left - 1] <= 57:
                left -= 1
            right = i + 1
            while right < n and 48 <= p[right] <= 57 and right - left < 20:
                right += 1
            if right - left >= 20:
                return True
            i = right + 19
        else:
            i += 20
    return False


cdef object _decode(object frame, str what):
    """`json_text.decode`, with the long-integer guard scanned in C (a hit, and a refusal, go back to it)."""
    global _loads, _decode_error
    if type(frame) is not bytes:
        return json_text.decode(frame, what)
    if _loads is None:
        import orjson

        _loads, _decode_error = orjson.loads, orjson.JSONDecodeError
    try:
        value = _loads(frame)
    except _decode_error:
        return json_text.decode(frame, what)  # raises its `FrameError`
    if _long_digit_run(<const unsigned char *>PyBytes_AS_STRING(frame), PyBytes_GET_SIZE(frame)):
        return json_text.decode(frame, what)
    return value


cdef bint _is_lower_hex(object value, Py_ssize_t length):
    if type(value) is not str or PyUnicode_GET_LENGTH(value) != length:
        return False
    if not PyUnicode_IS_ASCII(value):
        return False
    cdef const Py_UCS1 *p = <const Py_UCS1 *>PyUnicode_DATA(value)
    cdef Py_ssize_t i
    for i in range(length):
        if not (48 <= p[i] <= 57 or 97 <= p[i] <= 102):
            return False
    return True


cdef bint _has_surrogate(str value):
    """Whether a string holds a lone surrogate (only strings of 2- or 4-byte code units can)."""
    cdef int kind = PyUnicode_KIND(value)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(value)
    cdef const Py_UCS2 *p2
    cdef const Py_UCS4 *p4
    if kind == PyUnicode_1BYTE_KIND:
        return False
    if kind == PyUnicode_2BYTE_KIND:
        p2 = <const Py_UCS2 *>PyUnicode_DATA(value)
        for i in range(n):
            if 0xD800 <= p2[i] <= 0xDFFF:
                return True
        return False
    p4 = <const Py_UCS4 *>PyUnicode_DATA(value)
    for i in range(n):
        if 0xD800 <= p4[i] <= 0xDFFF:
            return True
    return False


cdef inline bint _is_exact_int(object value):
    return PyLong_Check(value) and not PyBool_Check(value)


cdef bint _too_deep(object value, int remaining):
    """Whether containers nest more than `remaining` levels below (and including) `value`.

    Recursive in C, bounded by `MAX_JSON_DEPTH` (the recursion stops there).
    """
    cdef Py_ssize_t pos = 0, i, n
    cdef PyObject *key
    cdef PyObject *child
    if PyDict_Check(value):
        if remaining == 0:
            return True
        while PyDict_Next(value, &pos, &key, &child):
            if (PyDict_Check(<object>child) or PyList_Check(<object>child)) and _too_deep(<object>child,
                                                                                     remaining - 1):
                return True
        return False
    if PyList_Check(value):
        if remaining == 0:
            return True
        n = PyList_GET_SIZE(value)
        for i in range(n):
            item = <object>PyList_GET_ITEM(value, i)
            if (PyDict_Check(item) or PyList_Check(item)) and _too_deep(item, remaining - 1):
                return True
        return False
    return False


cdef object _record(type cls, tuple values):
    """A `yarp._record.Record` with every field given, filled slot by slot (its checks are the callers')."""
    cdef tuple fields = cls._fields
    cdef Py_ssize_t i
    if len(fields) != len(values):
        return cls(*values)
    obj = object.__new__(cls)
    for i in range(len(fields)):
        PyObject_GenericSetAttr(obj, fields[i], values[i])
    return obj


# --- the envelope ------------------------------------------------------------------


def parse_request(frame, correlation_id):
    """Decode one request frame, once, and validate its outer form (see the twin)."""
    obj = _decode(frame, "envelope")
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
    return _envelope(<dict>obj, correlation_id)


cdef object _envelope(dict obj, correlation_id):
    if "control" in obj:
        if PyDict_Size(obj) != 3 or obj.get("control") not in CONTROLS:
            raise ValidationError("unknown control request")
        return _record(Control, (correlation_id, obj["control"]))
    # The seven fields, no more: two of them (schema, correlationId) were read already.
    if PyDict_Size(obj) != 7:
        raise ValidationError("envelope has unknown or missing fields")
    for name in ("operationId", "sourceKey", "sequence", "deadlineMs", "operation"):
        if PyDict_GetItem(obj, name) is NULL:
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
    kind = (<dict>operation).get("operation")
    op_type = _OPERATIONS_BY_KIND.get(kind) if type(kind) is str else None
    if op_type is None:
        raise ValidationError("unknown operation")
    if seq != op_type.sequence:
        raise ValidationError("envelope sequence does not match the operation")
    return _record(_Envelope, (correlation_id, op_id, key, seq, deadline, operation, kind))


def check_operation(env):
    """Validate the envelope's operation and prove the envelope's identities; return the operation."""
    try:
        operation = parse_operation(env.operation)
    except ValidationError as exc:
        raise ContractViolation(exc.message) from None
    kind = env.kind
    if kind == "prune_before":
        operation_id = _prune_operation_id(operation.timestamp_ms, operation.incomplete_before_ms, operation.dry_run)
        source_key = _MAINTENANCE_SOURCE_KEY
    elif kind == "import_calls":
        operation_id, source_key = _operation_id(operation), _source_key(operation)
    else:
        s = operation.session
        operation_id, source_key = _identities((s.agent, s.account, s.source_session_id, operation.source_call_id),
                                               kind)
    if source_key != env.source_key:
        raise ValidationError("envelope source key does not match the operation")
    if operation_id != env.operation_id:
        raise ValidationError("envelope operation identity does not match the operation")
    return operation


# --- the operation ------------------------------------------------------------------

cdef enum:
    _MAX_USED = 24


cdef class _Fields:
    """Strict reader over one JSON object: typed getters, unknown fields rejected.

    The names read are kept as borrowed pointers to this module's constants;
    `present` counts those the object holds, so the object has no unknown
    field exactly when `present` equals its size.
    """

    cdef dict obj
    cdef str where
    cdef bint tolerate_unknown
    cdef Py_ssize_t present
    cdef int used
    cdef PyObject *names[_MAX_USED]

    def __cinit__(self, obj, str where, bint tolerate_unknown=False):
        if not PyDict_Check(obj):
            raise ValidationError(f"{where} must be a JSON object")
        self.obj = obj
        self.where = where
        self.tolerate_unknown = tolerate_unknown
        self.present = 0
        self.used = 0

    cdef inline void mark(self, str name, bint held):
        if self.used < _MAX_USED:
            self.names[self.used] = <PyObject *>name
            self.used += 1
        if held:
            self.present += 1

    cdef PyObject *read(self, str name):
        """The field's value (borrowed), or NULL when the object lacks it; the name counts as read."""
        cdef PyObject *found = PyDict_GetItem(self.obj, name)
        self.mark(name, found is not NULL)
        return found

    cdef object get(self, str name, bint required):
        cdef PyObject *found = self.read(name)
        if found is NULL or <object>found is None:
            # Optional fields may be absent or null; a required one may be neither.
            if required:
                raise ValidationError(f"{self.where}.{name} is required")
            return None
        return <object>found

    cdef object text(self, str name, Py_ssize_t limit, bint required=True, bint allow_empty=False):
        value = self.get(name, required)
        if value is None:
            return None
        if not PyUnicode_Check(value):
            raise ValidationError(f"{self.where}.{name} must be a string")
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(value)
        if n > limit:
            raise ValidationError(f"{self.where}.{name} is longer than {limit} characters")
        if n == 0 and not allow_empty:
            raise ValidationError(f"{self.where}.{name} must not be empty")
        if _has_surrogate(value):
            raise ValidationError(f"{self.where}.{name} is not valid Unicode text")
        return value

    cdef object any_text(self, str name):
        value = self.get(name, True)
        if not PyUnicode_Check(value):
            raise ValidationError(f"{self.where}.{name} must be a string")
        if _has_surrogate(value):
            raise ValidationError(f"{self.where}.{name} is not valid Unicode text")
        return value

    cdef object time_ms(self, str name, bint required=True):
        value = self.get(name, required)
        if value is None:
            return None
        if not _is_exact_int(value) or not 0 <= value <= MAX_TIME_MS:
            raise ValidationError(f"{self.where}.{name} must be a non-negative integer of milliseconds")
        return value

    cdef object cap_bytes(self, str name):
        """An optional cap in bytes, with `output.cap_bytes`'s range: 0 or MIN_CAP_BYTES..MAX_CAP_BYTES."""
        value = self.get(name, False)
        if value is None:
            return None
        if not _is_exact_int(value) or not (value == 0 or MIN_CAP_BYTES <= value <= MAX_CAP_BYTES):
            raise ValidationError(f"{self.where}.{name} must be 0 or {MIN_CAP_BYTES} to {MAX_CAP_BYTES} bytes")
        return value

    cdef object flag(self, str name, bint required=True):
        value = self.get(name, required)
        if value is None and not required:
            return False
        if not PyBool_Check(value):
            raise ValidationError(f"{self.where}.{name} must be a boolean")
        return value

    cdef object json(self, str name):
        cdef PyObject *found = self.read(name)
        if found is NULL:
            raise ValidationError(f"{self.where}.{name} is required")
        value = <object>found
        if _too_deep(value, _MAX_DEPTH):
            raise ValidationError(f"{self.where}.{name} is nested deeper than {MAX_JSON_DEPTH} levels")
        return value

    cdef object choice(self, str name, tuple allowed):
        value = self.get(name, True)
        if value not in allowed:
            raise ValidationError(f"{self.where}.{name} must be one of {', '.join(allowed)}")
        return value

    cdef bint holds(self, str name):
        return PyDict_GetItem(self.obj, name) is not NULL

    cdef finish(self):
        if self.tolerate_unknown or self.present == PyDict_Size(self.obj):
            return
        read = {<object>self.names[i] for i in range(self.used)}
        unknown = [name for name in self.obj if name not in read]
        names = ", ".join(sorted(_bounded_name(n) for n in unknown)[:5])
        raise ValidationError(f"{self.where} has unknown field(s): {names}")


def _bounded_name(name):
    return name[:40] if name.isprintable() else "<non-printable>"


cdef object _session(obj):
    cdef _Fields f = _Fields(obj, "session", True)
    return _record(_Session, (f.text("agent", MAX_NAME_CHARS), f.text("account", MAX_IDENTITY_CHARS),
                              f.text("sourceSessionId", MAX_IDENTITY_CHARS), f.time_ms("startedAtMs", False)))


cdef object _call(obj):
    cdef _Fields f = _Fields(obj, "call", True)
    # Checked in this order (the first failure is the one reported).
    source_call_id = f.text("sourceCallId", MAX_IDENTITY_CHARS)
    tool_name = f.text("toolName", MAX_NAME_CHARS)
    provider = f.text("provider", MAX_NAME_CHARS, False)
    model = f.text("model", MAX_NAME_CHARS, False)
    working_directory = f.text("workingDirectory", MAX_WORKING_DIRECTORY_CHARS, False)
    started_at_ms = f.time_ms("startedAtMs")
    requires_streams = f.flag("requiresStreams")
    return _record(_CallMeta, (source_call_id, tool_name, started_at_ms, requires_streams, provider, model,
                               working_directory))


def parse_imported_call(obj, where):
    """One element of an `import_calls` operation's `calls`."""
    cdef _Fields f = _Fields(obj, where)
    session = _session(f.json("session"))
    meta = _call(f.json("call"))
    if meta.requires_streams:
        raise ValidationError(f"{where}.call.requiresStreams must be false for an imported call")
    value = f.json("input")
    cdef bint has_result = f.holds("result")
    result = is_error = finished = path = text = source = None
    executed = True
    completeness = "complete"
    if has_result:
        result = f.json("result")
        is_error = f.flag("isError")
        finished = f.time_ms("finishedAtMs")
        if f.holds("executed"):
            executed = f.flag("executed")
        path = f.text("sourceOutputPath", MAX_WORKING_DIRECTORY_CHARS, False)
        if path is not None and (not path.startswith("/") or "\x00" in path):
            raise ValidationError(f"{where}.sourceOutputPath must be an absolute path")
        if f.holds("sourceOutput"):
            if path is not None:
                raise ValidationError(f"{where} names a sourceOutputPath and holds a sourceOutput")
            source = f.any_text("sourceOutput")
        if f.holds("resultText"):
            text = f.any_text("resultText")
            if f.holds("resultTextCompleteness"):
                completeness = f.choice("resultTextCompleteness", COMPLETENESS)
    f.finish()
    return _record(ops.ImportedCall, (session, meta, value, result, has_result, bool(is_error), finished, path,
                                      text, executed, source, completeness))


cdef object _import_calls(dict obj):
    cdef _Fields f = _Fields(obj, "import_calls")
    f.mark("operation", True)
    batch_id = f.text("batchId", MAX_IDENTITY_CHARS)
    captured_at_ms = f.time_ms("capturedAtMs")
    raw = f.json("calls")
    f.finish()
    if not PyList_Check(raw) or not raw:
        raise ValidationError("import_calls.calls must be a non-empty list")
    if len(raw) > MAX_IMPORT_BATCH_CALLS:
        raise ValidationError(f"import_calls.calls holds more than {MAX_IMPORT_BATCH_CALLS} calls")
    calls = tuple([parse_imported_call(item, f"import_calls.calls[{i}]") for i, item in enumerate(raw)])
    if batch_id != _import_batch_id(calls):
        raise ValidationError("import_calls.batchId does not match its calls")
    return _record(ops.ImportCalls, (batch_id, calls, captured_at_ms))


cdef object _stream_file(_Fields f, str name, bint required=True):
    """A path string (ingest form) or {path, device, inode, size} (runner form)."""
    value = f.get(name, required)
    if value is None:
        return None
    cdef _Fields g
    if PyUnicode_Check(value):
        sub_path = value
        device = inode = size = None
    else:
        g = _Fields(value, f"{f.where}.{name}")
        sub_path = g.text("path", MAX_WORKING_DIRECTORY_CHARS)
        device = g.time_ms("device", False)
        inode = g.time_ms("inode", False)
        size = g.time_ms("size", False)
        g.finish()
    if not PyUnicode_Check(sub_path) or not sub_path.startswith("/") or "\x00" in sub_path:
        raise ValidationError(f"{f.where}.{name} must be an absolute path")
    if len(sub_path) > MAX_WORKING_DIRECTORY_CHARS:
        raise ValidationError(f"{f.where}.{name} is too long")
    return _record(_StreamFile, (sub_path, device, inode, size))


def parse_operation(obj):
    """Validate one operation object (without requestId/schemaVersion) strictly."""
    if not PyDict_Check(obj):
        raise ValidationError("operation must be a JSON object")
    kind = obj.get("operation")
    if not PyUnicode_Check(kind) or kind not in _OPERATIONS_BY_KIND:
        raise ValidationError("unknown operation")
    if kind == "import_calls":
        return _import_calls(obj)
    cdef _Fields f = _Fields(obj, kind)
    f.mark("operation", True)
    cdef type cls = _OPERATIONS_BY_KIND[kind]
    if kind == "begin_call":
        session = _session(f.json("session"))
        call = _call(f.json("call"))
        before = f.json("inputBefore")
        after = f.json("inputAfter")
        op = _record(cls, (session, call, before, after, f.time_ms("capturedAtMs"),
                           f.time_ms("deadlineAtMs", False)))
    elif kind == "prune_before":
        op = _record(cls, (f.time_ms("timestampMs"), f.time_ms("incompleteBeforeMs", False), f.flag("dryRun", False)))
    else:
        session = _session(f.json("session"))
        call_id = f.text("sourceCallId", MAX_IDENTITY_CHARS)
        if kind == "result_before":
            result = f.json("result")
            captured = f.time_ms("capturedAtMs")
            op = _record(cls, (session, call_id, result, captured, _stream_file(f, "fullOutputPath", False)))
        elif kind == "result_text":
            text = f.any_text("text")
            completeness = f.choice("sourceCompleteness", COMPLETENESS)
            captured = f.time_ms("capturedAtMs")
            op = _record(cls, (session, call_id, text, completeness, captured, f.cap_bytes("capBytes")))
        elif kind == "stage_result":
            result = f.json("result")
            is_error = f.flag("isError")
            op = _record(cls, (session, call_id, result, is_error, f.time_ms("capturedAtMs")))
        elif kind == "finish_call":
            result = f.json("result")
            is_error = f.flag("isError")
            require_pre_result = f.flag("requirePreResult")
            op = _record(cls, (session, call_id, result, is_error, require_pre_result, f.time_ms("finishedAtMs")))
        elif kind == "update_final_result":
            result = f.json("result")
            is_error = f.flag("isError")
            op = _record(cls, (session, call_id, result, is_error, f.time_ms("finishedAtMs")))
        elif kind == "capture_streams":
            captured = f.time_ms("capturedAtMs")
            paths = (_stream_file(f, "stdoutBeforePath"), _stream_file(f, "stderrBeforePath"),
                     _stream_file(f, "stdoutAfterPath"), _stream_file(f, "stderrAfterPath"))
            op = _record(cls, (session, call_id, captured) + paths)
        else:
            captured = f.time_ms("capturedAtMs")
            op = _record(cls, (session, call_id, captured, _stream_file(f, "stdoutPath"),
                               _stream_file(f, "stderrPath")))
    f.finish()
    return op


# --- records built in the broker ---------------------------------------------------------


def check_json(value, where):
    """Refuse a JSON value (an agent's tool input or response) nested deeper than `MAX_JSON_DEPTH`."""
    if _too_deep(value, _MAX_DEPTH):
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
    if _has_surrogate(value):
        raise ValidationError(f"hook event field {name} is not valid Unicode text")
    return value
