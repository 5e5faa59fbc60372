"""Operation validation, JSON round trips, replay policy and identities."""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
from dataclasses import dataclass

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from yarp import _compat
from yarp.wire import validation as validate
from yarp.wire import operations as ops
from yarp.errors import ContractViolation, ValidationError
from yarp.limits import MAX_IDENTITY_CHARS, MAX_JSON_DEPTH, MAX_NAME_CHARS, MAX_WORKING_DIRECTORY_CHARS

SESSION = {"agent": "pi", "account": "me", "sourceSessionId": "s1"}
CALL = {"sourceCallId": "c1", "toolName": "bash", "startedAtMs": 1, "requiresStreams": False}

VALID = {
    "begin_call": {"operation": "begin_call", "session": SESSION, "call": CALL, "inputBefore": {"a": 1},
                   "inputAfter": {"a": 1}, "capturedAtMs": 2, "deadlineAtMs": 3},
    "capture_streams": {"operation": "capture_streams", "session": SESSION, "sourceCallId": "c1",
                        "capturedAtMs": 2, "stdoutBeforePath": "/s/1", "stderrBeforePath": "/s/2",
                        "stdoutAfterPath": "/s/3", "stderrAfterPath": "/s/4"},
    "capture_passthrough_streams": {"operation": "capture_passthrough_streams", "session": SESSION,
                                    "sourceCallId": "c1", "capturedAtMs": 2, "stdoutPath": "/s/1",
                                    "stderrPath": "/s/2"},
    "result_before": {"operation": "result_before", "session": SESSION, "sourceCallId": "c1",
                      "result": [1], "capturedAtMs": 2, "fullOutputPath": "/tmp/pi.log"},
    "result_text": {"operation": "result_text", "session": SESSION, "sourceCallId": "c1", "text": "t",
                    "sourceCompleteness": "unknown", "capturedAtMs": 2},
    "stage_result": {"operation": "stage_result", "session": SESSION, "sourceCallId": "c1", "result": None,
                     "isError": False, "capturedAtMs": 2},
    "finish_call": {"operation": "finish_call", "session": SESSION, "sourceCallId": "c1", "result": "r",
                    "isError": True, "requirePreResult": False, "finishedAtMs": 2},
    "update_final_result": {"operation": "update_final_result", "session": SESSION, "sourceCallId": "c1",
                            "result": {}, "isError": False, "finishedAtMs": 2},
    "prune_before": {"operation": "prune_before", "timestampMs": 5},
    "import_calls": {"operation": "import_calls", "capturedAtMs": 2,
                     "batchId": hashlib.sha256(b"import_calls\x1fpi\x1fme\x1fs1\x1fc1\x1e").hexdigest(),
                     "calls": [{"session": SESSION, "call": CALL, "input": {"a": 1}}]},
}


@pytest.fixture(autouse=True, params=["c", "py"])
def validator(request, monkeypatch):
    """Every test here runs against the compiled validator (`c`) and its pure-Python twin (`py`).

    `validate.parse_operation` is looked up on the module at each call, so
    replacing it there routes every parse through the chosen one.
    """
    if request.param == "c" and _compat.NO_EXTENSIONS:
        pytest.skip("YARP_NO_EXTENSIONS is set")
    impl = importlib.import_module("yarp._validate" if request.param == "c" else "yarp._validate_py")
    assert impl.IMPLEMENTATION == request.param
    monkeypatch.setattr(validate, "parse_operation", impl.parse_operation)
    return impl


def test_the_compiled_validator_is_loaded_in_a_normal_install():
    if _compat.NO_EXTENSIONS:
        pytest.skip("YARP_NO_EXTENSIONS is set")
    assert validate.IMPLEMENTATION == "c"


def test_a_malformed_operation_in_an_envelope_is_a_contract_violation(validator):
    from yarp.wire import protocol

    op = validate.parse_operation(VALID["result_text"])
    frame = protocol.envelope(op, "c-test", 1000)
    env = validator.parse_request(frame, "c-test")
    assert validator.check_operation(env) == op
    bad = validator.parse_request(frame.replace(b'"text":"t"', b'"text":7'), "c-test")
    with pytest.raises(ContractViolation, match=r"result_text\.text must be a string"):
        validator.check_operation(bad)
    other = validator.parse_request(frame.replace(b'"sourceCallId":"c1"', b'"sourceCallId":"c2"'), "c-test")
    with pytest.raises(ValidationError, match="source key does not match") as caught:
        validator.check_operation(other)
    assert not isinstance(caught.value, ContractViolation)


def test_valid_examples_cover_every_operation_and_round_trip():
    assert set(VALID) == set(ops.OPERATIONS_BY_KIND)
    for kind, obj in VALID.items():
        op = validate.parse_operation(obj)
        assert type(op).kind == kind
        assert ops.operation_to_json(op) == obj
        assert validate.parse_operation(ops.operation_to_json(op)) == op


def with_change(kind, path, value):
    obj = copy.deepcopy(VALID[kind])
    target = obj
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return obj


DELETE = object()


@pytest.mark.parametrize("kind", sorted(VALID))
def test_unknown_operation_fields_rejected(kind):
    with pytest.raises(ValidationError, match="unknown field"):
        validate.parse_operation(with_change(kind, ["requestId"], 1))


def test_unknown_fields_tolerated_in_session_and_call():
    obj = with_change("begin_call", ["session", "extra"], {"any": "thing"})
    obj["call"] = {**CALL, "future": 1}
    op = validate.parse_operation(obj)
    assert op.session == ops.Session("pi", "me", "s1")
    assert op.call.tool_name == "bash"


@pytest.mark.parametrize("bad", [None, "begin", 7, [], {}, ["begin_call"], {"operation": "x"}])
def test_unknown_or_malformed_operation_tag(bad):
    with pytest.raises(ValidationError):
        validate.parse_operation({"operation": bad} if not isinstance(bad, dict) else bad)
    with pytest.raises(ValidationError):
        validate.parse_operation([VALID["prune_before"]])


@pytest.mark.parametrize("kind, path, value", [
    ("begin_call", ["capturedAtMs"], 1.5),
    ("begin_call", ["capturedAtMs"], True),
    ("begin_call", ["capturedAtMs"], -1),
    ("begin_call", ["capturedAtMs"], 2**63),
    ("begin_call", ["capturedAtMs"], "2"),
    ("begin_call", ["capturedAtMs"], None),
    ("begin_call", ["capturedAtMs"], DELETE),
    ("begin_call", ["inputBefore"], DELETE),
    ("begin_call", ["session"], "pi"),
    ("begin_call", ["session", "agent"], ""),
    ("begin_call", ["session", "agent"], None),
    ("begin_call", ["session", "agent"], 3),
    ("begin_call", ["session", "startedAtMs"], "x"),
    ("begin_call", ["call", "requiresStreams"], 1),
    ("begin_call", ["call", "requiresStreams"], None),
    ("begin_call", ["call", "sourceCallId"], None),
    ("begin_call", ["call", "toolName"], "t" * (MAX_NAME_CHARS + 1)),
    ("begin_call", ["call", "provider"], 5),
    ("begin_call", ["call", "workingDirectory"], "w" * (MAX_WORKING_DIRECTORY_CHARS + 1)),
    ("begin_call", ["session", "sourceSessionId"], "s" * (MAX_IDENTITY_CHARS + 1)),
    ("begin_call", ["session", "account"], "\ud800"),
    ("result_text", ["text"], "lone \udfff surrogate"),
    ("result_text", ["text"], b"bytes"),
    ("result_text", ["sourceCompleteness"], "partial"),
    ("result_text", ["sourceCompleteness"], ["complete"]),
    ("result_text", ["sourceCallId"], 12),
    ("result_text", ["capBytes"], 1),
    ("result_text", ["capBytes"], 1023),
    ("result_text", ["capBytes"], 16 * 1024 * 1024 + 1),
    ("result_text", ["capBytes"], -1),
    ("result_text", ["capBytes"], True),
    ("result_text", ["capBytes"], 5120.0),
    ("result_text", ["capBytes"], "5120"),
    ("finish_call", ["requirePreResult"], "yes"),
    ("finish_call", ["isError"], 0),
    ("capture_streams", ["stdoutBeforePath"], "relative/path"),
    ("capture_streams", ["stdoutBeforePath"], "/nul\x00byte"),
    ("capture_streams", ["stderrAfterPath"], DELETE),
    ("capture_streams", ["stderrAfterPath"], 3),
    ("capture_streams", ["stderrAfterPath"], {"path": "/p", "extra": 1}),
    ("capture_streams", ["stderrAfterPath"], {"path": "p", "size": 1}),
    ("capture_streams", ["stderrAfterPath"], {"path": "/p", "size": -1}),
    ("capture_passthrough_streams", ["stdoutPath"], ""),
    ("result_before", ["fullOutputPath"], "~/log"),
    ("prune_before", ["timestampMs"], DELETE),
    ("prune_before", ["timestampMs"], 1e3),
])
def test_invalid_values_rejected(kind, path, value):
    with pytest.raises(ValidationError):
        validate.parse_operation(with_change(kind, path, value))


def test_boundaries_accepted():
    obj = with_change("begin_call", ["call", "toolName"], "t" * MAX_NAME_CHARS)
    obj["session"] = {**SESSION, "sourceSessionId": "s" * MAX_IDENTITY_CHARS, "startedAtMs": None}
    obj["capturedAtMs"] = ops.MAX_TIME_MS
    obj["call"] = {**obj["call"], "provider": None, "model": None}
    op = validate.parse_operation(obj)
    assert op.captured_at_ms == 2**63 - 1 and op.call.provider is None
    # Optional deadline may be absent (older adapters).
    assert validate.parse_operation(with_change("begin_call", ["deadlineAtMs"], DELETE)).deadline_at_ms is None
    # result_text may be empty; fullOutputPath may be null.
    assert validate.parse_operation(with_change("result_text", ["text"], "")).text == ""
    assert validate.parse_operation(with_change("result_before", ["fullOutputPath"], None)).full_output is None


@pytest.mark.parametrize("cap", [None, 0, 1024, 5120, 16 * 1024 * 1024])
def test_result_text_may_ask_for_its_view_under_a_cap_in_the_configuration_range(cap):
    """`capBytes` is optional (adapters written for the reference never send it) and round trips."""
    obj = with_change("result_text", ["capBytes"], cap)
    op = validate.parse_operation(obj)
    assert op.cap_bytes == cap
    expected = {k: v for k, v in obj.items() if v is not None}
    assert ops.operation_to_json(op) == expected
    assert validate.parse_operation(VALID["result_text"]).cap_bytes is None


def test_an_imported_calls_outcome_round_trips_and_is_checked():
    """What a Codex transcript proves travels whole: not executed, the exact output, a cut text's completeness."""
    finished = {"session": SESSION, "call": CALL, "input": {"a": 1}, "result": {"output": "x"}, "isError": True,
                "finishedAtMs": 3}
    shapes = [{**finished, "executed": False}, {**finished, "sourceOutput": "all of it\n"},
              {**finished, "resultText": "head … tail", "resultTextCompleteness": "incomplete"}]
    for call in shapes:
        op = validate.parse_operation(with_change("import_calls", ["calls"], [call]))
        assert ops.operation_to_json(op)["calls"] == [call]
    (plain,) = validate.parse_operation(with_change("import_calls", ["calls"], [finished])).calls
    assert (plain.executed, plain.source_output, plain.result_text_completeness) == (True, None, "complete")
    for bad in ({**finished, "executed": 0}, {**finished, "sourceOutput": 5},
                {**finished, "sourceOutput": "x", "sourceOutputPath": "/tmp/out"},
                {**finished, "resultText": "t", "resultTextCompleteness": "partial"},
                {**finished, "resultTextCompleteness": "incomplete"}):
        with pytest.raises(ValidationError):
            validate.parse_operation(with_change("import_calls", ["calls"], [bad]))


def _nested(depth):
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def test_json_depth_bound():
    ok = validate.parse_operation(with_change("stage_result", ["result"], _nested(MAX_JSON_DEPTH)))
    assert ok.result == _nested(MAX_JSON_DEPTH)
    with pytest.raises(ValidationError, match="nested deeper"):
        validate.parse_operation(with_change("stage_result", ["result"], _nested(MAX_JSON_DEPTH + 1)))
    with pytest.raises(ValidationError, match="nested deeper"):
        validate.parse_operation(with_change("begin_call", ["inputAfter"], {"a": _nested(MAX_JSON_DEPTH)}))


def test_runner_form_stream_file_round_trips():
    obj = with_change("capture_streams", ["stdoutBeforePath"], {"path": "/s/1", "device": 3, "inode": 9, "size": 0})
    op = validate.parse_operation(obj)
    assert op.stdout_before == ops.StreamFile("/s/1", 3, 9, 0)
    assert ops.operation_to_json(op) == obj


def test_errors_do_not_echo_values():
    secret = "/home/me/" + "secret-token-" * 3
    with pytest.raises(ValidationError) as info:
        validate.parse_operation(with_change("result_text", ["sourceCompleteness"], secret))
    assert "secret-token" not in str(info.value)


# --- replay policy and identities -----------------------------------------------


def test_replay_policy_is_exhaustive():
    parsed = {kind: validate.parse_operation(obj) for kind, obj in VALID.items()}
    assert {type(op) for op in parsed.values()} == set(ops.OPERATION_TYPES)
    for kind, op in parsed.items():
        expected = ops.ReplayPolicy.UNKNOWN_ON_DISCONNECT if kind == "prune_before" else ops.ReplayPolicy.SAFE_REPLAY
        assert ops.replay_policy(op) is expected
    assert ops.ReplayPolicy.SAFE_REPLAY.value == "SafeReplay"
    assert ops.ReplayPolicy.UNKNOWN_ON_DISCONNECT.value == "UnknownOnDisconnect"


def test_replay_policy_refuses_an_unknown_class():
    @dataclass(frozen=True)
    class NewOperation:
        kind = "new_thing"

    with pytest.raises(TypeError):
        ops.replay_policy(NewOperation())


def test_fixed_sequences():
    assert {t.kind: t.sequence for t in ops.OPERATION_TYPES} == {
        "begin_call": 0, "capture_streams": 1, "capture_passthrough_streams": 1, "result_before": 2,
        "result_text": 3, "stage_result": 4, "finish_call": 5, "update_final_result": 6, "prune_before": 0,
        "import_calls": 0}


def test_source_key_is_sha256_of_unit_separated_identity():
    op = validate.parse_operation(VALID["result_text"])
    assert ops.source_key(op) == hashlib.sha256("pi\x1fme\x1fs1\x1fc1".encode()).hexdigest()
    assert ops.source_key(validate.parse_operation(VALID["begin_call"])) == ops.source_key(op)
    prune = validate.parse_operation(VALID["prune_before"])
    assert ops.source_key(prune) == hashlib.sha256(b"maintenance\x1fprune").hexdigest()
    other = validate.parse_operation(with_change("result_text", ["sourceCallId"], "c2"))
    assert ops.source_key(other) != ops.source_key(op)


def test_operation_id_is_stable_and_distinguishes_kinds():
    parsed = [validate.parse_operation(obj) for obj in VALID.values()]
    ids = [ops.operation_id(op) for op in parsed]
    assert len(set(ids)) == len(ids)
    again = [ops.operation_id(validate.parse_operation(copy.deepcopy(obj))) for obj in VALID.values()]
    assert ids == again
    # Identity is not content: a conflicting replay keeps the identity so the archive can refuse it.
    changed = validate.parse_operation(with_change("result_text", ["text"], "other"))
    assert ops.operation_id(changed) == ops.operation_id(validate.parse_operation(VALID["result_text"]))
    assert all(len(i) == 64 and int(i, 16) >= 0 for i in ids)


# --- property tests ----------------------------------------------------------------

text = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=20)
opt_text = st.none() | text
time_ms = st.integers(0, ops.MAX_TIME_MS)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
paths = st.builds(lambda parts: "/" + "/".join(parts), st.lists(text.filter(lambda s: "\x00" not in s), max_size=3))
stream_files = st.builds(ops.StreamFile, paths, st.none() | time_ms, st.none() | time_ms, st.none() | time_ms)
sessions = st.builds(ops.Session, text, text, text, st.none() | time_ms)
calls = st.builds(ops.CallMeta, text, text, time_ms, st.booleans(), opt_text, opt_text, opt_text)

operations = st.one_of(
    st.builds(ops.BeginCall, sessions, calls, json_values, json_values, time_ms, st.none() | time_ms),
    st.builds(ops.CaptureStreams, sessions, text, time_ms, stream_files, stream_files, stream_files, stream_files),
    st.builds(ops.CapturePassthroughStreams, sessions, text, time_ms, stream_files, stream_files),
    st.builds(ops.ResultBefore, sessions, text, json_values, time_ms, st.none() | stream_files),
    st.builds(ops.ResultText, sessions, text, st.text(), st.sampled_from(ops.COMPLETENESS), time_ms),
    st.builds(ops.StageResult, sessions, text, json_values, st.booleans(), time_ms),
    st.builds(ops.FinishCall, sessions, text, json_values, st.booleans(), st.booleans(), time_ms),
    st.builds(ops.UpdateFinalResult, sessions, text, json_values, st.booleans(), time_ms),
    st.builds(ops.PruneBefore, time_ms),
)


@settings(max_examples=300, deadline=None)
@given(operations)
def test_round_trip_through_json_text(op):
    wire = json.dumps(ops.operation_to_json(op), ensure_ascii=False)
    back = validate.parse_operation(json.loads(wire))
    assert back == op
    assert ops.source_key(back) == ops.source_key(op)
    assert ops.replay_policy(back) is ops.replay_policy(op)


@settings(max_examples=200, deadline=None)
@given(operations, st.text(min_size=1, max_size=8).filter(lambda k: k not in ("operation",)))
def test_any_extra_top_level_field_is_rejected(op, extra):
    obj = ops.operation_to_json(op)
    assume(extra not in obj)
    obj[extra] = 0
    with pytest.raises(ValidationError):
        validate.parse_operation(obj)


def test_every_operation_kind_has_one_broker_handler():
    """The broker's dispatch table is the one place a kind is wired to its preparation."""
    from yarp.broker.handlers import HANDLERS

    assert set(HANDLERS) == set(ops.OPERATIONS_BY_KIND)
    assert set(ops.REPLAY_BY_KIND) == set(ops.OPERATIONS_BY_KIND)
