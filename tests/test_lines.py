"""A text's lines on both implementations: the compiled `Lines` crossed with its twin, `bytes.split`.

`yarp._lines_py.split_lines` is `body.split(b"\\n")`; `yarp._lines.Lines` must
read the same through every way the view reads lines (length, an index from
either end, slices with a step, iteration both ways), also where newlines sit
at a word's edges, where the text is empty, all newlines or has none, and
where a byte next to a newline borrows in the eight-bytes-at-a-time search.
"""

from __future__ import annotations

import kernel_impls
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yarp.view import lines as selected


@pytest.fixture(params=["c", "py"], scope="module")
def impl(request):
    """The compiled kernel (`c`) and its pure-Python twin (`py`), one after the other."""
    return kernel_impls.load("_lines", request.param)


def _read_every_way(lines) -> tuple:
    count = len(lines)
    return (count, list(lines), list(reversed(lines)), [lines[i] for i in range(-count, count)],
            lines[::3], lines[1:-1], lines[-5:], lines[::-2], lines[count:], lines[:0])


def test_the_lines_read_as_the_text_split_at_newlines(impl):
    lines = impl.split_lines(b"one\n\ntwo \r\nthree")
    assert list(lines) == [b"one", b"", b"two \r", b"three"]
    assert len(lines) == 4 and lines[-1] == b"three" and lines[1:3] == [b"", b"two \r"]
    assert list(impl.split_lines(b"")) == [b""] and list(impl.split_lines(b"\n\n")) == [b"", b"", b""]
    with pytest.raises(IndexError):
        lines[4]
    with pytest.raises(IndexError):
        lines[-5]


def test_the_lines_hold_their_text_and_where_each_line_starts():
    compiled = kernel_impls.both("_lines")[1]
    lines = compiled.split_lines(b"alpha\nbeta")
    assert lines[0] == lines[0] and type(lines[0]) is bytes
    assert lines.body == b"alpha\nbeta" and list(lines.starts) == [0, 6, 11]


# Bytes a word-at-a-time search for b"\n" (0x0A) can mistake for one: its neighbours and those that borrow.
_BYTES = st.sampled_from([b"\n", b"\x0b", b"\x09", b"\x0a\x0b", b"\x00", b"\x01", b"\x80", b"\x8a", b"\xff", b"a",
                          b"z" * 9])


@settings(max_examples=2000, deadline=None)
@given(st.lists(_BYTES, max_size=40), st.binary(max_size=30))
def test_the_compiled_lines_are_the_twins(pieces, tail):
    twin, compiled = kernel_impls.both("_lines")
    body = b"".join(pieces) + tail
    assert _read_every_way(compiled.split_lines(body)) == _read_every_way(twin.split_lines(body))
    # The lines that start with a prefix past their blanks, of the lines and of a list of them.
    count = len(twin.split_lines(body))
    for prefixes in ((b"a",), (b"\x0b", b"zz"), (b"",)):
        for first, stop in ((0, count), (1, count - 1), (-1, count + 2), (count, 0)):
            expected = [i for i, line in enumerate(body.split(b"\n"))
                        if first <= i < stop and line.lstrip().startswith(prefixes)]
            for impl, lines in ((compiled, compiled.split_lines(body)), (compiled, twin.split_lines(body)),
                                (twin, twin.split_lines(body))):
                assert impl.lines_starting(lines, first, stop, prefixes) == expected


def test_the_compiled_lines_are_the_twins_on_a_long_text():
    twin, compiled = kernel_impls.both("_lines")
    body = b"".join(b"%d\n" % k if k % 5 else b"x" * k + b"\n\n" for k in range(20000))
    assert _read_every_way(compiled.split_lines(body)) == _read_every_way(twin.split_lines(body))


def test_the_selector_takes_the_compiled_kernel_unless_told_not_to():
    from yarp import _compat

    assert selected.IMPLEMENTATION == ("py" if _compat.NO_EXTENSIONS else "c")


def test_a_line_asked_for_again_is_the_line_made_before():
    # The view keys what a line says by its bytes: a line made once keeps its hash for every walk that asks.
    compiled = kernel_impls.both("_lines")[1]
    lines = compiled.split_lines(b"alpha\nbeta\ngamma")
    assert lines[1] is lines[1] is lines[-2] is lines[0:3][1]
    assert list(lines) == [b"alpha", b"beta", b"gamma"] and next(iter(lines)) is not lines[0]


#: Pieces of lines a heading's walk reads: indents, carriage returns, banners' signs and words, paths.
_HEAD_PIECES = st.sampled_from([b" ", b"\t", b"\r", b"\x0b", b"\x0c", b"***", b"==", b"=", b"#", b"-", b">>>",
                                b"In ", b": In ", b": (in ", b")", b":", b"a", b"src/a.js", b".", b"1", b"x.y",
                                b"\xe2\x9c\x96"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.lists(_HEAD_PIECES, max_size=8).map(b"".join), min_size=1, max_size=30), st.data())
def test_indents_and_banner_candidates_are_the_twins_and_every_banner_is_a_candidate(lines, data):
    from yarp.view import ranking

    twin, compiled = kernel_impls.both("_lines")
    body = b"\n".join(lines)
    first = data.draw(st.integers(-2, len(lines) + 1))
    stop = data.draw(st.integers(-2, len(lines) + 2))
    for impl, held in ((compiled, compiled.split_lines(body)), (compiled, lines), (twin, lines)):
        assert impl.line_indents(held, first, stop) == [twin.indent(line) for line in lines[max(0, first):max(0, stop)]]
        assert impl.banner_candidates(held, first, stop) == [
            i for i in range(max(0, first), min(stop, len(lines))) if twin.may_be_banner(lines[i])]
        assert impl.lines_at_margin(held, first, stop) == [
            i for i in range(max(0, first), min(stop, len(lines))) if lines[i][:1] not in (b" ", b"\t")]
    for line in lines:
        assert compiled.indent(line) == twin.indent(line)
        for impl, held in ((compiled, compiled.split_lines(body)), (compiled, lines), (twin, lines)):
            assert impl.count_line(held, first, stop, line) == lines[max(0, first):max(0, stop)].count(line)
        # A heading's walk asks only the candidates whether they are banners: none is left out.
        if ranking._maybe_banner(line) and ranking.is_banner(line):
            assert twin.may_be_banner(line)
    assert twin.indent(b"\r\r \t x") == 9 and twin.indent(b"\t\t") == 16 and twin.indent(b"x  ") == 0


# --- lines counted (`line_counts`, `lines_in`) --------------------------------------------------------------


def test_lines_are_counted_in_the_order_first_read(impl):
    counts = impl.line_counts(b"ok\nfailed\nok\n\nok")
    assert counts == {b"ok": 3, b"failed": 1, b"": 1} and list(counts) == [b"ok", b"failed", b""]
    assert impl.line_counts(b"") == {b"": 1} and impl.line_counts(b"\n") == {b"": 2}
    assert impl.lines_in(b"ok\nfailed\nok\n\nok", {b"failed", b"", b"missing"}) == [1, 3]
    assert impl.lines_in(b"ok", set()) == []


#: Lines of a report that say few things, some longer than a word of eight bytes, some alike but for their end.
_SAID = st.sampled_from([b"", b"a", b"ok", b"Status: Running", b"Status: Runnin", b"Status: Running!", b"x" * 8,
                         b"x" * 9, b"x" * 16, b"\x00" * 8, b"\x00" * 7, b"\xff\r", b"Check: CKV_AWS_ ok"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(_SAID, st.binary(max_size=20).map(lambda line: line.replace(b"\n", b""))), max_size=120),
       st.data())
def test_the_compiled_line_counts_are_the_twins(lines, data):
    twin, compiled = kernel_impls.both("_lines")
    text = b"\n".join(lines)
    counts = compiled.line_counts(text)
    assert counts == twin.line_counts(text) and list(counts) == list(twin.line_counts(text))
    keys = set(data.draw(st.lists(st.one_of(_SAID, st.sampled_from(lines or [b"q"])), max_size=5)))
    assert compiled.lines_in(text, keys) == twin.lines_in(text, keys)
