"""The order a view spends its budget in, judged by what lines say rather than by which tool printed them.

`yarp.view.salience` classes lines (failure, summary, location, warning, …);
`yarp.view.cap` spends the budget class by class. This module orders the
candidates inside a class so that a view generalizes to tools it was never
tuned on:

* **the output's own end** — the last lines of each stream usually say how the
  command ended (`1 file would fail to reformat`, `Found 3 errors`), so they
  are kept before anything else (`ends`);
* **diversity** — of many findings, the first of each kind (its `template`:
  the line with its location, quoted names and numbers masked) comes before
  the second of any, and a kind's findings in other files before more in the
  same file: two `F821 Undefined name` errors among 300 `F401` findings, or
  ten findings in ten files, are seen before the eleventh alike (`diverse`);
* **where a finding is** — an indented finding (`  3:10  error  …`) is shown
  with the heading it sits under (the file name line above its block),
  found by `heading`.

Everything here reads only the lines it is asked about: a view's cost must not
grow with the lines it leaves out.
"""

from __future__ import annotations

from _collections import _count_elements

#: Lines of each stream's end kept first, and the most bytes they may take.
END_LINES = 6
END_BYTES = 400
#: How far above an indented finding its heading is looked for.
HEADING_REACH = 200
#: Rare findings are looked for in texts up to this size (one expression over the text), among at
#: least `MIN_FINDINGS` lines that start with a location; a kind is rare at `RARE_SHARE` percent or less.
RARE_BYTES = 256 << 10
MIN_FINDINGS = 8
RARE_SHARE = 3
#: Rare findings are looked for when at least this percent of a sample of lines start with a location.
FINDING_SHARE = 10
#: A text is repetitive when its most common first word starts `REPETITIVE_SHARE` percent of its lines
#: (at least `MIN_REPETITIVE` lines); then at most `MAX_RARE_LINES` lines whose first word occurs at
#: most twice are findings.
REPETITIVE_SHARE = 40
MIN_REPETITIVE = 40
MAX_RARE_LINES = 12
#: Bytes of a line a template reads.
TEMPLATE_BYTES = 160
#: A text is a table of values when `VALUE_SHARE` percent of a sample of its lines are a number and one
#: name (`du`, `wc -l`, `sort -h`; not a profiler's rows of numbers, nor a query's rows after their id);
#: then the lines of its `MAX_LARGEST` largest values are findings.
VALUE_SHARE = 80
MAX_LARGEST = 3
#: What a size's unit multiplies (`48M`, `1.5G`, `900K`, `12KiB`).
_UNITS = {b"": 1, b"K": 1 << 10, b"M": 1 << 20, b"G": 1 << 30, b"T": 1 << 40, b"P": 1 << 50}
_value = None
_DIGITS = bytes.maketrans(b"0123456789", b"##########")


def ends(lines, final_newline: bool, is_marker, budget: int) -> list[int]:
    """The last `END_LINES` non-blank lines that are not markers, within `END_BYTES` and an eighth of
    the view's `budget`, last first."""
    out: list[int] = []
    used = 0
    most = min(END_BYTES, budget // 8)
    index = len(lines) - 1
    while index >= 0 and len(out) < END_LINES and len(lines) - index <= 16:
        line = lines[index]
        if line.strip(b" \t\r") and not is_marker(index, line):
            used += len(line) + 1
            if used > most and out:
                break
            out.append(index)
        index -= 1
    return out


def template(line: bytes, location, quoted) -> bytes:
    """What kind of line this is: its words with the leading location, quoted names and numbers masked.

    `location` is the salience data's location pattern (`path:line:col:` at
    the start), `quoted` its pattern for a quoted name. Two findings of one
    check in different places have the same template; an error and a warning,
    or two different checks, do not."""
    start = location.match(line).end()
    text = quoted.sub(b"Q", line[start:start + TEMPLATE_BYTES].translate(_DIGITS))
    words = text.split()
    # The first words say what it is; the last often names the check (`no-undef`, `(no-member)`).
    return b" ".join(words[:3] + words[-1:]) if len(words) > 4 else b" ".join(words)


def place(line: bytes, location) -> bytes:
    """The file a line names at its start (`src/a.py:3:1: …`), or b"" when it names none."""
    found = location.match(line)
    head = found.group(1) if found is not None and found.lastindex else None
    return head.split(b":", 1)[0] if head else b""


def kind(stream, index: int, sal) -> tuple[bytes, bytes]:
    """A finding's kind and place: the `template` of line `index` and the file it names or sits under
    (`sal` is the classifier, whose patterns read them)."""
    line = stream.lines[index]
    where = place(line, sal.location)
    if not where:
        above = heading(stream, index)
        where = b"" if above is None else stream.lines[above]
    return template(line, sal.location, sal.quoted), where


def diverse(items: list, keys: list[tuple[bytes, bytes]]) -> list:
    """`items` reordered by their `keys` ((kind, place) each): the first and the last as they were, then
    the first of each kind, then the first of each kind in each further place, then the rest, each pass
    in output order."""
    if len(items) < 3:
        return list(items)
    order = [0, len(items) - 1]
    taken = set(order)
    seen_kinds = {keys[0][0], keys[-1][0]}
    seen_places = {keys[0], keys[-1]}
    for number, key in enumerate(keys):
        if number not in taken and key[0] not in seen_kinds:
            seen_kinds.add(key[0])
            seen_places.add(key)
            order.append(number)
            taken.add(number)
    for number, key in enumerate(keys):
        if number not in taken and key not in seen_places:
            seen_places.add(key)
            order.append(number)
            taken.add(number)
    order.extend(number for number in range(len(items)) if number not in taken)
    return [items[number] for number in order]


def heading(stream, index: int) -> int | None:
    """The heading a finding sits under, within `HEADING_REACH` lines above it: for an indented line, the
    nearest line at the left margin; for a line at the margin, the nearest banner (`*** Module x`,
    `=== file ===`) or bare file name (`src/a.js`) above it. None when there is none."""
    known = stream.headings.get(index, -2)
    if known != -2:
        return known
    lines = stream.lines
    indented = lines[index][:1] in (b" ", b"\t")
    found = None
    memo = stream.headings
    for above in range(index - 1, max(-1, index - HEADING_REACH), -1):
        text = lines[above]
        if not text.strip() or stream.markers.is_marker(above, text):
            continue
        margin = text[:1] not in (b" ", b"\t")
        if (indented and margin) or (not indented and is_banner(text)):
            found = above
            break
        if above in memo and margin != indented:
            found = memo[above]  # a line of the same indent above, whose heading is known: the same one
            break
    stream.headings[index] = found
    return found


def is_banner(line: bytes) -> bool:
    """Whether a line at the margin heads what follows: a run of `*`, `=`, `#` or `-` with words
    (`************* Module inventory.pricing`), a scope line (`src/a.c: In function ‘f’:`,
    `In script.sh line 3:`), or a lone file name (`src/widgets/a.js`)."""
    head = line[:3]
    if head in (b"***", b"===", b"###", b"---", b">>>") and line.strip(b"*=#-> \t"):
        return True
    if line.rstrip().endswith(b":") and (b": In " in line or line.startswith(b"In ")):
        return True  # `src/a.c: In function ‘f’:`, `In script.sh line 3:`
    words = line.split()
    return len(words) == 1 and b"." in words[0][-6:] and (b"/" in words[0] or line.endswith(b":")) and (
        not words[0][:1].isdigit())


def rare_findings(body: bytes, lines: list[bytes], classes: dict, finding) -> list[int]:
    """The lines of `body` (no more than `RARE_BYTES`) that start with a location (`path:line[:col]:`)
    and whose kind (the word after the location: `F821`, `error`, `E1101:`) is rare among such lines,
    not classed already: the findings a long list of one common kind would hide. `finding` is the
    salience data's expression for such a line, its kind the first group; `lines` are `body`'s lines,
    of which a sample says first whether enough of them start with a location to look further (an
    expression anchored at every line start costs a step per byte)."""
    if len(body) > RARE_BYTES or len(lines) < MIN_FINDINGS:
        return []
    sample = lines[::max(1, len(lines) // 256)]
    if sum(1 for line in sample if finding.match(line)) * 100 < len(sample) * FINDING_SHARE:
        return []
    found = [(match.start(), match.group(1)) for match in finding.finditer(body)]
    if len(found) < MIN_FINDINGS:
        return []
    counts: dict[bytes, int] = {}
    for _, word in found:
        counts[word] = counts.get(word, 0) + 1
    if len(counts) < 2:
        return []
    rare = {word for word, count in counts.items() if count * 100 <= len(found) * RARE_SHARE or count <= 2}
    if len(rare) == len(counts):
        return []  # every kind is rare: nothing stands out
    out, line, previous = [], 0, 0
    for offset, word in found:
        line += body.count(b"\n", previous, offset)
        previous = offset
        if word in rare and line not in classes:
            out.append(line)
    return out


def rare_lines(body: bytes, lines: list[bytes], classes: dict, first_word) -> list[int]:
    """In a repetitive text of no more than `RARE_BYTES` (most lines start alike: `Auto-merging`,
    `modified:`, `PASSED`), the few lines whose first word, digits aside, occurs at most twice and
    that are not classed already: what a long run of one kind of line would hide. None when there are
    more than `MAX_RARE_LINES` such lines (the text is not repetitive where they are). `lines` are
    `body`'s lines; `first_word` is the salience data's expression for a line's first word, which
    matches once on every line."""
    if len(body) > RARE_BYTES or len(lines) < MIN_REPETITIVE:
        return []
    # A sample says cheaply whether the text repeats one kind of worded line at all.
    sample = [line.split(None, 1)[:1] for line in lines[::max(1, len(lines) // 256)]]
    kinds: dict[bytes, int] = {}
    _count_elements(kinds, [word[0].translate(None, b"0123456789") if word else b"" for word in sample])
    top, share = max(kinds.items(), key=lambda item: item[1])
    if not top or share * 100 < len(sample) * REPETITIVE_SHARE:
        return []
    words = first_word.findall(body.translate(None, b"0123456789"))  # one per line, in order
    if len(words) < MIN_REPETITIVE:
        return []
    counts: dict[bytes, int] = {}
    _count_elements(counts, words)  # C speed: a Python loop over every line would cost the view its budget
    if max(counts.values()) * 100 < len(words) * REPETITIVE_SHARE:
        return []
    rare = [word for word, count in counts.items() if word and count <= 2]
    if not rare or len(rare) > MAX_RARE_LINES:
        return []
    out = []
    for word in rare:
        line = words.index(word)
        out.append(line)
        if counts[word] == 2:
            out.append(words.index(word, line + 1))
    return sorted(line for line in out if line not in classes)[:MAX_RARE_LINES]


def largest_values(body: bytes, lines: list[bytes], classes: dict) -> list[int]:
    """In a table of values of no more than `RARE_BYTES` (most lines a number and one name, at least
    `MIN_REPETITIVE` lines), the lines of its `MAX_LARGEST` largest values that are not classed
    already, a size read with its unit (`48M` above `900K`): the entry a person lists sizes or
    counts to find, wherever the table's order put it."""
    global _value
    if len(body) > RARE_BYTES or len(lines) < MIN_REPETITIVE:
        return []
    if _value is None:
        import re

        _value = re.compile(rb"(?m)^[ \t]*(\d{1,18}(?:\.\d{1,6})?)([KMGTP]?)(?:i?B)?[ \t]+[^ \t\d\n][^ \t\n]*[ \t\r]*$")
    sample = lines[::max(1, len(lines) // 256)]
    if sum(_value.match(line) is not None for line in sample) * 100 < len(sample) * VALUE_SHARE:
        return []
    import heapq

    top = heapq.nlargest(MAX_LARGEST, ((float(m[1]) * _UNITS[m[2]], m.start()) for m in _value.finditer(body)))
    numbers = sorted(body.count(b"\n", 0, offset) for _, offset in top)
    return [number for number in numbers if number not in classes]

