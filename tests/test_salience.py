"""Salience classes on real tool lines, the data file's shape, and a warm load without `re` or `json`.

The lines come from outputs recorded with the real tools (tests/vectors/cap); the
classes are what an engineer acting on the output needs them to be.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yarp.view import matching, salience
from yarp.view.salience import DATA_PATH, classifier

VECTORS = os.path.join(os.path.dirname(__file__), "vectors", "cap")


def vector_lines(name: str) -> list[str]:
    with open(os.path.join(VECTORS, f"{name}.json"), encoding="utf-8") as handle:
        return json.load(handle)["input"].split("\n")


def line_from(name: str, start: str) -> bytes:
    return next(line for line in vector_lines(name) if line.startswith(start)).encode()


@pytest.mark.parametrize("name, start, cls", [
    ("gcc-errors-among-warnings", "f2.c:4:19: error:", "failure"),
    ("gcc-errors-among-warnings", "f1.c:2:41: warning:", "warning"),
    ("make-k-errors", "make: *** [Makefile:3: f2.o] Error 1", "exit"),
    ("cargo-build-errors", "error[E0308]", "failure"),
    ("cargo-build-errors", "error: could not compile", "exit"),
    ("rust-panic", "thread 'main'", "failure"),
    ("go-panic", "panic: assignment to entry in nil map", "failure"),
    ("go-panic", "goroutine 1 [running]:", "traceback"),
    ("go-panic", "exit status 2", "exit"),
    ("go-test-failure", "--- FAIL: TestSum", "failure"),
    ("java-exception-cause", "Exception in thread \"main\"", "failure"),
    ("java-exception-cause", "Caused by: java.lang.NumberFormatException", "traceback"),
    ("node-uncaught-typeerror", "TypeError: Cannot read properties", "failure"),
    ("node-test-tap-failure", "not ok 121 - adds totals", "failure"),
    ("node-test-tap-failure", "# fail 1", "summary"),
    ("pytest-v-two-failures", "E       KeyError: 'missing'", "failure"),
    ("pytest-v-two-failures", "test_many.py:12: KeyError", "failure"),
    ("pytest-v-two-failures", "FAILED test_many.py::test_fail_two", "failure"),
    ("pytest-v-two-failures", "=================================== FAILURES", "header"),
    ("pytest-v-two-failures", "________________________________ test_fail_one", "header"),
    ("python-chained-traceback", "Traceback (most recent call last):", "traceback"),
    ("python-chained-traceback", "RuntimeError: configuration is incomplete", "failure"),
    ("unittest-failure", "Ran 62 tests in", "summary"),
    ("unittest-failure", "FAILED (failures=1)", "summary"),
    ("git-diff-eleven-files", "diff --git ", "header"),
    ("cargo-error-among-warnings", "  --> src/main.rs:16:22", "location"),
])
def test_real_lines_get_the_class_an_engineer_needs(name, start, cls):
    assert classifier().classify(line_from(name, start)) == cls


@pytest.mark.parametrize("line", [
    "test_many.py::test_ok[17] PASSED                                         [  4%]",
    "ok 7 - passes number 6",
    "test_gen_3 (__main__.T.test_gen_3) ... ok",
    "# Subtest: passes number 6",
])
def test_pass_lines_are_noise(line):
    assert classifier().classify(line.encode()) == "noise"


@pytest.mark.parametrize("line", [
    "2026-12-03 12:00:01 INFO worker-1 handled request id=4 status=200 in 3ms",
    "request 10 served from cache layer",
    "0 errors",
])
def test_ordinary_lines_are_plain(line):
    assert classifier().classify(line.encode()) == "plain"


def test_every_entry_is_reached_only_through_its_triggers():
    with open(DATA_PATH, encoding="utf-8") as handle:
        data = json.load(handle)
    assert {e["class"] for e in data["entries"]} <= set(salience.CLASSES) | {"note"}
    for entry in data["entries"]:
        assert entry["triggers"] and all(t == t.lower() for t in entry["triggers"]), entry
        for forbidden in ("\\s", "\\S", "(?i", "(?P"):
            assert forbidden not in entry["pattern"], entry


def test_the_trigger_scan_finds_every_line_a_trigger_holds():
    sal = classifier()
    lines = [line.encode() for path in sorted(glob.glob(os.path.join(VECTORS, "*.json")))
             for line in vector_lines(os.path.basename(path)[:-5])]
    body = b"\n".join(lines)
    starts = set(sal.salient_offsets(body))
    offset = 0
    for line in lines:
        assert (offset in starts) == sal.triggered(line), line
        offset += len(line) + 1


def test_a_warm_classifier_imports_neither_re_nor_json(tmp_path):
    code = ("import sys; from yarp.view import salience; c = salience.classifier(); "
            "print(c.classify(b'a.c:1:2: error: x'), 're' in sys.modules, 'json' in sys.modules)")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout.split()
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout.split()
    assert first == [b"failure", b"True", b"True"]
    assert warm == [b"failure", b"False", b"False"]


def _scan_without_skips(sal, buf: bytes) -> dict[int, tuple[bytes, ...]]:
    """Per line holding a scanned trigger, the triggers it holds: the scan's meaning, line by line."""
    found, offset = {}, 0
    for line in buf.split(b"\n"):
        held = tuple(t for t in sal.triggers if t in line.lower())
        if held:
            found[offset] = held
        offset += len(line) + 1
    return found


with open(DATA_PATH, encoding="utf-8") as _handle:
    TRIGGERS = sorted({t for entry in json.load(_handle)["entries"] for t in entry["triggers"]})
#: Triggers (some upper-cased) among fillers: each text holds a few, so most passes are skipped.
FRAGMENT = st.one_of(st.sampled_from(TRIGGERS), st.sampled_from(TRIGGERS).map(str.upper),
                     st.sampled_from(["0", "17", " ", "\t", "x", "-", ".", "é"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(FRAGMENT, max_size=6).map("".join), max_size=40))
def test_the_scan_skips_only_triggers_whose_bytes_are_missing(lines):
    sal = classifier()
    buf = "\n".join(lines).encode()
    assert sal.salient_lines(buf) == _scan_without_skips(sal, buf)


NOISE_SAMPLES = [b"tests/test_x.py::test_y PASSED", b"tests/a.py::b PASSED  [ 10%]", b"ok 3 - adds", b"ok  \tpkg\t0.1s",
                 "  \u2713 works".encode(), b"--- PASS: TestX (0.00s)", b"=== RUN   TestX", b" 45%|####   |", b"a\rb",
                 b"[==========>    ]", b"  Downloading x-1.0.tar.gz", b"# Subtest: a", b"  duration_ms: 3", b"  ...",
                 b"  ---", b"t (m.T.t) ... ok", b"PASSED", b"ok", b"Ok 3 - x", b"5%|", b"[=> ]"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(NOISE_SAMPLES), st.binary(max_size=30).map(lambda b: b.replace(b"\n", b""))),
                min_size=1, max_size=20))
def test_noise_is_one_alternation_whether_asked_per_line_or_of_a_run(lines):
    import re

    with open(DATA_PATH, encoding="utf-8") as handle:
        combined = re.compile("|".join(f"(?:{p})" for p in json.load(handle)["noise"]).encode())
    sal = classifier()
    noisy = [sal.is_noise(line) for line in lines]
    assert noisy == [combined.search(line) is not None for line in lines]
    text = b"\n" + b"\n".join(lines)
    if any(noisy):  # a run holding a noise line is never taken for a quiet one
        assert sal.noise_lines_start.search(text) or sal.noise_lines_any.search(text)


@pytest.mark.parametrize("pattern, line", [
    ("(?<=a)b", b"ab"), ("x(?!y)", b"x"), ("\\Aq", b"q"), ("z\\Z", b"z"), ("(?>ab)", b"ab"), ("c++d", b"cd"),
    ("(?s:e.f)", b"e.f"),
])
def test_a_noise_pattern_that_reads_past_its_line_keeps_runs_line_by_line(pattern, line):
    with open(DATA_PATH, encoding="utf-8") as handle:
        data = json.load(handle)
    sal = salience.Classifier(salience.build_bundle(data, (("noise", pattern, ()),)))
    assert sal.noise_lines_start is None and sal.noise_lines_any is None
    assert sal.is_noise(line) and not sal.is_noise(b"plain words")
    plain = salience.Classifier(salience.build_bundle(data, (("noise", "^qq|rr$", ()),)))
    assert plain.noise_lines_start is not None and plain.is_noise(b"qq x") and plain.is_noise(b"x rr")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(NOISE_SAMPLES + [b"ok 1 ", b"ok 9 ", b"ok x ", b"10%|", b"x 0 ", b"x 7 "]),
                min_size=2, max_size=12))
def test_what_the_noise_patterns_say_follows_from_a_lines_noise_key(lines):
    with open(DATA_PATH, encoding="utf-8") as handle:
        data = json.load(handle)
    shipped = classifier()
    # The shipped patterns read every digit alike (`\d`): lines the same but for digits say the same.
    assert shipped.noise_blind
    reading = salience.Classifier(salience.build_bundle(data, (("noise", "^x 0 ", ()),)))
    assert not reading.noise_blind and reading.noise_key(b"x 7 ") == b"x 7 "
    for sal in (shipped, reading):
        said = {}
        for line in lines:
            assert said.setdefault(sal.noise_key(line), sal.is_noise(line)) == sal.is_noise(line), line


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(NOISE_SAMPLES[:8] + [b"plain words", b"error: x", b"", b"warning: y", b"note: z"]),
                min_size=1, max_size=120),
       st.data())
def test_a_context_walk_skips_what_it_would_skip_line_by_line(lines, data):
    from yarp.view.streams import Stream

    # A walk read a window at a time (`next_context`) stops where one asking `skippable` of each line
    # would: classed lines and notes are never noise, a noise line alone is not skipped, nor a kept line.
    stream = Stream("stdout", b"\n".join(lines) + b"\n", classifier())
    total = len(stream.lines)
    kept = set(data.draw(st.lists(st.integers(0, total - 1), max_size=8)))
    for _ in range(4):
        index, step = data.draw(st.integers(0, total - 1)), data.draw(st.sampled_from((1, -1)))
        walked = index
        while 0 <= walked < total and (walked in kept or stream.skippable(walked)):
            walked += step
        assert stream.next_context(index, step, kept) == walked


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"diff --git a/x.py b/x.py", b"DIFF --GIT a", b" diff --git x", b"xdiff --git y",
                                 b"error: x", b"+added", b"plain words " * 20, b""]), min_size=1, max_size=60))
def test_a_diff_is_told_by_the_scans_triggers_as_by_the_text(lines):
    from yarp.view.streams import _is_diff
    from yarp.view.templates import classed_alike

    # A line starting `diff --git ` holds the scanned trigger inside those words: the triggers the kinds of
    # line hold (each kind's first line asked, as a stream classes them) say no diff at once, and never
    # where the text holds one.
    sal = classifier()
    body = b"\n".join(lines)
    held: set = set()

    def classes_of(asked, triggers):
        held.update(triggers)
        return [None] * len(asked)

    classed_alike(body.split(b"\n"), *sal.salient_line_numbers(body), sal.blind, sal.digit_blind, classes_of)
    expected = body.startswith(b"diff --git ") or b"\ndiff --git " in body
    assert _is_diff(body, held, sal) == expected


#: Pieces of the lines entries are written for, so that generated lines match entries, often several.
LINE_PIECE = st.sampled_from(["error", "Error", "ERROR", "error: ", "error[E0308]: ", "fatal error: ", "Fatal error: ",
                              "panic: ", "panicked at", "FAILED", "FAIL ", "--- FAIL", "=== ", " ===", "1 failed",
                              "2 passed", "warning: ", "Warning: ", " --> a.rs:3:4", "a.py:12: ", "a.c:3:4: ", "E1101: ",
                              "  ", "\t", "5 | ", "x", ":", "npm ERR! code ", "exit status 2", "Traceback",
                              "ValueError: ", "assert", "Found 3 errors", "not ok 3", "Caused by:", "0%", " PASSED"])


_COMBINING: list = []


def _combining_classifier():
    """A classifier of the shipped data whose sets of entries are matched as alternations from
    their first line on (the shared one waits for `matching.COMBINE_AFTER` lines)."""
    if not _COMBINING:
        with open(DATA_PATH, encoding="utf-8") as handle:
            sal = salience.Classifier(salience.build_bundle(json.load(handle)))
        _COMBINING.append(sal)
    return _COMBINING[0]


@pytest.fixture
def combine_at_once(monkeypatch):
    monkeypatch.setattr(matching, "COMBINE_AFTER", 1)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(LINE_PIECE, FRAGMENT), min_size=1, max_size=8).map("".join), st.booleans())
def test_a_line_gets_the_same_class_from_its_scanned_triggers_as_from_every_entry(line, at_once):
    # `classify` with the triggers a scan saw tries the entries those reach one by one and, from
    # `COMBINE_AFTER` lines on, in one alternation (leftmost match, ties to the earlier entry);
    # without them it searches every entry in turn.
    if at_once:
        saved, matching.COMBINE_AFTER = matching.COMBINE_AFTER, 1
        try:
            sal = _combining_classifier()
            found = sal.salient_lines(line.encode()).get(0)
            if found is not None:
                sal.classify(line.encode(), found)  # builds the plan with this setting
        finally:
            matching.COMBINE_AFTER = saved
    else:
        sal = classifier()
    data = line.encode()
    found = sal.salient_lines(data).get(0)
    if found is not None:
        assert sal.classify(data, found) == sal.classify(data)
    # A big stream's later chunks scan for the failure triggers only: the entries those reach decide.
    failing = sal.salient_lines(data, sal.failure_triggers).get(0)
    if failing is not None:
        assert sal.classify(data, failing) == _class_among_reached(sal, data, failing)


def _class_among_reached(sal, line: bytes, found) -> str:
    """The class by the rule itself: among the entries the found triggers reach, those with a trigger
    on the line are searched, and the leftmost match wins, ties to the earlier entry."""
    low = line.lower()
    best = None
    for cls, triggers, pattern in sal.entries:
        if any(t in u for t in found for u in triggers) and any(u in low for u in triggers):
            match = pattern.search(line)
            if match is not None and (best is None or match.start() < best[0]):
                best = (match.start(), cls)
    if best is not None:
        return "plain" if best[1] == "note" else best[1]
    return "noise" if sal.is_noise(line) else "plain"


@pytest.mark.parametrize("extra", [("warning", "(?i)boom", ("boom",)), ("warning", "(?P<w>boom)", ("boom",)),
                                   ("warning", "(o)\\1m", ("oom",)), ("warning", "^boom", ("boom",))])
def test_a_pack_entry_that_cannot_join_an_alternation_is_searched_alone(extra, combine_at_once):
    with open(DATA_PATH, encoding="utf-8") as handle:
        data = json.load(handle)
    sal = salience.Classifier(salience.build_bundle(data, (extra,)))
    # The pack's entry matches first on the first line, among a dozen entries `error` reaches.
    assert sal.classify(b"boom error: x", sal.salient_lines(b"boom error: x")[0]) == "warning"
    for line in (b"x error: boom", b"BOOM error", b"boobm error", b"boom"):
        found = sal.salient_lines(line).get(0)
        if found is not None:
            assert sal.classify(line, found) == sal.classify(line), line


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(LINE_PIECE, FRAGMENT), min_size=1, max_size=8).map("".join))
def test_an_entry_matches_only_lines_holding_one_of_the_literals_it_needs(line):
    # The search past a line's start leaves out an entry whose literals the line lacks.
    from re import _constants, _parser

    data = line.encode()
    for _, _, pattern in classifier().entries:
        tree = _parser.parse(pattern.pattern, 0).data
        needs = matching.needs(tree, _constants)
        match = pattern.search(data)
        if needs is not None and match is not None:
            assert any(literal in match.group() for literal in needs), (pattern.pattern, data)
        past = matching.needs(matching._past_the_start(tree, _constants), _constants)
        match = pattern.search(data, 1)
        if past is not None and match is not None:
            assert any(literal in match.group() for literal in past), (pattern.pattern, data)


def test_the_literals_an_entry_needs_come_from_every_branch_and_no_optional_part():
    from re import _constants, _parser

    def needs(pattern: str):
        return matching.needs(_parser.parse(pattern.encode(), 0).data, _constants)

    assert needs("\\berror( TS\\d+)?\\b") == {b"error"}
    assert needs("^(FAIL|ERROR):? |^not ok \\d+") == {b"FAIL", b"ERROR", b"not ok "}
    assert needs("(x)?y*z{0,3}") is None and needs("a|[bc]") is None and needs("(?i:abc)") is None
    assert needs("(ab)+c") == {b"ab"}
    # The parser takes a prefix the branches share out of them (`E` then `rror|xception`): the entry
    # still needs a whole `Error` or `Exception`, not `rror`, which every line saying `errors` holds.
    assert needs("\\b[A-Za-z_.$]*(Error|Exception)\\b: ") == {b"Error", b"Exception"}


def test_entries_matching_at_the_same_place_past_the_start_go_to_the_earlier(combine_at_once):
    # A pack's entry comes after the shipped ones: where both match first at the same place, the
    # shipped `error:` entry wins, in the alternation past the start as entry by entry.
    with open(DATA_PATH, encoding="utf-8") as handle:
        sal = salience.Classifier(salience.build_bundle(json.load(handle), (("warning", "error: x", ("error",)),)))
    for line in (b"a error: x", b"a error: x", b"the error: x here"):
        assert sal.classify(line, sal.salient_lines(line)[0]) == "failure"
    assert sal.classify(b"a error: y", sal.salient_lines(b"a error: y")[0]) == "failure"


def test_past_a_line_start_an_entry_needs_only_what_its_unanchored_branches_need():
    from re import _constants, _parser

    tree = _parser.parse(b"^(FAIL|ERROR):? |^--- FAIL\\b|\\bFAILED\\b", 0).data
    assert matching.needs(tree, _constants) == {b"FAIL", b"ERROR", b"--- FAIL", b"FAILED"}
    assert matching.needs(matching._past_the_start(tree, _constants), _constants) == {b"FAILED"}
    # `ERROR` at a line's start is matched there; past it, only `FAILED` can make the entry match.
    line = b"x ERROR y"
    assert classifier().classify(line, classifier().salient_lines(line)[0]) == classifier().classify(line)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(LINE_PIECE, FRAGMENT, st.sampled_from(["Pass", "# FAIL", "ing", "ERR", "OR"])),
                max_size=8).map("".join), st.booleans())
def test_one_search_finds_the_literals_a_line_holds_as_a_test_of_each_would(line, fold):
    # Literals inside others and overlapping ones (`ERROR`/`ERR!`, `# fail`/`failing`) included.
    literals = {b"error": 1, b"err!": 2, b"rror": 4, b"# fail": 8, b"failing": 16, b"fail": 32, b"ing": 64}
    if not fold:
        literals = {literal.upper(): bits for literal, bits in literals.items()}
    finding = matching.Literals(literals, fold=fold)
    finding.pending = 0  # search at once
    testing = matching.Literals(literals, fold=fold)
    testing.pending = 10 ** 9  # test each
    data = line.encode()
    assert finding.held(data) == testing.held(data)
    text = data.lower() if fold else data
    assert testing.held(data) == sum(bits for literal, bits in literals.items() if literal in text)


def test_the_cached_classifier_follows_a_change_of_the_hint_patterns(tmp_path, monkeypatch):
    # The parse cache is keyed by what the bundle is built from: the data, the packs and the hint
    # patterns in code; a tree whose patterns changed must not read the bundle of the old ones.
    environ = {"XDG_CACHE_HOME": str(tmp_path)}
    monkeypatch.setattr(salience, "_CLASSIFIER", None)
    before = salience.classifier(environ).first_word.pattern
    changed = dict(salience.HINT_PATTERNS, first_word="(?m)^(\\S{0,8})")
    monkeypatch.setattr(salience, "HINT_PATTERNS", changed)
    monkeypatch.setattr(salience, "_CLASSIFIER", None)
    after = salience.classifier(environ).first_word.pattern
    assert before != after == b"(?m)^(\\S{0,8})"


def test_an_entry_reads_digits_only_where_it_tells_one_from_another():
    from re import _constants, _parser

    def reads(pattern: str) -> bool:
        return salience._reads_digits(_parser.parse(pattern.encode(), 0).data, _constants)

    for pattern in ("\\d+ errors", "[0-9]+", "[A-Za-z0-9_]+:", "[^ \\t]+", "\\w+\\b", "[ -~]", "(x|\\d{1,9}):"):
        assert not reads(pattern), pattern
    for pattern in ("[1-9]\\d*", "0%", "[^0]", "exit (status|code) [3-5]", "(\\d)\\1", "(?=\\d*7)", "[0-5]"):
        assert reads(pattern), pattern
    sal = classifier()
    assert len(sal.digit_readers) == 4  # an exit status from 1, a leak from 1, `E1`/`F4` codes, 0 % coverage
    assert sal.digit_blind((b"error",)) and not sal.digit_blind((b" 0%",))
    # A hint's word is taken at the same place of every line of a kind (`markers.search_pattern`).
    assert not reads(salience.HINT_PATTERNS["word"]) and not reads(salience.HINT_PATTERNS["location"])


_DIGITS = st.text("0123456789", min_size=1, max_size=4)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(LINE_PIECE, FRAGMENT, _DIGITS), min_size=1, max_size=10).map("".join), _DIGITS)
def test_a_line_differing_only_in_digits_gets_the_same_class_where_no_entry_reads_them(line, digits):
    # `Stream` asks one line of those that differ only in their digits when `digit_blind` says no entry their
    # triggers reach tells one digit from another: each must get the class the one asked got.
    sal = classifier()
    first = line.encode()
    other = bytes(digits.encode()[n % len(digits)] if 48 <= byte <= 57 else byte for n, byte in enumerate(first))
    found = sal.salient_lines(first).get(0)
    if found is None or sal.salient_lines(other).get(0) != found or not sal.digit_blind(found):
        return
    assert sal.entry_class(first, found) == sal.entry_class(other, found), (first, other)


def test_a_dense_output_of_numbered_lines_is_classed_as_each_line_alone():
    from yarp.view.streams import Stream

    out = b"".join(b"Checked %d records of 'customer%04d.example', %d errors, 0 warnings.\n" % (n % 9, n, n % 3 == 0)
                   for n in range(3000))
    out += b"src/app.py:7:1: E999 SyntaxError: invalid syntax\nexit status 0\nexit status 1\n  src/a.py  0%\n"
    sal = classifier()
    stream = Stream("stdout", out, sal)
    lines = out.split(b"\n")
    expected = {}
    for number, found in zip(*sal.salient_line_numbers(out)):
        cls = sal.entry_class(lines[number], found)
        if cls not in (None, "note"):
            expected[number] = cls
    assert {n: c for n, c in stream.classes.items() if n in expected or c != "rare"} == expected
    assert stream.classes[3000] == "failure" and stream.classes[3002] == "exit" and stream.classes.get(3001) != "exit"


def test_a_set_of_entries_that_keeps_missing_is_gated_by_the_literals_every_match_holds():
    # 2,000 index records `not found` reaches, none a missing command or file: once the set's entry has
    # missed `COMBINE_AFTER` lines, a search for its literals answers, and gives the entry's own answer.
    with open(DATA_PATH, encoding="utf-8") as handle:
        sal = salience.Classifier(salience.build_bundle(json.load(handle)))
    records = [b"ID: %064x rebuilt index: <not found>      committed index: (2, %d)" % (n * 7919, n)
               for n in range(2000)]
    lines = records[:1000] + [b"sh: line 1: frobnicate: command not found"] + records[1000:]
    found = (b"not found",)
    plan = sal._plan(found)
    assert plan.gate is None
    classes = [sal.entry_class(line, found) for line in lines]
    assert plan.gate is not None and plan.gate.search(records[0]) is None
    assert classes == [matching.leftmost(plan.tried, line, 0) for line in lines]
    assert classes.count(None) == 2000 and classes[1000] == "failure"


def _fresh_classifier():
    with open(DATA_PATH, encoding="utf-8") as handle:
        return salience.Classifier(salience.build_bundle(json.load(handle)))


_ONE_BY_ONE, _AT_ONCE = [], []  # classifiers kept across examples: their plans learn as a broker's do


def test_many_lines_of_one_plan_are_classed_at_once_as_one_by_one():
    # 2,000 index records `not found` reaches: a scan for the gate's literals leaves them out at once; the one
    # missing command is classed by its entry. A zip's 3,000 `(stored 0%)` lines: one search of them joined.
    records = [b"ID: %064x rebuilt index: <not found>      committed index: (2, %d)" % (n * 7919, n)
               for n in range(2000)]
    listing = [b"  adding: build/page-%04d/ (stored 0%%)" % n for n in range(3000)]
    # A log's 1,500 `:0.` times hold no `%`, which every match of that entry needs: none is searched.
    log = [b'{"level":30,"reqId":"req-%d","responseTime":0.%d,"msg":"request completed"}' % (n, n) for n in range(1500)]
    audit = [b"type=SYSCALL msg=audit(%d) : syscall=openat success=yes exit=%d pid=%d" % (n, n % 9, n) for n in range(400)]
    cases = [(records[:1000] + [b"sh: line 1: frobnicate: Command not found"] + records[1000:], (b"not found",), 1),
             (listing[:7] + [b"src/mod.c   40   40   0%"] + listing[7:] + [b"lib/x.py | 0.0% |"], (b" 0%",), 2),
             (log, (b":0.",), 0), (log + [b'{"cover":0.0% }', b'{"cover":0.5%}'], (b":0.",), 1),
             # 400 audit records each holding `exit=`, a literal of the gate's: no scan, each line's gate asked.
             (audit[:200] + [b"worker exited with status 3"] + audit[200:], (b"exit",), 1)]
    for lines, found, salient in cases:
        one_by_one = _fresh_classifier()
        expected = [one_by_one.entry_class(line, found) for line in lines]
        sal = _fresh_classifier()
        assert sal.entry_classes(lines, [found] * len(lines)) == expected
        assert expected.count(None) == len(lines) - salient
        plan = sal.plans[found]
        if found != (b"exit",):
            assert plan.joined is not None and (plan.scanned is None) == (found != (b"not found",))


def test_lines_classed_at_once_are_read_past_their_paths_and_debug_levels_as_one_by_one():
    # A failure word inside a path says where, and a failure logged at debug level is a detail: lines classed
    # at once are read past them as each line alone is; lines holding neither keep their class unread.
    paths = [b"reading /srv/core dumped/x%d.log" % n for n in range(40)]
    debug = [b"[%d] dbg: worker %d core dumped" % (15353 + n, n) for n in range(40)]
    plain = [b"worker %d core dumped" % n for n in range(40)]
    for lines in (paths, debug, plain + paths[:1], plain):
        sal, alone = _fresh_classifier(), _fresh_classifier()
        founds = [sal.salient_lines(line)[0] for line in lines]
        expected = [alone.entry_class(line, found) for line, found in zip(lines, founds)]
        assert sal.entry_classes(lines, founds) == expected
        assert expected[0] == (None if lines[0] in paths + debug else "failure")
        assert type(sal.plans[founds[0]]) is matching.Plan and sal.plans[founds[0]].joined  # read at once


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(st.one_of(LINE_PIECE, FRAGMENT), min_size=1, max_size=6).map("".join),
                          st.booleans()), min_size=1, max_size=120))
def test_lines_classed_at_once_get_the_classes_they_get_one_by_one(rows):
    # Lines grouped by the triggers a scan found on them; half of them end in a carriage return.
    if not _ONE_BY_ONE:
        _ONE_BY_ONE.append(_fresh_classifier())
        _AT_ONCE.append(_fresh_classifier())
    sal = _ONE_BY_ONE[0]
    lines = [(text + ("\r" if cr else "")).encode() for text, cr in rows]
    held = [(line, sal.salient_lines(line).get(0)) for line in lines]
    held = [(line, found) for line, found in held if found is not None]
    # Each group many times over, so that groups pass `JOINED_LINES`.
    asked = [line for line, _ in held] * 3
    founds = [found for _, found in held] * 3
    expected = [sal.entry_class(line, found) for line, found in zip(asked, founds)]
    assert _AT_ONCE[0].entry_classes(asked, founds) == expected


#: Patterns a joined search must read as each line alone reads them, and lines to read.
_JOINABLE = [rb"[ \t|:]0(\.0+)?%([ \t|]|$)", rb"^x", rb"x$", rb"^$", rb"\bab\b", rb"(?<!\S)ab", rb"ab(?=\d)",
             rb"(?<=:)\w+", rb"[^\n:]+:$", rb"a.*b", rb"(?!a)\w", rb"^(?:ab|x)*$", rb"\d+", rb"[]a]b", rb"[^\n:]a",
             rb"[ :|]0(?=%)", rb"[ :]a*", rb"[\]0]%$"]
_NOT_JOINABLE = [rb"a\sb", rb"[^x]", rb"\Aab", rb"ab\Z", rb"\B", rb"(?s:a.b)", rb"a\nb", rb"(?i)ab", rb"(a)\1",
                 rb"[\x00-\x7f]", rb"\W", rb"[\D]"]


def test_a_pattern_searches_lines_joined_only_where_nothing_in_it_reads_across_them():
    import re

    for source in _JOINABLE:
        assert matching.joined_search(re.compile(source)) is not None, source
    for source in _NOT_JOINABLE:
        assert matching.joined_search(re.compile(source)) is None, source
    assert matching.joined_search(re.compile(rb"ab", re.IGNORECASE)) is None
    # A set of characters first is searched from the literal after it, the set behind it.
    assert matching.joined_search(re.compile(rb"[ \t|:]0(\.0+)?%")).pattern == rb"0(?<=[ \t|:]0)(\.0+)?%"
    assert matching.joined_search(re.compile(rb"[ :]a*")).pattern == rb"[ :]a*"  # not one literal


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "x", " ", ":", "0", "0%", ".0", "\t", "|", "\r", "7", "é"]),
                         max_size=7).map("".join), min_size=1, max_size=30))
def test_a_joined_search_finds_the_lines_each_search_alone_finds(texts):
    import re

    lines = [text.encode() for text in texts]
    for source in _JOINABLE:
        pattern = re.compile(source)
        expected = [number for number, line in enumerate(lines) if pattern.search(line)]
        assert matching.lines_holding(matching.joined_search(pattern), lines) == expected, source


def test_a_gate_is_known_only_where_every_pattern_needs_a_literal():
    def gate(patterns):
        return matching.gate(matching.gate_literals(patterns))

    assert gate([rb"^(FAIL|ERROR):? ", rb"\berror( TS\d+)?\b"]).pattern == rb"ERROR|error|FAIL"
    # A pattern whose matches need no literal, or a case-insensitive one, leaves every line to the entries.
    assert gate([rb"\berror\b", rb"(x)?y*"]) is None
    assert gate([rb"(?i)boom"]) is None


def test_a_plans_gate_literals_are_parsed_once_for_its_gate_and_its_scan(monkeypatch):
    import re

    parsed = []
    real = matching.gate_literals
    monkeypatch.setattr(matching, "gate_literals", lambda patterns: parsed.append(patterns) or real(patterns))
    plan = matching.Plan((("failure", None, re.compile(rb"\bcommand not found\b")),
                          ("exit", None, re.compile(rb"^exit status [1-9]")),
                          ("failure", None, re.compile(rb"^fatal: "))))
    lines = [b"sh: x: command not found", b"exit status 2", b"fatal: no"] + [b"plain %d" % n for n in range(40)]
    expected = ["failure", "exit", "failure"] + [None] * 40
    assert plan.entry_classes(lines) == expected  # the scan of lines at once asks the literals
    assert [plan.entry_class(line) for line in lines] == expected  # misses compile the gate from them
    assert plan.gate is not None and plan.gate.search(b"a command not found") and len(parsed) == 1
