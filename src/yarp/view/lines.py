"""Selector for a text's lines: the compiled extension or its pure-Python twin.

`yarp.view.streams` holds each text it caps as `split_lines(body)`: a
sequence that reads as `body.split(b"\\n")`; compiled, each line is made only
when asked for (`yarp._lines.Lines`). The rest of YARP imports it from here and
never from `_lines` or `_lines_py` directly. `YARP_NO_EXTENSIONS=1` (read once,
in `yarp._compat`) selects the twin; otherwise the extension is required to
load when it was built, and a missing build falls back to the twin (a guard
test fails then).
"""

from yarp._compat import NO_EXTENSIONS

if NO_EXTENSIONS:
    from yarp import _lines_py as _impl
else:
    try:
        from yarp import _lines as _impl
    except ImportError:
        from yarp import _lines_py as _impl

IMPLEMENTATION = _impl.IMPLEMENTATION
split_lines = _impl.split_lines
#: `lines_starting(lines, first, stop, prefixes)`: the numbers of the lines in [first, stop) that start with
#: one of `prefixes` past their leading blanks (of a compiled `Lines`, read in its text, making no line: a
#: block of forty findings is asked whether a stack frame starts one of its lines).
lines_starting = _impl.lines_starting
#: `indent(line)`: the columns a line is indented by; `line_indents(lines, first, stop)`: each one's of the lines in
#: [first, stop); `banner_candidates(lines, first, stop)`: those of them that may be banners (a heading's walk
#: up from a finding, `yarp.view.ranking.heading`, asks only those whether they are).
indent = _impl.indent
line_indents = _impl.line_indents
banner_candidates = _impl.banner_candidates
#: `count_line(lines, first, stop, line)`: how many of the lines in [first, stop) are `line` (a heading every
#: record repeats is counted over two thousand lines around it, `yarp.view.ranking.repeated`).
count_line = _impl.count_line
#: `lines_at_margin(lines, first, stop)`: the numbers of the lines in [first, stop) that start with neither a
#: space nor a tab (where a failure block's frames were is asked of those alone, `yarp.view.spending`).
lines_at_margin = _impl.lines_at_margin
#: `line_counts(text)`: how many times each line of `text` is said, in the order first read (each distinct line
#: made once); `lines_in(text, keys)`: the numbers of the lines that are among `keys` (`yarp.view.rarity`).
line_counts = _impl.line_counts
lines_in = _impl.lines_in

__all__ = ["IMPLEMENTATION", "banner_candidates", "count_line", "indent", "line_indents", "lines_at_margin",
           "line_counts", "lines_in", "lines_starting", "split_lines"]
