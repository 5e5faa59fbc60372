# Included by `yarp._templates`: `classed_alike`, which groups a scan's lines by kind (the same bytes, or
# the same but for digits where no entry reads them) so that each kind is classed once.


include "_alike.pxi"


cdef struct Reading:
    PyObject *items[4]  # a tuple of triggers' items, which the scan's tables hold
    Py_ssize_t count  # how many; 0: the slot is free
    bint zero  # whether `blind` says the tuple's lines read digits as `0`


cdef bint _blind(tuple triggers, dict blind, asked, Reading *read) except -1:
    """`blind[triggers]` (`asked(triggers)` when it has none), remembered by the identity of the items: the
    scan makes a new tuple per line, of the same few trigger objects."""
    cdef Py_ssize_t count = len(triggers), i
    cdef size_t key = count
    if count > 4:
        flag = blind.get(triggers)
        return bool(asked(triggers) if flag is None else flag)
    for i in range(count):
        key = key * 31 + (<size_t><PyObject *>triggers[i] >> 4)
    cdef Reading *slot = &read[key & 63]
    if slot.count == count:
        for i in range(count):
            if slot.items[i] != <PyObject *>triggers[i]:
                break
        else:
            return slot.zero
    flag = blind.get(triggers)
    slot.zero = bool(asked(triggers) if flag is None else flag)
    slot.count = count
    for i in range(count):
        slot.items[i] = <PyObject *>triggers[i]
    return slot.zero


cdef struct Kind:
    uint64_t hash
    Py_ssize_t entry  # 1 + the index in `found` of the kind's first line; 0: the slot is free
    bint zero  # whether the kind reads digits as `0`


#: Kinds a tuple of triggers remembers (`Shared`): `  |` and ` --> src/main.rs:5:20` hold one trigger set and
#: are two kinds, each checked before any hash.
DEF _SHARED_KINDS = 4
#: Lines of a tuple that may be of none of its kinds before its kinds are asked only while they match as
#: often as not.
DEF _SHARED_TRIALS = 16
#: Slots each table of `classed_alike` starts with: a power of two.
DEF _FIRST_SLOTS = 64


cdef struct Shared:
    PyObject *triggers  # a tuple of triggers some entry holds (held by `found`), or NULL: the slot is free
    bint zero  # whether `blind` says its lines read digits as `0` (`_blind`)
    Py_ssize_t matched, missed  # lines of it found of one of `entries`' kinds, and lines of none
    Py_ssize_t count  # how many kinds `entries` holds
    Py_ssize_t entries[_SHARED_KINDS]  # per kind of a line holding it, the index in `found` of its first line


cdef inline Shared *_shared(Shared *table, Py_ssize_t mask, PyObject *triggers) noexcept:
    """The slot of `table` holding `triggers`, else the free one it would take."""
    cdef size_t slot = ((<size_t>triggers >> 4) * 0x9E3779B97F4A7C15ULL >> 17) & mask
    while table[slot].triggers != NULL and table[slot].triggers != triggers:
        slot = (slot + 1) & mask
    return &table[slot]


cdef Kind *_kinds_grown(Kind *table, Py_ssize_t size) noexcept:
    """`table` (of `size` slots, freed) rehashed into four times the slots, or NULL on no memory."""
    cdef Py_ssize_t mask = 4 * size - 1, i, slot
    cdef Kind *grown = <Kind *>calloc(4 * size, sizeof(Kind))
    if grown != NULL:
        for i in range(size):
            if table[i].entry:
                slot = table[i].hash & mask
                while grown[slot].entry:
                    slot = (slot + 1) & mask
                grown[slot] = table[i]
    free(table)
    return grown


cdef Shared *_shared_grown(Shared *table, Py_ssize_t size) noexcept:
    """`table` (of `size` slots, freed) rehashed into four times the slots, or NULL on no memory."""
    cdef Py_ssize_t i
    cdef Shared *grown = <Shared *>calloc(4 * size, sizeof(Shared))
    if grown != NULL:
        for i in range(size):
            if table[i].triggers != NULL:
                _shared(grown, 4 * size - 1, table[i].triggers)[0] = table[i]
    free(table)
    return grown


cdef struct Text:
    const unsigned char *body  # a `yarp._lines.Lines`'s body and starts; NULL: `lines` is a list
    const long long *starts
    PyObject *lines  # the list


cdef inline const unsigned char *_line_at(Text *text, Py_ssize_t number, Py_ssize_t *length) noexcept:
    """Line `number`'s bytes and (in `length`) how many, without making the line."""
    cdef PyObject *line
    if text.body != NULL:
        length[0] = text.starts[number + 1] - 1 - text.starts[number]
        return text.body + text.starts[number]
    line = PyList_GET_ITEM(<object>text.lines, number)
    length[0] = PyBytes_GET_SIZE(<bytes>line)
    return <const unsigned char *>PyBytes_AS_STRING(<bytes>line)


cdef inline bint _of_kind(Text *text, const unsigned char *p, Py_ssize_t length, Py_ssize_t first, bint zero) noexcept:
    """Whether the `length` bytes at `p` are a line of the kind of line `first`: the same bytes, or with
    `zero` the same but for their digits."""
    cdef Py_ssize_t other_length
    cdef const unsigned char *other = _line_at(text, first, &other_length)
    return other_length == length and (_same_zeroed(other, p, length) if zero else memcmp(other, p, length) == 0)


def classed_alike(lines, list numbers, list holding, dict blind, asked, classes_of, bint kinds=True) -> tuple:
    """Per line number of `numbers` (a scan's, beside each the triggers `holding` names), the class
    `classes_of(lines, triggers)` gives its kind's first line, asked of every kind's first line at once, in
    line order; and with `kinds`, per line number, the number of the first line of its kind (None for a line
    `numbers` does not name; without `kinds`, None), as `yarp._templates_py.classed_alike` gives them.
    `lines` are a list of bytes or a `yarp._lines.Lines` (read without making its lines).

    Lines the same byte for byte are of one kind; where `blind[triggers]` is true (`asked(triggers)`
    fills it), so are lines the same but for their digits, each read as `0`. A line's triggers are the
    scan's, which follow from its bytes: lines alike hold the same ones. A line holding the very tuple
    of triggers earlier lines held is first checked against the kinds of up to four of them (the compiled
    scan hands the lines holding one set of triggers one tuple), while such checks pay; only when it is of
    none of them is the line hashed."""
    cdef Py_ssize_t n = len(numbers), e, slot, k, length, number, w
    # Both tables grow as they fill, at most half full: a dense output's 15,000 lines are a few dozen kinds.
    cdef Py_ssize_t size = _FIRST_SLOTS, held = 0, shared_size = _FIRST_SLOTS, shared_held = 0
    cdef Kind *table
    cdef Shared *tuples
    cdef Shared *shared
    cdef Reading read[64]
    cdef Text text
    cdef const unsigned char *p
    cdef uint64_t h
    cdef bint zero, matched
    cdef array starts
    cdef list out = [None] * n
    cdef list asked_lines = [], asked_triggers = []
    cdef Py_ssize_t *of  # per entry, the entry of its kind's first line (its own, for a first)
    cdef list firsts = [None] * len(lines) if kinds else None
    if len(holding) != n:
        raise ValueError("one tuple of triggers per line number")
    if type(lines) is not list and not hasattr(lines, "starts"):
        lines = list(lines)  # any other sequence of lines
    if type(lines) is list:
        text.body, text.starts, text.lines = NULL, NULL, <PyObject *>lines
    else:
        starts = lines.starts
        text.body, text.starts = <const unsigned char *>PyBytes_AS_STRING(<bytes>lines.body), starts.data.as_longlongs
        text.lines = NULL
    memset(read, 0, sizeof(read))
    table = <Kind *>calloc(size, sizeof(Kind))
    tuples = <Shared *>calloc(shared_size, sizeof(Shared))
    of = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    if table == NULL or tuples == NULL or of == NULL:
        free(table)
        free(tuples)
        free(of)
        raise MemoryError()
    try:
        for e in range(n):
            given = <object>PyList_GET_ITEM(numbers, e)  # kept as the object: no number made per line
            number, triggers = given, <tuple>PyList_GET_ITEM(holding, e)
            p = _line_at(&text, number, &length)
            # The compiled scan hands the lines holding one set of triggers one tuple: what `blind` says of it
            # is asked once, and the kinds of the first lines that held it are the likely ones, checked
            # before any hash.
            shared = _shared(tuples, shared_size - 1, <PyObject *>triggers)
            if shared.triggers == NULL:
                shared.triggers, shared.zero = <PyObject *>triggers, _blind(triggers, blind, asked, read)
                shared_held += 1
            zero = shared.zero
            matched = False
            # Asked while it pays: borg's 2,000 records, each a kind of its own, are each only hashed.
            if shared.missed < _SHARED_TRIALS or shared.missed <= shared.matched:
                for w in range(shared.count):
                    k = shared.entries[w]
                    first = <object>PyList_GET_ITEM(numbers, k)
                    if _of_kind(&text, p, length, first, zero):
                        matched = True
                        break
                shared.matched += matched
                shared.missed += not matched
            if matched:
                of[e] = k
                if kinds:
                    firsts[number] = first
                continue
            h = _hash(p, length, zero)
            slot = h & (size - 1)
            while table[slot].entry:
                k = table[slot].entry - 1
                if table[slot].hash == h and table[slot].zero == zero:
                    first = <object>PyList_GET_ITEM(numbers, k)
                    if _of_kind(&text, p, length, first, zero):
                        of[e] = k
                        if kinds:
                            firsts[number] = first
                        break
                slot = (slot + 1) & (size - 1)
            else:
                k = of[e] = e
                table[slot].hash, table[slot].entry, table[slot].zero = h, e + 1, zero
                asked_lines.append(lines[number])
                asked_triggers.append(triggers)
                if kinds:
                    firsts[number] = given
                held += 1
                if 2 * held > size:
                    table = _kinds_grown(table, size)
                    size *= 4
                    if table == NULL:
                        raise MemoryError()
            if shared.count < _SHARED_KINDS:
                shared.entries[shared.count] = k
                shared.count += 1
            if 2 * shared_held > shared_size:
                tuples = _shared_grown(tuples, shared_size)
                shared_size *= 4
                if tuples == NULL:
                    raise MemoryError()
        answers = classes_of(asked_lines, asked_triggers) if asked_lines else []
        if len(answers) != len(asked_lines):
            raise ValueError("classes_of must give one class per line asked")
        k = 0
        for e in range(n):  # a kind's first entry comes before the others of its kind
            if of[e] == e:
                out[e] = answers[k]
                k += 1
            else:
                out[e] = out[of[e]]
        return out, firsts
    finally:
        free(table)
        free(tuples)
        free(of)
