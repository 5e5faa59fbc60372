"""Kilo Code's session store (`$XDG_DATA_HOME/kilo/kilo.db`), read only, by opencode's reader.

Kilo Code 7.7.7 keeps its sessions as opencode does (docs/import.md, "Kilo
Code"): SQLite in WAL mode, the tables `session`, `message` and `part` with
the same JSON `data` (tool parts with `callID`, `tool` and a `state` that goes
from `pending` to `completed` or `error`), beside tables of its own that no
call lives in. So the store is read by opencode's reader
(`yarp.agents.opencode.transcripts`, this agent's base), under this agent's
name: identities are the live plugin's, agent `kilo-code`, the OS account,
the part's session and its `callID`. bash's spill file (`metadata.outputPath`,
under `~/.local/share/kilo/tool-output/`), when it still exists, is the
source output.
"""

from __future__ import annotations

import os

from yarp.agents.opencode import transcripts as base
from yarp.transcripts.state import FileCheckpoint

NAME = "kilo-code"
#: The store's file name; a folder holding it is a store to read.
STORE_NAME = "kilo.db"


class KiloCodeParser(base.OpencodeParser):
    """Tool parts of one Kilo Code store: opencode's rules, this agent's name."""

    agent = NAME
    version = 1


def import_store(path: str, cp: FileCheckpoint | None, sender, tally, options, account: str) -> FileCheckpoint | None:
    """Read one Kilo Code store from its checkpoint; return the new checkpoint, None when it stays."""
    return base.import_store(path, cp, sender, tally, options, account, KiloCodeParser)


def default_roots(environ=os.environ) -> list[str]:
    """Kilo Code's session store, `$XDG_DATA_HOME/kilo/kilo.db` (else `~/.local/share/...`)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    data = environ.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(data):
        data = os.path.join(home, ".local", "share")
    return [os.path.join(data, "kilo", STORE_NAME)]


def recognizes(first_line: bytes) -> int:
    """1 for a SQLite file: opencode's store begins alike and stays the surer guess (a store named
    `kilo.db` is this agent's by its name, `yarp.transcripts.discovery.guess_agent`)."""
    return 1 if first_line.startswith(b"SQLite format 3\x00") else 0
