"""A text's lines in pure Python: the reference twin of the compiled `yarp._lines`.

`split_lines(body)` is `body.split(b"\\n")`: every line made at once, in a
list. The compiled `Lines` reads the same but makes a line only when it is
asked for. `yarp.view.lines` selects between the two; tests/test_lines.py
crosses them.
"""

from __future__ import annotations

IMPLEMENTATION = "py"
__all__ = ["IMPLEMENTATION", "lines_starting", "split_lines"]


def split_lines(body: bytes) -> list[bytes]:
    """The lines of `body` split at b"\\n", without their newlines."""
    return body.split(b"\n")


def lines_starting(lines, first: int, stop: int, prefixes: tuple[bytes, ...]) -> list[int]:
    """The numbers of the lines of `lines` from `first` up to `stop` (exclusive) that start with one of
    `prefixes` past their leading blanks (what `bytes.lstrip` strips)."""
    return [i for i in range(max(0, first), min(stop, len(lines))) if lines[i].lstrip().startswith(prefixes)]
