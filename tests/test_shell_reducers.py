"""Streaming reducers on the recorded corpus and on generated edge cases."""

from __future__ import annotations

import json
import os
import re
import tracemalloc

import pytest

from yarp.view import reducers
from yarp.limits import DEFAULT_CAP_BYTES
from yarp.view.cap import cap_text
from yarp.view.reducers import FAMILIES, copy_stream, reduce_stream
from yarp.view.rules import load_rules, parse_rules, select_rule

CORPUS = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "corpus")
REF = "yr_" + "0123456789abcdef" * 2
MARKER_RE = re.compile(
    rb"^\[yarp: omitted (\d+) line\(s\)(?:, truncated (\d+) line\(s\))?(?: within the commits shown)?; ref="
    + REF.encode() + rb"; (stdout|stderr) complete\]\nSearch omitted output: yarp search " + REF.encode()
    + rb" '[^'\n]+'\n",
    re.MULTILINE,
)
#: A later omitted run of the same stream: one line, the first marker having named the reference.
LINE_MARKER_RE = re.compile(rb"^\[yarp: omitted (\d+) line\(s\)(?:, truncated (\d+) line\(s\))?\]\n", re.MULTILINE)
#: The line count a diff reducer shows after each kept file header.
SECTION_RE = re.compile(rb"^\[yarp: (\d+) line\(s\) in this file's diff\]\n", re.MULTILINE)

with open(os.path.join(CORPUS, "manifest.json"), encoding="utf-8") as _handle:
    MANIFEST = json.load(_handle)

#: Evidence that must survive pruning, per corpus case (stream -> byte strings).
MUST_SHOW = {
    "pytest-failures": {"stdout": [b"ZeroDivisionError", b"JSONDecodeError", b"3 failed, 481 passed", b"FAILED tests/test_broken.py::test_raises"]},
    "pytest-verbose": {"stdout": [b"FAILED", b"3 failed, 481 passed"]},
    "unittest-failures": {"stderr": [b"KeyError", b"FAILED (failures=", b"Ran 91 tests"]},
    "cargo-test": {"stdout": [b"panicked at", b"arithmetic drifted", b"test result: FAILED"]},
    "ruff-check": {"stdout": [b"Found "]},
    "git-log": {"stdout": [b"commit "]},
    "git-diff": {"stdout": [b"diff --git a/src/module_00.py"]},
}


@pytest.fixture(scope="module")
def shipped():
    return load_rules()


def _lines_subsequence(shown: bytes, source: bytes) -> None:
    """Every non-marker line shown is a whole source line (or a prefix of one), in source order."""
    body = LINE_MARKER_RE.sub(b"", SECTION_RE.sub(b"", MARKER_RE.sub(b"", shown.split(b"\n", 1)[1])))
    src_lines = source.splitlines(keepends=True)
    cursor = 0
    for line in body.splitlines(keepends=True):
        while cursor < len(src_lines) and not src_lines[cursor].startswith(line.rstrip(b"\n")):
            cursor += 1
        assert cursor < len(src_lines), f"shown line not found in order: {line[:80]!r}"
        cursor += 1


def _records_are_the_text(shown: bytes, stats) -> None:
    """The markers a reducer returns are those its text holds: each record's text at its line,
    every omission counted once, and reading the text finds the same markers, pairs and header."""
    from yarp.view.markers import Omission, RecordMarkers, Summary, TextMarkers

    lines = (shown[:-1] if shown.endswith(b"\n") else shown).split(b"\n")
    assert isinstance(stats.markers[0], Summary) and stats.markers[0].line == 0
    for record in stats.markers:
        assert b"".join(line + b"\n" for line in lines[record.line:record.line + record.height]) == record.text()
    omissions = [r for r in stats.markers if isinstance(r, Omission)]
    assert sum(r.omitted for r in omissions) == stats.omitted_lines
    assert all(r.last - r.first + 1 == r.omitted for r in omissions if r.first)
    text, records = TextMarkers(lines, range(len(lines))), RecordMarkers(stats.markers)
    found = [i for i, line in enumerate(lines) if text.is_marker(i, line)]
    assert found == [i for i, line in enumerate(lines) if records.is_marker(i, line)]
    assert [text.pair(lines, i) for i in found] == [records.pair(lines, i) for i in found]
    assert (text.reduced, text.header) == (records.reduced, records.header)


def _cap_reads_the_records_as_the_text(tmp_path, path, stats) -> None:
    """The runner's cap, given the records, shows what it shows reading the view's text."""
    from yarp.view.cap import cap_files

    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    for cap in (1024, 2048, 5120):
        paths = [str(path), str(empty)]
        assert (cap_files(paths, cap=cap, archive_ref=REF, markers=(stats.markers, None))
                == cap_files(paths, cap=cap, archive_ref=REF))


@pytest.mark.parametrize("case", MANIFEST, ids=[c["name"] for c in MANIFEST])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_corpus_case(tmp_path, shipped, case, stream):
    src = os.path.join(CORPUS, f"{case['name']}.{stream}")
    with open(src, "rb") as handle:
        source = handle.read()
    rule = select_rule(case["argv"], shipped)
    assert rule is not None, "every corpus command has a reduce rule"
    dst = tmp_path / "out"
    stats = reduce_stream(rule, case["exit_code"], src, str(dst), ref=REF, stream_name=stream)
    shown = dst.read_bytes()
    assert stats.source_bytes == len(source) and stats.shown_bytes == len(shown)
    if not stats.reduced:
        assert shown == source and stats.markers == ()
        return
    limits = rule.limits_for(case["exit_code"])
    assert len(source) - len(shown) >= limits.min_savings_bytes
    family = rule.reducer
    header = shown.split(b"\n", 1)[0].decode()
    lines = source.count(b"\n") + (not source.endswith(b"\n"))
    assert header.startswith(f"[yarp summary: {family}; source_lines={lines};")
    markers = MARKER_RE.findall(shown)
    assert len(markers) == 1, "a reduced stream names its reference and search once"
    assert shown.index(b"[yarp: omitted ") == shown.index(MARKER_RE.search(shown).group())
    assert all(m[2].decode() == stream for m in markers)
    later = LINE_MARKER_RE.findall(shown)
    assert sum(int(m[0]) for m in markers + later) == stats.omitted_lines
    _lines_subsequence(shown, source)
    _records_are_the_text(shown, stats)
    _cap_reads_the_records_as_the_text(tmp_path, dst, stats)
    shown.decode("utf-8")
    for needle in MUST_SHOW.get(case["name"], {}).get(stream, []):
        assert needle in shown, needle


def test_large_streams_shrink_a_lot(tmp_path, shipped):
    # What the agent is shown: the reducer's view, or, for a family left to it, the global view's.
    total_src = total_shown = 0
    for case in MANIFEST:
        rule = select_rule(case["argv"], shipped)
        for stream in ("stdout", "stderr"):
            src = os.path.join(CORPUS, f"{case['name']}.{stream}")
            if os.path.getsize(src) < 10_000:
                continue
            if rule is not None and FAMILIES[rule.reducer].generic:
                data = open(src, "rb").read()
                shown = cap_text(data, archive_ref=REF, source=stream, exit_code=case["exit_code"])
                assert len(shown) < len(data)
                total_src, total_shown = total_src + len(data), total_shown + len(shown)
                continue
            stats = reduce_stream(rule, case["exit_code"], src, str(tmp_path / "o"), ref=REF, stream_name=stream)
            assert stats.reduced
            total_src += stats.source_bytes
            total_shown += stats.shown_bytes
    assert total_shown * 5 < total_src


def _rule(text: str):
    return parse_rules(("version = 1\n[[rule]]\n" + text).encode(), "test")[0]


TEST_RULE = 'id = "t"\nprogram = ["t"]\naction = "reduce"\nreducer = "test"\n[rule.success]\nmin_savings_bytes = 0\n[rule.failure]\nmin_savings_bytes = 0\n'


def _noise(lines: int, extra: bytes = b"") -> bytes:
    return b"".join(b"line %d of ordinary progress output\n" % i for i in range(lines)) + extra


@pytest.mark.parametrize("payload", [
    _noise(2000, b"FAILED \x00 binary\n"),
    _noise(2000, b"FAILED \xff\xfe not utf-8\n"),
    b"\xe2\x82" + _noise(2000),  # truncated UTF-8 sequence at the start
    _noise(2000) + b"\xe2\x82",  # and at the very end
], ids=["nul", "invalid", "bad-start", "bad-end"])
def test_binary_or_invalid_utf8_passes_through_unchanged(tmp_path, payload):
    src = tmp_path / "in"
    src.write_bytes(payload)
    stats = reduce_stream(_rule(TEST_RULE), 1, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
    assert not stats.reduced
    assert (tmp_path / "out").read_bytes() == payload


def test_small_saving_copies_unchanged(tmp_path, shipped):
    src = tmp_path / "in"
    src.write_bytes(_noise(30))
    stats = reduce_stream(select_rule(["pytest"], shipped), 0, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
    assert not stats.reduced and (tmp_path / "out").read_bytes() == src.read_bytes()


def test_no_rule_is_an_exact_copy(tmp_path):
    src = tmp_path / "in"
    src.write_bytes(os.urandom(3_000_000))
    stats = reduce_stream(None, 0, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
    assert not stats.reduced and (tmp_path / "out").read_bytes() == src.read_bytes()
    assert copy_stream(str(src), str(tmp_path / "again")) == 3_000_000


def test_failure_evidence_kept_with_context_and_stderr_marker(tmp_path):
    payload = _noise(3000) + b"Traceback (most recent call last):\n  File \"x.py\", line 3\nValueError: bad\n" + _noise(3000)
    src = tmp_path / "in"
    src.write_bytes(payload)
    stats = reduce_stream(_rule(TEST_RULE), 1, str(src), str(tmp_path / "out"), ref=REF, stream_name="stderr")
    shown = (tmp_path / "out").read_bytes()
    assert stats.reduced and stats.source_lines == 6003
    assert b"Traceback (most recent call last):\n  File \"x.py\", line 3\nValueError: bad\n" in shown
    assert shown.startswith(b"[yarp summary: test; source_lines=6003;")
    assert b"line 0 of" in shown and b"line 2999 of" in shown  # first and last lines
    assert b"stderr complete]" in shown and b"stdout complete" not in shown
    assert b"yarp search " + REF.encode() + b" 'FAILED|Error'" in shown


def test_long_lines_truncated_at_utf8_boundary_and_counted(tmp_path):
    long_line = ("é" * 5000).encode() + b"\n"
    payload = long_line + _noise(3000) + long_line
    src = tmp_path / "in"
    src.write_bytes(payload)
    reduce_stream(_rule(TEST_RULE), 0, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
    shown = (tmp_path / "out").read_bytes()
    shown.decode("utf-8")
    assert b"truncated 1 line(s)" in shown


def test_giant_line_without_newline_is_bounded(tmp_path):
    payload = _noise(100) + b"x" * (3 * reducers.MAX_CARRY_BYTES) + b"\n" + _noise(100) + b"tail without newline"
    src = tmp_path / "in"
    src.write_bytes(payload)
    stats = reduce_stream(_rule(TEST_RULE), 0, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
    shown = (tmp_path / "out").read_bytes()
    assert stats.reduced and stats.source_lines == 202
    assert len(shown) < 10_000
    assert b"tail without newline" in shown


def test_missing_final_newline_is_preserved(tmp_path):
    payload = _noise(3000) + b"last line"
    src = tmp_path / "in"
    src.write_bytes(payload)
    stats = reduce_stream(_rule(TEST_RULE), 0, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
    shown = (tmp_path / "out").read_bytes()
    assert stats.source_lines == 3001
    assert shown.endswith(b"\nlast line")  # no newline added after the source's unterminated last line


def test_filter_rule_keep_and_drop(tmp_path):
    rule = _rule('id = "f"\nprogram = ["f"]\naction = "reduce"\nreducer = "filter"\nkeep = ["^KEEP "]\n'
                 'drop = ["^KEEP secret"]\n[rule.success]\nhead_lines = 0\ntail_lines = 0\ncontext_lines = 0\n')
    payload = b"".join(b"KEEP %d\n" % i if i % 500 == 0 else b"noise %d\n" % i for i in range(5000)) + b"KEEP secret\n"
    src = tmp_path / "in"
    src.write_bytes(payload)
    stats = reduce_stream(rule, 0, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
    shown = (tmp_path / "out").read_bytes()
    assert stats.reduced
    assert [l for l in shown.splitlines() if l.startswith(b"KEEP")] == [b"KEEP %d" % i for i in range(0, 5000, 500)]
    assert b"noise" not in shown and b"secret" not in shown


def test_huge_input_constant_memory(tmp_path, shipped):
    src = tmp_path / "big"
    block = _noise(1000, b"E   AssertionError: boom\n")
    with open(src, "wb") as handle:
        written = 0
        while written < 50_000_000:
            handle.write(block)
            written += len(block)
    rule = select_rule(["pytest"], shipped)
    tracemalloc.start()
    try:
        stats = reduce_stream(rule, 1, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stats.reduced and stats.source_bytes == written
    assert stats.shown_bytes <= rule.failure.max_output_bytes + 2048
    assert peak < 8 * reducers.CHUNK_BYTES  # a few chunks, independent of the 50 MB input


def test_families_have_hints_without_quotes():
    for family in FAMILIES.values():
        assert "'" not in family.search_hint and "|" in family.search_hint


def test_line_start_evidence_only_matches_at_line_start(tmp_path):
    rule = _rule('id = "g"\nprogram = ["git"]\naction = "reduce"\nreducer = "log"\n[rule.success]\nhead_lines = 0\n'
                 'tail_lines = 0\ncontext_lines = 0\nmin_savings_bytes = 0\n')
    payload = b"commit aaa\n" + b"".join(b"  mentions commit %d inside\n" % i for i in range(3000)) + b"commit bbb\n"
    src = tmp_path / "in"
    src.write_bytes(payload)
    reduce_stream(rule, 0, str(src), str(tmp_path / "out"), ref=REF, stream_name="stdout")
    shown = (tmp_path / "out").read_bytes()
    assert b"commit aaa\n" in shown and b"commit bbb\n" in shown and b"mentions" not in shown
    assert b"commits=2" in shown


# --- failures before successes, on real tool outputs (tests/vectors/cap) ---------------------------


def _vector_input(name: str) -> bytes:
    path = os.path.join(os.path.dirname(__file__), "vectors", "cap", f"{name}.json")
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["input"].encode()


def _reduce(tmp_path, argv, data: bytes, exit_code: int) -> bytes:
    src = tmp_path / "src"
    src.write_bytes(data)
    rule = select_rule(argv, load_rules())
    stats = reduce_stream(rule, exit_code, str(src), str(tmp_path / "dst"), ref=REF, stream_name="stdout")
    assert stats.reduced
    return (tmp_path / "dst").read_bytes()


def test_build_errors_survive_many_warnings_in_the_view(tmp_path):
    # A shipped build rule leaves the stream to the global view, which keeps every error.
    data = _vector_input("gcc-errors-among-warnings")
    errors = [line for line in data.split(b"\n") if b": error: " in line]
    assert len(errors) == 3
    data = data * 6  # many more warnings before the last errors
    rule = select_rule(["gcc", "-c", "f1.c"], load_rules())
    src = tmp_path / "src"
    src.write_bytes(data)
    stats = reduce_stream(rule, 1, str(src), str(tmp_path / "dst"), ref=REF, stream_name="stdout")
    assert not stats.reduced and (tmp_path / "dst").read_bytes() == data
    shown = cap_text(data, archive_ref=REF, source="stdout", exit_code=1)
    assert len(shown) <= DEFAULT_CAP_BYTES and b"; exit status 1]" in shown
    for line in errors:
        assert line in shown


def test_a_pack_build_rule_with_its_own_patterns_still_reduces(tmp_path):
    pack = tmp_path / "pack.toml"
    pack.write_text('version = 1\n[[rule]]\nid = "local/deploy"\nprogram = ["deploy"]\naction = "reduce"\n'
                    'reducer = "build"\nkeep = ["^DEPLOYED "]\n')
    rule = select_rule(["deploy"], load_rules(packs=[str(pack)]))
    data = b"".join(b"step %d of the rollout\n" % i for i in range(400)) + b"DEPLOYED web-7\n"
    src = tmp_path / "src"
    src.write_bytes(data)
    stats = reduce_stream(rule, 0, str(src), str(tmp_path / "dst"), ref=REF, stream_name="stdout")
    shown = (tmp_path / "dst").read_bytes()
    assert stats.reduced and shown.startswith(b"[yarp summary: build;") and b"DEPLOYED web-7\n" in shown


def test_tests_count_passed_lines_and_show_every_failure(tmp_path):
    data = _vector_input("pytest-v-two-failures")
    shown = _reduce(tmp_path, ["pytest", "-v"], data, 1)
    header = shown.split(b"\n", 1)[0]
    assert b"passed_lines=400" in header
    assert shown.count(b" PASSED") == 0
    for needle in (b"E       KeyError: 'missing'", b"test_many.py:8: AssertionError", b"test_many.py:12: KeyError",
                   b"E       AssertionError: assert {'a': 1} == {'a': 2, 'b': 3}", b"2 failed, 400 passed"):
        assert needle in shown, needle


@pytest.fixture
def repo(tmp_path):
    import subprocess

    root = tmp_path / "repo"
    root.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.com", GIT_COMMITTER_NAME="A",
               GIT_COMMITTER_EMAIL="a@example.com")

    def git(*args):
        return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True).stdout

    git("init", "-q")
    for number in range(60):
        (root / f"m{number % 12}.py").write_text("".join(f"value_{number}_{i} = {i}\n" for i in range(40)))
        git("add", ".")
        git("commit", "-q", "-m", f"Change module {number % 12} for release {number}", "-m", "Longer body text.\n" * 3)
    return git


def test_small_git_log_is_shown_unchanged(tmp_path, repo):
    data = repo("log", "-n", "12")
    assert len(data) <= 5120
    src = tmp_path / "log"
    src.write_bytes(data)
    stats = reduce_stream(select_rule(["git", "log", "-n", "12"], load_rules()), 0, str(src), str(tmp_path / "out"),
                          ref=REF, stream_name="stdout")
    assert not stats.reduced and (tmp_path / "out").read_bytes() == data


def test_git_log_keeps_each_shown_commits_subject(tmp_path, repo):
    data = repo("log", "--stat")
    shown = _reduce(tmp_path, ["git", "log", "--stat"], data, 0).decode()
    lines = shown.split("\n")
    commits = [i for i, line in enumerate(lines) if line.startswith("commit ")]
    assert len(commits) >= 10
    for index in commits:
        block = lines[index:index + 6]
        assert any(line.startswith("    Change module ") for line in block), block


def test_git_diff_keeps_every_file_header_with_its_line_count(tmp_path, repo):
    data = repo("diff", "HEAD~12")
    headers = [line for line in data.split(b"\n") if line.startswith(b"diff --git ")]
    assert len(headers) == 12
    shown = _reduce(tmp_path, ["git", "diff", "HEAD~12"], data, 0)
    lines = shown.split(b"\n")
    for header in headers:
        at = lines.index(header)
        count = SECTION_RE.match(lines[at + 1] + b"\n")
        assert count and int(count[1]) > 0


def test_git_log_shows_every_commit_as_its_record_and_names_the_rest_once(tmp_path, repo):
    data = repo("log", "--stat")
    source = data.split(b"\n")
    shown = _reduce(tmp_path, ["git", "log", "--stat"], data, 0)
    lines = shown.split(b"\n")
    commits = [i for i, line in enumerate(lines) if line.startswith(b"commit ")]
    assert len(commits) == 60, "every commit of a 60-commit log fits as commit line and subject"
    full = {line[:19]: number for number, line in enumerate(source) if line.startswith(b"commit ")}
    short = 0
    for index in commits[1:-1]:  # the first and last are the head's and the tail's, shown whole
        assert lines[index + 1].startswith(b"    Change module "), lines[index:index + 2]
        assert source.index(lines[index + 1]) > full[lines[index][:19]]
        short += len(lines[index]) == len("commit ") + 12
    assert short >= 50, "records name commits by 12-digit ids"
    assert shown.count(b"\nAuthor: ") <= 2  # only the head's and tail's commits show their authors
    pair = MARKER_RE.search(shown)
    assert pair and f", truncated {short} line(s) within the commits shown; ".encode() in pair.group(0)
    assert shown.index(pair.group(0)) == len(lines[0]) + 1, "the pair follows the summary"
    assert len(MARKER_RE.findall(shown)) == 1
    _lines_subsequence(shown, data)


def test_search_results_show_each_files_first_match(tmp_path):
    data = b"".join(b"src/pkg/file_%02d.py:%d:    value = compute(%d)\n" % (f, line, line)
                    for f in range(24) for line in range(1, 60, 3))
    shown = _reduce(tmp_path, ["grep", "-rn", "compute", "src"], data, 0)
    assert len(shown) <= 6144 + 200
    for number in range(24):
        assert b"src/pkg/file_%02d.py:1:    value = compute(1)\n" % number in shown, number
    _lines_subsequence(shown, data)
    assert b"matches=480" in shown.split(b"\n", 1)[0]


def test_search_file_starts_ignore_lines_without_a_location(tmp_path):
    data = b"".join(b"a.py:%d:x\n--\nBinary file b.bin matches\n" % n for n in range(400)) + b"c.py:7:last\n"
    shown = _reduce(tmp_path, ["grep", "-rn", "-C1", "x", "."], data, 0)
    assert b"a.py:0:x\n" in shown and b"c.py:7:last" in shown
    assert shown.count(b"a.py:") < 100


def _ruff_finding(code: str, message: str, path: str, line: int, fixable: bool) -> bytes:
    mark = " [*]" if fixable else ""
    return (f"{code}{mark} {message}\n --> {path}:{line}:5\n  |\n{line} |     y = 1\n  |     ^\n  |\n"
            f"help: {'Remove it' if fixable else 'Rename it'}\n  |\n{line} | -   y = 1\n  |\n\n").encode()


def test_lint_findings_left_for_the_reader_come_before_fixable_ones(tmp_path):
    data = b"".join(
        b"".join(_ruff_finding("F401", f"`m{k}` imported but unused", f"pkg/f{n:02d}.py", k + 1, True)
                 for k in range(4)) + _ruff_finding("E711", "Comparison to `None`", f"pkg/f{n:02d}.py", 9, False)
        for n in range(30)
    ) + b"Found 150 errors.\n[*] 120 fixable with `--fix`.\n"
    # A shipped ruff rule leaves the stream to the global view, which holds the fixable ones back.
    shown = cap_text(data, archive_ref=REF, source="stdout", exit_code=1)
    for n in range(30):
        assert f" --> pkg/f{n:02d}.py:9:5\n".encode() in shown, n
    assert shown.count(b"E711 Comparison to `None`\n") == 30
    assert b"Found 150 errors." in shown and b"fixable with `--fix`" in shown
    assert len(shown) <= DEFAULT_CAP_BYTES


def test_search_output_without_locations_gives_head_and_tail_the_whole_budget(tmp_path):
    data = b"".join(b"    value = compute(%d)  # no path, no line number\n" % n for n in range(3000))
    shown = _reduce(tmp_path, ["grep", "compute", "one.py"], data, 0)
    body = LINE_MARKER_RE.sub(b"", MARKER_RE.sub(b"", shown.split(b"\n", 1)[1]))
    assert len(body) > 6144 * 0.8, "no budget is held back for file starts that cannot occur"
    assert body.count(b"\n") <= 160


@pytest.mark.parametrize("argv, line", [
    (["git", "diff", "--stat", "v2.0", "HEAD"], " src/pkg{n}/mod_{n:03d}.py  |  {w} {plus}{minus}"),
    (["git", "log", "--oneline", "--graph", "--all"], "| * {n:07x} feature {n}: step {w} of the work"),
])
def test_a_reducer_that_recognises_none_of_its_records_leaves_the_stream_to_the_view(tmp_path, argv, line):
    # `git diff --stat` holds no `diff --git` file and `git log --oneline` no `commit` record: the diff and
    # log reducers would cut it by their own budget, blind to its rare rows; the view judges it instead.
    data = "".join(line.format(n=n, w=20 + n % 5, plus="+" * (10 + n % 5), minus="-" * 10) + "\n"
                   for n in range(400)).encode()
    rule = select_rule(argv, load_rules())
    assert rule is not None and rule.reducer in ("diff", "log")
    src = tmp_path / "src"
    src.write_bytes(data)
    stats = reduce_stream(rule, 0, str(src), str(tmp_path / "dst"), ref=REF, stream_name="stdout")
    assert not stats.reduced and (tmp_path / "dst").read_bytes() == data
    with_record = (b"commit 0123456789abcdef0123456789abcdef01234567\n" if rule.reducer == "log"
                   else b"diff --git a/x b/x\n") + data
    src.write_bytes(with_record)
    assert reduce_stream(rule, 0, str(src), str(tmp_path / "dst"), ref=REF, stream_name="stdout").reduced
