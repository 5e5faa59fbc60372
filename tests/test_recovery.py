"""`yarp search`, `read`, `restore` and `archive restore` as real processes on real archives."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat

import pytest
from archive_factory import ArchiveFactory, build_sample, run_yarp

from yarp.archive import recovery
from yarp.paths import resolve_archive
from yarp.archive.sqlite import open_readonly

# Multi-byte characters everywhere so every cut is tested against UTF-8 boundaries.
LINES = [f"line {n:03d} {'é' * (n % 5)} {'ERROR: 失敗' if n % 25 == 0 else 'fine'}\n".encode() for n in range(1, 201)]
STDOUT = b"".join(LINES)
STDERR = b"warning: first\n\x1b[31mcolored\x1b[0m warning\nlast\r\n"
BIG = os.urandom(96 * 1024) + b"compressible tail\n" * 20000


@pytest.fixture(scope="module")
def arch(tmp_path_factory):
    root = tmp_path_factory.mktemp("recovery")
    path = root / "archive" / "tool-calls.sqlite3"
    refs = build_sample(path)
    with ArchiveFactory(path) as factory:
        refs["long"] = factory.shell_call("long-1", STDOUT, STDERR, stdout_after=b"pruned\n", tool="bash")
        refs["big"] = factory.shell_call("big-1", BIG, b"", tool="make")
        refs["onebig"] = factory.tool_call("one-line", tool="grep", result_text="é" * 40000, completeness="unknown")
    home = root / "home"
    home.mkdir()
    return path, refs, home


def yarp(arch, *args, home=None, input=None):
    path, _, default_home = arch
    return run_yarp(*args, "--archive", str(path), home=home or default_home, input=input)


def stored_digest(path, ref, subject):
    conn = sqlite3.connect(path)
    try:
        return bytes(conn.execute(
            "SELECT s.payload_sha256 FROM snapshots s JOIN tool_calls c ON c.id = s.tool_call_id"
            " WHERE c.archive_ref = ? AND s.subject = ? AND s.stage = 'before'", (ref, subject)).fetchone()[0])
    finally:
        conn.close()


# --- search --------------------------------------------------------------------------------


def test_search_output_form(arch):
    ref = arch[1]["long"]
    result = yarp(arch, "search", ref, "ERROR", "-m", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0] == f"[yarp search: ref={ref}]"
    assert lines[1] == "[source=stdout complete=true matches=8 showing=2 before=2 after=2 max_results=2]"
    assert lines[2:8] == [
        "stdout-23-line 023 ééé fine",
        "stdout-24-line 024 éééé fine",
        "stdout:25:line 025  ERROR: 失敗",
        "stdout-26-line 026 é fine",
        "stdout-27-line 027 éé fine",
        "--",
    ]
    assert lines[8:13] == [f"stdout{'-' if n != 50 else ':'}{n}{'-' if n != 50 else ':'}"
                           f"{LINES[n - 1].decode().rstrip(chr(10))}" for n in range(48, 53)]
    assert "[yarp search: 6 selected line(s) omitted]" in lines
    assert f"Read exact context: yarp read {ref} stdout 23:27" in lines
    assert f"Read exact context: yarp read {ref} stdout 48:52" in lines
    assert "[source=stderr complete=true matches=0 showing=0 before=2 after=2 max_results=2]" in lines


def test_search_hint_reads_exact_bytes(arch):
    ref = arch[1]["long"]
    result = yarp(arch, "read", ref, "stdout", "23:27")
    assert result.returncode == 0
    assert result.stdout == b"".join(LINES[22:27])


def test_search_no_match_exits_1(arch):
    result = yarp(arch, "search", arch[1]["long"], "no such text anywhere")
    assert (result.returncode, result.stdout) == (1, b"No matches\n")


@pytest.mark.parametrize("args, source, count", [
    (("-F", "失敗"), "stdout", 8),
    (("-i", "error: 失敗"), "stdout", 8),
    (("-w", "lin"), "stdout", 0),
    (("-w", "line"), "stdout", 200),
    (("-v", "fine"), "stdout", 8),
    (("-e", "first", "-e", "^last$"), "stderr", 2),
    (("colored warning",), "stderr", 1),  # terminal escapes do not split words
])
def test_search_options(arch, args, source, count):
    ref = arch[1]["long"]
    result = yarp(arch, "search", ref, *args, "--json")
    assert result.returncode == (0 if count else 1)
    import json

    found = {s["source"]: s["matches"] for s in json.loads(result.stdout)["sources"]}
    assert found[source] == count


def test_search_context_and_max_bounds(arch):
    ref = arch[1]["long"]
    ok = yarp(arch, "search", ref, "ERROR", "-C", "0", "-m", "100")
    assert ok.returncode == 0
    assert ok.stdout.decode().count("stdout:") == 8 and "stdout-" not in ok.stdout.decode()
    for bad in (("-C", "51"), ("-A", "-1"), ("-m", "0"), ("-m", "101"), ("-B", "02")):
        result = yarp(arch, "search", ref, "ERROR", *bad)
        assert result.returncode == 64, bad
        assert result.stderr.count(b"\n") == 1 and b"Traceback" not in result.stderr
    nine = [arg for n in range(9) for arg in ("-e", f"p{n}")]
    assert yarp(arch, "search", ref, *nine).returncode == 64


def test_search_result_text_and_source_output(arch):
    ref = arch[1]["text"]
    out = yarp(arch, "search", ref, "beta").stdout.decode().splitlines()
    assert "[source=result_text complete=false matches=1 showing=1 before=2 after=2 max_results=20]" in out
    assert "result_text:2:beta" in out
    assert "source_output:2:full beta" in out
    assert out.index("result_text:2:beta") < out.index("source_output:2:full beta")


def test_search_output_is_bounded(arch, tmp_path):
    ref = arch[1]["onebig"]
    result = yarp(arch, "search", ref, "é")
    assert result.returncode == 0
    text = result.stdout.decode()  # decodes: no line was cut inside a character
    assert len(result.stdout) < 32 * 1024
    assert "result_text:1:" in text and text.split("result_text:1:")[1].split("\n")[0].endswith("...")


def test_search_list_recent_calls(arch):
    refs = arch[1]
    listing = yarp(arch, "search", "--tool", "make").stdout.decode().splitlines()
    assert listing[0] == "[yarp search: calls=1]"
    assert listing[1].startswith(refs["big"] + " ") and listing[1].endswith(" ok make")
    text = yarp(arch, "search", "--text", "full beta")
    assert text.returncode == 0 and refs["text"] in text.stdout.decode()
    assert refs["long"] not in text.stdout.decode()
    late = yarp(arch, "search", "--since", "2100-01-01T00:00:00Z")
    assert (late.returncode, late.stdout) == (1, b"No matching calls\n")
    early = yarp(arch, "search", "--until", "1700000001000", "-m", "5").stdout.decode()
    assert refs["shell"] in early and refs["text"] not in early
    assert yarp(arch, "search", "--since", "2026-01-01T25:00:00").returncode == 64  # no such time


# --- read ----------------------------------------------------------------------------------


def test_read_lines_and_bytes(arch):
    ref = arch[1]["long"]
    assert yarp(arch, "read", ref, "stdout", "1:3").stdout == b"".join(LINES[:3])
    assert yarp(arch, "read", ref, "2:2").stdout == LINES[1]  # default: first recovery source
    assert yarp(arch, "read", ref, "stderr", "3:9").stdout == b"last\r\n"  # END past the last line
    assert yarp(arch, "read", ref, "stderr", "--bytes", "0:7").stdout == STDERR[:7]
    assert yarp(arch, "read", ref, "--bytes", "5:20").stdout == STDOUT[5:20]


@pytest.mark.parametrize("args, code", [
    (("stdout", "0:3"), 64),
    (("stdout", "5:4"), 64),
    (("stdout", "1-3"), 64),
    (("stdout", "201:300"), 65),
    (("nosuch", "1:2"), 64),
    (("source_output", "1:2"), 65),
])
def test_read_rejects_bad_ranges(arch, args, code):
    result = yarp(arch, "read", arch[1]["long"], *args)
    assert result.returncode == code, result.stderr
    assert result.stdout == b"" and result.stderr.count(b"\n") == 1


def _config(home, **values):
    directory = home / ".config" / "yarp"
    directory.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{k} = {v}\n" for k, v in values.items())
    (directory / "config.toml").write_text(f"version = 1\n[output]\n{body}")


def test_read_cap_cuts_at_whole_lines_and_names_the_next_range(arch, tmp_path):
    _config(tmp_path, recovery_cap_bytes=100, recovery_cap_lines=1900)
    ref = arch[1]["long"]
    result = yarp(arch, "read", ref, "stdout", "1:50", home=tmp_path)
    assert result.returncode == 0
    kept = 0
    while len(b"".join(LINES[: kept + 1])) <= 100:
        kept += 1
    assert result.stdout == b"".join(LINES[:kept])
    assert f"continue with: yarp read {ref} stdout {kept + 1}:50".encode() in result.stderr
    _config(tmp_path, recovery_cap_bytes=32768, recovery_cap_lines=4)
    assert yarp(arch, "read", ref, "stdout", "10:50", home=tmp_path).stdout == b"".join(LINES[9:13])


def test_read_cap_inside_one_long_line_keeps_utf8_whole(arch, tmp_path):
    _config(tmp_path, recovery_cap_bytes=1001, recovery_cap_lines=10)
    ref = arch[1]["onebig"]
    first = yarp(arch, "read", ref, "1:1", home=tmp_path)
    assert first.returncode == 0
    assert first.stdout == "é".encode() * 500  # 1001 would split a 2-byte character
    assert f"yarp read {ref} result_text --bytes 1000:80000".encode() in first.stderr
    more = yarp(arch, "read", ref, "--bytes", "1001:1100", home=tmp_path)
    assert more.stdout == ("é".encode() * 50)[1:100]  # an explicit byte range is exact, even mid-character
    cut = yarp(arch, "read", ref, "--bytes", "1:5000", home=tmp_path)
    # starts mid-character as asked; the cap cut falls on a boundary (1 + 1001 bytes)
    assert cut.stdout == ("é".encode() * 2500)[1:1002] and b"--bytes 1002:5000" in cut.stderr
    cut2 = yarp(arch, "read", ref, "--bytes", "0:5000", home=tmp_path)
    assert cut2.stdout == "é".encode() * 500 and b"--bytes 1000:5000" in cut2.stderr


# --- restore ---------------------------------------------------------------------------------


def test_restore_to_stdout_and_file(arch, tmp_path):
    path, refs, _ = arch
    result = yarp(arch, "restore", refs["big"])
    assert result.returncode == 0
    assert hashlib.sha256(result.stdout).digest() == stored_digest(path, refs["big"], "stdout")
    assert result.stdout == BIG
    out = tmp_path / "stderr.log"
    assert yarp(arch, "restore", refs["long"], "stderr", "--output", str(out)).returncode == 0
    assert out.read_bytes() == STDERR
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert hashlib.sha256(out.read_bytes()).digest() == stored_digest(path, refs["long"], "stderr")


def test_restore_refuses_existing_files_and_symlinks(arch, tmp_path):
    ref = arch[1]["long"]
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    link = tmp_path / "link"
    link.symlink_to(victim)
    for target in (victim, link):
        result = yarp(arch, "restore", ref, "--output", str(target))
        assert result.returncode != 0 and result.stderr.count(b"\n") == 1
    assert victim.read_bytes() == b"keep me"


def test_restore_refuses_a_damaged_payload(arch, tmp_path):
    import shutil

    path, refs, _ = arch
    copy = tmp_path / "copy"
    shutil.copytree(path.parent, copy)
    db = copy / path.name
    conn = sqlite3.connect(db)
    conn.execute("UPDATE payloads SET body = CAST(replace(CAST(body AS TEXT), 'colored', 'COLORED') AS BLOB)"
                 " WHERE instr(body, CAST('colored' AS BLOB)) > 0")
    conn.commit()
    conn.close()
    out = tmp_path / "restored"
    result = run_yarp("restore", refs["long"], "stderr", "--output", str(out), "--archive", str(db), home=arch[2])
    assert result.returncode == 65 and b"SHA-256" in result.stderr
    assert not out.exists()
    to_stdout = run_yarp("restore", refs["long"], "stderr", "--archive", str(db), home=arch[2])
    assert to_stdout.returncode == 65 and to_stdout.stdout == b""


def test_archive_restore_by_source_identity(arch):
    result = yarp(arch, "archive", "restore", "--archive-agent", "pi", "--archive-account", "tester",
                  "--archive-session", "session-1", "--archive-call", "long-1")
    assert result.returncode == 0
    assert (result.stdout, result.stderr) == (STDOUT, STDERR)
    missing = yarp(arch, "archive", "restore", "--archive-agent", "pi", "--archive-account", "tester",
                   "--archive-session", "session-1", "--archive-call", "nope")
    assert missing.returncode == 65 and missing.stderr.count(b"\n") == 1
    partial = yarp(arch, "archive", "restore", "--archive-agent", "pi")
    assert partial.returncode == 64


# --- library ---------------------------------------------------------------------------------


def test_recovery_order(arch):
    path, refs, _ = arch
    conn = open_readonly(resolve_archive(str(path), {}))
    try:
        names = {key: [s.name for s in recovery.recovery_sources(conn, recovery.find_call(conn, refs[key]))]
                 for key in ("shell", "text", "plain", "incomplete")}
    finally:
        conn.close()
    assert names == {"shell": ["stdout", "stderr"], "text": ["result_text", "source_output"],
                     "plain": ["result"], "incomplete": []}


@pytest.mark.parametrize("data", ["aé", "a€", "a😀", "abc"])
def test_utf8_safe_end(data):
    raw = data.encode()
    for end in range(len(raw) + 1):
        keep = recovery.utf8_safe_end(raw, end)
        assert keep <= end
        raw[:keep].decode()
        assert end - keep < 4


# --- bad input, as real processes ---------------------------------------------------------------


def _one_clean_line(result, code):
    assert result.returncode == code, result
    assert result.stderr.startswith(b"yarp: ") and result.stderr.count(b"\n") == 1
    assert b"Traceback" not in result.stderr


@pytest.mark.parametrize("ref", ["yr_123", "YR_" + "a" * 32, "yr_" + "A" * 32, "yr_" + "g" * 32, "../etc"])
def test_malformed_refs(arch, ref):
    for args in (("search", ref, "x"), ("read", ref, "1:2"), ("restore", ref)):
        _one_clean_line(yarp(arch, *args), 65)


def test_unknown_ref(arch):
    _one_clean_line(yarp(arch, "search", "yr_" + "0" * 32, "x"), 65)


def test_missing_archive(tmp_path):
    directory = tmp_path / "empty"
    directory.mkdir(mode=0o700)
    result = run_yarp("search", "yr_" + "0" * 32, "x", "--archive", str(directory / "a.sqlite3"), home=tmp_path)
    _one_clean_line(result, 74)
    assert os.listdir(directory) == []


@pytest.fixture
def copy_of(arch, tmp_path):
    import shutil

    path = arch[0]
    shutil.copytree(path.parent, tmp_path / "c")
    os.chmod(tmp_path / "c", 0o700)
    return tmp_path / "c" / path.name


def test_corrupt_database(arch, copy_of, tmp_path):
    copy_of.write_bytes(b"\0garbage" * 512)
    for args in (("search", arch[1]["long"], "x"), ("archive", "stats")):
        _one_clean_line(run_yarp(*args, "--archive", str(copy_of), home=tmp_path), 74)


def test_locked_database(arch, copy_of, tmp_path):
    holder = sqlite3.connect(copy_of, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("UPDATE sessions SET started_at_ms = started_at_ms")
        result = run_yarp("search", arch[1]["long"], "x", "--archive", str(copy_of), home=tmp_path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    _one_clean_line(result, 74)
    assert b"busy" in result.stderr


def test_wrong_permissions(arch, copy_of, tmp_path):
    os.chmod(copy_of, 0o644)
    _one_clean_line(run_yarp("read", arch[1]["long"], "1:2", "--archive", str(copy_of), home=tmp_path), 74)
    assert stat.S_IMODE(copy_of.stat().st_mode) == 0o644  # an explicit path is never changed


def test_unsupported_version(arch, copy_of, tmp_path):
    conn = sqlite3.connect(copy_of)
    conn.execute("PRAGMA user_version = 9")
    conn.close()
    result = run_yarp("restore", arch[1]["long"], "--archive", str(copy_of), home=tmp_path)
    _one_clean_line(result, 74)
    assert b"version 9" in result.stderr


# --- nothing changes on disk ----------------------------------------------------------------------

#: The -shm file is SQLite's WAL index: a cache rebuilt from the -wal, not content.
#: A reader writes its first 136 bytes (the two index-header copies and the
#: checkpoint-info block: read marks, and on a process's first read the header
#: rebuilt by SQLite's WAL-index recovery). The page hash tables after it must
#: not change.
WAL_INDEX_HEADER = range(0, 136)


def _files(directory):
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def _commands(refs, out_dir):
    ref = refs["long"]
    return [
        ("archive", "stats"), ("archive", "stats", "--json"), ("archive", "verify"), ("archive", "verify", "--json"),
        ("search", ref, "ERROR"), ("search", ref, "ERROR", "--json"), ("search", "--text", "beta"),
        ("read", ref, "stdout", "1:5"), ("read", ref, "--bytes", "0:10"),
        ("restore", ref), ("restore", ref, "stderr", "--output", str(out_dir / "r.out")),
        ("archive", "restore", "--archive-agent", "pi", "--archive-account", "tester",
         "--archive-session", "session-1", "--archive-call", "long-1"),
    ]


def test_commands_never_change_a_live_archive(tmp_path):
    path = tmp_path / "live" / "tool-calls.sqlite3"
    factory = ArchiveFactory(path)  # held open like the broker: -wal and -shm exist
    try:
        refs = {"long": factory.shell_call("long-1", STDOUT, STDERR)}
        factory.tool_call("t", result_text="beta\n")
        before = _files(path.parent)
        assert set(before) == {path.name, path.name + "-wal", path.name + "-shm"}
        for args in _commands(refs, tmp_path):
            result = run_yarp(*args, "--archive", str(path), home=tmp_path)
            assert result.returncode == 0, (args, result.stderr)
            after = _files(path.parent)
            assert set(after) == set(before), args
            assert after[path.name] == before[path.name], args
            assert after[path.name + "-wal"] == before[path.name + "-wal"], args
            shm_a, shm_b = before[path.name + "-shm"], after[path.name + "-shm"]
            assert [i for i in range(len(shm_a)) if shm_a[i] != shm_b[i] and i not in WAL_INDEX_HEADER] == [], args
            (tmp_path / "r.out").unlink(missing_ok=True)
    finally:
        factory.close()


def test_commands_never_change_a_closed_archive(tmp_path):
    path = tmp_path / "closed" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:
        refs = {"long": factory.shell_call("long-1", STDOUT, STDERR)}
        factory.tool_call("t", result_text="beta\n")
    database = path.read_bytes()
    for args in _commands(refs, tmp_path):
        result = run_yarp(*args, "--archive", str(path), home=tmp_path)
        assert result.returncode == 0, (args, result.stderr)
        assert path.read_bytes() == database, args
        # SQLite's read-only WAL open may leave an empty -wal: never any content in it.
        wal = path.parent / (path.name + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0, args
        (tmp_path / "r.out").unlink(missing_ok=True)


# --- the block matcher against the plain per-line search -----------------------------------------

from collections import deque  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_REF_ANSI = recovery.search._ANSI


def reference_lines(chunks, max_line):
    """Split at b"\\n"; a line longer than `max_line` keeps its first `max_line` bytes."""
    pending = b""
    for data in chunks:
        parts = data.split(b"\n")
        if len(parts) == 1:
            if len(pending) < max_line:
                pending = (pending + data)[:max_line]
            continue
        yield (pending + parts[0])[:max_line]
        last = parts.pop()
        for line in parts[1:]:
            yield line[:max_line]
        pending = last[:max_line]
    if pending:
        yield pending


def reference_match_bytes(raw):
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return _REF_ANSI.sub(b"", raw) if b"\x1b" in raw else raw


def reference_scan(chunks, matcher, options, budget_bytes, max_line):
    """The simple search: every line matched on its own, in order, as UTF-8 text whose
    invalid bytes are lone surrogates."""
    result = recovery.SourceMatches(None)
    previous = deque(maxlen=max(options.before, 1))
    after_left = used = 0

    def keep(number, text, selected):
        nonlocal used
        if number in result.lines:
            if selected:
                result.lines[number] = (result.lines[number][0], True)
            return True
        clipped = recovery.search._clip(text)
        if used + len(clipped) + 16 > budget_bytes:
            return False
        used += len(clipped) + 16
        result.lines[number] = (clipped, selected)
        return True

    number = 0
    for raw in reference_lines(chunks, max_line):
        number += 1
        line = reference_match_bytes(raw)
        if after_left:
            after_left -= 1
            keep(number, recovery.display_text(line), False)
        if (matcher.search(line.decode("utf-8", "surrogateescape")) is not None) != options.invert:
            result.matches += 1
            if len(result.shown) < options.max_results and keep(number, recovery.display_text(line), True):
                for context_number, context in previous if options.before else ():
                    keep(context_number, recovery.display_text(context), False)
                result.shown.append(number)
                after_left = options.after
        if options.before:
            previous.append((number, line))
    result.total_lines = number
    for selected_line in result.shown:
        first, last = max(1, selected_line - options.before), min(number, selected_line + options.after)
        if result.groups and first <= result.groups[-1][1] + 1:
            result.groups[-1] = (result.groups[-1][0], max(result.groups[-1][1], last))
        else:
            result.groups.append((first, last))
    return result


_PIECES = [b"a", b"b", b"ab", b" ", b"\n", b"\n", b"\r", b"\r\n", b"\x1b[31m", b"\x1b]0;t\x07", b"\x1b]x", b"\x1b",
           "é".encode(), "失".encode()[:2], b"\x00", b"-", b"_", b"error", b"\\", "‘".encode(), "É".encode(), b"\xff"]
_PATTERNS = ["a", "ab", "b$", "^a", "^$", "a\\sb", "a[^x]b", "a.*b", "b*", "\\bab\\b", "(a|b)\\1", "é",
             "a\\Z", "\\Ab", "a(?!b)", "a(?!\\s)", "(?<!\\s)b", "(?=a\\sb)", "a(?=(\\s*))\\1$", "(a)?(?(1)\\s*$|x)", "a\\s*+$", "(?<=a)b", "(?<!a)b", "(?>a\\s*)$", "a++", "x", "[\\r]", "\\x1b",
             "error|失", "\\n", "a\\nb", "(?s:a.b)", "$", "a$\\s", "error.*b", "[‘']a", "^.$", "a.b", "é\\b",
             "\udcff", "\udce5.", "\\w+"]


@settings(max_examples=1500, deadline=None)
@given(
    data=st.lists(st.sampled_from(_PIECES), max_size=60).map(b"".join),
    patterns=st.lists(st.sampled_from(_PATTERNS), min_size=1, max_size=2),
    fixed=st.booleans(), ignore_case=st.booleans(), word=st.booleans(), invert=st.booleans(),
    before=st.integers(0, 3), after=st.integers(0, 3), max_results=st.integers(1, 4),
    budget=st.sampled_from([40, 100, 4096]), chunk=st.integers(1, 17), max_line=st.integers(1, 24),
)
def test_block_search_matches_per_line_search(data, patterns, fixed, ignore_case, word, invert, before, after,
                                              max_results, budget, chunk, max_line):
    options = recovery.SearchOptions(tuple(patterns), fixed, ignore_case, word, invert, before, after, max_results)
    matcher = recovery.compile_patterns(options)
    chunks = [data[i:i + chunk] for i in range(0, len(data), chunk)]
    got = recovery.scan(iter(chunks), matcher, options, budget_bytes=budget, max_line=max_line)
    want = reference_scan(chunks, matcher, options, budget, max_line)
    assert (got.total_lines, got.matches, got.shown, got.lines, got.groups) == \
           (want.total_lines, want.matches, want.shown, want.lines, want.groups)


def test_block_search_crosses_blocks_and_long_lines():
    # Many blocks, context spanning block edges, a line cut at the scan bound.
    data = b"".join(b"%d %s\n" % (n, b"hit" if n % 7 == 0 else b"miss") for n in range(1, 400))
    data += b"x" * 50 + b"hit\n" + b"tail hit"
    options = recovery.SearchOptions(("hit",), before=3, after=3, max_results=30)
    matcher = recovery.compile_patterns(options)
    for chunk in (5, 64, 1000):
        chunks = [data[i:i + chunk] for i in range(0, len(data), chunk)]
        got = recovery.scan(iter(chunks), matcher, options, budget_bytes=1 << 20, max_line=40)
        want = reference_scan(chunks, matcher, options, 1 << 20, 40)
        assert got.matches == want.matches == 57 + 1  # the cut line lost its "hit", the last line keeps it
        assert (got.shown, got.lines, got.groups, got.total_lines) == \
               (want.shown, want.lines, want.groups, want.total_lines)


@pytest.mark.parametrize("pattern", _PATTERNS)
def test_block_search_every_listed_pattern_on_fixed_text(pattern):
    # Every line edge a pattern can be sensitive to, for each pattern, every run.
    data = b"a \nb\na\nab\nb a\nxa\r\n\n a b\nba\n\x1b[1mab\x1b[0m\nerror a\x1b]0;t\naab\n\r\na\nb\n\xc3\xa9b\na\\b\na"
    for invert in (False, True):
        options = recovery.SearchOptions((pattern,), invert=invert, before=1, after=1, max_results=3)
        matcher = recovery.compile_patterns(options)
        for chunk in (1, 3, len(data)):
            chunks = [data[i:i + chunk] for i in range(0, len(data), chunk)]
            got = recovery.scan(iter(chunks), matcher, options, budget_bytes=4096, max_line=6)
            want = reference_scan(chunks, matcher, options, 4096, 6)
            assert (got.total_lines, got.matches, got.shown, got.lines, got.groups) == \
                   (want.total_lines, want.matches, want.shown, want.lines, want.groups), (pattern, invert, chunk)
