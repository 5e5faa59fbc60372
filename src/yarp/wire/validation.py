"""Selector for request validation: the compiled extension or its pure-Python twin.

The rest of YARP imports these names from here and never from `_validate` or
`_validate_py` directly. `YARP_NO_EXTENSIONS=1` (read once, in `yarp._compat`)
selects the twin; otherwise the extension is required to load when it was
built, and a missing build falls back to the twin (a guard test fails then).
"""

from __future__ import annotations

from yarp._compat import NO_EXTENSIONS

if NO_EXTENSIONS:
    from yarp import _validate_py as _impl
else:
    try:
        from yarp import _validate as _impl
    except ImportError:
        from yarp import _validate_py as _impl

IMPLEMENTATION = _impl.IMPLEMENTATION
parse_request = _impl.parse_request
check_operation = _impl.check_operation
parse_operation = _impl.parse_operation
parse_imported_call = _impl.parse_imported_call
check_json = _impl.check_json
event_text = _impl.event_text

__all__ = ["IMPLEMENTATION", "check_json", "check_operation", "event_text", "parse_imported_call",
           "parse_operation", "parse_request"]
