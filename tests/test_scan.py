"""The trigger scan: its meaning on both implementations, the compiled scan crossed with its twin, the selection.

`yarp._scan_py` holds the scan the salience classifier always ran (one `find`
pass per trigger over a lowercased copy); `yarp._scan` must return the same
dictionary for every buffer and every tuple of triggers, the odd ones too
(upper-case, empty, or holding a newline), which the classifier's data never
holds but a caller may pass.
"""

from __future__ import annotations

import glob
import json
import os
import random
import threading

import kernel_impls
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yarp import _compat
from yarp.view import salience, scan
from yarp.view.salience import classifier

VECTORS = os.path.join(os.path.dirname(__file__), "vectors", "cap")


@pytest.fixture(params=["c", "py"], scope="module")
def impl(request):
    """The compiled scan (`c`) and its pure-Python twin (`py`), one after the other."""
    return kernel_impls.load("_scan", request.param)


def cross(buf: bytes, triggers: tuple[bytes, ...]) -> dict[int, tuple[bytes, ...]]:
    """The twin's answer, asserted to be the compiled scan's too."""
    twin, compiled = kernel_impls.both("_scan")
    expected = twin.trigger_lines(buf, triggers)
    assert compiled.trigger_lines(buf, triggers) == expected, (buf[:200], triggers)
    numbered = twin.trigger_line_numbers(buf, triggers)
    assert compiled.trigger_line_numbers(buf, triggers) == numbered, (buf[:200], triggers)
    # The same lines in the same order, each named by how many newlines come before its start.
    assert list(zip(*numbered)) == [(buf.count(b"\n", 0, start), expected[start]) for start in sorted(expected)]
    assert len(numbered[0]) == len(numbered[1])
    return expected


def by_line(buf: bytes, triggers: tuple[bytes, ...]) -> dict[int, tuple[bytes, ...]]:
    """The scan's meaning for triggers without a newline, line by line."""
    found, offset = {}, 0
    for line in buf.split(b"\n"):
        held = tuple(t for t in triggers if t and t in line.lower())
        if held:
            found[offset] = held
        offset += len(line) + 1
    return found


# --- the selection ------------------------------------------------------------------


def test_extension_loaded_in_a_normal_install():
    """Fails when the compiled scan silently did not load."""
    if _compat.NO_EXTENSIONS:
        pytest.skip("YARP_NO_EXTENSIONS is set")
    assert scan.IMPLEMENTATION == "c"


def test_the_classifier_scans_with_the_selected_implementation():
    assert salience.trigger_lines is scan.trigger_lines
    assert scan.IMPLEMENTATION == ("py" if _compat.NO_EXTENSIONS else "c")


def test_no_extensions_switch_selects_the_twin():
    assert kernel_impls.selected_with_the_switch("yarp.view.scan") == "py"


# --- the meaning, on both -------------------------------------------------------------


def test_a_line_lists_each_trigger_it_holds_once_in_trigger_order(impl):
    buf = b"ok\nWarn: error ERROR fail\nfail then error\n\nerror"
    triggers = (b"error", b"fail", b"warn")
    assert impl.trigger_lines(buf, triggers) == {3: (b"error", b"fail", b"warn"), 26: (b"error", b"fail"),
                                                 43: (b"error",)}


def test_lines_of_other_kinds_that_hold_the_same_triggers_share_one_tuple(impl):
    # Each record is a kind of its own (its hex id), but the classifier groups lines by their tuple of
    # triggers: the scan gives every line holding the same triggers the same tuple object.
    records = b"".join(b"ID: %064x rebuilt index: <not found>%s\n" % (n * 7919, b" error" if n % 2 else b"")
                       for n in range(40))
    numbers, found = impl.trigger_line_numbers(records, (b"error", b"fail", b"not found"))
    assert numbers == list(range(40)) and found[:2] == [(b"not found",), (b"error", b"not found")]
    assert len({id(triggers) for triggers in found[0::2]}) == len({id(triggers) for triggers in found[1::2]}) == 1


def test_only_ascii_letters_fold(impl):
    triggers = ("\u00e9chec".encode(), "\u00d7 ".encode())
    buf = "\u00c9CHEC\n\u00e9CHEC\n\u00d7 x\n".encode()
    assert impl.trigger_lines(buf, triggers) == {len("\u00c9CHEC\n".encode()): ("\u00e9chec".encode(),),
                                                 len("\u00c9CHEC\n\u00e9CHEC\n".encode()): ("\u00d7 ".encode(),)}


def test_triggers_that_contain_one_another_are_each_found(impl):
    triggers = (b"err", b"error", b"rr", b"r", b"or ")
    assert impl.trigger_lines(b"ERROR \nerr\nr", triggers) == {0: triggers, 7: (b"err", b"rr", b"r"), 11: (b"r",)}


def test_a_trigger_cut_by_the_end_of_the_buffer_or_a_line_is_not_found(impl):
    assert impl.trigger_lines(b"erro\nr\nerro", (b"error",)) == {}
    assert impl.trigger_lines(b"x\nerro", (b"error", b"o")) == {2: (b"o",)}


def test_a_trigger_is_found_whatever_its_third_byte_s_case_and_a_short_one_at_the_very_end(impl):
    """The compiled scan compares only where the buffer's first three bytes may start a trigger: two blanks
    start `  x ` but three do not; a two-byte trigger still matches in the buffer's last two bytes."""
    triggers = (b"  x ", b"\xc3\x97", b"err")
    buf = b"     a\n  X b\n  x\nfoo ERr\n\xc3\x97"
    assert impl.trigger_lines(buf, triggers) == {7: (b"  x ",), 17: (b"err",), 25: (b"\xc3\x97",)}


def test_an_upper_case_trigger_never_matches(impl):
    assert impl.trigger_lines(b"Error\nerror\nERROR", (b"Error", b"rror")) == {0: (b"rror",), 6: (b"rror",),
                                                                             12: (b"rror",)}


def test_empty_inputs(impl):
    assert impl.trigger_lines(b"", (b"error",)) == {}
    assert impl.trigger_lines(b"error", ()) == {}
    assert impl.trigger_lines(b"\n" * 50, (b"error", b"x")) == {}


def test_a_repeated_trigger_is_listed_at_each_of_its_places(impl):
    assert impl.trigger_lines(b"a fail\nok", (b"fail", b"ok", b"fail")) == {0: (b"fail", b"fail"), 7: (b"ok",)}


def test_a_trigger_must_be_bytes(impl):
    with pytest.raises(TypeError):
        impl.trigger_lines(b"error", ("error",))


# --- crossed: fixed edges -----------------------------------------------------------------


def test_the_odd_triggers_walk_as_the_twin_does():
    """The empty trigger, and triggers holding a newline, follow the find-then-skip-the-line walk."""
    for buf in (b"", b"\n", b"\n\n", b"a", b"a\n", b"a\nb", b"xa\nbyya\nb", b"\na\n\nb\n", b"A\nB\nA\nb"):
        for triggers in ((b"",), (b"a\nb",), (b"\na",), (b"\n",), (b"b", b"", b"a\n", b"a"), (b"a\n\nb", b"\n\n")):
            cross(buf, triggers)


def test_a_buffer_of_newlines_only():
    for size in (1, 2, 7, 8192, 9000):
        assert cross(b"\n" * size, classifier().triggers + (b"\n",)) == {i: (b"\n",) for i in range(size)}


def test_very_long_lines_above_the_gil_free_size():
    rnd = random.Random(7)
    triggers = classifier().triggers
    for _ in range(6):
        words = [rnd.choice(triggers).upper() if rnd.random() < 0.5 else rnd.choice(triggers)
                 for _ in range(rnd.randrange(1, 40))]
        line = bytearray(rnd.randbytes(300_000).replace(b"\n", b" "))
        for word in words:
            at = rnd.randrange(len(line))
            line[at:at] = word
        buf = bytes(line) + b"\nexit 1\n" + bytes(line[:5000])
        assert cross(buf, triggers) == by_line(buf, triggers)


# --- crossed: generated buffers -------------------------------------------------------------

REAL = classifier().triggers
#: Triggers that overlap or contain one another, a non-ASCII one, and a one-byte one.
NESTED = (b"err", b"error", b"rror", b"or", b"r", b"erro r", b"\xc3\x97 ", b"\xc3", b"ee", b"eee", b"e e")
ODD = (b"", b"\n", b"a\nb", b"\nerror", b"Error")
PIECES = st.one_of(
    st.sampled_from(REAL + NESTED), st.sampled_from(REAL + NESTED).map(bytes.upper),
    st.sampled_from(REAL + NESTED).map(lambda t: t[:-1]),  # a trigger cut short
    st.sampled_from([b"\n", b"\n\n", b" ", b"\t", b"0", b"x", b"E", b"R", b"\xc3", b"\xff\xfe", "\u00e9".encode()]),
    st.binary(max_size=8),  # anything, invalid UTF-8 among it
)
BUFFERS = st.lists(PIECES, max_size=60).map(b"".join)
TRIGGER_SETS = st.one_of(st.just(REAL), st.just(classifier().failure_triggers),
                         st.lists(st.sampled_from(REAL + NESTED + ODD), max_size=12).map(tuple),
                         st.lists(st.binary(max_size=4), max_size=6).map(tuple))


@settings(max_examples=1500, deadline=None)
@given(BUFFERS, TRIGGER_SETS)
def test_the_compiled_scan_answers_as_the_twin(buf, triggers):
    found = cross(buf, triggers)
    if not any(b"\n" in t or not t for t in triggers):
        assert found == by_line(buf, triggers)


@settings(max_examples=60, deadline=None)
@given(st.lists(PIECES, min_size=50, max_size=150).map(b"".join).map(lambda b: b * 40))
def test_large_generated_buffers_cross(buf):
    """Mostly over `GIL_FREE_BYTES`: the scan without the GIL answers the same."""
    cross(buf, REAL)


def test_recorded_tool_outputs_cross_with_the_real_triggers():
    sal = classifier()
    paths = sorted(glob.glob(os.path.join(VECTORS, "*.json")))
    assert paths
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            buf = json.load(handle)["input"].encode()
        for triggers in (sal.triggers, sal.failure_triggers):
            assert cross(buf, triggers) == by_line(buf, triggers)
        assert sal.salient_lines(buf) == by_line(buf, sal.triggers)


def test_threads_scanning_at_once_each_get_their_own_answer():
    """The compiled scan runs without the GIL for large buffers: no state is shared between calls."""
    twin, compiled = kernel_impls.both("_scan")
    rnd = random.Random(3)
    buffers = [b"\n".join(rnd.choice(REAL + (b"plain text", b"0123")) * rnd.randrange(1, 4)
                          for _ in range(20_000)) for _ in range(4)]
    expected = [twin.trigger_lines(buf, REAL) for buf in buffers]
    results: dict[int, list] = {}

    def work(i: int) -> None:
        results[i] = [compiled.trigger_lines(buffers[i], REAL) for _ in range(3)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(results[i] == [expected[i]] * 3 for i in range(4))


#: Lines of a few kinds with a number put in place of `#`, some holding a trigger that holds a digit (` 0%`,
#: `:0.`, `: e0`) where the number falls, so that lines alike but for their digits hold different triggers.
_TRIGGERED = [b"error: # of #", b"  |  #", b"src/a.rs:#:# warning", b"total #%", b"cover  #%  #.#%", b"x:#. ok",
              b"E#: e# FAIL", b"#", b"", b"\tfail #0% done", b"|#%|#%", b"plain # line"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_TRIGGERED), st.sampled_from([0, 1, 7, 10, 100, 2024, 10 ** 9])),
                max_size=200),
       st.booleans())
def test_lines_alike_but_for_digits_hold_the_triggers_the_twin_finds(rows, final_newline):
    """The compiled scan reads each kind of line once: lines alike but for their digits share its triggers,
    except those a trigger holding a digit tells apart."""
    data = b"\n".join(kind.replace(b"#", b"%d" % number) for kind, number in rows) + b"\n" * final_newline
    for triggers in (REAL, (b"error", b" 0%", b":0.", b": e0", b"fail", b"|0%", b"0", b"  |")):
        cross(data, triggers)


def test_thousands_of_kinds_of_lines_hold_the_triggers_the_twin_finds():
    # More kinds than the compiled scan's cache holds: kinds share its slots and push each other out, and
    # each kind comes back after others took its slot.
    name = [bytes(65 + k // 26 ** place % 26 for place in range(3)) for k in range(6000)]  # AAA, BAA, …
    # Lines of one length whose words of one length hold different triggers: a kind taken for another
    # that only hashes alike (the scan checks bytes) would hand a line the wrong ones.
    word = (b"error", b"fails", b"plain", b"ERROR")
    data = b"\n".join(b"%s %s %04d%%" % (name[k % 3000], word[k // 7 % 4], k) for k in range(6000))
    for triggers in (REAL, (b"error", b" 0%", b"fail", b"0")):
        assert cross(data, triggers) == by_line(data, triggers)


def test_long_runs_of_lines_alike_hashed_before_they_are_searched_hold_the_triggers_the_twin_finds():
    # Past the first lines, where most lines tried are alike, each line is hashed before it is searched: a
    # line alike to one read takes its kind, unless a trigger holding a digit tells them apart (`total 0%`
    # against `total 10%`), and a line without a candidate pair is a kind of its own holding none.
    rnd = random.Random(11)
    rows = [(rnd.choice(_TRIGGERED + [b"no candidate here #", b"#-#-#"]), rnd.choice([0, 3, 10, 70, 100, 2024]))
            for _ in range(3000)]
    for runs in (rows, sorted(rows, key=lambda row: row[0])):  # mixed, and in long runs of one kind
        data = b"\n".join(kind.replace(b"#", b"%d" % number) for kind, number in runs)
        for triggers in (REAL, (b"error", b" 0%", b":0.", b": e0", b"fail", b"|0%", b"0", b"  |", b"e here")):
            assert cross(data, triggers) == by_line(data, triggers)


def test_runs_of_worded_lines_and_of_lines_alike_hold_the_triggers_the_twin_finds():
    # The compiled scan tries a line against the kinds read before only where the lines before tell that it
    # pays: worded log lines are read, runs of dense diagnostics alike are not. Every run is crossed.
    rnd = random.Random(5)
    words = [b"request", b"served", b"cache", b"user", b"route", b"status", b"fail", b"error", b"queue"]
    logged = [b"%05d %s in 0.%dms" % (k, b" ".join(rnd.choice(words) for _ in range(rnd.randrange(3, 12))), k % 7)
              for k in range(1500)]
    dense = [b"  |  %d" % k if k % 3 else b"error[E0425]: cannot find value `x%d` in 0%% of scope" % (k % 5)
             for k in range(1500)]
    runs = [logged[:500], dense[:500], logged[500:1000], dense[500:], logged[1000:]]
    for data in (b"\n".join(line for run in runs for line in run), b"\n".join(dense + logged)):
        for triggers in (REAL, (b"error", b" 0%", b"fail", b"  |", b":0.")):
            assert cross(data, triggers) == by_line(data, triggers)


def test_lines_are_numbered_from_zero_in_line_order(impl):
    triggers = (b"error", b"fail", b"warn")
    buf = b"ok\nERROR: fail\n\n\nwarn\nerror\n"
    assert impl.trigger_line_numbers(buf, triggers) == ([1, 4, 5], [(b"error", b"fail"), (b"warn",), (b"error",)])
    assert impl.trigger_line_numbers(b"", triggers) == ([], [])
    assert impl.trigger_line_numbers(b"\n\nfail", triggers) == ([2], [(b"fail",)])
    odd = (b"", b"r\ne", b"error")  # the empty trigger and one holding a newline: the twin's walk, lines sorted
    assert impl.trigger_line_numbers(b"x\nerror\nend", odd) == ([0, 1, 2], [(b"",), (b"", b"r\ne", b"error"), (b"",)])
