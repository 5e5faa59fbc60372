"""Which lines stand out from the text around them, whatever tool printed them.

`yarp.view.streams` classes lines by the salience data (`yarp.view.salience`);
a line that says nothing alarming can still be the one a reader needs because
it is unlike the lines around it. This module finds those lines in a text of no
more than `RARE_BYTES`, reading it in C-speed passes (one expression over the
text, `yarp.view.templates.tally`) after a sample says the text has the shape at all:

* **rare findings** — among many `path:line: KIND` lines, those of a rare kind:
  two `F821` among 300 `F401` (`rare_findings`);
* **rare lines** — in repetitive text, a line whose first word occurs at most
  twice: `CONFLICT` among `Auto-merging`, `checksum mismatch` among `case 9.1
  ok` behind ctest's `10:` (`rare_lines`);
* **rare shapes** — in a table of rows of one shape, a row of another: the one
  deleted file of a `diff --stat` (`rare_shapes`);
* **rare values** — a field that recurs with one value but says another once:
  `Contains null values: True` among fifteen `False`, or the word most lines end
  with (a status) but a few: `f0517.xml - invalid` among 3,000 `- valid`
  (`rare_values`);
* **rare columns** — in a table of rows of one number of fields, a row whose
  field that is one value on every other row says another: the one `500`
  among 600 `200` statuses of an access log (`rare_columns`, up to `LONG_BYTES`);
* **largest values** — in a table of sizes or counts, its largest entries
  (`largest_values`).

Rare lines, shapes and values are shown alone (class `rare`); rare findings
keep their block, and so do rare shapes among salient lines, as standouts. None of
them is looked for past `RARE_BYTES` (rare values and columns, past `LONG_BYTES`; rare
shapes, past `SHAPE_BYTES`): a view's cost must not grow with the size of what it leaves out.
"""

from __future__ import annotations

from itertools import compress, groupby, pairwise, repeat
from operator import ge, itemgetter, sub

from yarp.view.lines import line_counts, lines_in
from yarp.view.shapes import line_shapes, rows_breaking
from yarp.view.templates import places, tally

#: Rare findings are looked for in texts up to this size (one expression over the text), among at
#: least `MIN_FINDINGS` lines that start with a location; a kind is rare at `RARE_SHARE` percent or less.
RARE_BYTES = 256 << 10
MIN_FINDINGS = 8
RARE_SHARE = 3
#: Rare field values and rare columns are looked for in texts up to this size, past `RARE_BYTES`: a long
#: log's or capture's one odd line is seldom anything else's. Fields are read only where a sample holds
#: them, once per line alike but for digits (zip's 6,400 `adding:` lines, 4.6 -> 1.4 ms); a compiled pass
#: reads a table's rows that break a column's rule (about 1 ms a MiB: an access log's one `500` in 300 KB).
LONG_BYTES = 512 << 10
#: Rare shapes are looked for in texts up to this size: the compiled kernel reads a line's shape a byte at
#: a time, once per line alike but for digits (about 1 ms a MiB with the counting). Past 512 KiB they
#: find a linter's two `undefined name` among 10,000 style findings and an editor's two `no-undef` among
#: 8,000, where nothing else looks; columns too would take a 1 MB log's view past 5 ms.
SHAPE_BYTES = 1 << 20
#: Rare findings are looked for when at least this percent of a sample of lines start with a location.
FINDING_SHARE = 10
#: A text is repetitive when its most common first word starts `REPETITIVE_SHARE` percent of its lines
#: (at least `MIN_REPETITIVE` lines); then at most `MAX_RARE_LINES` lines whose first word occurs at
#: most twice are findings.
REPETITIVE_SHARE = 40
MIN_REPETITIVE = 40
#: A text is repetitive too when nearly every line's first word recurs: the lines whose first word occurs
#: at most twice (those inside the run of the commonest word, when more) are `MAX_RARE_LINES` or fewer
#: and `SELDOM_SHARE` percent of its lines or less (records of many alike lines: a linter's `rule:
#: message` over `path:line`, a recursive diff of 400 files); a sample says so first when
#: `SAMPLE_ONCE_SHARE` percent of its lines or less have a first word it holds once.
SELDOM_SHARE = 1
SAMPLE_ONCE_SHARE = 3
#: So is a text whose `FEW_KINDS` commonest first words start `FEW_KINDS_SHARE` percent of its lines, however
#: many of the rest are seldom: records of a few kinds of lines (djlint's `H006 …` per page under its name).
FEW_KINDS = 6
FEW_KINDS_SHARE = 95
MAX_RARE_LINES = 12
#: Where the most common first word starts `DOMINANT_SHARE` percent of the lines, a first word on one
#: line in a hundred is rare too.
DOMINANT_SHARE = 95
#: How far a rare line's neighbours of other kinds than the repeated one come with it, each way.
RARE_REACH = 4
#: Shapes are coarser than first words: at most this many lines of rare shapes are findings.
MAX_RARE_SHAPES = 4
#: A field (`Contains null values:  False`) whose name recurs at least `MIN_FIELDS` times with one value
#: in at least `FIELD_SHARE` percent of them: its other values are rare lines. Looked for when at least
#: `FIELDS_SHARE` percent of a sample of lines are fields.
MIN_FIELDS = 5
FIELD_SHARE = 80
FIELDS_SHARE = 20
#: A text is a table of values when `VALUE_SHARE` percent of a sample of its lines are a number and one
#: name (`du`, `wc -l`, `sort -h`; not a profiler's rows of numbers, nor a query's rows after their id);
#: then the lines of its `MAX_LARGEST` largest values are findings.
VALUE_SHARE = 80
MAX_LARGEST = 3
#: A text is a table of fields when `TABLE_SHARE` percent of a sample of its lines have one number of
#: whitespace-separated fields (`rare_columns`).
TABLE_SHARE = 80
#: A row has at least `MIN_FIELDS_A_ROW` fields: a name and its status (`test_x PASSED [ 5%]`) are
#: not a table, and other rules read them.
MIN_FIELDS_A_ROW = 4
#: A field is the rule of its column when one value holds `COLUMN_SHARE` percent of its rows (over half:
#: `_ruled` finds it as the middle value).
COLUMN_SHARE = 95
#: What a size's unit multiplies (`48M`, `1.5G`, `900K`, `12KiB`).
_UNITS = {b"": 1, b"K": 1 << 10, b"M": 1 << 20, b"G": 1 << 30, b"T": 1 << 40, b"P": 1 << 50}
_value = None
#: Per first-word expression, the one that reads a line's first two words (`rare_lines`).
_two_words: dict = {}
_field = _field_line = _field_line_lf = None
#: A named field and its value (`rare_values`), its digits left out.
FIELD = rb"(?m)^[ \t]*([A-Za-z][\w .()/-]{0,40}?):[ \t]+([^ \t\r\n][^\r\n]{0,80})"
_ending = None


def rare_findings(body: bytes, lines: list[bytes], classes: dict, finding) -> tuple[list[int], list[int]]:
    """The lines of `body` (no more than `RARE_BYTES`) that start with a location (`path:line[:col]:`,
    indented or not) and whose kind (the check named in brackets at the line's end, `(no-undef)`,
    else the word after the location: `F821`, `error`, `E1101:`) is rare among such lines,
    not classed already: the findings a long list of one common kind would hide; and, classed or not,
    those whose whole message is rare among findings that repeat theirs (`_rare_messages`), the
    standouts among findings of one kind. `finding` is the salience data's expression for such a
    line, its word the first group and its check the second;
    `lines` are `body`'s lines, of which a sample says first whether enough of them start with a
    location to look further (an expression anchored at every line start costs a step per byte)."""
    if len(body) > RARE_BYTES or len(lines) < MIN_FINDINGS:
        return [], []
    sample = lines[::max(1, len(lines) // 256)]
    if sum(1 for line in sample if finding.match(line)) * 100 < len(sample) * FINDING_SHARE:
        return [], []
    # A finding's kind is the check its line ends with (`(no-undef)`, `[arg-type]`), else the word after
    # its location (`F821`, `error`).
    found = [(match.start(), match[2] or match[1], match.start(1)) for match in finding.finditer(body)]
    if len(found) < MIN_FINDINGS:
        return [], []
    counts: dict[bytes, int] = {}
    tally(counts, [word for _, word, _ in found])
    rare = {word for word, count in counts.items() if count * 100 <= len(found) * RARE_SHARE or count <= 2}
    if len(rare) == len(counts):
        rare = set()  # every kind is rare (or there is one kind): no kind stands out
    messages = _rare_messages(body, found, counts)
    line_of = _line_numbers(body, sorted({offset for offset, word, _ in found if word in rare} | set(messages)))
    findings = [line_of[offset] for offset, word, _ in found if word in rare and line_of[offset] not in classes]
    return findings, [line_of[offset] for offset in messages]


def _rare_messages(body: bytes, found: list[tuple[int, bytes, int]], kinds: dict[bytes, int]) -> list[int]:
    """The offsets of the few findings (at most `MAX_RARE_SHAPES`) whose message, all after the location,
    is said at most twice where `FIELD_SHARE` percent of the findings of their kind repeat a message
    more often: the one `` `teh` should be `the` `` among 360 findings of three misspellings, all of
    one kind (`error`). Three errors among repeated warnings are told apart by their kind already.
    `kinds` counts the findings of each kind."""
    # A count or a name's number (`contract 'Vault29'`) is not what a message says, nor is the padding
    # that aligns a file's columns.
    messages = [b" ".join(body[start:body.find(b"\n", start)].translate(None, b"0123456789").split())
                for _, _, start in found]
    counts: dict[bytes, int] = {}
    tally(counts, messages)
    rare = [(offset, word) for (offset, word, _), message in zip(found, messages) if counts[message] <= 2]
    if not rare or len(rare) > MAX_RARE_SHAPES:
        return []
    rare_kinds: dict[bytes, int] = {}
    tally(rare_kinds, [word for _, word in rare])
    return [offset for offset, word in rare if (kinds[word] - rare_kinds[word]) * 100 >= kinds[word] * FIELD_SHARE]


def _line_numbers(body: bytes, offsets: list[int]) -> dict[int, int]:
    """The number of the line each of the sorted `offsets` of `body` falls on."""
    out, line, previous = {}, 0, 0
    for offset in offsets:
        line += body.count(b"\n", previous, offset)
        previous = offset
        out[offset] = line
    return out


def rare_lines(body: bytes, lines: list[bytes], classes: dict, first_word) -> list[int]:
    """In a repetitive text of no more than `RARE_BYTES` (most lines start alike: `Auto-merging`,
    `modified:`, `PASSED`), the few lines whose first word, digits and words without a letter aside
    (`10: checksum mismatch` among `10: case 9.1 ok`), occurs at most twice and that are not classed
    already: what a long run of one kind of line would hide (`_rare_keys`). `lines` are `body`'s
    lines; `first_word` is the salience data's expression for a line's first word, which matches
    once on every line."""
    if len(body) > RARE_BYTES or len(lines) < MIN_REPETITIVE:
        return []
    # A sample says cheaply whether the text repeats one kind of worded line at all.
    picked = [line.translate(None, b"0123456789") for line in lines[::max(1, len(lines) // 256)]]
    if not _repetitive([first_word.match(line)[1] for line in picked]):
        return []
    text = body.translate(None, b"0123456789")
    keys = first_word.findall(text)  # one per line, in order
    found = _rare_keys(keys, classes)
    if _inside(found, keys):
        return found
    # None by first words inside the repetition: a line's first two words may say it (prospector's two
    # `pylint: undefined-variable` among 330 `pylint: unused-import` and `pylint: bare-except`).
    two_words = _two_words.get(first_word.pattern)
    if two_words is None:
        import re

        # The data's first-word expression (its one group last), the group widened to the word after it.
        two_words = re.compile(first_word.pattern[:-1] + rb"(?:[ \t]+[^ \t\n]{0,32})?)")
        _two_words[first_word.pattern] = two_words
    if not _repetitive([two_words.match(line)[1] for line in picked]):
        return found  # the sample's first two words do not repeat (`pytest -v`'s test names): no pass over them all
    return sorted(set(found) | set(_rare_keys(two_words.findall(text), classes)))


def _inside(found: list[int], keys: list[bytes]) -> bool:
    """Whether one of the lines `found` is inside the repetition of the commonest key (`_repetition`), not
    in a preamble or an epilogue."""
    if not found:
        return False
    counts: dict[bytes, int] = {}
    tally(counts, keys)
    counts.pop(b"", None)
    first, last = _repetition(keys, max(counts, key=counts.__getitem__))
    return any(first < line < last for line in found)


def rare_shapes(body: bytes, lines: list[bytes], known=(), firsts: list | None = None) -> list[int]:
    """In a text of no more than `SHAPE_BYTES` whose lines mostly have one shape (a run of word
    characters as one `w` unless a short word of capitals, a run of one symbol as one: ` src/a.py |
    12 ++++--` is ` w/w.w | w +-`; `yarp.view.shapes.line_shapes`), the few lines of a shape that
    occurs at most twice, classed or not: the one file deleted outright (` w/w.w | w -`) or
    the one binary file among three hundred rows of a `diff --stat`, the one `| FAIL |` test, the
    two `totl is not defined.  no-undef` among 8,000 errors of a style checker.

    Lines in `known` (rare by their first word already, `rare_lines`) are neither counted nor given:
    shapes are coarser, and pwck's one `user 'svc211': no group 4242` among 240 `user 'svcN':
    directory … does not exist` stands out by its shape alone, beside rare first words that do by theirs.
    `firsts` (`Stream.firsts`) names the lines of a kind, which share their first's shape."""
    if len(body) > SHAPE_BYTES or len(lines) < MIN_REPETITIVE:
        return []
    if not _repetitive(line_shapes(b"\n".join(lines[::max(1, len(lines) // 256)]))):
        return []
    return _rare_keys(line_shapes(body, firsts), {}, MAX_RARE_SHAPES, set(known))


def _repetitive(sample: list[bytes]) -> bool:
    """Whether one non-empty key starts `REPETITIVE_SHARE` percent of a sample's lines that have a key
    (blank lines between records are not lines of a kind), `SAMPLE_ONCE_SHARE` percent of them or
    fewer have a key the sample holds once, or its few commonest keys start nearly all (`_few_kinds`)."""
    kinds: dict[bytes, int] = {}
    tally(kinds, sample)
    keyed = len(sample) - kinds.pop(b"", 0)
    if not kinds:
        return False
    once = sum(1 for count in kinds.values() if count == 1)
    return _one_kind(kinds, keyed) or once * 100 <= keyed * SAMPLE_ONCE_SHARE or _few_kinds(kinds, keyed)


def _one_kind(counts: dict[bytes, int], keyed: int) -> bool:
    """Whether the commonest key of `counts` starts `REPETITIVE_SHARE` percent of `keyed` lines."""
    return max(counts.values()) * 100 >= keyed * REPETITIVE_SHARE


def _few_kinds(counts: dict[bytes, int], keyed: int) -> bool:
    """Whether the `FEW_KINDS` commonest keys of `counts` start `FEW_KINDS_SHARE` percent of `keyed` lines."""
    return sum(sorted(counts.values(), reverse=True)[:FEW_KINDS]) * 100 >= keyed * FEW_KINDS_SHARE


def _rare_keys(keys: list[bytes], classes: dict, most: int = MAX_RARE_LINES, known=frozenset()) -> list[int]:
    """The lines (`keys` holds one key per line, in order) whose non-empty key occurs at most twice, when
    one key holds `REPETITIVE_SHARE` percent of at least `MIN_REPETITIVE` lines, or nearly every key
    recurs (`SELDOM_SHARE`), and not classed already nor `known`. None when there are more than `most`
    of them, even inside the repetition (the text is not repetitive where they are)."""
    if len(keys) < MIN_REPETITIVE:
        return []
    counts: dict[bytes, int] = {}
    tally(counts, keys)  # C speed: a Python loop over every line would cost the view its budget
    keyed = len(keys) - counts.pop(b"", 0)
    if not counts:
        return []
    top = max(counts, key=counts.__getitem__)
    seldom = _lines_seen(keys, counts, 1, 2, known)
    if _one_kind(counts, keyed):
        out = _within(seldom, keys, top, most)
        common = {top}
    else:
        # Every kind but theirs recurs, or a few kinds make nearly every line: the seldom lines inside the
        # run of the commonest kind, a preamble's and an epilogue's aside, are rare when they are few.
        out, common = _within(seldom, keys, top, most), {key for key, count in counts.items() if count > 2}
        if out is None or len(out) * 100 > keyed * SELDOM_SHARE and not _few_kinds(counts, keyed):
            return []
    if out is not None and counts[top] * 100 >= keyed * DOMINANT_SHARE:
        # Where one kind is nearly every line, a kind on one line in a hundred is rare too when the
        # lines stay few (three `Formatted` among 397 `Unchanged`).
        more = _within(out + _lines_seen(keys, counts, 3, keyed // 100, known), keys, top, most)
        out = more if more is not None else out
    if not out:
        return []
    # With the lines next to each that are not of the repeated kind either: the section a rare line
    # starts (`both modified:` lines beside `deleted by them:` among three hundred `modified:`); and
    # the rest of the record a rare line starts, a blank line ending it within `RARE_REACH` lines
    # (ansible-lint's `no-changed-when: …` over its `playbooks/deploy-17.yml:41 Task/Handler: …`).
    near = set(out)
    for line in out:
        for step in (-1, 1):
            at = line + step
            while 0 <= at < len(keys) and abs(at - line) <= RARE_REACH and keys[at] and keys[at] not in common:
                near.add(at)
                at += step
        if line == 0 or not keys[line - 1]:
            near.update(_record_after(lambda at: not keys[at], line, len(keys)))
    return sorted(line for line in near if line not in classes)


def _record_after(blank, line: int, count: int) -> range:
    """The lines after `line` up to the blank line (`blank(index)`, of `count` lines) that ends its record,
    when one does within `RARE_REACH` lines; else none."""
    for at in range(line + 1, min(count, line + RARE_REACH + 2)):
        if blank(at):
            return range(line + 1, at)
    return range(0)


def _lines_seen(keys: list[bytes], counts: dict[bytes, int], fewest: int, most: int, known=frozenset()) -> list[int]:
    """The lines whose non-empty key occurs `fewest` to `most` times, those in `known` aside, in line order:
    one pass at C speed (a search from the top per key cost lint-openapi's 27 seldom shapes a millisecond)."""
    wanted = {key for key, count in counts.items() if key and fewest <= count <= most}
    if not wanted:
        return []
    return [line for line in places(keys, wanted) if line not in known]


def _within(out: list[int], keys: list[bytes], top: bytes, most: int) -> list[int] | None:
    """`out` when it holds at most `most` lines, else those inside the repetition of `top` (a
    preamble's and an epilogue's lines aside: rare too, and the view's head and tail show them);
    None when those are still too many (the text is not repetitive where they are)."""
    if len(out) > most:
        first, last = _repetition(keys, top)
        out = [line for line in out if first < line < last]
    return None if len(out) > most else out


def rare_columns(body: bytes, lines: list[bytes], classes: dict) -> list[int]:
    """In a table of no more than `LONG_BYTES` (`TABLE_SHARE` percent of a sample of its lines split
    into one same number of fields, at least `MIN_FIELDS_A_ROW`), the rows (at most `MAX_RARE_SHAPES`)
    where a field that holds one value on `COLUMN_SHARE` percent of the rows holds one seen at most
    twice (or on one row in a hundred), not classed already: the one `500` among 600 `200` statuses
    of an access log, the three `no` among 1,900 `yes` of a login report.

    The sample says which columns may have a rule and its value; one compiled pass (`rows_breaking`)
    counts the rows that keep every rule and the rows that break each, and gives the rows that break one,
    which alone are split, and only when a column keeps its rule: a value other than its column's rule is
    counted among them as among all rows."""
    if len(body) > LONG_BYTES or len(lines) < MIN_REPETITIVE:
        return []
    sample = [line.split() for line in lines[::max(1, len(lines) // 256)]]
    widths: dict[int, int] = {}
    tally(widths, map(len, sample))
    width, count = max(widths.items(), key=lambda item: item[1])
    if width < MIN_FIELDS_A_ROW or count * 100 < len(sample) * TABLE_SHARE:
        return []
    rows = [fields for fields in sample if len(fields) == width]
    rule = [(position, value) for position, value in enumerate(map(_ruled, zip(*rows))) if value is not None]
    if not rule:
        return []
    kept, numbers, broken = rows_breaking(body, width, tuple(rule))
    table = kept + len(numbers)  # the rows of `width` fields
    # A time or a count that the sample happened to see once (or on every row it read: a plan that cycles
    # through four values, read every twentieth row) is no column's rule: the rows breaking only it are
    # not split (a second pass gives those breaking the others; a row's values in them are the same).
    ruled = [pair for pair, count in zip(rule, broken) if (table - count) * 100 >= table * COLUMN_SHARE]
    if not ruled:
        return []
    if len(ruled) < len(rule):
        rule = ruled
        numbers = rows_breaking(body, width, tuple(rule))[1]
    breaking = list(map(bytes.split, map(lines.__getitem__, numbers)))
    seldom = max(2, table // 100)  # a value is rare at most twice, or on one row in a hundred
    rare: set[int] = set()
    for position, value in rule:
        column = list(map(itemgetter(position), breaking))
        counts: dict[bytes, int] = {}
        tally(counts, filter(value.__ne__, column))
        seldom_values = {found for found, count in counts.items() if count <= seldom}
        if sum(map(counts.__getitem__, seldom_values)) > MAX_RARE_SHAPES:
            return []  # this column's rare rows alone are too many
        rare.update(compress(numbers, map(seldom_values.__contains__, column)))
    if not rare or len(rare) > MAX_RARE_SHAPES:
        return []
    return sorted(number for number in rare if number not in classes)


def _ruled(column: tuple[bytes, ...]) -> bytes | None:
    """The value `COLUMN_SHARE` percent of a column's rows hold, None when none does. Such a value holds
    more than half of them, so once they are sorted it is the middle one: sorted and counted at C speed,
    where counting every value in a mapping cost a thousand instructions a row (2,000 records' ids)."""
    middle = sorted(column)[len(column) // 2]
    return middle if column.count(middle) * 100 >= len(column) * COLUMN_SHARE else None


def _repetition(keys: list[bytes], top: bytes) -> tuple[int, int]:
    """Where the repetition of `top` starts and ends: its first and last line with another of its kind
    within `RARE_REACH` lines (a preamble's one `Checking we can access the last sector` is not where
    600 `Checking file` lines begin; a test's line between separators is)."""
    # The common case, the repeated kind's first two lines and its last two close together, asked by searches.
    first, backwards = keys.index(top), keys[::-1]
    last = backwards.index(top)
    if _has(keys, top, first + 1, first + 1 + RARE_REACH) and _has(backwards, top, last + 1, last + 1 + RARE_REACH):
        return first, len(keys) - 1 - last
    # Else every line of it, and where the gap to the next is within reach, at C speed: a pretty-printed log's
    # records, each of five lines or more, hold one line of the commonest kind (26,000 lines: 2 ms in Python).
    spots = places(keys, {top})
    close = list(map(ge, repeat(RARE_REACH), map(sub, spots[1:], spots)))
    starts = list(compress(spots, close))
    if not starts:
        return spots[0], spots[-1]
    return starts[0], list(compress(spots[1:], close))[-1]


def _has(keys: list[bytes], key: bytes, start: int, end: int) -> bool:
    """Whether `keys[start:end]` holds `key`."""
    try:
        keys.index(key, start, end)
    except ValueError:
        return False
    return True


def _run_bounds(spots: list[int], near) -> tuple[int, int]:
    """The first and the last of the ascending `spots` that have another next to them (`near(a, b)` for
    neighbours a < b); the first and the last spot when none does."""
    first = next((a for a, b in pairwise(spots) if near(a, b)), None)
    if first is None:
        return spots[0], spots[-1]
    return first, next(b for b, a in pairwise(spots[::-1]) if near(a, b))


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



def rare_values(body: bytes, lines: list[bytes], classes: dict) -> list[int]:
    """In a text of no more than `LONG_BYTES` made much of named fields (`Name:  value`, digits aside),
    the lines where a field that recurs says what it says nowhere else: the one column whose
    `Contains null values` is `True` among fifteen `False`, the one `Status: Failed` among `Running`,
    or the few values said once or twice where the others recur (`SELDOM_SHARE`; at most
    `MAX_RARE_LINES` in all), each with the rest of its record; and the lines ending in a rare word
    where most end in one (`_rare_endings`). None classed already."""
    global _field, _field_line, _field_line_lf
    if len(body) > LONG_BYTES or len(lines) < MIN_FINDINGS:
        return []
    if _field is None:
        import re

        # Whether a line holds a field: its value's first byte says (the rest, `{0,80}` bytes, may be none),
        # and reading up to 80 more through a set cost a sample of 288 lines 2 M instructions.
        _field = re.compile(FIELD.removesuffix(rb"[^\r\n]{0,80})") + rb")")
        _field_line = re.compile(rb"(?m)^(" + FIELD.removeprefix(b"(?m)^") + rb"[^\n]*)")
        # The same for a text holding no b"\r", where a value's `[^\r\n]` is `[^\n]`: one byte's test that
        # `re` runs in a tight loop, not a set's: 2,000 records' values, 13.8 M instructions → 6.3 M.
        _field_line_lf = re.compile(_field_line.pattern.replace(rb"\r\n", rb"\n"))
    sample = lines[::max(1, len(lines) // 256)]
    if sum(_field.match(line) is not None for line in sample) * 100 < len(sample) * FIELDS_SHARE:
        return _rare_endings(body, lines, classes)
    # A count or a size is not what a field says; lines the same once their digits are left out say the
    # same field, so each such line is matched once (nine in ten lines of a long log are another's).
    digitless = body.translate(None, b"0123456789")
    alike = line_counts(digitless)  # each distinct line made once
    # Every line matched at once, as (line, field, value) (a field is read within its line), and grouped by
    # field, each field's lines in order.
    joined = b"\n".join(alike)
    matched = sorted((_field_line if b"\r" in joined else _field_line_lf).findall(joined), key=itemgetter(1))
    rare: set[bytes] = set()
    lines_rare = 0
    for found in map(list, map(itemgetter(1), groupby(matched, itemgetter(1)))):
        distinct = len(set(map(itemgetter(2), found)))
        # A field of more values than either rule allows on as many lines as the text has (its lines say it
        # once each at most) is not counted: 2,000 ids, each line hashed to find its count.
        if distinct < 2 or _never_rare(distinct, len(lines)):
            continue
        total = sum(map(alike.__getitem__, map(itemgetter(0), found)))
        if total < MIN_FIELDS or _never_rare(distinct, total):
            continue
        values: dict[bytes, list[bytes]] = {}
        for text, _, value in found:
            values.setdefault(value, []).append(text)
        if any(b"/" in value for value in values):
            continue  # a field naming a place (`Location: src/a.py:3`) says where, not what
        said = {value: sum(map(alike.__getitem__, saying)) for value, saying in values.items()}
        top = max(said, key=said.__getitem__)
        if said[top] * 100 >= total * FIELD_SHARE:
            rare.update(text for value, saying in values.items() if value != top for text in saying)
            lines_rare += total - said[top]
            continue
        # Values that each recur, and a few said once or twice: lint-openapi's `Rule : invalid-ref` among
        # 1,500 findings of twenty rules, fifteen of which repeat.
        seldom = [value for value, count in said.items() if count <= 2]
        if sum(map(said.__getitem__, seldom)) * 100 <= total * SELDOM_SHARE:
            rare.update(text for value in seldom for text in values[value])
            lines_rare += sum(map(said.__getitem__, seldom))
    numbers = [] if not rare or lines_rare > MAX_RARE_LINES else lines_in(digitless, rare)
    for number in list(numbers):
        # With the rest of its record: the finding's `Path :` under its rare `Rule :`.
        numbers.extend(_record_after(lambda at: not lines[at].strip(), number, len(lines)))
    return sorted({number for number in numbers if number not in classes} | set(_rare_endings(body, lines, classes)))


def _never_rare(distinct: int, total: int) -> bool:
    """Whether a field of `distinct` values on `total` lines can hold no rare value (`rare_values`): one value
    on `FIELD_SHARE` percent of its lines leaves the others a fifth of them, and values said once or twice
    on `SELDOM_SHARE` percent at most leave the rest said three times or more; a field of more values than
    either allows (2,000 ids each said once) is not grouped by value at all."""
    return (distinct - 1) * 100 > total * (100 - FIELD_SHARE) and distinct * 300 > total * (3 * SELDOM_SHARE + 100)


def _rare_endings(body: bytes, lines: list[bytes], classes: dict) -> list[int]:
    """In a text of no more than `RARE_BYTES` whose lines mostly end in one same word (a status: `valid`,
    `ok`, `done`), the lines (at most `MAX_RARE_SHAPES`, inside the run of that word when there are
    more) that end in a word seen at most twice, not classed already: the two `- invalid` documents
    among 3,000 `- valid`, the one `- missing` file among 299 `- found` before the verdicts."""
    global _ending
    if len(body) > RARE_BYTES or len(lines) < MIN_REPETITIVE:
        return []
    if _ending is None:
        import re

        _ending = re.compile(rb"(?m)[ \t]([A-Za-z][\w-]{0,23})[ \t\r]*$")
    sample = [found[1] for found in map(_ending.search, lines[::max(1, len(lines) // 256)]) if found]
    # One word ends most of a sample's lines (the whole text's share is asked below): a dearer pass
    # over every line ending is not run on texts whose endings vary.
    endings: dict[bytes, int] = {}
    tally(endings, sample)
    if not sample or not _one_kind(endings, len(sample)):
        return []
    found = [(match.start(), match[1]) for match in _ending.finditer(body)]
    counts: dict[bytes, int] = {}
    tally(counts, [word for _, word in found])
    top = max(counts.values())
    if top * 100 < len(found) * FIELD_SHARE:
        return []
    rare = [offset for offset, word in found if counts[word] <= 2]
    if len(rare) > MAX_RARE_SHAPES:
        # Too many to be rare: those inside the run of the common ending, the verdicts after it aside.
        word = max(counts, key=counts.__getitem__)
        spots = [offset for offset, ending in found if ending == word]
        # Where the run starts and ends: a spot with another within `RARE_REACH` lines (a progress line
        # ending `No new packets found` above the run is not its start).
        first, last = _run_bounds(spots, lambda a, b: body.count(b"\n", a, b) <= RARE_REACH)
        rare = [offset for offset in rare if first < offset < last]
    if not rare or len(rare) > MAX_RARE_SHAPES:
        return []
    numbers = [body.count(b"\n", 0, offset) for offset in rare]
    return [number for number in numbers if number not in classes]
