"""`yarp import` as a library: read transcripts from their checkpoints, send batches to the broker.

Per file: skip it unchanged (identity, size, mtime and parser version as last
read) without opening it; else verify the checkpoint's prefix hash and resume
at its offset, or re-read from byte 0 when the prefix changed (a rewrite, a
truncation, another file at the path). Complete calls go to the broker in
`import_calls` batches; the checkpoint advances only after every batch of the
file is acknowledged (durable), so a killed import resumes by re-reading and the
broker answers `existing` for what it already holds: no loss, no duplicate.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import orjson

from ..errors import ArchiveMissing, YarpError
from ..paths import ArchiveLocation
from . import batch as wire
from .discovery import AGENTS, default_roots, guess_agent, transcript_files
from .parsing import Tally, TranscriptParser
from .source import LineReader, hash_prefix, open_transcript
from .state import FileCheckpoint, ImportState

#: Seconds a transcript must have been idle before its calls without a result
#: are recorded as such (a session still running may yet answer them).
DEFAULT_SETTLE_S = 600.0
#: Serialised call bytes per batch (the frame limit is far above).
BATCH_BYTES = 16 * 1024 * 1024
#: Seconds allowed per batch request (admission, preparation and commit).
BATCH_TIMEOUT_S = 120.0
#: Minimum seconds between state-file writes while many files complete.
STATE_SAVE_INTERVAL_S = 2.0


def parser_class(agent: str) -> type[TranscriptParser]:
    if agent == "pi":
        from .pi import PiParser

        return PiParser
    if agent == "claude-code":
        from .claude_code import ClaudeCodeParser

        return ClaudeCodeParser
    if agent == "codex":
        from .codex import CodexParser

        return CodexParser
    raise ValueError(agent)


@dataclass
class ImportOptions:
    agents: tuple[str, ...] = AGENTS
    paths: tuple[str, ...] = ()
    since_ms: int | None = None
    dry_run: bool = False
    settle_s: float = DEFAULT_SETTLE_S
    account: str | None = None


def discover(options: ImportOptions, environ=os.environ):
    """(agent, path) for every transcript to consider, each path once."""
    seen = set()
    if options.paths:
        for root in options.paths:
            for path in transcript_files(root):
                agent = options.agents[0] if len(options.agents) == 1 else guess_agent(path)
                if agent in options.agents and path not in seen:
                    seen.add(path)
                    yield agent, path
        return
    for agent in options.agents:
        for root in default_roots(agent, environ):
            for path in transcript_files(root):
                if path not in seen:
                    seen.add(path)
                    yield agent, path


class _Sender:
    """Batches complete calls and sends them to the broker (or counts them in a dry run)."""

    def __init__(self, location: ArchiveLocation, tally: Tally, dry_run: bool, environ) -> None:
        self.location = location
        self.tally = tally
        self.dry_run = dry_run
        self.environ = environ
        self.calls: list[wire.ImportedCall] = []
        self.bytes = 0
        self.client = None
        self.reader = None

    def add(self, call: wire.ImportedCall) -> None:
        self.calls.append(call)
        self.bytes += 256 + _size(call.input) + (_size(call.result) if call.has_result else 0)
        if len(self.calls) >= wire.MAX_BATCH_CALLS or self.bytes >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        calls, self.calls, self.bytes = self.calls, [], 0
        if not calls:
            return
        if self.dry_run:
            self._count_existing(calls)
            return
        if self.client is None:
            from ..client import BrokerClient

            self.client = BrokerClient(self.location, self.environ)
        op = wire.make_operation(calls, int(time.time() * 1000))
        reply = self.client.request(op, time.monotonic() + BATCH_TIMEOUT_S)
        letters = reply.get("calls", "")
        self.tally.calls_new += letters.count(wire.IMPORTED)
        self.tally.calls_existing += letters.count(wire.EXISTING)
        refused = letters.count(wire.REFUSED)
        self.tally.calls_refused += refused

    def _count_existing(self, calls) -> None:
        if self.reader is None:
            from ..sqlite import open_readonly

            try:
                self.reader = open_readonly(self.location)
            except ArchiveMissing:
                self.reader = False
        existing = 0
        if self.reader:
            for c in calls:
                s = c.session
                row = self.reader.execute(
                    "SELECT 1 FROM tool_calls c JOIN sessions s ON s.id = c.session_id WHERE s.agent = ?"
                    " AND s.account = ? AND s.source_session_id = ? AND c.source_call_id = ?",
                    (s.agent, s.account, s.source_session_id, c.call.source_call_id)).fetchone()
                existing += row is not None
        self.tally.calls_existing += existing
        self.tally.calls_new += len(calls) - existing

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.reader:
            self.reader.close()


def _size(value) -> int:
    if isinstance(value, str):
        return len(value) * 2
    try:
        return len(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return 0


def import_transcripts(location: ArchiveLocation, options: ImportOptions, *, environ=os.environ,
                       progress=None) -> Tally:
    """Import every discovered transcript; return the tally (counts, issue lines, no content)."""
    from ..hooks.events import local_account

    account = options.account or local_account()
    tally = Tally()
    state = ImportState.load(location)
    sender = _Sender(location, tally, options.dry_run, environ)
    files = list(discover(options, environ))
    last_save = time.monotonic()
    dirty = False
    try:
        for index, (agent, path) in enumerate(files):
            if progress is not None:
                progress(index, len(files), tally)
            changed = _import_file(agent, path, state, sender, tally, options, account)
            dirty = dirty or changed
            if dirty and not options.dry_run and time.monotonic() - last_save >= STATE_SAVE_INTERVAL_S:
                state.save()
                dirty, last_save = False, time.monotonic()
        if progress is not None:
            progress(len(files), len(files), tally)
    finally:
        sender.close()
    if dirty and not options.dry_run:
        state.save()
    return tally


def _import_file(agent: str, path: str, state: ImportState, sender: _Sender, tally: Tally,
                 options: ImportOptions, account: str) -> bool:
    """Read one transcript from its checkpoint; return whether its checkpoint changed."""
    tally.files += 1
    cls = parser_class(agent)
    cp = state.files.get(path)
    try:
        st = os.lstat(path)
    except OSError:
        tally.files_skipped += 1
        return False
    if options.since_ms is not None and st.st_mtime_ns // 1_000_000 < options.since_ms:
        tally.files_skipped += 1
        return False
    unchanged = (cp is not None and cp.agent == agent and cp.parser_version == cls.version
                 and (cp.device, cp.inode, cp.size, cp.mtime_ns) == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    settled = time.time() - st.st_mtime >= options.settle_s
    if unchanged and not (cp.pending and settled):
        tally.files_unchanged += 1
        tally.calls_pending += len(cp.pending)
        return False
    try:
        fd, ident = open_transcript(path)
    except YarpError as exc:
        tally.files_skipped += 1
        tally.issue(path, 0, exc.message)
        return False
    try:
        hasher = None
        resume = (cp is not None and cp.agent == agent and cp.parser_version == cls.version
                  and (cp.device, cp.inode) == (ident.device, ident.inode) and ident.size >= cp.offset)
        if resume:
            hasher = hash_prefix(fd, cp.offset)
            resume = hasher is not None and hasher.hexdigest() == cp.prefix_sha256
        taken = set(cp.taken) if cp is not None else set()
        if resume:
            parser = cls(path, account, tally, cp.context, cp.pending)
            reader = LineReader(fd, cp.offset, ident.size, cp.lines, hasher)
        else:
            if cp is not None:
                tally.files_reset += 1
            import hashlib

            parser = cls(path, account, tally, None, None)
            reader = LineReader(fd, 0, ident.size, 0, hashlib.sha256())
        new_taken: list[str] = []

        def drain() -> None:
            for call in parser.take_ready():
                tally.sessions.add((agent, call.session.source_session_id))
                cid = call.call.source_call_id
                if cid in taken:
                    tally.calls_taken_before += 1
                    continue
                taken.add(cid)
                new_taken.append(cid)
                sender.add(call)

        loads = orjson.loads
        for _offset, line, raw in reader:
            if not raw.strip():
                continue
            try:
                obj = loads(raw)
            except orjson.JSONDecodeError:
                tally.corrupt_lines += 1
                tally.issue(path, line, "line is not valid JSON")
                continue
            if not isinstance(obj, dict):
                tally.corrupt_lines += 1
                tally.issue(path, line, "line is not a JSON object")
                continue
            try:
                parser.feed(obj, line)
            except (TypeError, ValueError, AttributeError, KeyError, YarpError):
                tally.corrupt_lines += 1
                tally.issue(path, line, "record has an unexpected shape")
                continue
            if parser.ready:
                drain()
        for line in reader.oversized:
            tally.oversized_lines += 1
            tally.issue(path, line, "line is longer than the frame limit")
        parser.end_of_read(settled)
        drain()
        sender.flush()
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (ident.device, ident.inode) or after.st_size < reader.offset:
            tally.files_changed_during_read += 1
            tally.issue(path, 0, "file changed while it was read; it is read again next time")
            return False
        if options.dry_run:
            tally.calls_pending += sum(len(w) for w in parser.pending.values())
            return False
        state.files[path] = FileCheckpoint(
            agent, ident.device, ident.inode, ident.size, ident.mtime_ns, cls.version, reader.offset, reader.line,
            reader.hasher.hexdigest(), parser.context, parser.pending_json(),
            (cp.taken if cp is not None else []) + new_taken,
        )
        return True
    finally:
        os.close(fd)
