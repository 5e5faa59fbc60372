"""End to end: the real Gemini CLI, our installed hooks and the real `yarp`.

`gemini -p` (headless, `--yolo`, `--skip-trust`) runs against the scripted
Gemini API server (scripted_gemini.py), both inside a loopback-only network
namespace; with the settings in `agent_packages.GEMINI_SETTINGS` the CLI
contacts nothing but the model server. The hooks are installed with `yarp hook
install gemini` into the test's `~/.gemini/settings.json`, merged with the
settings already there. The script asks for:

- a shell command `yarp plan` wraps (`grep`): rewritten to `yarp run` before it
  runs, its exact streams archived, the model shown `yarp run`'s capped view;
- a shell command with a large output it does not wrap (`seq`): archived from
  the response, the model shown YARP's capped view through a tail call, its
  `yr_` marker resolved by `yarp search`;
- a failing command: recorded as an error (Gemini states the exit code only
  in the text);
- a file read (small: left as Gemini showed it) and a large one (capped);
- then `yarp import gemini` of the session file the CLI wrote: every call is
  already archived.

The package is installed once per version into a cache directory
($YARP_TEST_CACHE, else /tmp/yarp-test-cache) before the namespace is entered;
the test skips only when npm is missing or cannot reach the registry.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from agent_packages import GEMINI_SETTINGS, gemini_binary
from netns import loopback_namespace
from scripted_gemini import ScriptedGemini, Text, ToolCall, function_responses
from test_hooks import as_json, calls, world  # noqa: F401  (fixture)
from yarp.agents.gemini import hooks as gemini

pytestmark = pytest.mark.slow

CAP = 5120
MARKER = re.compile(r"\[yarp: (\d+) byte\(s\) capped at (\d+); ref=(yr_[0-9a-f]{32}); (\w+) (\w+)\]")
#: The reference in `yarp run`'s view of a reduced output (`[yarp: omitted N line(s); ref=…; stdout complete]`).
REF = re.compile(r"; ref=(yr_[0-9a-f]{32}); ")


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return gemini_binary()


def seq(n: int) -> str:
    return "".join(f"{i}\n" for i in range(1, n + 1))


def test_real_gemini_archives_exact_output_and_shows_the_capped_view(world, gemini_bin):  # noqa: F811
    from yarp.clients.broker import BrokerClient
    from yarp.paths import resolve_archive

    settings = world.home / ".gemini" / "settings.json"
    settings.parent.mkdir(mode=0o700)
    settings.write_text(json.dumps(GEMINI_SETTINGS))
    installed = world.yarp_cli("hook", "install", "gemini", "--user")
    assert installed.returncode == 0, installed.stderr
    configured = json.loads(settings.read_text())
    assert configured["security"] == GEMINI_SETTINGS["security"], "the user's settings are kept"
    assert str(world.yarp) in configured["hooks"]["BeforeTool"][0]["hooks"][0]["command"]

    (world.work / "big.txt").write_text(seq(30000))
    (world.work / "hello.txt").write_text("line one\nline two\n")
    wrapped = {"command": "grep 0 big.txt", "description": "lines with a zero"}
    # Printed by the shell itself (a loop stays in the shell; the `seq` feeding it runs wrapped,
    # passing its bytes on): the host's own result, which Gemini lets YARP replace. Gemini
    # refuses `$(…)` in a command.
    large = {"command": "seq 1 30000 | while read -r i; do echo $i; done"}
    failing = {"command": "echo failure-marker >&2; exit 3"}
    small_read = {"file_path": "hello.txt"}
    large_read = {"file_path": "big.txt"}
    steps = [ToolCall("wrapped", "run_shell_command", wrapped), ToolCall("large", "run_shell_command", large),
             ToolCall("failing", "run_shell_command", failing), ToolCall("small", "read_file", small_read),
             ToolCall("big", "read_file", large_read), Text("All done.")]
    env = dict(world.env, GEMINI_API_KEY="dummy", TERM="dumb", NO_COLOR="1")
    # A warm broker, as in real use (its idle grace is 60 s; the test shortens it to 300 ms).
    warm = BrokerClient(resolve_archive(world.archive, world.env), world.env)
    warm.connect(time.monotonic() + 10)
    started = time.monotonic()
    try:
        with loopback_namespace(), ScriptedGemini(steps) as server:
            env["GOOGLE_GEMINI_BASE_URL"] = server.origin
            run = subprocess.run(
                [str(gemini_bin), "-m", "gemini-2.5-flash", "--yolo", "--skip-trust", "-p", "run the scripted tools"],
                env=env, cwd=world.work, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180,
                check=False)
    finally:
        warm.close()
    wall = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-3000:]
    assert "All done." in run.stdout
    assert not [line for line in run.stderr.splitlines() if "yarp" in line.lower()], run.stderr[-3000:]
    shown = function_responses(server.requests[-1])
    assert [name for name, _ in shown] == ["run_shell_command"] * 3 + ["read_file"] * 2
    shown_text = [response.get("output", response.get("error")) for _, response in shown]

    archived = calls(world.archive)
    ids = {name: gemini.call_prefix(tool, args) + "0" for name, tool, args in (
        ("wrapped", "run_shell_command", wrapped), ("large", "run_shell_command", large),
        ("failing", "run_shell_command", failing), ("small", "read_file", small_read),
        ("big", "read_file", large_read))}
    # The loop's `seq` recorded a call of its own under its parent (docs/run.md, "What an adapter wraps").
    segments = {call_id: call for call_id, call in archived.items() if call_id.startswith(ids["large"] + "/")}
    assert len(segments) == 1 and all(call["requires_streams"] == 1 for call in segments.values())
    archived = {call_id: call for call_id, call in archived.items() if call_id not in segments}
    assert set(archived) == set(ids.values()), "one call each, the tail calls not among them"
    sessions = {call["session"] for call in archived.values()}
    assert len(sessions) == 1
    for call in archived.values():
        assert (call["agent"], call["cwd"], call["status"], call["executed"]) == ("gemini", str(world.work),
                                                                                  "finished", 1)

    # Wrapped before it ran: exact streams; the model got `yarp run`'s capped view.
    call = archived[ids["wrapped"]]
    exact = world.shell(wrapped["command"]).stdout
    assert call["requires_streams"] == 1 and call["snaps"]["stdout/before"] == exact and len(exact) > 20_000
    assert as_json(call["snaps"]["input/before"]) == wrapped
    assert gemini.rewritten_call(as_json(call["snaps"]["input/after"])) == (ids["wrapped"], wrapped)
    view = shown_text[0]
    assert len(view.encode()) <= 6 * 1024, "the model receives at most 6 KiB"
    assert view.startswith("<untrusted_context>\nOutput: [yarp summary: search;")
    assert REF.findall(view) == [call["ref"]]
    found = world.yarp_cli("search", call["ref"], "^29990$")
    assert found.returncode == 0 and b"29990" in found.stdout, found.stderr

    # Not wrapped: Gemini's whole response archived, the model shown YARP's view by a tail call.
    call = archived[ids["large"]]
    assert call["requires_streams"] == 0 and call["is_error"] == 0
    text = call["snaps"]["result_text/before"].decode()
    assert text.startswith(f"<untrusted_context>\nOutput: {seq(30000)}Process Group PGID: ")
    view = shown_text[1]
    assert len(view.encode()) <= 6 * 1024 and "Output too large" not in view
    marker = MARKER.search(view)
    assert marker is not None and marker.groups()[2:] == (call["ref"], "result_text", "complete")
    assert as_json(call["snaps"]["result/after"])["llmContent"] == view
    found = world.yarp_cli("search", call["ref"], "^12345$")
    assert found.returncode == 0 and b"12345" in found.stdout, found.stderr
    views = list((world.home / ".gemini" / "tmp" / "work" / gemini.VIEWS_FOLDER).iterdir())
    assert sorted(p.name for p in views) == sorted(f"{archived[ids[n]]['ref']}.txt" for n in ("large", "big"))

    # Failing: an error, from the `Exit Code:` text; small output left as Gemini showed it.
    call = archived[ids["failing"]]
    assert call["is_error"] == 1
    assert "Exit Code: 3" in shown_text[2] and "failure-marker" in shown_text[2]
    assert call["snaps"]["result/after"] == call["snaps"]["result/before"]

    # Reads: the small one untouched, the large one (Gemini's own 2000 lines) capped.
    call = archived[ids["small"]]
    assert shown_text[3] == "line one\nline two\n" and call["is_error"] == 0
    assert as_json(call["snaps"]["result/before"])["llmContent"] == "line one\nline two\n"
    call = archived[ids["big"]]
    marker = MARKER.search(shown_text[4])
    assert marker is not None and marker.group(3) == call["ref"] and len(shown_text[4].encode()) <= 6 * 1024

    report = world.verify()
    assert "archive: ok" in report and "incomplete_calls: 0" in report

    # The session the CLI wrote: every call in it was captured live.
    sessions_files = list((world.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"))
    assert len(sessions_files) == 1
    imported = world.yarp_cli("import", "gemini", "--json")
    assert imported.returncode == 0, imported.stderr
    summary = json.loads(imported.stdout)
    assert (summary["callsFound"], summary["callsNew"], summary["callsAlreadyArchived"]) == (5, 0, 5), summary
    assert {call_id: call for call_id, call in calls(world.archive).items() if call_id not in segments} == archived
    print(f"gemini -p wall time: {wall:.2f} s")
