"""Selector for the trigger scan: the compiled extension or its pure-Python twin.

The salience classifier asks `trigger_lines` which lines of a buffer hold
which of its trigger literals (by line start; `trigger_line_numbers` by line
number); the rest of YARP imports it from here and never from `_scan` or
`_scan_py` directly. `YARP_NO_EXTENSIONS=1` (read once, in `yarp._compat`)
selects the twin; otherwise the extension is required to load when it was
built, and a missing build falls back to the twin (a guard test fails then).
"""

from yarp._compat import NO_EXTENSIONS

if NO_EXTENSIONS:
    from yarp import _scan_py as _impl
else:
    try:
        from yarp import _scan as _impl
    except ImportError:
        from yarp import _scan_py as _impl

IMPLEMENTATION = _impl.IMPLEMENTATION
trigger_lines = _impl.trigger_lines
trigger_line_numbers = _impl.trigger_line_numbers

__all__ = ["IMPLEMENTATION", "trigger_line_numbers", "trigger_lines"]
