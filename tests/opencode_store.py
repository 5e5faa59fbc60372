"""opencode session stores written the way opencode 1.18.33 writes them, for the importer's tests.

The tables, columns and JSON shapes are the ones the real CLI wrote on this
machine (docs/import.md, "opencode"): SQLite in WAL mode; `session` rows with
`time_created`; `message` rows whose `data` names the model and the working
directory; `part` rows whose `data` is a tool part, `{type: "tool", tool,
callID, state}`, its state rewritten in place from `running` to `completed`
or `error`. Only the columns the importer reads are created.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

SESSION = "ses_1a2b3c4d5e6ffeAbCdEfGhIjKl"
CHILD = "ses_1a2b3c4d5e6ffeSubagentXyz"
CWD = "/home/dev/app"
T0 = 1_796_000_000_000

SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL, title TEXT NOT NULL,
                      version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
                      time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
                   time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX part_session_idx ON part (session_id);
"""


class Store:
    """One store: `add_*` write rows as opencode does (compact JSON), each in its own transaction."""

    def __init__(self, data_home: Path, relative: str = "opencode/opencode.db") -> None:
        # A fork of opencode keeps the same store under its own name (`relative` to the data home).
        self.path = data_home / relative
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.executescript(SCHEMA)
        self.parts = 0

    def close(self) -> None:
        self.conn.close()

    def add_session(self, session_id: str = SESSION, parent: str | None = None, second: int = 0) -> None:
        self.conn.execute("INSERT INTO session VALUES (?, ?, ?, 'title', '1.18.33', ?, ?)",
                          (session_id, parent, CWD, T0 + second * 1000, T0 + second * 1000))

    def add_message(self, message_id: str, session_id: str = SESSION, second: int = 0) -> None:
        data = {"parentID": "msg_user", "role": "assistant", "mode": "build", "agent": "build",
                "path": {"cwd": CWD, "root": CWD}, "cost": 0, "modelID": "scripted-model",
                "providerID": "scripted", "time": {"created": T0 + second * 1000}, "finish": "tool-calls"}
        self.conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                          (message_id, session_id, T0 + second * 1000, T0 + second * 1000, _compact(data)))

    def add_tool(self, call_id: str, tool: str, state: dict, *, message_id: str = "msg_1", session_id: str = SESSION,
                 second: int = 0) -> str:
        """A tool part; returns its id (ascending, as opencode's are)."""
        self.parts += 1
        part_id = f"prt_{self.parts:012d}"
        data = {"type": "tool", "tool": tool, "callID": call_id, "state": state}
        self.conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                          (part_id, message_id, session_id, T0 + second * 1000, T0 + second * 1000, _compact(data)))
        return part_id

    def update_tool(self, part_id: str, state: dict, second: int) -> None:
        data = json.loads(self.conn.execute("SELECT data FROM part WHERE id = ?", (part_id,)).fetchone()[0])
        data["state"] = state
        self.conn.execute("UPDATE part SET data = ?, time_updated = ? WHERE id = ?",
                          (_compact(data), T0 + second * 1000, part_id))

    def add_raw_part(self, data: str, second: int = 0) -> None:
        self.parts += 1
        self.conn.execute("INSERT INTO part VALUES (?, 'msg_1', ?, ?, ?, ?)",
                          (f"prt_{self.parts:012d}", SESSION, T0 + second * 1000, T0 + second * 1000, data))


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def completed(command_input: dict, output: str, metadata: dict, second: int, title: str = "t") -> dict:
    return {"status": "completed", "input": command_input, "output": output, "metadata": metadata, "title": title,
            "time": {"start": T0 + second * 1000, "end": T0 + second * 1000 + 500}}


def errored(command_input: dict, error: str, second: int) -> dict:
    return {"status": "error", "input": command_input, "error": error,
            "time": {"start": T0 + second * 1000, "end": T0 + second * 1000 + 50}}


def running(command_input: dict, second: int) -> dict:
    return {"status": "running", "input": command_input, "time": {"start": T0 + second * 1000},
            "metadata": {"output": "", "description": "x"}}
