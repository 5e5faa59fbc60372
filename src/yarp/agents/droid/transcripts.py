"""Droid session files (`~/.factory/sessions/<cwd slug>/<session>.jsonl`), as 0.225.2 writes them.

One JSON record per line (docs/import.md, "Droid"):

- the first is `{"type": "session_start", "id", "cwd", "owner", "hostId", ...}`,
  `id` the hooks' `session_id`;
- `{"type": "message", "id", "parentId", "timestamp", "message": {...}}` holds
  one message: an `assistant` message's `content` lists the model's calls as
  `{"type": "tool_use", "id", "name", "input"}` (the model's own arguments,
  never a hook's rewrite) and names the `modelId`; a `user` message's
  `content` answers them with `{"type": "tool_result", "tool_use_id",
  "is_error", "content"}` (the text the model got). A hook's run is a `user`
  message with empty `content` and `hookEventName`, and holds no call;
- other records (`agent_turn_outcome`, ...) hold no calls.

Identities are the live hooks' (`yarp.agents.droid.hooks`): agent `droid`, the
session's `id`, and a call id derived from the tool, the digest of the model's
arguments and the number of earlier calls of the session with both, counted
in the file's order, which is the order Droid runs the hooks. The result is
the `tool_result`'s `content`, an error when `is_error`; a shell call whose
text does not end in Droid's exit line never ran its command.

`DroidParser` is also how the broker settles the calls Droid sent no
`PostToolUse` for (`outcomes`), so a call gets the same outcome either way.
"""

from __future__ import annotations

import os

from yarp.agents.droid import hooks as droid
from yarp.transcripts.parsing import Tally, TranscriptParser, iso_ms
from yarp.wire import operations as ops

AGENT = droid.NAME
_OTHER_TYPES = frozenset({"agent_turn_outcome", "session_end", "summary", "compaction", "todo_state"})
#: Largest session file the broker reads to settle calls.
MAX_SESSION_FILE_BYTES = 256 * 1024 * 1024


class DroidParser(TranscriptParser):
    """Reads Droid session files: calls from assistant messages, results from the tool_result blocks."""

    agent = AGENT
    version = 1

    def feed(self, obj: dict, line: int) -> None:
        """Take one record: the session's start, or a message."""
        kind = obj.get("type")
        if kind == "session_start":
            if "session" not in self.context and isinstance(obj.get("id"), str) and obj["id"]:
                self.context["session"] = obj["id"]
                cwd = obj.get("cwd")
                self.context["cwd"] = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None
            return
        if kind != "message":
            if kind not in _OTHER_TYPES:
                self.unknown(str(kind))
            return
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        if "session" not in self.context:
            self.tally.issue(self.path, line, "message before the session's start")
            return
        role = message.get("role")
        blocks = [block for block in content if isinstance(block, dict)]
        if role == "assistant":
            self._calls(blocks, message, obj, line)
        elif role == "user":
            self._results(blocks, obj, line)

    def _calls(self, blocks: list, message: dict, obj: dict, line: int) -> None:
        ctx = self.context
        started = iso_ms(obj.get("timestamp")) or 0
        model = message.get("modelId") if isinstance(message.get("modelId"), str) else None
        seen = ctx.setdefault("seen", {})
        counts = ctx.setdefault("counts", {})
        for block in blocks:
            if block.get("type") != "tool_use":
                continue
            raw, name = block.get("id"), block.get("name")
            if not isinstance(raw, str) or not raw or not isinstance(name, str) or not name:
                self.tally.issue(self.path, line, "tool call without an id or name")
                continue
            if raw in seen:
                continue  # the same call again: one call, once
            seen[raw] = 1
            arguments = block.get("input") if block.get("input") is not None else {}
            prefix = droid.call_prefix(name, arguments)
            occurrence = counts.get(prefix, 0)
            counts[prefix] = occurrence + 1
            meta = ops.CallMeta(droid.call_id(prefix, occurrence), name, started, False, None, model, ctx.get("cwd"))
            self.add_call(raw, ops.ImportedCall(self.session(ctx["session"], None), meta, arguments))

    def _results(self, blocks: list, obj: dict, line: int) -> None:
        finished = iso_ms(obj.get("timestamp"))
        for block in blocks:
            if block.get("type") != "tool_result":
                continue
            raw = block.get("tool_use_id")
            waiting = self.take_pending(raw) if isinstance(raw, str) else None
            if waiting is None:
                if not (isinstance(raw, str) and raw in self.context.get("seen", {})):
                    self.unmatched_result(line)
                continue
            call = waiting["call"]
            result = block.get("content")
            self.complete(call, result, block.get("is_error") is True, finished,
                          executed=droid.ran_command(call.call.tool_name, result))


Parser = DroidParser


def outcomes(path: str, account: str) -> dict:
    """The completed calls of a session file by derived call id (`ImportedCall`s), for the broker to settle
    calls that got no `PostToolUse`; empty when the file cannot be read safely.

    The file is opened without following a link, must be a regular file owned
    by this user and at most `MAX_SESSION_FILE_BYTES`.
    """
    import orjson

    from yarp import private_files

    try:
        fd, st = private_files.open_for_reading(path, private=False, owned=True)
    except (OSError, private_files.PrivatePathProblem):
        return {}
    try:
        if st.st_size > MAX_SESSION_FILE_BYTES:
            return {}
        data = private_files.read_bounded(fd, MAX_SESSION_FILE_BYTES)
    except OSError:
        return {}
    finally:
        os.close(fd)
    parser = DroidParser(path, account, Tally(), None, None)
    for number, text in enumerate(data.split(b"\n"), 1):
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue  # a line still being written, or not JSON
        if isinstance(obj, dict):
            parser.feed(obj, number)
    return {call.call.source_call_id: call for call in parser.take_ready()}


# --- where `yarp import` finds them -----------------------------------------------------------


def default_roots(environ=os.environ) -> list[str]:
    """Droid's folder of sessions, `~/.factory/sessions` (under `$FACTORY_HOME_OVERRIDE` when set)."""
    return [os.path.join(droid.factory_home(environ), "sessions")]


def is_session_file(path: str) -> bool:
    """Only `<cwd slug>/<session>.jsonl` right under the sessions folder are sessions."""
    return os.path.basename(os.path.dirname(os.path.dirname(path))) == "sessions"


def recognizes(first_line: bytes) -> int:
    """2 when `first_line` is a Droid session's start (`session_start` with `hostId`), else 0."""
    return 2 if b'"type":"session_start"' in first_line and b'"hostId"' in first_line else 0
