# cython: language_level=3, boundscheck=False, wraparound=False, binding=False
"""Compiled line templates: the typed twin of `yarp._templates_py`.

One pass over a line's first bytes past its location, with no regular
expression and no copy but the template itself: a view weighs the kinds of
thousands of findings of a dense output (`yarp.view.spending.weighed`), and the
expressions cost about two microseconds a line. `masked_paths` is one pass over
a line's words, where the twin's expression tries the file's extension at every
byte of a path (about 7 µs a line of a long path: 130 ms for Checkstyle's 17,500
findings). `classed_alike` groups a scan's lines by kind (the same bytes, or
the same but for digits) with a hash of four eight-byte lanes that reads each
digit as `0` and checks every match byte for byte, so each kind is classed
once: the expressions' memo by each line's bytes and its digits-as-`0` copy cost
about 0.7 µs a line of Checkstyle. It reads a `yarp._lines.Lines` from its text,
making only the line of each kind it classes (`_classed_alike.pxi`). `tally` counts and `grouped`
groups at C speed what a Python loop over every salient line would cost the view
its budget for. The twin stays the reference: tests/test_templates.py crosses the two.
"""

from itertools import islice

from cpython.array cimport array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Next
from cpython.list cimport PyList_GET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

IMPLEMENTATION = "c"
__all__ = ["IMPLEMENTATION", "TEMPLATE_BYTES", "by_number", "classed_alike", "grouped", "masked_paths", "places",
           "tally", "template", "templates"]

#: Bytes of a line a template reads, past its location.
TEMPLATE_BYTES = 160
DEF _WINDOW = 160

cdef unsigned char SPACE[256]  # what `bytes.split()` splits at
cdef unsigned char BEFORE_QUOTE[256]  # what a quoted name may follow
cdef unsigned char DELIMITS[256]  # what ends a word that may be a path
cdef unsigned char ALNUM[256]
cdef unsigned char MASKED[256]  # each byte as a path's words show it: a letter as `x`
for _byte in range(256):
    SPACE[_byte] = _byte in (9, 10, 11, 12, 13, 32)
    BEFORE_QUOTE[_byte] = _byte in b" ([:="
    DELIMITS[_byte] = _byte in b" \t\"'()[]<>,;"
    ALNUM[_byte] = 48 <= _byte <= 57 or 65 <= _byte <= 90 or 97 <= _byte <= 122
    MASKED[_byte] = 120 if 65 <= _byte <= 90 or 97 <= _byte <= 122 else _byte


cdef inline bint _digit(unsigned char c) noexcept nogil:
    return 48 <= c <= 57


cdef Py_ssize_t _numbers(const unsigned char *p, Py_ssize_t i, Py_ssize_t end, Py_ssize_t most) noexcept nogil:
    """Where `most` groups at most (any number when negative) of `:` and digits from `i`, then one `:` if
    one follows, end: a location's column after its line, an extension's line numbers."""
    while most != 0 and i + 1 < end and p[i] == 58 and _digit(p[i + 1]):
        i += 2
        while i < end and _digit(p[i]):
            i += 1
        most -= 1
    if i < end and p[i] == 58:
        i += 1
    return i


cdef Py_ssize_t _location_end(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """Where `LOCATION` (`^[ \\t]*([^ \\t:]+:\\d+(:\\d+)?:?[ \\t]*)?`) ends its match."""
    cdef Py_ssize_t i = 0, j, k
    while i < n and (p[i] == 32 or p[i] == 9):
        i += 1
    j = i
    while j < n and p[j] != 32 and p[j] != 9 and p[j] != 58:
        j += 1
    if j == i or j + 1 >= n or p[j] != 58 or not _digit(p[j + 1]):
        return i
    k = j + 1
    while k < n and _digit(p[k]):
        k += 1
    k = _numbers(p, k, n, 1)
    while k < n and (p[k] == 32 or p[k] == 9):
        k += 1
    return k


#: Slots of the table of templates made so far in one `templates` call: a power of two.
DEF _SLOTS = 512


cdef struct Slot:
    PyObject *made  # a template made in this call (its reference held by the call's list), or NULL
    Py_ssize_t size


cdef object _template(bytes line, Slot *slots):
    """The template of `line`; with `slots`, one made before in this call when its slot holds the same
    bytes (findings of a kind share their template: most allocate nothing, and count by one cached hash)."""
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(line)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(line)
    cdef Py_ssize_t start = _location_end(p, n)
    cdef Py_ssize_t size = n - start if n - start < _WINDOW else _WINDOW
    cdef const unsigned char *w = p + start
    cdef unsigned char text[_WINDOW]
    cdef unsigned char out[_WINDOW + 4]
    cdef Py_ssize_t word_start[4]
    cdef Py_ssize_t word_end[4]
    cdef Py_ssize_t i = 0, k = 0, e, words = 0, m, o = 0, a
    cdef unsigned char c, q
    # Digits as `#`, quoted names as `Q` (a quote after a blank, `(`, `[`, `:`, `=` or at the start, closed
    # by the same quote: the first such wins, as `re.sub` tries each place left to right).
    while i < size:
        c = w[i]
        if (c == 39 or c == 34 or c == 96) and (i == 0 or BEFORE_QUOTE[w[i - 1]]):
            q = c
            e = i + 1
            while e < size and w[e] != q:
                e += 1
            if e < size:
                text[k] = 81  # b"Q"
                k += 1
                i = e + 1
                continue
        text[k] = 35 if _digit(c) else c
        k += 1
        i += 1
    # Its words, the first three and the last of more than four.
    i = 0
    while i < k:
        while i < k and SPACE[text[i]]:
            i += 1
        if i >= k:
            break
        e = i
        while e < k and not SPACE[text[e]]:
            e += 1
        if words < 3:
            word_start[words], word_end[words] = i, e
        else:
            word_start[3], word_end[3] = i, e
        words += 1
        i = e
    for m in range(4 if words > 4 else words):
        if o:
            out[o] = 32
            o += 1
        for a in range(word_start[m], word_end[m]):
            out[o] = text[a]
            o += 1
    if slots == NULL:
        return PyBytes_FromStringAndSize(<char *>out, o)
    cdef unsigned int h = 2166136261
    for m in range(o):
        h = (h ^ out[m]) * 16777619
    cdef Slot *slot = &slots[h & (_SLOTS - 1)]
    if slot.made != NULL and slot.size == o and memcmp(PyBytes_AS_STRING(<object>slot.made), out, o) == 0:
        return <object>slot.made
    made = PyBytes_FromStringAndSize(<char *>out, o)
    slot.made = <PyObject *>made
    slot.size = o
    return made


def template(bytes line) -> bytes:
    """The template of `line`, as `yarp._templates_py.template` gives it."""
    return _template(line, NULL)


#: Kinds whose template `templates` keeps at hand, by the identity of their first line's number.
DEF _RECENT_KINDS = 4


def templates(lines, indices, firsts=None) -> list:
    """The template of `lines[i]` for each `i` of `indices`, in order. With `firsts` (`classed_alike`'s), a
    line alike with an earlier one takes that one's template, made once: a template reads digits as `#`."""
    cdef Slot slots[_SLOTS]
    cdef dict made
    memset(slots, 0, sizeof(slots))
    # Each template is held by the list until the call returns, so a slot never points at a freed one.
    if firsts is None:
        return [_template(lines[i], slots) for i in indices]
    made = {}
    out = []
    cdef list asked = []
    cdef PyObject *recent[_RECENT_KINDS]  # the first lines' numbers last asked (held by `asked`) ...
    cdef PyObject *recent_made[_RECENT_KINDS]  # ... and beside each, its template
    cdef Py_ssize_t k, turn = 0
    memset(recent, 0, sizeof(recent))
    for i in indices:
        first = firsts[i]
        if first is None:
            first = i
        # A class's anchors are a few kinds in turn (an error, its location, …), each kind's lines one number
        # object (`classed_alike`'s): asked by identity first, where a lookup per anchor cost 250 instructions.
        for k in range(_RECENT_KINDS):
            if recent[k] == <PyObject *>first:
                known = <object>recent_made[k]
                break
        else:
            known = made.get(first)
            if known is None:
                known = made[first] = _template(lines[first], slots)
            asked.append(first)  # held while `recent` names it
            recent[turn], recent_made[turn] = <PyObject *>first, <PyObject *>known
            turn = (turn + 1) % _RECENT_KINDS
        out.append(known)
    return out


cdef bint _extension(const unsigned char *p, Py_ssize_t q, Py_ssize_t end) noexcept nogil:
    """Whether p[q:end] is a file's extension and line numbers, whole: `\\.[A-Za-z0-9]{1,8}(?::\\d+)*:?`."""
    cdef Py_ssize_t i = q + 1, k
    if q >= end or p[q] != 46:
        return False
    while i < end and ALNUM[p[i]]:
        i += 1
    if i == q + 1 or i - q - 1 > 8:
        return False
    return _numbers(p, i, end, -1) == end


def masked_paths(bytes line) -> bytes:
    """`line` with the words of its paths masked, as `yarp._templates_py.masked_paths` gives it (the
    line itself when it holds none)."""
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(line)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(line), pos = 0, h, e, q, m
    cdef bint newline_end = n > 0 and p[n - 1] == 10  # `$` also matches before a last newline
    cdef bytes out = None
    cdef unsigned char *o = NULL
    while pos < n:
        if pos and not DELIMITS[p[pos - 1]]:
            pos += 1
            continue
        # A word starts here: its head up to the first `/`, which must come before the word ends.
        h = pos
        while h < n and p[h] != 47 and not DELIMITS[p[h]]:
            h += 1
        if h >= n or p[h] != 47:
            pos = h if h > pos else pos + 1
            continue
        e = h + 1
        while e < n and not DELIMITS[p[e]]:
            e += 1
        # The earliest place past the `/` where the word ends or its extension and line numbers run to its end.
        q = h + 1
        while q < e and not (newline_end and e == n and q == n - 1):
            if p[q] == 46 and (_extension(p, q, e) or newline_end and e == n and _extension(p, q, n - 1)):
                break
            q += 1
        if q > h + 1:
            if out is None:
                out = PyBytes_FromStringAndSize(<char *>p, n)
                o = <unsigned char *>PyBytes_AS_STRING(out)
            for m in range(h + 1, q):
                o[m] = MASKED[p[m]]
        pos = e
    return line if out is None else out


# --- lines alike ------------------------------------------------------------------------------

include "_classed_alike.pxi"


# --- tallies -------------------------------------------------------------------------------------

#: Value objects whose label `grouped` keeps beside their list of keys (and `by_number` whether it keeps them).
DEF _GROUPED_VALUES = 8


cdef struct Answered:
    Py_ssize_t count  # how many objects were asked, `_GROUPED_VALUES` at most
    PyObject *asked[_GROUPED_VALUES]  # the objects (held by the caller's container while it is read) ...
    PyObject *answers[_GROUPED_VALUES]  # ... and beside each, what it answered


cdef inline Py_ssize_t _answered(Answered *table, PyObject *asked) noexcept:
    """Where `asked` is in `table`, by identity; -1 when it is not there."""
    cdef Py_ssize_t k
    for k in range(table.count):
        if table.asked[k] == asked:
            return k
    return -1


cdef inline void _answer(Answered *table, PyObject *asked, PyObject *answer) noexcept:
    """Keep what `asked` answered, while `table` has room."""
    if table.count < _GROUPED_VALUES:
        table.asked[table.count], table.answers[table.count] = asked, answer
        table.count += 1
#: Slots of a tally's table of keys being counted, in sets of `_TALLY_WAYS` (`tally`).
DEF _TALLY_WAYS = 4
DEF _TALLY_SETS = 16  # a power of two
DEF _TALLY_SLOTS = 64
#: Keys a tally reads before it may find that nearly every key is one it has not held (`_TALLY_MISSED` of
#: each 8): each its own object, as the lines of a split text are, which slots only make dearer.
DEF _TALLY_TRIAL = 512
DEF _TALLY_MISSED = 7


cdef struct Counting:
    PyObject *key  # a key counted in C (a reference held until it is added to the mapping), or NULL
    Py_ssize_t count


cdef int _add_count(dict counts, Counting *slot) except -1:
    """Add a slot's count to the mapping and free the slot."""
    cdef object key = <object>slot.key
    counts[key] = counts[key] + slot.count
    Py_DECREF(key)
    slot.key, slot.count = NULL, 0
    return 0


def tally(dict counts, keys) -> None:
    """Count `keys` into `counts` (`counts[key] += 1` for each, from 0), as `collections.Counter.update` and
    `yarp._templates_py.tally` do, keys first seen in the order they come. A key's object is counted in C
    while it stays in its slot of a small table: a dense output's 300,000 lines of one shape, or 17,500
    findings of one class, make no integer per line. Keys that are nearly all new objects (a split
    text's lines) are counted in the mapping alone once the first `_TALLY_TRIAL` show it."""
    cdef Counting slots[_TALLY_SLOTS]
    cdef Counting *slot
    cdef Counting *way
    cdef size_t at
    cdef Py_ssize_t read = 0, missed = 0, k
    cdef unsigned char older[_TALLY_SETS]  # per set of slots, the one to give up next
    memset(slots, 0, sizeof(slots))
    memset(older, 0, sizeof(older))
    cdef bint indexed = type(keys) is list or type(keys) is tuple  # read by index, not by an iterator
    items = keys if indexed else iter(keys)  # an iterator's own `iter` is itself
    try:
        for key in items:
            # A set of slots per key, chosen by its address mixed (objects made one after another lie at one
            # stride apart); four slots a set, so that a few keys that come in turn are each counted in C
            # however their addresses fall.
            at = ((<size_t><PyObject *>key >> 4) * <size_t>0x9E3779B97F4A7C15ULL >> 32) & (_TALLY_SETS - 1)
            way = &slots[_TALLY_WAYS * at]
            slot = NULL
            for k in range(_TALLY_WAYS):
                if way[k].key == <PyObject *>key:
                    slot = &way[k]
                    break
            if slot == NULL:
                slot = &way[older[at]]
                older[at] = (older[at] + 1) & (_TALLY_WAYS - 1)
                if slot.key != NULL:
                    _add_count(counts, slot)
                if key not in counts:
                    counts[key] = 0  # in the order keys are first seen
                Py_INCREF(key)
                slot.key = <PyObject *>key
                missed += 1
            slot.count += 1
            read += 1
            if read == _TALLY_TRIAL and missed * 8 >= read * _TALLY_MISSED:
                break
        else:
            return
    finally:
        for at in range(_TALLY_SLOTS):
            if slots[at].key != NULL:
                _add_count(counts, &slots[at])
    for key in (islice(items, read, None) if indexed else items):  # the rest, each key in the mapping
        counts[key] = counts.get(key, 0) + 1


def by_number(list numbers, list classes, tuple left_out) -> dict:
    """Per line number of `numbers` whose class (`classes`, in the same order) is none of `left_out`, its
    number and class, in `numbers`' order, as `yarp._templates_py.by_number` gives them: 15,000 classed lines
    of a dense output made a pair and a step of three iterators each."""
    cdef Py_ssize_t e, k
    cdef Answered kept  # per class object asked (`classes` holds them), itself when its lines are kept, else NULL
    cdef PyObject *keep
    cdef dict out = {}
    if len(classes) != len(numbers):
        raise ValueError("one class per entry")
    kept.count = 0
    for e in range(len(numbers)):
        cls = <object>PyList_GET_ITEM(classes, e)
        # A dense output's lines are a few class objects in turn (a failure, its location, …): each asked once.
        k = _answered(&kept, <PyObject *>cls)
        if k >= 0:
            keep = kept.answers[k]
        else:
            keep = <PyObject *>cls if cls is not None and cls not in left_out else NULL
            _answer(&kept, <PyObject *>cls, keep)
        if keep != NULL:
            out[<object>PyList_GET_ITEM(numbers, e)] = cls
    return out


def places(list keys, wanted) -> list:
    """The indices of `keys` whose key `wanted` (a set) holds, ascending, as `yarp._templates_py.places` gives
    them. A key object asked about is not asked again while the next ones are it: a stream's 8,000 line shapes
    are a few dozen objects, each run of one asked once."""
    cdef list out = []
    cdef Py_ssize_t i
    cdef object asked = None  # the key object last asked about (held, so its address is its own)
    cdef bint looked = False, held = False
    for i in range(len(keys)):
        key = <object>PyList_GET_ITEM(keys, i)
        if not looked or key is not asked:
            asked, looked = key, True
            held = key in wanted
        if held:
            out.append(i)
    return out


def grouped(dict mapping, dict labels) -> dict:
    """`mapping`'s keys by the label `labels` gives their value (keys whose value has none are left out),
    each label's keys sorted, as `yarp._templates_py.grouped` gives them. The label of each of the first
    `_GROUPED_VALUES` value objects is looked up once and its list kept beside it: a dense output's 10,000
    classed lines hold a few class names, in turn (a failure, its location, …), and a lookup per line cost
    400 instructions."""
    cdef dict out = {}
    cdef Py_ssize_t pos = 0, k
    cdef PyObject *key
    cdef PyObject *value
    cdef Answered lists  # per value object asked (the mapping holds them while it is read), its label's list
    cdef PyObject *into  # of keys (held by `out`), or NULL
    cdef list keys
    lists.count = 0
    while PyDict_Next(mapping, &pos, &key, &value):
        k = _answered(&lists, value)
        if k >= 0:
            into = lists.answers[k]
        else:
            label = labels.get(<object>value)
            keys = None
            if label is not None:
                keys = out.get(label)
                if keys is None:
                    keys = out[label] = []
            into = NULL if keys is None else <PyObject *>keys
            _answer(&lists, value, into)
        if into != NULL:
            (<list>into).append(<object>key)
    for keys in out.values():
        keys.sort()
    return out
