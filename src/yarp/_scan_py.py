"""The trigger scan in pure Python: the reference twin of the compiled `yarp._scan`.

`yarp.view.scan` selects between the two; the salience classifier asks it which
lines of a buffer hold which of its trigger literals (ASCII case-insensitive).
The compiled scan must return exactly what this module returns for every
buffer and every tuple of triggers; tests/test_scan.py crosses the two.
"""

from __future__ import annotations

IMPLEMENTATION = "py"
__all__ = ["IMPLEMENTATION", "trigger_line_numbers", "trigger_lines"]

#: Per trigger scanned, its distinct bytes; emptied when it holds `_KEPT` (callers pass a few fixed tuples).
_DISTINCT: dict[bytes, tuple[int, ...]] = {}
_KEPT = 1024


def trigger_lines(buf: bytes, triggers: tuple[bytes, ...]) -> dict[int, tuple[bytes, ...]]:
    """Per start offset of a line of `buf` holding a trigger, the triggers found on it.

    Lines end at b"\\n"; a trigger matches whatever the case of the buffer's
    ASCII letters (it is given in lower case; other bytes match exactly). The
    triggers of a line come in the order of `triggers`, each once. One `find`
    pass per trigger over a lowercased copy; after a hit the scan jumps to the
    next line, so a trigger costs one pass whatever its count. A trigger
    holding a byte the buffer lacks is skipped: whether a byte occurs is a
    `memchr`, many times faster than a pass, and most outputs (numbers, logs)
    lack a few letters or signs of most triggers.
    """
    low = buf.lower()
    starts: dict[int, tuple[bytes, ...]] = {}
    find, rfind = low.find, low.rfind
    size = len(low)
    present: dict[int, bool] = {}  # per byte asked, whether the buffer holds it
    for trigger in triggers:
        distinct = _DISTINCT.get(trigger)
        if distinct is None:
            if len(_DISTINCT) >= _KEPT:
                _DISTINCT.clear()
            distinct = _DISTINCT[trigger] = tuple(dict.fromkeys(trigger))
        for byte in distinct:
            held = present.get(byte)
            if held is None:
                held = present[byte] = byte in low
            if not held:
                break
        else:
            pos = find(trigger)
            while pos >= 0:
                start = rfind(b"\n", 0, pos) + 1
                starts[start] = starts.get(start, ()) + (trigger,)
                end = find(b"\n", pos)
                if end < 0:
                    break
                pos = find(trigger, end + 1) if end + 1 < size else -1
    return starts


def trigger_line_numbers(buf: bytes, triggers: tuple[bytes, ...]) -> tuple[list[int], list[tuple[bytes, ...]]]:
    """`trigger_lines` by line number: (the numbers of the lines holding a trigger, counted from 0, in line
    order; beside each, its triggers); lines holding the same triggers share one tuple of them."""
    found = trigger_lines(buf, triggers)
    numbers: list[int] = []
    helds: list[tuple[bytes, ...]] = []
    same: dict[tuple[bytes, ...], tuple[bytes, ...]] = {}
    previous, number = 0, 0
    for offset in sorted(found):
        number += buf.count(b"\n", previous, offset)
        previous = offset
        held = found[offset]
        numbers.append(number)
        helds.append(same.setdefault(held, held))
    return numbers, helds

