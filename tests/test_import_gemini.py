"""`yarp import gemini`: session files in Gemini CLI 0.61's format, and the live hook's identities.

The files are written record by record in the shapes the real CLI writes
(docs/import.md, "Gemini CLI"; the real CLI's own files are imported in
test_real_gemini.py). The archive is real, written by a real broker; live
events go through real `yarp hook gemini` processes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_hooks import as_json, calls, world  # noqa: F401  (fixture)
from test_hooks_gemini import SESSION, event, seq, shell_response
from yarp.agents.gemini import hooks as gemini

SUBAGENT = "b1d3c0a2-0000-4000-8000-0000000000aa"


class Session:
    """A Gemini CLI session file in a project temp folder, appended as the CLI appends it."""

    def __init__(self, project: Path, root: str) -> None:
        self.project = project
        (project / "chats").mkdir(parents=True, exist_ok=True)
        (project / ".project_root").write_text(root)
        self.path = project / "chats" / f"session-2026-12-04T18-23-{SESSION[:8]}.jsonl"
        self.write({"sessionId": SESSION, "projectHash": "459eca41" * 8, "startTime": "2026-12-04T18:23:36.286Z",
                    "lastUpdated": "2026-12-04T18:23:36.286Z", "kind": "main"})
        self.write({"$set": {"messages": [{"id": "m0", "timestamp": "2026-12-04T18:23:36.286Z", "type": "user",
                                           "content": [{"text": "<session_context>…</session_context>"}]}]}})
        self.scheduled = 1796408616315

    def write(self, record: dict, path: Path | None = None) -> None:
        with open(path or self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def tool_call(self, name: str, args: dict, output: str | None = None, *, status: str = "success",
                  error: str | None = None, display="", **extra) -> dict:
        raw = f"{name}_{self.scheduled}_0"
        self.scheduled += 100
        response = {"error": error} if error is not None else {"output": output}
        return {"id": f"{name}__{raw}", "name": name, "args": args,
                "result": [{"functionResponse": {"id": f"{name}__{raw}", "name": name, "response": response}}],
                "status": status, "timestamp": "2026-12-04T18:23:37.008Z", "resultDisplay": display,
                "description": "", "displayName": name, "renderOutputAsMarkdown": True, **extra}

    def turn(self, message_id: str, *tool_calls: dict, path: Path | None = None) -> None:
        """A model turn: its message first without, then again with, its completed calls."""
        message = {"id": message_id, "timestamp": "2026-12-04T18:23:36.355Z", "type": "gemini", "content": "",
                   "thoughts": [], "tokens": {"input": 10, "output": 5, "total": 15}, "model": "gemini-2.5-flash"}
        self.write(message, path)
        self.write({"$set": {"lastUpdated": "2026-12-04T18:23:36.355Z"}}, path)
        self.write({**message, "toolCalls": list(tool_calls)}, path)
        for call in tool_calls:
            self.write({"id": f"u-{call['id']}", "type": "user", "timestamp": "2026-12-04T18:23:37.009Z",
                        "content": [part for part in call["result"]]}, path)


def imported(world, *args: str) -> dict:  # noqa: F811
    result = world.yarp_cli("import", *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_session_is_imported_with_the_hooks_identities(world):  # noqa: F811
    project = world.home / ".gemini" / "tmp" / "app"
    session = Session(project, "/home/dev/app")
    big = "<untrusted_context>\nOutput: " + seq(30000) + "Process Group PGID: 7\n</untrusted_context>"
    saved = project / "tool-outputs" / f"session-{SESSION}" / "run_shell_command__x.txt"
    saved.parent.mkdir(parents=True)
    saved.write_text(big)
    cut = f"Output too large. Showing first 8,000 and last 32,000 characters. For full output see: {saved}\n" \
          + big[:8000] + "\n\n... [128967 characters omitted] ...\n\n" + big[-32000:]
    ls = {"command": "ls"}
    session.turn("g1", session.tool_call("run_shell_command", {"command": "seq 1 30000"}, cut))
    session.turn("g2", session.tool_call("run_shell_command", {"command": "sh -c 'exit 3'"},
                                         "<untrusted_context>\nOutput: (empty)\nExit Code: 3\n</untrusted_context>"))
    session.turn("g3", session.tool_call("read_file", {"file_path": "/nope"}, status="error",
                                         error="File not found: /nope"),
                 session.tool_call("run_shell_command", ls, "<untrusted_context>\nOutput: a\n</untrusted_context>"))
    # A subagent's calls reach the hooks under this session: read from its own file, in this session.
    sub = project / "chats" / SESSION / f"{SUBAGENT}.jsonl"
    sub.parent.mkdir()
    session.write({"sessionId": SUBAGENT, "projectHash": "459eca41" * 8, "startTime": "2026-12-04T18:23:38.000Z",
                   "kind": "subagent"}, sub)
    session.turn("s1", dict(session.tool_call("run_shell_command", ls, "<untrusted_context>\nOutput: b\n"
                                              "</untrusted_context>"), id=f"{SUBAGENT}#0-0"), path=sub)
    session.turn("g4", session.tool_call("invoke_agent", {"agent": "generalist"}, "done", agentId=SUBAGENT))
    session.turn("g5", session.tool_call("run_shell_command", ls, "<untrusted_context>\nOutput: c\n</untrusted_context>"))
    session.write({"$rewindTo": "g5"})
    # Gemini keeps other JSONL files in its temp folders: never taken for sessions.
    (project / "logs.jsonl").write_text('{"sessionId": "x", "projectHash": "y"}\n')

    summary = imported(world, "gemini")
    assert (summary["files"], summary["sessions"], summary["callsFound"], summary["callsNew"]) == (1, 1, 7, 7)
    assert summary["unknownRecords"] == {} and summary["issues"] == []
    archived = calls(world.archive)
    ls_prefix = gemini.call_prefix("run_shell_command", ls)
    # The hooks count identical calls in the order they began: parent, subagent, parent.
    outputs = [as_json(archived[ls_prefix + str(n)]["snaps"]["result/before"])["result"][0]["functionResponse"]
               ["response"]["output"] for n in range(3)]
    assert [o.split("Output: ")[1][0] for o in outputs] == ["a", "b", "c"]
    assert all(c["session"] == SESSION and c["agent"] == "gemini" and c["cwd"] == "/home/dev/app"
               for c in archived.values())
    seq_call = archived[gemini.call_prefix("run_shell_command", {"command": "seq 1 30000"}) + "0"]
    assert seq_call["snaps"]["result_text/before"] == big.encode(), "the whole output Gemini saved"
    assert as_json(seq_call["snaps"]["result/before"])["status"] == "success"
    flags = {c["tool"] + ":" + str(c["is_error"]) for c in archived.values()}
    assert flags == {"run_shell_command:0", "run_shell_command:1", "read_file:1", "invoke_agent:0"}
    assert archived[gemini.call_prefix("run_shell_command", {"command": "sh -c 'exit 3'"}) + "0"]["is_error"] == 1
    assert all(c["status"] == "finished" and c["executed"] == 1 for c in archived.values())

    # Incremental: nothing new is read again; an appended turn is one new call.
    again = imported(world, "gemini")
    assert (again["filesUnchanged"], again["callsNew"]) == (1, 0)
    session.turn("g6", session.tool_call("run_shell_command", ls, "<untrusted_context>\nOutput: d\n</untrusted_context>"))
    more = imported(world, "gemini")
    assert (more["callsFound"], more["callsNew"]) == (1, 1)
    assert ls_prefix + "3" in calls(world.archive)


def test_calls_captured_live_are_already_archived(world):  # noqa: F811
    """The same calls through the live hook, then their session file: nothing is imported twice,
    a rewritten shell command included (its session args are the rewrite)."""
    project = world.home / ".gemini" / "tmp" / "work"
    session = Session(project, str(world.work))
    (world.work / "big.txt").write_text(seq(30000))
    recorded = []
    for arguments in ({"command": "grep 0 big.txt"}, {"command": "date"}, {"command": "date"},
                      {"file_path": "big.txt"}):
        tool = "read_file" if "file_path" in arguments else "run_shell_command"
        reply = world.hook("gemini", event(world, project, "BeforeTool", tool, arguments))
        ran = json.loads(reply.stdout)["hookSpecificOutput"]["tool_input"] if reply.stdout.strip() else arguments
        if tool == "read_file":
            response = {"llmContent": seq(30000), "returnDisplay": ""}
        else:
            output = world.shell(ran["command"]).stdout.decode()
            response = shell_response(output)
        world.hook("gemini", event(world, project, "AfterTool", tool, ran, response))
        recorded.append(session.tool_call(tool, ran, response["llmContent"]))
    assert gemini.rewritten_call(recorded[0]["args"]) is not None, "the first command was rewritten"
    live = calls(world.archive)
    session.turn("g1", *recorded)
    summary = imported(world, "gemini", str(session.path))
    assert (summary["callsFound"], summary["callsNew"], summary["callsAlreadyArchived"]) == (4, 0, 4)
    assert calls(world.archive) == live


def test_all_recognises_a_gemini_session_by_its_first_line(world):  # noqa: F811
    project = world.tmp / "elsewhere" / "proj"
    session = Session(project, "/srv/proj")
    session.turn("g1", session.tool_call("glob", {"pattern": "*.py"}, "Found 0 files"))
    summary = imported(world, "all", str(session.path))
    assert (summary["callsNew"], summary["sessions"]) == (1, 1)
    assert os.path.exists(world.archive)
