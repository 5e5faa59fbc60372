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

import hashlib
import os
import queue
import threading
import time
from dataclasses import dataclass

import orjson

from yarp import json_text
from yarp.errors import ArchiveMissing, DataError, YarpError
from yarp.limits import MAX_IMPORT_BATCH_CALLS
from yarp.paths import ArchiveLocation
from yarp.transcripts.batch import EXISTING, IMPORTED, REFUSED
from yarp.transcripts.discovery import (
    AGENTS,
    default_roots,
    guess_agent,
    is_session_file,
    store_names,
    transcript_files,
)
from yarp.transcripts.parsing import Tally, TranscriptParser, drainer
from yarp.transcripts.source import FileIdentity, LineReader, hash_prefix, open_transcript
from yarp.transcripts.state import FileCheckpoint, ImportState
from yarp.wire import operations as ops

#: Seconds a transcript must have been idle before its calls without a result
#: are recorded as such (a session still running may yet answer them).
DEFAULT_SETTLE_S = 600.0
#: Serialised call bytes per batch (the frame limit is far above).
BATCH_BYTES = 8 * 1024 * 1024
#: Seconds allowed per batch request (admission, preparation and commit).
BATCH_TIMEOUT_S = 120.0
#: Lines between progress updates inside one large transcript.
PROGRESS_LINES = 20_000
#: Minimum seconds between state-file writes while many files complete (and at the end).
STATE_SAVE_INTERVAL_S = 2.0


def parser_class(agent: str) -> type[TranscriptParser]:
    """The transcript parser for `agent` (its `transcripts` part's `Parser`), imported only when needed;
    raises `ValueError` for an agent without one."""
    from yarp import agents

    parser = getattr(agents.part(agent, "transcripts"), "Parser", None) if agent in AGENTS else None
    if parser is None:
        raise ValueError(agent)
    return parser


@dataclass
class ImportOptions:
    """What `yarp import` reads and how: agents, paths, time window, dry run, settle time and account."""

    agents: tuple[str, ...] = AGENTS
    paths: tuple[str, ...] = ()
    since_ms: int | None = None
    dry_run: bool = False
    settle_s: float = DEFAULT_SETTLE_S
    account: str | None = None


def discover(options: ImportOptions, environ=os.environ):
    """(agent, path) for every transcript to consider, each path once."""
    seen = set()
    stores = store_names(options.agents)
    if options.paths:
        for root in options.paths:
            for path in transcript_files(root, stores):
                agent = options.agents[0] if len(options.agents) == 1 else guess_agent(path)
                if agent in options.agents and path not in seen and (path == os.path.abspath(root)
                                                                     or is_session_file(agent, path)):
                    seen.add(path)
                    yield agent, path
        return
    for agent in options.agents:
        for root in default_roots(agent, environ):
            for path in transcript_files(root, stores):
                if path not in seen and is_session_file(agent, path):
                    seen.add(path)
                    yield agent, path


class _Sender:
    """Batches complete calls and sends them to the broker (or counts them in a dry run).

    Up to `IN_FLIGHT` batches travel at once, each on its own connection, so
    the broker prepares one batch while it commits another and this process
    parses the next. A file's checkpoint is applied only once every batch
    holding one of its calls has been acknowledged (`when_sent`).
    """

    IN_FLIGHT = 2

    def __init__(self, location: ArchiveLocation, tally: Tally, dry_run: bool, environ) -> None:
        self.location = location
        self.tally = tally
        self.dry_run = dry_run
        self.environ = environ
        self.calls: list[ops.ImportedCall] = []
        self.bytes = 0
        self.reader = None
        self.enqueued = 0
        self.done: set[int] = set()
        self.acked = 0  # every batch numbered <= acked is acknowledged
        self.waiting: list[tuple[int, object]] = []
        self.error: BaseException | None = None
        self.lock = threading.Lock()
        self.queue: queue.Queue = queue.Queue(maxsize=1)
        self.threads: list[threading.Thread] = []

    def add(self, call: ops.ImportedCall) -> None:
        self.calls.append(call)
        self.bytes += 256 + _size(call.input) + (_size(call.result) if call.has_result else 0) \
            + len(call.result_text or "") + len(call.source_output or "")
        if len(self.calls) >= MAX_IMPORT_BATCH_CALLS or self.bytes >= BATCH_BYTES:
            self.flush()

    def when_sent(self, action) -> None:
        """Run `action` once every call added so far is acknowledged."""
        needed = self.enqueued + (1 if self.calls else 0)
        with self.lock:
            if needed <= self.acked:
                action()
            else:
                self.waiting.append((needed, action))
        self._raise()

    def flush(self) -> None:
        calls, self.calls, self.bytes = self.calls, [], 0
        if not calls:
            return
        self.enqueued += 1
        if self.dry_run:
            self._count_existing(calls)
            self._acknowledge(self.enqueued)
            return
        if not self.threads:
            self.threads = [threading.Thread(target=self._send_loop, daemon=True) for _ in range(self.IN_FLIGHT)]
            for thread in self.threads:
                thread.start()
        self._raise()
        self.queue.put((self.enqueued, ops.import_calls(calls, int(time.time() * 1000))))

    def _send_loop(self) -> None:
        from yarp.clients.broker import BrokerClient

        client = BrokerClient(self.location, self.environ)
        try:
            while True:
                item = self.queue.get()
                if item is None:
                    return
                number, op = item
                try:
                    if self.error is None:
                        self._send(client, list(op.calls), op.captured_at_ms)
                        self._acknowledge(number)
                except BaseException as exc:  # handed to the main thread, which raises it
                    self.error = exc
                finally:
                    self.queue.task_done()
        finally:
            client.close()

    def _send(self, client, calls: list, captured_at_ms: int) -> None:
        """Send one batch; a batch the broker refuses as invalid is split until the bad calls are alone.

        One call the archive cannot hold (a JSON value canonical JSON refuses,
        nesting beyond the limit) must not keep every other call of its batch
        out; it is counted as refused and reported by identity, never content.
        """
        op = ops.import_calls(calls, captured_at_ms)
        try:
            reply = client.request(op, time.monotonic() + BATCH_TIMEOUT_S)
        except DataError as exc:
            if len(calls) > 1:
                half = len(calls) // 2
                self._send(client, calls[:half], captured_at_ms)
                self._send(client, calls[half:], captured_at_ms)
                return
            c = calls[0]
            with self.lock:
                self.tally.calls_refused += 1
                self.tally.issue(f"{c.session.agent} session {c.session.source_session_id[:80]}", 0,
                                 f"call {c.call.source_call_id[:80]} refused: {exc.message}")
            return
        letters = reply.get("calls", "")
        with self.lock:
            self.tally.calls_new += letters.count(IMPORTED)
            self.tally.calls_existing += letters.count(EXISTING)
            self.tally.calls_refused += letters.count(REFUSED)

    def _acknowledge(self, number: int) -> None:
        with self.lock:
            self.done.add(number)
            while self.acked + 1 in self.done:
                self.acked += 1
                self.done.discard(self.acked)
            ready = [action for needed, action in self.waiting if needed <= self.acked]
            self.waiting = [(n, a) for n, a in self.waiting if n > self.acked]
            for action in ready:
                action()

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def finish(self) -> None:
        """Send what is left and wait for every acknowledgement."""
        self.flush()
        if self.threads:
            self.queue.join()
        self._raise()

    def _count_existing(self, calls) -> None:
        if self.reader is None:
            from yarp.archive.sqlite import open_readonly

            try:
                self.reader = open_readonly(self.location)
            except ArchiveMissing:
                self.reader = False
        existing = 0
        if self.reader:
            from yarp.archive.recovery.lookup import call_by_source

            for c in calls:
                s = c.session
                existing += call_by_source(self.reader, s.agent, s.account, s.source_session_id,
                                           c.call.source_call_id) is not None
        self.tally.calls_existing += existing
        self.tally.calls_new += len(calls) - existing

    def close(self) -> None:
        for _ in self.threads:
            self.queue.put(None)
        for thread in self.threads:
            thread.join(timeout=BATCH_TIMEOUT_S)
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
    from yarp.hooks.events import local_account

    account = options.account or local_account()
    tally = Tally()
    state = ImportState.load(location)
    sender = _Sender(location, tally, options.dry_run, environ)
    files = list(discover(options, environ))
    dirty = [False]
    last_save = time.monotonic()

    def save() -> None:
        with sender.lock:
            if not dirty[0]:
                return
            dirty[0] = False
            state.save()

    try:
        for index, (agent, path) in enumerate(files):
            if progress is not None:
                progress(index, len(files), tally)
            tick = (lambda index=index: progress(index, len(files), tally)) if progress is not None else None
            checkpoint = _import_file(agent, path, state, sender, tally, options, account, tick)
            if checkpoint is not None and not options.dry_run:
                def apply(path=path, checkpoint=checkpoint) -> None:
                    state.files[path] = checkpoint
                    dirty[0] = True

                sender.when_sent(apply)
            if time.monotonic() - last_save >= STATE_SAVE_INTERVAL_S:
                save()
                last_save = time.monotonic()
        sender.finish()
        if progress is not None:
            progress(len(files), len(files), tally)
    finally:
        sender.close()
        if not options.dry_run:
            save()
    return tally


def _import_file(agent: str, path: str, state: ImportState, sender: _Sender, tally: Tally,
                 options: ImportOptions, account: str, tick=None) -> FileCheckpoint | None:
    """Read one transcript from its checkpoint; return its new checkpoint, None when it stays."""
    tally.files += 1
    from yarp import agents

    import_store = getattr(agents.part(agent, "transcripts"), "import_store", None)
    if import_store is not None:  # a session store, not a transcript file
        return import_store(path, state.files.get(path), sender, tally, options, account)
    cls = parser_class(agent)
    cp = state.files.get(path)
    settled = _settled_if_due(path, agent, cls, cp, options, tally)
    if settled is None:
        return None
    try:
        fd, ident = open_transcript(path)
    except YarpError as exc:
        tally.files_skipped += 1
        tally.issue(path, 0, exc.message)
        return None
    try:
        parser, reader = _start_reading(fd, ident, path, agent, cls, cp, account, tally)
        taken = set(cp.taken) if cp is not None else set()
        new_taken: list[str] = []
        drain = drainer(agent, parser, sender, tally, taken, new_taken)
        _feed_lines(path, reader, parser, tally, drain, tick)
        parser.end_of_read(settled)
        drain()
        if _replaced_meanwhile(path, ident, reader):
            tally.files_changed_during_read += 1
            tally.issue(path, 0, "file changed while it was read; it is read again next time")
            return None
        if options.dry_run:
            tally.calls_pending += sum(len(w) for w in parser.pending.values())
            return None
        return FileCheckpoint(
            agent, ident.device, ident.inode, ident.size, ident.mtime_ns, cls.version, reader.offset, reader.line,
            reader.hasher.hexdigest(), parser.context, parser.pending_json(),
            (cp.taken if cp is not None else []) + new_taken,
        )
    finally:
        os.close(fd)


def _settled_if_due(path: str, agent: str, cls: type[TranscriptParser], cp: FileCheckpoint | None,
                    options: ImportOptions, tally: Tally) -> bool | None:
    """Whether the transcript has been idle for the settle time, or None when it is not read at all.

    A file is not read when it is gone, last written before `--since`, or
    unchanged since its checkpoint (unless calls it left pending may now be
    recorded as unanswered).
    """
    try:
        st = os.lstat(path)
    except OSError:
        tally.files_skipped += 1
        return None
    if options.since_ms is not None and st.st_mtime_ns // 1_000_000 < options.since_ms:
        tally.files_skipped += 1
        return None
    unchanged = (cp is not None and cp.agent == agent and cp.parser_version == cls.version
                 and (cp.device, cp.inode, cp.size, cp.mtime_ns) == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    settled = time.time() - st.st_mtime >= options.settle_s
    if unchanged and not (cp.pending and settled):
        tally.files_unchanged += 1
        tally.calls_pending += len(cp.pending)
        return None
    return settled


def _start_reading(fd: int, ident: FileIdentity, path: str, agent: str, cls: type[TranscriptParser],
                   cp: FileCheckpoint | None, account: str, tally: Tally) -> tuple[TranscriptParser, LineReader]:
    """The parser and line reader: resumed at the checkpoint when the file still begins with what it
    read, else from byte 0 (a rewrite, a truncation, another file at the path)."""
    hasher = None
    resume = (cp is not None and cp.agent == agent and cp.parser_version == cls.version
              and (cp.device, cp.inode) == (ident.device, ident.inode) and ident.size >= cp.offset)
    if resume:
        hasher = hash_prefix(fd, cp.offset)
        resume = hasher is not None and hasher.hexdigest() == cp.prefix_sha256
    if resume:
        parser = cls(path, account, tally, cp.context, cp.pending)
        return parser, LineReader(fd, cp.offset, ident.size, cp.lines, hasher)
    if cp is not None:
        tally.files_reset += 1
    return cls(path, account, tally, None, None), LineReader(fd, 0, ident.size, 0, hashlib.sha256())


def _feed_lines(path: str, reader: LineReader, parser: TranscriptParser, tally: Tally, drain, tick) -> None:
    """Feed every line the reader yields to the parser; count and report the ones it cannot take."""
    for _offset, line, raw in reader:
        if not raw.strip():
            continue
        try:
            # As the broker reads frames: integer literals are never rounded into floats.
            obj = json_text.decode(raw, "transcript line")
        except YarpError:
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
        if tick is not None and not line % PROGRESS_LINES:
            tick()
    for line in reader.oversized:
        tally.oversized_lines += 1
        tally.issue(path, line, "line is longer than the frame limit")


def _replaced_meanwhile(path: str, ident: FileIdentity, reader: LineReader) -> bool:
    """Whether the path now names another file, or a shorter one, than the one just read."""
    try:
        after = os.lstat(path)  # the path, not our descriptor: was the file replaced meanwhile?
    except OSError:
        return True
    return (after.st_dev, after.st_ino) != (ident.device, ident.inode) or after.st_size < reader.offset
