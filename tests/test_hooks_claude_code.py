"""End to end: the real Claude Code binary, our installed hooks and the real `yarp`.

Claude Code runs `-p` against the scripted Anthropic server on loopback, both
inside a loopback-only network namespace (tests/netns.py), which
asks for a Bash command with large output (one `yarp plan` wraps) and a Read.
The hooks are installed with `yarp hook install claude-code --user` into the
temporary HOME. The archive is then read read-only: exact inputs, the Bash call
wrapped with four stream snapshots (or, if Claude ignored `updatedInput`,
finished as not wrapped), the Read call, and `yarp archive verify`.

The package is installed once per version into a cache directory
($YARP_TEST_CACHE, else /tmp/yarp-test-cache) before the namespace is entered;
the test skips only when npm is missing or the install fails for lack of
network (agent_packages.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from agent_packages import npm_binary, version_of
from netns import loopback_namespace
from scripted_anthropic import ScriptedAnthropic, Text, ToolUse, tool_results
from test_hooks import as_json, calls, make_haystack, world  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow

CLAUDE_VERSION = "2.1.332"
#: The newest Claude Code that does not take `updatedToolOutput` (it began in 2.1.121): it must work as before.
CLAUDE_BEFORE_UPDATED_OUTPUT = "2.1.120"
CAP = 5120
SEQ = "".join(f"{i}\n" for i in range(1, 100001)).encode()


def claude_of(version: str) -> Path:
    binary = npm_binary("@anthropic-ai/claude-code", version, "claude", "claude-code")
    assert version_of(binary).startswith(version)
    return binary


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return claude_of(CLAUDE_VERSION)


def run_claude(world, claude_bin: Path, steps: list, prompt: str):
    """Run the real `claude -p PROMPT` in `world` against a scripted server playing `steps`.

    A warm broker answers the hooks, as in real use (its idle grace is 60 s;
    the tests shorten it to 300 ms), and Claude Code and the scripted server
    share a loopback-only network namespace (npm ran before it). Returns the
    finished process and the server (its recorded requests).
    """
    from yarp.clients.broker import BrokerClient
    from yarp.paths import resolve_archive

    env = dict(world.env, ANTHROPIC_API_KEY="sk-dummy", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
               DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1")
    warm = BrokerClient(resolve_archive(world.archive, world.env), world.env)
    warm.connect(time.monotonic() + 10)
    try:
        with loopback_namespace(), ScriptedAnthropic(steps) as server:
            env["ANTHROPIC_BASE_URL"] = server.base_url
            run = subprocess.run(
                [str(claude_bin), "-p", prompt, "--model", "claude-sonnet-4-5", "--output-format", "json",
                 "--allowedTools", "Bash", "Read"],
                env=env, cwd=world.work, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                check=False)
    finally:
        warm.close()
    return run, server


def test_real_claude_code_archives_wrapped_bash_and_read(world, claude_bin):  # noqa: F811
    make_haystack(world.work)
    installed = world.yarp_cli("hook", "install", "claude-code", "--user")
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((world.home / ".claude" / "settings.json").read_text())
    assert str(world.yarp) in settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    bash_input = {"command": "grep -rn needle src", "description": "Find needles", "timeout": 60000}
    read_input = {"file_path": str(world.work / "src" / "f1.txt")}
    steps = [ToolUse("toolu_bash", "Bash", bash_input), ToolUse("toolu_read", "Read", read_input), Text("done")]
    run, server = run_claude(world, claude_bin, steps, "find the needles")
    assert run.returncode == 0, run.stderr[-800:]
    outcome = json.loads(run.stdout)
    assert outcome["result"] == "done" and outcome["permission_denials"] == []
    archived = calls(world.archive)
    assert set(archived) == {"toolu_bash", "toolu_read"}
    bash, read = archived["toolu_bash"], archived["toolu_read"]
    for call in (bash, read):
        assert (call["agent"], call["session"], call["cwd"]) == ("claude-code", outcome["session_id"], str(world.work))
        assert (call["status"], call["is_error"]) == ("finished", 0)
    assert as_json(bash["snaps"]["input/before"]) == bash_input
    after = as_json(bash["snaps"]["input/after"])
    assert {k: v for k, v in after.items() if k != "command"} == {"description": "Find needles", "timeout": 60000}
    assert after["command"].endswith(" -- grep -rn needle src") and str(world.yarp) in after["command"]
    raw = world.shell("grep -rn needle src").stdout
    shown = {call_id: shown_text(content) for call_id, content in tool_results(server.requests[-1]).items()}
    assert bash["requires_streams"] == 1
    if bash["executed"] == 1:  # Claude applied updatedInput: the wrapper ran
        assert bash["snaps"]["stdout/before"] == raw, "the exact grep output is archived"
        visible = bash["snaps"]["stdout/after"]
        assert len(visible) < len(raw) and b"yarp" in visible
        assert shown["toolu_bash"] == visible.decode().rstrip("\n"), "the model saw the pruned view"
        assert as_json(bash["snaps"]["result/before"])["stdout"] == visible.decode().rstrip("\n")
    else:  # Claude ignored updatedInput: recorded as not wrapped
        assert not any(key.startswith(("stdout", "stderr")) for key in bash["snaps"])
        assert as_json(bash["snaps"]["result/before"])["stdout"] == raw.decode().rstrip("\n")
    assert bash["executed"] == 1, f"Claude Code {CLAUDE_VERSION} applies updatedInput without permissionDecision"
    assert as_json(read["snaps"]["input/before"]) == read_input
    assert (read["executed"], read["requires_streams"]) == (1, 0)
    assert "needle number 3 in file 1" in json.dumps(as_json(read["snaps"]["result/before"]))
    assert "incomplete_calls: 0" in world.verify()


def shown_text(content) -> str:
    """The text of a tool_result as the model got it, without the reminder Claude Code appends after it."""
    if isinstance(content, list):
        content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
    assert isinstance(content, str)
    return content.split("\n\n<system-reminder>", 1)[0]


def reference(text: str) -> str:
    found = re.findall(r"ref=(yr_[0-9a-f]{32})", text)
    assert found, f"no yr_ reference in the view: {text[:200]!r}"
    return found[0]


def test_real_claude_code_shows_large_outputs_as_yarp_views(world, claude_bin):  # noqa: F811
    """Every Bash output reaches the model through the view: a wrapped command's (`yarp run`), a
    compound command's (its wrapped segment), a builtin's (the post hook's view of the file Claude Code
    saved), and a pipeline cut by `head` exactly as it ran; each large one is restored whole."""
    (world.work / "sub").mkdir()
    installed = world.yarp_cli("hook", "install", "claude-code", "--user")
    assert installed.returncode == 0, installed.stderr
    commands = {"toolu_seq": "seq 1 100000", "toolu_cd": "cd sub && seq 1 100000",
                "toolu_head": "seq 1 100000 2>&1 | head -3",
                "toolu_builtin": "printf '%s\\n' $(seq 1 100000)"}
    steps = [ToolUse(call_id, "Bash", {"command": command}) for call_id, command in commands.items()] + [Text("done")]
    run, server = run_claude(world, claude_bin, steps, "count")
    assert run.returncode == 0, run.stderr[-800:]
    assert json.loads(run.stdout)["result"] == "done"
    shown = {call_id: shown_text(content) for call_id, content in tool_results(server.requests[-1]).items()}
    assert shown["toolu_head"] == "1\n2\n3", "the model sees exactly the three lines head printed"
    archived = calls(world.archive)
    for call_id in ("toolu_seq", "toolu_cd", "toolu_builtin"):
        text = shown[call_id]
        assert len(text.encode()) <= 6 * 1024, f"{call_id}: {len(text.encode())} bytes shown"
        assert "<persisted-output>" not in text and text.startswith("1\n2\n3\n"), text[:200]
        ref = reference(text)
        restored = world.yarp_cli("restore", ref)
        assert restored.returncode == 0, restored.stderr
        assert restored.stdout == SEQ and len(restored.stdout) == 588_895, f"{call_id}: restore gives every byte"
        assert any(call["ref"] == ref for call in archived.values())
    builtin = archived["toolu_builtin"]
    assert builtin["ref"] == reference(shown["toolu_builtin"])
    assert builtin["snaps"]["source_output/before"] == SEQ, "Claude Code's saved file, read as the approved source"
    raw = as_json(builtin["snaps"]["result/before"])
    assert raw["persistedOutputSize"] == len(SEQ) and len(raw["stdout"]) == 30000
    assert as_json(builtin["snaps"]["result/after"])["stdout"].rstrip("\n") == shown["toolu_builtin"]
    assert "incomplete_calls: 0" in world.verify()


def test_real_older_claude_code_keeps_its_own_view(world):  # noqa: F811
    """Claude Code 2.1.120 does not take `updatedToolOutput`: no answer is sent, its own view
    stands, and the complete output it saved is archived."""
    binary = claude_of(CLAUDE_BEFORE_UPDATED_OUTPUT)
    installed = world.yarp_cli("hook", "install", "claude-code", "--user")
    assert installed.returncode == 0, installed.stderr
    steps = [ToolUse("toolu_builtin", "Bash", {"command": "printf '%s\\n' $(seq 1 100000)"}), Text("done")]
    run, server = run_claude(world, binary, steps, "count")
    assert run.returncode == 0, run.stderr[-800:]
    text = shown_text(tool_results(server.requests[-1])["toolu_builtin"])
    assert "yr_" not in text and "Output too large" in text, text[:300]
    call = calls(world.archive)["toolu_builtin"]
    assert call["snaps"]["source_output/before"] == SEQ
    assert call["snaps"]["result/after"] == call["snaps"]["result/before"]
    assert "incomplete_calls: 0" in world.verify()
