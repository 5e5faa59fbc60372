"""Safe counts and sizes of an archive, read through a read-only connection.

`archive_stats` returns numbers only: counts of sessions, calls (by status,
is_error, executed), snapshots (by subject and stage), payloads, logical versus
stored bytes, and file sizes. It never reads a payload body and never returns
archived content, names or identities, so its output is safe to paste anywhere.
"""

from __future__ import annotations

import os
import sqlite3

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


def archive_stats(conn: sqlite3.Connection, location: ArchiveLocation) -> dict[str, int | float | None]:
    """Every statistic as a flat `name -> number` mapping (None when undefined)."""
    try:
        one = lambda sql: conn.execute(sql).fetchone()  # noqa: E731 - a local shorthand
        stats: dict[str, int | float | None] = {}
        stats["sessions"] = one("SELECT count(*) FROM sessions")[0]
        calls, started, finished, errors, ok, executed, not_executed, oldest, newest = one(
            "SELECT count(*), total(status = 'started'), total(status = 'finished'),"
            " total(is_error = 1), total(is_error = 0), total(executed = 1), total(executed = 0),"
            " min(started_at_ms), max(started_at_ms) FROM tool_calls"
        )
        payloads, logical, stored, compressed = one(
            "SELECT count(*), total(uncompressed_byte_length), total(length(body)),"
            " total(compression = 'zstd') FROM payloads"
        )
        snapshot_rows = conn.execute(
            "SELECT subject, stage, count(*) FROM snapshots GROUP BY subject, stage"
        ).fetchall()
        referenced_bytes = one(
            "SELECT total(p.uncompressed_byte_length) FROM snapshots s"
            " JOIN payloads p ON p.sha256 = s.payload_sha256"
        )[0]
        unreferenced = one(
            "SELECT count(*) FROM payloads WHERE NOT EXISTS"
            " (SELECT 1 FROM snapshots s WHERE s.payload_sha256 = payloads.sha256)"
        )[0]
        page_size = one("PRAGMA page_size")[0]
        page_count = one("PRAGMA page_count")[0]
        freelist = one("PRAGMA freelist_count")[0]
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive statistics") from None
    stats.update(
        calls=calls,
        incomplete_calls=int(started),
        logical_payload_bytes=int(logical),
        stored_payload_bytes=int(stored),
        database_bytes=_file_size(location.path),
        oldest_call_ms=oldest,
        newest_call_ms=newest,
        calls_finished=int(finished),
        calls_error=int(errors),
        calls_ok=int(ok),
        calls_error_unknown=calls - int(errors) - int(ok),
        calls_executed=int(executed),
        calls_not_executed=int(not_executed),
        calls_executed_unknown=calls - int(executed) - int(not_executed),
        payloads=payloads,
        payloads_zstd=int(compressed),
        payloads_none=payloads - int(compressed),
        payloads_unreferenced=unreferenced,
        # Bytes the snapshots would need without content addressing (dedup saving).
        snapshot_logical_bytes=int(referenced_bytes),
        compression_ratio=round(logical / stored, 3) if stored else None,
    )
    counts = {(subject, stage): count for subject, stage, count in snapshot_rows}
    stats["snapshots"] = sum(counts.values())
    for subject in SUBJECTS:
        for stage in STAGES:
            if subject in ("result_text", "source_output") and stage == "after":
                continue  # not used by the specification
            stats[f"snapshots_{subject}_{stage}"] = counts.get((subject, stage), 0)
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
