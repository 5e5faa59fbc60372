"""Frame kernel: the same tests on the compiled extension and its twin."""

from __future__ import annotations

import asyncio
import importlib
import os
import socket
import subprocess
import sys
import tracemalloc

import kernel_impls
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import yarp.wire.frames
from yarp import _compat, limits
from yarp.wire.frames import FrameSplitterPy as PyFrameSplitter
from yarp.errors import FrameError, FrameTooLarge

def header(n: int) -> bytes:
    return n.to_bytes(8, "big")


def both_impls():
    return kernel_impls.both("_fastframe")


# --- the guard ---------------------------------------------------------------


def test_extension_loaded_in_a_normal_install():
    """Fails when the compiled module silently did not load."""
    if _compat.NO_EXTENSIONS:
        pytest.skip("YARP_NO_EXTENSIONS is set")
    assert yarp.wire.frames.IMPLEMENTATION == "c"
    assert yarp.wire.frames.FrameSplitter is yarp.wire.frames.FrameSplitterC
    assert yarp.wire.frames.FrameSplitter.__module__ == "yarp._fastframe"


def test_both_splitters_are_exported_and_the_switch_hides_the_compiled_one():
    assert yarp.wire.frames.FrameSplitterPy is importlib.import_module("yarp._fastframe_py").FrameSplitter
    if _compat.NO_EXTENSIONS:
        assert yarp.wire.frames.FrameSplitterC is None
        assert yarp.wire.frames.FrameSplitter is yarp.wire.frames.FrameSplitterPy
    else:
        assert yarp.wire.frames.FrameSplitterC is importlib.import_module("yarp._fastframe").FrameSplitter


def test_no_extensions_switch_selects_the_twin():
    assert kernel_impls.selected_with_the_switch("yarp.wire.frames") == "py"


def test_implementation_name_matches(fastframe_impl):
    expected = "py" if fastframe_impl.__name__.endswith("_py") else "c"
    assert fastframe_impl.IMPLEMENTATION == expected


def test_the_frame_kernel_holds_frames_only(fastframe_impl):
    # Every broker client loads this kernel; payload work is `yarp.archive.payload_kernel`'s.
    names = set(vars(fastframe_impl))
    assert {"IMPLEMENTATION", "FrameSplitter", "encode_frame"} <= names
    assert sorted(names & {"prepare_payload", "canonical_fast_path_ok", "zstandard", "threading"}) == []


@pytest.mark.parametrize("twin", [False, True], ids=["selected", "twin"])
def test_loading_the_frame_kernel_loads_no_payload_code(twin):
    probe = ("import sys, yarp.wire.frames as f; f.FrameSplitter().feed(f.encode_frame(b'x')); "
             "print(f.IMPLEMENTATION, *sorted(m for m in sys.modules if m.startswith('yarp')))")
    env = dict(os.environ, PYTHONPATH=str(kernel_impls.SRC))
    if twin:
        env["YARP_NO_EXTENSIONS"] = "1"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    implementation, *modules = out.stdout.split()
    assert implementation == ("py" if twin else yarp.wire.frames.IMPLEMENTATION)
    assert f"yarp.{'_fastframe_py' if implementation == 'py' else '_fastframe'}" in modules  # the list is real
    assert sorted({"yarp.archive.payload_kernel", "yarp._payload_kernel", "yarp._payload_kernel_py", "yarp._digest",
                   "yarp.archive.codec"} & set(modules)) == []


# --- splitting -----------------------------------------------------------------


def test_split_at_every_byte_boundary(fastframe_impl):
    bodies = [b"a", b'{"k": 1}', bytes(range(256)) * 3, b"\x00" * 9]
    stream = b"".join(fastframe_impl.encode_frame(b) for b in bodies)
    for cut in range(len(stream) + 1):
        splitter = fastframe_impl.FrameSplitter()
        got = splitter.feed(stream[:cut]) + splitter.feed(stream[cut:])
        assert got == bodies, cut
        assert splitter.at_boundary
        assert splitter.buffered == 0


def test_byte_at_a_time(fastframe_impl):
    bodies = [b"x" * n for n in (1, 7, 8, 9, 100)]
    stream = b"".join(fastframe_impl.encode_frame(b) for b in bodies)
    splitter = fastframe_impl.FrameSplitter()
    got = []
    for i in range(len(stream)):
        got += splitter.feed(stream[i : i + 1])
        # Nothing is returned before a whole frame is buffered.
        assert sum(len(b) + 8 for b in got) <= i + 1
    assert got == bodies


def test_many_frames_in_one_chunk(fastframe_impl):
    bodies = [str(i).encode() * (i % 13 + 1) for i in range(2000)]
    stream = b"".join(header(len(b)) + b for b in bodies)
    splitter = fastframe_impl.FrameSplitter()
    assert splitter.feed(stream) == bodies
    assert splitter.at_boundary


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_accepts_any_contiguous_buffer(fastframe_impl, kind):
    splitter = fastframe_impl.FrameSplitter()
    data = header(3) + b"abc" + header(2) + b"d"
    assert splitter.feed(kind(data)) == [b"abc"]
    assert splitter.buffered == 9
    assert splitter.feed(kind(b"e")) == [b"de"]
    frames = splitter.feed(kind(header(1) + b"z"))
    assert frames == [b"z"] and all(type(f) is bytes for f in frames)


def test_at_boundary_and_buffered(fastframe_impl):
    splitter = fastframe_impl.FrameSplitter()
    assert splitter.at_boundary and splitter.buffered == 0
    splitter.feed(header(5)[:3])
    assert not splitter.at_boundary and splitter.buffered == 3
    splitter.feed(header(5)[3:])
    assert not splitter.at_boundary and splitter.buffered == 8
    splitter.feed(b"abcd")
    assert not splitter.at_boundary and splitter.buffered == 12
    assert splitter.feed(b"e") == [b"abcde"]
    assert splitter.at_boundary and splitter.buffered == 0


def test_oversize_refused_before_allocation(fastframe_impl):
    splitter = fastframe_impl.FrameSplitter()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with pytest.raises(FrameTooLarge) as info:
            splitter.feed(header(limits.MAX_FRAME_BYTES + 1) + b"x" * 100)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.declared == limits.MAX_FRAME_BYTES + 1
    assert info.value.limit == limits.MAX_FRAME_BYTES
    # An allocation for the declared body would show as ~256 MiB here.
    assert peak < 1024 * 1024
    assert splitter.buffered == 0


def test_huge_declared_length_split_header(fastframe_impl):
    splitter = fastframe_impl.FrameSplitter()
    head = header(2**63)
    assert splitter.feed(head[:7]) == []
    assert splitter.buffered == 7
    with pytest.raises(FrameTooLarge) as info:
        splitter.feed(head[7:] + b"body bytes")
    assert info.value.declared == 2**63
    assert splitter.buffered == 0
    assert str(info.value) == f"frame of {2**63} bytes exceeds the limit of {limits.MAX_FRAME_BYTES} bytes"


def test_custom_limit_is_inclusive(fastframe_impl):
    splitter = fastframe_impl.FrameSplitter(limits.MAX_HANDSHAKE_BYTES)
    body = b"h" * limits.MAX_HANDSHAKE_BYTES
    assert splitter.feed(header(len(body)) + body) == [body]
    with pytest.raises(FrameTooLarge) as info:
        splitter.feed(header(limits.MAX_HANDSHAKE_BYTES + 1))
    assert info.value.limit == limits.MAX_HANDSHAKE_BYTES


def test_zero_length_refused(fastframe_impl):
    splitter = fastframe_impl.FrameSplitter()
    with pytest.raises(FrameError) as info:
        splitter.feed(header(1) + b"a" + header(0))
    assert not isinstance(info.value, FrameTooLarge)


def test_failed_state_is_sticky(fastframe_impl):
    splitter = fastframe_impl.FrameSplitter()
    with pytest.raises(FrameError):
        splitter.feed(header(0))
    for _ in range(3):
        with pytest.raises(FrameError):
            splitter.feed(header(1) + b"a")
    big = fastframe_impl.FrameSplitter(16)
    with pytest.raises(FrameTooLarge):
        big.feed(header(17))
    with pytest.raises(FrameTooLarge) as info:
        big.feed(header(1) + b"a")
    assert (info.value.declared, info.value.limit) == (17, 16)
    with pytest.raises(FrameTooLarge):
        big.get_buffer(10)


def test_large_frame_in_chunks_allocates_once(fastframe_impl):
    size = 16 * 1024 * 1024
    body = os.urandom(1024) * (size // 1024)
    stream = header(size) + body
    splitter = fastframe_impl.FrameSplitter()
    view = memoryview(stream)
    chunk = 64 * 1024
    tracemalloc.start()
    try:
        got = []
        for start in range(0, len(stream), chunk):
            got += splitter.feed(view[start : start + chunk])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == [body]
    # One body buffer (plus at most one final copy in the twin), never a regrowing buffer.
    assert peak < 2.2 * size


def test_encode_frame_refuses_empty_and_oversize(fastframe_impl):
    assert fastframe_impl.encode_frame(b"abc") == header(3) + b"abc"
    with pytest.raises(FrameError):
        fastframe_impl.encode_frame(b"")
    with pytest.raises(FrameTooLarge) as info:
        fastframe_impl.encode_frame(b"x" * 5, 4)
    assert (info.value.declared, info.value.limit) == (5, 4)


def test_buffer_protocol_path(fastframe_impl):
    bodies = [b"a" * 10, b"b" * 200_000, b"c"]
    stream = b"".join(header(len(b)) + b for b in bodies)
    splitter = fastframe_impl.FrameSplitter()
    got = []
    pos = 0
    while pos < len(stream):
        buf = splitter.get_buffer(-1)
        n = min(len(buf), len(stream) - pos, 70_000)
        buf[:n] = stream[pos : pos + n]
        pos += n
        got += splitter.buffer_updated(n)
    assert got == bodies
    assert splitter.at_boundary
    with pytest.raises(ValueError):
        splitter.buffer_updated(10**9)


class _Collect(asyncio.BufferedProtocol):
    def __init__(self, splitter, done):
        self.splitter = splitter
        self.frames = []
        self.done = done
        self.at_boundary_on_eof = None

    def get_buffer(self, sizehint):
        return self.splitter.get_buffer(sizehint)

    def buffer_updated(self, nbytes):
        self.frames += self.splitter.buffer_updated(nbytes)

    def eof_received(self):
        self.at_boundary_on_eof = self.splitter.at_boundary
        self.done.set_result(None)


def test_buffered_protocol_over_a_real_socket(fastframe_impl):
    bodies = [os.urandom(n) for n in (1, 3000, 1_500_000, 17)]
    stream = b"".join(fastframe_impl.encode_frame(b) for b in bodies)

    async def main():
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        theirs.setblocking(False)
        done = loop.create_future()
        transport, proto = await loop.connect_accepted_socket(
            lambda: _Collect(fastframe_impl.FrameSplitter(), done), ours
        )
        await loop.sock_sendall(theirs, stream)
        theirs.shutdown(socket.SHUT_WR)
        await asyncio.wait_for(done, 10)
        transport.close()
        theirs.close()
        return proto

    proto = asyncio.run(main())
    assert proto.frames == bodies
    assert proto.at_boundary_on_eof is True


# --- crossing the implementations ------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bodies=st.lists(st.binary(min_size=1, max_size=300), max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=20),
    pair=st.sampled_from([(0, 0), (0, 1), (1, 0), (1, 1)]),
)
def test_encode_with_one_split_with_the_other(bodies, cuts, pair):
    impls = both_impls()
    enc = impls[pair[0] % len(impls)]
    dec = impls[pair[1] % len(impls)]
    stream = b"".join(enc.encode_frame(b) for b in bodies)
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    splitter = dec.FrameSplitter()
    got = []
    for start, stop in zip(points, points[1:]):
        got += splitter.feed(stream[start:stop])
    assert got == bodies
    assert splitter.at_boundary


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=1, max_size=40), st.integers(min_value=1, max_value=64))
def test_both_implementations_fail_alike(stream, limit):
    outcomes = []
    for impl in both_impls():
        splitter = impl.FrameSplitter(limit)
        try:
            frames = splitter.feed(stream)
            outcomes.append(("ok", frames, splitter.buffered, splitter.at_boundary))
        except FrameError as exc:
            outcomes.append((type(exc).__name__, str(exc), splitter.buffered))
    assert all(o == outcomes[0] for o in outcomes)


def test_py_splitter_rejects_bad_limit():
    with pytest.raises(ValueError):
        PyFrameSplitter(0)
