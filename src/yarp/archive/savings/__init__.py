"""What YARP kept out of the agent's view: bytes produced, shown and withheld.

Every number comes from snapshot rows and the stored `uncompressed_byte_length`
of their payloads, so the report never decompresses an output payload. Each
finished call is classified and sized once, by one statement (`project_sql`)
that writes its row to the savings projection (`savings_projection`), and
summed from there by another (`report_sql`), both inside SQLite: Python sees a
few rows per group, and memory does not grow with the archive. Only the small
`input/before` payloads of shell calls are read, each distinct one once, to
name their program when a grouping or the top-commands list needs it; the
names are kept in the projection too.

How one finished call is counted (the rule `docs/commands.md` documents):

- **wrapped** (it has `stdout/after` or `stderr/after`): YARP's runner produced
  the output the tool returned. produced = stdout/before + stderr/before;
  withheld = (streams before − streams after) + (result/before − result/after).
  The second term is what a later cap or summary removed from the result.
- **not executed** (no `result/before`): no tool output existed; counted apart.
- **rewritten** (`result/after` is another payload than `result/before`): the
  adapter handed on YARP's result. produced = result/before, shown = result/after.
- **imported** (its `result/before` was captured after the call finished): a
  live capture commits the result before it finishes the call, so the call
  came from a transcript; its view is unknown.
- **unchanged** (same payload before and after): counted with nothing withheld
  when the session's agent hands `result/after` to the model itself
  (`VIEW_REPLACING_AGENTS`); otherwise the host kept its own output (a hook
  that cannot replace a result) and the view is unknown.

Calls with an unknown view are reported separately and never as savings.
shown = produced − withheld for every counted call. Result sizes are the bytes
of canonical JSON, stream sizes the exact stream bytes.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from yarp.errors import ArchiveBusy, DataError
from yarp.limits import READER_MMAP_BYTES
from yarp.paths import ArchiveLocation
from yarp.archive.savings import projection as savings_projection
from yarp.archive.savings.projection import ARCHIVE, drop_stale
from yarp.archive.sqlite import map_error

#: Bytes per token for the estimate: the common rule of thumb for English text
#: and code under current tokenizers. An estimate, labelled as such.
BYTES_PER_TOKEN = 4
GROUPINGS = ("tool", "program", "day", "session")
#: Agents whose adapter returns `result/after` to the model as the visible
#: result (the Pi extension; a person's `yarp run`). Claude Code and Codex hooks
#: cannot replace a tool's result, so their unchanged calls have an unknown view.
VIEW_REPLACING_AGENTS = frozenset({"pi", "yarp-run"})
#: Tool names (lower-cased) whose input names a shell command.
SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell", "shell_command"})
#: Words before the program that do not name it.
_PREFIX_WORDS = frozenset({"sudo", "env", "time", "command", "exec", "nohup", "nice", "timeout", "builtin"})
#: Leading commands that only prepare the one that produces the output.
_SETUP_PROGRAMS = frozenset({"cd", "pushd", "export", "set", "source", ".", "unset", "true"})
#: Programs whose first word names what they do (`git log`, `cargo test`).
_SUBCOMMAND_PROGRAMS = frozenset({
    "git", "cargo", "npm", "pnpm", "yarn", "bun", "deno", "go", "docker", "kubectl", "uv", "pip", "pip3",
    "poetry", "gh", "dotnet", "mvn", "gradle", "make", "npx", "rustup", "helm", "terraform", "brew", "apt",
    "apt-get", "systemctl", "yarp", "just", "nix", "bazel", "hatch", "tox", "nox", "conda",
})
_MAX_LABEL_CHARS = 48
#: SQLite page cache for the report's connection, KiB.
SAVINGS_CACHE_KIB = 16 * 1024

# Classes of finished calls.
COUNTED = "counted"
NOT_EXECUTED = "not_executed"
IMPORTED = "imported"
HOST_VIEW = "host_view"
INCOMPLETE = "incomplete"

#: The row of each finished call of the window that the projection lacks,
#: walked in the order of `tool_calls`: its `result` snapshots and whether it
#: has a stream after YARP come from primary-key lookups, and a payload's size
#: is read only where the rule needs it: result/before unless the call is
#: wrapped and its result unchanged, result/after only when it is another
#: payload, each stream/before, and a stream/after only when it is another
#: payload than its stream/before. (`BETWEEN 'stderr' AND 'stdout'` holds
#: exactly the two stream subjects of the schema's list: one index range.)
#: Each level is a co-routine (`LIMIT -1` keeps SQLite from flattening it into
#: the next) so that a value computed once, such as the call's kind, is read by
#: the levels above instead of being recomputed at each use. `{access}` picks a
#: rowid-ordered scan of every call or, for a small window, the start-time
#: index. A shell call keeps its input's digest, to be named by program.
_PROJECT = """
WITH c0 AS (
  SELECT c.id AS id, c.archive_ref AS ref, c.tool_name AS tool_name,
    rb.payload_sha256 AS rbs, rb.captured_at_ms AS rcap, c.finished_at_ms AS fin,
    ra.payload_sha256 IS NOT NULL AND ra.payload_sha256 IS NOT rb.payload_sha256 AS rewritten,
    se.agent IN ({replacing}) AS replacing, pra.uncompressed_byte_length AS ral,
    EXISTS (SELECT 1 FROM snapshots x WHERE x.tool_call_id = c.id
      AND x.subject BETWEEN 'stderr' AND 'stdout' AND x.stage = 'after') AS wrapped
  FROM tool_calls c {access} JOIN sessions se ON se.id = c.session_id
  LEFT JOIN snapshots rb ON rb.tool_call_id = c.id AND rb.subject = 'result' AND rb.stage = 'before'
  LEFT JOIN snapshots ra ON ra.tool_call_id = c.id AND ra.subject = 'result' AND ra.stage = 'after'
  LEFT JOIN payloads pra ON pra.sha256 = CASE WHEN ra.payload_sha256 IS NOT rb.payload_sha256
    THEN ra.payload_sha256 END
  WHERE c.started_at_ms >= ?1 AND c.started_at_ms < ?2 AND c.status = 'finished'{split}
    AND NOT EXISTS (SELECT 1 FROM main.call_savings k WHERE k.id = c.id AND k.archive_ref = c.archive_ref)
  LIMIT -1
),
c1 AS (
  SELECT c0.id AS id, ref, tool_name, wrapped, rewritten, ral, prb.uncompressed_byte_length AS rbl, {kind} AS kind,
    coalesce(pob.uncompressed_byte_length, 0) + coalesce(peb.uncompressed_byte_length, 0) AS sb,
    {stdout_after} + {stderr_after} AS sa
  FROM c0
  LEFT JOIN payloads prb ON prb.sha256 = CASE WHEN NOT wrapped OR rewritten THEN rbs END
  {streams}
  LIMIT -1
),
c2 AS (
  SELECT id, ref, tool_name, kind,
    CASE WHEN kind = 'not_executed' THEN 0 WHEN wrapped THEN sb ELSE rbl END AS produced,
    CASE WHEN kind <> 'counted' THEN 0
      ELSE CASE WHEN wrapped THEN sb - sa ELSE 0 END + CASE WHEN rewritten THEN rbl - ral ELSE 0 END
    END AS withheld
  FROM c1
  LIMIT -1
)
{insert}
SELECT id, ref, kind, produced, withheld, CASE WHEN lower(tool_name) IN ({shell}) THEN
    (SELECT i.payload_sha256 FROM snapshots i WHERE i.tool_call_id = id AND i.subject = 'input' AND i.stage = 'before')
  END
FROM c2
"""
#: The classification of `docs/commands.md` for a finished call, in SQL (over `c0`).
_KIND = """CASE WHEN wrapped THEN 'counted' WHEN rbs IS NULL THEN 'not_executed'
    WHEN rewritten THEN 'counted' WHEN fin IS NOT NULL AND rcap > fin THEN 'imported'
    WHEN replacing THEN 'counted' ELSE 'host_view' END"""
#: A wrapped call's stream snapshots: joined only when the call is wrapped
#: (a NULL key skips the lookup), the after payload's size read only when it
#: differs from the before payload.
_STREAM_JOINS = """
  LEFT JOIN snapshots {s}b ON {s}b.tool_call_id = CASE WHEN wrapped THEN c0.id END
    AND {s}b.subject = '{subject}' AND {s}b.stage = 'before'
  LEFT JOIN snapshots {s}a ON {s}a.tool_call_id = CASE WHEN wrapped THEN c0.id END
    AND {s}a.subject = '{subject}' AND {s}a.stage = 'after'
  LEFT JOIN payloads p{s}b ON p{s}b.sha256 = {s}b.payload_sha256
  LEFT JOIN payloads p{s}a ON p{s}a.sha256 = CASE WHEN {s}a.payload_sha256 IS NOT {s}b.payload_sha256
    THEN {s}a.payload_sha256 END"""
_STREAM_AFTER = """CASE WHEN {s}a.payload_sha256 IS NULL THEN 0
      WHEN {s}a.payload_sha256 IS {s}b.payload_sha256 THEN p{s}b.uncompressed_byte_length
      ELSE p{s}a.uncompressed_byte_length END"""
#: The two streams and their table aliases in `_STREAM_JOINS`.
_STREAMS = (("o", "stdout"), ("e", "stderr"))

#: Inputs of the window's shell calls that a report names but the projection has
#: no label for, in the order of the calls: inputs are then read from the
#: payload table roughly in the order they were written (about 40% less time
#: than in digest order). Repeats are dropped by the caller.
_UNLABELLED = """
SELECT k.input_sha256 FROM tool_calls c {access}
JOIN main.call_savings k ON k.id = c.id AND k.archive_ref = c.archive_ref
WHERE c.started_at_ms >= ?1 AND c.started_at_ms < ?2 AND c.status = 'finished' AND k.input_sha256 IS NOT NULL
  AND ({by_program} OR (k.kind = 'counted' AND k.withheld > 0))
  AND NOT EXISTS (SELECT 1 FROM main.input_labels l WHERE l.input_sha256 = k.input_sha256)
"""
#: The report: every call of the window with its projected row (none while it
#: is unfinished) and, where the report names it, its input's labels, summed
#: per group, kind and label. A shell call is named by its input when the
#: report groups by program or lists it among the top commands.
_REPORT = """
SELECT c.tool_name, {group}, CASE WHEN c.status = 'finished' THEN k.kind ELSE 'incomplete' END,
  k.withheld > 0, l.program, l.command, count(*), ifnull(sum(k.produced), 0), ifnull(sum(k.withheld), 0)
FROM tool_calls c {access}
LEFT JOIN main.call_savings k ON k.id = CASE WHEN c.status = 'finished' THEN c.id END
  AND k.archive_ref = c.archive_ref
LEFT JOIN main.input_labels l ON l.input_sha256 = CASE WHEN {by_program} OR (k.kind = 'counted' AND k.withheld > 0)
  THEN k.input_sha256 END
WHERE c.started_at_ms >= ?1 AND c.started_at_ms < ?2
GROUP BY 1, 2, 3, 4, 5, 6
"""
#: Below one call in this many, a window walks the start-time index instead
#: of scanning every call.
_INDEX_RATIO = 8
#: The bounds of a report without --since and --until.
_NO_WINDOW = (-(2**63), 2**63 - 1)
_GROUP_SQL = {"tool": "NULL", "program": "NULL", "day": "c.started_at_ms / 86400000", "session": "c.session_id"}


def _quoted(names) -> str:
    return ", ".join("'" + name.replace("'", "''") + "'" for name in sorted(names))


def _access(windowed: bool) -> str:
    return "" if windowed else "NOT INDEXED"


_INSERT = "INSERT OR REPLACE INTO main.call_savings (id, archive_ref, kind, produced, withheld, input_sha256)"


def project_sql(windowed: bool, split: bool = False, insert: bool = True) -> str:
    """The statement that adds the projection's missing rows for the calls started in [?1, ?2).

    With `split`, only calls whose id is in [?3, ?4); without `insert`, it
    returns the rows instead of adding them (for a part computed on another
    connection).
    """
    return _PROJECT.format(
        access=_access(windowed), split=" AND c.id >= ?3 AND c.id < ?4" if split else "",
        insert=_INSERT if insert else "", replacing=_quoted(VIEW_REPLACING_AGENTS), kind=_KIND,
        streams="".join(_STREAM_JOINS.format(s=s, subject=subject) for s, subject in _STREAMS),
        stdout_after=_STREAM_AFTER.format(s="o"), stderr_after=_STREAM_AFTER.format(s="e"),
        shell=_quoted(SHELL_TOOLS))


def report_sql(by: str, windowed: bool) -> str:
    """The statement that sums the projection over the calls started in [?1, ?2), grouped by `by`.

    Rows: (tool, group, kind, withheld > 0, program label, command label,
    calls, bytes produced, bytes withheld); labels are NULL where the report
    does not name the call or its input names no command.
    """
    return _REPORT.format(access=_access(windowed), group=_GROUP_SQL[by], by_program="1" if by == "program" else "0")


def unlabelled_sql(by: str, windowed: bool) -> str:
    """The statement listing the input digests a report over [?1, ?2) names but has no labels for."""
    return _UNLABELLED.format(access=_access(windowed), by_program="1" if by == "program" else "0")


#: Input payloads are read this many digests per statement: one statement per
#: distinct input cost 29 µs each, most of a report over 30,000 distinct commands.
_INPUT_CHUNK = 500
_INPUT_SQL = ("SELECT sha256, compression, body, uncompressed_byte_length FROM payloads WHERE sha256 IN ({})")


@dataclass(slots=True)
class Totals:
    """Sums for one group (or for the whole window)."""

    calls: int = 0
    produced: int = 0
    shown: int = 0
    withheld: int = 0
    imported_calls: int = 0
    host_view_calls: int = 0
    view_unknown_bytes: int = 0
    not_executed_calls: int = 0
    incomplete_calls: int = 0

    @property
    def view_unknown_calls(self) -> int:
        """Calls whose shown size is unknown: imported ones, and unchanged calls of hosts that show their own result."""
        return self.imported_calls + self.host_view_calls

    def add(self, kind: str, produced: int, withheld: int, calls: int = 1) -> None:
        """Count one row (or `calls` calls) of `kind`; only counted calls add to produced, shown and withheld bytes."""
        if kind == COUNTED:
            self.calls += calls
            self.produced += produced
            self.withheld += withheld
            self.shown += produced - withheld
        elif kind == IMPORTED:
            self.imported_calls += calls
            self.view_unknown_bytes += produced
        elif kind == HOST_VIEW:
            self.host_view_calls += calls
            self.view_unknown_bytes += produced
        elif kind == NOT_EXECUTED:
            self.not_executed_calls += calls
        else:
            self.incomplete_calls += calls

    def merge(self, other: Totals) -> None:
        """Add another group's sums into this one."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, int | float | None]:
        """The sums as the JSON report's fields, with the withheld ratio and token estimates."""
        return {
            "calls": self.calls,
            "bytes_produced": self.produced,
            "bytes_shown": self.shown,
            "bytes_withheld": self.withheld,
            "withheld_ratio": round(self.withheld / self.produced, 4) if self.produced else None,
            "tokens_produced_estimate": estimate_tokens(self.produced),
            "tokens_shown_estimate": estimate_tokens(self.shown),
            "tokens_withheld_estimate": estimate_tokens(self.withheld),
            "view_unknown_calls": self.view_unknown_calls,
            "view_unknown_imported_calls": self.imported_calls,
            "view_unknown_host_calls": self.host_view_calls,
            "view_unknown_bytes": self.view_unknown_bytes,
            "not_executed_calls": self.not_executed_calls,
            "incomplete_calls": self.incomplete_calls,
        }


@dataclass(slots=True)
class Savings:
    """The report: totals, per-group totals, the commands that withheld most."""

    by: str
    since_ms: int | None
    until_ms: int | None
    total: Totals = field(default_factory=Totals)
    groups: dict[str, Totals] = field(default_factory=dict)
    #: (command, calls, bytes produced, bytes withheld), most withheld first.
    top_commands: list[tuple[str, int, int, int]] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The report as a JSON document: window, totals, groups in display order and the top commands."""
        groups = sorted(self.groups.items(), key=_group_order(self.by))
        return {
            "by": self.by,
            "since_ms": self.since_ms,
            "until_ms": self.until_ms,
            "bytes_per_token": BYTES_PER_TOKEN,
            "total": self.total.as_dict(),
            "groups": [{"group": key} | totals.as_dict() for key, totals in groups],
            "top_commands": [
                {"command": command, "calls": calls, "bytes_produced": produced, "bytes_withheld": withheld,
                 "tokens_withheld_estimate": estimate_tokens(withheld)}
                for command, calls, produced, withheld in self.top_commands
            ],
        }


def estimate_tokens(nbytes: int) -> int:
    """A rough token count for `nbytes` (`BYTES_PER_TOKEN` bytes a token); an estimate, never billing."""
    return round(nbytes / BYTES_PER_TOKEN)


def _group_order(by: str):
    if by == "day":
        return lambda item: item[0]
    return lambda item: (-item[1].withheld, -item[1].produced, item[0])


def _day(ms: int) -> str:
    import time

    return time.strftime("%Y-%m-%d", time.gmtime(ms // 1000))


def _clean(text: str) -> str:
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= _MAX_LABEL_CHARS else text[: _MAX_LABEL_CHARS - 1] + "\u2026"


def _words_of(value: object) -> list[str] | None:
    """The argv a shell tool's input names, from its known shapes."""
    if not isinstance(value, dict):
        return None
    for key in ("command", "cmd", "argv"):
        found = value.get(key)
        if isinstance(found, str):
            return _first_command(found)
        if isinstance(found, list) and found and all(isinstance(w, str) for w in found):
            # `["bash", "-lc", "script"]` runs the script; a plain argv is the command.
            if len(found) >= 3 and found[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and found[1] in ("-c", "-lc"):
                return _first_command(found[2])
            return list(found)
    return None


def _first_command(text: str) -> list[str]:
    """Words of the first command that is not set-up (`cd x && cargo test` -> cargo test)."""
    for separator in ("&&", "||", ";", "\n"):
        text = text.replace(separator, "\0")
    for segment in text.split("\0"):
        words = segment.split("|", 1)[0].split()
        while words and ("=" in words[0] and not words[0].startswith("=") or words[0] in _PREFIX_WORDS):
            words.pop(0)
        if words and words[0] not in _SETUP_PROGRAMS:
            return [w.strip("'\"") for w in words]
    return []


def command_key(tool: str, value: object, *, subcommand: bool) -> str:
    """The program (and for `git`-like programs its first word) a call ran; else its tool."""
    words = _words_of(value) if tool.lower() in SHELL_TOOLS else None
    return (_label(words, subcommand) if words else None) or _clean(tool)


def _label(words: list[str], subcommand: bool) -> str:
    program = words[0].rsplit("/", 1)[-1] or words[0]
    if subcommand and program in _SUBCOMMAND_PROGRAMS:
        rest = [w for w in words[1:] if not w.startswith("-")]
        if rest and len(rest[0]) <= 24 and "/" not in rest[0]:
            return _clean(f"{program} {rest[0]}")
    return _clean(program)


def _labels(conn: sqlite3.Connection, digests: list[bytes]) -> list[tuple[bytes, str | None, str | None]]:
    """(input digest, program label, command label) for each shell input; labels are None
    where the input names no command (the report then names the call by its tool).

    Inputs are read `_INPUT_CHUNK` digests per statement: one statement per
    distinct input cost 29 µs each, most of a report over 30,000 distinct commands.
    """
    from yarp.archive.codec import decode_body, parse_json

    out = []
    for start in range(0, len(digests), _INPUT_CHUNK):
        chunk = digests[start:start + _INPUT_CHUNK]
        for sha, compression, body, length in conn.execute(_INPUT_SQL.format(",".join("?" * len(chunk))), chunk):
            try:
                words = _words_of(parse_json(decode_body(compression, body, length)))
            except (ValueError, DataError):  # damaged or not JSON: verify reports it; the tool names the call
                words = None
            out.append((sha, _label(words, False), _label(words, True)) if words else (sha, None, None))
    return out


def _tune(conn: sqlite3.Connection) -> None:
    # Index pages of the payload digests are revisited by every size lookup;
    # a 16 MiB page cache keeps them instead of re-reading them (about a third
    # less system time on a 300 MB archive).
    conn.execute(f"PRAGMA {ARCHIVE}.cache_size = -{SAVINGS_CACHE_KIB}")
    # Size lookups land at random in the payload table: mapped pages make each
    # lookup a memory copy instead of a read call.
    conn.execute(f"PRAGMA {ARCHIVE}.mmap_size = {READER_MMAP_BYTES}")


def _rows(conn: sqlite3.Connection, by: str, low: int, high: int,
          opener: Callable[[], sqlite3.Connection] | None) -> list[tuple]:
    """The report's rows for calls started in [low, high), after completing the projection.

    One transaction: the calls the projection lacks, the labels the report
    needs, and the sums all see one snapshot of the archive, so every finished
    call summed has its row. The projection's own writes are committed with
    the report: a second report finds them. When many rows are missing (the
    first report over a large archive), `_Half` computes the upper half of
    them on a second connection meanwhile.
    """
    windowed = False
    if (low, high) != _NO_WINDOW:
        in_window = conn.execute(f"SELECT count(*) FROM {ARCHIVE}.tool_calls"
                                 " WHERE started_at_ms >= ? AND started_at_ms < ?", (low, high)).fetchone()[0]
        everything = conn.execute(f"SELECT max(rowid) FROM {ARCHIVE}.tool_calls").fetchone()[0] or 0
        windowed = in_window * _INDEX_RATIO < everything
    half = _Half.start_if_worth(conn, opener, low, high) if opener is not None and not windowed else None
    try:
        conn.execute("BEGIN IMMEDIATE")
        if half is not None:
            conn.execute(project_sql(windowed, split=True), (low, high, _NO_WINDOW[0], half.middle))
            conn.executemany(f"{_INSERT} VALUES (?, ?, ?, ?, ?, ?)", half.result())
        # Every call the parts did not see (all of them, without parts).
        conn.execute(project_sql(windowed), (low, high))
        missing = list(dict.fromkeys(row[0] for row in conn.execute(unlabelled_sql(by, windowed), (low, high))))
        if missing:
            conn.executemany("INSERT INTO main.input_labels (input_sha256, program, command) VALUES (?, ?, ?)",
                             _labels(conn, missing))
        rows = conn.execute(report_sql(by, windowed), (low, high)).fetchall()
        drop_stale(conn)
        conn.execute("COMMIT")
    except BaseException:
        if half is not None:
            half.stop()
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return rows


#: Missing rows from which the first part of a report's projection runs in two halves.
PARALLEL_MIN_CALLS = 20_000


class _Half:
    """The upper half (by call id) of a projection's missing rows, computed on a thread of its own.

    SQLite runs a statement without holding the GIL, so on a machine with a
    second core the halves take about half the time of the whole. The thread
    reads its own snapshot of the archive and returns rows rather than writing:
    the projection has one writer. A row is valid in any later snapshot (a
    finished call never changes), and calls that finish in between are
    projected by the report's own pass.
    """

    def __init__(self, other: sqlite3.Connection, low: int, high: int, middle: int) -> None:
        import threading

        self.middle = middle
        self._other = other
        self._outcome: list = []
        self._thread = threading.Thread(target=self._run, args=(low, high), name="yarp-savings")
        self._thread.start()

    @classmethod
    def start_if_worth(cls, conn: sqlite3.Connection, opener: Callable[[], sqlite3.Connection],
                       low: int, high: int) -> _Half | None:
        """A running half, when at least `PARALLEL_MIN_CALLS` rows are missing and a second core exists."""
        if _cores() < 2:
            return None
        if (low, high) == _NO_WINDOW:
            first, last = conn.execute(f"SELECT min(rowid), max(rowid) FROM {ARCHIVE}.tool_calls").fetchone()
        else:
            first, last = conn.execute(f"SELECT min(id), max(id) FROM {ARCHIVE}.tool_calls"
                                       " WHERE started_at_ms >= ? AND started_at_ms < ?", (low, high)).fetchone()
        if first is None:
            return None
        kept = conn.execute("SELECT count(*) FROM main.call_savings").fetchone()[0]
        if last - first + 1 - kept < PARALLEL_MIN_CALLS:
            return None
        return cls(opener(), low, high, first + (last - first + 1) // 2)

    def _run(self, low: int, high: int) -> None:
        try:
            _tune(self._other)
            self._outcome.append(self._other.execute(
                project_sql(False, split=True, insert=False), (low, high, self.middle, _NO_WINDOW[1])).fetchall())
        except BaseException as exc:  # re-raised on the report's thread
            self._outcome.append(exc)

    def result(self) -> list[tuple]:
        """The half's rows, once its thread has ended; its failure is raised here."""
        self._thread.join()
        self._other.close()
        outcome = self._outcome[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def stop(self) -> None:
        """Stop the half (the report has failed) instead of waiting for it."""
        if self._thread.is_alive():
            self._other.interrupt()
        self._thread.join()
        self._other.close()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def compute(conn: sqlite3.Connection, *, by: str = "tool", since_ms: int | None = None,
            until_ms: int | None = None, top: int = 10,
            opener: Callable[[], sqlite3.Connection] | None = None) -> Savings:
    """The savings of calls started in [since_ms, until_ms), grouped by `by`.

    `conn` is a projection connection (`savings_projection.connect`): the
    archive attached read-only, the per-call rows kept in its main database.
    `opener`, when given, opens another (its projection in memory), on which
    the first report over a large archive computes half the missing rows.
    """
    if by not in GROUPINGS:
        raise ValueError(by)
    report = Savings(by=by, since_ms=since_ms, until_ms=until_ms)
    low = since_ms if since_ms is not None else _NO_WINDOW[0]
    high = until_ms if until_ms is not None else _NO_WINDOW[1]
    try:
        _tune(conn)
        rows = _rows(conn, by, low, high, opener)
        session_labels = (
            {sid: f"{agent}:{source}" for sid, agent, source in
             conn.execute(f"SELECT id, agent, source_session_id FROM {ARCHIVE}.sessions")}
            if by == "session" else {}
        )
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive savings") from None

    groups: dict[str, Totals] = {}
    commands: dict[str, list[int]] = {}
    for tool, grp, kind, positive, program, command, calls, produced, withheld in rows:
        if kind is None:  # a finished call without its row: the transaction above rules it out
            raise DataError("reading archive savings: a finished call has no projected row")
        if by == "tool":
            key = _clean(tool)
        elif by == "program":
            key = program or _clean(tool)
        elif by == "day":
            key = _day(grp * 86_400_000)
        else:
            key = _clean(session_labels.get(grp, str(grp)))
        group = groups.get(key)
        if group is None:
            group = groups[key] = Totals()
        group.add(kind, produced, withheld, calls)
        if kind == COUNTED and positive:
            name = command or _clean(tool)
            entry = commands.get(name)
            if entry is None:
                commands[name] = [calls, produced, withheld]
            else:
                entry[0] += calls
                entry[1] += produced
                entry[2] += withheld
    report.groups = groups
    for group in groups.values():
        report.total.merge(group)
    ranked = sorted(commands.items(), key=lambda item: (-item[1][2], item[0]))[:top]
    report.top_commands = [(name, calls, produced, withheld) for name, (calls, produced, withheld) in ranked]
    return report


def compute_for(location: ArchiveLocation, *, environ: Mapping[str, str] = os.environ, **options) -> Savings:
    """The report (`compute`'s options) for the archive at `location`, through its projection.

    The projection is its file when that can be used; when another report
    keeps the file busy for longer than `savings_projection.BUSY_MS` (a first
    report over a large archive), this report keeps its rows in memory instead.
    """
    for persistent in (True, False):
        conn = savings_projection.connect(location, persistent=persistent, environ=environ)
        try:
            # A second connection computes half of what a first report over a large archive lacks.
            return compute(conn, opener=lambda: savings_projection.connect(location, persistent=False), **options)
        except ArchiveBusy:
            if not savings_projection.is_persistent(conn):
                raise
        finally:
            conn.close()
    raise AssertionError("unreachable")


# --- rendering ------------------------------------------------------------------

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_bytes(n: int) -> str:
    """`n` bytes in binary units for the text report, such as `1.5 MiB`."""
    value = float(n)
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit in _UNITS:
        if value < 1024 or unit == _UNITS[-1]:
            return f"{sign}{value:.0f} {unit}" if unit == "B" else f"{sign}{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def human_count(n: int) -> str:
    """`n` shortened with a k, M or G suffix for the text report."""
    for limit, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if abs(n) >= limit:
            return f"{n / limit:.1f}{suffix}"
    return str(n)


def bar(shown: int, withheld: int, scale: int, width: int, *, ascii_only: bool = False) -> str:
    """One group's bar: shown (dark) then withheld (light), `scale` bytes = `width` cells."""
    full, light = ("#", "-") if ascii_only else ("\u2588", "\u2591")
    if scale <= 0:
        return ""
    shown_cells = round(max(shown, 0) * width / scale)
    withheld_cells = round(max(withheld, 0) * width / scale)
    if withheld > 0 and withheld_cells == 0:
        withheld_cells = 1
    if shown > 0 and shown_cells == 0:
        shown_cells = 1
    return full * shown_cells + light * withheld_cells


def render(report: Savings, *, width: int = 80, color: bool = False, ascii_only: bool = False,
           rows: int = 20) -> str:
    """The terminal report: totals, one bar per group (at most `width` columns), the top commands."""
    total = report.total
    out: list[str] = []
    pct = f" ({total.withheld / total.produced:.1%})" if total.produced else ""
    out.append(f"withheld {human_bytes(total.withheld)} of {human_bytes(total.produced)} produced{pct}, "
               f"~{human_count(estimate_tokens(total.withheld))} tokens")
    out.append(f"shown {human_bytes(total.shown)} in {total.calls:,} calls")
    if total.view_unknown_calls:
        out.append(f"view unknown: {total.view_unknown_calls:,} calls, {human_bytes(total.view_unknown_bytes)}, "
                   f"not counted ({total.host_view_calls:,} host, {total.imported_calls:,} imported)")
    extra = [f"{total.not_executed_calls:,} not executed"] if total.not_executed_calls else []
    extra += [f"{total.incomplete_calls:,} incomplete"] if total.incomplete_calls else []
    if extra:
        out.append("no output to count: " + ", ".join(extra))
    groups = sorted(report.groups.items(), key=_group_order(report.by))
    if groups:
        shown_groups = groups[:rows]
        full, light = ("#", "-") if ascii_only else ("\u2588", "\u2591")
        label_width = min(max(len(key) for key, _ in shown_groups), 24)
        cells = [(human_bytes(t.withheld), f"{t.withheld / t.produced:.0%}" if t.produced else "-",
                  f"+{t.view_unknown_calls:,} unknown" if t.view_unknown_calls else "") for _, t in shown_groups]
        number_width = max(len(c[0]) for c in cells)
        unknown_width = max(len(c[2]) for c in cells)
        bar_width = max(10, width - label_width - number_width - 5 - (unknown_width + 2 if unknown_width else 0) - 4)
        scale = max(max(t.produced, t.shown) for _, t in shown_groups) or 1
        out.append("")
        out.append(f"by {report.by}: {full} shown {light} withheld, withheld bytes and share")
        for (key, t), (withheld, share, unknown) in zip(shown_groups, cells):
            label = key if len(key) <= label_width else key[: label_width - 1] + "\u2026"
            drawn = bar(t.shown, t.withheld, scale, bar_width, ascii_only=ascii_only)
            pad = " " * (bar_width - len(drawn))
            if color and drawn:
                dark = drawn.rstrip(light)
                drawn = f"\x1b[36m{dark}\x1b[0m\x1b[2m{drawn[len(dark):]}\x1b[0m"
            line = f"{label:<{label_width}}  {drawn}{pad}  {withheld:>{number_width}} {share:>4}"
            out.append(f"{line}  {unknown}" if unknown else line)
        if len(groups) > rows:
            out.append(f"\u2026 {len(groups) - rows} more groups (--json lists all)")
    if report.top_commands:
        out.append("")
        out.append("top commands by bytes withheld")
        command_width = min(max(len(c) for c, *_ in report.top_commands), _MAX_LABEL_CHARS)
        for command, calls, produced, withheld in report.top_commands:
            share = f"{withheld / produced:.0%}" if produced else "-"
            out.append(f"  {command:<{command_width}}  {human_bytes(withheld):>10} {share:>4}  {calls:,} calls")
    return "\n".join(out) + "\n"
