"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`), as 0.61 writes them.

One JSON record per line (written down in docs/import.md, "Gemini CLI"):

- the first line is the session's metadata: `sessionId` (the hooks'
  `session_id`), `projectHash`, `startTime`, `kind` (`main`, or `subagent`
  for a subagent's own file);
- `{"$set": {...}}` updates the session (`messages` may hold whole messages),
  `{"$rewindTo": id}` rewinds it: the calls made before stay made, so both are
  read for their messages only;
- a message `{id, timestamp, type, content, ...}` is appended again, under the
  same id, whenever it changes. A `gemini` message lists its `toolCalls` once
  they completed: `{id, name, args, result, status, timestamp, resultDisplay,
  agentId?}`, `args` as the tool ran them (after a hook's rewrite) and
  `result` the `functionResponse` parts the model got (cut by Gemini at 40,000
  characters, the whole text then saved in `tool-outputs/` and named on the
  cut's first line).

Identities are the live hook's (`yarp.agents.gemini.hooks`): agent `gemini`, the
`sessionId`, and a call id derived from the tool, the digest of the model's
arguments and the number of earlier calls of the session with both; a shell
command our hook rewrote names its id in the command itself. A subagent's
calls reach the hooks under its parent's session, so they are read from the
subagent's file (`chats/<session>/<agent>.jsonl`) into the parent's session
when the parent's `invoke_agent` call that ran it appears, which keeps the
counting in the order the hooks saw.

The result is `{"status", "result"}` as the session holds them; a cut
output's whole text (the hook's `llmContent`) is `result_text/before`; the
error is the status `error`, a tool's `error` response, or a shell `Exit
Code:` line that is not 0.
"""

from __future__ import annotations

import os
import re
import stat

import orjson

from yarp.agents.gemini import hooks as gemini
from yarp.transcripts.parsing import TranscriptParser, iso_ms
from yarp.wire import operations as ops

AGENT = gemini.AGENT
#: The first line of an output Gemini cut, naming the file with all of it.
_CUT = re.compile(r"\AOutput too large\. [^\n]*For full output see: (/[^\n]+)\n")
#: `<tool>_<Date.now()>_<n>`: the id Gemini gives a call it schedules (when the model gave none).
_SCHEDULED = re.compile(r"_(\d{13})_\d+\Z")
#: Largest saved output, subagent file and project marker read (Gemini keeps at most 16 MB of output).
MAX_SAVED_OUTPUT_BYTES = 64 * 1024 * 1024
MAX_SUBAGENT_FILE_BYTES = 256 * 1024 * 1024
_MAX_MARKER_BYTES = 4096
_OTHER_TYPES = frozenset({"user", "info", "error", "warning"})


class GeminiParser(TranscriptParser):
    """Reads Gemini CLI session files: every completed tool call of the session's messages."""

    agent = AGENT
    version = 1

    def feed(self, obj: dict, line: int) -> None:
        """Take one record: the metadata line, a `$set`/`$rewindTo` update, or a message."""
        ctx = self.context
        if "sessionId" in obj and "type" not in obj:
            if "session" not in ctx and isinstance(obj["sessionId"], str) and obj["sessionId"]:
                ctx["session"] = self._session_of(obj)
                ctx["started"] = iso_ms(obj.get("startTime"))
                ctx["cwd"] = _project_root(self.path)
            return
        if "$set" in obj:
            messages = obj["$set"].get("messages") if isinstance(obj["$set"], dict) else None
            for message in messages if isinstance(messages, list) else ():
                if isinstance(message, dict):
                    self._message(message, line)
            return
        if "$rewindTo" in obj:
            return
        self._message(obj, line)

    def _session_of(self, meta: dict) -> str:
        """The session the hooks name: a subagent's file belongs to its parent's (`chats/<parent>/…`)."""
        if meta.get("kind") == "subagent":
            parent = os.path.basename(os.path.dirname(self.path))
            if parent and os.path.basename(os.path.dirname(os.path.dirname(self.path))) == "chats":
                return parent
        return meta["sessionId"]

    def _message(self, message: dict, line: int) -> None:
        kind = message.get("type")
        if kind != "gemini":
            if kind not in _OTHER_TYPES:
                self.unknown(f"message:{kind}")
            return
        calls = message.get("toolCalls")
        if not isinstance(calls, list):
            return
        if "session" not in self.context:
            self.tally.issue(self.path, line, "tool call before the session metadata")
            return
        for record in calls:
            if isinstance(record, dict):
                self._call(record, message, line)

    def _call(self, record: dict, message: dict, line: int, *, origin: str = "") -> None:
        ctx = self.context
        raw, name, args = record.get("id"), record.get("name"), record.get("args")
        if not isinstance(raw, str) or not raw or not isinstance(name, str) or not name:
            self.tally.issue(self.path, line, "tool call without an id or name")
            return
        seen = ctx.setdefault("seen", {})
        key = origin + raw
        if key in seen:
            return  # the message again, appended when it changed
        seen[key] = 1
        if name == "invoke_agent" and isinstance(record.get("agentId"), str) and not origin:
            self._subagent(record["agentId"], line)
        named = gemini.rewritten_call(args) if name == gemini.SHELL_TOOL else None
        arguments = named[1] if named is not None else (args if args is not None else {})
        prefix = gemini.call_prefix(name, arguments)
        counts = ctx.setdefault("counts", {})
        occurrence = counts.get(prefix, 0)
        counts[prefix] = occurrence + 1
        call_id = named[0] if named is not None else gemini.call_id(prefix, occurrence)
        finished = iso_ms(record.get("timestamp")) or iso_ms(message.get("timestamp"))
        scheduled = _SCHEDULED.search(raw)
        started = int(scheduled.group(1)) if scheduled else finished or ctx.get("started") or 0
        model = message.get("model") if isinstance(message.get("model"), str) else None
        meta = ops.CallMeta(call_id, name, started, False, None, model, ctx.get("cwd"))
        call = ops.ImportedCall(self.session(ctx["session"], ctx.get("started")), meta, arguments)
        self.tally.calls_found += 1
        status = record.get("status")
        parts = record.get("result")
        result = {"status": status, "result": parts}
        text, completeness = self._saved_output(parts)
        self.complete(call, result, _is_error(name, status, parts), finished, result_text=text,
                      result_text_completeness=completeness, executed=status in ("success", "error"))

    def _saved_output(self, parts) -> tuple[str | None, str]:
        """(the whole output Gemini saved for a result it cut, its completeness), else (None, "complete")."""
        output = _output(parts)
        match = _CUT.match(output) if output else None
        if match is None:
            return None, "complete"
        path = match.group(1)
        # Only the session's own project folder: `<project>/tool-outputs/…`, never a link.
        project = os.path.dirname(os.path.dirname(self.path))
        if os.path.basename(os.path.dirname(self.path)) != "chats":
            project = os.path.dirname(project)
        if os.path.commonpath([project, os.path.normpath(path)]) != project or "/tool-outputs/" not in path:
            return None, "complete"
        data = _read_regular(path, MAX_SAVED_OUTPUT_BYTES)
        if data is None:
            return None, "complete"
        text = data.decode("utf-8", "replace")
        return text, "incomplete" if "[GEMINI_CLI_WARNING: Output truncated" in text else "complete"

    def _subagent(self, agent_id: str, line: int) -> None:
        """The calls of the subagent `invoke_agent` ran, from its own file, in this session."""
        if os.sep in agent_id or agent_id in (".", ".."):
            return
        path = os.path.join(os.path.dirname(self.path), self.context["session"], agent_id + ".jsonl")
        data = _read_regular(path, MAX_SUBAGENT_FILE_BYTES)
        if data is None:
            return
        for text in data.splitlines():
            try:
                obj = orjson.loads(text)
            except orjson.JSONDecodeError:
                self.tally.corrupt_lines += 1
                continue
            if isinstance(obj, dict) and obj.get("type") == "gemini" and isinstance(obj.get("toolCalls"), list):
                for record in obj["toolCalls"]:
                    if isinstance(record, dict):
                        self._call(record, obj, line, origin=agent_id + "/")

    def settle(self) -> None:
        """Nothing waits: Gemini records a call only once it completed."""


def _output(parts) -> str | None:
    """The text the model got from a result's first `functionResponse` (`output`, else `error`)."""
    if not isinstance(parts, list) or not parts or not isinstance(parts[0], dict):
        return None
    response = (parts[0].get("functionResponse") or {}).get("response")
    if not isinstance(response, dict):
        return None
    value = response.get("output", response.get("error"))
    return value if isinstance(value, str) else None


def _is_error(name: str, status, parts) -> bool:
    if status != "success":
        return True
    first = parts[0].get("functionResponse") if isinstance(parts, list) and parts and isinstance(parts[0], dict) \
        else None
    if isinstance(first, dict) and isinstance(first.get("response"), dict) and "error" in first["response"]:
        return True
    return name == gemini.SHELL_TOOL and gemini.failed_exit_code(_output(parts) or "")


def _read_regular(path: str, limit: int) -> bytes | None:
    """The bytes of a regular file (no link followed) of at most `limit` bytes, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit + 1)[:limit]
    except OSError:
        return None
    finally:
        os.close(fd)


def _project_root(path: str) -> str | None:
    """The project folder Gemini recorded beside the session's chats (`<project>/.project_root`)."""
    chats = os.path.dirname(path)
    if os.path.basename(chats) != "chats":
        chats = os.path.dirname(chats)
    data = _read_regular(os.path.join(os.path.dirname(chats), ".project_root"), _MAX_MARKER_BYTES)
    root = data.decode("utf-8", "replace").strip() if data else ""
    return root if os.path.isabs(root) else None


# --- where `yarp import` finds them -----------------------------------------------------------

Parser = GeminiParser


def default_roots(environ=os.environ) -> list[str]:
    """Gemini CLI's temp folder, `~/.gemini/tmp` (under `$GEMINI_CLI_HOME` when set)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    return [os.path.join(environ.get("GEMINI_CLI_HOME") or home, ".gemini", "tmp")]


def is_session_file(path: str) -> bool:
    """Only `<project>/chats/session-*.jsonl` are sessions: Gemini CLI keeps other JSONL files in its temp
    folders, and each subagent's beside its parent's session (read with it)."""
    return os.path.basename(os.path.dirname(path)) == "chats" and os.path.basename(path).startswith("session-")


def recognizes(first_line: bytes) -> int:
    """2 when `first_line` is a session's metadata (`projectHash` and `sessionId`), else 0."""
    return 2 if b'"projectHash"' in first_line and b'"sessionId"' in first_line else 0
