"""Selector for line shapes and table rows: the compiled extension or its pure-Python twin.

`yarp.view.rarity` asks `line_shapes` for each line's shape and
`rows_breaking` for the rows of a table that break its columns' rule; the rest
of YARP imports them from here and never from `_shapes` or `_shapes_py`
directly. `YARP_NO_EXTENSIONS=1` (read once, in `yarp._compat`) selects the
twin; otherwise the extension is required to load when it was built, and a
missing build falls back to the twin (a guard test fails then).
"""

from yarp._compat import NO_EXTENSIONS

if NO_EXTENSIONS:
    from yarp import _shapes_py as _impl
else:
    try:
        from yarp import _shapes as _impl
    except ImportError:
        from yarp import _shapes_py as _impl

IMPLEMENTATION = _impl.IMPLEMENTATION
line_shapes = _impl.line_shapes
rows_breaking = _impl.rows_breaking

__all__ = ["IMPLEMENTATION", "line_shapes", "rows_breaking"]
