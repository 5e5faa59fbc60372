"""Cline's sessions, as the CLI 3.0.65 keeps them: an index in SQLite and one messages file per session.

`~/.cline/data/db/sessions.db` (its table `sessions`) lists every session:
`session_id` (the hooks' `sessionContext.rootSessionId`), `cwd`,
`started_at`, `is_subagent` with `parent_session_id`, and `messages_path`,
the session's `sessions/<id>/<id>.messages.json` (docs/import.md, "Cline").
That file is one JSON document that Cline writes whole again as the session
goes on: `{"version", "sessionId", "messages": [...]}`, each message `{id,
role, content, ts, modelInfo?}`. An `assistant` message's `tool_use` blocks
are the calls (`{id, name, input}`: `id` the model's call id, `input` the
model's own, before a hook's rewrite); a `user` message's `tool_result` blocks
answer them (`{tool_use_id, name, content}`, `content` what the model got,
the tool's output list).

Identities are the live hooks': agent `cline`, the session (a subagent's
calls reach the hooks under its root session, so they are read into it) and
the model's call id. The result is `{"output": content}`, as the hooks
archive it; the call failed when Cline says so (`isError`) or an item of
the output did not succeed (`hooks.is_error`).

The index is never written: one read-only connection reads it. The
checkpoint holds the size and time of each messages file read, so an
unchanged file is not read again; a changed one is read whole, and the
calls taken before (by session and call id) are not sent again.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time

from yarp import json_text, private_files
from yarp.agents.cline.hooks import NAME, cline_dir, is_error
from yarp.errors import YarpError
from yarp.transcripts.parsing import TranscriptParser, drainer, iso_ms
from yarp.transcripts.state import FileCheckpoint
from yarp.transcripts.stores import open_store, store_stat
from yarp.wire import operations as ops

AGENT = NAME
#: The session index's file name; a folder holding it is a store to read.
STORE_NAME = "sessions.db"
#: Largest messages file read.
MAX_MESSAGES_BYTES = 256 * 1024 * 1024
_COLUMNS = "session_id, cwd, started_at, is_subagent, parent_session_id, messages_path"


def default_roots(environ=os.environ) -> list[str]:
    """Cline's session index: `$CLINE_DB_DATA_DIR/sessions.db`, else `db/` in its data folder
    (`$CLINE_DATA_DIR`, else `data/` in `$CLINE_DIR`, else in `~/.cline`)."""
    db = environ.get("CLINE_DB_DATA_DIR", "").strip()
    if not db:
        data = environ.get("CLINE_DATA_DIR", "").strip() or os.path.join(cline_dir(environ), "data")
        db = os.path.join(data, "db")
    return [os.path.join(os.path.abspath(os.path.expanduser(db)), STORE_NAME)]


def recognizes(first_line: bytes) -> int:
    """1 for a SQLite file (the index is known by its name, `STORE_NAME`), else 0."""
    return 1 if first_line.startswith(b"SQLite format 3\x00") else 0


class ClineParser(TranscriptParser):
    """Reads one session's messages: calls from `tool_use` blocks, results from `tool_result` blocks."""

    agent = AGENT
    version = 1

    def feed(self, obj: dict, line: int) -> None:
        """Take one message of the session named in the context (`session`, `cwd`)."""
        role, content = obj.get("role"), obj.get("content")
        if role not in ("assistant", "user") or not isinstance(content, list):
            return
        when = obj.get("ts") if type(obj.get("ts")) is int and obj["ts"] >= 0 else None
        for block in content:
            if not isinstance(block, dict):
                continue
            if role == "assistant" and block.get("type") == "tool_use":
                self._call(block, when, obj.get("modelInfo"), line)
            elif role == "user" and block.get("type") == "tool_result":
                self._result(block, when, line)

    def _call(self, block: dict, when: int | None, model_info, line: int) -> None:
        call_id, name = block.get("id"), block.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
            self.tally.issue(self.path, line, "tool call without an id or name")
            return
        if call_id in self.pending:
            return
        model = model_info.get("id") if isinstance(model_info, dict) and isinstance(model_info.get("id"), str) \
            else None
        ctx = self.context
        started = when if when is not None else ctx.get("started") or 0
        meta = ops.CallMeta(call_id, name, started, False, None, model, ctx.get("cwd"))
        session = self.session(ctx["session"], ctx.get("started"))
        tool_input = block.get("input")
        self.add_call(call_id, ops.ImportedCall(session, meta, tool_input if tool_input is not None else {}))

    def _result(self, block: dict, when: int | None, line: int) -> None:
        call_id = block.get("tool_use_id")
        waiting = self.take_pending(call_id) if isinstance(call_id, str) else None
        if waiting is None:
            self.unmatched_result(line)
            return
        result = {"output": block.get("content")}
        failed = block.get("isError") is True or block.get("is_error") is True or is_error(result)
        self.complete(waiting["call"], result, failed, when)


def _store_key(call: ops.ImportedCall) -> str:
    """What the checkpoint remembers of a call it took: session and call id (one index holds many sessions)."""
    return f"{call.session.source_session_id}\x1f{call.call.source_call_id}"


def import_store(path: str, cp: FileCheckpoint | None, sender, tally, options, account: str
                 ) -> FileCheckpoint | None:
    """Read the sessions of Cline's index at `path` whose messages changed since the checkpoint; return the
    new checkpoint, None when it stays. `sender`, `tally` and `options` are the importer's."""
    st = store_stat(path, tally)
    if st is None:
        return None
    if cp is not None and (cp.agent, cp.parser_version) != (AGENT, ClineParser.version):
        tally.files_reset += 1
        cp = None
    try:
        rows = _sessions(path)
    except sqlite3.Error as exc:
        tally.files_skipped += 1
        tally.issue(path, 0, f"session store cannot be read: {str(exc)[:200]}")
        return None
    read = dict(cp.context.get("files", {})) if cp is not None else {}
    taken = set(cp.taken) if cp is not None else set()
    new_taken: list[str] = []
    changed = False
    for row in rows:
        changed |= _read_session(row, path, read, taken, new_taken, sender, tally, options, account)
    if not changed:
        tally.files_unchanged += 1
        return None
    if options.dry_run:
        return None
    return FileCheckpoint(AGENT, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, ClineParser.version,
                          context={"files": read}, taken=(cp.taken if cp is not None else []) + new_taken)


def _sessions(path: str) -> list[tuple]:
    """Every session row of the index, read through one read-only connection."""
    conn = open_store(path)
    try:
        return conn.execute(f"SELECT {_COLUMNS} FROM sessions ORDER BY started_at, session_id").fetchall()
    finally:
        conn.close()


def _read_session(row: tuple, store: str, read: dict, taken: set, new_taken: list, sender, tally, options,
                  account: str) -> bool:
    """Read one session's messages file when it changed since it was last read; whether it was read."""
    session_id, cwd, started_at, is_subagent, parent, messages = row
    if not isinstance(messages, str) or not os.path.isabs(messages) or not isinstance(session_id, str) \
            or not session_id:
        return False
    try:
        st = os.lstat(messages)
    except OSError:
        return False  # not written yet, or removed since
    ident = [st.st_size, st.st_mtime_ns]
    if read.get(messages) == ident or not stat.S_ISREG(st.st_mode) or (
            options.since_ms is not None and st.st_mtime_ns // 1_000_000 < options.since_ms):
        return False
    document = _load(messages, st, tally)
    if document is None:
        return True
    context = {"session": parent if is_subagent and isinstance(parent, str) and parent else session_id,
               "cwd": cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None,
               "started": iso_ms(started_at)}
    parser = ClineParser(messages, account, tally, context, None)
    drain = drainer(AGENT, parser, sender, tally, taken, new_taken, _store_key)
    for index, message in enumerate(document.get("messages") or ()):
        if isinstance(message, dict):
            parser.feed(message, index + 1)
            drain()
    settled = time.time() - st.st_mtime >= options.settle_s
    parser.end_of_read(settled)
    drain()
    if settled or not parser.pending:
        read[messages] = ident  # calls still waiting are read again with the file's next version
    else:
        tally.calls_pending += sum(len(w) for w in parser.pending.values())
    return True


def _load(path: str, st: os.stat_result, tally) -> dict | None:
    """The messages document at `path` (never through a link), or None (reported) when it cannot be taken."""
    if st.st_size > MAX_MESSAGES_BYTES:
        tally.issue(path, 0, f"messages file is larger than {MAX_MESSAGES_BYTES} bytes")
        return None
    try:
        fd, _ = private_files.open_for_reading(path, private=False, owned=False)
    except (OSError, private_files.PrivatePathProblem):
        tally.files_skipped += 1
        return None
    try:
        data = private_files.read_bounded(fd, MAX_MESSAGES_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        document = json_text.decode(data, "messages file")
    except YarpError:
        tally.corrupt_lines += 1
        tally.issue(path, 0, "messages file is not valid JSON")
        return None
    return document if isinstance(document, dict) else None
