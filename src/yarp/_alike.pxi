# Included by the kernels that tell lines alike or the same (`yarp._templates`, `yarp._scan`, `yarp._shapes`,
# `yarp._lines`): two lines are alike when they are the same but for their digits, each read as `0`. Eight
# bytes at a time.

from libc.stdint cimport uint64_t
from libc.string cimport memcmp, memcpy


cdef uint64_t _HIGH = 0x8080808080808080ULL
cdef uint64_t _ONES = 0x0101010101010101ULL


cdef inline uint64_t _zeroed(uint64_t x) noexcept nogil:
    """Eight bytes with each ASCII digit as `0`: a byte below 0x80 from `0` up to but not `:` keeps its
    high nibble only (no carry crosses a byte: each is at least 0x80 when subtracted from)."""
    cdef uint64_t digit = (((x | _HIGH) - _ONES * 0x30) & ~((x | _HIGH) - _ONES * 0x3A) & ~x & _HIGH) >> 7
    return x & ~(digit * 0x0F)


cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define YARP_LOADS_LOW_FIRST 0
    #else
    #define YARP_LOADS_LOW_FIRST 1
    #endif
    """
    bint YARP_LOADS_LOW_FIRST  # whether a load puts the first byte lowest, as `_word` builds a short word


cdef inline uint64_t _word(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """Up to eight bytes at `p` (`n` of them), the rest zero."""
    cdef uint64_t x = 0
    cdef Py_ssize_t i
    if n >= 8:
        memcpy(&x, p, 8)  # one load
    else:
        for i in range(n):
            x |= (<uint64_t>p[i]) << (8 * i)
    return x


cdef inline uint64_t _last(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """`_word(p + i, n - i)` for the last `n - i` bytes (one to seven) of the `n` at `p`: where `n` is eight
    or more, one load of the eight bytes that end at `p + n`, shifted, not a loop a byte at a time."""
    cdef uint64_t x
    if n >= 8 and YARP_LOADS_LOW_FIRST:
        memcpy(&x, p + n - 8, 8)
        return x >> (8 * (8 - (n - i)))
    return _word(p + i, n - i)


#: Where a process's hashes of lines start: Python's own, which each process draws at random (unless
#: PYTHONHASHSEED fixes it), so no output can be written ahead to fill one probe chain or cache slot.
cdef uint64_t _SEED = <uint64_t>hash(b"yarp lines alike")


cdef inline uint64_t _mix(uint64_t h, uint64_t x) noexcept nogil:
    return ((h << 23 | h >> 41) ^ x) * 0xFF51AFD7ED558CCDULL


cdef uint64_t _hash(const unsigned char *p, Py_ssize_t n, bint zero) noexcept nogil:
    """A hash of `n` bytes, with each digit read as `0` when `zero`; the two readings hash apart. Four
    lanes take 32 bytes at a time, so that no multiply waits for the one before it."""
    cdef uint64_t h = (<uint64_t>n + _SEED) * 0x9E3779B97F4A7C15ULL + zero, a = h ^ 1, b = h ^ 2, c = h ^ 3, x
    cdef Py_ssize_t i = 0
    while i + 32 <= n:
        if zero:
            h, a = _mix(h, _zeroed(_word(p + i, 8))), _mix(a, _zeroed(_word(p + i + 8, 8)))
            b, c = _mix(b, _zeroed(_word(p + i + 16, 8))), _mix(c, _zeroed(_word(p + i + 24, 8)))
        else:
            h, a = _mix(h, _word(p + i, 8)), _mix(a, _word(p + i + 8, 8))
            b, c = _mix(b, _word(p + i + 16, 8)), _mix(c, _word(p + i + 24, 8))
        i += 32
    while i + 8 <= n:
        x = _word(p + i, 8)
        h = _mix(h, _zeroed(x) if zero else x)
        i += 8
    if i < n:
        x = _last(p, i, n)
        h = _mix(h, _zeroed(x) if zero else x)
    h = _mix(_mix(_mix(h, a), b), c)
    return h ^ (h >> 29)


cdef bint _same_zeroed(const unsigned char *a, const unsigned char *b, Py_ssize_t n) noexcept nogil:
    """Whether `n` bytes at `a` and at `b` are the same, each digit read as `0`."""
    cdef Py_ssize_t i = 0
    cdef uint64_t x, y
    if n > 32 and memcmp(a, b, n) == 0:  # a long line most often the same bytes: at the C library's speed
        return True
    while i + 8 <= n:
        x, y = _word(a + i, 8), _word(b + i, 8)
        if x != y and _zeroed(x) != _zeroed(y):
            return False
        i += 8
    if i < n:
        x, y = _last(a, i, n), _last(b, i, n)
        if x != y and _zeroed(x) != _zeroed(y):
            return False
    return True
