"""`yarp archive verify` as a library: every Validation check, through a read-only connection.

Checks, in order: filesystem permissions (directory 0700, database and -wal/-shm
0600, owned by the current user, no symlinks); SQLite `integrity_check` and
`foreign_key_check`; the supported `user_version`; lifecycle and snapshot
values; well-formed unique archive references and result-text completeness;
every payload's decompression, byte length and SHA-256 (and UTF-8 validity when
a snapshot declares it text); missing required snapshots per the Records rules;
incomplete calls and unreferenced payloads, which are counted and reported
without failing verification.

The cost is SQLite's integrity check plus one pass that decompresses and
hashes every payload (`verify_payloads`): the integrity check and the foreign
keys run on a connection and thread of their own, beside the payload pass on
the caller's (SQLite runs a statement without the GIL); the lifecycle values,
references and required snapshots take one pass over the calls, and the
snapshot values one over the snapshots. Memory stays bounded by one payload
(or two chunks of a large one) whatever the archive holds. Problem messages
name calls by archive reference and payloads by a digest prefix, never by
content; they are reported in the order of the checks above.
This module never writes: permissions are checked, not repaired, and the
archive is opened only after they pass.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from yarp.archive.recovery import REF_PATTERN
from yarp.archive.schema import SCHEMA_VERSION
from yarp.archive.sqlite import map_error, open_readonly
from yarp.archive.verify_payloads import PayloadCheck, Progress
from yarp.errors import ArchiveMissing, CorruptArchive
from yarp.limits import MAX_INTEGRITY_ROWS, MAX_PROBLEMS_PER_CHECK, READER_MMAP_BYTES
from yarp.paths import COMPANION_SUFFIXES, ArchiveLocation, refuse_directory

TABLES = ("sessions", "tool_calls", "payloads", "snapshots")
MEDIA_JSON = "application/json"
MEDIA_TEXT = "text/plain; charset=utf-8"
MEDIA_BINARY = "application/octet-stream"
STREAM_KEYS = (("stdout", "before"), ("stderr", "before"), ("stdout", "after"), ("stderr", "after"))


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


#: Lifecycle rules over `tool_calls`, each a condition that marks a bad row.
_CALL_RULES = (
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
#: A well-formed reference in SQL (REF_PATTERN): `yr_` and 32 lowercase hexadecimal digits.
_REF_OK = ("typeof(archive_ref) = 'text' AND length(archive_ref) = 35 AND substr(archive_ref, 1, 3) = 'yr_'"
           " AND substr(archive_ref, 4) NOT GLOB '*[^0-9a-f]*'")
#: The Records section's required snapshots: (bit, subject, stage, which calls need it).
_REQUIRED = (
    (1, "input", "before", "1"), (2, "input", "after", "1"),
    (4, "result", "after", "status = 'finished'"), (8, "result", "before", "status = 'finished' AND executed = 1"),
) + tuple((16 << i, subject, stage, "status = 'finished' AND executed = 1 AND requires_streams = 1")
          for i, (subject, stage) in enumerate(STREAM_KEYS))
#: Every call with what it fails, in one pass: each lifecycle rule, its reference, and the bits of the
#: required snapshots it lacks (its snapshots read by their primary key, subject and stage in the index).
_CALLS_SQL = """
SELECT id, archive_ref, {rules}, NOT coalesce({ref_ok}, 0), need & ~have FROM (
  SELECT *, {need} AS need, ifnull((SELECT sum({bit}) FROM snapshots s WHERE s.tool_call_id = c.id), 0) AS have
  FROM tool_calls c)
WHERE {any_rule} OR NOT coalesce({ref_ok}, 0) OR need & ~have <> 0
ORDER BY id
""".format(
    rules=", ".join(f"coalesce({rule}, 1)" for rule, _ in _CALL_RULES), ref_ok=_REF_OK,
    need=" + ".join(f"CASE WHEN {who} THEN {bit} ELSE 0 END" for bit, _, _, who in _REQUIRED),
    # A snapshot's bit in `_REQUIRED`: input 1 and 2, result 4 and 8, streams 16 to 128 (after = before << 2).
    bit="CASE s.subject WHEN 'input' THEN 1 << (s.stage = 'after') WHEN 'result' THEN 8 >> (s.stage = 'after')"
        " WHEN 'stdout' THEN 16 << 2 * (s.stage = 'after') WHEN 'stderr' THEN 32 << 2 * (s.stage = 'after') ELSE 0 END",
    any_rule=" OR ".join(f"coalesce({rule}, 1)" for rule, _ in _CALL_RULES))
#: Snapshot rules: a condition that marks a bad row, and what it says.
_SNAPSHOT_RULES = (
    ("subject NOT IN ('input', 'result', 'result_text', 'source_output', 'stdout', 'stderr')",
     "has a snapshot with an invalid subject"),
    ("stage NOT IN ('before', 'after')", "has a snapshot with an invalid stage"),
    ("subject IN ('result_text', 'source_output') AND stage <> 'before'",
     "has a result_text or source_output snapshot that is not 'before'"),
    ("subject IN ('input', 'result') AND media_type <> 'application/json'",
     "has an input or result snapshot that is not application/json"),
    ("subject = 'result_text' AND media_type <> 'text/plain; charset=utf-8'",
     "has a result_text snapshot that is not text/plain; charset=utf-8"),
    (("subject IN ('source_output', 'stdout', 'stderr') AND media_type NOT IN"
     " ('text/plain; charset=utf-8', 'application/octet-stream')"),
     "has an output snapshot with an unexpected media type"),
    ("typeof(captured_at_ms) <> 'integer'", "has a snapshot with a non-integer captured_at_ms"),
    (("subject = 'result_text' AND (source_completeness IS NULL OR source_completeness NOT IN"
     " ('complete', 'incomplete', 'unknown'))"), "has result_text without a valid source completeness"),
    ("subject <> 'result_text' AND source_completeness IS NOT NULL",
     "has a source completeness on a snapshot other than result_text"),
)
_COMPLETENESS_RULES = 2  # the last rules are the result-text completeness check
#: Every valid (subject, stage, media type): a snapshot outside them breaks one of the rules above.
_SNAPSHOT_KINDS = tuple(
    (subject, stage, media) for subject, stages, medias in (
        ("input", ("before", "after"), (MEDIA_JSON,)), ("result", ("before", "after"), (MEDIA_JSON,)),
        ("result_text", ("before",), (MEDIA_TEXT,)), ("source_output", ("before",), (MEDIA_TEXT, MEDIA_BINARY)),
        ("stdout", ("before", "after"), (MEDIA_TEXT, MEDIA_BINARY)),
        ("stderr", ("before", "after"), (MEDIA_TEXT, MEDIA_BINARY)))
    for stage in stages for media in medias)
#: The snapshots that break a rule, found with one cheap test per row; each rule is evaluated only for them.
_SNAPSHOTS_SQL = """
SELECT s.tool_call_id, c.archive_ref, {rules} FROM snapshots s LEFT JOIN tool_calls c ON c.id = s.tool_call_id
WHERE NOT coalesce((s.subject, s.stage, s.media_type) IN (VALUES {kinds}) AND typeof(s.captured_at_ms) = 'integer'
  AND CASE WHEN s.subject = 'result_text' THEN s.source_completeness IN ('complete', 'incomplete', 'unknown')
    ELSE s.source_completeness IS NULL END, 0)
ORDER BY s.tool_call_id
""".format(rules=", ".join(f"coalesce({rule}, 1)" for rule, _ in _SNAPSHOT_RULES),
           kinds=", ".join(f"('{subject}', '{stage}', '{media}')" for subject, stage, media in _SNAPSHOT_KINDS))


def _check_calls(conn: sqlite3.Connection, report: VerifyReport,
                 ref_report: VerifyReport) -> list[tuple[int, object, int]]:
    """Lifecycle values (into `report`) and references (into `ref_report`) in one pass over the calls;
    returns the calls lacking required snapshots, (id, reference, missing bits), for `_required`."""
    lifecycle = _Problems(report, "lifecycle value")
    refs = _Problems(ref_report, "archive reference")
    missing = []
    for rowid, ref, *flags in conn.execute(_CALLS_SQL):
        *rules, bad_ref, lacking = flags
        for hit, (_, what) in zip(rules, _CALL_RULES):
            if hit:
                lifecycle.add(f"{_call_label(ref, rowid)} {what}")
        if bad_ref:
            refs.add(f"call row {rowid} has a malformed archive_ref")
        if lacking:
            missing.append((rowid, ref, int(lacking)))
    lifecycle.close()
    # Duplicates walk the unique index in order: one pass, nothing sorted.
    for ref, count in conn.execute(
        "SELECT archive_ref, count(*) FROM tool_calls GROUP BY archive_ref HAVING count(*) > 1"
    ):
        label = ref if isinstance(ref, str) and REF_PATTERN.match(ref) else "a malformed archive_ref"
        refs.add(f"archive_ref {label} is used by {count} calls")
    refs.close()
    return missing


def _check_snapshots(conn: sqlite3.Connection, report: VerifyReport) -> None:
    values = _Problems(report, "snapshot value")
    completeness = _Problems(report, "result-text completeness")
    for rowid, ref, *hits in conn.execute(_SNAPSHOTS_SQL):
        for index, (hit, (_, what)) in enumerate(zip(hits, _SNAPSHOT_RULES)):
            if hit:
                target = completeness if index >= len(_SNAPSHOT_RULES) - _COMPLETENESS_RULES else values
                target.add(f"{_call_label(ref, rowid)} {what}")
    values.close()
    completeness.close()


def _required(report: VerifyReport, missing: list[tuple[int, object, int]]) -> None:
    """The required snapshots each call lacks, rule by rule (the rows `_check_calls` found)."""
    problems = _Problems(report, "missing snapshot")
    for bit, subject, stage, _ in _REQUIRED:
        for rowid, ref, lacking in missing:
            if lacking & bit:
                problems.add(f"{_call_label(ref, rowid)} is missing its required {subject}/{stage} snapshot")
    problems.close()


#: Foreign keys checked in key order, so each probe lands next to the last (PRAGMA foreign_key_check
#: probes in table order, at random in the payload index): (child table, parent, statement).
_FOREIGN_KEYS = (
    ("tool_calls", "sessions", ("SELECT c.id FROM tool_calls c WHERE NOT EXISTS"
     " (SELECT 1 FROM sessions p WHERE p.id = c.session_id)")),
    ("snapshots", "tool_calls", ("SELECT s.rowid FROM snapshots s WHERE NOT EXISTS"
     " (SELECT 1 FROM tool_calls p WHERE p.id = s.tool_call_id)")),
    ("snapshots", "payloads", ("SELECT s.rowid FROM snapshots s INDEXED BY snapshots_payload_idx WHERE NOT EXISTS"
     " (SELECT 1 FROM payloads p WHERE p.sha256 = s.payload_sha256)")),
)


class _Integrity:
    """SQLite's integrity check and the foreign keys, on a connection and thread of their own.

    SQLite runs each statement without the GIL, so on a machine with a second
    core they overlap the payload check instead of preceding it.
    """

    def __init__(self, location: ArchiveLocation) -> None:
        import threading
        import time

        self.conn = open_readonly(location, check_version=False)
        self.conn.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")
        self.started = time.monotonic()
        self.integrity: list[str] = []
        self.foreign: list[tuple[str, int, str]] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="yarp-verify-integrity", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            rows = [r[0] for r in self.conn.execute(f"PRAGMA integrity_check({MAX_INTEGRITY_ROWS})")]
            if rows != ["ok"]:
                self.integrity = [line for row in rows for line in str(row).splitlines()
                                  if not line.startswith("***")]
            for child, parent, sql in _FOREIGN_KEYS:
                self.foreign += [(child, rowid, parent) for (rowid,) in self.conn.execute(sql)]
        except BaseException as exc:  # noqa: BLE001 - raised again on the caller's thread
            self.error = exc

    def wait(self, tick: Callable[[float], None] | None = None) -> None:
        """Return when both checks are done (their failure is raised here); `tick(seconds)` while waiting."""
        import time

        while self.thread.is_alive():
            self.thread.join(0.25)
            if tick is not None and self.thread.is_alive():
                tick(time.monotonic() - self.started)
        self.conn.close()
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        """Interrupt and forget the checks (the verification failed or was interrupted)."""
        if self.thread.is_alive():
            self.conn.interrupt()
        self.thread.join()
        self.conn.close()


def verify_archive(location: ArchiveLocation, *, progress: Progress | None = None,
                   phase: Callable[[str], None] | None = None) -> VerifyReport:
    """Run every check and return the report.

    `progress(payloads checked, payloads, bytes checked, bytes)` follows the
    payload check; `phase(text)` names the other steps as they run (the
    integrity check, with the seconds it has taken, while the payloads are
    done and it still runs). Raises only `ArchiveMissing` (nothing to verify)
    and `ArchiveBusy`-type operational errors; every finding about the
    archive is a report problem.
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
        _run_checks(conn, location, report, progress, phase or (lambda text: None))
    except CorruptArchive as exc:
        report.problems.append(exc.message)
    finally:
        conn.close()
    return report


def _run_checks(conn: sqlite3.Connection, location: ArchiveLocation, report: VerifyReport,
                progress: Progress | None, phase: Callable[[str], None]) -> None:
    """Every check after the permissions; problems are gathered per check and reported in the
    specification's order (integrity, foreign keys, values, references, payloads, required snapshots)."""
    integrity = None
    try:
        conn.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            report.problems.append(f"archive schema version {version} is not supported (expected {SCHEMA_VERSION})")
            return
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing_tables = [t for t in TABLES if t not in present]
        if missing_tables:
            report.problems.append(f"archive is missing table(s): {', '.join(missing_tables)}")
            return
        phase("checking SQLite integrity, calls and snapshots")
        integrity = _Integrity(location)
        head, refs = VerifyReport(), VerifyReport()  # reported after the integrity check's findings
        missing = _check_calls(conn, head, refs)
        _check_snapshots(conn, head)
        head.problems += refs.problems
        tail = VerifyReport()  # payloads and required snapshots
        payloads = _Problems(tail, "payload")
        check = PayloadCheck(conn, payloads.add, progress)
        check.run()
        payloads.close()
        report.payloads_checked, report.payload_bytes_checked = check.checked, check.checked_bytes
        _required(tail, missing)
        report.incomplete_calls = conn.execute(
            "SELECT count(*) FROM tool_calls WHERE status = 'started'").fetchone()[0]
        integrity.wait(lambda seconds: phase(f"checking SQLite integrity ({seconds:.0f} s)"))
        found, integrity = integrity, None
        report.problems.extend(f"SQLite integrity check: {line}" for line in found.integrity)
        foreign = _Problems(report, "foreign key")
        for table, rowid, parent in found.foreign:
            foreign.add(f"{table} row {rowid} references a missing {parent} row")
        foreign.close()
        report.problems.extend(head.problems)
        report.problems.extend(tail.problems)
        report.unreferenced_payloads = _unreferenced(conn, dangling=bool(found.foreign))
    except sqlite3.Error as exc:
        # CorruptArchive becomes a report problem in verify_archive; busy and
        # other operational errors propagate with their own exit status.
        raise map_error(exc, "verifying archive") from None
    finally:
        if integrity is not None:
            integrity.stop()


def _unreferenced(conn: sqlite3.Connection, dangling: bool) -> int:
    """Payloads no snapshot references. With every snapshot's payload present (no dangling foreign
    key), that is the payloads less the distinct digests the snapshots name, counted along their
    index; otherwise each payload is looked up."""
    if not dangling:
        payloads = conn.execute("SELECT count(*) FROM payloads").fetchone()[0]
        named = conn.execute("SELECT count(DISTINCT payload_sha256) FROM snapshots").fetchone()[0]
        return payloads - named
    return conn.execute("SELECT count(*) FROM payloads WHERE NOT EXISTS"
                        " (SELECT 1 FROM snapshots s WHERE s.payload_sha256 = payloads.sha256)").fetchone()[0]


def render(report: VerifyReport) -> tuple[str, str]:
    """(stdout text, stderr text) in the reference's form."""
    out = f"incomplete_calls: {report.incomplete_calls}\n"
    if report.unreferenced_payloads:
        out += f"unreferenced_payloads: {report.unreferenced_payloads}\n"
    if report.ok:
        return out + "archive: ok\n", ""
    return out, "".join(f"yarp: archive verification failed: {p}\n" for p in report.problems)
