"""Generate a large, realistic archive quickly, through the archive's one writer.

Every row is written by `yarp.archive.store.ArchiveStore.apply_batch` from
operations prepared by `yarp.archive.prepare.prepare` (imports by
`yarp.transcripts.batch.prepare_import_calls`), exactly as the broker applies
them: same canonical JSON, hashing, compression decision, savepoints and
lifecycle checks, 256 requests per transaction. The only steps skipped are the
broker's socket and its reading of the runner's spool files: stream snapshots
are prepared from bytes in memory with the same `bytes_payload` the broker
uses. The writer turns automatic checkpoints off, so the WAL is checkpointed
every `CHECKPOINT_BATCHES` batches.

What it writes, as a heavy user's year would hold it (about 1,000,000 calls,
4,000 a working day on two lanes of agent sessions plus a person's own runs):

- sessions of the five agents with their own tool names and input and result
  shapes: Claude Code (`Bash`, `Read`, `Edit`, `Grep`, `Glob`, `Write`,
  `TodoWrite`, …), Codex (`Bash` through its hooks, `apply_patch`,
  `update_plan`; `exec_command` in imported history), Gemini CLI
  (`run_shell_command`, `read_file`, `replace`, `search_file_content`, …),
  Pi (`bash`, `read`, `edit`, `write`, `grep`, `find`, `ls`) and opencode
  (`bash`, `read`, `edit`, `glob`, `list`, `todowrite`, …); a person's
  standalone `yarp run` (agent `yarp-run`, tool `shell`, one session each);
  and about one session in twenty imported from a transcript at the end of
  its week (`import_calls`: captured after the calls finished);
- output sizes per kind of command (lognormal around each kind's median, a
  real Pi session's reads and shell outputs for scale) with a heavy tail:
  about 1 % of outputs are 100 KB or more, up to 5 MB (test runs, builds,
  logs);
- the exact duplicates real work makes: files read again unchanged (the same
  result payload), `git status` of a clean tree, listings of an unchanged
  directory;
- about half the shell calls wrapped by `yarp run`, with the four stream
  snapshots and a view that is the output itself when it is small and a
  summary or a capped view (`[yarp summary: test; …]`, `[yarp: omitted …]`)
  otherwise; results over the 5 KiB cap replaced by a capped view with the
  exact text kept as `result_text` where the agent's adapter replaces
  results; Claude Code's results left as they were;
- failures (`isError`), calls left incomplete (begun, never finished), calls
  finished without running (`executed` false), recoveries (`yarp read` or
  `yarp search` of a capped call's reference soon after it) and re-runs of
  a capped command, with and without an edit between;
- timestamps over working hours (Monday to Friday, some evenings and
  weekends) from 2026-01-01: the span grows with the number of calls, one
  year for 1,000,000.

Everything comes from one seed (archive references included), so the same
arguments write the same archive. `--plant TEXT --plant-calls N` writes the
line TEXT into the output of N calls spread evenly from the first written to
the last (call numbers (2i+1)*CALLS//2N, in the order they are written) for
timing a search of the whole archive; none of them is recovered, so exactly
those N calls hold it.

    python bench/archive_gen.py PATH CALLS [--seed N] [--plant TEXT --plant-calls N]

A second run on an existing archive (`extend`) adds calls after its newest one.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import zlib
from pathlib import Path

_SRC = str(Path(__file__).resolve().parent.parent / "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)

from yarp.archive import store as _store  # noqa: E402
from yarp.archive.codec import bytes_payload  # noqa: E402
from yarp.archive.prepare import Prepared, SnapshotSpec, prepare  # noqa: E402
from yarp.archive.store import ArchiveStore  # noqa: E402
from yarp.paths import resolve_archive  # noqa: E402
from yarp.transcripts.batch import prepare_import_calls  # noqa: E402
from yarp.wire import operations as ops  # noqa: E402

BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z, a Thursday
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
BATCH = 256
#: Batches between checkpoints: the writer turns automatic checkpoints off (the broker
#: checkpoints when idle), and without them a 1,000,000-call run grows its WAL past 40 GB.
CHECKPOINT_BATCHES = 64
#: The view cap of the adapters and `yarp run` (output.cap_bytes).
CAP = 5120
BIG, HUGE = 100_000, 5_000_000
ACCOUNT = "me"

#: Action -> tool name, per live agent (`yarp-run` has only `shell`).
TOOLS = {
    "claude-code": {"shell": "Bash", "read": "Read", "edit": "Edit", "write": "Write", "grep": "Grep",
                    "find": "Glob", "todo": "TodoWrite", "fetch": "WebFetch", "task": "Task"},
    "pi": {"shell": "bash", "read": "read", "edit": "edit", "write": "write", "grep": "grep", "find": "find",
           "ls": "ls"},
    "opencode": {"shell": "bash", "read": "read", "edit": "edit", "write": "write", "grep": "grep", "find": "glob",
                 "ls": "list", "todo": "todowrite", "fetch": "webfetch", "task": "task"},
    "gemini": {"shell": "run_shell_command", "read": "read_file", "edit": "replace", "write": "write_file",
               "grep": "search_file_content", "find": "glob", "ls": "list_directory", "fetch": "web_fetch"},
    "codex": {"shell": "Bash", "edit": "apply_patch", "todo": "update_plan"},
}
#: Codex's tool names in its own transcripts (imported history).
CODEX_IMPORTED = {"shell": "exec_command", "edit": "apply_patch", "todo": "update_plan"}
#: Action weights per agent (Pi's from its real sessions: bash, edit and read lead).
ACTIONS = {
    "claude-code": {"shell": 36, "read": 25, "edit": 16, "grep": 8, "find": 4, "write": 4, "todo": 5, "fetch": 1,
                    "task": 1},
    "pi": {"shell": 45, "read": 26, "edit": 20, "write": 4, "grep": 2, "find": 1, "ls": 2},
    "opencode": {"shell": 36, "read": 25, "edit": 15, "grep": 6, "find": 4, "ls": 2, "write": 4, "todo": 6,
                 "fetch": 1, "task": 1},
    "gemini": {"shell": 35, "read": 28, "edit": 14, "grep": 8, "find": 5, "ls": 4, "write": 5, "fetch": 1},
    "codex": {"shell": 76, "edit": 20, "todo": 4},
}
#: Share of agent sessions per agent.
AGENT_SHARE = {"claude-code": 32, "pi": 22, "codex": 22, "opencode": 12, "gemini": 12}
MODELS = {"claude-code": ("anthropic", "claude-sonnet-4-5"), "pi": ("anthropic", "claude-sonnet-4-5"),
          "codex": ("openai", "gpt-5-codex"), "opencode": ("anthropic", "claude-opus-4-1"),
          "gemini": ("google", "gemini-2.5-pro")}
#: Agents whose adapter hands the model a replaced result (Codex only over its own cap).
REPLACES_RESULTS = {"pi": 0, "opencode": 0, "gemini": 0, "codex": 40_000}

#: Kinds of shell command: (command templates, median bytes, sigma, share of huge outputs,
#: reducer family, failure rate, weight).
PROGRAMS = {
    "status": (("git status", "git status --short"), 260, 0.8, 0.0, "status", 0.0, 8),
    "diff": (("git diff", "git diff --stat", "git diff HEAD~1", "git show HEAD"), 3500, 1.3, 0.006, "diff", 0.0, 5),
    "log": (("git log --oneline -20", "git log -5", "git log --stat -3"), 1800, 0.8, 0.0, "log", 0.0, 2),
    "vcs": (("git add -A", "git commit -m 'wip {mod}'", "git checkout -b {mod}", "git stash"), 120, 0.8, 0.0,
            None, 0.02, 3),
    "test": (("cargo test", "pytest -q", "npm test", "go test ./...", "pytest -x tests/test_{mod}.py",
              "cargo test {mod}"), 4500, 1.4, 0.035, "test", 0.22, 14),
    "build": (("cargo build", "make", "npm run build", "tsc --noEmit", "go build ./...", "cargo check"), 2200,
              1.5, 0.02, "build", 0.12, 8),
    "search": (("rg -n '{word}'", "grep -rn '{word}' src", "rg --files | rg {mod}"), 1500, 1.5, 0.01, "search",
               0.05, 10),
    "list": (("ls -la", "ls {dir}", "find . -name '*.{ext}'", "tree -L 2"), 700, 1.1, 0.003, "list", 0.02, 7),
    "read": (("cat {file}", "sed -n '1,200p' {file}", "head -n 120 {file}", "nl -ba {file}"), 3000, 1.1, 0.006,
             None, 0.02, 10),
    "lint": (("cargo clippy", "ruff check .", "npx eslint src", "mypy src"), 1800, 1.4, 0.01, "build", 0.3, 4),
    "logs": (("docker logs api", "journalctl -u app --since today", "kubectl logs deploy/api",
              "tail -n 3000 /var/log/app.log"), 30_000, 1.5, 0.15, "log", 0.02, 1.5),
    "small": (("mkdir -p {dir}", "rm -f {file}.bak", "cp {file} /tmp/", "echo done", "touch {file}"), 0, 0.0, 0.0,
              None, 0.01, 8),
    "script": (("python scripts/{mod}.py", "node scripts/{mod}.js", "./run.sh {mod}"), 900, 1.6, 0.01, None, 0.1, 5),
    "net": (("curl -s localhost:8080/health", "curl -sI https://example.org"), 500, 1.2, 0.003, None, 0.05, 1),
}
PERSON_PROGRAMS = {"test": 5, "build": 4, "logs": 2, "diff": 2, "search": 2, "script": 2}
#: Other actions: (median bytes of the result text, sigma, share of huge outputs).
RESULT_SIZES = {"read": (2400, 1.1, 0.004), "grep": (1200, 1.4, 0.004), "find": (500, 1.1, 0.0),
                "ls": (500, 1.0, 0.0), "fetch": (9000, 1.0, 0.02), "task": (1800, 0.9, 0.0)}
#: Host limits on what a tool returns at all (Read: 2,000 lines; Pi and opencode: 50 KiB).
HOST_RESULT_LIMIT = {"claude-code": 120_000, "pi": 51_200, "opencode": 51_200, "gemini": 120_000,
                     "codex": 40_000}
CLEAN_STATUS = b"On branch main\nYour branch is up to date with 'origin/main'.\n\nnothing to commit, working tree clean\n"
_WORDS = ("compiling", "warning", "test", "ok", "passed", "src/lib.rs", "error[E0308]", "note", "running", "finished",
          "target", "debug", "module", "index", "fn", "assert", "line", "0.01s", "PASS", "cache", "FAILED", "expected",
          "found", "mismatched", "types", "--> src/main.rs:42:17", "thread", "panicked", "at", "called", "unwrap()",
          "on", "an", "Err", "value:", "GET", "/api/v1/items", "200", "404", "latency_ms=", "user_id=", "request",
          "INFO", "WARN", "ERROR", "DEBUG", "def", "return", "self", "import", "from", "class", "async", "await",
          "const", "let", "if", "else", "for", "in", "None", "True", "{", "}", "(", ")", "=>", "::", "#", "//")


class _Bank:
    """Log- and code-like text to cut outputs from, so payloads compress like real ones."""

    def __init__(self, rng: random.Random, size: int) -> None:
        lines, total = [], 0
        while total < size:
            words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 14)))
            line = f"{' ' * rng.choice((0, 0, 2, 4, 8))}{words} {rng.randrange(100000)}\n"
            lines.append(line)
            total += len(line)
        self.body = "".join(lines).encode()

    def cut(self, rng: random.Random, size: int, head: bytes) -> bytes:
        """`head` and then `size - len(head)` bytes of the bank from a random place."""
        size = max(size - len(head), 0)
        start = rng.randrange(0, len(self.body) - size - 1)
        return head + self.body[start:start + size]


class _Session:
    """One agent session (or a person's run) and what its work has changed."""

    def __init__(self, agent: str, source_id: str, started: int, repo: int, imported: bool) -> None:
        self.session = ops.Session(agent, ACCOUNT, source_id, started)
        self.agent = agent
        self.repo = repo
        self.imported = imported
        self.calls = 0


class _Call:
    """A planned call: what it does and how it ends; its payloads are made when it is written."""

    __slots__ = ("s", "call_id", "action", "started", "duration", "kind", "command", "size", "err_size", "failed",
                 "wrapped", "end", "path", "version", "target", "rerun", "ref", "wants_ref", "planted", "cut")

    def __init__(self, s: _Session, action: str, started: int) -> None:
        self.s = s
        s.calls += 1
        self.call_id = f"{s.session.source_session_id}-{s.calls}" if s.agent != "yarp-run" else "1"
        self.action, self.started, self.duration = action, started, 40
        self.kind = self.command = self.path = self.target = self.rerun = self.ref = None
        self.size = self.err_size = self.version = 0
        self.failed = self.wrapped = self.wants_ref = self.planted = self.cut = False
        self.end = "ok"  # "incomplete", "not_executed"


def _size(rng: random.Random, median: float, sigma: float, huge: float) -> int:
    if median <= 0:
        return 0
    if rng.random() < huge:  # the heavy tail: Pareto from 100 KB, at most 5 MB
        return min(int(BIG / (1 - rng.random()) ** (1 / 1.1)), HUGE)
    return min(int(median * math.exp(rng.gauss(0, sigma))), HUGE)


class Planner:
    """Plans calls day by day over working hours, on two lanes of agent sessions and a person's lane."""

    def __init__(self, seed: int, start_ms: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.day = (start_ms - BASE_MS) // DAY_MS if start_ms >= BASE_MS else 0
        self.start_ms = start_ms
        self.sessions = 0
        self.repos = [{"version": {}, "dirty": False} for _ in range(12)]

    def days(self):
        """Each day's planned calls in order of start, working days first to last."""
        while True:
            day_ms = BASE_MS + self.day * DAY_MS
            weekday = (self.day + 3) % 7  # 0 = Monday; 2026-01-01 is a Thursday
            self.day += 1
            if weekday >= 5 and self.rng.random() > 0.15:
                continue
            lanes = 1 if weekday >= 5 else 2
            calls: list[_Call] = []
            for lane in range(lanes):
                begin = day_ms + int((8.5 + self.rng.random()) * HOUR_MS)
                end = day_ms + int((18.5 + (self.rng.random() * 3 if self.rng.random() < 0.2 else 0)) * HOUR_MS)
                if weekday >= 5:
                    end = begin + int(self.rng.uniform(1, 4) * HOUR_MS)
                calls.extend(self._lane(max(begin, self.start_ms), end))
            calls.extend(self._person(day_ms + 9 * HOUR_MS, day_ms + 19 * HOUR_MS, weekday >= 5))
            calls.sort(key=lambda c: c.started)
            yield calls

    def _lane(self, at: int, end: int) -> list[_Call]:
        rng = self.rng
        out: list[_Call] = []
        while at < end:
            agent = rng.choices(list(AGENT_SHARE), list(AGENT_SHARE.values()))[0]
            self.sessions += 1
            s = _Session(agent, f"{agent}-{self.seed}-{self.sessions}", at, rng.randrange(len(self.repos)),
                         rng.random() < 0.05)
            length = max(1, min(int(35 * math.exp(rng.gauss(0, 0.9))), 700))
            calls = SessionPlan(self, s).plan(at, length, end)
            out.extend(calls)
            at = (calls[-1].started + calls[-1].duration if calls else at) + int(rng.uniform(1, 15) * 60_000)
        return out

    def _person(self, at: int, end: int, weekend: bool) -> list[_Call]:
        rng, out = self.rng, []
        if weekend:
            return out
        at = max(at, self.start_ms)
        while True:
            at += int(rng.expovariate(1 / 360_000))
            if at >= end:
                return out
            self.sessions += 1
            s = _Session("yarp-run", f"run-bench-{self.seed}-{self.sessions}-{at}", at, rng.randrange(12), False)
            call = _Call(s, "shell", at)
            SessionPlan(self, s).shell(call, rng.choices(list(PERSON_PROGRAMS), list(PERSON_PROGRAMS.values()))[0])
            call.wrapped = True
            call.cut = max(call.size, 0) + call.err_size > CAP
            out.append(call)


class SessionPlan:
    """The calls of one session: the agent's mix of actions, with re-reads, edits, re-runs and recoveries."""

    def __init__(self, planner: Planner, s: _Session) -> None:
        self.p, self.s, self.rng = planner, s, planner.rng
        self.repo = planner.repos[s.repo]
        self.read: list[str] = []

    def plan(self, at: int, length: int, end: int) -> list[_Call]:
        rng, out = self.rng, []
        weights = ACTIONS[self.s.agent]
        last_cut: _Call | None = None
        for _ in range(length):
            if at >= end + 2 * HOUR_MS:
                break
            if last_cut is not None and rng.random() < 0.05:  # read back what the view left out
                call = self._recovery(at, last_cut)
            elif last_cut is not None and last_cut.kind in ("test", "build") and rng.random() < 0.08:
                call = self._rerun(at, last_cut)  # the same command again, nothing edited
            else:
                call = _Call(self.s, rng.choices(list(weights), list(weights.values()))[0], at)
                self._fill(call)
            last_cut = call if call.cut and not call.planted else None
            if call.action == "edit" or call.action == "write":
                last_cut = None
            out.append(call)
            at = call.started + call.duration + int(2_000 * math.exp(rng.gauss(0.45, 0.8)))
        if out and rng.random() < 0.08:
            out[-1].end = "incomplete"  # the agent was stopped mid-call
        return out

    def _fill(self, call: _Call) -> None:
        rng = self.rng
        if call.action == "shell":
            self.shell(call, rng.choices(list(PROGRAMS), [v[6] for v in PROGRAMS.values()])[0])
            # The planner wraps a command whose kind has a reducer, about half the shell calls in all.
            call.wrapped = not self.s.imported and PROGRAMS[call.kind][4] is not None and rng.random() < 0.68
            self._cut(call)
        elif call.action in ("read", "edit", "write"):
            paths = self.read if call.action != "read" or (self.read and rng.random() < 0.25) else None
            call.path = rng.choice(paths) if paths else f"src/{rng.choice(('core', 'api', 'cli', 'db'))}/" \
                f"mod{rng.randrange(400)}.{rng.choice(('rs', 'py', 'ts', 'go'))}"
            if call.action == "read":
                self.read.append(call.path)
                call.size = _size(rng, *RESULT_SIZES["read"])
            else:
                versions = self.repo["version"]
                versions[call.path] = versions.get(call.path, 0) + 1
                self.repo["dirty"] = True
                call.size = int(600 * math.exp(rng.gauss(0, 1.0)))
                call.failed = call.action == "edit" and rng.random() < 0.05
            call.version = self.repo["version"].get(call.path, 0)
            call.duration = rng.randint(5, 60)
        elif call.action in RESULT_SIZES:
            call.size = _size(rng, *RESULT_SIZES[call.action])
            call.duration = rng.randint(20, 3000) if call.action != "task" else rng.randint(20_000, 300_000)
        else:
            call.size = rng.randint(80, 900)
        if rng.random() < 0.01:
            call.end = "not_executed"  # refused before it ran
        self._cut(call)

    def shell(self, call: _Call, kind: str) -> None:
        """Make `call` a shell command of `kind` with its output size, failure and duration."""
        rng = self.rng
        templates, median, sigma, huge, _family, fail, _weight = PROGRAMS[kind]
        call.kind = kind
        call.command = rng.choice(templates).format(
            mod=f"m{rng.randrange(300)}", word=rng.choice(("TODO", "unwrap", "fixme", "deprecated", "panic")),
            dir=f"src/d{rng.randrange(30)}", ext=rng.choice(("rs", "py", "ts")), file=f"src/f{rng.randrange(400)}.rs")
        if kind == "status" and not self.repo["dirty"] and rng.random() < 0.7:
            call.size = -1  # a clean tree: the same bytes every time
        else:
            call.size = _size(rng, median, sigma, huge)
        if kind == "vcs" and "commit" in call.command:
            self.repo["dirty"] = False
        call.failed = rng.random() < fail
        call.err_size = int(300 * math.exp(rng.gauss(0, 1.2))) if call.failed or rng.random() < 0.2 else 0
        seconds = {"test": 25, "build": 30, "lint": 8, "logs": 2}.get(kind, 0.3)
        call.duration = int(seconds * 1000 * math.exp(rng.gauss(0, 0.9)))
        self._cut(call)

    def _cut(self, call: _Call) -> None:
        size = max(call.size, 0) + call.err_size
        agent = self.s.agent
        call.cut = size > CAP and (call.wrapped or (agent in REPLACES_RESULTS and size > REPLACES_RESULTS[agent]))

    def _recovery(self, at: int, target: _Call) -> _Call:
        call = _Call(self.s, "shell", at)
        call.kind, call.target, call.size = "recovery", target, self.rng.randint(600, 4000)
        target.wants_ref = True
        return call

    def _rerun(self, at: int, target: _Call) -> _Call:
        call = _Call(self.s, "shell", at)
        self.shell(call, target.kind)
        call.command, call.wrapped, call.rerun = target.command, target.wrapped, target
        self._cut(call)
        return call


class Writer:
    """Turns planned calls into prepared operations and applies them in batches, as the broker does."""

    def __init__(self, store: ArchiveStore, seed: int, plant: str | None, targets: set[int]) -> None:
        self.store, self.plant, self.targets = store, plant, targets
        self.rng = random.Random(seed * 7919 + 1)
        self.bank = _Bank(random.Random(seed), 8 << 20)
        self.pending: list[Prepared] = []
        self.owners: list[_Call | None] = []
        self.imports: list[tuple[int, _Call]] = []
        self.batches = self.written = 0

    # --- payloads -------------------------------------------------------------------------

    def output(self, call: _Call, size: int, n: int, stream: str = "stdout") -> bytes:
        """Call `n`'s output of `size` bytes (the plant line in a planted call's main output)."""
        if size < 0:
            return CLEAN_STATUS
        plant = f"{self.plant}\n" if call.planted and stream == "stdout" else ""
        if call.action == "read":
            # The file's bytes follow its path and version: reading it again unchanged gives the same bytes.
            rng = random.Random(zlib.crc32(f"{call.s.repo}:{call.path}:{call.version}".encode()))
            return self.bank.cut(rng, size, f"// {call.path} v{call.version}\n{plant}".encode())
        head = f"$ {call.command or call.action} [{call.s.session.source_session_id} {n} {stream}]\n{plant}"
        return self.bank.cut(self.rng, max(size, len(head)), head.encode())

    @staticmethod
    def view(call: _Call, raw: bytes) -> bytes:
        """What `yarp run` showed of a stream: the output itself when small, else a summary or a capped view."""
        if len(raw) <= CAP:
            return raw
        family = PROGRAMS.get(call.kind, (None,) * 5)[4]
        lines = raw.count(b"\n")
        summary = f"[yarp summary: {family}; source_lines={lines}]\n".encode() if family in ("test", "build") else b""
        tail = raw[-900:]
        return (summary + raw[:1800] + f"\n[yarp: omitted {lines - 40} line(s); ref=yr_; stdout complete]\n"
                f"Search omitted output: yarp search yr_ 'error|FAILED'\n".encode() + tail)

    # --- calls ----------------------------------------------------------------------------

    def write(self, call: _Call, n: int) -> None:
        """Plan's call number `n` (in written order) as the operations a live capture or an import sends."""
        if n in self.targets:
            call.planted, call.end = True, "ok"
            if call.action not in ("shell", "read", "grep", "fetch", "task") or call.kind == "recovery" or call.size <= 0:
                call.size, call.path, call.wrapped = 3000, f"src/planted{n}.rs", False
                if "read" in TOOLS.get(call.s.agent, ()):
                    call.action, call.kind = "read", None
                else:  # Codex and a person read a file with the shell
                    call.action, call.kind, call.command = "shell", "read", f"cat {call.path}"
        if call.kind == "recovery":
            if call.target.planted or call.s.imported:  # nothing may read a planted output back
                call.kind, call.command, call.size = "status", "git status", -1
            elif call.target.ref is None:
                self.flush()  # the call it reads back is in the batch not applied yet
        if call.s.imported:
            self.imports.append((n, call))
            return
        self._live(call, n)

    def _result(self, call: _Call, text: str, failed: bool) -> dict:
        agent = call.s.agent
        if agent == "claude-code":
            if call.action == "read":
                return {"type": "text", "file": {"filePath": call.path, "content": text,
                                                 "numLines": text.count("\n"), "startLine": 1}}
            return {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
        if agent == "gemini":
            return {"llmContent": text, "returnDisplay": text[:200]}
        if agent == "codex":
            return {"output": text, "metadata": {"exit_code": int(failed), "duration_seconds": call.duration / 1000}}
        if agent == "yarp-run":
            return {"exitCode": int(failed), "signal": None}
        return {"content": [{"type": "text", "text": text}], "details": None, "isError": failed}

    def _input(self, call: _Call) -> dict:
        agent, action = call.s.agent, call.action
        if action == "shell":
            command = call.command
            if call.kind == "recovery":
                ref = call.target.ref
                command = (f"yarp read {ref} stdout 40:160" if call.target.wrapped and self.rng.random() < 0.6
                           else f"yarp search {ref} 'error|FAILED|panicked'")
            if agent == "yarp-run":
                return {"argv": ["sh", "-c", command], "cwd": f"/work/repo{call.s.repo}"}
            return {"command": command} if agent != "claude-code" else {"command": command, "description": "Run it"}
        key = {"claude-code": "file_path", "gemini": "absolute_path", "opencode": "filePath"}.get(agent, "path")
        if action == "read":
            return {key: f"/work/repo{call.s.repo}/{call.path}"}
        if action in ("edit", "write"):
            body = self.bank.cut(self.rng, call.size, b"").decode()
            if agent == "codex":
                return {"input": f"*** Begin Patch\n*** Update File: {call.path}\n@@\n+{body}\n*** End Patch\n"}
            half = len(body) // 2
            return ({key: call.path, "content": body} if action == "write"
                    else {key: call.path, "old_string": body[:half], "new_string": body[half:]})
        return {"query": f"{action} {call.started % 997}", "pattern": "**/*.rs"}

    def _rewritten(self, call: _Call, given: dict) -> dict:
        s = call.s.session
        flags = (f"'/usr/local/bin/yarp' run --archive-agent '{s.agent}' --archive-account '{s.account}'"
                 f" --archive-session '{s.source_session_id}' --archive-call '{call.call_id}' -- ")
        return {**given, "command": flags + given["command"]}

    def _live(self, call: _Call, n: int) -> None:
        s, t0 = call.s.session, call.started
        tool = "shell" if s.agent == "yarp-run" else TOOLS[s.agent][call.action]
        provider, model = MODELS.get(s.agent, (None, None))
        meta = ops.CallMeta(call.call_id, tool, t0, call.wrapped, provider, model, f"/work/repo{call.s.repo}")
        given = self._input(call)
        after = self._rewritten(call, given) if call.wrapped and s.agent != "yarp-run" else given
        requests = [prepare(ops.BeginCall(s, meta, given, after, t0))]
        done = t0 + call.duration
        if call.end == "not_executed":
            refusal = {"error": "The user declined to run this tool."}
            requests.append(prepare(ops.FinishCall(s, call.call_id, refusal, True, False, t0 + 5)))
            return self._add(call, requests)
        raw = self.output(call, call.size, n)
        if call.wrapped:
            err = self.output(call, call.err_size, n, "stderr") if call.err_size else b""
            out_view, err_view = self.view(call, raw), self.view(call, err)
            specs = tuple(SnapshotSpec(sub, stage, bytes_payload(data)) for sub, stage, data in (
                ("stdout", "before", raw), ("stderr", "before", err), ("stdout", "after", out_view),
                ("stderr", "after", err_view)))
            stream_op = ops.CaptureStreams(s, call.call_id, done, *(ops.StreamFile("/dev/null"),) * 4)
            requests.append(Prepared(stream_op, specs))
            if call.end == "incomplete":
                return self._add(call, requests)
            raw = out_view + err_view
        elif call.end == "incomplete":
            return self._add(call, requests)
        text = raw.decode("utf-8", "replace")[:HOST_RESULT_LIMIT.get(s.agent, HUGE)]
        before = self._result(call, text, call.failed)
        requests.append(prepare(ops.ResultBefore(s, call.call_id, before, done + 1)))
        final = before
        if call.cut and not call.wrapped:
            requests.append(prepare(ops.ResultText(s, call.call_id, text, "complete", done + 2)))
            final = self._result(call, text[:2048] + "\n[yarp: omitted; ref=yr_]\n" + text[-1024:], call.failed)
        requests.append(prepare(ops.FinishCall(s, call.call_id, final, call.failed, True, done + 3)))
        self._add(call, requests)

    def _add(self, call: _Call, requests: list[Prepared]) -> None:
        self.pending.extend(requests)
        self.owners.extend([call] + [None] * (len(requests) - 1))
        self.written += 1
        if len(self.pending) >= BATCH:
            self.flush()

    def flush_imports(self, captured_at: int) -> None:
        """Apply the imported sessions' calls as `yarp import` sends them, captured at `captured_at`."""
        imports, self.imports = self.imports, []
        for start in range(0, len(imports), 200):
            chunk = imports[start:start + 200]
            calls = tuple(self._imported(call, n) for n, call in chunk)
            op = ops.ImportCalls(ops.import_batch_id(calls), calls, captured_at)
            self.pending.append(prepare_import_calls(op))
            self.owners.append(None)
            self.written += len(chunk)
            if len(self.pending) >= BATCH // 8:
                self.flush()

    def _imported(self, call: _Call, n: int) -> ops.ImportedCall:
        s = call.s.session
        tools = CODEX_IMPORTED if s.agent == "codex" else TOOLS[s.agent]
        provider, model = MODELS[s.agent]
        meta = ops.CallMeta(call.call_id, tools.get(call.action, call.action), call.started, False, provider, model,
                            f"/work/repo{call.s.repo}")
        given = self._input(call)
        if call.end == "incomplete":
            return ops.ImportedCall(s, meta, given)
        if call.end == "not_executed":
            return ops.ImportedCall(s, meta, given, {"error": "rejected"}, True, True, call.started + 5,
                                    executed=False)
        text = self.output(call, call.size, n).decode("utf-8", "replace")[:HOST_RESULT_LIMIT[s.agent]]
        return ops.ImportedCall(s, meta, given, self._result(call, text, call.failed), True, call.failed,
                                call.started + call.duration)

    def flush(self) -> None:
        if not self.pending:
            return
        for prepared, owner, outcome in zip(self.pending, self.owners, self.store.apply_batch(self.pending)):
            if isinstance(outcome, Exception):
                raise outcome
            if owner is not None:
                if owner.wants_ref:
                    owner.ref = outcome.archive_ref
        self.pending, self.owners = [], []
        self.batches += 1
        if self.batches % CHECKPOINT_BATCHES == 0:
            self.store.wal_checkpoint("TRUNCATE")


def planted_calls(calls: int, count: int) -> list[int]:
    """The call numbers `generate` plants its text in: `count` of them, evenly spread."""
    return sorted({(2 * i + 1) * calls // (2 * count) for i in range(count)}) if count else []


def _seeded_refs(seed: int):
    rng = random.Random(seed * 104_729 + 3)
    return lambda: "yr_" + f"{rng.getrandbits(128):032x}"


def generate(path: str | os.PathLike, calls: int, *, seed: int = 7, plant: str | None = None, plant_calls: int = 0,
             start_ms: int | None = None) -> dict:
    """Write `calls` calls into the archive at `path` (created, or extended after its newest call);
    return what was written (with `planted`, the call numbers whose output holds the line `plant`,
    and `planted_refs`, their references in that order)."""
    path = Path(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    planted = planted_calls(calls, plant_calls) if plant else []
    store = ArchiveStore.open(resolve_archive(str(path), {}))
    store.conn.execute("PRAGMA synchronous = OFF")  # a generated archive needs no crash safety
    if start_ms is None:
        newest = store.conn.execute("SELECT max(started_at_ms) FROM tool_calls").fetchone()[0]
        start_ms = BASE_MS if newest is None else newest + HOUR_MS
    saved_refs = _store.new_archive_ref
    _store.new_archive_ref = _seeded_refs(seed ^ (start_ms & 0xFFFF))
    writer = Writer(store, seed, plant, set(planted))
    by_number: dict[int, _Call] = {}
    n = 0
    week = None
    try:
        for day in Planner(seed, start_ms).days():
            this_week = (day[0].started - BASE_MS + 3 * DAY_MS) // (7 * DAY_MS) if day else week
            if week is not None and this_week != week and writer.imports:
                writer.flush_imports(day[0].started - 2 * HOUR_MS)  # `yarp import` before the week's work
            week = this_week
            for call in day:
                if n >= calls:
                    break
                writer.write(call, n)
                if n in writer.targets:
                    by_number[n] = call
                n += 1
            if n >= calls:
                break
        if writer.imports:
            writer.flush_imports(max(c.started + c.duration for _, c in writer.imports) + DAY_MS)
        writer.flush()
        store.wal_checkpoint("TRUNCATE")
        refs = [_ref_of(store, by_number[k]) for k in planted]
    finally:
        _store.new_archive_ref = saved_refs
        store.close()
    return {"calls": n, "path": str(path), "planted": planted,
            "planted_refs": refs}



def cached(root: Path, calls: int) -> Path:
    """The archive of `calls` calls under `root` (`calls-N/tool-calls.sqlite3`), generated once and kept
    for later benchmark runs."""
    import time

    path = root / f"calls-{calls}" / "tool-calls.sqlite3"
    if not path.exists():
        started = time.perf_counter()
        generate(path, calls)
        print(f"\ngenerated {calls} calls in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return path

def _ref_of(store: ArchiveStore, call: _Call) -> str:
    s = call.s.session
    return store.conn.execute(
        "SELECT c.archive_ref FROM tool_calls c JOIN sessions s ON s.id = c.session_id WHERE s.agent = ?"
        " AND s.account = ? AND s.source_session_id = ? AND c.source_call_id = ?",
        (s.agent, s.account, s.source_session_id, call.call_id)).fetchone()[0]


def extend(path: str | os.PathLike, calls: int, *, seed: int = 11) -> dict:
    """Add `calls` calls to the archive at `path`, after its newest one (new sessions, new references)."""
    return generate(path, calls, seed=seed)


def main(argv: list[str] | None = None) -> None:
    """`python bench/archive_gen.py PATH CALLS [--seed N] [--plant TEXT --plant-calls N]`."""
    parser = argparse.ArgumentParser(description="generate a realistic archive through the archive's writer")
    parser.add_argument("path")
    parser.add_argument("calls", type=int)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--plant", metavar="TEXT", help="a line written into the output of --plant-calls calls")
    parser.add_argument("--plant-calls", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    if (args.plant is None) != (args.plant_calls == 0):
        parser.error("--plant and --plant-calls go together")
    written = generate(args.path, args.calls, seed=args.seed, plant=args.plant, plant_calls=args.plant_calls)
    if args.plant:
        print(" ".join(written["planted_refs"]))


if __name__ == "__main__":
    main()
