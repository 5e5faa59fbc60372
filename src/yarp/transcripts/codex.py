"""Codex rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`).

Wrapped era: every line is `{timestamp, type, payload}`. The first
`session_meta` names the thread (`payload.id`, the live hook's `session_id`),
`cwd` and `model_provider`; later `session_meta` lines belong to copied parent
history and are ignored. `turn_context` sets the model and cwd of the calls
that follow. `response_item` payloads hold the calls (`function_call`,
`custom_tool_call`, `local_shell_call`, `tool_search_call`) and their outputs
(`function_call_output`, `custom_tool_call_output`, `tool_search_output`),
paired by `call_id`. Bare era (before the envelope): the same items without
`payload`, and a first line `{id, timestamp, instructions}`.

Identities are the live hook's: agent `codex`, the thread id, the `call_id`
(the hook's `tool_use_id`). The result is the output as the transcript holds
it (a JSON string, or the content-items list), except that a command's
complete `aggregated_output` (`exec_command_end`, or `item_completed` of a
`CommandExecution`) replaces the output the model saw, which Codex cut to
about 10 KB, and is also stored as `result_text/before` (complete) so that
`yarp search` finds its lines. `is_error` comes from the command's exit code — the projection's
`exit_code`, else the output's own header (`Process exited with code N`,
`Exit code: N`, JSON `metadata.exit_code`) — and is False where none exists,
as the live hook records it.
"""

from __future__ import annotations

import os
import re

import orjson

from yarp.wire import operations as ops
from .parsing import TranscriptParser, iso_ms

AGENT = "codex"
_CALLS = {"function_call": "call_id", "custom_tool_call": "call_id", "local_shell_call": "call_id",
          "tool_search_call": "call_id"}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_OTHER_ITEMS = frozenset({"message", "reasoning", "web_search_call", "compaction", "ghost_snapshot", "other"})
_OTHER_LINES = frozenset({"compacted", "world_state", "token_usage_record", "inter_agent_communication"})
_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")
#: Completed calls held for a late projection (exit code, complete output) before being sent.
_HOLD_CALLS = 64


def _exit_code_from_output(output) -> int | None:
    if not isinstance(output, str):
        return None
    head = output.split("\nOutput:", 1)[0][:512]
    match = _EXIT.search(head)
    if match:
        return int(match.group(1))
    if output.startswith("{") and '"exit_code"' in output[:65536]:
        try:
            meta = orjson.loads(output).get("metadata")
        except (orjson.JSONDecodeError, AttributeError):
            return None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    return None


class CodexParser(TranscriptParser):
    """Reads Codex session logs; a call waits for its output, and may wait for a late projection of it."""

    agent = AGENT
    version = 1

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: call_id -> [call, output, finished_ms, exit_code, complete output]; waiting for a projection.
        self.held: dict[str, list] = {}

    def feed(self, obj: dict, line: int) -> None:
        """Take one session-log record: metadata, turn context, calls and outputs; unknown kinds are counted."""
        ctx = self.context
        kind = obj.get("type")
        payload = obj.get("payload")
        stamp = iso_ms(obj.get("timestamp"))
        if not isinstance(payload, dict):
            if line == 1 and isinstance(obj.get("id"), str) and "type" not in obj:
                self._meta({"id": obj["id"], "timestamp": obj.get("timestamp")}, stamp)
                return
            if kind in _CALLS or kind in _OUTPUTS:
                self._item(obj, stamp, line)
            elif kind not in _OTHER_ITEMS and obj.get("record_type") != "state":
                self.unknown(str(kind))
            return
        if kind == "session_meta":
            self._meta(payload, stamp)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                ctx["model"] = payload["model"]
            if isinstance(payload.get("cwd"), str):
                ctx["cwd"] = payload["cwd"]
        elif kind == "response_item":
            self._item(payload, stamp, line)
        elif kind == "event_msg":
            self._event(payload)
        elif kind not in _OTHER_LINES:
            self.unknown(str(kind))

    def _meta(self, payload: dict, stamp: int | None) -> None:
        ctx = self.context
        if "session" in ctx:
            return  # copied parent history of a fork
        session_id = payload.get("id") or payload.get("session_id")
        if isinstance(session_id, str) and session_id:
            ctx["session"] = session_id
            ctx["started"] = iso_ms(payload.get("timestamp")) or stamp
            if isinstance(payload.get("cwd"), str):
                ctx["cwd"] = payload["cwd"]
            if isinstance(payload.get("model_provider"), str):
                ctx["provider"] = payload["model_provider"]

    def _item(self, item: dict, stamp: int | None, line: int) -> None:
        ctx = self.context
        kind = item.get("type")
        if kind in _CALLS:
            call_id = item.get("call_id") or item.get("id")
            if "session" not in ctx:
                self.tally.issue(self.path, line, "tool call before the session metadata")
                return
            if not isinstance(call_id, str) or not call_id:
                self.tally.issue(self.path, line, "tool call without a call id")
                return
            seen = ctx.setdefault("seen", {})
            if call_id in seen:
                return
            seen[call_id] = 1
            name, value = self._name_and_input(item)
            cwd = ctx.get("cwd")
            action = item.get("action")
            if kind == "local_shell_call" and isinstance(action, dict) and isinstance(action.get("working_directory"),
                                                                                       str):
                cwd = action["working_directory"]
            meta = ops.CallMeta(call_id, name, stamp or ctx.get("started") or 0, False, ctx.get("provider"),
                                ctx.get("model"), cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None)
            self.add_call(call_id, ops.ImportedCall(self.session(ctx["session"], ctx.get("started")), meta, value))
        elif kind in _OUTPUTS:
            call_id = item.get("call_id")
            waiting = self.take_pending(call_id) if isinstance(call_id, str) else None
            if waiting is None:
                if not (isinstance(call_id, str) and call_id in self.held):
                    self.unmatched_result(line)
                return
            output = item.get("output")
            if kind == "tool_search_output":
                output = {k: v for k, v in item.items() if k not in ("type", "call_id", "id")}
            held = self.held.pop(call_id, None)  # a projection that came first
            entry = [waiting["call"], output, stamp, _exit_code_from_output(output), None]
            if held is not None:
                entry[3] = held[3] if held[3] is not None else entry[3]
                entry[4] = held[4]
            self.held[call_id] = entry
            if len(self.held) > _HOLD_CALLS:
                self._release(next(iter(self.held)))

    def _name_and_input(self, item: dict):
        kind = item.get("type")
        name = item.get("name")
        if kind == "local_shell_call":
            return "local_shell", item.get("action") or {}
        if kind == "tool_search_call":
            return (name if isinstance(name, str) and name else "tool_search"), item.get("arguments") or {}
        raw = item.get("arguments") if kind == "function_call" else item.get("input")
        if kind == "function_call" and isinstance(raw, str):
            try:
                raw = orjson.loads(raw)
            except orjson.JSONDecodeError:
                pass  # kept as the exact text the model sent
        return (name if isinstance(name, str) and name else kind), raw if raw is not None else {}

    def _event(self, payload: dict) -> None:
        kind = payload.get("type")
        if kind == "exec_command_end":
            self._projection(payload.get("call_id"), payload.get("exit_code"), payload.get("aggregated_output"))
        elif kind == "item_completed":
            item = payload.get("item")
            if isinstance(item, dict) and item.get("type") == "CommandExecution":
                self._projection(item.get("id"), item.get("exit_code"), item.get("aggregated_output"))
        elif kind in ("task_complete", "turn_aborted"):
            for call_id in list(self.held):
                self._release(call_id)

    def _projection(self, call_id, exit_code, aggregated) -> None:
        if not isinstance(call_id, str):
            return
        code = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
        text = aggregated if isinstance(aggregated, str) else None
        held = self.held.get(call_id)
        if held is not None:
            held[3] = code if code is not None else held[3]
            held[4] = text if text is not None else held[4]
        elif call_id in self.pending:
            # The projection came before the output: keep it for when the output arrives.
            self.held[call_id] = [None, None, None, code, text]

    def _release(self, call_id: str) -> None:
        call, output, finished, code, complete = self.held.pop(call_id)
        if call is None:
            return  # a projection whose output never came; the call stays pending
        result = complete if complete is not None else output
        self.complete(call, result if result is not None else "", code not in (None, 0), finished,
                      result_text=complete)

    def end_of_read(self, settled: bool) -> None:
        """Send the calls held for a late projection (they have their output), then settle as every parser does."""
        # Held calls have their output: send them now rather than keep them across runs.
        for call_id in list(self.held):
            self._release(call_id)
        super().end_of_read(settled)
