"""Line templates in pure Python: the reference twin of the compiled `yarp._templates`.

A line's template says what kind of line it is (`yarp.view.ranking.kind`): its
words past a leading location (`src/a.py:3:1:`), within its first
`TEMPLATE_BYTES`, with its digits as `#` and each quoted name (`'x'`, `"x"`,
`` `x` `` at the start or after a blank, `(`, `[`, `:` or `=`) as `Q`; of more
than four words, the first three and the last (the last often names the
check: `no-undef`, `(no-member)`). Two findings of one check in two places
have one template; an error and a warning, or two checks, do not.

A line's masked paths (`masked_paths`) are the line with the words of each path
masked: in a word holding a `/` (a path, a URL), every letter after the first `/`
as `x`, the file's extension and line numbers kept (`src/xxx/x.go:3:1:`). What
precedes the first `/` may name something else (`WARNING/MainProcess`) and is
kept. The salience classifier reads a failure or warning line again so masked:
a word inside a path says where, not what happened (`yarp.view.salience`).

A scan's lines alike (`classed_alike`) are lines the same byte for byte or, where
no entry their triggers reach reads digits, the same but for their digits: each
kind is classed once, by its first line, and shares that line's template
(a template reads every digit as `#`).

`yarp.view.templates` selects between the two; tests/test_templates.py crosses them
and holds `LOCATION` to the salience data's own location pattern.
"""

from __future__ import annotations

import re
from _collections import _count_elements
from itertools import compress, count

IMPLEMENTATION = "py"
__all__ = ["IMPLEMENTATION", "TEMPLATE_BYTES", "by_number", "classed_alike", "grouped", "masked_paths", "places",
           "tally", "template", "templates"]

#: Bytes of a line a template reads, past its location.
TEMPLATE_BYTES = 160
#: A line's leading location: the salience data's `location` pattern (`yarp.view.salience.HINT_PATTERNS`).
LOCATION = rb"^[ \t]*([^ \t:]+:\d+(:\d+)?:?[ \t]*)?"
#: A quoted name: after a blank, `(`, `[`, `:` or `=`, or at the start of what the template reads.
QUOTED = rb"(?<=[ (\[:=])(?:'[^']*'|\"[^\"]*\"|`[^`]*`)|^(?:'[^']*'|\"[^\"]*\"|`[^`]*`)"
#: A word holding a `/`, the first group up to its file's extension and line numbers, which stay as they are.
#: It is tried at a word's start only and never gives back what precedes the first `/`.
PATH = (b"(?<![^ \\t\"'()\\[\\]<>,;])([^ \\t\"'()\\[\\]<>,;/]*+/[^ \\t\"'()\\[\\]<>,;]*?)"
        b"(\\.[A-Za-z0-9]{1,8}(?::\\d+)*:?)?(?=[ \\t\"'()\\[\\]<>,;]|$)")
_location = re.compile(LOCATION)
_path = re.compile(PATH)
_LETTERS = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", b"x" * 52)
_quoted = re.compile(QUOTED)
_DIGITS = bytes.maketrans(b"0123456789", b"##########")
_ZEROS = bytes.maketrans(b"0123456789", b"0000000000")


def template(line: bytes) -> bytes:
    """The template of `line` (a line without its newline)."""
    start = _location.match(line).end()
    words = _quoted.sub(b"Q", line[start:start + TEMPLATE_BYTES].translate(_DIGITS)).split()
    return b" ".join(words[:3] + words[-1:]) if len(words) > 4 else b" ".join(words)


def templates(lines, indices, firsts=None) -> list[bytes]:
    """The template of `lines[i]` for each `i` of `indices`, in order. `firsts` (`classed_alike`'s) changes
    nothing: lines alike have one template, which reads each digit as `#`; the kernel reads it to make each
    kind's template once."""
    return [template(lines[i]) for i in indices]


def classed_alike(lines, numbers: list, holding: list, blind, asked, classes_of,
                  kinds: bool = True) -> tuple[list, list | None]:
    """Per line number of `numbers` (a scan's, beside each the triggers `holding` names), the class
    `classes_of(lines, triggers)` gives its kind's first line, asked of every kind's first line at once, in
    line order; and with `kinds`, per line number, the number of the first line of its kind (None for a line
    `numbers` does not name; without `kinds`, None).

    Lines the same byte for byte are of one kind; where `blind[triggers]` is true (`asked(triggers)`
    fills it), so are lines the same but for their digits, each read as `0`. A line's triggers are the
    scan's, which follow from its bytes: lines alike hold the same ones."""
    exact: dict[bytes, int] = {}
    zeroed: dict[bytes, int] = {}
    of = []  # per entry, the entry of its kind's first line
    asked_lines: list[bytes] = []
    asked_triggers: list[tuple] = []
    firsts: list[int | None] = [None] * len(lines)
    if len(holding) != len(numbers):
        raise ValueError("one tuple of triggers per line number")
    for entry, (number, triggers) in enumerate(zip(numbers, holding)):
        line = lines[number]
        known = exact.get(line)
        if known is None:
            flag = blind.get(triggers)
            if flag if flag is not None else asked(triggers):
                known = zeroed.setdefault(line.translate(_ZEROS), entry)
            else:
                known = entry
            exact[line] = known
            if known == entry:
                asked_lines.append(line)
                asked_triggers.append(triggers)
        of.append(known)
        firsts[number] = numbers[known]
    answers = classes_of(asked_lines, asked_triggers) if asked_lines else []
    if len(answers) != len(asked_lines):
        raise ValueError("classes_of must give one class per line asked")
    given = iter(answers)
    out: list = []
    for entry, known in enumerate(of):
        out.append(next(given) if known == entry else out[known])
    return out, firsts if kinds else None


def masked_paths(line: bytes) -> bytes:
    """`line` with the words of its paths masked (see the module's text); the line itself when that
    changes nothing."""
    masked = _path.sub(_masked, line)
    return line if masked == line else masked


def _masked(found) -> bytes:
    head, _, rest = found[1].partition(b"/")
    return head + b"/" + rest.translate(_LETTERS) + (found[2] or b"")


def tally(counts: dict, keys) -> None:
    """Count `keys` into `counts` (`counts[key] += 1` for each, from 0), keys first seen in the order they come."""
    _count_elements(counts, keys)


def by_number(numbers: list, classes: list, left_out: tuple) -> dict:
    """Per line number of `numbers` whose class (`classes`, in the same order) is none of `left_out`, its
    number and class, in `numbers`' order."""
    if len(classes) != len(numbers):
        raise ValueError("one class per entry")
    return {number: cls for number, cls in zip(numbers, classes) if cls is not None and cls not in left_out}


def places(keys: list, wanted) -> list[int]:
    """The indices of `keys` whose key `wanted` (a set) holds, ascending."""
    return list(compress(count(), map(wanted.__contains__, keys)))


def grouped(mapping: dict, labels: dict) -> dict:
    """`mapping`'s keys by the label `labels` gives their value (keys whose value has none are left out),
    each label's keys sorted: a stream's classed lines by their class's rank."""
    out: dict = {}
    for key, value in mapping.items():
        label = labels.get(value)
        if label is not None:
            out.setdefault(label, []).append(key)
    for keys in out.values():
        keys.sort()
    return out
