# cython: language_level=3, boundscheck=False, wraparound=False, binding=False
"""Compiled trigger scan: the typed twin of `yarp._scan_py`.

Which lines of a buffer hold which trigger literals, ASCII case-insensitively,
in one pass over the buffer and without a lowercased copy. A 64 KiB table
marks every pair of bytes a trigger can start with (in either case), and a
second one every hashed triple of folded bytes; only where the buffer's pair and
triple are marked are the triggers starting with it compared (dense output is
full of pairs such as two blanks, which one trigger, `  x `, starts with). At a
line's first candidate pair, a line alike to one read before in the scan (the
same but for its digits, `_alike.pxi`) takes that one's triggers and the pass
goes on at the next line, where the lines before tell that this costs less than
reading it (`_scan_kinds`); where most lines tried are alike, each line is hashed
before it is searched (`_scan_by_lines`; both in `_scan_kinds.pxi`). The lines
holding one set of triggers share one tuple of them. Triggers holding
an upper-case ASCII letter never match (the twin searches a lowercased copy);
the empty trigger and those holding b"\\n" follow the twin's
find-then-skip-the-line walk, trigger by trigger. The tables are built once
per tuple of triggers (the classifier passes the same two tuples every time)
and the GIL is released for the scan of any buffer over `GIL_FREE_BYTES`.

The twin stays the reference: tests/test_scan.py crosses the two.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memchr, memcmp, memset

include "_alike.pxi"

cdef extern from *:
    """
    #define YARP_SELDOM(x) __builtin_expect(!!(x), 0)
    """
    bint _seldom "YARP_SELDOM"(bint) nogil  # a hint to lay the loop out for the usual, other way

cdef extern from *:
    """
    #if defined(__GLIBC__) || defined(__linux__) || defined(__FreeBSD__)
    #define YARP_MEMRCHR memrchr
    #else
    static void *YARP_MEMRCHR(const void *s, int c, size_t n) {
        const unsigned char *p = (const unsigned char *)s + n;
        while (n--) { if (*--p == (unsigned char)c) return (void *)p; }
        return NULL;
    }
    #endif
    """
    const void *_memrchr "YARP_MEMRCHR"(const void *, int, size_t) nogil  # the last such byte, or NULL

IMPLEMENTATION = "c"
__all__ = ["IMPLEMENTATION", "trigger_line_numbers", "trigger_lines"]

#: Buffers at least this long are scanned without the GIL (shorter ones take less than its hand-over).
cdef Py_ssize_t _GIL_FREE_BYTES = 8192
GIL_FREE_BYTES = _GIL_FREE_BYTES
#: What `_Tables` makes of a trigger: never matching (an upper-case letter), one of the one pass, or walked alone.
cdef enum:
    NEVER, PLAIN, ODD
#: What a kind's `digits` holds until a line alike to it asks (`_reads_digits`): most kinds are never asked.
cdef enum:
    UNKNOWN = 2
#: Tables kept, by the identity of their tuple of triggers; emptied when full.
cdef dict _CACHE = {}
cdef Py_ssize_t _CACHE_SIZE = 8

cdef unsigned char FOLD[256]
for _byte in range(256):
    FOLD[_byte] = _byte + 32 if 65 <= _byte <= 90 else _byte


cdef inline unsigned int _upper(unsigned int byte) noexcept nogil:
    """The byte a buffer may hold for a trigger's byte: its upper case for a letter, else itself."""
    return byte - 32 if 97 <= byte <= 122 else byte


cdef struct Hit:
    Py_ssize_t start  # the line's start offset
    Py_ssize_t index  # the trigger's index in `triggers`


cdef class _Tables:
    """What a tuple of triggers scans with: built once (`_tables_for`), then only read, without the GIL too."""

    cdef tuple triggers
    cdef Py_ssize_t count
    cdef const unsigned char **text  # per trigger
    cdef Py_ssize_t *length  # per trigger
    cdef unsigned char *kind  # per trigger: NEVER, PLAIN or ODD
    cdef bint odd  # whether any trigger is ODD
    cdef Py_ssize_t *cand  # indices of the plain triggers, grouped by first byte
    cdef int *second  # beside `cand`, each one's second byte (256: a one-byte trigger)
    cdef Py_ssize_t first[257]  # per first byte, where its group in `cand` begins
    cdef unsigned char *pairs  # [a << 8 | b]: a plain trigger starts with bytes a, b (either case), or is a alone
    cdef unsigned char *triples  # [_triple(a, b, c)]: a plain trigger may start with folded bytes a, b, c
    cdef bint by_triples  # whether `triples` filters: no plain trigger is one byte long
    cdef Py_ssize_t *digital  # the plain triggers holding an ASCII digit
    cdef Py_ssize_t digital_count
    cdef Py_ssize_t *digit_at  # per trigger, where its first digit is

    def __cinit__(self, tuple triggers):
        cdef Py_ssize_t count = len(triggers)
        self.triggers, self.count = triggers, count
        self.text = <const unsigned char **>malloc((count + 1) * sizeof(void *))
        self.length = <Py_ssize_t *>malloc((count + 1) * sizeof(Py_ssize_t))
        self.kind = <unsigned char *>malloc(count + 1)
        self.cand = <Py_ssize_t *>malloc((count + 1) * sizeof(Py_ssize_t))
        self.second = <int *>malloc((count + 1) * sizeof(int))
        self.pairs = <unsigned char *>malloc(65536)
        self.triples = <unsigned char *>malloc(65536)
        self.digital = <Py_ssize_t *>malloc((count + 1) * sizeof(Py_ssize_t))
        self.digit_at = <Py_ssize_t *>malloc((count + 1) * sizeof(Py_ssize_t))
        if (self.text == NULL or self.length == NULL or self.kind == NULL or self.cand == NULL
                or self.second == NULL or self.pairs == NULL or self.triples == NULL or self.digital == NULL
                or self.digit_at == NULL):
            raise MemoryError()
        self._fill()

    def __dealloc__(self):
        free(self.text)
        free(self.length)
        free(self.kind)
        free(self.cand)
        free(self.second)
        free(self.pairs)
        free(self.triples)
        free(self.digital)
        free(self.digit_at)

    cdef void _fill(self) except *:
        """The per-trigger arrays, the candidate groups and the pair and triple tables."""
        cdef Py_ssize_t k, j, length, head
        cdef const unsigned char *t
        cdef bint upper, newline
        cdef Py_ssize_t sizes[256]
        memset(sizes, 0, sizeof(sizes))
        memset(self.pairs, 0, 65536)
        memset(self.triples, 0, 65536)
        self.odd = False
        self.by_triples = True
        self.digital_count = 0
        for k in range(self.count):
            trigger = self.triggers[k]
            if not isinstance(trigger, bytes):
                raise TypeError("a trigger must be bytes")
            t = <const unsigned char *><bytes>trigger
            length = len(<bytes>trigger)
            self.text[k], self.length[k] = t, length
            upper = newline = False
            self.digit_at[k] = -1
            for j in range(length - 1, -1, -1):
                upper |= 65 <= t[j] <= 90
                newline |= t[j] == 10
                if 48 <= t[j] <= 57:
                    self.digit_at[k] = j
            # An upper-case letter never meets a folded byte, as in the twin's lowercased copy.
            self.kind[k] = NEVER if upper else (ODD if length == 0 or newline else PLAIN)
            self.odd |= self.kind[k] == ODD
            if self.kind[k] != PLAIN:
                continue
            if self.digit_at[k] >= 0:
                self.digital[self.digital_count] = k
                self.digital_count += 1
            sizes[t[0]] += 1
        self.first[0] = 0
        for head in range(256):
            self.first[head + 1] = self.first[head] + sizes[head]
            sizes[head] = self.first[head]
        for k in range(self.count):
            if self.kind[k] == PLAIN:
                head = self.text[k][0]
                self.cand[sizes[head]] = k
                self.second[sizes[head]] = self.text[k][1] if self.length[k] > 1 else 256
                self._mark(self.text[k], self.length[k])
                sizes[head] += 1

    cdef void _mark(self, const unsigned char *t, Py_ssize_t length) noexcept:
        """Mark the pairs of bytes the trigger starts with, in either case (every pair of a one-byte one)."""
        cdef unsigned int a = t[0], b = t[1] if length > 1 else 0, c
        if length == 1:
            memset(self.pairs + (a << 8), 1, 256)
            memset(self.pairs + (_upper(a) << 8), 1, 256)
            self.by_triples = False  # any pair and triple may start it
        else:
            if length == 2:
                for c in range(256):
                    self.triples[_triple(a, b, c)] = 1
            else:
                self.triples[_triple(a, b, t[2])] = 1
            self.pairs[(a << 8) | b] = self.pairs[(_upper(a) << 8) | b] = 1
            self.pairs[(a << 8) | _upper(b)] = self.pairs[(_upper(a) << 8) | _upper(b)] = 1


cdef inline unsigned int _triple(unsigned int a, unsigned int b, unsigned int c) noexcept nogil:
    """Where three folded bytes fall in a triple table."""
    return (a * 63001 + b * 251 + c) & 0xFFFF


cdef _Tables _tables_for(triggers):
    """The tables of `triggers`: kept for a tuple, by its identity (the tables hold the tuple, so the
    identity cannot pass to another while they are kept); built afresh for any other sequence."""
    cdef object kept
    if type(triggers) is not tuple:
        return _Tables(tuple(triggers))
    kept = _CACHE.get(id(triggers))
    if kept is not None and (<_Tables>kept).triggers is triggers:
        return <_Tables>kept
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    kept = _CACHE[id(triggers)] = _Tables(triggers)
    return <_Tables>kept


cdef struct Scan:
    const unsigned char *buf
    Py_ssize_t size
    Py_ssize_t count_triggers
    const unsigned char **text  # the tables' (`_Tables`), read only
    Py_ssize_t *length
    const unsigned char *kind
    Py_ssize_t *cand
    int *second
    Py_ssize_t *first
    const unsigned char *pairs
    const unsigned char *triples  # NULL: pairs alone filter
    Py_ssize_t *seen  # per trigger, 1 + the start of the last line it was found on (0: none yet)
    Hit *hits
    Py_ssize_t count, capacity
    Py_ssize_t known, line  # the line start holding `known` (the last matched position)
    Py_ssize_t group  # where the current line's hits begin in `hits`
    Py_ssize_t *digital  # the tables' plain triggers holding a digit, and where each one's first digit is
    Py_ssize_t digital_count
    Py_ssize_t *digit_at
    Kind *kinds  # the kinds of line read (`_scan_kinds`)
    Py_ssize_t kind_count, kind_capacity
    Lined *lined  # per line holding a trigger, its kind
    Py_ssize_t lined_count, lined_capacity
    double read_bytes, read_candidates  # what lines read lately (`_read_kind`) held, from their first candidate
    Py_ssize_t numbered_at, numbered  # a line start and its number: where `_scan_by_lines` left off (0, 0 at first)


cdef struct Kind:
    Py_ssize_t first, count  # its triggers: those of the `count` hits from `first` in the scan's `hits`


cdef struct Lined:
    Py_ssize_t start, kind
    Py_ssize_t number  # the line's number, where the pass counted it (`_scan_by_lines`), else -1


#: Slots of the cache of kinds of line read in one scan (`_scan_kinds`), by their hash: a power of two.
DEF _KIND_SLOTS = 1024


cdef struct KindSlot:
    uint64_t hash
    Py_ssize_t start, length  # the line the kind was read from
    Py_ssize_t kind  # 1 + its index in the scan's `kinds`; 0: the slot is free
    int digits  # whether a line alike to it may hold another trigger holding a digit, or UNKNOWN: not asked yet


cdef int _room(void **items, Py_ssize_t *capacity, Py_ssize_t count, size_t size) noexcept nogil:
    """Room for one more item of `size` bytes past `count` in `items[0]`, doubled when full; -1 when memory
    runs out."""
    cdef void *grown
    cdef Py_ssize_t wanted
    if count < capacity[0]:
        return 0
    wanted = capacity[0] * 2 if capacity[0] else 64
    grown = realloc(items[0], wanted * size)
    if grown == NULL:
        return -1
    items[0], capacity[0] = grown, wanted
    return 0


cdef int _add(Scan *s, Py_ssize_t start, Py_ssize_t index) noexcept nogil:
    """Append a hit; -1 when memory runs out."""
    if _room(<void **>&s.hits, &s.capacity, s.count, sizeof(Hit)) < 0:
        return -1
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


cdef int _record(Scan *s, Py_ssize_t pos, Py_ssize_t k) noexcept nogil:
    """Trigger `k` starts at `pos`: record it for its line, once, in trigger order; -1 on no memory."""
    cdef Py_ssize_t j, start = _line_start(s.buf, pos, s.known, s.line)
    s.known, s.line = pos, start
    if s.seen[k] == start + 1:
        return 0
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


cdef int _match_at(Scan *s, Py_ssize_t pos) noexcept nogil:
    """Record the plain triggers starting at `pos`; -1 on no memory."""
    cdef const unsigned char *p = s.buf
    cdef unsigned char head = FOLD[p[pos]]
    cdef int second = FOLD[p[pos + 1]] if pos + 1 < s.size else -1
    cdef Py_ssize_t c, k, length
    for c in range(s.first[head], s.first[head + 1]):
        if s.second[c] != second and s.second[c] != 256:
            continue
        k = s.cand[c]
        length = s.length[k]
        if length > 2 and (length > s.size - pos or not _same(p + pos + 2, s.text[k] + 2, length - 2)):
            continue
        if _record(s, pos, k) < 0:
            return -1
    return 0


cdef inline Py_ssize_t _next_candidate(const Scan *s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    """The first place from `i` up to `end` (excluded) where a plain trigger may start, else `end`: the pair
    of bytes there is marked, and the triple too where triples filter (at the buffer's last byte, only a
    one-byte trigger may start)."""
    cdef const unsigned char *p = s.buf
    cdef const unsigned char *pairs = s.pairs
    cdef const unsigned char *triples = s.triples
    cdef Py_ssize_t n = s.size, last = min(end, n - 1), j
    cdef unsigned int cur, following
    if i < last:
        cur = p[i]
        for j in range(i, last):
            following = p[j + 1]  # carried to the next byte's pair
            if _seldom(pairs[(cur << 8) | following]) and (triples == NULL or j + 2 >= n or triples[
                    _triple(FOLD[cur], FOLD[following], FOLD[p[j + 2]])]):
                return j
            cur = following
        i = last
    if i < end and i == n - 1 and pairs[<unsigned int>p[i] << 8]:
        return i
    return end


cdef int _scan_plain(Scan *s) noexcept nogil:
    """One pass for every plain trigger (non-empty, no b"\\n"); -1 on no memory."""
    cdef Py_ssize_t i = _next_candidate(s, 0, s.size)
    while i < s.size:
        if _match_at(s, i) < 0:
            return -1
        i = _next_candidate(s, i + 1, s.size)
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


cdef Py_ssize_t _new_kind(Scan *s, Py_ssize_t first, Py_ssize_t count) noexcept nogil:
    """A kind whose triggers are those of `count` hits from `first`: its index; -1 on no memory."""
    if _room(<void **>&s.kinds, &s.kind_capacity, s.kind_count, sizeof(Kind)) < 0:
        return -1
    s.kinds[s.kind_count].first, s.kinds[s.kind_count].count = first, count
    s.kind_count += 1
    return s.kind_count - 1


cdef int _add_line(Scan *s, Py_ssize_t start, Py_ssize_t kind, Py_ssize_t number=-1) noexcept nogil:
    """The line at `start` holds the triggers of `kind`; -1 on no memory."""
    if _room(<void **>&s.lined, &s.lined_capacity, s.lined_count, sizeof(Lined)) < 0:
        return -1
    s.lined[s.lined_count].start, s.lined[s.lined_count].kind, s.lined[s.lined_count].number = start, kind, number
    s.lined_count += 1
    return 0


cdef int _run(Scan *s) noexcept nogil:
    """The scan with an odd trigger: the plain triggers in one pass, then each odd one, the hits sorted by
    line; then each line's hits made a kind of its own, as `_by_kinds` reads `_scan_kinds`'s; -1 on no
    memory."""
    cdef Py_ssize_t k, i = 0, j, kind, plain_hits
    if _scan_plain(s) < 0:
        return -1
    plain_hits = s.count
    for k in range(s.count_triggers):
        if s.kind[k] == ODD and _scan_odd(s, k) < 0:
            return -1
    if s.count > plain_hits:
        qsort(s.hits, s.count, sizeof(Hit), _by_line_then_trigger)
    while i < s.count:
        j = i + 1
        while j < s.count and s.hits[j].start == s.hits[i].start:
            j += 1
        kind = _new_kind(s, i, j - i)
        if kind < 0 or _add_line(s, s.hits[i].start, kind) < 0:
            return -1
        i = j
    return 0


include "_scan_kinds.pxi"


cdef Py_ssize_t _newline_count(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """How many b"\\n" the `n` bytes at `p` hold."""
    cdef Py_ssize_t count = 0
    cdef const unsigned char *end = p + n
    cdef const unsigned char *q
    while p < end:
        q = <const unsigned char *>memchr(p, 10, end - p)
        if q == NULL:
            break
        count += 1
        p = q + 1
    return count


def trigger_lines(buf, triggers) -> dict:
    """Per start offset of a line of `buf` holding a trigger, the triggers found on it.

    Lines end at b"\\n"; a trigger matches whatever the case of the buffer's
    ASCII letters (it is given in lower case; other bytes match exactly). The
    triggers of a line come in the order of `triggers`, each once.
    """
    return _scan(buf, triggers, False)


def trigger_line_numbers(buf, triggers) -> tuple:
    """`trigger_lines` by line number: (the numbers of the lines holding a trigger, counted from 0, in line
    order; beside each, its triggers). The newlines are counted in the same pass over the hits."""
    return _scan(buf, triggers, True)


cdef object _scan(buf, triggers, bint numbers):
    """The scan of `buf`: a dictionary by line start, or with `numbers` two lists by line number. Without an odd
    trigger, each kind of line is read once (`_scan_kinds`) and its lines share one tuple of triggers."""
    cdef _Tables tables = _tables_for(triggers)
    cdef tuple found = tables.triggers
    cdef Py_ssize_t failed
    cdef Scan s
    cdef Py_buffer view
    cdef KindSlot *slots = NULL
    PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)  # bytes, or any contiguous buffer of bytes
    s.buf, s.size = <const unsigned char *>view.buf, view.len
    s.count_triggers, s.text, s.length, s.kind = tables.count, tables.text, tables.length, tables.kind
    s.cand, s.second, s.first, s.pairs = tables.cand, tables.second, tables.first, tables.pairs
    s.triples = tables.triples if tables.by_triples else NULL
    s.digital, s.digital_count, s.digit_at = tables.digital, tables.digital_count, tables.digit_at
    s.hits, s.count, s.capacity = NULL, 0, 0
    s.kinds, s.kind_count, s.kind_capacity = NULL, 0, 0
    s.lined, s.lined_count, s.lined_capacity = NULL, 0, 0
    s.numbered_at, s.numbered = 0, 0
    s.known, s.line, s.group = 0, 0, 0
    s.seen = <Py_ssize_t *>calloc(tables.count + 1, sizeof(Py_ssize_t))
    try:
        if s.seen == NULL:
            raise MemoryError()
        if not tables.odd:
            slots = <KindSlot *>calloc(_KIND_SLOTS, sizeof(KindSlot))
            if slots == NULL:
                raise MemoryError()
        if s.size >= _GIL_FREE_BYTES:
            with nogil:
                failed = _run(&s) if tables.odd else _scan_kinds(&s, slots)
        else:
            failed = _run(&s) if tables.odd else _scan_kinds(&s, slots)
        if failed:
            raise MemoryError()
        return _by_kinds(&s, found, numbers)
    finally:
        free(s.hits)
        free(s.seen)
        free(s.kinds)
        free(s.lined)
        free(slots)
        PyBuffer_Release(&view)


cdef inline tuple _held(Scan *s, tuple found, Py_ssize_t i, Py_ssize_t j):
    """The triggers of hits `i` to `j` (excluded): two or more (`_by_kinds` keeps one tuple per single trigger)."""
    cdef Py_ssize_t m
    return tuple([found[s.hits[m].index] for m in range(i, j)])


cdef object _by_kinds(Scan *s, tuple found, bint numbers):
    """The lines `_scan_kinds` (or `_run`) found, each with its kind's tuple of triggers (made once per kind, and
    one tuple for every kind that holds the same triggers: borg's 2,000 records, each a kind of its own, hold
    one set, which the classifier then groups them by identity, not by comparing 2,000 tuples). By number,
    two lists side by side: a pair per line cost a dense output's 15,000 lines 4 M instructions to make and free."""
    cdef Py_ssize_t i, kind, start, first, previous = 0, number = 0
    cdef list made = [None] * s.kind_count
    cdef list singles = [None] * len(found)  # per trigger, the tuple of it alone, once made
    cdef dict same = {}
    cdef list numbered = [], helds = []
    result = {}
    for i in range(s.lined_count):
        kind, start = s.lined[i].kind, s.lined[i].start
        held = made[kind]
        if held is None:
            first = s.kinds[kind].first
            if s.kinds[kind].count == 1:
                held = singles[s.hits[first].index]
                if held is None:
                    held = singles[s.hits[first].index] = (found[s.hits[first].index],)
            else:
                held = _held(s, found, first, first + s.kinds[kind].count)
                held = same.setdefault(held, held)
            made[kind] = held
        if numbers:
            # Counted where the pass went line by line; else the newlines since the line before.
            number = s.lined[i].number if s.lined[i].number >= 0 else number + _newline_count(
                s.buf + previous, start - previous)
            previous = start
            numbered.append(number)
            helds.append(held)
        else:
            result[start] = held
    return (numbered, helds) if numbers else result

