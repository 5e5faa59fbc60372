"""The real Qwen Code CLI against the scripted model: the host behaviour the `qwen-code` parts rely on.

`qwen --yolo -o json` runs headless against the scripted OpenAI-compatible
server (scripted_model.py), both inside a loopback-only network namespace;
the package is installed from npm into the test cache before the namespace
is entered. Its hooks, in the test's `~/.qwen/settings.json`, run a small
script that decodes each event with `yarp.agents.qwen_code.hooks` and, after
a call whose text is over the cap, answers `hooks.view_answer` with a capped
view made by `yarp.view.cap.cap_text` (a `yr_` reference included). The
script asks for `seq 1 100000`, a failing command and a final text; the test
checks that:

- the events carry the model's call ids, and `PreToolUse` comes before the
  tool, `PostToolUse` after it with the output Qwen Code cut and named the
  file holding it whole, and `PostToolUseFailure` after the command that
  exits 3;
- the model gets exactly the view the hook answered (at most 6 KiB, with its
  `yr_` reference), not Qwen Code's own cut;
- the chat file the run wrote, read by `yarp.agents.qwen_code.transcripts`,
  gives the same call ids, the replaced call's result as the view (not an
  error), and the failing call as an error.

The archive end to end (`yarp hook qwen-code`, `yarp import qwen-code`)
waits for the registry's readers; docs/adapters.md, "Qwen Code".

CI runs it and it must not skip there (`real_agent_required`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_packages import QWEN_CODE_SETTINGS, QWEN_CODE_VERSION, qwen_code_binary
from netns import loopback_namespace
from scripted_model import ScriptedModel, Text, ToolCall, tool_messages

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CAP = 5120
REF = "yr_" + "0123456789abcdef" * 2
HOOK = """\
import json, sys
from yarp.agents.qwen_code import hooks
from yarp.view.cap import cap_text
payload = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(payload) + "\\n")
event = hooks.parse_event(payload)
text = hooks.response_text(event.response) if event is not None and event.event == hooks.POST else None
source = hooks.saved_output(text)
if source is not None:
    with open(source, "rb") as whole:
        data = whole.read()
    view = cap_text(data, cap=int(sys.argv[2]), archive_ref=sys.argv[3], source="source_output",
                    completeness="complete").decode()
    print(json.dumps(hooks.view_answer(view)))
"""


@pytest.fixture(scope="session")
def qwen_cli() -> Path:
    return qwen_code_binary()


def test_real_qwen_code_hands_the_model_the_hooks_view(tmp_path, qwen_cli):
    from yarp.agents.qwen_code import transcripts
    from yarp.transcripts.parsing import Tally

    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".qwen").mkdir(parents=True)
    work.mkdir()
    log, script = tmp_path / "events.jsonl", tmp_path / "hook.py"
    script.write_text(HOOK)
    command = (f"PYTHONPATH={ROOT / 'src'} {sys.executable} {script} {log} {CAP} {REF}")
    entry = [{"matcher": "", "hooks": [{"type": "command", "command": command, "name": "yarp", "timeout": 30_000}]}]
    settings = dict(QWEN_CODE_SETTINGS, hooks={name: entry for name in ("PreToolUse", "PostToolUse",
                                                                        "PostToolUseFailure")})
    (home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    steps = [ToolCall("call_seq", "run_shell_command", {"command": "seq 1 100000"}),
             ToolCall("call_fail", "run_shell_command", {"command": "echo failure-marker >&2; exit 3"}),
             Text("all done")]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "TERM": "dumb", "NO_COLOR": "1",
           "OPENAI_API_KEY": "dummy", "OPENAI_MODEL": "scripted-model", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
    with loopback_namespace(), ScriptedModel(steps) as model:
        version = subprocess.run([str(qwen_cli), "--version"], env=env, capture_output=True, text=True, timeout=60)
        assert version.stdout.strip() == QWEN_CODE_VERSION, version.stderr[-400:]
        run = subprocess.run([str(qwen_cli), "--yolo", "-o", "json", "run the scripted tools"], cwd=work,
                             env=dict(env, OPENAI_BASE_URL=model.base_url), stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)[-1]["result"] == "all done"

    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["hook_event_name"], e["tool_call_id"]) for e in events] == [
        ("PreToolUse", "call_seq"), ("PostToolUse", "call_seq"), ("PreToolUse", "call_fail"),
        ("PostToolUseFailure", "call_fail")]
    # A command that exits non-zero is a failure to Qwen Code: its event carries the error text.
    assert "Exit Code: 3" in events[3]["error"]
    cut = events[1]["tool_response"]["llmContent"]
    saved = re.match(r"Tool output was too large and has been truncated\.\nThe full output has been saved to: "
                     r"(/\S+)\n", cut)
    assert saved is not None and len(cut) < 6 * 1024
    whole = Path(saved.group(1)).read_text()
    assert "".join(f"{i}\n" for i in range(1, 100001)) in whole + "\n", "the saved file holds every line"

    # The model got the hook's view, not Qwen Code's cut: at most 6 KiB, with its reference.
    shown = tool_messages(model.requests[-1])
    assert len(shown["call_seq"].encode()) <= 6 * 1024 and f"ref={REF}" in shown["call_seq"]
    assert shown["call_seq"] != cut and "Exit Code: 3" in shown["call_fail"]

    # The chat file names the same calls; the saved file is its source output; the failure is an error.
    chats = list((home / ".qwen" / "projects").glob("*/chats/*.jsonl"))
    assert len(chats) == 1 and chats[0].stem == events[0]["session_id"]
    tally = Tally()
    parser = transcripts.Parser(str(chats[0]), "u", tally, None, None)
    for number, line in enumerate(chats[0].read_text().splitlines(), 1):
        parser.feed(json.loads(line), number)
    calls = {call.call.source_call_id: call for call in parser.take_ready()}
    assert sorted(calls) == ["call_fail", "call_seq"] and tally.results_without_call == 0
    # The replaced result is recorded as the view the model got; Qwen Code names no saved file for it.
    assert calls["call_seq"].result == {"error": shown["call_seq"]} and not calls["call_seq"].is_error
    assert calls["call_fail"].is_error
