# cython: language_level=3, boundscheck=False, wraparound=False, binding=False
"""Compiled line shapes and table rows: the typed twin of `yarp._shapes_py`.

`line_shapes` gives each line's shape (`yarp._shapes_py.line_shapes`) in one
pass, a byte at a time; a line alike (`_alike.pxi`) to one shaped earlier in
the pass, and still in its cache, takes that one's shape. `rows_breaking` gives
the rows of a table that break its columns' rule, in one pass that splits no line.

The twin stays the reference: tests/test_shapes.py crosses the two.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdlib cimport calloc, free, malloc
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.list cimport PyList_GET_ITEM
from cpython.object cimport PyObject
from libc.string cimport memchr, memcmp, memset

include "_alike.pxi"

IMPLEMENTATION = "c"
__all__ = ["IMPLEMENTATION", "SHAPE_BYTES", "line_shapes", "rows_breaking"]

#: The most bytes of a line's shape kept (`line_shapes`), and the longest word of capitals it keeps.
SHAPE_BYTES = 256
cdef Py_ssize_t CAPS_BYTES = 8


#: Per byte: 0 outside a word, `CAPITAL` for a capital letter, 1 for any other word character.
cdef unsigned char WORD[256]
cdef unsigned char CAPITAL = 2
for _byte in range(256):
    WORD[_byte] = CAPITAL if 65 <= _byte <= 90 else (48 <= _byte <= 57) or (97 <= _byte <= 122) or _byte == 95


#: Slots of the table of shapes made so far in one call (`line_shapes`): a power of two.
cdef Py_ssize_t _SHAPE_SLOTS = 1024


cdef struct ShapeSlot:
    PyObject *made  # a shape made in this call (its reference held by the call's `made` list), or NULL
    Py_ssize_t size


cdef inline object _shape_object(const unsigned char *shape, Py_ssize_t k, list made, ShapeSlot *slots):
    """The bytes of `shape[:k]`: one made before in this call when its slot holds the same bytes (lines of a
    kind share their shape, so most lines allocate nothing and are counted by one cached hash), else new."""
    cdef unsigned int h = 2166136261
    cdef Py_ssize_t m
    cdef ShapeSlot *slot
    for m in range(k):
        h = (h ^ shape[m]) * 16777619
    slot = &slots[h & (_SHAPE_SLOTS - 1)]
    if slot.made != NULL and slot.size == k and memcmp(PyBytes_AS_STRING(<object>slot.made), shape, k) == 0:
        return <object>slot.made
    found = PyBytes_FromStringAndSize(<char *>shape, k)
    made.append(found)
    slot.made = <PyObject *>found
    slot.size = k
    return found



#: Slots of the cache of lines shaped in one call (`line_shapes`), by their hash: a power of two.
DEF _SHAPED_SLOTS = 1024


cdef struct Shaped:
    uint64_t hash
    Py_ssize_t start, length  # the line's place in the buffer
    PyObject *shape  # its shape (held by the call's `made` list), or NULL: the slot is free


#: Bits of the index of the table of short lines shaped in one call (`line_shapes`).
DEF _SHORT_BITS = 8


cdef struct ShortShaped:
    uint64_t word  # a line of at most eight bytes, each digit as `0`, the rest zero
    Py_ssize_t length
    PyObject *shape  # its shape (held by the call's `made` list), or NULL: the slot is free


cdef Py_ssize_t _shape(const unsigned char *p, Py_ssize_t i, Py_ssize_t end, unsigned char *shape) noexcept nogil:
    """The shape of the line [i, end) into `shape` (its first `SHAPE_BYTES`); how many bytes."""
    cdef Py_ssize_t j, m, k = 0
    cdef unsigned int c, prev = 256
    cdef bint caps
    while i < end and k < 256:
        c = p[i]
        if WORD[c]:
            # A word run: itself when it is a short word of capitals (`FAIL`, a grade `F`), else `w`.
            j = i + 1
            caps = WORD[c] == CAPITAL
            while j < end and WORD[p[j]]:
                caps = caps and WORD[p[j]] == CAPITAL
                j += 1
            if caps and j - i <= CAPS_BYTES:
                for m in range(i, j):
                    if k < 256:
                        shape[k] = p[m]
                        k += 1
            else:
                shape[k] = 119  # b"w"
                k += 1
            prev = 256
            i = j
        elif c != prev:
            prev = c
            shape[k] = <unsigned char>c
            k += 1
            i += 1
        else:
            i += 1
    return k


def line_shapes(data, firsts=None) -> list:
    """Per line of `data` (split at b"\\n"), its shape, as `yarp._shapes_py.line_shapes` gives it. A line the
    same as one shaped before but for its digits (a digit is a word's byte, and no word holding one is
    kept as it is) takes that one's shape: most lines of a long output are alike, so most are only
    hashed and checked, eight bytes at a time, instead of read a byte at a time. `firsts` (per line number,
    the number of the first line of its kind, or None: `classed_alike`'s) names lines known alike already:
    each takes its first's shape unhashed."""
    cdef Py_buffer view
    cdef const unsigned char *p
    cdef Py_ssize_t i = 0, n, end, k
    cdef uint64_t h
    cdef const unsigned char *found
    cdef unsigned char shape[256]
    cdef ShapeSlot slots[1024]
    cdef Shaped *seen = <Shaped *>calloc(_SHAPED_SLOTS, sizeof(Shaped))
    cdef Shaped *slot
    cdef ShortShaped shorts[1 << _SHORT_BITS]
    cdef ShortShaped *short
    cdef uint64_t word
    cdef list made = []
    cdef Py_ssize_t number = 0, known = -1 if firsts is None else len(<list?>firsts), first
    if seen == NULL:
        raise MemoryError()
    memset(slots, 0, sizeof(slots))
    memset(shorts, 0, sizeof(shorts))
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    cdef list out = []
    try:
        p = <const unsigned char *>view.buf
        n = view.len
        while True:
            found = <const unsigned char *>memchr(p + i, 10, n - i) if i < n else NULL
            end = n if found == NULL else found - p
            first = -1
            if number < known:
                named = <object>PyList_GET_ITEM(firsts, number)
                if named is not None:
                    first = named
            if 0 <= first < number:
                out.append(<object>PyList_GET_ITEM(out, first))
            elif end - i <= 8:
                # A short line is its own key: its eight bytes with each digit read as `0`, and its length
                # (`yes`'s 300,000 lines of one byte, each hashed and checked, cost 200 instructions).
                word = _zeroed(_word(p + i, end - i))
                short = &shorts[((word ^ <uint64_t>(end - i)) * 0x9E3779B97F4A7C15ULL) >> (64 - _SHORT_BITS)]
                if not (short.shape != NULL and short.word == word and short.length == end - i):
                    k = _shape(p, i, end, shape)
                    short.word, short.length = word, end - i
                    made_shape = _shape_object(shape, k, made, slots)  # held by `made`
                    short.shape = <PyObject *>made_shape
                out.append(<object>short.shape)
            else:
                h = _hash(p + i, end - i, True)
                slot = &seen[h & (_SHAPED_SLOTS - 1)]
                if not (slot.shape != NULL and slot.hash == h and slot.length == end - i
                        and _same_zeroed(p + slot.start, p + i, end - i)):
                    k = _shape(p, i, end, shape)
                    slot.hash, slot.start, slot.length = h, i, end - i
                    made_shape = _shape_object(shape, k, made, slots)  # held by `made`
                    slot.shape = <PyObject *>made_shape
                out.append(<object>slot.shape)
            if found == NULL:
                return out
            i = end + 1
            number += 1
    finally:
        free(seen)
        PyBuffer_Release(&view)


cdef unsigned char BLANK[256]
for _byte in range(256):
    BLANK[_byte] = _byte in (9, 11, 12, 13, 32)  # what `bytes.split()` splits at, the newline aside


def rows_breaking(data, Py_ssize_t width, tuple rule) -> tuple:
    """How many lines of `data` (split at b"\\n") are rows of `width` fields (split as `bytes.split()`
    splits) holding every `rule` value ((position, value) pairs) at its position, the numbers of the
    other rows of `width` fields, ascending, and per rule pair how many rows of `width` fields do not hold
    it, as `yarp._shapes_py.rows_breaking` gives them."""
    cdef Py_buffer view
    cdef const unsigned char *p
    cdef Py_ssize_t i, j, k, n, end, line = 0, fields = 0, ruled = 0, r, position, count = len(rule)
    cdef const unsigned char *found
    cdef bint breaks = False
    # Per field of a row, where it starts and ends (for the fields a rule asks about); per rule, its position.
    cdef Py_ssize_t *starts = <Py_ssize_t *>malloc(max(1, width) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *ends = <Py_ssize_t *>malloc(max(1, width) * sizeof(Py_ssize_t))
    cdef unsigned char *wanted = <unsigned char *>calloc(max(1, width), 1)
    cdef Py_ssize_t *positions = <Py_ssize_t *>malloc(max(1, count) * sizeof(Py_ssize_t))
    cdef const char **values = <const char **>malloc(max(1, count) * sizeof(char *))
    cdef Py_ssize_t *sizes = <Py_ssize_t *>malloc(max(1, count) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *broken = <Py_ssize_t *>calloc(max(1, count), sizeof(Py_ssize_t))
    cdef bint viewing = False
    try:  # every array freed below, the ones not made too (free(NULL) does nothing)
        if starts == NULL or ends == NULL or wanted == NULL or positions == NULL or values == NULL \
                or sizes == NULL or broken == NULL:
            raise MemoryError()
        kept = [bytes(value) for _, value in rule]  # holds the values' bytes while they are compared
        out = []
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        viewing = True
        for r in range(count):
            position = rule[r][0]
            positions[r] = position if 0 <= position < width else -1  # a position outside a row asks nothing
            if positions[r] >= 0:
                wanted[position] = 1
            values[r] = kept[r]
            sizes[r] = len(kept[r])
        p = <const unsigned char *>view.buf
        n = view.len
        i = 0
        while i <= n:
            # One line, [i, end): its fields, until there are more than `width`.
            found = <const unsigned char *>memchr(p + i, 10, n - i) if i < n else NULL
            end = n if found == NULL else found - p
            fields = 0
            j = i
            while fields <= width:
                while j < end and BLANK[p[j]]:
                    j += 1
                if j >= end:
                    break
                k = j
                while k < end and not BLANK[p[k]]:
                    k += 1
                if fields < width and wanted[fields]:
                    starts[fields], ends[fields] = j, k
                fields += 1
                j = k
            if fields == width:
                breaks = False
                for r in range(count):
                    position = positions[r]
                    if position >= 0 and (ends[position] - starts[position] != sizes[r] or memcmp(
                            p + starts[position], values[r], sizes[r]) != 0):
                        broken[r] += 1
                        breaks = True
                if breaks:
                    out.append(line)
                else:
                    ruled += 1
            line += 1
            i = end + 1
        return ruled, out, [broken[r] for r in range(count)]
    finally:
        if viewing:
            PyBuffer_Release(&view)
        free(starts)
        free(ends)
        free(wanted)
        free(positions)
        free(values)
        free(sizes)
        free(broken)
