"""Pi session files (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`), versions 1 to 3.

Line 1 is the session header (`type: session`, `id`, `cwd`, `timestamp`; v1
has no `version` and may name `provider`/`modelId`). Assistant messages hold
`toolCall` blocks; `toolResult` messages answer them by `toolCallId`.
Versions 2 and 3 add entry `id`/`parentId` (a tree of branches) and v3 renames
a message role; neither changes the tool-call shapes, so one parser reads all.

Identities are the live extension's: agent `pi`, the header `id` (what
`getSessionId()` returns live) and the `toolCall.id`. Pi can reuse one
tool-call id on two branches of a session; the archive keys calls by
(session, call id), so the n-th occurrence (n >= 2, in file order) of an id
becomes `<id>#<n>`. File order survives Pi's in-place migration, so the
derived ids are stable; the live extension could never capture a second
occurrence (its begin would conflict), so no live call carries them.

The result is `{content, details, isError}` — the live extension's
`resultSnapshot`, byte for byte after canonical JSON — so a call captured
live and its transcript copy share payload rows.
"""

from __future__ import annotations

import os

from yarp.transcripts.parsing import TranscriptParser, iso_ms
from yarp.wire import operations as ops

AGENT = "pi"
_OTHER_ENTRIES = frozenset({
    "model_change", "thinking_level_change", "compaction", "branch_summary", "custom", "custom_message", "label",
    "session_info",
})
_OTHER_ROLES = frozenset({"user", "bashExecution", "custom", "hookMessage", "branchSummary", "compactionSummary"})


class PiParser(TranscriptParser):
    """Reads Pi session files: tool calls from assistant messages, paired with their tool-result messages."""

    agent = AGENT
    version = 1

    def feed(self, obj: dict, line: int) -> None:
        """Take one session-file record: the session header, or a message with calls or a result."""
        kind = obj.get("type")
        ctx = self.context
        if kind == "session":
            if "session" not in ctx and isinstance(obj.get("id"), str) and obj["id"]:
                ctx["session"] = obj["id"]
                ctx["started"] = iso_ms(obj.get("timestamp"))
                ctx["cwd"] = obj.get("cwd") if isinstance(obj.get("cwd"), str) else None
                ctx["provider"] = obj.get("provider") if isinstance(obj.get("provider"), str) else None
                ctx["model"] = obj.get("modelId") if isinstance(obj.get("modelId"), str) else None
                ctx["formatVersion"] = obj.get("version", 1)
            return
        if kind == "message":
            message = obj.get("message")
            if not isinstance(message, dict):
                self.unknown("message-without-body")
                return
            role = message.get("role")
            if role == "assistant":
                self._assistant(obj, message, line)
            elif role == "toolResult":
                self._result(obj, message, line)
            elif role not in _OTHER_ROLES:
                self.unknown(f"role:{role}")
            return
        if kind == "model_change":
            if isinstance(obj.get("provider"), str):
                ctx["provider"] = obj["provider"]
            if isinstance(obj.get("modelId"), str):
                ctx["model"] = obj["modelId"]
            return
        if kind not in _OTHER_ENTRIES:
            self.unknown(str(kind))

    def _assistant(self, entry: dict, message: dict, line: int) -> None:
        content = message.get("content")
        if not isinstance(content, list):
            return
        ctx = self.context
        if "session" not in ctx:
            self.tally.issue(self.path, line, "tool call before the session header")
            return
        started = iso_ms(message.get("timestamp")) or iso_ms(entry.get("timestamp")) or ctx.get("started") or 0
        provider = message.get("provider") if isinstance(message.get("provider"), str) else ctx.get("provider")
        model = message.get("model") if isinstance(message.get("model"), str) else ctx.get("model")
        counts = ctx.setdefault("counts", {})
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            raw = block.get("id")
            name = block.get("name")
            if not isinstance(raw, str) or not raw or not isinstance(name, str) or not name:
                self.tally.issue(self.path, line, "tool call without an id or name")
                continue
            seen = counts.get(raw, 0) + 1
            counts[raw] = seen
            call_id = raw if seen == 1 else f"{raw}#{seen}"
            meta = ops.CallMeta(call_id, name, started, False, provider, model, ctx.get("cwd"))
            arguments = block.get("arguments")
            call = ops.ImportedCall(self.session(ctx["session"], ctx.get("started")), meta,
                                arguments if arguments is not None else {})
            self.add_call(raw, call, entry=entry.get("id"))

    def _result(self, entry: dict, message: dict, line: int) -> None:
        raw = message.get("toolCallId")
        parent = entry.get("parentId")
        waiting = self.take_pending(raw, (lambda e: e.get("entry") == parent) if parent else None) \
            if isinstance(raw, str) else None
        if waiting is None:
            self.unmatched_result(line)
            return
        details = message.get("details")
        is_error = message.get("isError") is True
        result = {"content": message.get("content") if message.get("content") is not None else [],
                  "details": details, "isError": is_error}
        source_output = None
        if isinstance(details, dict) and isinstance(details.get("fullOutputPath"), str):
            path = details["fullOutputPath"]
            if os.path.isabs(path) and os.path.isfile(path):
                source_output = path
        finished = iso_ms(message.get("timestamp")) or iso_ms(entry.get("timestamp"))
        self.complete(waiting["call"], result, is_error, finished, source_output)


# --- where `yarp import` finds them -----------------------------------------------------------

Parser = PiParser


def default_roots(environ=os.environ) -> list[str]:
    """Pi's sessions folder: `$PI_CODING_AGENT_DIR/sessions` (else `~/.pi/agent/sessions`)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    return [os.path.join(environ.get("PI_CODING_AGENT_DIR") or os.path.join(home, ".pi", "agent"), "sessions")]


def recognizes(first_line: bytes) -> int:
    """2 when `first_line` is a Pi session header (`"type":"session"`), else 0."""
    return 2 if b'"type":"session"' in first_line.replace(b" ", b"") else 0
