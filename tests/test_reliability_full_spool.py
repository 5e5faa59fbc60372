"""A full spool never changes the command's own result: `yarp run` with `TMPDIR` on a tiny, full tmpfs.

The spool is a real 1 MiB tmpfs mounted over the run's `TMPDIR` (root only;
skipped with the reason otherwise), and the archive sits elsewhere. When the
spool cannot take more bytes, the command's output still reaches `yarp run`'s
stdout and stderr exactly, its status is `yarp run`'s, one line says the spool
was full, and the call is finished with what was archived (the streams' first
bytes) and why. When the spool takes the output but has no room for the view,
the output is shown whole and archived whole.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from run_helpers import ArchiveView, cleanup_broker_env, make_run_env, yarp, yrun

SPOOL_BYTES = 1 << 20
#: seq 1 500000: 3,388,895 bytes, over three times the spool.
BIG = b"".join(b"%d\n" % n for n in range(1, 500001))
FULL_LINE = re.compile(
    rb"yarp: the spool in (?P<dir>\S+) was full \(No space left on device\): only the first (?P<out>\d+) bytes of "
    rb"stdout and (?P<err>\d+) of stderr are archived as (?P<ref>yr_[0-9a-f]{32}), marked incomplete; the output "
    rb"passed through whole\n")


@pytest.fixture
def spool_env():
    benv = make_run_env(idle_ms=600_000)
    spool = benv.environ["TMPDIR"]
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SPOOL_BYTES},mode=0700", "tmpfs", spool],
                          capture_output=True)
    if proc.returncode != 0:
        cleanup_broker_env(benv)
        pytest.skip("cannot mount a 1 MiB tmpfs (needs root and mount permission): "
                    + proc.stderr.decode(errors="replace").strip()[:200])
    try:
        yield benv
    finally:
        subprocess.run(["umount", "-l", spool], capture_output=True)
        cleanup_broker_env(benv)


def _result(view: ArchiveView, call_id: int) -> dict:
    return json.loads(view.snapshot(call_id, "result", "before"))


def _full(run) -> re.Match:
    found = FULL_LINE.fullmatch(run.stderr[-600:]) or FULL_LINE.search(run.stderr)
    assert found is not None and run.stderr.count(b"yarp:") == 1, run.stderr[-600:]
    return found


@pytest.mark.parametrize("mode", ["view", "pass"])
def test_a_full_spool_passes_the_output_through_exactly_and_finishes_the_call(spool_env, mode):
    flags = ("--pass",) if mode == "pass" else ()
    run = yrun(spool_env, "seq", "1", "500000", flags=flags)

    assert run.returncode == 0
    assert run.stdout == BIG
    line = _full(run)
    assert run.stderr == line.group(0), "seq's own stderr is empty: only our one line"
    assert line.group("dir").decode() == spool_env.environ["TMPDIR"]
    archived = int(line.group("out"))
    assert 0 < archived <= SPOOL_BYTES and int(line.group("err")) == 0
    with ArchiveView(spool_env) as view:
        (call_id, ref, status, executed, is_error, _streams), = view.calls()
        assert (ref, status, executed, is_error) == (line.group("ref").decode(), "finished", 1, 0)
        assert view.snapshot(call_id, "stdout", "before") == BIG[:archived]
        result = _result(view, call_id)
    assert result["exitCode"] == 0 and result["signal"] is None
    assert f"only the first {archived} bytes of stdout and 0 bytes of stderr are archived" in result["incomplete"]
    read = yarp(spool_env, "read", ref, "stdout", "--bytes", f"{archived - 1000}:{archived}")
    assert read.returncode == 0 and read.stdout == BIG[archived - 1000:archived]
    assert os.listdir(spool_env.environ["TMPDIR"]) == [], "spool files left behind"


def test_a_full_spool_keeps_the_commands_own_status_and_stderr(spool_env):
    script = "seq 1 500000; echo boom >&2; seq 1 1000 >&2; exit 3"
    run = yrun(spool_env, "sh", "-c", script)

    own_stderr = b"boom\n" + b"".join(b"%d\n" % n for n in range(1, 1001))
    assert run.returncode == 3
    assert run.stdout == BIG
    line = _full(run)
    assert run.stderr == own_stderr + line.group(0)
    with ArchiveView(spool_env) as view:
        (call_id, _ref, status, executed, is_error, _streams), = view.calls()
        assert (status, executed, is_error) == ("finished", 1, 1)
        assert _result(view, call_id)["exitCode"] == 3


def test_an_adapter_run_with_a_full_spool_archives_the_first_bytes_into_its_call(spool_env):
    from broker_helpers import session
    from yarp.wire import operations as ops

    spool_env.request(ops.BeginCall(session("spool"), ops.CallMeta("c1", "bash", 1, True), {}, {}, 1))
    flags = ("--archive-agent", "pi", "--archive-account", "tester", "--archive-session", "session-spool",
             "--archive-call", "c1")
    run = yrun(spool_env, "seq", "1", "500000", flags=flags)

    assert run.returncode == 0 and run.stdout == BIG
    archived = int(_full(run).group("out"))
    with ArchiveView(spool_env) as view:
        (call_id, _ref, status, *_), = view.calls("pi")
        assert status == "started", "the adapter finishes its own call"
        assert view.snapshot(call_id, "stdout", "before") == BIG[:archived]


def test_a_spool_without_room_for_the_view_shows_and_archives_the_output_whole(spool_env):
    # The output fits; the view (the capped form, about 5 KiB) does not.
    out = b"".join(b"%d\n" % n for n in range(1, 1501))  # 6,393 bytes: over the 5,120-byte cap
    filler = os.path.join(spool_env.environ["TMPDIR"], "filler")
    with open(filler, "wb") as f:
        f.write(b"\0" * (SPOOL_BYTES - 2 * 4096))  # two pages left
    try:
        run = yrun(spool_env, "seq", "1", "1500")
    finally:
        os.unlink(filler)

    assert run.returncode == 0
    assert run.stdout == out
    assert run.stderr == b"yarp: view not written (No space left on device): the output is shown whole\n"
    with ArchiveView(spool_env) as view:
        (call_id, _ref, status, executed, _err, _streams), = view.calls()
        assert (status, executed) == ("finished", 1)
        assert view.snapshot(call_id, "stdout", "before") == out == view.snapshot(call_id, "stdout", "after")
        assert "incomplete" not in _result(view, call_id)

