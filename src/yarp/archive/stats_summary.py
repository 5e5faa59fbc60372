"""The sums behind `yarp archive stats`, kept between runs so a run reads only what changed.

A finished call never changes: the store refuses new snapshots for it and
refuses to finish it twice, and a payload's size follows from its digest. Only
prune deletes rows (finished calls, their snapshots and the payloads left
without one). So the sums over the finished calls up to a call id `W` and the
payloads up to a payload rowid `P` stay exact for as long as no row at or
below them has gone, and a run adds only the calls after `W`, the calls that
were still started (`open`) and the payloads after `P`.

Whether rows at or below the marks have gone is told without reading them:
the call at `W` must still hold its reference and the payload at `P` its
digest (so no id was deleted and reused), and the count of rows at or below
each mark (every row's count, which SQLite takes from the smallest index,
less the rows after the mark) must be the one recorded. Anything else (a
prune, another file at the path, a damaged or foreign summary) makes the run
compute everything, as the first one does, and record it anew.

The summary is a small private JSON file under the user's cache directory
(`$XDG_CACHE_HOME/yarp/stats/`, one per archive path, 0600 in a 0700
directory). It holds counts, sizes, row ids, one reference and one digest,
never content. It is never required: a missing, damaged or unsafe file costs
that run its time only, and the archive is only read.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping

from yarp._version import __version__

#: Bumped when the summary's meaning changes; with the version and the archive's file identity it keys the file.
SUMMARY_FORMAT = 1
SUBJECTS = ("input", "result", "result_text", "source_output", "stdout", "stderr")
STAGES = ("before", "after")
KEYS = tuple(f"{subject}_{stage}" for subject in SUBJECTS for stage in STAGES)
#: Sums over calls (finished ones, in the summary) and over their snapshots.
CALL_SUMS = ("calls", "started", "finished", "error", "ok", "executed", "not_executed", "snapshots",
             "snapshot_bytes") + KEYS
#: The sums one row of calls gives (`_CALL_COLUMNS`).
ROW_SUMS = CALL_SUMS[:7]
PAYLOAD_SUMS = ("payloads", "logical", "stored", "zstd")
#: A summary larger than this (open calls or loose payloads by the hundred thousand) is not kept.
MAX_SUMMARY_BYTES = 8 * 1024 * 1024

_CALL_COLUMNS = ("count(*), total(status = 'started'), total(status = 'finished'), total(is_error = 1),"
                 " total(is_error = 0), total(executed = 1), total(executed = 0)")
_SNAPSHOT_COLUMNS = ", ".join(f"total(s.subject = '{subject}' AND s.stage = '{stage}')"
                              for subject in SUBJECTS for stage in STAGES)
#: Calls after the mark and the open ones, each once (the open ones are at or below it).
_LIVE = ("(SELECT * FROM tool_calls WHERE id > ?1 UNION ALL"
         " SELECT * FROM tool_calls WHERE id IN (SELECT value FROM json_each(?2)))")
_LIVE_CALLS = f"SELECT status = 'finished', {_CALL_COLUMNS} FROM {_LIVE} GROUP BY 1"
_LIVE_SNAPSHOTS = (f"SELECT c.status = 'finished', count(*), total(p.uncompressed_byte_length), {_SNAPSHOT_COLUMNS}"
                   f" FROM {_LIVE} c JOIN snapshots s ON s.tool_call_id = c.id"
                   " LEFT JOIN payloads p ON p.sha256 = s.payload_sha256 GROUP BY 1")
_PAYLOAD_TOTALS = ("SELECT count(*), total(uncompressed_byte_length), total(length(body)), total(compression = 'zstd')"
                   " FROM payloads")
#: The digests the snapshots name, each with how many name it, in digest order along their index; and every
#: payload's digest, size and rowid, read in table order and sorted (a probe of the index per payload,
#: or a payload lookup per digest, lands at random: twice the time at 1,000,000 calls).
_NAMED = "SELECT payload_sha256, count(*) FROM snapshots INDEXED BY snapshots_payload_idx GROUP BY 1"
_BY_DIGEST = "SELECT sha256, uncompressed_byte_length, rowid FROM payloads NOT INDEXED ORDER BY sha256"
#: A call id after every other: only the open calls are live.
_NO_ID = 2**63 - 1
_NEW_PAYLOADS = ("SELECT count(*), total(uncompressed_byte_length), total(length(body)), total(compression = 'zstd')"
                 " FROM payloads WHERE rowid > ?1")
#: Payloads no snapshot references, among those after the mark and those that had none.
#: (Two parts joined by UNION ALL: an OR of the two would read every payload row.)
_LOOSE = ("SELECT rowid FROM (SELECT rowid, sha256 FROM payloads WHERE rowid > ?1 UNION ALL"
          " SELECT rowid, sha256 FROM payloads WHERE rowid IN (SELECT value FROM json_each(?2))) p"
          " WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.payload_sha256 = p.sha256) ORDER BY rowid")


def _zero(names) -> dict[str, float]:
    return dict.fromkeys(names, 0)


def _add(into: dict, names, values) -> None:
    for name, value in zip(names, values):
        into[name] += value or 0


class Summary:
    """The marks and sums of one archive (see the module docstring); `advance` brings them up to date."""

    def __init__(self, identity: list[int]) -> None:
        self.identity = identity
        self._calls = self._payloads = 0  # the rows counted in the current read transaction
        self.last_call: int | None = None
        self.last_ref: str | None = None
        self.calls_to_mark = 0
        self.open: list[int] = []
        self.frozen = _zero(CALL_SUMS)
        self.last_payload: int | None = None
        self.last_sha: str | None = None
        self.payloads_to_mark = 0
        self.loose: list[int] = []
        self.payload_sums = _zero(PAYLOAD_SUMS)

    # --- the file ---------------------------------------------------------------------------

    def to_json(self) -> bytes:
        """The summary as the file holds it."""
        return json.dumps({"format": f"{SUMMARY_FORMAT}/{__version__}", "identity": self.identity,
                           "last_call": self.last_call, "last_ref": self.last_ref, "calls_to_mark": self.calls_to_mark,
                           "open": self.open, "frozen": self.frozen, "last_payload": self.last_payload,
                           "last_sha": self.last_sha, "payloads_to_mark": self.payloads_to_mark, "loose": self.loose,
                           "payload_sums": self.payload_sums}, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes, identity: list[int]) -> Summary | None:
        """The summary a file holds, or None when it is damaged, of another format or another archive file."""
        try:
            raw = json.loads(data)
            if raw["format"] != f"{SUMMARY_FORMAT}/{__version__}" or raw["identity"] != identity:
                return None
            found = cls(identity)
            for name in ("last_call", "last_ref", "calls_to_mark", "open", "last_payload", "last_sha",
                         "payloads_to_mark", "loose"):
                setattr(found, name, raw[name])
            found.frozen = {name: raw["frozen"][name] for name in CALL_SUMS}
            found.payload_sums = {name: raw["payload_sums"][name] for name in PAYLOAD_SUMS}
        except (ValueError, KeyError, TypeError):
            return None
        return found

    # --- bringing it up to date ---------------------------------------------------------------

    def still_holds(self, conn: sqlite3.Connection) -> bool:
        """Whether every row at or below the marks is still there, unchanged (no prune since)."""
        one = lambda sql, *args: conn.execute(sql, args).fetchone()
        if self.last_call is not None:
            row = one("SELECT archive_ref FROM tool_calls WHERE id = ?", self.last_call)
            if row is None or row[0] != self.last_ref:
                return False
        self._calls = one("SELECT count(*) FROM tool_calls")[0]
        after = one("SELECT count(*) FROM tool_calls WHERE id > ?", self.last_call or 0)[0]
        if self._calls - after != self.calls_to_mark:
            return False
        if self.last_payload is not None:
            row = one("SELECT sha256 FROM payloads WHERE rowid = ?", self.last_payload)
            if row is None or not isinstance(row[0], bytes) or row[0].hex() != self.last_sha:
                return False
        self._payloads = one("SELECT count(*) FROM payloads")[0]
        after = one("SELECT count(*) FROM payloads WHERE rowid > ?", self.last_payload or 0)[0]
        return self._payloads - after == self.payloads_to_mark

    def advance(self, conn: sqlite3.Connection) -> tuple[dict, dict]:
        """Fold the calls and payloads since the marks in; return the open calls' sums and the payload
        sums (with `unreferenced`) as they stand now. Runs inside the caller's read transaction."""
        mark, open_ids = self.last_call or 0, json.dumps(self.open)
        live = _zero(CALL_SUMS)
        for finished, *values in conn.execute(_LIVE_CALLS, (mark, open_ids)):
            _add(self.frozen if finished else live, ROW_SUMS, values)
        for finished, count, nbytes, *values in conn.execute(_LIVE_SNAPSHOTS, (mark, open_ids)):
            _add(self.frozen if finished else live, ("snapshots", "snapshot_bytes") + KEYS, (count, nbytes, *values))
        self.open = [r[0] for r in conn.execute(f"SELECT id FROM {_LIVE} WHERE status <> 'finished' ORDER BY id",
                                                (mark, open_ids))]
        last = conn.execute("SELECT id, archive_ref FROM tool_calls ORDER BY id DESC LIMIT 1").fetchone()
        self.last_call, self.last_ref = last if last is not None else (None, None)
        # Counted by `still_holds` in this same read transaction, or by `rebuild`.
        self.calls_to_mark = self._calls
        self._advance_payloads(conn)
        return live, dict(self.payload_sums, unreferenced=len(self.loose))

    def _advance_payloads(self, conn: sqlite3.Connection) -> None:
        mark = self.last_payload or 0
        _add(self.payload_sums, PAYLOAD_SUMS, conn.execute(_NEW_PAYLOADS, (mark,)).fetchone())
        self.loose = [r[0] for r in conn.execute(_LOOSE, (mark, json.dumps(self.loose)))]
        last = conn.execute("SELECT rowid, sha256 FROM payloads ORDER BY rowid DESC LIMIT 1").fetchone()
        if last is not None:
            self.last_payload = last[0]
            self.last_sha = last[1].hex() if isinstance(last[1], bytes) else None
        self.payloads_to_mark = self._payloads

    def rebuild(self, conn: sqlite3.Connection) -> tuple[dict, dict]:
        """Compute everything from the rows (the first run, or after a prune); return as `advance` does.

        Each table is read in its own order, so that no lookup lands at random
        in the payload table: the calls, the snapshots (grouped by subject and
        stage), the payloads' totals, and the payloads sorted by digest merged
        with the digests the snapshots name (`_named_bytes`).
        """
        self.__dict__.update(Summary(self.identity).__dict__)
        frozen, sums = self.frozen, self.payload_sums
        _add(frozen, ROW_SUMS, conn.execute(
            f"SELECT {_CALL_COLUMNS} FROM tool_calls WHERE status = 'finished'").fetchone())
        for subject, stage, count in conn.execute("SELECT subject, stage, count(*) FROM snapshots GROUP BY 1, 2"):
            frozen["snapshots"] += count
            if f"{subject}_{stage}" in frozen and subject in SUBJECTS and stage in STAGES:
                frozen[f"{subject}_{stage}"] += count
        _add(sums, PAYLOAD_SUMS, conn.execute(_PAYLOAD_TOTALS).fetchone())
        frozen["snapshot_bytes"], self.loose = _named_bytes(conn)
        # The open calls are counted live from now on: their snapshots leave the frozen sums.
        self.open = [r[0] for r in conn.execute("SELECT id FROM tool_calls WHERE status <> 'finished' ORDER BY id")]
        for _, count, nbytes, *values in conn.execute(_LIVE_SNAPSHOTS, (_NO_ID, json.dumps(self.open))):
            _add(frozen, ("snapshots", "snapshot_bytes") + KEYS, (-count, -(nbytes or 0), *(-(v or 0) for v in values)))
        last = conn.execute("SELECT id, archive_ref FROM tool_calls ORDER BY id DESC LIMIT 1").fetchone()
        self.last_call, self.last_ref = last if last is not None else (None, None)
        self.calls_to_mark = self._calls = conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
        last = conn.execute("SELECT rowid, sha256 FROM payloads ORDER BY rowid DESC LIMIT 1").fetchone()
        if last is not None:
            self.last_payload = last[0]
            self.last_sha = last[1].hex() if isinstance(last[1], bytes) else None
        self.payloads_to_mark = self._payloads = int(sums["payloads"])
        return self.advance(conn)  # nothing after the marks: the open calls' sums, as a later run finds them


def _named_bytes(conn: sqlite3.Connection) -> tuple[int, list[int]]:
    """(every snapshot's payload bytes, the rowids of payloads no snapshot names): two sorted streams merged."""
    named = conn.execute(_NAMED)
    current = next(named, None)
    total, loose = 0, []
    for sha, length, rowid in conn.execute(_BY_DIGEST):
        if not isinstance(sha, bytes):  # a damaged key (verify says so): no snapshot names it as a digest
            loose.append(rowid)
            continue
        while current is not None and (not isinstance(current[0], bytes) or current[0] < sha):
            current = next(named, None)
        if current is not None and current[0] == sha:
            total += (length or 0) * current[1]
        else:
            loose.append(rowid)
    loose.sort()
    return total, loose


# --- the file beside the user's cache ---------------------------------------------------------


def summary_path(path: str, environ: Mapping[str, str] = os.environ) -> str:
    """The file that holds the summary of the archive at `path`: named by a digest of its real path."""
    from yarp._digest import identity_sha256
    from yarp.parse_cache import cache_dir

    name = identity_sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:32]
    return os.path.join(cache_dir(environ), "stats", f"{name}.json")


def file_identity(path: str) -> list[int]:
    """The archive file's device and inode: another file at the path is another archive."""
    st = os.stat(path)
    return [st.st_dev, st.st_ino]


def load(path: str, identity: list[int]) -> Summary | None:
    """The summary kept at `path` for the archive file `identity`, or None (missing, unsafe, damaged, stale)."""
    from yarp import private_files

    try:
        fd, _ = private_files.open_for_reading(path, private=True)
    except (OSError, private_files.PrivatePathProblem):
        return None
    try:
        data = private_files.read_bounded(fd, MAX_SUMMARY_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return Summary.from_json(data, identity) if len(data) <= MAX_SUMMARY_BYTES else None


def save(path: str, summary: Summary) -> None:
    """Keep `summary` at `path`, private, replacing the file whole; a failure only costs the next run."""
    from yarp import private_files

    data = summary.to_json()
    if len(data) > MAX_SUMMARY_BYTES:
        return
    try:
        private_files.ensure_private_directory(os.path.dirname(path), create=True, narrow=True)
        if os.path.lexists(path):
            private_files.check_private_file(path, narrow=False)  # never replace what is not ours
        private_files.replace_atomically(path, data)
    except (OSError, private_files.PrivatePathProblem):
        pass
