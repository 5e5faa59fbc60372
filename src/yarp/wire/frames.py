"""Selector for the frame splitter and encoder: the compiled extension or its twin.

The rest of YARP imports these names from here and never from `_fastframe` or
`_fastframe_py` directly. `YARP_NO_EXTENSIONS=1` (read once, in `yarp._compat`)
selects the pure-Python twin; otherwise the extension is required to load when it
was built, and a missing build falls back to the twin (a guard test fails then).
Every broker client loads this module, so it selects frames only: the payload
kernel has its own selector, `yarp.archive.payload_kernel`.
"""

from __future__ import annotations

from yarp._compat import NO_EXTENSIONS

_NAMES = ("IMPLEMENTATION", "FrameSplitter", "FrameSplitterC", "FrameSplitterPy", "encode_frame")

if NO_EXTENSIONS:
    from yarp import _fastframe_py as _impl
else:
    try:
        from yarp import _fastframe as _impl
    except ImportError:
        from yarp import _fastframe_py as _impl

IMPLEMENTATION = _impl.IMPLEMENTATION
FrameSplitter = _impl.FrameSplitter
encode_frame = _impl.encode_frame

__all__ = list(_NAMES)


def __getattr__(name: str):
    """`FrameSplitterPy` (the twin's splitter) and `FrameSplitterC` (the compiled one, None when it
    is disabled or not built), for tests that run both side by side.

    Loaded on first use only: the bridge and the broker import this module at
    start-up and must not pay for the implementation they do not run.
    """
    if name == "FrameSplitterPy":
        from yarp._fastframe_py import FrameSplitter

        return FrameSplitter
    if name == "FrameSplitterC":
        if NO_EXTENSIONS:
            return None
        try:
            from yarp._fastframe import FrameSplitter
        except ImportError:
            return None
        return FrameSplitter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
