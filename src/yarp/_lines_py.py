"""A text's lines in pure Python: the reference twin of the compiled `yarp._lines`.

`split_lines(body)` is `body.split(b"\\n")`: every line made at once, in a
list. The compiled `Lines` reads the same but makes a line only when it is
asked for. `yarp.view.lines` selects between the two; tests/test_lines.py
crosses them.
"""

from __future__ import annotations

from _collections import _count_elements

IMPLEMENTATION = "py"
__all__ = ["IMPLEMENTATION", "banner_candidates", "count_line", "indent", "line_indents", "lines_at_margin",
           "line_counts", "lines_in", "lines_starting", "may_be_banner", "split_lines"]


def split_lines(body: bytes) -> list[bytes]:
    """The lines of `body` split at b"\\n", without their newlines."""
    return body.split(b"\n")


def lines_starting(lines, first: int, stop: int, prefixes: tuple[bytes, ...]) -> list[int]:
    """The numbers of the lines of `lines` from `first` up to `stop` (exclusive) that start with one of
    `prefixes` past their leading blanks (what `bytes.lstrip` strips)."""
    return [i for i in range(max(0, first), min(stop, len(lines))) if lines[i].lstrip().startswith(prefixes)]


def indent(line: bytes) -> int:
    """The columns a line is indented by, a tab to the next multiple of eight; a line a carriage return
    starts (a step printed again over itself) as a terminal shows it."""
    if line[:1] == b"\r":
        line = line.lstrip(b"\r")
    if line[:1] not in (b" ", b"\t"):
        return 0
    body = line.lstrip(b" \t")
    return len(line[:len(line) - len(body)].expandtabs(8))


def line_indents(lines, first: int, stop: int) -> list[int]:
    """`indent` of each line of `lines` from `first` up to `stop` (exclusive)."""
    return [indent(lines[i]) for i in range(max(0, first), min(stop, len(lines)))]


#: The runs of one sign a banner may start with (`may_be_banner`).
_RUNS = (b"***", b"===", b"###", b"---", b">>>")


def may_be_banner(line: bytes) -> bool:
    """Whether a line may head what follows (`yarp.view.ranking.is_banner`, which asks more): it starts with
    a run of three signs or `In `, holds `: In ` or `: (in `, or is one word holding a dot. Every banner
    is one: a walk up from a finding asks the few such lines, and passes the others at C speed."""
    if line.startswith(_RUNS) or line.startswith(b"In ") or b": In " in line or b": (in " in line:
        return True
    words = line.split()
    return len(words) == 1 and b"." in words[0]


def banner_candidates(lines, first: int, stop: int) -> list[int]:
    """The numbers of the lines of `lines` from `first` up to `stop` (exclusive) that `may_be_banner`."""
    return [i for i in range(max(0, first), min(stop, len(lines))) if may_be_banner(lines[i])]


def count_line(lines, first: int, stop: int, line: bytes) -> int:
    """How many of the lines of `lines` from `first` up to `stop` (exclusive) are `line`."""
    return lines[max(0, first):max(0, stop)].count(line)


def lines_at_margin(lines, first: int, stop: int) -> list[int]:
    """The numbers of the lines of `lines` from `first` up to `stop` (exclusive) that start with neither a
    space nor a tab."""
    return [i for i in range(max(0, first), min(stop, len(lines))) if lines[i][:1] not in (b" ", b"\t")]


def line_counts(text: bytes) -> dict[bytes, int]:
    """How many times each line of `text` (split at b"\\n") is said, the lines in the order first read."""
    counts: dict[bytes, int] = {}
    _count_elements(counts, text.split(b"\n"))
    return counts


def lines_in(text: bytes, keys) -> list[int]:
    """The numbers of the lines of `text` (split at b"\\n") that are among `keys`, ascending."""
    return [number for number, line in enumerate(text.split(b"\n")) if line in keys]
