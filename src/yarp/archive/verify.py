"""`yarp archive verify` as a library: every Validation check, through a read-only connection.

Checks, in order: filesystem permissions (directory 0700, database and -wal/-shm
0600, owned by the current user, no symlinks); SQLite `integrity_check` and
`foreign_key_check`; the supported `user_version`; lifecycle and snapshot
values; well-formed unique archive references and result-text completeness;
every payload's decompression, byte length and SHA-256 (and UTF-8 validity when
a snapshot declares it text); missing required snapshots per the Records rules;
incomplete calls and unreferenced payloads, which are counted and reported
without failing verification.

Payloads are streamed one at a time, chunk by chunk: the main thread reads
(and decompresses) the next chunk while one helper thread hashes the last, so
memory stays bounded by `HASH_QUEUE_CHUNKS + 2` chunks of `VERIFY_CHUNK_BYTES`
whatever the archive holds. Problem messages name
calls by archive reference and payloads by a digest prefix, never by content.
This module never writes: permissions are checked, not repaired, and the
archive is opened only after they pass.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import queue
import sqlite3
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from yarp.archive.recovery import REF_PATTERN, iter_payload
from yarp.archive.schema import SCHEMA_VERSION
from yarp.archive.sqlite import map_error, open_readonly
from yarp.errors import ArchiveMissing, CorruptArchive, ValidationError
from yarp.limits import (
    HASH_QUEUE_CHUNKS,
    MAX_INTEGRITY_ROWS,
    MAX_PROBLEMS_PER_CHECK,
    PAYLOAD_BATCH_ROWS,
    READER_MMAP_BYTES,
    VERIFY_CHUNK_BYTES,
)
from yarp.paths import COMPANION_SUFFIXES, ArchiveLocation, refuse_directory

TABLES = ("sessions", "tool_calls", "payloads", "snapshots")
MEDIA_JSON = "application/json"
MEDIA_TEXT = "text/plain; charset=utf-8"
MEDIA_BINARY = "application/octet-stream"
STREAM_KEYS = (("stdout", "before"), ("stderr", "before"), ("stdout", "after"), ("stderr", "after"))

Progress = Callable[[int, int, int, int], None]


@dataclass
class VerifyReport:
    """What verification found; `ok` is False when any problem was recorded."""

    problems: list[str] = field(default_factory=list)
    incomplete_calls: int = 0
    unreferenced_payloads: int = 0
    payloads_checked: int = 0
    payload_bytes_checked: int = 0

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    def to_json(self) -> dict:
        """The report as a JSON-ready dict (the `--json` form)."""
        return {
            "ok": self.ok,
            "incomplete_calls": self.incomplete_calls,
            "unreferenced_payloads": self.unreferenced_payloads,
            "payloads_checked": self.payloads_checked,
            "payload_bytes_checked": self.payload_bytes_checked,
            "problems": list(self.problems),
        }


class _Problems:
    """Collects bounded problem lines for one named check."""

    def __init__(self, report: VerifyReport, check: str) -> None:
        self.report, self.check, self.count = report, check, 0

    def add(self, message: str) -> None:
        self.count += 1
        if self.count <= MAX_PROBLEMS_PER_CHECK:
            self.report.problems.append(message)

    def close(self) -> None:
        if self.count > MAX_PROBLEMS_PER_CHECK:
            self.report.problems.append(f"{self.count - MAX_PROBLEMS_PER_CHECK} more {self.check} problem(s)")


# --- filesystem --------------------------------------------------------------------------


def permission_problems(location: ArchiveLocation) -> list[str]:
    """Every filesystem-permission problem of the archive directory and files.

    Raises `ArchiveMissing` when the database itself does not exist.
    """
    refuse_directory(location)
    problems = []
    uid = os.geteuid()
    entries = [(location.directory, "archive directory", True, 0o700, False),
               (location.path, "archive database", False, 0o600, False)]
    entries += [(location.path + s, f"archive {s[1:]} file", False, 0o600, True) for s in COMPANION_SUFFIXES]
    for path, label, is_dir, wanted, optional in entries:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if optional:
                continue
            raise ArchiveMissing(f"{label} {path} does not exist") from None
        if stat.S_ISLNK(st.st_mode):
            problems.append(f"{label} is a symbolic link")
            continue
        if is_dir != stat.S_ISDIR(st.st_mode) or (not is_dir and not stat.S_ISREG(st.st_mode)):
            problems.append(f"{label} is not a {'directory' if is_dir else 'regular file'}")
            continue
        if st.st_uid != uid:
            problems.append(f"{label} is owned by uid {st.st_uid}, not the current user ({uid})")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            problems.append(f"{label} permissions are {mode:04o}, expected {wanted:04o}")
    return problems


# --- the checks ------------------------------------------------------------------------------


def _call_label(ref: object, rowid: int) -> str:
    if isinstance(ref, str) and REF_PATTERN.match(ref):
        return f"call {ref}"
    return f"call row {rowid}"


def _check_values(conn: sqlite3.Connection, report: VerifyReport) -> None:
    rules = (
        ("status NOT IN ('started', 'finished') OR status IS NULL", "has an invalid status"),
        ("requires_streams IS NULL OR requires_streams NOT IN (0, 1)", "has an invalid requires_streams value"),
        ("is_error IS NOT NULL AND is_error NOT IN (0, 1)", "has an invalid is_error value"),
        ("executed IS NOT NULL AND executed NOT IN (0, 1)", "has an invalid executed value"),
        ("status = 'finished' AND (finished_at_ms IS NULL OR is_error IS NULL OR executed IS NULL)",
         "is finished without finished_at_ms, is_error and executed"),
        ("status = 'started' AND (finished_at_ms IS NOT NULL OR is_error IS NOT NULL OR executed IS NOT NULL)",
         "is started but carries finish values"),
        ("typeof(started_at_ms) <> 'integer'", "has a non-integer started_at_ms"),
        ("finished_at_ms IS NOT NULL AND typeof(finished_at_ms) <> 'integer'", "has a non-integer finished_at_ms"),
    )
    problems = _Problems(report, "lifecycle value")
    for where, what in rules:
        for ref, rowid in conn.execute(f"SELECT archive_ref, id FROM tool_calls WHERE {where} ORDER BY id"):
            problems.add(f"{_call_label(ref, rowid)} {what}")
    problems.close()

    problems = _Problems(report, "snapshot value")
    snapshot_rules = (
        ("subject NOT IN ('input', 'result', 'result_text', 'source_output', 'stdout', 'stderr')",
         "has a snapshot with an invalid subject"),
        ("stage NOT IN ('before', 'after')", "has a snapshot with an invalid stage"),
        ("subject IN ('result_text', 'source_output') AND stage <> 'before'",
         "has a result_text or source_output snapshot that is not 'before'"),
        ("subject IN ('input', 'result') AND media_type <> 'application/json'",
         "has an input or result snapshot that is not application/json"),
        ("subject = 'result_text' AND media_type <> 'text/plain; charset=utf-8'",
         "has a result_text snapshot that is not text/plain; charset=utf-8"),
        ("subject IN ('source_output', 'stdout', 'stderr') AND media_type NOT IN"
         " ('text/plain; charset=utf-8', 'application/octet-stream')",
         "has an output snapshot with an unexpected media type"),
        ("typeof(captured_at_ms) <> 'integer'", "has a snapshot with a non-integer captured_at_ms"),
    )
    for where, what in snapshot_rules:
        for ref, rowid, subject, stage in conn.execute(
            "SELECT c.archive_ref, s.tool_call_id, s.subject, s.stage FROM snapshots s"
            f" LEFT JOIN tool_calls c ON c.id = s.tool_call_id WHERE {where} ORDER BY s.tool_call_id"
        ):
            problems.add(f"{_call_label(ref, rowid)} {what}")
    problems.close()

    problems = _Problems(report, "result-text completeness")
    for ref, rowid, subject, completeness in conn.execute(
        "SELECT c.archive_ref, s.tool_call_id, s.subject, s.source_completeness FROM snapshots s"
        " LEFT JOIN tool_calls c ON c.id = s.tool_call_id WHERE"
        " (s.subject = 'result_text' AND (s.source_completeness IS NULL OR s.source_completeness NOT IN"
        " ('complete', 'incomplete', 'unknown')))"
        " OR (s.subject <> 'result_text' AND s.source_completeness IS NOT NULL) ORDER BY s.tool_call_id"
    ):
        if subject == "result_text":
            problems.add(f"{_call_label(ref, rowid)} has result_text without a valid source completeness")
        else:
            problems.add(f"{_call_label(ref, rowid)} has a source completeness on a snapshot other than result_text")
    problems.close()


def _check_refs(conn: sqlite3.Connection, report: VerifyReport) -> None:
    problems = _Problems(report, "archive reference")
    for ref, rowid in conn.execute("SELECT archive_ref, id FROM tool_calls ORDER BY id"):
        if not (isinstance(ref, str) and REF_PATTERN.match(ref)):
            problems.add(f"call row {rowid} has a malformed archive_ref")
    for ref, count in conn.execute(
        "SELECT archive_ref, count(*) FROM tool_calls GROUP BY archive_ref HAVING count(*) > 1"
    ):
        label = ref if isinstance(ref, str) and REF_PATTERN.match(ref) else "a malformed archive_ref"
        problems.add(f"archive_ref {label} is used by {count} calls")
    problems.close()


def _required(conn: sqlite3.Connection, report: VerifyReport) -> None:
    """The Records section's required snapshots, one query per rule."""
    rules = [("1", "input", "before"), ("1", "input", "after"),
             ("c.status = 'finished'", "result", "after"),
             ("c.status = 'finished' AND c.executed = 1", "result", "before")]
    rules += [("c.status = 'finished' AND c.executed = 1 AND c.requires_streams = 1", subject, stage)
              for subject, stage in STREAM_KEYS]
    problems = _Problems(report, "missing snapshot")
    for where, subject, stage in rules:
        for ref, rowid in conn.execute(
            f"SELECT c.archive_ref, c.id FROM tool_calls c WHERE {where} AND NOT EXISTS"
            " (SELECT 1 FROM snapshots s WHERE s.tool_call_id = c.id AND s.subject = ? AND s.stage = ?)"
            " ORDER BY c.id",
            (subject, stage),
        ):
            problems.add(f"{_call_label(ref, rowid)} is missing its required {subject}/{stage} snapshot")
    problems.close()


class _PayloadDigest:
    """SHA-256 (and UTF-8 validity) of one payload, fed chunk by chunk."""

    __slots__ = ("digest", "decoder", "utf8_ok")

    def __init__(self, is_text: bool) -> None:
        self.digest = hashlib.sha256()
        self.decoder = codecs.getincrementaldecoder("utf-8")() if is_text else None
        self.utf8_ok = True

    def update(self, chunk: bytes) -> None:
        self.digest.update(chunk)
        if self.decoder is not None and self.utf8_ok:
            try:
                self.decoder.decode(chunk)
            except UnicodeDecodeError:
                self.utf8_ok = False

    def finish(self) -> None:
        if self.decoder is not None and self.utf8_ok:
            try:
                self.decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                self.utf8_ok = False


class _HashThread:
    """Hash chunks on a helper thread while the caller reads the next ones.

    hashlib and zstandard release the GIL on large buffers, as SQLite does for
    blob reads, so reading and hashing overlap on two cores. The queue is
    bounded, so at most `HASH_QUEUE_CHUNKS` chunks wait.
    """

    def __init__(self) -> None:
        self.jobs: queue.Queue = queue.Queue(maxsize=HASH_QUEUE_CHUNKS)
        self.thread = threading.Thread(target=self._work, name="yarp-verify-hash", daemon=True)
        self.thread.start()

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                if job is None:
                    return
                job[0].update(job[1])
            finally:
                self.jobs.task_done()

    def submit(self, target: _PayloadDigest, chunk: bytes) -> None:
        self.jobs.put((target, chunk))

    def wait(self) -> None:
        """Return once every submitted chunk has been hashed."""
        self.jobs.join()

    def close(self) -> None:
        self.jobs.put(None)
        self.thread.join()


def _check_payloads(conn: sqlite3.Connection, report: VerifyReport, progress: Progress | None) -> None:
    total_rows, total_bytes = conn.execute(
        "SELECT count(*), total(CASE WHEN typeof(uncompressed_byte_length) = 'integer'"
        " THEN max(uncompressed_byte_length, 0) ELSE 0 END) FROM payloads"
    ).fetchone()
    total_bytes = int(total_bytes)
    problems = _Problems(report, "payload")
    last = -1
    hasher = _HashThread()
    try:
        while True:
            rows = conn.execute(
                "SELECT p.rowid, p.sha256, p.compression, p.uncompressed_byte_length, EXISTS (SELECT 1 FROM"
                f" snapshots s WHERE s.payload_sha256 = p.sha256 AND s.media_type = '{MEDIA_TEXT}')"
                " FROM payloads p WHERE p.rowid > ? ORDER BY p.rowid LIMIT ?",
                (last, PAYLOAD_BATCH_ROWS),
            ).fetchall()
            if not rows:
                break
            for rowid, sha, compression, length, is_text in rows:
                last = rowid
                problem = _check_one_payload(conn, rowid, sha, compression, length, bool(is_text), report, hasher)
                if problem:
                    label = sha.hex()[:16] if isinstance(sha, bytes) else f"row {rowid}"
                    problems.add(f"payload {label} {problem}")
                report.payloads_checked += 1
                if progress is not None:
                    progress(report.payloads_checked, total_rows, report.payload_bytes_checked, total_bytes)
    finally:
        hasher.close()
    problems.close()


def _check_one_payload(conn, rowid, sha, compression, length, is_text, report, hasher: _HashThread) -> str | None:
    if not isinstance(sha, bytes) or len(sha) != 32:
        return "has a malformed sha256 key"
    if compression not in ("none", "zstd"):
        return "has an unknown compression"
    if not isinstance(length, int) or length < 0:
        return "has an invalid uncompressed_byte_length"
    target = _PayloadDigest(is_text)
    seen = 0
    try:
        try:
            for chunk in iter_payload(conn, rowid, compression, chunk=VERIFY_CHUNK_BYTES):
                seen += len(chunk)
                report.payload_bytes_checked += len(chunk)
                if seen > length:
                    return f"decompresses to more than its recorded {length} bytes"
                hasher.submit(target, chunk)
        finally:
            hasher.wait()  # never leave a chunk of this payload behind, on any exit
    except ValidationError:
        return "cannot be decompressed"
    if seen != length:
        return f"has {seen} bytes but records {length}"
    if target.digest.digest() != sha:
        return "does not match its SHA-256 digest"
    target.finish()
    if not target.utf8_ok:
        return "is declared UTF-8 text but is not valid UTF-8"
    return None


def verify_archive(location: ArchiveLocation, *, progress: Progress | None = None) -> VerifyReport:
    """Run every check and return the report.

    Raises only `ArchiveMissing` (nothing to verify) and `ArchiveBusy`-type
    operational errors; every finding about the archive is a report problem.
    """
    report = VerifyReport()
    report.problems.extend(permission_problems(location))
    if report.problems:
        return report  # opening an unsafe archive is refused; fix permissions first
    try:
        conn = open_readonly(location, check_version=False)
    except CorruptArchive as exc:
        report.problems.append(exc.message)
        return report
    try:
        _run_checks(conn, report, progress)
    except CorruptArchive as exc:
        report.problems.append(exc.message)
    finally:
        conn.close()
    return report


def _run_checks(conn: sqlite3.Connection, report: VerifyReport, progress: Progress | None) -> None:
    try:
        conn.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            report.problems.append(f"archive schema version {version} is not supported (expected {SCHEMA_VERSION})")
            return
        rows = [r[0] for r in conn.execute(f"PRAGMA integrity_check({MAX_INTEGRITY_ROWS})")]
        if rows != ["ok"]:
            lines = [line for row in rows for line in str(row).splitlines() if not line.startswith("***")]
            report.problems.extend(f"SQLite integrity check: {line}" for line in lines)
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in TABLES if t not in present]
        if missing:
            report.problems.append(f"archive is missing table(s): {', '.join(missing)}")
            return
        problems = _Problems(report, "foreign key")
        for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
            problems.add(f"{table} row {rowid} references a missing {parent} row")
        problems.close()
        _check_values(conn, report)
        _check_refs(conn, report)
        _check_payloads(conn, report, progress)
        _required(conn, report)
        report.incomplete_calls = conn.execute("SELECT count(*) FROM tool_calls WHERE status = 'started'").fetchone()[0]
        report.unreferenced_payloads = conn.execute(
            "SELECT count(*) FROM payloads WHERE NOT EXISTS"
            " (SELECT 1 FROM snapshots s WHERE s.payload_sha256 = payloads.sha256)"
        ).fetchone()[0]
    except sqlite3.Error as exc:
        # CorruptArchive becomes a report problem in verify_archive; busy and
        # other operational errors propagate with their own exit status.
        raise map_error(exc, "verifying archive") from None


def render(report: VerifyReport) -> tuple[str, str]:
    """(stdout text, stderr text) in the reference's form."""
    out = f"incomplete_calls: {report.incomplete_calls}\n"
    if report.unreferenced_payloads:
        out += f"unreferenced_payloads: {report.unreferenced_payloads}\n"
    if report.ok:
        return out + "archive: ok\n", ""
    return out, "".join(f"yarp: archive verification failed: {p}\n" for p in report.problems)
