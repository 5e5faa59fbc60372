"""Reading a Codex session transcript in the broker: the lines that name the calls an event needs.

Every Codex hook event makes the broker read the session's transcript for a
few calls (`read_transcript`: the call just begun, the session's open calls,
the call a post event finishes). Transcripts grow to hundreds of megabytes,
so only lines that name a wanted call id as a JSON string are parsed, whole
lines only, a block at a time; the end is read first (`read_evidence`), and a
call the broker has begun is read from where its last reading ended
(`Mark`, `read_since`). What each line means, and what a call's lines prove,
is `yarp.agents.codex.transcripts.evidence`'s, the reader `yarp import` uses too.

The file is opened without following a symbolic link, only when it is a
regular file owned by the broker's own user and at most
`MAX_TRANSCRIPT_BYTES`. Blocking file I/O: the service runs these in the
broker's pool.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from yarp import private_files
from yarp.errors import ValidationError, YarpError
from yarp.json_text import loads_record
from yarp.agents.codex.transcripts.evidence import CallEvidence, record_evidence

#: A transcript larger than this is not scanned (the call keeps Codex's own result).
MAX_TRANSCRIPT_BYTES = 512 * 1024 * 1024
#: The end of the transcript read next for a call's records (about 128 outputs as Codex keeps them).
TAIL_BYTES = 8 * 1024 * 1024
#: The end read before that: a call's records are nearly always in it (the call just made).
FIRST_TAIL_BYTES = 256 * 1024
#: Open calls whose transcript mark the broker keeps (each holds at most an output of 64 KiB and
#: the text the model got); one forgotten is read from the transcript's end, else its start, again.
MAX_MARKED_CALLS = 512
#: How much of the transcript is held in memory at once while it is scanned (plus one line).
SCAN_BLOCK_BYTES = 8 * 1024 * 1024


def _recorded(evidence: CallEvidence) -> bool:
    return evidence.recorded


def _settled(evidence: CallEvidence) -> bool:
    return evidence.settled


def read_evidence(transcript_path: str, call_ids: list[str] | tuple[str, ...], *,
                  enough=_recorded, tail_bytes: int = TAIL_BYTES, tail_only: bool = False) -> dict[str, CallEvidence]:
    """Evidence for `call_ids` from a Codex session transcript (JSONL).

    Reads only complete lines, never follows a symlink, refuses a file that is
    not regular, not owned by this process's user (the broker reads only what
    the user who runs it could) or larger than `MAX_TRANSCRIPT_BYTES`
    (`ValidationError`), and
    parses only lines that name one of the wanted ids. The last record of each
    kind wins (a later `item_completed` supersedes an earlier one).

    The records of a call just made are at the end of the file: the last
    `FIRST_TAIL_BYTES`, then the last `tail_bytes` are read first, and the
    whole file only when the tail does not hold `enough` evidence for every id
    (a record in the tail is later than any before it, so the tail's answer is
    the whole file's), unless `tail_only`. The broker reads a transcript on
    every Codex event, so the common case reads a few hundred KiB.
    """
    wanted = set(call_ids)
    if not wanted:
        return {}
    fd, st = _open_transcript(transcript_path)
    try:
        found = None
        for found in _tails(fd, st.st_size, wanted, tail_bytes):
            if all(enough(evidence) for evidence in found.values()):
                return found
        if tail_only and found is not None:
            return found
        return _scan(fd, 0, st.st_size, wanted, _needles(wanted))
    finally:
        os.close(fd)


def _tails(fd: int, size: int, wanted: set[str], tail_bytes: int = TAIL_BYTES):
    """The evidence in the transcript's last `FIRST_TAIL_BYTES`, then its last `tail_bytes`
    (each only while the file is longer)."""
    for tail in sorted({min(FIRST_TAIL_BYTES, tail_bytes), tail_bytes}):
        if size <= tail:
            return
        yield _scan(fd, size - tail, size, wanted, _needles(wanted))


def _open_transcript(transcript_path: str) -> tuple[int, os.stat_result]:
    """(fd, fstat) of a transcript the broker may read: no-follow, a regular file of ours, bounded."""
    try:
        fd, st = private_files.open_for_reading(transcript_path, private=False)
    except private_files.PrivatePathProblem as exc:
        raise ValidationError(f"the Codex transcript {exc.problem}") from None
    except OSError:
        raise ValidationError("the Codex transcript cannot be opened") from None
    if st.st_size > MAX_TRANSCRIPT_BYTES:
        os.close(fd)
        raise ValidationError(f"the Codex transcript is larger than {MAX_TRANSCRIPT_BYTES} bytes")
    return fd, st


def _needles(wanted) -> list[bytes]:
    return [json.dumps(call_id).encode("utf-8") for call_id in wanted]


@dataclass(frozen=True, slots=True)
class Mark:
    """How far one transcript has been read for one open call, and what that reading found.

    A call's execution and the tool output the model got are written after its
    `PreToolUse` was answered, so a call's reading starts at the transcript's
    size then; each later reading starts where the last one ended, and records
    are absorbed in file order as if the whole range were read at once.
    """

    path: str
    device: int
    inode: int
    offset: int
    fields: tuple[tuple[str, Any], ...] = ()

    def holds(self, path: str, st: os.stat_result) -> bool:
        """Whether this mark is of the file `st` describes, which has not shrunk since."""
        return (self.path, self.device, self.inode) == (path, st.st_dev, st.st_ino) and self.offset <= st.st_size


def mark_at_end(transcript_path: str) -> Mark | None:
    """A mark at the transcript's current end (for a call whose `PreToolUse` is being answered), or None."""
    try:
        fd, st = _open_transcript(transcript_path)
    except ValidationError:
        return None
    os.close(fd)
    return Mark(transcript_path, st.st_dev, st.st_ino, st.st_size)


def read_since(transcript_path: str, marks: dict[str, Mark | None]) -> tuple[dict[str, CallEvidence], dict[str, Mark]]:
    """Evidence for the calls of `marks`, reading each only from its mark (the whole file without one),
    and the marks at the end of this reading.

    One pass from the earliest mark: a record before a call's own mark was
    absorbed into that mark already, and absorbing it again before the later
    records leaves the same last record of each kind. Calls without a mark (the
    broker started since their `PreToolUse`) are settled from the transcript's
    end when it settles them all, as `read_evidence` does, and read from the
    start otherwise. Raises `ValidationError` like `read_evidence`.
    """
    fd, st = _open_transcript(transcript_path)
    try:
        starts = {call_id: mark if mark is not None and mark.holds(transcript_path, st) else None
                  for call_id, mark in marks.items()}
        unmarked = {call_id for call_id, mark in starts.items() if mark is None}
        evidence: dict[str, CallEvidence] = {}
        if unmarked:
            for probe in _tails(fd, st.st_size, unmarked):
                if all(found.settled for found in probe.values()):
                    evidence = probe
                    break
        found = {call_id: dict(mark.fields) if mark is not None else {} for call_id, mark in starts.items()
                 if call_id not in evidence}
        end = st.st_size
        if found:
            start = min((starts[call_id].offset if starts[call_id] is not None else 0) for call_id in found)
            end = _scan_lines(fd, start, st.st_size, _needles(found), found)
    finally:
        os.close(fd)
    evidence.update((call_id, CallEvidence(call_id, **fields)) for call_id, fields in found.items())
    # A mark ends after the last whole line read: a line still being written is read whole next time.
    ends = {call_id: Mark(transcript_path, st.st_dev, st.st_ino, end, tuple(fields.items()))
            for call_id, fields in found.items()}
    return evidence, ends


def _scan(fd: int, start: int, size: int, wanted: set[str], needles: list[bytes]) -> dict[str, CallEvidence]:
    """The evidence in the whole lines between `start` and `size` (`_scan_lines`)."""
    found: dict[str, dict] = {call_id: {} for call_id in wanted}
    _scan_lines(fd, start, size, needles, found)
    return {call_id: CallEvidence(call_id, **fields) for call_id, fields in found.items()}


def _scan_lines(fd: int, start: int, size: int, needles: list[bytes], found: dict[str, dict]) -> int:
    """Absorb into `found` (fields per wanted id) the whole lines between `start` and `size`
    (the size checked at open: a line still being written after it is not read), a block at
    a time; the offset where the last whole line read ends (`start` if none was)."""
    # From inside the file, the byte before `start` says whether a whole line begins there.
    position = start - 1 if start else 0
    skip = bool(start)
    carry = b""
    while position < size:
        block = os.pread(fd, min(SCAN_BLOCK_BYTES, size - position), position)
        if not block:
            break  # the file shrank: what was read is all there is
        position += len(block)
        data = carry + block if carry else block
        begin = 0
        if skip:
            begin = data.find(b"\n") + 1
            if not begin:
                carry = data
                continue
            skip = False
        end = data.rfind(b"\n", begin) + 1
        if end:
            _match(data, begin, end, needles, found)
            carry = data[end:]
        else:
            carry = data[begin:]
    return max(start, position - len(carry))


def _match(data: bytes, begin: int, end: int, needles: list[bytes], found: dict[str, dict]) -> None:
    """Absorb, in file order, each whole line in `data[begin:end]` that names a wanted id."""
    lines = set()
    for needle in needles:
        at = data.find(needle, begin, end)
        while at != -1:
            line_start = max(begin, data.rfind(b"\n", begin, at) + 1)
            line_end = data.find(b"\n", at, end) + 1
            lines.add((line_start, line_end))
            at = data.find(needle, line_end, end)
    for line_start, line_end in sorted(lines):
        _absorb(data[line_start:line_end], found)


def _absorb(line: bytes, found: dict[str, dict]) -> None:
    """Absorb one line into the fields of the call it names, when that call is wanted (`record_evidence`)."""
    try:
        record = loads_record(line)  # a 50 KB output line parses in a sixth of `json`'s time
    except ValueError:
        return
    hit = record_evidence(record)
    if hit is not None and hit[0] in found:
        found[hit[0]].update(hit[1])


def _called(evidence: CallEvidence) -> bool:
    return evidence.arguments is not None


# --- what one event reads ---------------------------------------------------------------


class Reading:
    """What the transcript says for one event, read off the broker's loop (`read_transcript`)."""

    __slots__ = ("called", "settled", "current", "warnings", "marks", "finished")

    def __init__(self) -> None:
        self.called: CallEvidence | None = None
        self.settled: list[CallEvidence] = []
        self.current: CallEvidence | None = None
        self.warnings: list[str] = []
        #: Where the reading of each call read ended (a call just begun: the transcript's end).
        self.marks: dict[str, Mark] = {}
        #: (outcome, prepared parts) finishing `current` (`Finish.prepare`), or the error preparing them raised.
        self.finished: tuple | YarpError | None = None


def read_transcript(transcript: str | None, *, begun: str | None, pending: dict[str, Mark | None],
                    finishing: str | None, finishing_mark: Mark | None = None) -> Reading:
    """The evidence one event needs: the model's call for a call just begun (`begun`,
    the tail only: never a scan of a long transcript before a command runs), the
    earlier calls that can be settled now (`pending`, each read from its mark), and
    the execution of the call a post event finishes (`finishing`; from its mark
    when there is one, else the tail first). Blocking file I/O: run in the pool."""
    reading = Reading()
    if transcript is not None and begun is not None:
        mark = mark_at_end(transcript)
        if mark is not None:
            reading.marks[begun] = mark
        try:
            reading.called = read_evidence(transcript, [begun], enough=_called, tail_only=True)[begun]
        except YarpError:
            pass  # the hook's view of the input is still worth archiving
    marked = dict(pending)
    if finishing is not None and finishing_mark is not None:
        marked[finishing] = finishing_mark
    if marked and transcript is not None:
        try:
            found, ends = read_since(transcript, marked)
            reading.marks.update(ends)
        except YarpError as exc:
            if pending:
                reading.warnings.append(f"the Codex transcript is unreadable; earlier calls stay incomplete: "
                                        f"{exc.message}")
            if finishing in marked:
                reading.warnings.append(f"the Codex transcript is unreadable; the call stays incomplete: {exc.message}")
        else:
            reading.settled = [found[call_id] for call_id in pending if found[call_id].settled]
            reading.current = found.get(finishing) if finishing in marked else None
    if finishing is not None and finishing not in marked:
        if transcript is None:
            reading.warnings.append("the Codex event names no transcript; the call stays incomplete")
        else:
            try:
                reading.current = read_evidence(transcript, [finishing])[finishing]
            except YarpError as exc:
                reading.warnings.append(f"the Codex transcript is unreadable; the call stays incomplete: {exc.message}")
    return reading
