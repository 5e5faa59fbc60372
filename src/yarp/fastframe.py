"""Selector for the frame splitter and payload kernel: the compiled extension or its twin.

The rest of YARP imports these names from here and never from `_fastframe` or
`_fastframe_py` directly. `YARP_NO_EXTENSIONS=1` (read once, in `yarp._compat`)
selects the pure-Python twin; otherwise the extension is required to load when it
was built, and a missing build falls back to the twin (a guard test fails then).
"""

from __future__ import annotations

from ._compat import NO_EXTENSIONS

if NO_EXTENSIONS:
    from ._fastframe_py import IMPLEMENTATION, FrameSplitter, encode_frame, prepare_payload
else:
    try:
        from ._fastframe import IMPLEMENTATION, FrameSplitter, encode_frame, prepare_payload
    except ImportError:
        from ._fastframe_py import IMPLEMENTATION, FrameSplitter, encode_frame, prepare_payload

__all__ = ["IMPLEMENTATION", "FrameSplitter", "encode_frame", "prepare_payload"]
