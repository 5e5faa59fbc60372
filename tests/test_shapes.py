"""Line shapes and table rows: their meaning on both implementations, the compiled kernel crossed with its twin.

`yarp._shapes_py` gives each line's shape (two regular-expression substitutions)
and the rows of a table that break its columns' rule (`bytes.split` per line);
`yarp._shapes` must return the same for every text, lines alike but for their
digits and more kinds of lines than its caches hold among them.
"""

from __future__ import annotations

import kernel_impls
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yarp import _compat
from yarp.view import rarity, shapes


@pytest.fixture(params=["c", "py"], scope="module")
def impl(request):
    """The compiled kernel (`c`) and its pure-Python twin (`py`), one after the other."""
    return kernel_impls.load("_shapes", request.param)


# --- the selection ------------------------------------------------------------------


def test_extension_loaded_in_a_normal_install():
    """Fails when the compiled kernel silently did not load."""
    if _compat.NO_EXTENSIONS:
        pytest.skip("YARP_NO_EXTENSIONS is set")
    assert shapes.IMPLEMENTATION == "c"


def test_rarity_shapes_with_the_selected_implementation():
    assert rarity.line_shapes is shapes.line_shapes and rarity.rows_breaking is shapes.rows_breaking
    assert shapes.IMPLEMENTATION == ("py" if _compat.NO_EXTENSIONS else "c")


def test_no_extensions_switch_selects_the_twin():
    assert kernel_impls.selected_with_the_switch("yarp.view.shapes") == "py"


# --- the meaning, on both; crossed ------------------------------------------------------


def test_a_line_s_shape_is_its_runs_of_word_characters_and_of_each_symbol(impl):
    data = b" src/pkg5/mod_005.py  |  10 ----------\n\n assets/logo.bin | Bin 0 -> 76800 bytes\n\xc3\xa9t\xc3\xa9 ok"
    assert impl.line_shapes(data) == [b" w/w/w.w | w -", b"", b" w/w.w | w w -> w w", b"\xc3\xa9w\xc3\xa9 w"]
    assert impl.line_shapes(b"") == [b""] and impl.line_shapes(b"\n") == [b"", b""]
    assert impl.line_shapes(b"a-" * 300) == [(b"w-" * 300)[:impl.SHAPE_BYTES]]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"Z9_", b" ", b"\t", b"-", b"--", b"+", b"|", b"\n", b"\xc3\xa9", b"w", b"ww", b"FAIL", b"F", b"ABCDEFGHI", b"A_B"]),
                max_size=400).map(b"".join))
def test_the_compiled_shapes_answer_as_the_twin(data):
    twin, compiled = kernel_impls.both("_shapes")
    assert compiled.line_shapes(data) == twin.line_shapes(data)


#: Lines with a number put in place of `#`: alike but for their digits, as most lines of a long output are.
_NUMBERED = [b"FAIL # of #", b"A#B ok", b"  ##--## |  #", b"X# Y Z", b"#", b"", b"ABCDEFG# | PASS |", b"v#.#.# -> v#"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_NUMBERED), st.integers(0, 10 ** 9)), max_size=300))
def test_lines_alike_but_for_digits_are_shaped_as_the_twin_shapes_them(rows):
    twin, compiled = kernel_impls.both("_shapes")
    data = b"\n".join(kind.replace(b"#", b"%d" % number) for kind, number in rows)
    assert compiled.line_shapes(data) == twin.line_shapes(data)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_NUMBERED), st.integers(0, 10 ** 9), st.booleans()), max_size=300))
def test_lines_named_alike_take_their_firsts_shape_as_the_twin_shapes_them(rows):
    # `firsts` (`classed_alike`'s) names the first line of each scanned line's kind; lines it does not name
    # (None, or past its end) are shaped as before.
    twin, compiled = kernel_impls.both("_shapes")
    lines = [kind.replace(b"#", b"%d" % number) for kind, number, _ in rows]
    first_of: dict[bytes, int] = {}
    firsts = [first_of.setdefault(kind, number) if scanned else None
              for number, (kind, _, scanned) in enumerate(rows)][:max(0, len(rows) - 2)]
    data = b"\n".join(lines)
    assert compiled.line_shapes(data, firsts) == twin.line_shapes(data, firsts) == twin.line_shapes(data)


def test_short_lines_are_shaped_by_their_bytes_and_length_as_the_twin_shapes_them():
    # Lines of up to eight bytes are keyed by their bytes, digits read as `0`, and their length: an empty
    # line and a NUL are one word but two lines; `A1` and `A9` are alike, `AB` is a word of capitals.
    twin, compiled = kernel_impls.both("_shapes")
    lines = [b"", b"\x00", b"A1", b"A9", b"AB", b"12345678", b"123456789", b"y", b"\x00\x00", b"ABCDEFGH", b"ABCDEFG1"]
    for count in (1, 3):
        data = b"\n".join(lines * count)
        assert compiled.line_shapes(data) == twin.line_shapes(data)
    assert compiled.line_shapes(b"\n\x00\n\x00\x00") == [b"", b"\x00", b"\x00"]
    # One byte and up to seven NULs: lines of one word (their bytes zero-filled to eight) and lengths apart.
    data = b"\n".join(bytes([first]) + b"\x00" * nuls for first in range(256) if first != 10 for nuls in range(8))
    assert compiled.line_shapes(data) == twin.line_shapes(data)
    # Thousands of short kinds share the table's slots and push each other out.
    data = b"\n".join(bytes((33 + k % 90, 33 + k // 90 % 90)) for k in range(8100))
    assert compiled.line_shapes(data) == twin.line_shapes(data)


def test_thousands_of_kinds_of_lines_are_shaped_as_the_twin_shapes_them():
    # More kinds than the compiled kernel's cache holds: kinds share its slots and push each other out.
    twin, compiled = kernel_impls.both("_shapes")
    name = [bytes(65 + k // 26 ** place % 26 for place in range(3)) for k in range(6000)]  # AAA, BAA, …
    data = b"\n".join(b"%s %d-%s | %s" % (name[k], k, b"-" * (k % 7), name[k].lower()) for k in range(6000))
    assert compiled.line_shapes(data) == twin.line_shapes(data)


def test_a_short_word_of_capitals_keeps_its_letters_in_a_shape(impl):
    data = b"Inventory Check 4-51   | FAIL |\n    F 73:0 dispatch_251 - F (67)\nOK_1 ABCDEFGHI Ab"
    assert impl.line_shapes(data) == [b"w w w-w | FAIL |", b" F w:w w - F (w)", b"w w w"]


def test_a_table_s_rows_that_break_its_columns_rule_are_numbered_and_the_others_counted(impl):
    data = (b'127.0.0.1 - - "GET /a HTTP/1.1" 200 17\n127.0.0.1 - - "GET /b HTTP/1.1" 500 20\n\n'
            b"a line of another width\n  127.0.0.1\t- -  \"GET /c HTTP/1.1\" 200 9  \r\n10.0.0.9 - - \"GET /d HTTP/1.1\" 200 3")
    rule = ((0, b"127.0.0.1"), (3, b'"GET'), (5, b'HTTP/1.1"'), (6, b"200"))
    # Rows of 8 fields: lines 0, 1, 4 and 5; line 1 has another status, line 5 another address.
    # Per rule pair, the rows of 8 fields that do not hold it.
    assert impl.rows_breaking(data, 8, rule) == (2, [1, 5], [1, 0, 0, 1])
    assert impl.rows_breaking(data, 8, ()) == (4, [], [])
    assert impl.rows_breaking(b"", 1, ((0, b"x"),)) == (0, [], [0])
    assert impl.rows_breaking(b"x\n", 1, ((0, b"x"),)) == (1, [], [0])
    # One position asked for two values: no row holds both. A position outside the row asks nothing.
    assert impl.rows_breaking(b"a b\na c", 2, ((0, b"a"), (0, b"b"), (2, b"z"))) == (0, [0, 1], [0, 2, 0])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"b", b"ab", b" ", b"  ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b"\xc3\xa9"]),
                max_size=200).map(b"".join),
       st.integers(min_value=0, max_value=5),
       st.lists(st.tuples(st.integers(min_value=-1, max_value=5), st.sampled_from([b"a", b"b", b"ab", b"\xc3\xa9"])),
                max_size=4).map(tuple))
def test_the_compiled_breaking_rows_answer_as_the_twin(data, width, rule):
    twin, compiled = kernel_impls.both("_shapes")
    assert compiled.rows_breaking(data, width, rule) == twin.rows_breaking(data, width, rule)


def test_lines_that_differ_in_one_byte_anywhere_are_not_shaped_alike():
    # Lines are told alike eight bytes at a time, a line's last bytes by one load of the eight that end it:
    # lines of every length that differ in one byte, wherever it is, are each shaped as the twin shapes them.
    twin, compiled = kernel_impls.both("_shapes")
    for length in range(1, 41):
        base = b"abcdefghij1klmnopqrs2tuvwxyz3ABCDEFGHIJ4KLMN"[:length]
        lines = [base] + [base[:at] + b":" + base[at + 1:] for at in range(length)]
        text = b"\n".join(lines)
        assert compiled.line_shapes(text) == twin.line_shapes(text)
