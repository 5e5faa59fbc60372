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

from yarp.shell import salience
from yarp.shell.salience import DATA_PATH, classifier

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
    assert {e["class"] for e in data["entries"]} <= set(salience.CLASSES)
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
    code = ("import sys; from yarp.shell import salience; c = salience.classifier(); "
            "print(c.classify(b'a.c:1:2: error: x'), 're' in sys.modules, 'json' in sys.modules)")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout.split()
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout.split()
    assert first == [b"failure", b"True", b"True"]
    assert warm == [b"failure", b"False", b"False"]
