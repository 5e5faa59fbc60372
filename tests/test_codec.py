"""Payload codec: canonical JSON proven byte-equal to rfc8785, media types, payload round trips."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yarp.archive import codec, payload_kernel
from yarp.errors import ValidationError
from yarp.limits import MAX_SAFE_INTEGER

SAFE = MAX_SAFE_INTEGER

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-SAFE, max_value=SAFE),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, SAFE, -SAFE, SAFE + 1, -SAFE - 1, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 30.0, -0.0, 0.0, 1e20, 1e21, 1e-7, 5e-324, 0.1, 1.7976931348623157e308]),
    st.text(),
    st.text(alphabet=st.sampled_from(["a", "\ud800", "\udc00", "\ue000", "\U0001f600", "\x00", "\u2028"])),
    st.sampled_from(["\ud800", "a\udfffb", "\x00\x1f\x7f\u2028\u2029", "\ue000", "\U0001f600", '"\\/']),
)
keys = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["", "a", "\ue000", "\uffff", "\U00010000", "\U0001f600", "\ud7ff", "\u00e9", "\ud800", "1"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=6),
        st.dictionaries(keys, children, max_size=6),
    ),
    max_leaves=40,
)


def _reference(value):
    try:
        return ("ok", rfc8785.dumps(value))
    except Exception:  # noqa: BLE001 - any refusal counts as a refusal
        return ("refused", None)


def _ours(value):
    try:
        return ("ok", codec.canonical_json(value))
    except ValidationError as exc:
        assert len(str(exc)) <= 200
        return ("refused", None)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_canonical_json_equals_rfc8785(value):
    assert _ours(value) == _reference(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(alphabet=st.characters(blacklist_categories=["Cs"])), st.integers(-SAFE, SAFE)))
def test_key_order_with_astral_and_private_use_keys(value):
    assert codec.canonical_json(value) == rfc8785.dumps(value)


@pytest.mark.parametrize(
    "value, expected",
    [
        ({"b": 1, "a": [True, None, "x"]}, b'{"a":[true,null,"x"],"b":1}'),
        ({"\ue000": 1, "\U0001f600": 2}, '{"\U0001f600":2,"\ue000":1}'.encode()),
        ([1.0, 30.0, -0.0, 1e20, 1e21], b"[1,30,0,100000000000000000000,1e+21]"),
        ("\x00\x08\x1f\x7f\u2028", b'"\\u0000\\b\\u001f\x7f\xe2\x80\xa8"'),
        (SAFE, b"9007199254740991"),
    ],
)
def test_known_canonical_forms(value, expected):
    assert codec.canonical_json(value) == expected


@pytest.mark.parametrize(
    "value, words",
    [
        (2**53, "integer"),
        ([-(2**53)], "integer"),
        ({"x": float("nan")}, "NaN"),
        ([float("inf")], "NaN or an infinity"),
        ("\ud800", "surrogate"),
        ({1: "a"}, "cannot be stored"),
        ({"k": object()}, "cannot be stored"),
    ],
)
def test_unrepresentable_values_refused(value, words):
    with pytest.raises(ValidationError) as info:
        codec.canonical_json(value)
    message = str(info.value)
    assert words in message
    assert len(message) < 200


def test_refusal_never_echoes_the_payload():
    secret = "sk-live-" + "q" * 40
    with pytest.raises(ValidationError) as info:
        codec.canonical_json({secret: [secret, 2**60]})
    assert secret not in str(info.value)


def test_deep_nesting_falls_back_and_still_matches():
    value: object = 1
    for _ in range(100):
        value = [{"k": value}]
    assert codec.canonical_json(value) == rfc8785.dumps(value)


def test_self_reference_refused():
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValidationError):
        codec.canonical_json(loop)


def test_subclasses_use_the_reference_encoder():
    class Key(str):
        pass

    class Flag(int):
        pass

    value = {Key("b"): Flag(3), "a": 1}
    assert codec.canonical_json(value) == rfc8785.dumps(value)


# --- media types ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, media",
    [
        (b"", codec.MEDIA_TEXT),
        (b"plain ascii\r\n\x1b[31mred\x1b[0m", codec.MEDIA_TEXT),
        ("caf\u00e9 \U0001f600".encode(), codec.MEDIA_TEXT),
        (b"\xff\xfe", codec.MEDIA_BINARY),
        (b"ok\xc3", codec.MEDIA_BINARY),  # truncated sequence
        (b"\xed\xa0\x80", codec.MEDIA_BINARY),  # encoded surrogate is not UTF-8
    ],
)
def test_media_type_of(data, media):
    assert codec.media_type_of(data) == media


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_media_type_follows_utf8_validity(data):
    try:
        data.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert codec.media_type_of(data) == (codec.MEDIA_TEXT if valid else codec.MEDIA_BINARY)


# --- payloads ---------------------------------------------------------------------------


def test_bytes_payload_keeps_exact_bytes():
    data = b"line one\r\nline two\r\n\x1b[0m" * 200
    payload = codec.bytes_payload(data)
    assert payload.sha256 == hashlib.sha256(data).digest()
    assert payload.length == len(data)
    assert payload.media_type == codec.MEDIA_TEXT
    assert payload.compression == "zstd"
    assert codec.decode_body(payload.compression, payload.body, payload.length) == data


def test_bytes_payload_binary_and_explicit_media():
    data = os.urandom(3000)
    payload = codec.bytes_payload(data)
    assert payload.media_type in (codec.MEDIA_BINARY, codec.MEDIA_TEXT)
    assert payload.compression == "none" and payload.body == data
    assert codec.bytes_payload(b"abc", codec.MEDIA_JSON).media_type == codec.MEDIA_JSON


def test_json_payload_is_canonical():
    value = {"command": "ls -la", "cwd": "/tmp", "args": list(range(300))}
    payload = codec.json_payload(value)
    raw = codec.decode_body(payload.compression, payload.body, payload.length)
    assert raw == rfc8785.dumps(value)
    assert json.loads(raw) == value
    assert payload.media_type == codec.MEDIA_JSON
    assert payload.sha256 == hashlib.sha256(raw).digest()


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_json_payload_round_trip(value):
    try:
        payload = codec.json_payload(value)
    except ValidationError:
        return
    assert codec.decode_body(payload.compression, payload.body, payload.length) == rfc8785.dumps(value)


def test_decode_body_refuses_bad_bodies():
    with pytest.raises(ValidationError):
        codec.decode_body("gzip", b"x")
    with pytest.raises(ValidationError):
        codec.decode_body("zstd", b"not zstd at all", 10)
    with pytest.raises(ValidationError):
        codec.decode_body("none", b"abc", 4)
    payload = codec.bytes_payload(b"a" * 5000)
    with pytest.raises(ValidationError):
        codec.decode_body(payload.compression, payload.body, 4999)


@pytest.mark.parametrize(
    "value, fast",
    [
        ({"command": "git status", "timeout": 120, "env": {"A": "b"}, "flags": [True, None]}, True),
        ({"x": 1.5}, False),
        ([2**53], False),
        ({"\ue000": 1}, False),
        ({"k": (1, 2)}, False),
    ],
)
def test_fast_path_admits_only_proven_shapes(value, fast):
    assert payload_kernel.canonical_fast_path_ok(value) is fast
    assert (payload_kernel.canonical_fast(value) is not None) is fast
    assert _ours(value) == _reference(value)


def test_loads_record_takes_what_orjson_refuses_and_refuses_what_neither_parses():
    from yarp.json_text import loads_record as parse_json

    assert parse_json(b'{"a": [1, "x"]}') == {"a": [1, "x"]}
    assert parse_json(b'{"s": "\\ud800"}') == {"s": "\ud800"}
    with pytest.raises(ValueError):
        parse_json(b'{"unterminated": ')
