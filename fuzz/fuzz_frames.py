"""Atheris harness: the compiled frame splitter against its pure-Python twin.

Each input is cut into a frame limit, a chunking pattern and a byte stream.
The stream is fed to `yarp._fastframe.FrameSplitter` (compiled) and
`yarp._fastframe_py.FrameSplitter` (twin, instrumented for coverage) in the
same chunks. The harness fails (raises) when:

- the two implementations return different frames or different errors;
- a frame comes back that is empty or longer than the limit;
- a declared length over the limit is not refused the moment its 8-byte
  header is complete (the body must never be buffered or allocated);
- `buffered` ever exceeds the bytes fed since the last frame boundary;
- a failed splitter accepts more input instead of failing again;
- re-encoding the frames with `encode_frame` does not give back the prefix
  of the stream they came from.

Run (bounded time; not part of CI):

    PYTHONPATH=src .venv/bin/python fuzz/fuzz_frames.py -max_total_time=60 fuzz/corpus

It never touches the network or the filesystem outside the corpus directory.
"""

from __future__ import annotations

import os
import sys

import atheris

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

with atheris.instrument_imports(include=["yarp._fastframe_py"]):
    from yarp import _fastframe_py as py

from yarp import _fastframe as c  # noqa: E402  (compiled: not instrumentable, compared against the twin)
from yarp.errors import FrameError, FrameTooLarge  # noqa: E402

HEADER = 8


def _run(impl, limit: int, chunks: list[bytes]):
    splitter = impl.FrameSplitter(limit)
    frames: list[bytes] = []
    fed_since_boundary = 0
    for chunk in chunks:
        try:
            got = splitter.feed(chunk)
        except FrameError as exc:
            # Sticky: the next feed fails the same way, whatever it is given.
            try:
                splitter.feed(b"\x00" * 9)
            except FrameError as again:
                if type(again) is not type(exc):
                    raise AssertionError("failed splitter changed its error") from None
            else:
                raise AssertionError("failed splitter accepted more input")
            detail = (exc.declared, exc.limit) if isinstance(exc, FrameTooLarge) else None
            return frames, (type(exc).__name__, detail)
        fed_since_boundary += len(chunk)
        if got:
            fed_since_boundary = splitter.buffered
        for frame in got:
            if not 0 < len(frame) <= limit:
                raise AssertionError("frame outside 1..limit")
        frames.extend(got)
        if splitter.buffered > fed_since_boundary:
            raise AssertionError("buffered more than was fed")
        if splitter.buffered > HEADER + limit:
            raise AssertionError("buffered past the limit")
    return frames, ("at_boundary", splitter.at_boundary, splitter.buffered)


def TestOneInput(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    limit = fdp.ConsumeIntInRange(1, 1 << 16)
    cuts = [fdp.ConsumeIntInRange(0, 64) for _ in range(fdp.ConsumeIntInRange(0, 8))]
    stream = fdp.ConsumeBytes(fdp.remaining_bytes())
    chunks, pos = [], 0
    for cut in cuts:
        chunks.append(stream[pos:pos + cut])
        pos += cut
    chunks.append(stream[pos:])

    py_frames, py_end = _run(py, limit, chunks)
    c_frames, c_end = _run(c, limit, chunks)
    if py_frames != c_frames or py_end != c_end:
        raise AssertionError(f"implementations differ: py={py_end!r} c={c_end!r}")

    # An oversize declaration is refused as soon as its header is complete.
    if len(stream) >= HEADER:
        declared = int.from_bytes(stream[:HEADER], "big")
        if declared > limit:
            for impl in (py, c):
                try:
                    impl.FrameSplitter(limit).feed(stream[:HEADER])
                except FrameTooLarge as exc:
                    if (exc.declared, exc.limit) != (declared, limit):
                        raise AssertionError("wrong limit error") from None
                else:
                    raise AssertionError("oversize header accepted")

    # The frames re-encode to exactly the bytes they were cut from.
    encoded = b"".join(c.encode_frame(f, limit) for f in c_frames)
    if encoded != stream[:len(encoded)] or encoded != b"".join(py.encode_frame(f, limit) for f in py_frames):
        raise AssertionError("re-encoding differs from the input")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
