# cython: language_level=3, boundscheck=False, wraparound=False, binding=False
"""Compiled trigger scan: the typed twin of `yarp._scan_py`.

Which lines of a buffer hold which trigger literals, ASCII case-insensitively,
in one pass over the buffer and without a lowercased copy. A 64 Ki-bit table
holds every pair of leading bytes a trigger can start with (the buffer's pair
folded to lower case); only where the pair is in the table are the triggers
starting with that byte compared, and a line's start is looked for backwards
only on a match. Triggers holding an upper-case ASCII letter never match (the
twin searches a lowercased copy); the empty trigger and those holding b"\\n"
follow the twin's find-then-skip-the-line walk, trigger by trigger. The GIL
is released for the scan of any buffer over `GIL_FREE_BYTES`.

The twin stays the reference: tests/test_scan.py crosses the two.
"""

from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memchr, memset

IMPLEMENTATION = "c"
__all__ = ["IMPLEMENTATION", "trigger_lines"]

#: Buffers at least this long are scanned without the GIL (shorter ones take less than its hand-over).
cdef Py_ssize_t _GIL_FREE_BYTES = 8192
GIL_FREE_BYTES = _GIL_FREE_BYTES
#: What `_tables` makes of a trigger: never matching (an upper-case letter), one of the one pass, or walked alone.
cdef enum:
    NEVER, PLAIN, ODD

cdef unsigned char FOLD[256]
for _byte in range(256):
    FOLD[_byte] = _byte + 32 if 65 <= _byte <= 90 else _byte


cdef struct Hit:
    Py_ssize_t start  # the line's start offset
    Py_ssize_t index  # the trigger's index in `triggers`


cdef struct Scan:
    const unsigned char *buf
    Py_ssize_t size
    const unsigned char **text  # per trigger
    Py_ssize_t *length  # per trigger
    Py_ssize_t *seen  # per trigger, 1 + the start of the last line it was found on (0: none yet)
    Py_ssize_t *cand  # indices of the plain triggers, grouped by first byte
    Py_ssize_t first[257]  # per first byte, where its group in `cand` begins
    unsigned char pairs[8192]  # bit (a << 8 | b): a plain trigger starts with bytes a, b (or is a alone)
    Hit *hits
    Py_ssize_t count, capacity
    Py_ssize_t known, line  # the line start holding `known` (the last matched position)
    Py_ssize_t group  # where the current line's hits begin in `hits`


cdef int _add(Scan *s, Py_ssize_t start, Py_ssize_t index) noexcept nogil:
    """Append a hit; -1 when memory runs out."""
    cdef Hit *grown
    cdef Py_ssize_t capacity
    if s.count == s.capacity:
        capacity = s.capacity * 2 if s.capacity else 64
        grown = <Hit *>realloc(s.hits, capacity * sizeof(Hit))
        if grown == NULL:
            return -1
        s.hits, s.capacity = grown, capacity
    s.hits[s.count].start = start
    s.hits[s.count].index = index
    s.count += 1
    return 0


cdef inline Py_ssize_t _line_start(const unsigned char *p, Py_ssize_t pos, Py_ssize_t known,
                                   Py_ssize_t line) noexcept nogil:
    """The start of the line holding `pos`, given that `line` starts the one holding `known` <= `pos`."""
    cdef Py_ssize_t i = pos
    while i > known:
        i -= 1
        if p[i] == 10:
            return i + 1
    return line


cdef inline bint _same(const unsigned char *p, const unsigned char *t, Py_ssize_t length) noexcept nogil:
    """Whether `p` folded to lower case starts with `t`."""
    cdef Py_ssize_t j
    for j in range(length):
        if FOLD[p[j]] != t[j]:
            return False
    return True


cdef int _match_at(Scan *s, Py_ssize_t pos) noexcept nogil:
    """Record the plain triggers starting at `pos`, each once per line, in trigger order; -1 on no memory."""
    cdef const unsigned char *p = s.buf
    cdef unsigned char head = FOLD[p[pos]]
    cdef Py_ssize_t c, k, j, length, start
    for c in range(s.first[head], s.first[head + 1]):
        k = s.cand[c]
        length = s.length[k]
        if length > s.size - pos or not _same(p + pos + 1, s.text[k] + 1, length - 1):
            continue
        start = _line_start(p, pos, s.known, s.line)
        s.known, s.line = pos, start
        if s.seen[k] == start + 1:
            continue
        s.seen[k] = start + 1
        if s.count == 0 or s.hits[s.count - 1].start != start:
            s.group = s.count
        if _add(s, start, k) < 0:
            return -1
        j = s.count - 1
        while j > s.group and s.hits[j - 1].index > k:  # hits on a line come in position order
            s.hits[j] = s.hits[j - 1]
            j -= 1
        s.hits[j].start, s.hits[j].index = start, k
    return 0


cdef int _scan_plain(Scan *s) noexcept nogil:
    """One pass for every plain trigger (non-empty, no b"\\n"); -1 on no memory."""
    cdef const unsigned char *p = s.buf
    cdef const unsigned char *pairs = s.pairs
    cdef Py_ssize_t n = s.size, i
    cdef unsigned int prev, cur, pair
    if n == 0:
        return 0
    prev = FOLD[p[0]]
    for i in range(n - 1):
        cur = FOLD[p[i + 1]]
        pair = (prev << 8) | cur
        if pairs[pair >> 3] & (1 << (pair & 7)):
            if _match_at(s, i) < 0:
                return -1
        prev = cur
    pair = prev << 8  # the last byte: only a one-byte trigger can start there
    if pairs[pair >> 3] & 1:
        return _match_at(s, n - 1)
    return 0


cdef Py_ssize_t _find(Scan *s, Py_ssize_t k, Py_ssize_t frm) noexcept nogil:
    """Where trigger `k` first occurs at or after `frm` (case-folded), as `bytes.find`; -1 when it does not."""
    cdef Py_ssize_t length = s.length[k], i
    for i in range(frm, s.size - length + 1):
        if _same(s.buf + i, s.text[k], length):
            return i
    return -1


cdef int _scan_odd(Scan *s, Py_ssize_t k) noexcept nogil:
    """The twin's walk for the empty trigger or one holding b"\\n"; -1 on no memory."""
    cdef const unsigned char *p = s.buf
    cdef const unsigned char *newline
    cdef Py_ssize_t n = s.size, pos, end, known = 0, line = 0
    pos = _find(s, k, 0)
    while pos >= 0:
        line = _line_start(p, pos, known, line)
        known = pos
        if _add(s, line, k) < 0:
            return -1
        newline = <const unsigned char *>memchr(p + pos, 10, n - pos)
        if newline == NULL:
            break
        end = newline - p
        pos = _find(s, k, end + 1) if end + 1 < n else -1
    return 0


cdef int _by_line_then_trigger(const void *a, const void *b) noexcept nogil:
    cdef const Hit *x = <const Hit *>a
    cdef const Hit *y = <const Hit *>b
    if x.start != y.start:
        return -1 if x.start < y.start else 1
    return -1 if x.index < y.index else (1 if x.index > y.index else 0)


cdef int _run(Scan *s, const unsigned char *kind, Py_ssize_t count) noexcept nogil:
    """The whole scan: the plain triggers in one pass, then each odd one; -1 on no memory."""
    cdef Py_ssize_t k, plain_hits
    if _scan_plain(s) < 0:
        return -1
    plain_hits = s.count
    for k in range(count):
        if kind[k] == ODD and _scan_odd(s, k) < 0:
            return -1
    if s.count > plain_hits:
        qsort(s.hits, s.count, sizeof(Hit), _by_line_then_trigger)
    return 0


cdef void _tables(Scan *s, tuple triggers, unsigned char *kind, Py_ssize_t count) except *:
    """Fill the per-trigger arrays, the candidate groups and the pair table; sort the triggers by `kind`."""
    cdef Py_ssize_t k, j, length, head
    cdef const unsigned char *t
    cdef bint upper, newline
    cdef Py_ssize_t sizes[256]
    memset(sizes, 0, sizeof(sizes))
    memset(s.pairs, 0, sizeof(s.pairs))
    for k in range(count):
        trigger = triggers[k]
        if not isinstance(trigger, bytes):
            raise TypeError("a trigger must be bytes")
        t = <const unsigned char *><bytes>trigger
        length = len(<bytes>trigger)
        s.text[k], s.length[k], s.seen[k] = t, length, 0
        upper = newline = False
        for j in range(length):
            upper |= 65 <= t[j] <= 90
            newline |= t[j] == 10
        # An upper-case letter never meets a folded byte, as in the twin's lowercased copy.
        kind[k] = NEVER if upper else (ODD if length == 0 or newline else PLAIN)
        if kind[k] != PLAIN:
            continue
        sizes[t[0]] += 1
        if length == 1:
            for j in range(32):
                s.pairs[(t[0] << 5) | j] = 0xFF
        else:
            j = (t[0] << 8) | t[1]
            s.pairs[j >> 3] |= 1 << (j & 7)
    s.first[0] = 0
    for head in range(256):
        s.first[head + 1] = s.first[head] + sizes[head]
        sizes[head] = s.first[head]
    for k in range(count):
        if kind[k] == PLAIN:
            head = s.text[k][0]
            s.cand[sizes[head]] = k
            sizes[head] += 1


def trigger_lines(const unsigned char[::1] buf not None, triggers) -> dict:
    """Per start offset of a line of `buf` holding a trigger, the triggers found on it.

    Lines end at b"\\n"; a trigger matches whatever the case of the buffer's
    ASCII letters (it is given in lower case; other bytes match exactly). The
    triggers of a line come in the order of `triggers`, each once.
    """
    cdef tuple found = tuple(triggers)
    cdef Py_ssize_t count = len(found), i, j, m, failed
    cdef Scan s
    cdef unsigned char *kind
    s.buf, s.size = &buf[0] if buf.shape[0] else <const unsigned char *>b"", buf.shape[0]
    s.hits, s.count, s.capacity = NULL, 0, 0
    s.known, s.line, s.group = 0, 0, 0
    s.text = <const unsigned char **>malloc((count + 1) * sizeof(void *))
    s.length = <Py_ssize_t *>malloc((count + 1) * sizeof(Py_ssize_t))
    s.seen = <Py_ssize_t *>malloc((count + 1) * sizeof(Py_ssize_t))
    s.cand = <Py_ssize_t *>malloc((count + 1) * sizeof(Py_ssize_t))
    kind = <unsigned char *>malloc(count + 1)
    try:
        if s.text == NULL or s.length == NULL or s.seen == NULL or s.cand == NULL or kind == NULL:
            raise MemoryError()
        _tables(&s, found, kind, count)
        if s.size >= _GIL_FREE_BYTES:
            with nogil:
                failed = _run(&s, kind, count)
        else:
            failed = _run(&s, kind, count)
        if failed:
            raise MemoryError()
        result = {}
        i = 0
        while i < s.count:
            j = i + 1
            while j < s.count and s.hits[j].start == s.hits[i].start:
                j += 1
            if j - i == 1:
                result[s.hits[i].start] = (found[s.hits[i].index],)
            else:
                result[s.hits[i].start] = tuple([found[s.hits[m].index] for m in range(i, j)])
            i = j
        return result
    finally:
        free(s.hits)
        free(s.text)
        free(s.length)
        free(s.seen)
        free(s.cand)
        free(kind)
