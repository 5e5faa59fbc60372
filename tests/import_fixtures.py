"""Transcript writers for the import tests, line by line as the agents write them.

The shapes follow the field-by-field description of each format (Claude Code
2.1.x project files with a subagent file and a spilled `tool-results` output;
Codex 0.171 wrapped rollouts with `session_meta`, `turn_context`,
`response_item` and `event_msg` lines). Only the fields the importer or a
realistic reader touches are filled in; everything else an agent writes is
represented by records of the kinds it writes (summaries, snapshots, usage).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

CLAUDE_SESSION = "3f1c2a9e-5b7d-4e11-9a0c-2d6f8e4b7a10"
CODEX_THREAD = "019a7c3e-8d21-7f40-b5e6-1c2d3e4f5a6b"


def iso(second: int) -> str:
    return f"2026-03-01T10:{second // 60:02d}:{second % 60:02d}.000Z"


def write_lines(path: Path, records: list, *, mode: str = "w") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as handle:
        for record in records:
            handle.write(record if isinstance(record, str) else json.dumps(record, separators=(",", ":")))
            handle.write("\n")


# --- Claude Code ----------------------------------------------------------------------


def claude_line(kind: str, second: int, message: dict, **extra) -> dict:
    line = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/app",
            "sessionId": CLAUDE_SESSION, "version": "2.1.197", "gitBranch": "main", "type": kind,
            "message": message, "uuid": f"u-{kind}-{second}", "timestamp": iso(second)}
    line.update(extra)
    return line


def claude_tool_use(second: int, call_id: str, name: str, tool_input: dict, **extra) -> dict:
    message = {"id": f"msg_{second}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
               "content": [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}],
               "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}
    return claude_line("assistant", second, message, requestId=f"req_{second}", **extra)


def claude_tool_result(second: int, call_id: str, content, tool_use_result=None, *, is_error: bool | None = None,
                       **extra) -> dict:
    block = {"tool_use_id": call_id, "type": "tool_result", "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    line = claude_line("user", second, {"role": "user", "content": [block]}, **extra)
    if tool_use_result is not None:
        line["toolUseResult"] = tool_use_result
    return line


def claude_project(root: Path, big_output: str) -> dict:
    """A project directory with one session, one subagent file and one spilled output.

    Returns what the importer must find: call ids and their expected results.
    """
    project = root / "-home-dev-app"
    main = project / f"{CLAUDE_SESSION}.jsonl"
    spilled = project / CLAUDE_SESSION / "tool-results" / "toolu_03big.txt"
    spilled.parent.mkdir(parents=True)
    spilled.write_text(big_output)
    bash_result = {"stdout": "a.txt\nb.txt\n", "stderr": "", "interrupted": False, "isImage": False}
    read_result = {"type": "text", "file": {"filePath": "/home/dev/app/a.txt", "content": "hello\n", "numLines": 1,
                                            "startLine": 1, "totalLines": 1}}
    preview = (f"<persisted-output>Output too large ({len(big_output)}). Full output saved to: {spilled}\n\n"
               f"Preview (first 2KB):\n{big_output[:2000]}\n</persisted-output>")
    big_result = {"stdout": big_output[:30000], "stderr": "", "interrupted": False, "isImage": False}
    image_block = [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="}}]
    write_lines(main, [
        {"type": "summary", "summary": "Listing files", "leafUuid": "u-user-9"},
        claude_line("user", 0, {"role": "user", "content": "list the files"}),
        claude_tool_use(1, "toolu_01ls", "Bash", {"command": "ls", "description": "List files"}),
        claude_tool_result(2, "toolu_01ls", "a.txt\nb.txt", bash_result, is_error=False),
        claude_tool_use(3, "toolu_02read", "Read", {"file_path": "/home/dev/app/a.txt"}),
        claude_tool_result(4, "toolu_02read", [{"type": "text", "text": "     1\thello\n"}], read_result),
        claude_tool_use(5, "toolu_03big", "Bash", {"command": "seq 1 100000"}),
        claude_tool_result(6, "toolu_03big", preview, big_result),
        claude_tool_use(7, "toolu_04fail", "Bash", {"command": "false"}),
        claude_tool_result(8, "toolu_04fail", "Error: Exit code 1", "Error: Exit code 1", is_error=True),
        claude_tool_use(9, "toolu_05img", "Read", {"file_path": "/home/dev/app/pixel.png"}),
        claude_tool_result(10, "toolu_05img", image_block, None),
        {"type": "file-history-snapshot", "messageId": "m1", "snapshot": {"trackedFileBackups": {}}},
        {"type": "brand-new-record-kind", "value": 1},
        "{this line is not json",
        claude_tool_result(11, "toolu_99orphan", "lost", None),
        claude_tool_use(12, "toolu_06open", "Bash", {"command": "sleep 100"}),
    ])
    sub = project / CLAUDE_SESSION / "subagents" / "agent-a1b2c3.jsonl"
    write_lines(sub, [
        claude_tool_use(20, "toolu_07sub", "Grep", {"pattern": "hello"}, isSidechain=True, agentId="a1b2c3"),
        claude_tool_result(21, "toolu_07sub", "a.txt", {"mode": "files_with_matches", "filenames": ["a.txt"],
                                                         "numFiles": 1}, isSidechain=True, agentId="a1b2c3"),
    ])
    return {
        "main": main, "sub": sub, "spilled": spilled,
        "results": {"toolu_01ls": bash_result, "toolu_02read": read_result, "toolu_03big": big_result,
                    "toolu_04fail": {"error": "Error: Exit code 1"},
                    "toolu_05img": {"content": image_block, "is_error": False},
                    "toolu_07sub": {"mode": "files_with_matches", "filenames": ["a.txt"], "numFiles": 1}},
        "errors": {"toolu_04fail"}, "open": "toolu_06open",
    }


# --- Codex ------------------------------------------------------------------------------


def codex_line(kind: str, second: int, payload: dict, ordinal: int) -> dict:
    return {"timestamp": iso(second), "ordinal": ordinal, "type": kind, "payload": payload}


def codex_rollout(codex_home: Path, long_output: str) -> dict:
    day = codex_home / "sessions" / "2026" / "03" / "01"
    path = day / f"rollout-2026-03-01T10-00-00-{CODEX_THREAD}.jsonl"
    cut = long_output[:4000] + "\n…13893 chars truncated…\n" + long_output[-4000:]
    exec_output = ("Chunk ID: 7f3a\nWall time: 0.0123 seconds\nProcess exited with code 0\n"
                   "Original token count: 5974\nOutput:\n" + cut)
    failing = "Chunk ID: 8b1c\nWall time: 0.0040 seconds\nProcess exited with code 2\nOutput:\nls: cannot access 'x'\n"
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"
    records = [
        codex_line("session_meta", 0, {"id": CODEX_THREAD, "timestamp": iso(0), "cwd": "/home/dev/app",
                                       "originator": "codex_exec", "cli_version": "0.171.0", "source": "exec",
                                       "model_provider": "scripted", "base_instructions": {"text": "be brief"}}, 0),
        codex_line("turn_context", 1, {"cwd": "/home/dev/app", "approval_policy": "never",
                                       "sandbox_policy": {"mode": "read-only"}, "model": "scripted-model"}, 1),
        codex_line("world_state", 1, {"cwd": "/home/dev/app"}, 2),
        codex_line("event_msg", 1, {"type": "task_started", "turn_id": "t1"}, 3),
        codex_line("response_item", 2, {"type": "message", "role": "user",
                                        "content": [{"type": "input_text", "text": "count"}]}, 4),
        codex_line("response_item", 3, {"type": "function_call", "name": "exec_command",
                                        "arguments": json.dumps({"cmd": "seq 1 5000"}), "call_id": "call_0"}, 5),
        codex_line("event_msg", 4, {"type": "item_completed", "item": {
            "type": "CommandExecution", "id": "call_0", "command": ["/bin/bash", "-lc", "seq 1 5000"],
            "cwd": "file:///home/dev/app", "status": "completed", "exit_code": 0, "duration": {"secs": 0},
            "aggregated_output": long_output}}, 6),
        codex_line("response_item", 4, {"type": "function_call_output", "call_id": "call_0", "output": exec_output},
                   7),
        codex_line("response_item", 5, {"type": "function_call", "name": "exec_command",
                                        "arguments": json.dumps({"cmd": "ls x"}), "call_id": "call_1"}, 8),
        codex_line("response_item", 6, {"type": "function_call_output", "call_id": "call_1", "output": failing}, 9),
        codex_line("response_item", 7, {"type": "custom_tool_call", "name": "apply_patch", "input": patch,
                                        "call_id": "call_2", "status": "completed"}, 10),
        codex_line("response_item", 8, {"type": "custom_tool_call_output", "call_id": "call_2",
                                        "output": "Success. Updated the following files:\nA hello.txt\n"}, 11),
        codex_line("event_msg", 9, {"type": "token_count", "info": None}, 12),
        codex_line("token_usage_record", 9, {"input_tokens": 1}, 13),
        codex_line("response_item", 10, {"type": "function_call_output", "call_id": "call_orphan",
                                         "output": "nobody asked"}, 14),
        codex_line("future_line_kind", 10, {"x": 1}, 15),
        codex_line("response_item", 11, {"type": "function_call", "name": "exec_command",
                                         "arguments": json.dumps({"cmd": "sleep 100"}), "call_id": "call_3"}, 16),
        codex_line("event_msg", 12, {"type": "task_complete", "turn_id": "t1"}, 17),
    ]
    write_lines(path, records)
    return {
        "path": path,
        # A command's result is what live capture stores settling it from the transcript: the exit code
        # and status proven, with the output the model got; another tool's is its output as held.
        "results": {"call_0": {"exit_code": 0, "status": "completed", "output": exec_output},
                    "call_1": {"exit_code": 2, "status": None, "output": failing},
                    "call_2": "Success. Updated the following files:\nA hello.txt\n"},
        "outputs": {"call_0": long_output},
        "inputs": {"call_0": {"cmd": "seq 1 5000"}, "call_1": {"cmd": "ls x"}, "call_2": patch},
        "errors": {"call_1"}, "open": "call_3",
    }


def set_old_mtime(*paths, seconds: int = 3600) -> None:
    """Age files as if their sessions ended an hour ago (settled)."""
    import time

    moment = time.time() - seconds
    for path in paths:
        os.utime(path, (moment, moment))


# --- Pi (version 3) ------------------------------------------------------------------------

PI_SESSION = "7d1e0c52-3a4b-4c8d-9e0f-a1b2c3d4e5f6"


def pi_header(session_id: str = PI_SESSION, cwd: str = "/home/dev/app") -> dict:
    return {"type": "session", "version": 3, "id": session_id, "timestamp": iso(0), "cwd": cwd}


def pi_call(entry_id: str, parent: str | None, call_id: str, second: int, command: str) -> dict:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": iso(second),
            "message": {"role": "assistant", "content": [{"type": "toolCall", "id": call_id, "name": "bash",
                                                          "arguments": {"command": command}}],
                        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                        "stopReason": "toolUse", "timestamp": 1772359200000 + second * 1000}}


def pi_result(entry_id: str, parent: str, call_id: str, second: int, text: str, *, is_error: bool = False) -> dict:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": iso(second),
            "message": {"role": "toolResult", "toolCallId": call_id, "toolName": "bash",
                        "content": [{"type": "text", "text": text}], "isError": is_error,
                        "timestamp": 1772359200000 + second * 1000 + 500}}


def pi_pair(n: int, *, payload: str = "", call_prefix: str = "toolu_") -> list[dict]:
    """Call n and its result, chained after entry n-1's result (a linear session)."""
    call_id = f"{call_prefix}{n:08d}"
    parent = f"r{n - 1:07x}" if n else None
    return [pi_call(f"c{n:07x}", parent, call_id, n % 3600, f"echo {n}"),
            pi_result(f"r{n:07x}", f"c{n:07x}", call_id, n % 3600, f"{n}\n{payload}")]


def pi_session_file(path: Path, calls: int, *, payload: str = "", session_id: str = PI_SESSION) -> None:
    """A settled linear Pi session of `calls` bash calls, each with its result (streamed to disk)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(pi_header(session_id)) + "\n")
        for n in range(calls):
            for record in pi_pair(n, payload=payload):
                handle.write(json.dumps(record, separators=(",", ":")) + "\n")
