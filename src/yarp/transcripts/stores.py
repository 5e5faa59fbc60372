"""An agent's own SQLite session store, as `yarp import` reads it: checked, then read-only.

Some agents keep their sessions, or an index of them, in a SQLite database
rather than in transcript files. The importer never writes to it and never
follows a link to it; it waits a little for a lock the agent holds while it
commits or checkpoints.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import urllib.parse

#: How long to wait for a lock the agent holds on its store (a commit, a WAL checkpoint).
BUSY_TIMEOUT_MS = 5_000


def store_stat(path: str, tally) -> os.stat_result | None:
    """The store's own status (a link is not followed), or None, counted as skipped in the importer's
    `tally`, when it is missing or not a regular file (then said as an issue)."""
    try:
        st = os.lstat(path)
    except OSError:
        tally.files_skipped += 1
        return None
    if not stat.S_ISREG(st.st_mode):
        tally.files_skipped += 1
        tally.issue(path, 0, "session store is not a regular file")
        return None
    return st


def open_store(path: str) -> sqlite3.Connection:
    """A read-only connection to the store, in a read transaction (one snapshot for every query)."""
    uri = f"file:{urllib.parse.quote(path)}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("BEGIN")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot starts here
    except sqlite3.Error:
        conn.close()
        raise
    return conn
