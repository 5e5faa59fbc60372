"""Codex rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`).

Wrapped era: every line is `{timestamp, type, payload}`. The first
`session_meta` names the thread (`payload.id`, the live hook's `session_id`),
`cwd` and `model_provider`; later `session_meta` lines belong to copied parent
history and are ignored. `turn_context` sets the model and cwd of the calls
that follow. `response_item` payloads hold the calls (`function_call`,
`custom_tool_call`, `local_shell_call`, `tool_search_call`) and their outputs
(`function_call_output`, `custom_tool_call_output`, `tool_search_output`),
paired by `call_id`; `event_msg` payloads hold commands' executions
(`item_completed` of a `CommandExecution`, or the older `exec_command_end`),
before or after the output. Bare era (before the envelope): the same items
without `payload`, and a first line `{id, timestamp, instructions}`.

Identities are the live hook's: agent `codex`, the thread id, the `call_id`
(the hook's `tool_use_id`). This module keeps the sessions, turns and the
pairing; every outcome is the shared reader's (`yarp.agents.codex.transcripts.evidence`),
the one live capture takes too:

- a shell call (`exec_command`, `shell`, `local_shell`, …) or any call with
  an execution is archived as the transcript proves the command: `executed`,
  `is_error`, the complete output as `source_output/before` or a cut one as
  `result_text/before` (`incomplete`), and the result
  `{"exit_code", "status", "output"}`. A call still running when the model
  got its answer waits for its execution (across runs, in the checkpoint);
  one whose execution never comes is recorded without a result, as live
  capture leaves it `started`;
- any other tool (patches, MCP tools, searches): its output as the
  transcript holds it (a string, or the content-items list), an error only
  when the output states a non-zero exit code.

Two differences from live rows come from the sources alone. A live
`PostToolUse` finishes a shell call with Codex's `tool_response` (its ~10 KB
cut of the output) as the result's `output`; the transcript has only the
model-facing `function_call_output`, which is what live capture stores too
for a call it settles from the transcript. A live non-shell call's result is
its post event's `tool_response`; here it is the transcript's output item.
"""

from __future__ import annotations

import os

import orjson

from yarp.agents.codex.transcripts.evidence import (
    CallEvidence,
    event_evidence,
    is_command,
    item_evidence,
    result_record,
    tool_is_error,
)
from yarp.transcripts.parsing import TranscriptParser, iso_ms
from yarp.wire import operations as ops

AGENT = "codex"
_CALLS = {"function_call": "call_id", "custom_tool_call": "call_id", "local_shell_call": "call_id",
          "tool_search_call": "call_id"}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_OTHER_ITEMS = frozenset({"message", "reasoning", "web_search_call", "compaction", "ghost_snapshot", "other"})
_OTHER_LINES = frozenset({"compacted", "world_state", "token_usage_record", "inter_agent_communication"})
#: Completed calls held for a late execution record (exit code, complete output) before being sent.
_HOLD_CALLS = 64


class CodexParser(TranscriptParser):
    """Reads Codex session logs; a call waits for its output, and may wait for a late execution record of it."""

    agent = AGENT
    #: 2: outcomes from the shared reader (`yarp.agents.codex.transcripts.evidence`).
    version = 2

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: call_id -> {"call", "output", "finished", "fields"}: a call with its output, held for a late
        #: execution record; or {"call": None, "fields"}: an execution that came before the output.
        self.held: dict[str, dict] = {}

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
            held = self.held.pop(call_id, None)  # an execution that came first
            fields = {**waiting.get("fields", {}), **(held["fields"] if held is not None else {})}
            evidence = item_evidence(item)
            if evidence is not None:
                fields.update(evidence[1])
            self.held[call_id] = {"call": waiting["call"], "output": output, "finished": stamp, "fields": fields}
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
        evidence = event_evidence(payload)
        if evidence is not None:
            self._execution(*evidence)
        elif payload.get("type") in ("task_complete", "turn_aborted"):
            for call_id in list(self.held):
                self._release(call_id)

    def _execution(self, call_id: str, fields: dict) -> None:
        """A command's execution record: joined to its call, whether its output came before or comes later."""
        held = self.held.get(call_id)
        if held is not None:
            held["fields"].update(fields)
            return
        waiting = self.pending.get(call_id) or ()
        running = next((entry for entry in waiting if "fields" in entry), None)
        if running is not None:  # its output came while it still ran (`_release`)
            self.take_pending(call_id, lambda entry: entry is running)
            self.held[call_id] = {"call": running["call"], "output": running["output"],
                                  "finished": running["finished"], "fields": {**running["fields"], **fields}}
        elif waiting:
            # The execution came before the output: keep it for when the output arrives.
            self.held[call_id] = {"call": None, "fields": dict(fields)}

    def _release(self, call_id: str) -> None:
        """Send a held call with the outcome the shared reader gives it, or let it wait for its execution."""
        entry = self.held.pop(call_id)
        call = entry["call"]
        if call is None:
            return  # an execution whose output never came; the call stays pending
        evidence = CallEvidence(call_id, **entry["fields"])
        output = entry["output"]
        if evidence.model_output is None or not is_command(call.call.tool_name, evidence):
            self.complete(call, output if output is not None else "", tool_is_error(output), entry["finished"])
            return
        if not evidence.settled:  # still running when the model got its answer: its execution comes later
            self.pending.setdefault(call_id, []).append({"raw": call_id, "call": call, "output": output,
                                                         "finished": entry["finished"], "fields": entry["fields"]})
            return
        stored = evidence.stored_output()
        subject, completeness, text = stored if stored is not None else (None, None, None)
        self.complete(call, result_record(evidence, evidence.model_output), evidence.is_error, entry["finished"],
                      executed=evidence.executed, source_output=text if subject == "source_output" else None,
                      result_text=text if subject == "result_text" else None,
                      result_text_completeness=completeness or "complete")

    def end_of_read(self, settled: bool) -> None:
        """Send the calls held for a late execution (they have their output), then settle as every parser does."""
        # Held calls have their output: send them now rather than keep them across runs (a call
        # still running goes back to the pending calls, kept in the checkpoint).
        for call_id in list(self.held):
            self._release(call_id)
        super().end_of_read(settled)


# --- where `yarp import` finds them -----------------------------------------------------------

Parser = CodexParser


def default_roots(environ=os.environ) -> list[str]:
    """Codex's `sessions` and `archived_sessions` under `$CODEX_HOME` (else `~/.codex`)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    base = environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    return [os.path.join(base, "sessions"), os.path.join(base, "archived_sessions")]


def recognizes(first_line: bytes) -> int:
    """2 when `first_line` is a rollout's first line (`session_meta`, or the bare era's `instructions`), else 0."""
    return 2 if b'"session_meta"' in first_line or (b'"instructions"' in first_line
                                                    and b'"type"' not in first_line) else 0
