# cython: language_level=3, boundscheck=False, wraparound=False, binding=False
"""A text's lines without a copy of each: the typed twin of `yarp._lines_py`.

`Lines(body)` reads as `body.split(b"\\n")` does (a sequence of the lines,
without their newlines) but holds only `body` and where each line starts; a
line is made when it is asked for, and kept once asked by index. A view asks for a few hundred lines of the
200,000 a `seq 1 200000` prints, and making them all (and freeing them) was
three quarters of its cost. `yarp._templates.classed_alike` reads the lines it
classes straight from `body` and `starts`.

The twin stays the reference: tests/test_lines.py crosses the two.
"""

from cpython.array cimport array, resize
from libc.string cimport memcmp, memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.object cimport PyObject
from libc.stdlib cimport calloc, free, malloc

IMPLEMENTATION = "c"
__all__ = ["IMPLEMENTATION", "NEWLINE_BLOCKS", "Lines", "banner_candidates", "count_line", "indent", "line_indents",
           "lines_at_margin", "line_counts", "lines_in", "lines_starting", "split_lines"]

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #define YARP_NEWLINE_BLOCKS "sse2"
    #else
    #define YARP_NEWLINE_BLOCKS "words"
    #endif
    /* Bit j set where p[j] is a newline, for the 64 bytes at p: sixteen compared at once with SSE2 (every
       x86-64); elsewhere eight at a time: xored with newlines, a newline's byte is zero, and
       ~(((y & 0x7F..) + 0x7F..) | y | 0x7F..) sets the high bit of each zero byte (no carry crosses a
       byte); the multiply gathers byte i's bit into bit i of the top byte. */
    static inline uint64_t yarp_newlines64(const unsigned char *p) {
        uint64_t bits = 0;
    #if defined(__SSE2__)
        const __m128i newline = _mm_set1_epi8(10);
        for (int j = 0; j < 64; j += 16)
            bits |= (uint64_t)(uint32_t)_mm_movemask_epi8(
                _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + j)), newline)) << j;
    #else
        const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
        for (int j = 0; j < 64; j += 8) {
            uint64_t x, y;
            memcpy(&x, p + j, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            x = __builtin_bswap64(x);  /* the first byte the lowest */
    #endif
            x ^= 0x0A0A0A0A0A0A0A0AULL;
            y = ~(((x & low7) + low7) | x | low7);
            bits |= (((y >> 7) * 0x0102040810204080ULL) >> 56) << j;
        }
    #endif
        return bits;
    }
    """
    int __builtin_ctzll(unsigned long long) nogil
    int __builtin_popcountll(unsigned long long) nogil
    unsigned long long yarp_newlines64(const unsigned char *p) nogil
    const char *YARP_NEWLINE_BLOCKS


#: How this build finds a text's newlines 64 bytes at a time: "sse2" (sixteen bytes compared at once) or
#: "words" (eight at a time, on a host without SSE2; `make test-portable` builds and tests it on any).
NEWLINE_BLOCKS = YARP_NEWLINE_BLOCKS.decode()


cdef array _line_starts(const unsigned char *p, Py_ssize_t n):
    """Where each line of `p` starts: 0, then the position after each newline, then `n + 1`; 64 bytes at a
    time (`yarp_newlines64`), counted first (one allocation), then written: a MiB of 30,000 lines, 1.7 M
    instructions where eight bytes at a time took 3.9 M."""
    cdef array starts = array("q")
    cdef Py_ssize_t i, k = 0, blocks = n // 64 * 64
    cdef unsigned long long bits
    cdef long long *s
    for i in range(0, blocks, 64):
        k += __builtin_popcountll(yarp_newlines64(p + i))
    for i in range(blocks, n):
        k += p[i] == 10
    resize(starts, k + 2)
    s = starts.data.as_longlongs
    s[0] = 0
    k = 1
    for i in range(0, blocks, 64):
        bits = yarp_newlines64(p + i)
        while bits:
            s[k] = i + __builtin_ctzll(bits) + 1
            k += 1
            bits &= bits - 1
    for i in range(blocks, n):
        if p[i] == 10:
            s[k] = i + 1
            k += 1
    s[k] = n + 1
    return starts


cdef class Lines:
    """The lines of `body` split at b"\\n", each made when asked for: `len`, an index (negative too), a slice
    (a list), iteration; `starts[i]` is where line `i` starts, `starts[len]` is `len(body) + 1`.

    A line asked for by index or slice is kept and given again: the view walks the lines above each
    finding and keys what a line says by its bytes, whose hash a line object keeps. Iteration (a pass
    over every line) makes each line afresh."""

    cdef readonly bytes body
    cdef readonly array starts
    cdef Py_ssize_t count
    cdef PyObject **kept  # per line, the line made for it (its reference held by `made`), or NULL
    cdef list made

    def __cinit__(self, bytes body not None):
        self.body = body
        self.starts = _line_starts(<const unsigned char *>PyBytes_AS_STRING(body), PyBytes_GET_SIZE(body))
        self.count = len(self.starts) - 1
        self.made = []
        self.kept = <PyObject **>calloc(self.count, sizeof(PyObject *))
        if self.kept == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.kept)

    cdef inline bytes _made(self, Py_ssize_t i):
        cdef long long *s = self.starts.data.as_longlongs
        return PyBytes_FromStringAndSize(PyBytes_AS_STRING(self.body) + s[i], s[i + 1] - 1 - s[i])

    cdef inline bytes _line(self, Py_ssize_t i):
        cdef PyObject *kept = self.kept[i]
        if kept != NULL:
            return <bytes>kept
        line = self._made(i)
        self.made.append(line)
        self.kept[i] = <PyObject *>line
        return line

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        cdef Py_ssize_t i, start, stop, step, length
        if isinstance(index, slice):
            start, stop, step = index.indices(self.count)
            return [self._line(i) for i in range(start, stop, step)]
        i = index
        if i < 0:
            i += self.count
        if i < 0 or i >= self.count:
            raise IndexError("line index out of range")
        return self._line(i)

    def __iter__(self):
        cdef Py_ssize_t i
        for i in range(self.count):
            yield self._made(i)

    def __reversed__(self):
        cdef Py_ssize_t i
        for i in range(self.count - 1, -1, -1):
            yield self._made(i)

    def __repr__(self):
        return f"Lines({self.count} lines of {PyBytes_GET_SIZE(self.body)} bytes)"


def split_lines(bytes body not None) -> Lines:
    """The lines of `body` split at b"\\n", as `body.split(b"\\n")` gives them."""
    return Lines(body)


#: What `_asked` gives of each line of a run: its indent, or its number when it may be a banner, when it
#: starts at the margin, or when it starts with one of some prefixes past its blanks.
DEF _INDENTS = 0
DEF _BANNERS = 1
DEF _MARGIN = 2
DEF _STARTING = 3

cdef unsigned char _STRIPPED[256]  # what `bytes.lstrip()` strips
for _byte in range(256):
    _STRIPPED[_byte] = _byte in (9, 10, 11, 12, 13, 32)


def lines_starting(lines, Py_ssize_t first, Py_ssize_t stop, tuple prefixes) -> list:
    """The numbers of the lines from `first` up to `stop` (exclusive) that start with one of `prefixes` past
    their leading blanks, as `yarp._lines_py.lines_starting` gives them: of a `Lines`, read in its text,
    making no line."""
    return _asked(lines, first, stop, _STARTING, prefixes)


cdef bint _starts_with(const unsigned char *p, Py_ssize_t n, tuple prefixes):
    """Whether the `n` bytes at `p` start with one of `prefixes` past their leading blanks."""
    cdef Py_ssize_t at = 0, size
    while at < n and _STRIPPED[p[at]]:
        at += 1
    for prefix in prefixes:
        size = PyBytes_GET_SIZE(prefix)
        if n - at >= size and memcmp(p + at, PyBytes_AS_STRING(prefix), size) == 0:
            return True
    return False


cdef extern from "string.h":
    void *memmem(const void *haystack, size_t haystacklen, const void *needle, size_t needlelen) nogil


cdef inline Py_ssize_t _indent(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """`yarp._lines_py.indent` of the `n` bytes at `p`."""
    cdef Py_ssize_t i = 0, column = 0
    while i < n and p[i] == 13:
        i += 1
    while i < n and (p[i] == 32 or p[i] == 9):
        column = (column // 8 + 1) * 8 if p[i] == 9 else column + 1
        i += 1
    return column


def indent(bytes line not None) -> int:
    """The columns a line is indented by, as `yarp._lines_py.indent` counts them."""
    return _indent(<const unsigned char *>PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line))


def line_indents(lines, Py_ssize_t first, Py_ssize_t stop) -> list:
    """`indent` of each line from `first` up to `stop` (exclusive; both within the lines), as
    `yarp._lines_py.line_indents` gives them: of a `Lines`, read in its text, making no line."""
    return _asked(lines, first, stop, _INDENTS)


cdef list _asked(lines, Py_ssize_t first, Py_ssize_t stop, int question, tuple prefixes=()):
    """Per line from `first` up to `stop`, what `question` asks (`_INDENTS`, `_BANNERS`, `_MARGIN`,
    `_STARTING` with `prefixes`). A `Lines` is read in its text; a list, or a big stream's held lines, a line
    as it is given."""
    cdef Lines held = <Lines>lines if type(lines) is Lines else None
    cdef long long *s = NULL
    cdef const unsigned char *body = NULL
    cdef const unsigned char *p
    cdef Py_ssize_t i, n
    cdef bytes line
    if held is not None:
        s = held.starts.data.as_longlongs
        body = <const unsigned char *>PyBytes_AS_STRING(held.body)
    out = []
    for i in range(max(0, first), min(stop, len(lines))):
        if held is not None:
            p, n = body + s[i], s[i + 1] - 1 - s[i]
        else:
            line = lines[i]
            p, n = <const unsigned char *>PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line)
        if question == _INDENTS:
            out.append(_indent(p, n))
        elif question == _BANNERS:
            if _may_be_banner(p, n):
                out.append(i)
        elif question == _MARGIN:
            if n == 0 or (p[0] != 32 and p[0] != 9):
                out.append(i)
        elif _starts_with(p, n, prefixes):
            out.append(i)
    return out


cdef bint _may_be_banner(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """`yarp._lines_py.may_be_banner` of the `n` bytes at `p`."""
    cdef Py_ssize_t i = 0, end = n
    cdef bint dot = False
    if n >= 3 and p[0] == p[1] == p[2] and (p[0] == 42 or p[0] == 61 or p[0] == 35 or p[0] == 45 or p[0] == 62):
        return True  # `***`, `===`, `###`, `---`, `>>>`
    if (n >= 3 and memcmp(p, b"In ", 3) == 0) or memmem(p, n, b": In ", 5) != NULL or memmem(p, n, b": (in ", 6) != NULL:
        return True
    while i < end and _STRIPPED[p[i]]:
        i += 1
    while end > i and _STRIPPED[p[end - 1]]:
        end -= 1
    while i < end:
        if _STRIPPED[p[i]]:
            return False  # two words
        dot = dot or p[i] == 46
        i += 1
    return dot


def banner_candidates(lines, Py_ssize_t first, Py_ssize_t stop) -> list:
    """The numbers of the lines from `first` up to `stop` (exclusive) that may be banners, as
    `yarp._lines_py.banner_candidates` gives them: of a `Lines`, read in its text, making no line."""
    return _asked(lines, first, stop, _BANNERS)


def lines_at_margin(lines, Py_ssize_t first, Py_ssize_t stop) -> list:
    """The numbers of the lines from `first` up to `stop` (exclusive) that start with neither a space nor a
    tab, as `yarp._lines_py.lines_at_margin` gives them: of a `Lines`, read in its text, making no line."""
    return _asked(lines, first, stop, _MARGIN)


def count_line(lines, Py_ssize_t first, Py_ssize_t stop, bytes line not None) -> int:
    """How many of the lines from `first` up to `stop` (exclusive) are `line`, as `yarp._lines_py.count_line`
    counts them: of a `Lines`, compared in its text (lengths first), making no line."""
    cdef Lines held
    cdef long long *s
    cdef const char *body
    cdef const char *wanted = PyBytes_AS_STRING(line)
    cdef Py_ssize_t i, n = PyBytes_GET_SIZE(line), count = 0
    if type(lines) is not Lines:
        return lines[max(0, first):max(0, stop)].count(line)
    held = <Lines>lines
    s = held.starts.data.as_longlongs
    body = PyBytes_AS_STRING(held.body)
    for i in range(max(0, first), min(stop, held.count)):
        if s[i + 1] - 1 - s[i] == n and memcmp(body + s[i], wanted, n) == 0:
            count += 1
    return count


# --- lines counted (`line_counts`, `lines_in`) ----------------------------------------------------------

include "_alike.pxi"


cdef struct Counted:
    uint64_t hash
    Py_ssize_t start, length, count, order  # order: 1 + its place among the lines first read; 0 when free


cdef Counted *_counted(const unsigned char *p, long long *s, Py_ssize_t lines, Py_ssize_t *size) noexcept nogil:
    """The table of the distinct lines of `p` (line `i` from `s[i]` up to `s[i + 1] - 1`), each with its count
    and the place it was first read; `size` its slots. NULL on no memory."""
    cdef Py_ssize_t slots = 16, i, slot, length, distinct = 0
    cdef Counted *table
    cdef uint64_t h
    while slots < 2 * lines:
        slots <<= 1
    table = <Counted *>calloc(slots, sizeof(Counted))
    if table == NULL:
        return NULL
    for i in range(lines):
        length = s[i + 1] - 1 - s[i]
        h = _hash(p + s[i], length, False)  # seeded per process: no output fills one probe chain
        slot = h & (slots - 1)
        while table[slot].order:
            if (table[slot].hash == h and table[slot].length == length
                    and memcmp(p + table[slot].start, p + s[i], length) == 0):
                break
            slot = (slot + 1) & (slots - 1)
        if table[slot].order:
            table[slot].count += 1
        else:
            distinct += 1
            table[slot].hash, table[slot].start, table[slot].length = h, s[i], length
            table[slot].count, table[slot].order = 1, distinct
    size[0] = slots
    return table


def line_counts(bytes text not None) -> dict:
    """How many times each line of `text` (split at b"\\n") is said, the lines in the order first read, as
    `yarp._lines_py.line_counts` counts them: each line hashed in the text (`_alike.pxi`), and made once per
    distinct line (10,000 lines of a report that say 87 things make 87)."""
    cdef Py_ssize_t size = 0, i, lines, distinct
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(text)
    cdef array starts = _line_starts(p, PyBytes_GET_SIZE(text))
    cdef Counted *table
    cdef Py_ssize_t *placed = NULL  # per place first read, its slot
    cdef dict counts = {}
    lines = len(starts) - 1
    table = _counted(p, starts.data.as_longlongs, lines, &size)
    if table == NULL:
        raise MemoryError()
    try:
        placed = <Py_ssize_t *>malloc(lines * sizeof(Py_ssize_t))
        if placed == NULL:
            raise MemoryError()
        distinct = 0
        for i in range(size):
            if table[i].order:
                placed[table[i].order - 1] = i
                distinct += 1
        for i in range(distinct):
            counts[PyBytes_FromStringAndSize(<const char *>p + table[placed[i]].start, table[placed[i]].length)] = \
                table[placed[i]].count
        return counts
    finally:
        free(table)
        free(placed)


def lines_in(bytes text not None, keys) -> list:
    """The numbers of the lines of `text` (split at b"\\n") that are among `keys`, ascending, as
    `yarp._lines_py.lines_in` finds them: only the lines as long as a key are made and looked up."""
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(text)
    cdef array starts = _line_starts(p, PyBytes_GET_SIZE(text))
    cdef long long *s = starts.data.as_longlongs
    cdef Py_ssize_t i, length
    cdef set lengths = {len(key) for key in keys}
    cdef list out = []
    for i in range(len(starts) - 1):
        length = s[i + 1] - 1 - s[i]
        if length in lengths and PyBytes_FromStringAndSize(<const char *>p + s[i], length) in keys:
            out.append(i)
    return out
