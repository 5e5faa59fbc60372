"""Safe counts and sizes of an archive, read through a read-only connection.

`archive_stats` returns numbers only: counts of sessions, calls (by status,
is_error, executed), snapshots (by subject and stage), payloads, logical versus
stored bytes, and file sizes. It never reads a payload body and never returns
archived content, names or identities, so its output is safe to paste anywhere.
The sums are kept between runs (`stats_summary`), so a run over a large
archive reads only what changed since the last one.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping

from yarp.archive.sqlite import map_error
from yarp.paths import COMPANION_SUFFIXES, ArchiveLocation

#: The reference's keys, printed first and in this order.
REFERENCE_KEYS = (
    "sessions",
    "calls",
    "incomplete_calls",
    "logical_payload_bytes",
    "stored_payload_bytes",
    "database_bytes",
    "oldest_call_ms",
    "newest_call_ms",
)
SUBJECTS = ("input", "result", "result_text", "source_output", "stdout", "stderr")
STAGES = ("before", "after")


def _file_size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except FileNotFoundError:
        return 0


def archive_stats(conn: sqlite3.Connection, location: ArchiveLocation, *, environ: Mapping[str, str] = os.environ,
                  keep: bool = True) -> dict[str, int | float | None]:
    """Every statistic as a flat `name -> number` mapping (None when undefined).

    Every number comes from one read snapshot. With `keep`, the sums of the
    previous run (`stats_summary`) are brought up to date rather than computed
    again: a run reads the calls and payloads added since, and the calls that
    were still open.
    """
    from yarp.archive import stats_summary

    path = stats_summary.summary_path(location.path, environ) if keep else None
    try:
        identity = stats_summary.file_identity(location.path)
    except OSError as exc:
        raise map_error(exc, "reading archive statistics") from None
    kept = stats_summary.load(path, identity) if path else None
    try:
        one = lambda sql: conn.execute(sql).fetchone()
        conn.execute("BEGIN")
        try:
            if kept is not None and kept.still_holds(conn):
                before = kept.to_json()
                live, payloads = kept.advance(conn)
                changed = kept.to_json() != before
            else:
                kept = stats_summary.Summary(identity)
                live, payloads = kept.rebuild(conn)
                changed = True
            sessions = one("SELECT count(*) FROM sessions")[0]
            # Apart, each is one step along the start-time index; together SQLite walks all of it.
            oldest = one("SELECT min(started_at_ms) FROM tool_calls")[0]
            newest = one("SELECT max(started_at_ms) FROM tool_calls")[0]
            page_size = one("PRAGMA page_size")[0]
            page_count = one("PRAGMA page_count")[0]
            freelist = one("PRAGMA freelist_count")[0]
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive statistics") from None
    if path is not None and changed:
        stats_summary.save(path, kept)
    total = {name: int(kept.frozen[name] + live[name]) for name in stats_summary.CALL_SUMS}
    return _numbers(location, total, payloads, sessions, oldest, newest, (page_size, page_count, freelist))


def _numbers(location: ArchiveLocation, total: dict, payloads: dict, sessions: int, oldest, newest,
             pages: tuple[int, int, int]) -> dict[str, int | float | None]:
    calls = total["calls"]
    logical, stored, count, compressed = (int(payloads[k]) for k in ("logical", "stored", "payloads", "zstd"))
    stats: dict[str, int | float | None] = {
        "sessions": sessions,
        "calls": calls,
        "incomplete_calls": total["started"],
        "logical_payload_bytes": logical,
        "stored_payload_bytes": stored,
        "database_bytes": _file_size(location.path),
        "oldest_call_ms": oldest,
        "newest_call_ms": newest,
        "calls_finished": total["finished"],
        "calls_error": total["error"],
        "calls_ok": total["ok"],
        "calls_error_unknown": calls - total["error"] - total["ok"],
        "calls_executed": total["executed"],
        "calls_not_executed": total["not_executed"],
        "calls_executed_unknown": calls - total["executed"] - total["not_executed"],
        "payloads": count,
        "payloads_zstd": compressed,
        "payloads_none": count - compressed,
        "payloads_unreferenced": int(payloads["unreferenced"]),
        # Bytes the snapshots would need without content addressing (dedup saving).
        "snapshot_logical_bytes": total["snapshot_bytes"],
        "compression_ratio": round(logical / stored, 3) if stored else None,
    }
    stats["snapshots"] = total["snapshots"]
    for subject in SUBJECTS:
        for stage in STAGES:
            if subject in ("result_text", "source_output") and stage == "after":
                continue  # not used by the specification
            stats[f"snapshots_{subject}_{stage}"] = total[f"{subject}_{stage}"]
    page_size, page_count, freelist = pages
    stats.update(
        wal_bytes=_file_size(location.path + COMPANION_SUFFIXES[0]),
        shm_bytes=_file_size(location.path + COMPANION_SUFFIXES[1]),
        page_size=page_size,
        page_count=page_count,
        free_pages=freelist,
    )
    return stats


def render(stats: dict[str, int | float | None]) -> str:
    """`name: value` lines, the reference's keys first ('none' for an undefined value); a call time
    (`oldest_call_ms`) is followed by the local time it is, for people (`--json` keeps the number alone)."""
    from yarp.times import format_local

    order = list(REFERENCE_KEYS) + [k for k in stats if k not in REFERENCE_KEYS]
    shown = {key: f"{value} ({format_local(value, zone=True)})" for key, value in stats.items()
             if key.endswith("_call_ms") and value is not None}
    return "".join(f"{key}: {'none' if stats[key] is None else shown.get(key, stats[key])}\n" for key in order)
