"""Payload kernel: the same tests on the compiled extension and its twin, and the two crossed."""

from __future__ import annotations

import hashlib
import importlib
import os

import kernel_impls
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yarp.archive.payload_kernel
from yarp import _compat, limits
from yarp.archive import codec
from yarp.limits import PARALLEL_HASH_BYTES


def both_impls():
    return kernel_impls.both("_payload_kernel")


# --- the guard ---------------------------------------------------------------


def test_extension_loaded_in_a_normal_install():
    """Fails when the compiled module silently did not load."""
    if _compat.NO_EXTENSIONS:
        pytest.skip("YARP_NO_EXTENSIONS is set")
    assert yarp.archive.payload_kernel.IMPLEMENTATION == "c"
    assert yarp.archive.payload_kernel.prepare_payload is importlib.import_module("yarp._payload_kernel").prepare_payload


def test_the_codec_uses_the_selected_kernel():
    assert codec.prepare_payload is yarp.archive.payload_kernel.prepare_payload
    assert codec.canonical_fast is yarp.archive.payload_kernel.canonical_fast
    assert codec.same_json is yarp.archive.payload_kernel.same_json
    expected = "py" if _compat.NO_EXTENSIONS else "c"
    assert yarp.archive.payload_kernel.IMPLEMENTATION == expected


def test_no_extensions_switch_selects_the_twin():
    assert kernel_impls.selected_with_the_switch("yarp.archive.payload_kernel") == "py"


def test_implementation_name_matches(payload_impl):
    expected = "py" if payload_impl.__name__.endswith("_py") else "c"
    assert payload_impl.IMPLEMENTATION == expected


# --- payload preparation -------------------------------------------------------------


def _text(n: int) -> bytes:
    out = bytearray()
    i = 0
    while len(out) < n:
        out += b"line %d: compiling module yarp.part%d ... ok\n" % (i, i % 17)
        i += 1
    return bytes(out[:n])


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", "none"),
        (b"a" * 100, "none"),  # compressible but under the minimum size
        (_text(64 * 1024), "zstd"),
        (os.urandom(4096), "none"),
        (os.urandom(2 * 1024 * 1024), "none"),  # probe path
        (_text(1024 * 1024), "zstd"),
    ],
    ids=["empty", "tiny", "text64k", "random4k", "random2m", "text1m"],
)
def test_prepare_payload_decision_and_round_trip(payload_impl, data, expected):
    digest, compression, body = payload_impl.prepare_payload(data)
    assert digest == hashlib.sha256(data).digest()
    assert compression == expected
    if compression == "none":
        assert body == data
    else:
        assert len(body) < len(data)
    assert codec.decode_body(compression, body, len(data)) == data


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=3000),
        st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=40), st.integers(1, 400)),
    )
)
def test_prepare_payload_same_in_both(data):
    results = [impl.prepare_payload(data) for impl in both_impls()]
    assert all(r == results[0] for r in results)
    digest, compression, body = results[0]
    assert codec.decode_body(compression, body, len(data)) == data


def test_prepare_payload_accepts_buffers(payload_impl):
    data = _text(5000)
    expected = payload_impl.prepare_payload(data)
    assert payload_impl.prepare_payload(bytearray(data)) == expected
    assert payload_impl.prepare_payload(memoryview(data)) == expected


@pytest.mark.parametrize("size", [limits.MIN_COMPRESS_BYTES - 1, limits.MIN_COMPRESS_BYTES,
                                  limits.PROBE_THRESHOLD_BYTES - 1, limits.PROBE_THRESHOLD_BYTES])
@pytest.mark.parametrize("kind", ["text", "random", "half"])
def test_both_decide_alike_at_every_threshold(size, kind):
    # The thresholds come from `limits` in both kernels: at each edge they agree.
    if kind == "text":
        data = _text(size)
    elif kind == "random":
        data = os.urandom(size)
    else:  # text with incompressible stretches: the probe sees part of each
        data = b"".join(_text(64) + os.urandom(64) for _ in range(size // 128 + 1))[:size]
    results = [impl.prepare_payload(data) for impl in both_impls()]
    assert all(r == results[0] for r in results)
    assert results[0][0] == hashlib.sha256(data).digest()
    if size < limits.MIN_COMPRESS_BYTES:
        assert results[0][1:] == ("none", data)


def test_compressor_is_per_thread(payload_impl):
    from concurrent.futures import ThreadPoolExecutor

    inputs = [_text(20_000 + i * 333) for i in range(16)]
    expected = [payload_impl.prepare_payload(d) for d in inputs]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(payload_impl.prepare_payload, inputs)) == expected


# --- canonical JSON fast-path admission -------------------------------------------------

_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([2**53 - 1, -(2**53 - 1), 2**53, -(2**53), 2**63, -(2**63) - 1]),
    st.floats(),
    st.text(max_size=5),
)
_json_keys = st.one_of(st.text(max_size=4), st.sampled_from(["\ue000", "\U0001f600", "\ud7ff", "\u00e9"]))
_json = st.recursive(
    _json_scalars,
    lambda c: st.one_of(st.lists(c, max_size=5), st.tuples(c), st.dictionaries(_json_keys, c, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_fast_path_admission_same_in_both(value):
    answers = {impl.canonical_fast_path_ok(value) for impl in both_impls()}
    assert len(answers) == 1


def test_fast_path_admission_depth_bound(payload_impl):
    value: object = 1
    for _ in range(64):  # 64 nested lists: depths 0..63
        value = [value]
    assert payload_impl.canonical_fast_path_ok(value) is True
    assert payload_impl.canonical_fast_path_ok([value]) is False
    loop: list = []
    loop.append(loop)
    assert payload_impl.canonical_fast_path_ok(loop) is False


@settings(max_examples=300, deadline=None)
@given(_json)
def test_the_fused_fast_path_gives_the_reference_bytes_or_nothing(value):
    """`canonical_fast` is the admission and orjson in one call: RFC 8785's bytes, or None."""
    import orjson
    import rfc8785

    for impl in both_impls():
        fast = impl.canonical_fast(value)
        if fast is not None:
            assert fast == rfc8785.dumps(value)
        elif impl.canonical_fast_path_ok(value):
            # Admitted, yet nothing: orjson refused it (a lone surrogate), so the reference decides.
            with pytest.raises(orjson.JSONEncodeError):
                orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


_near_twins = st.sampled_from([(1, True), (1, 1.0), (0, False), (0.0, -0.0), ("1", 1), (None, False), ([1], (1,)),
                               ({"a": 1}, {"a": True}), ({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}),
                               ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ({"a": 1}, {"a": 1, "b": 2}), ([1, 2], [2, 1]),
                               (2**60, 2**60), (float("nan"), float("nan"))])


@settings(max_examples=300, deadline=None)
@given(st.one_of(_json.map(lambda v: (v, v)), st.tuples(_json, _json), _near_twins))
def test_same_json_means_the_same_canonical_bytes(pair):
    """Whatever `same_json` calls the same, the reference encoder encodes alike (or refuses both)."""
    import copy

    import rfc8785

    first, second = pair[0], copy.deepcopy(pair[1])
    answers = {impl.same_json(first, second) for impl in both_impls()}
    assert len(answers) == 1
    if answers == {True}:
        results = []
        for value in (first, second):
            try:
                results.append(rfc8785.dumps(value))
            except Exception as exc:  # noqa: BLE001 - both must fail alike
                results.append(type(exc))
        assert results[0] == results[1]


def test_same_json_tells_json_types_apart(payload_impl):
    assert payload_impl.same_json({"a": [1, "x", None]}, {"a": [1, "x", None]}) is True
    assert payload_impl.same_json({"a": 1}, {"a": True}) is False
    assert payload_impl.same_json([1], [1.0]) is False
    assert payload_impl.same_json([1], (1,)) is False
    assert payload_impl.same_json({"a": 1}, {"a": 1, "b": 1}) is False


@pytest.mark.parametrize("kind", ["text", "random"])
def test_large_payloads_hashed_alongside_compression_keep_exact_digests(payload_impl, kind):
    # From PARALLEL_HASH_BYTES up the digest is computed on a helper thread while
    # the body is compressed; it must still be the digest of exactly these bytes.
    size = PARALLEL_HASH_BYTES + 12345
    data = (b"line of build output 0123456789\n" * (size // 32 + 1))[:size] if kind == "text" else os.urandom(size)
    digest, compression, body = payload_impl.prepare_payload(data)
    assert digest == hashlib.sha256(data).digest()
    assert compression == ("zstd" if kind == "text" else "none")
    if compression == "none":
        assert body == data
    else:
        import zstandard

        assert zstandard.ZstdDecompressor().decompress(body, max_output_size=size) == data
