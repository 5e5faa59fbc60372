"""Generate a large, realistic archive quickly, through the archive's one writer.

Every row is written by `yarp.archive.store.ArchiveStore.apply_batch` from prepared
operations, exactly as the broker applies them (same canonical JSON, hashing,
compression decision, savepoint and lifecycle checks), 256 requests per
transaction. The only step skipped is the broker's socket and its reading of
the runner's spool files: stream snapshots are prepared from bytes in memory
with the same `bytes_payload` the broker uses. That keeps 100,000 calls to
about a minute on this machine instead of an hour of fsync-bound round trips.

The mix (per 100 calls): 35 wrapped shell calls from the Pi agent whose
streams were pruned, 30 Pi reads whose result was capped, 15 unchanged Pi
calls, 15 Claude Code calls the hook could not change, 5 imported calls
(input captured after the call finished). Every shell command line is
distinct (`cd /work/repoN && cargo test src/moduleN`), as an agent's are,
over seven programs, except one in a hundred that runs the command of the
call before it again (a re-run). After them, one call in a hundred of the
wrapped ones is read back: a Pi `yarp read REF stdout 1:40` fifteen seconds
later (a recovery). Payload text is drawn from a
generated build-log corpus with the call number in it, so payloads are
distinct and compress like real logs.

`--plant TEXT --plant-calls N` writes the line TEXT into the output of N calls
spread evenly from the oldest to the newest (call numbers (2i+1)*CALLS//2N), for
measuring how long a search of the whole archive takes to find a rare string;
without it the calls and payloads are the ones it wrote before the option existed.

    python bench/archive_gen.py PATH CALLS [--plant TEXT --plant-calls N]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

_SRC = str(Path(__file__).resolve().parent.parent / "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)

from yarp.wire import operations as ops  # noqa: E402
from yarp.archive.codec import bytes_payload  # noqa: E402
from yarp.paths import resolve_archive  # noqa: E402
from yarp.archive.prepare import Prepared, SnapshotSpec, prepare  # noqa: E402
from yarp.archive.store import ArchiveStore  # noqa: E402

BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
CALLS_PER_SESSION = 200
#: Calls with these numbers modulo 100: a re-run of the call before, and a call read back later.
RERUN, RECOVERED = 41, 5
BATCH = 256
#: Batches between checkpoints: the writer turns automatic checkpoints off (the broker
#: checkpoints when idle), and without them a 1,000,000-call run grows its WAL past 40 GB.
CHECKPOINT_BATCHES = 64
PROGRAMS = ("cargo test", "git log", "pytest -q", "npm test", "ls -la", "grep -rn TODO src", "make build")
#: Share of stdout each program's rule keeps (test runners keep failures only).
KEPT = {"cargo test": 0.06, "git log": 0.4, "pytest -q": 0.1, "npm test": 0.15, "ls -la": 0.9,
        "grep -rn TODO src": 0.6, "make build": 0.2}
_WORDS = ("compiling", "warning", "test", "ok", "passed", "src/lib.rs", "error[E0308]", "note", "running",
          "finished", "target", "debug", "module", "index", "fn", "assert", "line", "0.01s", "PASS", "cache")


def corpus(size: int, rng: random.Random) -> str:
    lines, total = [], 0
    while total < size:
        line = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 14))) + "\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)


class _Text:
    """Distinct log-like texts of a given size, cut from one corpus."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.body = corpus(1 << 20, rng)

    def __call__(self, n: int, size: int, plant: str | None = None) -> str:
        start = self.rng.randrange(0, len(self.body) - size - 1)
        head = f"call {n}\n" if plant is None else f"call {n}\n{plant}\n"
        return head + self.body[start:start + max(size - len(head), 0)]


def _session(index: int) -> ops.Session:
    agent = "claude-code" if index % 7 == 3 else "pi"
    return ops.Session(agent=agent, account="bench", source_session_id=f"bench-session-{index}",
                       started_at_ms=BASE_MS + index * CALLS_PER_SESSION * 30_000)


def call_requests(n: int, text: _Text, rng: random.Random, mean_size: int,
                  plant: str | None = None) -> list[Prepared]:
    """Prepared requests that record call number `n` from begin to finish; `plant` is a line
    written into its output (stdout, or the text a read returned)."""
    session = _session(n // CALLS_PER_SESSION)
    started = BASE_MS + n * 30_000
    call_id = f"call-{n}"
    kind = n % 20
    size = max(64, int(rng.expovariate(1 / mean_size)))
    if session.agent == "claude-code":
        kind = 18  # the hook cannot replace the result: unchanged, unknown view
    if kind < 7:  # wrapped shell, streams pruned
        # Every command line is distinct, as an agent's are: its program repeats, its arguments differ;
        # one in a hundred runs the command before it again.
        same = n - 1 if n % 100 == RERUN and n % CALLS_PER_SESSION else n
        program = PROGRAMS[same % len(PROGRAMS)]
        command = f"cd /work/repo{same % 40} && {program} src/module{same}"
        meta = ops.CallMeta(call_id, "bash", started, True, "prov", "model-1", "/work")
        stdout = text(n, size, plant).encode()
        stderr = text(n + 1, size // 8).encode() if n % 3 == 0 else b""
        stdout_after = stdout[: max(int(len(stdout) * KEPT[program]), 40)] + b"\n[yarp: lines omitted]\n"
        begin = prepare(ops.BeginCall(session, meta, {"command": command},
                                      {"command": f"yarp run -- {command}"}, started))
        streams_op = ops.CaptureStreams(session, call_id, started + 5, *(ops.StreamFile("/dev/null"),) * 4)
        stream_specs = (SnapshotSpec("stdout", "before", bytes_payload(stdout)),
                        SnapshotSpec("stderr", "before", bytes_payload(stderr)),
                        SnapshotSpec("stdout", "after", bytes_payload(stdout_after)),
                        SnapshotSpec("stderr", "after", bytes_payload(stderr)))
        result = {"content": [{"type": "text", "text": stdout_after.decode()}], "details": None, "isError": False}
        return [begin, Prepared(streams_op, stream_specs),
                prepare(ops.ResultBefore(session, call_id, result, started + 6)),
                prepare(ops.FinishCall(session, call_id, result, False, True, started + 7))]
    tool = "Read" if session.agent == "claude-code" else "read"
    meta = ops.CallMeta(call_id, tool, started, False, "prov", "model-1", "/work")
    body = text(n, size, plant)
    before = {"content": [{"type": "text", "text": body}], "details": None, "isError": False}
    if kind < 13 and len(body) > 5120:  # capped read
        after = {"content": [{"type": "text", "text": body[:2048] + "\n[yarp: capped]\n" + body[-1024:]}],
                 "details": None, "isError": False}
    else:
        after = before
    captured = started
    finished = started + 8
    if kind == 19 and session.agent == "pi":  # imported from a transcript: captured long after it finished
        captured = started + 86_400_000
    requests = [prepare(ops.BeginCall(session, meta, {"path": f"/src/file{n}.py"}, {"path": f"/src/file{n}.py"},
                                      captured)),
                prepare(ops.ResultBefore(session, call_id, before, captured + 1))]
    if after is not before:
        requests.append(prepare(ops.ResultText(session, call_id, body, "complete", captured + 2)))
    requests.append(prepare(ops.FinishCall(session, call_id, after, False, True, finished)))
    return requests


def planted_calls(calls: int, count: int) -> list[int]:
    """The call numbers `generate` plants its text in: `count` of them, evenly spread."""
    return sorted({(2 * i + 1) * calls // (2 * count) for i in range(count)}) if count else []


def generate(path: str | os.PathLike, calls: int, *, seed: int = 7, mean_size: int = 4096,
             plant: str | None = None, plant_calls: int = 0) -> dict:
    """Write `calls` finished calls into a new archive at `path`; return what was written
    (with `planted`, the call numbers whose output holds the line `plant`)."""
    path = Path(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    rng = random.Random(seed)
    text = _Text(rng)
    store = ArchiveStore.open(resolve_archive(str(path), {}))
    refs: dict[str, str] = {}
    planted = planted_calls(calls, plant_calls) if plant else []
    targets = set(planted)
    try:
        pending: list[Prepared] = []
        batches = 0
        for n in range(calls):
            pending.extend(call_requests(n, text, rng, mean_size, plant if n in targets else None))
            if len(pending) >= BATCH:
                _apply(store, pending, refs)
                pending = []
                batches += 1
                if batches % CHECKPOINT_BATCHES == 0:
                    store.wal_checkpoint("TRUNCATE")
        recovered = [n for n in range(calls) if n % 100 == RECOVERED and _session(n // CALLS_PER_SESSION).agent == "pi"]
        for n in recovered:
            pending.extend(recovery_requests(n, refs[f"call-{n}"]))
        if pending:
            _apply(store, pending, refs)
        store.wal_checkpoint("TRUNCATE")
    finally:
        store.close()
    return {"calls": calls + len(recovered), "path": str(path), "planted": planted,
            "planted_refs": [refs[f"call-{n}"] for n in planted]}


def recovery_requests(n: int, ref: str) -> list[Prepared]:
    """A Pi call that reads back the first 40 lines of call `n`'s stdout, 15 seconds after it started."""
    session = _session(n // CALLS_PER_SESSION)
    started = BASE_MS + n * 30_000 + 15_000
    call_id = f"recover-{n}"
    meta = ops.CallMeta(call_id, "bash", started, False, "prov", "model-1", "/work")
    read_back = "".join(f"{i}: a line read back from {ref}\n" for i in range(1, 41))
    result = {"content": [{"type": "text", "text": read_back}], "details": None, "isError": False}
    command = {"command": f"yarp read {ref} stdout 1:40"}
    return [prepare(ops.BeginCall(session, meta, command, command, started)),
            prepare(ops.ResultBefore(session, call_id, result, started + 1)),
            prepare(ops.FinishCall(session, call_id, result, False, True, started + 2))]


def _apply(store: ArchiveStore, batch: list[Prepared], refs: dict[str, str]) -> None:
    for prepared, outcome in zip(batch, store.apply_batch(batch)):
        if isinstance(outcome, Exception):
            raise outcome
        if isinstance(prepared.operation, ops.BeginCall):
            refs[prepared.operation.call.source_call_id] = outcome.archive_ref


def main(argv: list[str] | None = None) -> None:
    """`python bench/archive_gen.py PATH CALLS [--plant TEXT --plant-calls N]`."""
    parser = argparse.ArgumentParser(description="generate a large archive through the archive's writer")
    parser.add_argument("path")
    parser.add_argument("calls", type=int)
    parser.add_argument("--plant", metavar="TEXT", help="a line written into the output of --plant-calls calls")
    parser.add_argument("--plant-calls", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    if (args.plant is None) != (args.plant_calls == 0):
        parser.error("--plant and --plant-calls go together")
    written = generate(args.path, args.calls, plant=args.plant, plant_calls=args.plant_calls)
    if args.plant:
        print(" ".join(written["planted_refs"]))


if __name__ == "__main__":
    main()
