"""What every transcript parser shares: pairing calls with results, and the tally.

A parser reads one file's records in order. A call waits in `pending` until
its result arrives; then it is complete and goes to `ready`. Pairing uses the
agent's own call ids only, within one file — never time or position, which
could pair the wrong result. What cannot be paired is counted and reported
with its line number, never guessed.

Pending calls survive between runs in the file's checkpoint (a session still
running); once the file has been idle for the settle time they are recorded
as calls without a result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from yarp.wire import operations as ops
from yarp.wire.operations import ImportedCall, imported_call_json
from yarp.wire.validation import parse_imported_call

#: Issue lines kept per file in a report (counts are always exact).
MAX_REPORTED_LINES = 20


@dataclass
class Tally:
    """Counts for a report; never content."""

    files: int = 0
    files_unchanged: int = 0
    files_skipped: int = 0
    files_changed_during_read: int = 0
    files_reset: int = 0
    sessions: set = field(default_factory=set)
    calls_found: int = 0
    calls_new: int = 0
    calls_existing: int = 0
    calls_taken_before: int = 0
    calls_refused: int = 0
    calls_without_result: int = 0
    calls_pending: int = 0
    results_without_call: int = 0
    corrupt_lines: int = 0
    oversized_lines: int = 0
    unknown_records: Counter = field(default_factory=Counter)
    issues: list = field(default_factory=list)
    issues_per_file: Counter = field(default_factory=Counter)

    def issue(self, path: str, line: int, reason: str) -> None:
        """Count an issue at `path:line`; only the first `MAX_REPORTED_LINES` of each file are kept for the report."""
        self.issues_per_file[path] += 1
        if self.issues_per_file[path] <= MAX_REPORTED_LINES:
            self.issues.append((path, line, reason))

    def to_json(self) -> dict:
        """The counts as the report's JSON fields, with the kept issue lines."""
        return {
            "files": self.files, "filesUnchanged": self.files_unchanged, "filesSkipped": self.files_skipped,
            "filesChangedDuringRead": self.files_changed_during_read, "filesReread": self.files_reset,
            "sessions": len(self.sessions), "callsFound": self.calls_found, "callsNew": self.calls_new,
            "callsAlreadyArchived": self.calls_existing, "callsImportedBefore": self.calls_taken_before,
            "callsRefused": self.calls_refused, "callsWithoutResult": self.calls_without_result,
            "callsWaitingForResult": self.calls_pending, "resultsWithoutCall": self.results_without_call,
            "corruptLines": self.corrupt_lines, "oversizedLines": self.oversized_lines,
            "unknownRecords": dict(sorted(self.unknown_records.items())),
            "issues": [{"file": p, "line": n, "reason": r} for p, n, r in self.issues],
        }


def iso_ms(value) -> int | None:
    """Unix milliseconds of an RFC 3339 timestamp (or of epoch milliseconds), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= ops.MAX_TIME_MS:
        return value
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    ms = int(moment.timestamp() * 1000)
    return ms if ms >= 0 else None


class TranscriptParser(ABC):
    """Pairing and bookkeeping; subclasses read their agent's records."""

    agent = ""
    #: Bumped when the mapping changes: every file of the agent is then re-read.
    version = 1

    def __init__(self, path: str, account: str, tally: Tally, context: dict | None, pending: list | None) -> None:
        self.path = path
        self.account = account
        self.tally = tally
        self.context = dict(context or {})
        self.pending: dict[str, list[dict]] = {}
        for entry in pending or ():
            entry["call"] = parse_imported_call(entry["call"], "pending")
            self.pending.setdefault(entry["raw"], []).append(entry)
        self.ready: list[ImportedCall] = []

    # --- subclasses call these ---------------------------------------------------------

    def session(self, session_id: str, started_at_ms: int | None) -> ops.Session:
        """The session `session_id` of this parser's agent and account, counted once per report."""
        self.tally.sessions.add((self.agent, session_id))
        return ops.Session(self.agent, self.account, session_id, started_at_ms)

    def add_call(self, raw_id: str, call: ImportedCall, **extra) -> None:
        """A call found in the file, waiting under its raw id for its result."""
        self.tally.calls_found += 1
        self.pending.setdefault(raw_id, []).append({"raw": raw_id, "call": call, **extra})

    def take_pending(self, raw_id: str, choose=None) -> dict | None:
        """Remove and return a call waiting under `raw_id` (the first `choose` accepts, else the first), or None.

        Several calls can wait under one raw id; `choose` picks among them.
        """
        waiting = self.pending.get(raw_id)
        if not waiting:
            return None
        index = 0
        if choose is not None:
            matches = [i for i, entry in enumerate(waiting) if choose(entry)]
            index = matches[0] if matches else 0
        entry = waiting.pop(index)
        if not waiting:
            del self.pending[raw_id]
        return entry

    def complete(self, call: ImportedCall, result, is_error: bool, finished_at_ms: int | None,
                 source_output_path: str | None = None, result_text: str | None = None, *, executed: bool = True,
                 source_output: str | None = None, result_text_completeness: str = "complete") -> None:
        """A paired call, with its result, is ready to send (the fields as `ImportedCall` has them).

        A missing finish time, or one before the start, becomes the start time.
        """
        finished = finished_at_ms if finished_at_ms is not None else call.call.started_at_ms
        self.ready.append(ImportedCall(call.session, call.call, call.input, result, True, bool(is_error),
                                       max(finished, call.call.started_at_ms), source_output_path, result_text,
                                       bool(executed), source_output, result_text_completeness))

    def unmatched_result(self, line: int) -> None:
        """Count and report a result whose call is not in this file."""
        self.tally.results_without_call += 1
        self.tally.issue(self.path, line, "result without a call in this file")

    def unknown(self, kind: str) -> None:
        """Count a record kind this parser does not know, by agent and kind."""
        self.tally.unknown_records[f"{self.agent}:{kind[:40]}"] += 1

    # --- the importer calls these --------------------------------------------------------

    @abstractmethod
    def feed(self, obj: dict, line: int) -> None:
        """Take one decoded record at `line`; each agent's parser reads its own format."""

    def end_of_read(self, settled: bool) -> None:
        """Every complete line is read; `settled`: the file has been idle for the settle time."""
        if settled:
            self.settle()

    def settle(self) -> None:
        """The file is idle: calls still waiting will never get a result here."""
        for waiting in self.pending.values():
            for entry in waiting:
                self.tally.calls_without_result += 1
                self.ready.append(entry["call"])
        self.pending.clear()

    def pending_json(self) -> list:
        """The calls still waiting for a result, as JSON for the file's checkpoint (and counted as waiting)."""
        out = []
        for waiting in self.pending.values():
            for entry in waiting:
                out.append({**entry, "call": imported_call_json(entry["call"])})
        self.tally.calls_pending += len(out)
        return out

    def take_ready(self) -> list[ImportedCall]:
        """Remove and return the calls ready to send."""
        ready, self.ready = self.ready, []
        return ready


def drainer(agent: str, parser: TranscriptParser, sender, tally: Tally, taken: set[str], new_taken: list[str],
            key=lambda call: call.call.source_call_id):
    """A function that hands the parser's complete calls to `sender.add`, each `key` of the file once
    (new keys to `new_taken`).

    The key is the call id; a source holding several sessions keys by session and call id.
    """

    def drain() -> None:
        for call in parser.take_ready():
            tally.sessions.add((agent, call.session.source_session_id))
            cid = key(call)
            if cid in taken:
                tally.calls_taken_before += 1
                continue
            taken.add(cid)
            new_taken.append(cid)
            sender.add(call)

    return drain
