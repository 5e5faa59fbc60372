"""Claude Code transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl` and subagent files).

Every user/assistant line carries `sessionId`, `cwd`, `timestamp` and a
`message`. An assistant message's `tool_use` blocks are calls (one API reply
may be split over several lines, one block each); a user message's
`tool_result` blocks answer them by `tool_use_id`, and the line's
`toolUseResult` holds the tool's structured output. Subagent files
(`<sessionId>/subagents/agent-*.jsonl`, older `agent-*.jsonl`) carry the
parent's `sessionId`, so their calls belong to the parent session, as live.

Identities are the live hooks': agent `claude-code`, the `sessionId` (the hook
payload's `session_id`) and the `tool_use.id` (its `tool_use_id`).

The result is what the live hook stores: `toolUseResult` (PostToolUse's
`tool_response`) when present; for a failed call `{"error": text}` (the
PostToolUseFailure shape, with the error text the transcript kept); else
`{"content", "is_error"}` of the result block. An output Claude Code spilled to
`<sessionId>/tool-results/<tool_use_id>.txt` is stored whole as the call's
`source_output/before` when that file still exists.
"""

from __future__ import annotations

import os

from yarp.transcripts.parsing import TranscriptParser, iso_ms
from yarp.wire import operations as ops

AGENT = "claude-code"
_KNOWN = frozenset({
    "user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation", "progress", "attachment",
    "last-prompt", "custom-title", "ai-title", "agent-name", "agent-color", "mode", "permission-mode",
})


def _text_of(content) -> str:
    """The text of a result block's content (a string or text blocks), without inserted separators."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


class ClaudeCodeParser(TranscriptParser):
    """Reads Claude Code's project transcripts: tool calls from assistant messages, results from user ones."""

    agent = AGENT
    version = 1

    def feed(self, obj: dict, line: int) -> None:
        """Take one transcript record: calls from an assistant message, results from a user message.

        Other known kinds are skipped; unknown ones are counted.
        """
        kind = obj.get("type")
        if kind not in ("user", "assistant"):
            if kind not in _KNOWN:
                self.unknown(str(kind))
            return
        message = obj.get("message")
        session_id = obj.get("sessionId")
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            return
        if not isinstance(session_id, str) or not session_id:
            return
        if kind == "assistant":
            self._calls(obj, message, session_id, line)
        else:
            self._results(obj, message, session_id, line)

    def _calls(self, obj: dict, message: dict, session_id: str, line: int) -> None:
        started = iso_ms(obj.get("timestamp")) or 0
        cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) and os.path.isabs(obj["cwd"]) else None
        model = message.get("model") if isinstance(message.get("model"), str) else None
        seen = self.context.setdefault("seen", {})
        for block in message["content"]:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
                self.tally.issue(self.path, line, "tool call without an id or name")
                continue
            if call_id in seen or call_id in self.pending:
                continue  # a resumed or copied history repeats the call: one call, once
            seen[call_id] = 1
            meta = ops.CallMeta(call_id, name, started, False, None, model, cwd)
            value = block.get("input")
            self.add_call(call_id, ops.ImportedCall(self.session(session_id, None), meta, value if value is not None
                                                else {}))

    def _results(self, obj: dict, message: dict, session_id: str, line: int) -> None:
        finished = iso_ms(obj.get("timestamp"))
        structured = obj.get("toolUseResult", None)
        for block in message["content"]:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call_id = block.get("tool_use_id")
            waiting = self.take_pending(call_id) if isinstance(call_id, str) else None
            if waiting is None:
                if not (isinstance(call_id, str) and call_id in self.context.get("seen", {})):
                    self.unmatched_result(line)
                continue
            is_error = block.get("is_error") is True
            content = block.get("content")
            if is_error:
                result = {"error": structured if isinstance(structured, str) else _text_of(content)}
            elif "toolUseResult" in obj:
                result = structured
            else:
                result = {"content": content, "is_error": False}
            self.complete(waiting["call"], result, is_error, finished, self._spilled(session_id, call_id, content))

    def _spilled(self, session_id: str, call_id: str, content) -> str | None:
        """The full-output file Claude Code saved for a large result, if it still exists."""
        if "tool-results" not in _text_of(content):
            return None
        here = os.path.dirname(self.path)
        for directory in (os.path.join(here, session_id, "tool-results"),
                          os.path.join(os.path.dirname(here), "tool-results")):
            path = os.path.join(directory, f"{call_id}.txt")
            if os.path.isfile(path) and not os.path.islink(path):
                return path
        return None


# --- where `yarp import` finds them -----------------------------------------------------------

Parser = ClaudeCodeParser


def default_roots(environ=os.environ) -> list[str]:
    """Claude Code's projects folder: `$CLAUDE_CONFIG_DIR/projects` (else `~/.claude/projects`)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    return [os.path.join(environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), "projects")]


def recognizes(first_line: bytes) -> int:
    """1 (plausible: other agents' lines have these too, and a surer reader wins) when `first_line` names
    a `sessionId`, a `leafUuid` (a summary line) or a `type`, else 0."""
    return 1 if b'"sessionId"' in first_line or b'"leafUuid"' in first_line or b'"type"' in first_line else 0
