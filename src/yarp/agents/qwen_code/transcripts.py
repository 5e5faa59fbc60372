"""Qwen Code chat files (`~/.qwen/projects/<cwd slug>/chats/<session>.jsonl`), as 0.24.4 writes them.

One JSON record per line, each with `uuid`, `parentUuid`, `sessionId`,
`timestamp`, `type`, `cwd` and `version` (docs/import.md, "Qwen Code"):

- `assistant` lines hold the model's turn, `message.parts` as a list of parts:
  a call is `{"functionCall": {"id", "name", "args"}}`, `id` the model's call
  id (the hooks' `tool_call_id`), and the line names the `model`;
- `tool_result` lines answer them: `message.parts` holds
  `{"functionResponse": {"id", "name", "response"}}`, `response` what the
  model got (`{"output": …}`, or `{"error": …}`), and `toolCallResult` Qwen
  Code's record of the call (`callId`, `status` `success` or `error`, and a
  shell call's `resultDisplay` with `exitCode` and the `outputFiles` that
  hold a cut output whole);
- `user` and `system` lines (prompts, telemetry, snapshots) hold no calls.

Identities are the live hooks': agent `qwen-code`, the `sessionId` (the
hooks' `session_id`) and the model's call id. The result is the
`functionResponse`'s `response`; a cut output's saved file, when it still
exists, is the call's `source_output/before`; the call failed when Qwen Code
says `error` or a shell call's exit code is not 0.
"""

from __future__ import annotations

import os

from yarp.agents.qwen_code.hooks import NAME, qwen_home
from yarp.transcripts.parsing import TranscriptParser, iso_ms
from yarp.wire import operations as ops

AGENT = NAME
_OTHER_TYPES = frozenset({"user", "system"})


def default_roots(environ=os.environ) -> list[str]:
    """The folder holding Qwen Code's chat files: `projects/` in its runtime folder, `$QWEN_RUNTIME_DIR`
    when set, else its own folder (`$QWEN_HOME`, else `~/.qwen`)."""
    runtime = environ.get("QWEN_RUNTIME_DIR")
    base = os.path.abspath(os.path.expanduser(runtime)) if runtime else qwen_home(environ)
    return [os.path.join(base, "projects")]


def is_session_file(path: str) -> bool:
    """Whether a file found under a root is a chat file (`…/chats/<session>.jsonl`)."""
    return os.path.basename(os.path.dirname(path)) == "chats"


def recognizes(first_line: bytes) -> int:
    """2 when `first_line` is a Qwen Code chat record, else 0."""
    return 2 if b'"sessionId"' in first_line and b'"parentUuid"' in first_line and b'"provenance"' in first_line \
        else 0


def _parts(obj: dict) -> list:
    message = obj.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [part for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []


class QwenCodeParser(TranscriptParser):
    """Reads Qwen Code chat files: calls from assistant turns, results from tool_result lines."""

    agent = AGENT
    version = 1

    def feed(self, obj: dict, line: int) -> None:
        """Take one chat record: calls from an `assistant` line, results from a `tool_result` line."""
        kind = obj.get("type")
        session_id = obj.get("sessionId")
        if kind not in ("assistant", "tool_result"):
            if kind not in _OTHER_TYPES:
                self.unknown(str(kind))
            return
        if not isinstance(session_id, str) or not session_id:
            return
        if kind == "assistant":
            self._calls(obj, session_id, line)
        else:
            self._results(obj, line)

    def _calls(self, obj: dict, session_id: str, line: int) -> None:
        started = iso_ms(obj.get("timestamp")) or 0
        cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) and os.path.isabs(obj["cwd"]) else None
        model = obj.get("model") if isinstance(obj.get("model"), str) else None
        seen = self.context.setdefault("seen", {})
        for part in _parts(obj):
            call = part.get("functionCall")
            if not isinstance(call, dict):
                continue
            call_id, name = call.get("id"), call.get("name")
            if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
                self.tally.issue(self.path, line, "tool call without an id or name")
                continue
            if call_id in seen or call_id in self.pending:
                continue  # a resumed session repeats its history: one call, once
            seen[call_id] = 1
            meta = ops.CallMeta(call_id, name, started, False, None, model, cwd)
            args = call.get("args")
            self.add_call(call_id, ops.ImportedCall(self.session(session_id, None), meta,
                                                    args if args is not None else {}))

    def _results(self, obj: dict, line: int) -> None:
        finished = iso_ms(obj.get("timestamp"))
        record = obj.get("toolCallResult") if isinstance(obj.get("toolCallResult"), dict) else {}
        for part in _parts(obj):
            response = part.get("functionResponse")
            if not isinstance(response, dict):
                continue
            call_id = response.get("id")
            waiting = self.take_pending(call_id) if isinstance(call_id, str) else None
            if waiting is None:
                if not (isinstance(call_id, str) and call_id in self.context.get("seen", {})):
                    self.unmatched_result(line)
                continue
            same = record.get("callId") == call_id
            result = response.get("response")
            display = record.get("resultDisplay") if same and isinstance(record.get("resultDisplay"), dict) else {}
            exit_code = display.get("exitCode")
            # A result a PostToolUse hook replaced (`continue: false`) is recorded as an `execution_denied`
            # error of a call that ran: the view the model got, not a failure.
            replaced = same and record.get("errorType") == "execution_denied" \
                and record.get("executionStatus") == "success"
            failed = not replaced and ((same and record.get("status") == "error")
                                       or (isinstance(result, dict) and "error" in result)
                                       or (isinstance(exit_code, int) and exit_code != 0))
            self.complete(waiting["call"], result, failed, finished, _saved_file(display.get("outputFiles")))


def _saved_file(files) -> str | None:
    """The file Qwen Code saved a cut output to, when it still exists (never a link)."""
    if not isinstance(files, list):
        return None
    for path in files:
        if isinstance(path, str) and os.path.isabs(path) and os.path.isfile(path) and not os.path.islink(path):
            return path
    return None


Parser = QwenCodeParser
