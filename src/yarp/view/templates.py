"""Selector for the line templates: the compiled extension or its pure-Python twin.

`yarp.view.ranking.kind` asks `template` what kind of line a finding is,
`yarp.view.spending.weighed` asks `templates` the kinds of every finding of a
dense class, `yarp.view.salience` asks `masked_paths` how a line reads with
the words of its paths masked, `yarp.view.streams` asks `classed_alike` the
class of each kind of scanned line once (every kind's first line in one call)
and keeps them by line number with `by_number`, the view counts with `tally` and finds the lines of
some keys with `places`, and
`yarp.view.blocks` and `yarp.view.markers` ask `grouped` for a stream's salient
lines by rank or by group; the rest of YARP imports them from here and never from
`_templates` or `_templates_py` directly. `YARP_NO_EXTENSIONS=1` (read once, in
`yarp._compat`) selects the twin; otherwise the extension is required to load
when it was built, and a missing build falls back to the twin (a guard test
fails then).
"""

from yarp._compat import NO_EXTENSIONS

if NO_EXTENSIONS:
    from yarp import _templates_py as _impl
else:
    try:
        from yarp import _templates as _impl
    except ImportError:
        from yarp import _templates_py as _impl

IMPLEMENTATION = _impl.IMPLEMENTATION
classed_alike = _impl.classed_alike
#: `by_number(numbers, classes, left_out)`: each scanned line's number and class, those of `left_out` (and None) aside.
by_number = _impl.by_number
masked_paths = _impl.masked_paths
grouped = _impl.grouped
#: `places(keys, wanted)`: the indices of `keys` whose key the set `wanted` holds, ascending.
places = _impl.places
tally = _impl.tally
template = _impl.template
templates = _impl.templates

__all__ = ["IMPLEMENTATION", "by_number", "classed_alike", "grouped", "masked_paths", "places", "tally", "template",
           "templates"]
