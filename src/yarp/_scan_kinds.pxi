# Included by `yarp._scan`: its pass that reads each kind of line once (`_scan_kinds`), searching a line
# for its first candidate pair and then hashing it, or, where most lines are alike, hashing each line
# first (`_scan_by_lines`). It reads the `Scan` and `KindSlot` of `_scan.pyx` and the hashes of
# `_alike.pxi`.


cdef Py_ssize_t _read_kind(Scan *s, Py_ssize_t start, Py_ssize_t pos, Py_ssize_t end) noexcept nogil:
    """Read the line [start, end) for the plain triggers from `pos`, where its first candidate pair is, as
    `_scan_plain` reads the buffer, into a new kind: its index; -1 on no memory."""
    cdef Py_ssize_t i = pos, first = s.count
    s.known, s.line = pos, start
    s.read_bytes += end - pos
    while i < end:
        s.read_candidates += 1
        if _match_at(s, i) < 0:
            return -1
        i = _next_candidate(s, i + 1, end)
    return _new_kind(s, first, s.count - first)


cdef inline bint _same_but_digits(const unsigned char *p, const unsigned char *t, Py_ssize_t length) noexcept nogil:
    """Whether `p` folded to lower case starts with `t`, any ASCII digit matching any."""
    cdef Py_ssize_t j
    for j in range(length):
        if FOLD[p[j]] != t[j] and not (48 <= p[j] <= 57 and 48 <= t[j] <= 57):
            return False
    return True


cdef bint _reads_digits(Scan *s, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Whether a line alike to [start, end) may hold a trigger holding a digit that this one does not, or
    the other way round: one matches here with any digit read as any. Lines alike hold their digits in the
    same places, so a match puts a trigger's first digit on one of this line's digits."""
    cdef const unsigned char *p = s.buf
    cdef Py_ssize_t i, m, k, at
    if s.digital_count == 0:
        return False
    for i in range(start, end):
        if not 48 <= p[i] <= 57:
            continue
        for m in range(s.digital_count):
            k = s.digital[m]
            at = i - s.digit_at[k]
            if at >= start and at + s.length[k] <= end and _same_but_digits(p + at, s.text[k], s.length[k]):
                return True
    return False


#: What a line costs (`_scan_kinds`), in nanoseconds on the machine it was measured on: read from its first
#: candidate pair, per byte and per candidate pair it holds (`_READ_BYTE`, `_READ_CANDIDATE`); hashed and
#: checked against a line alike, per byte of the whole line (`_ALIKE_BYTE`).
DEF _READ_BYTE = 0.7
DEF _READ_CANDIDATE = 50.0
DEF _ALIKE_BYTE = 1.2
#: Lines both read and tried against the kinds at first, to learn what each costs; after them, every
#: `_RETRY`-th line is tried, so that a run of lines alike is found whatever came before it.
DEF _TRIAL_LINES = 32
DEF _RETRY = 16
#: Past this many lines tried (or bytes read), the older half of what they told weighs half.
DEF _LATELY = 256
#: While at least this share of the lines tried are alike, each line is hashed before it is searched.
DEF _BY_LINES_SHARE = 0.75
DEF _LATELY_BYTES = 65536


cdef inline KindSlot *_tried(KindSlot *slots, const unsigned char *p, Py_ssize_t start, Py_ssize_t end,
                             uint64_t *h, bint *alike, double *tried, double *hits) noexcept nogil:
    """The slot of `slots` the line [start, end) of `p` hashes to (its hash into `h`), and in `alike` whether it
    holds a kind of a line alike (`_alike.pxi`); the line counted in `tried`, and in `hits` when alike (past
    `_LATELY` tried, the older half of both weighs half)."""
    cdef KindSlot *slot
    h[0] = _hash(p + start, end - start, True)
    slot = &slots[h[0] & (_KIND_SLOTS - 1)]
    alike[0] = (slot.kind and slot.hash == h[0] and slot.length == end - start
                and _same_zeroed(p + slot.start, p + start, end - start))
    tried[0] += 1
    hits[0] += alike[0]
    if tried[0] >= _LATELY:
        tried[0], hits[0] = tried[0] / 2, hits[0] / 2
    return slot


cdef inline bint _holds_its_triggers(Scan *s, KindSlot *slot, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Whether the line [start, end), alike to the kind's line in `slot`, holds that kind's triggers: unless a
    trigger holding a digit may tell them apart (`_reads_digits`, asked once a kind) and their bytes differ."""
    if slot.digits == UNKNOWN:
        slot.digits = _reads_digits(s, slot.start, slot.start + slot.length)
    return not (slot.digits and memcmp(s.buf + slot.start, s.buf + start, end - start) != 0)


cdef inline void _read_as(Scan *s, KindSlot *slot, bint alike, uint64_t h, Py_ssize_t start, Py_ssize_t end,
                          Py_ssize_t kind) noexcept nogil:
    """The line [start, end) was read into `kind`: kept in `slot` (when tried and not alike to its kind), and
    past `_LATELY_BYTES` read, the older half of what lines read held weighs half."""
    if slot != NULL and not alike:
        slot.hash, slot.start, slot.length, slot.kind, slot.digits = h, start, end - start, kind + 1, UNKNOWN
    if s.read_bytes >= _LATELY_BYTES:
        s.read_bytes, s.read_candidates = s.read_bytes / 2, s.read_candidates / 2


cdef int _scan_kinds(Scan *s, KindSlot *slots) noexcept nogil:
    """One pass for every plain trigger, as `_scan_plain`, but each kind of line read once: at a line's first
    candidate pair, a line alike (`_alike.pxi`) to one read before in the scan, and still in the cache
    `slots`, holds the same triggers, unless a trigger holding a digit may tell them apart (`_reads_digits`)
    and their bytes differ; the pass goes on at the next line.

    A line is tried against the kinds only where that costs less than reading it, as far as the lines
    before tell: a log's worded lines, whose first candidate pair is near their end, or that are seldom
    alike, are read as `_scan_plain` reads them. Fills `s.lined`; -1 on no memory."""
    cdef const unsigned char *p = s.buf
    cdef const unsigned char *newline
    cdef Py_ssize_t i = 0, n = s.size, start, end, kind, known = 0, candidates = 0
    cdef double tried = 0, hits = 0
    cdef uint64_t h
    cdef KindSlot *slot
    cdef bint alike, trial
    s.read_bytes = s.read_candidates = 0
    while True:
        i = _next_candidate(s, i, n)
        if i >= n:
            return 0
        newline = <const unsigned char *>_memrchr(p + known, 10, i - known)  # `known` starts a line
        start = known if newline == NULL else newline - p + 1
        newline = <const unsigned char *>memchr(p + i, 10, n - i)
        end = n if newline == NULL else newline - p
        candidates += 1
        slot = NULL
        alike = False
        trial = tried < _TRIAL_LINES
        if trial or candidates % _RETRY == 0 or hits * (end - i) * (
                _READ_BYTE + _READ_CANDIDATE * s.read_candidates / (s.read_bytes + 1)) > _ALIKE_BYTE * (
                end - start) * tried:
            slot = _tried(slots, p, start, end, &h, &alike, &tried, &hits)
        if alike and not trial and _holds_its_triggers(s, slot, start, end):
            kind = slot.kind - 1
        else:
            kind = _read_kind(s, start, i, end)
            if kind < 0:
                return -1
            _read_as(s, slot, alike, h, start, end, kind)
        if s.kinds[kind].count and _add_line(s, start, kind) < 0:
            return -1
        i = known = end + 1
        if not trial and hits >= _BY_LINES_SHARE * tried:
            i = known = _scan_by_lines(s, slots, known, &tried, &hits)
            if known < 0:
                return -1


cdef Py_ssize_t _scan_by_lines(Scan *s, KindSlot *slots, Py_ssize_t start, double *tried, double *hits) noexcept nogil:
    """`_scan_kinds` line by line from the line at `start`, each line hashed first, while the lines tried are
    mostly alike (`_BY_LINES_SHARE`): a line alike to one read before takes its kind unsearched, as where a
    candidate pair is found first, and a line without a candidate pair is a kind holding no trigger. The start
    of the line where the pass goes back to searching first; `s.size` at the end; -1 on no memory."""
    cdef const unsigned char *p = s.buf
    cdef const unsigned char *newline
    cdef Py_ssize_t n = s.size, end, i, kind
    cdef uint64_t h
    cdef KindSlot *slot
    cdef bint alike
    # Each line's number, counted on from the last line this pass numbered: its lines need no count after it.
    cdef Py_ssize_t number = s.numbered + _newline_count(p + s.numbered_at, start - s.numbered_at)
    while start < n and hits[0] >= _BY_LINES_SHARE * tried[0]:
        newline = <const unsigned char *>memchr(p + start, 10, n - start)
        end = n if newline == NULL else newline - p
        slot = _tried(slots, p, start, end, &h, &alike, tried, hits)
        if alike and _holds_its_triggers(s, slot, start, end):
            kind = slot.kind - 1
        else:
            i = _next_candidate(s, start, end)
            kind = _new_kind(s, s.count, 0) if i >= end else _read_kind(s, start, i, end)
            if kind < 0:
                return -1
            _read_as(s, slot, alike, h, start, end, kind)
        if s.kinds[kind].count and _add_line(s, start, kind, number) < 0:
            return -1
        start = end + 1
        number += 1
    s.numbered_at, s.numbered = min(start, n), number
    return min(start, n)
