"""Line shapes and table rows in pure Python: the reference twin of the compiled `yarp._shapes`.

`yarp.view.shapes` selects between the two; `yarp.view.rarity` asks it for each
line's shape (`line_shapes`), which it compares, and for the rows of a table
that break its columns' rule (`rows_breaking`). The compiled kernel must return
exactly what this module returns for every text; tests/test_shapes.py crosses
the two.
"""

from __future__ import annotations

IMPLEMENTATION = "py"
__all__ = ["IMPLEMENTATION", "SHAPE_BYTES", "line_shapes", "rows_breaking"]

#: The most bytes of a line's shape kept (`line_shapes`), and the longest word of capitals it keeps.
SHAPE_BYTES = 256
CAPS_BYTES = 8
_word_run = _symbol_run = None


def line_shapes(data: bytes, firsts: list | None = None) -> list[bytes]:
    """Per line of `data` (split at b"\\n"), its shape: each run of ASCII word characters (`[A-Za-z0-9_]`)
    as one `w`, unless it is a word of at most `CAPS_BYTES` capitals (`FAIL`, `PASS`, a grade `F`), kept
    as it is, and each run of one other byte as that byte once; its first `SHAPE_BYTES` bytes.
    ` src/a.py  |  12 ++++--` is ` w/w.w | w +-`; `Check 4-51   | FAIL |` is `w w-w | FAIL |`.
    `firsts` (`classed_alike`'s) changes nothing: lines alike have one shape, and the kernel reads it to
    shape each kind once."""
    global _word_run, _symbol_run
    if _word_run is None:
        import re

        _word_run, _symbol_run = re.compile(rb"\w+"), re.compile(rb"([^\w\n])\1+")
    shapes = _symbol_run.sub(rb"\1", _word_run.sub(_word_shape, data))
    return [shape[:SHAPE_BYTES] for shape in shapes.split(b"\n")]


def _word_shape(match) -> bytes:
    word = match[0]
    return word if len(word) <= CAPS_BYTES and word.isalpha() and word.isupper() else b"w"


def rows_breaking(data: bytes, width: int, rule: tuple) -> tuple[int, list[int], list[int]]:
    """How many lines of `data` (split at b"\\n") are rows of `width` fields (`bytes.split()`) holding every
    `rule` value ((position, value) pairs) at its position, the numbers of the other rows of `width`
    fields, ascending (the rows of a table that break its columns' rule), and per rule pair how many rows
    of `width` fields do not hold it (none where its position is outside the row)."""
    ruled, out, broken = 0, [], [0] * len(rule)
    for number, line in enumerate(data.split(b"\n")):
        fields = line.split()
        if len(fields) != width:
            continue
        breaks = False
        for r, (position, value) in enumerate(rule):
            if 0 <= position < width and fields[position] != value:
                broken[r] += 1
                breaks = True
        if breaks:
            out.append(number)
        else:
            ruled += 1
    return ruled, out, broken
