"""Line templates and masked paths on both implementations, the compiled kernel crossed with its twin.

`yarp._templates_py` holds the template the view always read (its location
pattern, the salience data's, and a quoted-name pattern) and the paths' masking
the classifier always read (one expression); `yarp._templates` must give the
same bytes for every line, the odd ones too (quotes left open, a location
without a line number, paths without an extension or with one too long,
non-ASCII and invalid bytes, over-long lines, a last newline).
"""

from __future__ import annotations

import glob
import json
import os

import kernel_impls
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yarp.view import salience, templates

VECTORS = os.path.join(os.path.dirname(__file__), "vectors", "cap")


@pytest.fixture(params=["c", "py"], scope="module")
def impl(request):
    """The compiled kernel (`c`) and its pure-Python twin (`py`), one after the other."""
    return kernel_impls.load("_templates", request.param)


def test_two_findings_of_one_check_share_a_template_and_two_checks_do_not(impl):
    ruff = impl.template(b"pkg/m03.py:5:5: F841 Local variable `unused` is assigned to but never used")
    assert ruff == impl.template(b"src/other.py:41:12: F841 Local variable `total` is assigned to but never used")
    assert ruff == b"F### Local variable used"
    assert impl.template(b"src/a.py:3:1: E501 line too long (91 > 88)") == b"E### line too ##)"
    assert impl.template(b"a.js:3:4: error 'x' is not defined  no-undef") == b"error Q is no-undef"
    assert impl.template(b"error: x") != impl.template(b"warning: x")


def test_a_location_is_read_past_only_when_it_has_a_line_number(impl):
    assert impl.template(b"  lib/a.rb:12:  warning: x") == b"warning: x"
    assert impl.template(b"lib/a.rb:12:7 warning: x") == b"warning: x"
    assert impl.template(b"lib/a.rb:x warning: y") == b"lib/a.rb:x warning: y"
    assert impl.template(b"note: 12 things") == b"note: ## things"  # a word and a colon, then a blank


def test_a_quote_masks_a_name_only_where_one_may_start_and_only_when_closed(impl):
    assert impl.template(b"'a b' said (\"c\") [`d`] x:'e' y='f'") == b"Q said (Q) y=Q"
    assert impl.template(b"it's 'open") == b"it's 'open"
    assert impl.template(b"don't 'x'") == b"don't Q"
    assert impl.template(b"") == b""
    assert impl.template(b" \t ") == b""


def test_the_many_templates_are_each_lines_template(impl):
    lines = [b"a.py:1:1: E1 one", b"x", b"", b"b.py:2:2: E2 'two'"]
    assert impl.templates(lines, [3, 0, 0]) == [impl.template(lines[3]), impl.template(lines[0]),
                                                impl.template(lines[0])]


def test_the_twins_location_is_the_salience_datas():
    twin = kernel_impls.both("_templates")[0]
    assert twin.LOCATION.decode() == salience.HINT_PATTERNS["location"]


def test_a_paths_words_are_masked_its_extension_and_numbers_kept(impl):
    assert impl.masked_paths(b"FILE: /work/one-error-among-warnings/src/Rule147.php") == (
        b"FILE: /xxxx/xxx-xxxxx-xxxxx-xxxxxxxx/xxx/xxxx147.php")
    assert impl.masked_paths(b"(src/pkg/a.go:3:1:) x") == b"(src/xxx/x.go:3:1:) x"
    # What precedes the first `/` may name something else; a word without one is no path.
    assert impl.masked_paths(b"[2023-11-14 22:13:20,567: WARNING/MainProcess] error") == (
        b"[2023-11-14 22:13:20,567: WARNING/xxxxxxxxxxx] error")
    assert impl.masked_paths(b"a/b.toolongext9 c/d.py:x") == b"a/x.xxxxxxxxxx9 c/x.xx:x"
    line = b"error: nothing to mask here"
    assert impl.masked_paths(line) is line


def _cross(line: bytes) -> None:
    twin, compiled = kernel_impls.both("_templates")
    assert compiled.template(line) == twin.template(line), line
    assert compiled.masked_paths(line) == twin.masked_paths(line), line


_PIECES = [b" ", b"\t", b":", b"'", b'"', b"`", b"(", b"[", b"=", b"a", b"Zz", b"7", b"42", b"src/a.py",
           b"\xe2\x80\x98", b"\xff", b"\r", b"\x0b", b"error", b"-->", b"/", b".", b".py", b".c:3:", b"::", b"<",
           b";", b",", b"\n"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=60), st.binary(max_size=40))
def test_the_compiled_template_is_the_twins(pieces, tail):
    _cross(b"".join(pieces) + tail)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=150, max_size=400))
def test_the_compiled_template_is_the_twins_past_its_window(data):
    _cross(data.replace(b"\n", b" "))


def test_the_compiled_template_is_the_twins_on_every_recorded_line():
    for path in sorted(glob.glob(os.path.join(VECTORS, "*.json"))):
        with open(path, encoding="utf-8") as handle:
            for line in json.load(handle)["input"].encode().split(b"\n"):
                _cross(line)


def test_the_selector_takes_the_compiled_kernel_unless_told_not_to():
    from yarp import _compat

    assert templates.IMPLEMENTATION == ("py" if _compat.NO_EXTENSIONS else "c")


# --- lines alike (`classed_alike`) ---------------------------------------------------------------------------

ERROR, WARN, CODE = (b"error",), (b"warn",), (b": e1",)  # CODE stands for a trigger whose entries read digits


def _classed(impl, lines, found, blind, kinds=True):
    """`classed_alike` of the scan's lines `found` ((number, triggers) each) with a `classes_of` that names each
    line it was asked about, and the lines it was asked about."""
    asked_lines = []

    def classes_of(asked, triggers):
        assert len(asked) == len(triggers) and not asked_lines  # asked once, of every kind at once
        asked_lines.extend(asked)
        return [None if line.startswith(b"plain") else b"%s/%d" % (line, len(held))
                for line, held in zip(asked, triggers)]

    def asked(triggers):
        blind[triggers] = triggers != CODE
        return blind[triggers]

    numbers, holding = [number for number, _ in found], [triggers for _, triggers in found]
    classes, firsts = impl.classed_alike(lines, numbers, holding, blind, asked, classes_of, kinds)
    return classes, firsts, asked_lines


def test_lines_alike_are_classed_once_by_their_first(impl):
    lines = [b"a.c:12: error x", b"a.c:12: error x", b"a.c:47: error x", b"mid", b"a.c:12: E1 x", b"a.c:47: E1 x",
             b"plain 1", b"plain 2", b"b.c:4: error x"]
    found = [(0, ERROR), (1, ERROR), (2, ERROR), (4, CODE), (5, CODE), (6, WARN), (7, WARN), (8, ERROR)]
    blind = {}
    classes, firsts, asked_lines = _classed(impl, lines, found, blind)
    # The same bytes, or the same but for digits where no entry reads digits: the first line's class.
    assert classes[:3] == [b"a.c:12: error x/1"] * 3
    # Where an entry reads digits, `E1` on line 12 and on line 47 are two kinds; a shorter number is another line.
    assert classes[3:5] == [b"a.c:12: E1 x/1", b"a.c:47: E1 x/1"]
    assert classes[5:] == [None, None, b"b.c:4: error x/1"]
    assert asked_lines == [b"a.c:12: error x", b"a.c:12: E1 x", b"a.c:47: E1 x", b"plain 1", b"b.c:4: error x"]
    assert firsts == [0, 0, 0, None, 4, 5, 6, 6, 8]
    assert blind == {ERROR: True, CODE: False, WARN: True}
    # Without kinds (a stream whose scanned lines are few), the same classes and no list as long as the text.
    assert _classed(impl, lines, found, {}, kinds=False) == (classes, None, asked_lines)


def test_classes_must_come_one_per_line_asked(impl):
    with pytest.raises(ValueError, match="one class per line asked"):
        impl.classed_alike([b"a.c:1: error x"], [0], [ERROR], {}, lambda triggers: True, lambda lines, found: [], True)
    with pytest.raises(ValueError, match="one tuple of triggers per line number"):
        impl.classed_alike([b"a.c:1: error x"], [0], [], {}, lambda triggers: True, lambda lines, found: [None], True)


def test_a_kinds_lines_share_its_template(impl):
    lines = [b"src/m%d.rs:%d:5: error[E0425]: cannot find value `missing_%d`" % (k, k * 7, k) for k in range(30)]
    found = [(k, ERROR) for k in range(30)]
    classes, firsts, _ = _classed(impl, lines, found, {})
    assert impl.templates(lines, range(30), firsts) == impl.templates(lines, range(30))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 59), max_size=80))
def test_anchors_of_kinds_in_turn_take_their_kinds_template(indices):
    # Six kinds in turn, more than the kernel keeps at hand, each line a kind's (the same but for digits).
    lines = [b"src/m%02d.rs:%03d:5: %s" % (k, k * 7, (b"error[E0425]", b"warning: unused", b"note: `x`", b"  |",
                                                     b"error: could not compile `m%02d`" % k, b"help: remove")[k % 6])
             for k in range(60)]
    found = [(k, ERROR) for k in range(60)]
    for impl in kernel_impls.both("_templates"):
        _, firsts, _ = _classed(impl, lines, found, {})
        assert len(set(firsts)) == 6
        assert impl.templates(lines, indices, firsts) == impl.templates(lines, indices)


_ALIKE_PIECES = [b"0", b"7", b"42", b"x", b"X", b" ", b":", b"error", b"\xe2\x80\x98", b"\xff", b"/", b"9" * 9]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_ALIKE_PIECES), max_size=14), max_size=80))
def test_the_compiled_classing_of_lines_alike_is_the_twins(rows):
    twin, compiled = kernel_impls.both("_templates")
    lines = [b"".join(pieces) for pieces in rows] + [b"unscanned"]
    # A line's triggers follow from its bytes, as a scan's do: lines alike but for digits hold the same ones.
    found = [(number, (ERROR, WARN, CODE)[len(line) % 3]) for number, line in enumerate(lines[:-1])]
    expected = _classed(twin, lines, found, {})
    assert _classed(compiled, lines, found, {}) == expected
    # The lines as a stream holds them (`yarp._lines.Lines`): read from its text, not made one by one.
    held = kernel_impls.both("_lines")[1].split_lines(b"\n".join(lines))
    assert _classed(compiled, held, found, {}) == _classed(twin, held, found, {}) == expected


def test_the_compiled_classing_is_the_twins_on_twenty_thousand_kinds():
    twin, compiled = kernel_impls.both("_templates")
    lines = [b"src/f%d.py:%d: error E%d: name %s" % (k % 997, k, k % 13, b"ab" * (k % 11)) for k in range(20000)]
    found = [(k, (ERROR if k % 3 else CODE)) for k in range(20000)]
    assert _classed(compiled, lines, found, {}) == _classed(twin, lines, found, {})


def test_classes_are_kept_by_line_number_but_those_left_out(impl):
    numbers = [3, 7, 9, 12]
    assert impl.by_number(numbers, ["failure", None, "note", "warning"], ("note",)) == {3: "failure", 12: "warning"}
    assert list(impl.by_number(numbers[::-1], ["a", "b", "c", "d"], ())) == [12, 9, 7, 3]  # in the numbers' order
    with pytest.raises(ValueError, match="one class per entry"):
        impl.by_number(numbers, ["failure"], ())
    # More class objects than the kernel asks about once each, in turn.
    names = ["class %d" % (number % 12) for number in range(40)]
    assert impl.by_number(list(range(40)), names, ("class 10", "class 3")) == {
        number: name for number, name in enumerate(names) if name not in ("class 10", "class 3")}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.sampled_from([None, "failure", "note", "plain", "warning"])),
                max_size=60), st.sampled_from([(), ("note",), ("note", "plain")]))
def test_the_compiled_classes_by_number_are_the_twins(rows, left_out):
    twin, compiled = kernel_impls.both("_templates")
    numbers = [number for number, _ in rows]
    classes = [cls for _, cls in rows]
    got, expected = compiled.by_number(numbers, classes, left_out), twin.by_number(numbers, classes, left_out)
    assert got == expected and list(got) == list(expected)


def test_the_places_of_some_keys_are_their_indices_in_order(impl):
    shape, other = b"w:w w", b"w w"
    keys = [shape, shape, other, b"w:w " + b"w", shape, b"", other]  # the fourth is equal, not the same object
    assert impl.places(keys, {shape}) == [0, 1, 3, 4]
    assert impl.places(keys, {other, b""}) == [2, 5, 6]
    assert impl.places(keys, set()) == [] and impl.places([], {shape}) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=80), st.sets(st.integers(0, 6)), st.booleans())
def test_the_compiled_places_are_the_twins(picks, wanted, shared):
    # Keys as a stream's shapes come (one object per kind, in runs) or each a new object of equal bytes.
    twin, compiled = kernel_impls.both("_templates")
    kinds = [b"k%d" % n for n in range(7)]
    keys = [kinds[n] if shared else b"k" + str(n).encode() for n in picks]
    asked = {kinds[n] for n in wanted}
    assert compiled.places(keys, asked) == twin.places(keys, asked) == [i for i, key in enumerate(keys) if key in asked]


# --- tallies (`tally`) -----------------------------------------------------------------------------------------


def _tallied(impl, keys, counts=None):
    counts = {} if counts is None else counts
    impl.tally(counts, keys)
    return counts, list(counts)


def test_a_tally_counts_like_a_counter_keys_in_the_order_first_seen(impl):
    shape, other = b"w w", b"w: w"
    assert _tallied(impl, [shape] * 300_000 + [other, shape]) == ({shape: 300_001, other: 1}, [shape, other])
    # Equal keys that are distinct objects are one key; a mapping's own counts are added to.
    assert _tallied(impl, [b"a" + b"b", b"ab", bytes([97, 98])], {b"x": 2}) == ({b"x": 2, b"ab": 3}, [b"x", b"ab"])
    assert _tallied(impl, map(len, [b"a" * 300, b"b" * 300, b"c"])) == ({300: 2, 1: 1}, [300, 1])
    with pytest.raises(TypeError):
        impl.tally({}, [b"a", [1]])


def test_a_tally_of_keys_made_and_freed_one_by_one_is_not_misled_by_reused_addresses(impl):
    # Each key is freed once counted, and the next may take its address: counted by value all the same.
    made = (b"%d" % (number % 7) * 3 for number in range(5000))
    expected = {b"%d" % k * 3: len(range(k, 5000, 7)) for k in range(7)}
    assert _tallied(impl, made) == (expected, list(expected))


@pytest.mark.parametrize("given_as", [list, tuple, iter])
def test_a_tally_of_keys_each_a_new_object_counts_them_in_the_mapping_alone(impl, given_as):
    # A split text's lines are each their own object: past the first 512, most of them new to the slots,
    # the rest are counted in the mapping, after what the slots held, keys still in the order first seen.
    text = b"\n".join(b"row %d" % (number % 700) for number in range(3000))
    keys = text.split(b"\n") + [b"row 3"] * 40  # and a run of one key after the switch
    expected = {b"row %d" % k: len(range(k, 3000, 700)) + 40 * (k == 3) for k in range(700)}
    assert _tallied(impl, given_as(keys)) == (expected, list(expected))


@pytest.mark.parametrize("ways", [5, 9, 40])
def test_a_tally_of_a_few_keys_in_turn_counts_each(impl, ways):
    # Keys that come in turn, more than one set of slots holds wherever their addresses fall.
    keys = [b"kind %d" % k for k in range(ways)] * 200
    expected = {b"kind %d" % k: 200 for k in range(ways)}
    assert _tallied(impl, keys, {b"kind 2": 5}) == ({**expected, b"kind 2": 205}, [b"kind 2"] + [
        key for key in expected if key != b"kind 2"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from([b"w", b"w w", "x", 0, 300, 1 << 70]), st.binary(max_size=3),
                          st.integers(-3, 1000)), max_size=1400))
def test_the_compiled_tally_is_the_twins(keys):
    twin, compiled = kernel_impls.both("_templates")
    assert _tallied(compiled, iter(keys)) == _tallied(twin, iter(keys))


# --- groups (`grouped`) ----------------------------------------------------------------------------------------


def test_keys_are_grouped_by_their_values_label_each_group_in_order(impl):
    classes = {9: "warning", 2: "failure", 5: "warning", 7: "plain", 1: "warning", 3: "failure"}
    assert impl.grouped(classes, {"failure": 0, "warning": 2}) == {2: [1, 5, 9], 0: [2, 3]}
    # Values equal but distinct objects take one label; a value the labels do not name leaves its key out.
    assert impl.grouped({1: "ab", 2: "".join(["a", "b"]), 3: "c"}, {"ab": "x"}) == {"x": [1, 2]}
    assert impl.grouped({}, {"a": 1}) == {}
    # Twelve value objects in turn, more than the kernel keeps beside their lists; half of them labelled.
    names = [f"kind{n}" for n in range(12)]
    many = {line: names[line % 12] for line in range(48)}
    labels = {name: n % 3 for n, name in enumerate(names) if n % 2}
    assert impl.grouped(many, labels) == {label: [line for line in range(48) if labels.get(names[line % 12]) == label]
                                          for label in (1, 0, 2)}


_CLASS_NAMES = ["failure", "warning", "note", "rare", "x"] + [f"kind{n}" for n in range(9)] + ["".join(["fail", "ure"])]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(-50, 5000), st.sampled_from(_CLASS_NAMES[:5]) | st.sampled_from(_CLASS_NAMES),
                       max_size=300))
def test_the_compiled_grouping_is_the_twins(classes):
    # A few class names, or more value objects than the kernel keeps beside their lists (an equal one too).
    twin, compiled = kernel_impls.both("_templates")
    labels = {"failure": 0, "warning": 2, "rare": 1, "kind3": 1, "kind8": 4}
    assert compiled.grouped(classes, labels) == twin.grouped(classes, labels)
