"""Frame splitting throughput: compiled extension against its pure-Python twin.

Two workloads, each run on `c` and `py` in the same session: a stream of many
small frames fed in 64 KiB chunks (the broker's common case), and one 16 MiB
frame fed in 64 KiB chunks (checks the large-frame path stays linear), also
through the BufferedProtocol path that receives straight into the body.

Run:  PYTHONPATH=src .venv/bin/python -m pytest -q bench/test_bench_frames.py
"""

from __future__ import annotations

import os

CHUNK = 64 * 1024


def _chunks(stream: bytes) -> list[memoryview]:
    view = memoryview(stream)
    return [view[i : i + CHUNK] for i in range(0, len(stream), CHUNK)]


def _small_frames_stream() -> tuple[bytes, int]:
    bodies = [b'{"requestId":%d,"operation":"result_text","text":"%s"}' % (i, b"x" * (i % 300)) for i in range(20_000)]
    return b"".join(len(b).to_bytes(8, "big") + b for b in bodies), len(bodies)


SMALL, SMALL_COUNT = _small_frames_stream()
SMALL_CHUNKS = _chunks(SMALL)
BIG_SIZE = 16 * 1024 * 1024
BIG = BIG_SIZE.to_bytes(8, "big") + os.urandom(1024) * (BIG_SIZE // 1024)
BIG_CHUNKS = _chunks(BIG)


def _split_all(impl, chunks):
    splitter = impl.FrameSplitter()
    count = 0
    for chunk in chunks:
        count += len(splitter.feed(chunk))
    return count


def test_small_frames(benchmark, fastframe_impl):
    benchmark.group = f"frames: {SMALL_COUNT} small frames, {len(SMALL) // 1024} KiB in 64 KiB chunks"
    assert benchmark(_split_all, fastframe_impl, SMALL_CHUNKS) == SMALL_COUNT


def test_one_16mib_frame(benchmark, fastframe_impl):
    benchmark.group = "frames: one 16 MiB frame in 64 KiB chunks"
    assert benchmark(_split_all, fastframe_impl, BIG_CHUNKS) == 1


def _receive_into(impl, stream):
    splitter = impl.FrameSplitter()
    view = memoryview(stream)
    pos = 0
    frames = 0
    while pos < len(stream):
        buf = splitter.get_buffer(CHUNK)
        n = min(len(buf), CHUNK, len(stream) - pos)
        buf[:n] = view[pos : pos + n]
        pos += n
        frames += len(splitter.buffer_updated(n))
    return frames


def test_one_16mib_frame_buffered_protocol(benchmark, fastframe_impl):
    benchmark.group = "frames: one 16 MiB frame via get_buffer/buffer_updated"
    assert benchmark(_receive_into, fastframe_impl, BIG) == 1


def test_baseline_copy_16mib(benchmark):
    """Floor: copying the same chunks into one preallocated buffer and no framing at all."""
    benchmark.group = "frames: one 16 MiB frame in 64 KiB chunks"

    def copy_only():
        out = bytearray(len(BIG))
        pos = 0
        for chunk in BIG_CHUNKS:
            out[pos : pos + len(chunk)] = chunk
            pos += len(chunk)
        return bytes(out)

    assert len(benchmark(copy_only)) == len(BIG)
