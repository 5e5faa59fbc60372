"""The pruning corpus is complete and its signal annotations stay true to the recorded bytes.

A signal that matches no line would silently score as "kept"; a missing file or a lost large
or non-UTF-8 case would let the pruning measurement skip exactly the outputs it exists for.
"""

from __future__ import annotations

import os
import re
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "bench"))

import corpus_cases  # noqa: E402

#: The spec's default global cap; the needed lines of one case must fit in it with room for
#: markers, otherwise no view could keep them all.
DEFAULT_CAP = 5120


@pytest.fixture(scope="module")
def cases():
    return corpus_cases.load_cases()


def test_every_manifest_entry_has_its_files():
    for entry in corpus_cases.manifest_entries():
        for stream in corpus_cases.STREAMS:
            raw = os.path.join(corpus_cases.CORPUS_DIR, f"{entry['name']}.{stream}")
            packed = raw + ".zst"
            assert os.path.exists(raw) != os.path.exists(packed), (entry["name"], stream)


def test_names_are_unique_and_fields_valid(cases):
    names = [case.name for case in cases]
    assert len(names) == len(set(names))
    for case in cases:
        assert case.tool and case.argv, case.name
        assert case.signals, f"{case.name} has no signal"
        for signal in case.signals:
            assert signal.stream in corpus_cases.STREAMS, case.name
            assert signal.why.strip(), case.name
            re.compile(signal.pattern)


def test_every_signal_matches_a_raw_line(cases):
    for case in cases:
        for signal in case.signals:
            assert corpus_cases.signal_matches(case, signal), (case.name, signal.pattern)


def test_signal_lines_are_sorted_unique_and_real(cases):
    for case in cases:
        found = corpus_cases.signal_lines(case)
        keys = [(stream, index) for stream, index, _ in found]
        assert keys == sorted(set(keys)), case.name
        lines = {"stdout": corpus_cases.split_lines(case.stdout), "stderr": corpus_cases.split_lines(case.stderr)}
        for stream, index, text in found:
            assert lines[stream][index] == text


def test_needed_lines_fit_the_default_cap(cases):
    for case in cases:
        needed = sum(len(text.encode()) + 1 for _, _, text in corpus_cases.signal_lines(case))
        assert needed <= DEFAULT_CAP * 4 // 5, (case.name, needed)


def test_corpus_breadth(cases):
    assert len(cases) >= 40
    assert len({case.tool for case in cases}) >= 15
    sizes = [len(case.stdout) + len(case.stderr) for case in cases]
    assert max(sizes) > 1024 * 1024
    codes = {case.exit_code for case in cases}
    assert 0 in codes and codes - {0}


def test_some_case_has_non_utf8_bytes(cases):
    def invalid(data):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    assert any(invalid(case.stdout) or invalid(case.stderr) for case in cases)


def test_important_lines_sit_in_the_middle_somewhere(cases):
    """At least one large case needs a line far from both ends, where a head+tail cap cuts."""
    middle = 0
    for case in cases:
        counts = {"stdout": case.stdout.count(b"\n"), "stderr": case.stderr.count(b"\n")}
        for stream, index, _ in corpus_cases.signal_lines(case):
            if 100 < index < counts[stream] - 100:
                middle += 1
                break
    assert middle >= 3


def test_only_large_streams_are_stored_compressed(cases):
    """The repository stays lean: raw files are small, and only big outputs pay for zstandard."""
    for case in cases:
        for stream in corpus_cases.STREAMS:
            path = corpus_cases.stream_path(case.name, stream)
            size = len(getattr(case, stream))
            if path.endswith(".zst"):
                assert size > 200 * 1024, (case.name, stream)
                assert os.path.getsize(path) * 10 < size, (case.name, stream)
            else:
                assert size <= 200 * 1024, (case.name, stream)
