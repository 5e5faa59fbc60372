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
                      "inode", "size", "executed", "sourceOutput", "resultText", "resultTextCompleteness",
                      "capBytes"})


def valid_frames() -> list[bytes]:
    frames = []
    # result_text once more with the view it may ask for (`capBytes`).
    for obj in [*VALID.values(), {**VALID["result_text"], "capBytes": 5120}]:
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


def begin_frame_with_input(input_value, after=None) -> bytes:
    op = TWIN.parse_operation({**VALID["begin_call"], "inputBefore": input_value,
                               "inputAfter": input_value if after is None else after})
    return protocol.envelope(op, CORRELATION, 1000)


@pytest.mark.parametrize("digits", [19, 20, 21, 40])
@pytest.mark.parametrize("shift", range(45))
@pytest.mark.parametrize("after_short", [False, True], ids=["alone", "after-a-short-number"])
def test_an_integer_literal_of_20_digits_or_more_is_read_exactly_wherever_it_lies(digits, shift, after_short):
    """The compiled guard reads one byte in 20: every alignment of the run against it is tried,
    alone and right after a short number the guard has just measured and skipped.

    orjson reads an integer literal of 20 digits or more as a rounded float; both
    validators must then re-read the frame and keep the integer exact.
    """
    number = int("9" * digits)
    # The number once in the frame (the input after is another value), at every offset modulo 20 and 21.
    literal = (b"[5," if after_short else b"") + str(number).encode() + (b"]" if after_short else b"")
    frame = begin_frame_with_input({"pad": "x" * shift, "n": 0}, after={}).replace(b'"n":0', b'"n":' + literal)
    for impl in (COMPILED, TWIN):
        op = impl.check_operation(impl.parse_request(frame, CORRELATION))
        value = op.input_before["n"][1] if after_short else op.input_before["n"]
        if digits >= 20:
            assert type(value) is int and value == number
        else:
            assert value == number  # 19 digits fit orjson's 64-bit integers
    assert outcome(COMPILED, frame) == outcome(TWIN, frame)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789 x", max_size=80),
       st.lists(st.integers(0, 10**3) | st.integers(10**18, 10**30), max_size=6))
def test_digit_runs_in_text_and_numbers_are_judged_alike(text, numbers):
    """Short digit runs just before a long one, in strings and in number lists: the same exact values.

    Compared by `repr`, so a float where the other holds the integer (`1e+20` and
    `100000000000000000000` are equal in Python) is told apart.
    """
    frame = begin_frame_with_input({"t": text, "n": numbers}, after={})
    assert repr(outcome(COMPILED, frame)) == repr(outcome(TWIN, frame))


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
