"""The global cap: a salience-ordered view of whole lines, its markers and its properties.

Per-tool cases are real outputs recorded from the tools on a development
machine (tests/vectors/cap/*.json), each with the lines an engineer must see
and the view expected of it; every adapter gets this one view from the broker.
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from run_helpers import close_run_env, make_run_env, yarp, yrun

from yarp.limits import DEFAULT_CAP_BYTES
from yarp.view.cap import cap_blocks, cap_files, cap_streams, cap_text

REF = "yr_" + "ab" * 16
VECTORS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "vectors", "cap", "*.json")))
COUNTS = r"(?:\d+ (?:failure|summary|warning|other)(?:, )?)+"
LIKE = r'(?: like "[^"\n]*")?'
MAIN_RE = re.compile(r"^\[yarp: (\d+) byte\(s\) capped at (\d+); ref=(yr_[0-9a-f]{32}); (\w+) (complete|incomplete|unknown)\]$")
HEADER_RE = re.compile(
    r"^\[yarp: (?:long line\(s\) cut, none omitted|omitted (" + COUNTS + r") line\(s\)(?: in (\d+) runs)?"
    r"(?:(?:; here (\d+)|)" + LIKE + r"(?:: yarp read (yr_[0-9a-f]{32}) (\w+) (\d+):(\d+)| of this view))?)"
    r"(?:; exit status -?\d+)?\]$")
SEARCH_RE = re.compile(r"^Search omitted output: yarp search (yr_[0-9a-f]{32}) '([^']+)'$")
GAP_RE = re.compile(r"^\[yarp: omitted (\d+) line\(s\)" + LIKE + r"; (\w+) (\d+):(\d+)\]$")
VIEW_GAP_RE = re.compile(r"^\[yarp: omitted (\d+) line\(s\)" + LIKE + r" of this view\]$")
CUT_RE = re.compile(r"^\[yarp: line (\d+) cut: bytes (\d+):(\d+) of (\d+) omitted\]$")


def header_run(match) -> tuple[int, int, int] | None:
    """The run a header stands in for: (count, first, last) with a `yarp read` range, (count, 0, 0) in a
    reducer's view, None when it names none."""
    counts, runs, here, start, end = match[1], match[2], match[3], match[6], match[7]
    if counts is None:
        return None
    count = int(here) if here else sum(int(part.split()[0]) for part in counts.split(", "))
    if start is not None:
        return count, int(start), int(end)
    return (count, 0, 0) if match.group(0).endswith("of this view]") or " of this view;" in match.group(0) else None


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def check_view(source_lines: list[str], view: str, name: str = "result_text") -> None:
    """Every `[yarp:` line is a whole marker; gap ranges name exactly the lines they replace;
    every other line is an input line shown in order (or the head and the tail of a cut one)."""
    lines = view.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    position = 0
    tail_of = None  # the line whose tail follows a cut note
    for number, line in enumerate(lines):
        if tail_of is not None:
            assert source_lines[tail_of].endswith(line), (line, source_lines[tail_of])
            tail_of = None
            position += 1
            continue
        if line.startswith(("[yarp: ", "Search omitted output: ")) and position < len(source_lines) and (
                line == source_lines[position]):
            position += 1  # a reducer's own marker line, kept
            continue
        if line.startswith("[yarp: "):
            view_gap = VIEW_GAP_RE.match(line)
            if view_gap:
                position += int(view_gap[1])
                continue
            gap = GAP_RE.match(line)
            if gap:
                count, stream, start, end = int(gap[1]), gap[2], int(gap[3]), int(gap[4])
                assert stream == name and start == position + 1 and end - start + 1 == count
                position = end
                continue
            cut = CUT_RE.match(line)
            if cut:
                assert int(cut[1]) == position + 1
                tail_of = position
                continue
            if MAIN_RE.match(line):
                continue
            header = HEADER_RE.match(line)
            assert header, line
            run = header_run(header)
            if run is not None:
                count, start, end = run
                if start:
                    assert start == position + 1 and end - start + 1 == count, (line, position)
                    position = end
                else:
                    position += count
            continue
        if SEARCH_RE.match(line):
            continue
        assert position < len(source_lines), line
        original = source_lines[position]
        if number + 1 < len(lines) and CUT_RE.match(lines[number + 1]):
            assert original.startswith(line), (line, original)
            continue
        assert line == original, (line, original)
        position += 1
    assert position == len(source_lines) or (position == len(source_lines) - 1 and source_lines[-1] == "")


@pytest.mark.parametrize("path", VECTORS, ids=[os.path.basename(p)[:-5] for p in VECTORS])
def test_real_outputs_keep_what_an_engineer_needs(path):
    vector = load(path)
    view = cap_text(vector["input"].encode(), cap=vector["cap"], archive_ref=vector["ref"],
                    source=vector["source"], completeness=vector["completeness"]).decode("utf-8")
    assert view == vector["expected"]
    assert len(view.encode()) <= vector["cap"]
    shown = set(view.split("\n"))
    for pattern in vector["must_keep"]:
        needed = [line for line in vector["input"].split("\n") if re.search(pattern, line)]
        assert needed, pattern
        assert [line for line in needed if line not in shown] == [], pattern
    check_view(vector["input"].split("\n"), view, vector["source"])
    # A search line is there only when cut lines that matter give a hint; each of its words finds
    # one of the input's lines that the view left out.
    for line in view.split("\n"):
        hint = SEARCH_RE.match(line)
        if hint and line not in vector["input"].split("\n"):  # not a reducer's own search line
            for word in hint[2].split("|"):
                assert any(word in text and text not in shown for text in vector["input"].split("\n")), word


def test_vectors_cover_the_tools():
    tools = {load(path)["tool"] for path in VECTORS}
    assert len(VECTORS) >= 12 and len(tools) >= 12


def test_at_or_under_cap_nothing_changes_and_zero_disables():
    text = b"x" * DEFAULT_CAP_BYTES
    assert cap_text(text, archive_ref=REF) is text
    assert cap_blocks([{"type": "text", "text": text.decode()}], archive_ref=REF) is None
    assert cap_text(b"y\n" * 100_000, cap=0, archive_ref=REF) == b"y\n" * 100_000
    assert cap_blocks([{"type": "text", "text": "y" * 100_000}], cap=0, archive_ref=REF) is None


def test_an_error_in_the_middle_survives_and_the_hint_is_built_from_cut_lines():
    lines = [f"INFO step {i} completed" for i in range(500)]
    lines[250] = "ERROR database connection refused on port 5432"
    lines[260] = "WARNING retrying with backoff"
    lines[300] = "Traceback (most recent call last):"
    data = ("\n".join(lines) + "\n").encode()
    view = cap_text(data, cap=1024, archive_ref=REF, source="stdout", exit_code=3).decode()
    assert "ERROR database connection refused on port 5432\n" in view
    assert "Traceback (most recent call last):\n" in view
    assert "; exit status 3]" in view
    assert len(view.encode()) <= 1024
    assert "'term|alternate'" not in view
    check_view(data.decode().split("\n"), view, "stdout")


def test_when_failures_do_not_fit_whole_lines_are_kept_and_counted():
    lines = [f"src/m{i}.c:{i}:1: error: unknown type name 'widget_{i}'" for i in range(300)]
    data = ("\n".join(lines) + "\n").encode()
    view = cap_text(data, cap=2048, archive_ref=REF, source="stdout").decode()
    assert len(view.encode()) <= 2048
    kept = [line for line in view.split("\n") if line in lines]
    assert kept[0] == lines[0] and lines[-1] in kept
    counts = re.search(r"^\[yarp: omitted (\d+) failure line\(s\)(?: in \d+ runs)?[:;]", view, re.M)
    assert counts and int(counts[1]) == 300 - len(kept)
    assert re.search(r"Search omitted output: yarp search yr_\w+ 'error'", view)
    check_view(data.decode().split("\n"), view, "stdout")


def test_a_long_line_is_cut_at_a_character_boundary_with_a_whole_marker():
    data = ("é" * 5000 + "\nerror: boom\n").encode()
    view = cap_text(data, cap=1024, archive_ref=REF)
    text = view.decode("utf-8")
    cut = re.search(r"^\[yarp: line 1 cut: bytes (\d+):(\d+) of 10000 omitted\]$", text, re.M)
    assert "error: boom" in text and cut
    head, tail = text.split("\n")[0], text.split("\n")[2]  # the line's head and its tail, around the note
    assert head.encode() == data[:int(cut[1]) - 1] and tail.encode() == data[int(cut[2]):10000]


def test_one_long_line_keeps_a_whole_marker_in_its_own_stream():
    # A single long line (a minified JSON) shows its head and its tail, with the budget to itself.
    data = bytes(range(97, 123)) * 800  # 20,800 bytes of letters
    parts = cap_streams([("stdout", data + b"\n"), ("stderr", b"")], cap=5120, archive_ref=REF)
    assert parts[1] == b""
    head, note, tail, header = parts[0].decode().split("\n")[:4]
    cut = re.match(r"^\[yarp: line 1 cut: bytes (\d+):(\d+) of 20800 omitted\]$", note)
    assert cut and head.encode() == data[:int(cut[1]) - 1] and tail.encode() == data[int(cut[2]):]
    assert len(head) + len(tail) > 3 * 1024  # far more than the quarter of the cap a line among many gets
    assert MAIN_RE.match(header) and parts[0].endswith(b"\n[yarp: long line(s) cut, none omitted]\n")
    assert len(parts[0]) <= 5120


def test_invalid_utf8_is_shown_replaced():
    data = b"\xff\xfe bad bytes\n" * 400 + b"fatal: not a git repository\n"
    view = cap_text(data, cap=1024, archive_ref=REF)
    assert "fatal: not a git repository" in view.decode("utf-8")


def test_blocks_keep_images_in_order_and_the_view_takes_the_first_text_place():
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    blocks = [{"type": "text", "text": "a\n" * 1000}, image, {"type": "text", "text": "error: z\n" + "c\n" * 3000}]
    out = cap_blocks(blocks, cap=1024, archive_ref=REF)
    assert [b["type"] for b in out] == ["text", "image"]
    assert out[1] is image
    assert "error: z\n" in out[0]["text"] and len(out[0]["text"].encode()) <= 1024


def test_cap_files_caps_stdout_and_stderr_together(tmp_path):
    out, err = tmp_path / "out", tmp_path / "err"
    out.write_bytes(b"".join(b"building module %d\n" % i for i in range(2000)))
    err.write_bytes(b"warning: deprecated flag\n" * 50 + b"error: linker failed\n")
    parts = cap_files([str(out), str(err)], cap=2048, archive_ref=REF, exit_code=2)
    assert parts is not None and sum(map(len, parts)) <= 2048
    assert b"error: linker failed\n" in parts[1]
    assert b"; exit status 2]" in parts[0] + parts[1]
    check_view(out.read_text().split("\n"), parts[0].decode(), "stdout")
    assert cap_files([str(out)], cap=0, archive_ref=REF) is None


def test_a_reducer_view_is_capped_without_line_ranges_and_its_markers_stay_whole():
    body = ["[yarp summary: build; source_lines=9000; shown_lines=400]"]
    for i in range(200):
        body += [f"src/a{i}.c:1:1: warning: w{i}", f"[yarp: omitted 20 line(s); ref={REF}; stdout complete]",
                 f"Search omitted output: yarp search {REF} 'error|warning'"]
    body.append("src/z.c:9:9: error: the one error")
    (view,) = cap_streams([("stdout", ("\n".join(body) + "\n").encode())], cap=2048, archive_ref=REF)
    text = view.decode()
    assert "src/z.c:9:9: error: the one error" in text and len(view) <= 2048
    assert "of this view]" in text and " stdout 1:" not in text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.startswith(f"[yarp: omitted 20 line(s); ref={REF}"):
            assert lines[number + 1].startswith("Search omitted output:")


LINE = st.one_of(
    st.sampled_from(["", "ok", "PASSED", "    at frame (a.js:1:2)", "E   assert 1 == 2", "  |   ^~~", "error: x",
                     "a.c:3:4: warning: w", "Traceback (most recent call last):", "KeyError: 'k'", "diff --git a/x b/x",
                     "=== 1 failed, 2 passed in 0.1s ===", "[yarp: omitted 3 line(s)]", "€uro ✓ 𝄞"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=300),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=400), st.integers(min_value=700, max_value=6000), st.booleans())
def test_view_is_utf8_within_the_cap_and_its_markers_resolve(lines, cap, final_newline):
    text = "\n".join(lines) + ("\n" if final_newline else "")
    data = text.encode()
    view = cap_text(data, cap=cap, archive_ref=REF, source="result_text")
    if len(data) <= cap:
        assert view is data
        return
    decoded = view.decode("utf-8")
    assert len(view) <= cap
    check_view(text.split("\n"), decoded)


@pytest.fixture
def renv():
    benv = make_run_env()
    yield benv
    close_run_env(benv)


def test_markers_resolve_with_yarp_read_and_search_on_a_real_archive(renv, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(
        "import sys\n"
        "for i in range(3000): print(f'step {i} copied block {i * 7}')\n"
        "print('ERROR checksum mismatch in block 1234', file=sys.stderr)\n"
        "for i in range(3000): print(f'after {i}')\n"
        "sys.exit(4)\n")
    proc = yrun(renv, "python3", str(script))
    assert proc.returncode == 4
    view = (proc.stdout + proc.stderr).decode()
    assert "ERROR checksum mismatch in block 1234" in view
    assert len(proc.stdout) + len(proc.stderr) <= DEFAULT_CAP_BYTES
    ref = re.search(r"ref=(yr_[0-9a-f]{32})", view)[1]
    raw = "".join(f"step {i} copied block {i * 7}\n" for i in range(3000)) + "".join(f"after {i}\n" for i in range(3000))
    raw_lines = raw.split("\n")
    gaps = [GAP_RE.match(line) for line in proc.stdout.decode().split("\n") if GAP_RE.match(line)]
    for gap in gaps[:3]:
        start, end = int(gap[3]), int(gap[4])
        read = yarp(renv, "read", ref, gap[2], f"{start}:{min(end, start + 50)}")
        assert read.returncode == 0, read.stderr
        assert read.stdout.decode() == "\n".join(raw_lines[start - 1:min(end, start + 50)]) + "\n"
    header = next(HEADER_RE.match(line) for line in view.split("\n") if HEADER_RE.match(line))
    start, end = int(header[6]), int(header[7])  # the header names its own run's range
    read = yarp(renv, "read", header[4], header[5], f"{start}:{start + 5}")
    assert read.returncode == 0 and read.stdout.decode() == "\n".join(raw_lines[start - 1:start + 5]) + "\n"


def test_a_big_stream_is_scanned_in_bounded_memory_and_matches_the_whole_read(tmp_path, monkeypatch):
    import tracemalloc

    from yarp.view import streams

    lines = [b"record %d copied" % i for i in range(400_000)]
    lines[123_456] = b"Traceback (most recent call last):"
    lines[123_457] = b'  File "job.py", line 3, in run'
    lines[123_458] = b"ValueError: bad record 123456"
    data = b"\n".join(lines) + b"\n"
    (tmp_path / "o").write_bytes(data)
    (tmp_path / "e").write_bytes(b"")
    whole = cap_streams([("stdout", data), ("stderr", b"")], archive_ref=REF, completeness="complete")
    monkeypatch.setattr(streams, "DENSE_LIMIT", 1 << 20)
    monkeypatch.setattr(streams, "CHUNK_BYTES", 1 << 18)
    tracemalloc.start()
    try:
        parts = cap_files([str(tmp_path / "o"), str(tmp_path / "e")], archive_ref=REF)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert parts == whole
    assert b"ValueError: bad record 123456\n" in parts[0]
    assert peak < 4 * (1 << 20), peak  # chunks and windows, not the 6 MB stream


def test_a_big_reducer_view_read_in_chunks_is_capped_as_when_read_whole(tmp_path):
    # Its gaps are counted in the view's own lines, each marker measured in the form it is
    # written, and its first marker pair kept like a header, whichever way it was read.
    from yarp.view import streams

    lines = [b"[yarp summary: test; source_lines=40000; shown_lines=20000]",
             b"[yarp: omitted 3 line(s); ref=yr_x; stdout complete]", b"Search omitted output: yarp search yr_x 'a'"]
    lines += [b"step %d done" % i for i in range(20000)]
    for index in range(500, 20000, 700):
        lines[index] = b"error: boom %d" % index
        lines[index + 1] = b"[yarp: omitted 2 line(s)]"
    data = b"\n".join(lines) + b"\n"
    (tmp_path / "o").write_bytes(data)
    (tmp_path / "e").write_bytes(b"")
    for cap in (1024, 2048, 5120, 16384):
        whole = cap_streams([("stdout", data), ("stderr", b"")], cap=cap, archive_ref=REF, completeness="complete")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(streams, "DENSE_LIMIT", 1 << 16)
            patch.setattr(streams, "CHUNK_BYTES", 1 << 14)
            parts = cap_files([str(tmp_path / "o"), str(tmp_path / "e")], cap=cap, archive_ref=REF)
        assert parts == whole, cap
        assert len(b"".join(parts)) <= cap


def test_a_reducer_view_s_markers_are_its_records_not_what_reads_like_one():
    # A line of the command's output that reads like a marker is one of its lines, not a
    # marker, once the reducer that kept it has said which lines are its markers.
    from yarp.view.markers import Omission, Summary
    from yarp.view.salience import classifier
    from yarp.view.streams import Stream

    data = (b"[yarp summary: test; source_lines=9; shown_lines=4]\n[yarp: omitted 3 line(s) of this view]\n"
            b"error: boom\n[yarp: omitted 2 line(s)]\n")
    records = (Summary(0, "test", (("source_lines", 9), ("shown_lines", 4))),
               Omission(3, 2, 0, 5, 6, "stdout", REF, "complete", None))
    assert [record.text() for record in records] == [data.splitlines(keepends=True)[i] for i in (0, 3)]
    told, read = Stream("stdout", data, classifier(), records), Stream("stdout", data, classifier())
    assert [i for i, line in enumerate(told.lines) if told.markers.is_marker(i, line)] == [3]
    assert [i for i, line in enumerate(read.lines) if read.markers.is_marker(i, line)] == [1, 3]
    assert not told.ranges and not read.ranges  # a reducer's view either way: gaps counted in its own lines


def test_markers_alike_but_for_digits_are_never_salient_however_many():
    # A text's markers read as markers by words that hold no digit, so the first line of a kind of
    # lines (`classed_alike`) answers for all of its kind: 400 markers naming an error are none salient.
    from yarp.view.salience import classifier
    from yarp.view.streams import Stream

    lines = []
    for i in range(400):
        lines += [f"src/m{i}.py:{i}: error: name 'x{i % 7}' is not defined".encode(),
                  f"[yarp: omitted {i + 10} line(s); error {i}]".encode(),
                  f"Search omitted output: yarp search {REF} 'error {i}'".encode()]
    stream = Stream("stdout", b"\n".join(lines) + b"\n", classifier())
    assert sorted(stream.classes) == list(range(0, 1200, 3))


def test_every_line_kept_one_cut_the_main_marker_follows_the_stream_of_the_cut():
    # Another stream's line that reads like a cut note is not the cut.
    parts = cap_streams([("stdout", b"[yarp: line 1 cut: bytes 5:9 of 9 omitted]\n"), ("stderr", b"x" * 1500 + b"\n")],
                        cap=1024, archive_ref=REF)
    assert parts[0] == b"[yarp: line 1 cut: bytes 5:9 of 9 omitted]\n"
    lines = parts[1].split(b"\n")
    assert re.match(rb"^x+$", lines[0]) and re.match(rb"^\[yarp: line 1 cut: bytes \d+:\d+ of 1500 omitted\]$", lines[1])
    assert re.match(rb"^x+$", lines[2]) and lines[3] == f"[yarp: {1500 + 41 + 3} byte(s) capped at 1024; ref={REF}; stderr unknown]".encode()
    assert lines[4] == b"[yarp: long line(s) cut, none omitted]"


def test_gap_markers_are_measured_without_being_built():
    from yarp.view.markers import gap_marker, gap_marker_bytes
    from yarp.view.salience import classifier
    from yarp.view.streams import Stream

    for name, data in (("stdout", b"a\n" * 50), ("résumé", b"b\n"), ("result_text", b"[yarp summary: x]\nc\n")):
        stream = Stream(name, data, classifier())
        for start, end in ((0, 0), (0, 8), (9, 9), (8, 99), (98, 1_000_004)):
            assert gap_marker_bytes(stream, start, end) == len(gap_marker(stream, start, end))


def test_a_hint_comes_only_from_omitted_lines_that_matter():
    # Plain lines never give a hint (`step` finds everything); an omitted error does.
    lines = [f"step {i} done" for i in range(3000)]
    view = cap_text(("\n".join(lines) + "\n").encode(), cap=2048, archive_ref=REF).decode()
    assert "Search omitted output" not in view and f"yarp read {REF} result_text " in view
    lines[700:1000] = [f"error: shard {i} failed" for i in range(300)]
    view = cap_text(("\n".join(lines) + "\n").encode(), cap=2048, archive_ref=REF).decode()
    hint = re.search(r"^Search omitted output: yarp search yr_\w+ '([^']+)'$", view, re.M)
    assert hint and hint[1] == "error"


def _one_line_at_a_time(view, stream: int, index: int, step: int, ceiling: int) -> tuple[int, bool]:
    """The context walk's step as it was before runs were added at once: one `add_one` per line."""
    return index + step, not view.add_one(stream, index, ceiling)


#: Runs of numbered lines crossing 10, 100, 1,000 and 10,000 (gap markers change length there),
#: mixed with noise, markers, salient, non-ASCII, invalid and over-long lines.
CHUNK = st.one_of(
    st.builds(lambda start, count: [str(n).encode() for n in range(start, start + count)],
              st.sampled_from([1, 7, 95, 990, 9990]), st.integers(1, 400)),
    st.lists(st.sampled_from([b"", b"PASSED", b"tests/a.py::t PASSED", b"ok  \tpkg\t0.1s", b"error: x", b"  at f (a.js:1:2)",
                              b"[yarp: omitted 3 line(s) of this view]", b"Search omitted output: yarp search r 'a'",
                              "caf\u00e9 \u2713".encode(), b"\xff\xfe", b"w" * 300, "\u00e9".encode() * 600]),
             min_size=1, max_size=30),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(CHUNK, min_size=1, max_size=12), st.floats(0.05, 0.95), st.booleans(), st.integers(0, 3))
def test_context_runs_keep_exactly_the_lines_one_line_at_a_time_keeps(chunks, share, final_newline, split):
    # The bulk arithmetic of `_View.add_run` (a run's lines counted at once, the few near
    # the limit decided exactly) against the walk it replaced, byte for byte.
    from yarp.view import cap as cap_module

    data = b"\n".join(line for chunk in chunks for line in chunk) + (b"\n" if final_newline else b"")
    cut = len(data) * split // 4
    texts = [("stdout", data[:cut]), ("stderr", data[cut:])] if split else [("stdout", data)]
    cap = max(1024, int(len(data) * share))
    views = cap_streams(texts, cap=cap, archive_ref=REF, exit_code=1)
    with pytest.MonkeyPatch.context() as patch:
        # Runs settled line by line, as when a pack's noise pattern reads past its line.
        sal = cap_module.classifier()
        patch.setattr(sal, "noise_lines_start", None)
        patch.setattr(sal, "noise_lines_any", None)
        assert cap_streams(texts, cap=cap, archive_ref=REF, exit_code=1) == views
        patch.setattr(cap_module._View, "add_run", _one_line_at_a_time)
        assert cap_streams(texts, cap=cap, archive_ref=REF, exit_code=1) == views


def test_a_hint_word_holding_digits_is_each_lines_own():
    # Lines of one kind (the same but for digits) give a hint word at the same place; a word without
    # digits is the kind's, a word with digits each line's: `shard7` is not `shard3`'s word.
    lines = [f"step {i} done" for i in range(3000)]
    lines[700:1000] = [f"error shard{i % 10} failed" for i in range(300)]
    view = cap_text(("\n".join(lines) + "\n").encode(), cap=2048, archive_ref=REF).decode()
    hint = re.search(r"^Search omitted output: yarp search yr_\w+ '([^']+)'$", view, re.M)
    assert hint and hint[1] == "error"
    lines[700:1000] = [f"shard{i % 10} error: failed" for i in range(300)]
    view = cap_text(("\n".join(lines) + "\n").encode(), cap=2048, archive_ref=REF).decode()
    hint = re.search(r"^Search omitted output: yarp search yr_\w+ '([^']+)'$", view, re.M)
    assert hint and len(hint[1].split("|")) == 4 and all(re.fullmatch(r"shard\d", word) for word in hint[1].split("|"))
    # Dense, the lines are one kind (the same but for digits): the kind's word holds digits, so each line's is
    # read, past the first lines read at once too.
    dense = ["shard0 error: failed"] * 40 + [f"shard{i % 10} error: failed" for i in range(300)]
    view = cap_text(("\n".join(dense) + "\n").encode(), cap=2048, archive_ref=REF).decode()
    hint = re.search(r"^Search omitted output: yarp search yr_\w+ '([^']+)'$", view, re.M)
    assert hint and len(hint[1].split("|")) == 4 and all(re.fullmatch(r"shard\d", word) for word in hint[1].split("|"))


#: Lines a hint reads: failures, warnings and summaries, each word at its place, alike or not, over its limits.
HINT_LINE = st.one_of(
    st.builds(lambda head, word, tail, digits: b"%s%s%s" % (head, word.replace(b"%d", digits), tail),
              st.sampled_from([b"", b"src/a.py:3: ", b"  lib/b.c:12:4: ", b"x:", b"[yarp: omitted 3 line(s)]  "]),
              st.sampled_from([b"error: shard%d failed", b"FAILED t%d", b"warning: w_%d unused", b"error[E0%d]",
                               b"shard%d error: failed", b"error: " + b"long_name_" * 7 + b"%d", b"Error: proc %d died",
                               b"1 failed, %d passed"]),
              st.sampled_from([b"", b" ok", b" (x)"]), st.sampled_from([b"7", b"3", b"12"])),
    st.sampled_from([b"plain step", b"", b"error:", b"Search omitted output: yarp search r 'a'"]))


def _hint_line_by_line(streams, kept, most: int) -> str:
    """The hint as its rule reads, one line at a time: per class group in turn, the words of its omitted
    lines (past their location), each once, in order, while the hint holds fewer than four and they fit,
    reading at most `most` lines that give a word."""
    from yarp.view import markers
    from yarp.view.salience import classifier

    sal = classifier()
    for place in range(len(markers.COUNT_GROUPS)):
        words, budget = [], most
        for number, stream in enumerate(streams):
            for index in sorted(i for i, cls in stream.classes.items() if markers._GROUP_OF.get(cls) == place):
                line = stream.lines[index]
                if index in kept[number] or line.startswith(b"[yarp"):
                    continue
                found = sal.word.search(line, sal.location.match(line).end())
                if found is None:
                    continue
                text = found.group().decode()
                if text not in words and len("|".join(words + [text])) <= markers.MAX_HINT_CHARS:
                    words.append(text)
                budget -= 1
                if len(words) >= markers.MAX_HINT_WORDS or budget == 0:
                    break
            if len(words) >= markers.MAX_HINT_WORDS or budget == 0:
                break
        if words:
            return "|".join(words)
    return ""


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(HINT_LINE, max_size=40), min_size=1, max_size=2), st.integers(1, 12),
       st.sets(st.integers(0, 40), max_size=10))
def test_a_hint_read_at_once_is_the_hint_read_line_by_line(texts, most, shown):
    # Omitted lines give their words by kind, or read at C speed a chunk at a time where no kind is known
    # (`search_pattern`): the hint its rule gives line by line, words in order, within its limits.
    from yarp.view import markers
    from yarp.view.salience import classifier
    from yarp.view.streams import Stream

    sal = classifier()
    streams = [Stream(f"s{number}", b"\n".join(lines), sal) for number, lines in enumerate(texts)]
    kept = [{index for index in shown if index < len(stream.lines)} for stream in streams]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markers, "MAX_HINT_LINES", most)
        expected = _hint_line_by_line(streams, kept, most)
        assert markers.search_pattern(streams, kept) == expected
        for stream in streams:  # lines of no known kind: read a chunk at a time
            stream.firsts = None
        assert markers.search_pattern(streams, kept) == expected


def _open_windows_one_by_one(self, body: bytes, lines: list[bytes]) -> None:
    """The big stream's salient lines as they were read before kinds: each classed alone, each given a
    window, the window then kept or counted (`_SparseReader._keep`)."""
    sal, number = self.sal, self.number
    found = sal.salient_lines(body, None if number == 0 else sal.failure_triggers)
    previous, local = 0, 0
    for offset in sorted(found):
        local += body.count(b"\n", previous, offset)
        previous = offset
        if self.is_marker(number + local, lines[local]):
            continue
        cls = sal.classify(lines[local], found[offset])
        if cls not in ("plain", "noise"):
            self._keep(number + local, cls, self._window(lines, local))


#: Lines of a big stream: findings alike but for digits, notes, markers, failures, plain lines.
BIG_LINE = st.one_of(
    st.integers(0, 999).map(lambda n: b"src/m%d.rs:%d:5: error[E0425]: cannot find value `x%d`" % (n % 7, n, n % 3)),
    st.integers(0, 99).map(lambda n: b"src/a.c:%d: warning: unused variable 'v%d'" % (n, n % 4)),
    st.integers(0, 99).map(lambda n: b"src/a.c:%d: note: declared here" % n),
    st.sampled_from([b"[yarp: omitted 3 line(s)]", b"Search omitted output: yarp search r 'error'", b"   |",
                     b"Traceback (most recent call last):", b"ValueError: bad record", b"step done", b""]),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(BIG_LINE, min_size=50, max_size=3000), st.sampled_from([1 << 10, 1 << 12, 1 << 14]))
def test_a_big_stream_read_by_kinds_keeps_the_windows_and_counts_of_one_read_line_by_line(tmp_path_factory, lines,
                                                                                           chunk):
    # Read in chunks, each kind of line is classed once and only the windows that can be kept are made:
    # the same windows, classes and counts as classing and windowing every salient line.
    from yarp.view import streams
    from yarp.view.salience import classifier

    path = tmp_path_factory.mktemp("big") / "o"
    path.write_bytes(b"\n".join(lines) + b"\n")
    read = []
    for patched in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(streams, "DENSE_LIMIT", 1 << 9)
            patch.setattr(streams, "CHUNK_BYTES", chunk)
            patch.setattr(streams, "MAX_WINDOWS", 16)
            if patched:
                patch.setattr(streams._SparseReader, "_open_windows", _open_windows_one_by_one)
            stream = streams.Stream.from_file("stdout", str(path), classifier())
            read.append((stream.classes, stream.extra_counts, stream.lines.held, len(stream.lines)))
    assert read[0] == read[1]
