"""The typed request validator and its pure-Python twin, crossed on generated requests.

`yarp._validate` is written apart from `yarp._validate_py` (C-level scanning,
records filled slot by slot), so agreement is not given by construction: for
every frame below, both accept with equal records, or both refuse with the
same error class and text.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_operations import VALID
from yarp import _validate_py as TWIN
from yarp.errors import YarpError
from yarp.wire import operations as ops
from yarp.wire import protocol

# Always both, even under YARP_NO_EXTENSIONS=1 (which only chooses what YARP selects).
COMPILED = pytest.importorskip("yarp._validate", reason="yarp._validate is not built: nothing to cross the twin with")
CORRELATION = "c-twins"

json_scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(
    max_size=12)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=6), inner, max_size=3), max_leaves=8)
#: Names the validators read, so that mutations hit known fields as often as unknown ones.
FIELD_NAMES = sorted({"schema", "correlationId", "operationId", "sourceKey", "sequence", "deadlineMs", "operation",
                      "control", "session", "call", "agent", "account", "sourceSessionId", "startedAtMs",
                      "sourceCallId", "toolName", "provider", "model", "workingDirectory", "requiresStreams",
                      "inputBefore", "inputAfter", "capturedAtMs", "deadlineAtMs", "result", "isError",
                      "requirePreResult", "finishedAtMs", "text", "sourceCompleteness", "fullOutputPath",
                      "stdoutPath", "stderrPath", "timestampMs", "batchId", "calls", "input", "path", "device",
                      "inode", "size", "executed", "sourceOutput", "resultText", "resultTextCompleteness"})


def valid_frames() -> list[bytes]:
    frames = []
    for obj in VALID.values():
        op = TWIN.parse_operation(obj)
        frames.append(protocol.envelope(op, CORRELATION, 1000))
    frames.append(protocol.control(CORRELATION, "status"))
    return frames


FRAMES = valid_frames()


def outcome(impl, frame):
    """What one implementation makes of a frame: ("ok", envelope, operation) or (error class, text)."""
    try:
        env = impl.parse_request(frame, CORRELATION)
        if isinstance(env, protocol.Envelope):
            return ("ok", env, impl.check_operation(env))
        return ("ok", env, None)
    except YarpError as exc:
        return (type(exc).__name__, exc.message)


def containers(value, path=()):
    """Every (path, dict-or-list) inside a decoded frame, the frame itself first."""
    yield path, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        if isinstance(child, (dict, list)):
            yield from containers(child, (*path, key))


@st.composite
def mutated_frames(draw):
    obj = json.loads(draw(st.sampled_from(FRAMES)))
    for _ in range(draw(st.integers(1, 3))):
        places = list(containers(obj))
        _, target = draw(st.sampled_from(places))
        action = draw(st.sampled_from(["set", "delete", "add"]))
        if isinstance(target, dict):
            if action == "delete" and target:
                del target[draw(st.sampled_from(sorted(target)))]
            else:
                key = (draw(st.sampled_from(sorted(target))) if action == "set" and target
                       else draw(st.sampled_from(FIELD_NAMES) | st.text(max_size=5)))
                target[key] = draw(json_values)
        elif target:
            index = draw(st.integers(0, len(target) - 1))
            if action == "delete":
                del target[index]
            else:
                target[index] = draw(json_values)
    return json.dumps(obj, ensure_ascii=draw(st.booleans())).encode()


@pytest.mark.parametrize("frame", FRAMES, ids=[str(i) for i in range(len(FRAMES))])
def test_both_accept_every_valid_request_alike(frame):
    result = outcome(COMPILED, frame)
    assert result[0] == "ok"
    assert result == outcome(TWIN, frame)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_frames())
def test_both_judge_a_mutated_request_alike(frame):
    assert outcome(COMPILED, frame) == outcome(TWIN, frame)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FRAMES), st.integers(15, 25), st.sampled_from([b" ", b"-", b"x"]))
def test_a_long_integer_literal_is_read_exactly_by_both(frame, digits, before):
    """A run of 20 digits anywhere sends the frame to the exact reader; 19 do not need it."""
    number = b"9" * digits
    changed = frame.replace(b'"capturedAtMs":2', b'"capturedAtMs":' + number, 1)
    changed = changed.replace(b'"timestampMs":5', b'"timestampMs":' + number, 1)
    spaced = changed[:-1] + b',"x":"' + before + number + b'"}'
    for candidate in (changed, spaced):
        assert outcome(COMPILED, candidate) == outcome(TWIN, candidate)
    if digits >= 20 and changed != frame:
        # Exact: the bound check sees 99...9 and refuses it; a rounded float would say "must be an integer".
        result = outcome(COMPILED, changed)
        assert result[0] == "ContractViolation" and "integer of milliseconds" in result[1]


@given(st.text(max_size=30), st.sampled_from(["agent", "sourceSessionId", "toolName", "text"]))
def test_text_fields_with_any_code_points_are_judged_alike(text, field):
    """Lone surrogates, wide and narrow strings: the C scan and the twin's UTF-8 encode agree."""
    obj = copy.deepcopy(VALID["result_text"] if field == "text" else VALID["begin_call"])
    if field == "text":
        obj["text"] = text
    elif field == "toolName":
        obj["call"]["toolName"] = text
    else:
        obj["session"][field] = text
    results = []
    for impl in (COMPILED, TWIN):
        try:
            results.append(impl.parse_operation(obj))
        except YarpError as exc:
            results.append((type(exc).__name__, exc.message))
    assert results[0] == results[1]


@pytest.mark.parametrize("text", ["\ud800", "a\udfff", "\U0001f600\ud83d", "é\udc00"])
def test_a_lone_surrogate_is_refused_by_both(text):
    for impl in (COMPILED, TWIN):
        with pytest.raises(YarpError, match="is not valid Unicode text"):
            impl.event_text({"f": text}, "f", 100)


def test_the_records_the_compiled_validator_fills_behave_as_constructed_ones():
    """Slot by slot is only a faster way to the same record: equal, hashable, immutable, picklable."""
    import pickle

    frame = FRAMES[0]
    env = COMPILED.parse_request(frame, CORRELATION)
    op = COMPILED.check_operation(env)
    built = ops.BeginCall(ops.Session("pi", "me", "s1"), ops.CallMeta("c1", "bash", 1, False), {"a": 1}, {"a": 1}, 2,
                          3)
    assert op == built and hash(op.session) == hash(built.session) and hash(op.call) == hash(built.call)
    assert pickle.loads(pickle.dumps(op)) == op
    with pytest.raises(AttributeError):
        op.captured_at_ms = 5  # type: ignore[misc]
