"""`yarp search --text` searches the whole archive (or the range named), newest first, and says
on stderr what it did not search when it stops early; real archives, real processes."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
from archive_factory import ArchiveFactory, run_yarp, yarp_env

from yarp.archive.prepare import prepare
from yarp.archive.store import ArchiveStore
from yarp.limits import MAX_INLINE_SCAN_PAYLOAD_BYTES
from yarp.paths import resolve_archive
from yarp.wire import operations as ops

NEEDLE = "zq-rare-needle-4417"
CALLS = 2600
#: Call numbers (0 oldest) whose result text holds NEEDLE: both older than the newest 2,000 calls.
PLANTED = (40, 555)
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
SESSION = ops.Session(agent="pi", account="tester", source_session_id="listing-1", started_at_ms=BASE_MS)


def _read_call(n: int, text: str) -> list:
    """Prepared requests of one finished read call whose result text is `text`."""
    call_id = f"read-{n}"
    started = BASE_MS + n * 1000
    meta = ops.CallMeta(call_id, "read", started, False, "prov", "model-1", "/work")
    result = {"content": [{"type": "text", "text": text[:20]}], "isError": False}
    return [prepare(ops.BeginCall(SESSION, meta, {"path": f"/src/{n}.py"}, {"path": f"/src/{n}.py"}, started)),
            prepare(ops.ResultBefore(SESSION, call_id, result, started + 1)),
            prepare(ops.ResultText(SESSION, call_id, text, "complete", started + 2)),
            prepare(ops.FinishCall(SESSION, call_id, result, False, True, started + 3))]


def _fill(path) -> dict[int, str]:
    """CALLS read calls through the archive's one writer, 256 requests a transaction; n -> ref."""
    store = ArchiveStore.open(resolve_archive(str(path), {}))
    refs: dict[int, str] = {}
    try:
        pending: list = []
        for n in range(CALLS):
            lines = [f"call {n} line {i}: compiling module {n * 7 + i}" for i in range(12)]
            if n in PLANTED:
                lines[7] = f"error: ‘{NEEDLE}’ was not declared"
            pending.extend(_read_call(n, "\n".join(lines) + "\n"))
            if len(pending) >= 256 or n == CALLS - 1:
                for prepared, outcome in zip(pending, store.apply_batch(pending)):
                    if isinstance(outcome, Exception):
                        raise outcome
                    if isinstance(prepared.operation, ops.BeginCall):
                        refs[int(prepared.operation.call.source_call_id.split("-")[1])] = outcome.archive_ref
                pending = []
    finally:
        store.close()
    return refs


@pytest.fixture(scope="module")
def arch(tmp_path_factory):
    root = tmp_path_factory.mktemp("listing")
    path = root / "archive" / "tool-calls.sqlite3"
    path.parent.mkdir(mode=0o700)
    refs = _fill(path)
    home = root / "home"
    home.mkdir()
    return path, refs, home


def yarp(arch, *args):
    path, _, home = arch
    return run_yarp("search", *args, "--archive", str(path), home=home)


def _refs(result) -> list[str]:
    return [line.split()[0] for line in result.stdout.decode().splitlines() if line.startswith("yr_")]


def test_a_rare_string_beyond_the_newest_2000_calls_is_found(arch):
    _, refs, _ = arch
    result = yarp(arch, "--text", NEEDLE)
    assert result.returncode == 0, result.stderr
    assert _refs(result) == [refs[555], refs[40]]  # newest first
    assert result.stdout.decode().splitlines()[0] == "[yarp search: calls=2]"
    assert result.stderr == b""  # it ran to the end: nothing left unsaid
    # Characters, not bytes: the typographic quotes are one character each.
    assert _refs(yarp(arch, "--text", f"error: .{NEEDLE}. was")) == [refs[555], refs[40]]


def test_a_stop_at_the_result_limit_says_what_was_not_searched(arch):
    _, refs, _ = arch
    result = yarp(arch, "--text", NEEDLE, "-m", "1")
    assert result.returncode == 0, result.stderr
    assert _refs(result) == [refs[555]]
    header = "[yarp search: calls=1 (more not shown; narrow with --since/--tool)]"  # the format as it was
    assert result.stdout.decode().splitlines()[0] == header
    searched, left = CALLS - 555, 555  # calls 2599 down to 555; calls 554 down to 0
    assert result.stderr.decode() == (
        f"yarp search: stopped at 1 matching call(s) (-m 1); searched the newest {searched} call(s),"
        f" back to 2026-01-01T00:09:15.000Z; {left} older call(s) not searched"
        " (continue with --until 2026-01-01T00:09:15.000Z)\n")
    # The named continuation finds the rest, and that search ran to its end.
    rest = yarp(arch, "--text", NEEDLE, "--until", "2026-01-01T00:09:15.000Z")
    assert (_refs(rest), rest.stderr) == ([refs[40]], b"")
    as_json = yarp(arch, "--text", NEEDLE, "-m", "1", "--json")
    assert json.loads(as_json.stdout)["more"] is True and as_json.stderr.count(b"\n") == 1


def test_a_range_is_searched_whole_and_only_it(arch):
    _, refs, _ = arch
    # Calls 100 to 2599: the oldest planted call is outside, the other is found, nothing is cut short.
    result = yarp(arch, "--text", NEEDLE, "--since", str(BASE_MS + 100 * 1000))
    assert (result.returncode, _refs(result), result.stderr) == (0, [refs[555]], b"")
    stopped = yarp(arch, "--text", NEEDLE, "--since", str(BASE_MS + 100 * 1000), "--tool", "read", "-m", "1")
    assert b"; searched the newest 2045 call(s) in the range," in stopped.stderr
    assert b"; 455 older call(s) not searched" in stopped.stderr
    assert yarp(arch, "--text", NEEDLE, "--tool", "bash").returncode == 1
    none = yarp(arch, "--text", "no such text in any call")
    assert (none.returncode, none.stdout, none.stderr) == (1, b"No matching calls\n", b"")


def test_progress_is_drawn_on_a_terminal_and_removed(arch):
    path, refs, home = arch
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "yarp", "search", "--text", NEEDLE, "--archive", str(path)],
                              env=yarp_env(home), stdout=subprocess.PIPE, stderr=terminal, timeout=60)
        os.close(terminal)
        terminal = -1
        shown = b""
        while True:
            try:
                data = os.read(controller, 65536)
            except OSError:
                break
            if not data:
                break
            shown += data
    finally:
        if terminal >= 0:
            os.close(terminal)
        os.close(controller)
    assert proc.returncode == 0 and refs[40] in proc.stdout.decode()
    assert f"yarp search: searching calls 256/{CALLS} (".encode() in shown
    assert shown.endswith(b"\r\x1b[K")  # the line is gone before the listing is read


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Calls whose outputs are large, only JSON, or JSON beside a text source."""
    root = tmp_path_factory.mktemp("listing-mixed")
    path = root / "archive" / "tool-calls.sqlite3"
    big = b"".join(b"%08d compiling a line of a long build log\n" % i
                   for i in range(MAX_INLINE_SCAN_PAYLOAD_BYTES // 40 + 1000))
    with ArchiveFactory(path) as factory:
        refs = {
            # Stored larger than the inline bound: streamed from its row, the needle on its last line.
            "big": factory.shell_call("big", big + NEEDLE.encode() + b"\n"),
            # No text source: the exact result JSON is the call's only source.
            "json": factory.tool_call("json", result={"content": [{"type": "text", "text": f"x {NEEDLE} y"}]}),
            # The result JSON holds the needle, but the call has a result text, which does not.
            "shadowed": factory.tool_call("shadowed", result_text="plain text",
                                          result={"content": [{"type": "text", "text": NEEDLE}]}),
        }
    home = root / "home"
    home.mkdir()
    return path, refs, home


def test_large_payloads_and_the_result_fallback(mixed):
    path, refs, home = mixed
    result = run_yarp("search", "--text", NEEDLE, "--archive", str(path), home=home)
    assert result.returncode == 0, result.stderr
    assert _refs(result) == [refs["json"], refs["big"]]
    # The same calls `yarp search REF` finds it in, and not the shadowed one.
    for name, code in (("big", 0), ("json", 0), ("shadowed", 1)):
        assert run_yarp("search", refs[name], NEEDLE, "--archive", str(path), home=home).returncode == code


def test_an_interrupted_search_keeps_what_it_found_and_counts_what_it_did_not_search(arch):
    from yarp.archive import recovery
    from yarp.archive.sqlite import open_readonly

    path, refs, _ = arch
    matcher = recovery.compile_patterns(recovery.SearchOptions((NEEDLE,)))
    seen = []

    def interrupt_at_call_555(searched: int, found: int, started_ms: int) -> None:
        seen.append((searched, found))
        if started_ms == BASE_MS + 555 * 1000:
            raise KeyboardInterrupt  # Ctrl-C, at a known call

    conn = open_readonly(resolve_archive(str(path), {}))
    try:
        listing = recovery.list_calls(conn, text=matcher, progress=interrupt_at_call_555)
    finally:
        conn.close()
    assert [c.archive_ref for c in listing.calls] == [refs[555]]
    assert (listing.stop, listing.more, listing.searched, listing.not_searched) == ("interrupted", True, 2045, 555)
    assert listing.oldest_ms == BASE_MS + 555 * 1000 and seen[-1] == (2045, 1)
