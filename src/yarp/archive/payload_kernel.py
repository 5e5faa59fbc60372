"""Selector for the payload kernel: the compiled extension or its pure-Python twin.

`prepare_payload` (SHA-256 plus the compression decision),
`canonical_fast_path_ok` and `canonical_fast` (the RFC 8785 fast path) and
`same_json` serve the codec,
which only the broker and the commands that store payloads load; the frame
kernel (`yarp.wire.frames`) is separate so that the bridge, `yarp run` and the
hooks never load this code. The rest of YARP imports these names from here and
never from `_payload_kernel` or `_payload_kernel_py` directly.
`YARP_NO_EXTENSIONS=1` (read once, in `yarp._compat`) selects the twin;
otherwise the extension is required to load when it was built, and a missing
build falls back to the twin (a guard test fails then).
"""

from __future__ import annotations

from yarp._compat import NO_EXTENSIONS

if NO_EXTENSIONS:
    from yarp import _payload_kernel_py as _impl
else:
    try:
        from yarp import _payload_kernel as _impl
    except ImportError:
        from yarp import _payload_kernel_py as _impl

IMPLEMENTATION = _impl.IMPLEMENTATION
canonical_fast = _impl.canonical_fast
canonical_fast_path_ok = _impl.canonical_fast_path_ok
prepare_payload = _impl.prepare_payload
same_json = _impl.same_json

__all__ = ["IMPLEMENTATION", "canonical_fast", "canonical_fast_path_ok", "prepare_payload", "same_json"]
