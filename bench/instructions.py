"""Instructions per broker request, stage by stage, counted with callgrind.

    python bench/instructions.py                 # 1 KiB begin_call, 1,000 requests
    python bench/instructions.py --payload 16k --requests 500

Wall-clock figures on a shared 2-core machine swing by 20 % or more between
runs; instruction counts do not (the same binary, inputs and environment give
the same total whatever else the machine is doing), so this is the tool for
telling whether a change to the request path made it cheaper. Each stage is
measured as the difference between two runs under `valgrind --tool=callgrind`
that stop before and after it:

* envelope — `yarp.wire.validation.parse_request` of the client's frame (decode and
  structural checks);
* operation — `yarp.wire.validation.check_operation`: the strict validation of the
  operation and the identities derived from it, once;
* prepare — `yarp.archive.prepare.prepare` (canonical JSON, SHA-256 and the
  compression decision): what the broker does before the write lock;
* apply — `ArchiveStore.apply_batch`, 25 requests per transaction (SQLite
  statements, savepoints, one `synchronous = FULL` commit per batch);
* in_place — `ArchiveStore.still_at_path`, once per batch: the writer's
  `fstat` and `stat` telling that its open file is still the one at the
  archive path, before it acknowledges the batch.

The socket, the event loop and the writer thread are not included (run
`bench/load.py` for those). glibc's large copies and clears are counted as
its vector loops, not as `rep` string instructions callgrind counts byte by
byte (`VECTOR_LOOPS`; `--rep-strings` counts those too).

    python bench/instructions.py --processes [--against OTHER/src]

counts instead the whole processes an agent starts for every tool call (a
hook's `PreToolUse` for a Read, one for a Bash command that is rewritten,
`yarp run -- true`, and `yarp --version` for the command table alone), each
over the interpreter's own start-up (`python -c pass`), against one warm
broker of this tree. `--against` runs the same processes from another
source tree (a worktree at an earlier revision) beside them. Each process
runs once before it is counted, so bytecode and rule caches are warm, as
they are for an installed YARP.

Requires valgrind; exits with status 0 and a note when it is absent.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
sys.path.insert(0, HERE)

from load import parse_size  # noqa: E402

STAGES = ("setup", "envelope", "operation", "prepare", "apply", "in_place")

#: glibc copies and clears large buffers with `rep movsb` / `rep stosb`, and
#: callgrind counts every byte such an instruction moves as one instruction: a
#: 64 KiB memset counts 65,536 where the vector loop counts about 3,600, and
#: SQLite clears a page-cache buffer for every page it fetches (about 64 K
#: "instructions" per 1 KiB begin_call). The stages are counted with the vector
#: loops, so a count follows the work done; `--rep-strings` counts the default.
VECTOR_LOOPS = ("glibc.cpu.x86_rep_stosb_threshold=0x7fffffffffffffff"
                ":glibc.cpu.x86_rep_movsb_threshold=0x7fffffffffffffff")

#: The measured program: runs every stage up to STOP_AFTER, then exits.
PROGRAM = """
import os, random, sys
sys.path.insert(0, {here!r})
from load import make_text
from yarp.wire import operations as ops, protocol
from yarp.archive.prepare import prepare
from yarp.wire.validation import IMPLEMENTATION, check_operation, parse_request
from yarp.paths import ArchiveLocation
from yarp.archive.store import ArchiveStore

stop = os.environ["STOP_AFTER"]
count, size, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
text = make_text(size, random.Random(1))
session = ops.Session("bench", "instructions", "s1")
work = [ops.BeginCall(session, ops.CallMeta(f"c{{i}}", "bash", 1, False), {{"i": i, "t": text}},
                      {{"i": i, "t": text}}, 1) for i in range(count)]
frames = [protocol.envelope(op, "c-bench", 1000) for op in work]
store = ArchiveStore.open(ArchiveLocation(path, False))
# One batch through every stage first, so lazy imports and the statements SQLite
# prepares once (the broker keeps them for its lifetime) count as set-up.
warm = [ops.BeginCall(session, ops.CallMeta(f"warm{{i}}", "bash", 1, False), {{"t": text}}, {{"t": text}}, 1)
        for i in range(25)]
store.apply_batch([prepare(check_operation(parse_request(protocol.envelope(op, "c-bench", 1000), "c-bench")))
                   for op in warm])
print("validator:", IMPLEMENTATION, file=sys.stderr)
if stop == "setup":
    sys.exit()
envelopes = [parse_request(f, "c-bench") for f in frames]
if stop == "envelope":
    sys.exit()
operations = [check_operation(env) for env in envelopes]
if stop == "operation":
    sys.exit()
prepared = [prepare(op) for op in operations]
if stop == "prepare":
    sys.exit()
for start in range(0, count, 25):
    store.apply_batch(prepared[start:start + 25])
if stop == "apply":
    sys.exit()
for start in range(0, count, 25):
    store.still_at_path()  # the writer's check, once per batch, that its file is still the archive's
"""


def callgrind_total(argv: list[str], env: dict, data: bytes | None = None, cwd: str | None = None) -> int:
    """Instructions callgrind counts for one whole process."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv], input=data,
                          stdin=None if data is not None else subprocess.DEVNULL, env=env, cwd=cwd,
                          capture_output=True, text=False, check=False)
    stderr = proc.stderr.decode(errors="replace")
    found = re.search(r"Collected\s*:\s*([\d,]+)", stderr) or re.search(r"refs:\s*([\d,]+)", stderr)
    if found is None or proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed under callgrind (status {proc.returncode})")
    return int(found.group(1).replace(",", ""))


def count_instructions(stop: str, requests: int, size: int, workdir: str, rep_strings: bool) -> int:
    archive = os.path.join(workdir, f"{stop}.sqlite3")
    script = os.path.join(workdir, "program.py")
    # A fixed hash seed: set and dict layouts, hence the instructions, repeat exactly.
    env = dict(os.environ, STOP_AFTER=stop, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    if not rep_strings:
        env["GLIBC_TUNABLES"] = VECTOR_LOOPS
    return callgrind_total([sys.executable, script, str(requests), str(size), archive], env)


def _hook_event(tool: str, tool_input: dict, cwd: str) -> bytes:
    import json
    import uuid

    return json.dumps({"session_id": "instructions", "transcript_path": "/tmp/none.jsonl", "cwd": cwd,
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": tool_input, "tool_use_id": "toolu_" + uuid.uuid4().hex}).encode()


def count_processes(trees: list[tuple[str, str]]) -> None:
    """Print the per-tool-call processes' instructions over the floor, for each (name, src) tree."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
    from run_helpers import broker_pids, close_run_env, kill_pid, make_run_env

    script = os.path.join(os.path.dirname(sys.executable), "yarp")
    yarp = [script] if os.access(script, os.X_OK) else [sys.executable, "-m", "yarp"]
    benv = make_run_env(idle_ms=600_000)
    work = os.path.join(benv.root, "work")
    os.mkdir(work, 0o700)
    cases = {
        "hook, Read PreToolUse": ([*yarp, "hook", "claude-code"],
                                  lambda: _hook_event("Read", {"file_path": "/etc/hosts"}, work)),
        "hook, Bash PreToolUse (rewritten)": ([*yarp, "hook", "claude-code"],
                                              lambda: _hook_event("Bash", {"command": "grep -rn needle ."}, work)),
        "yarp run -- true": ([*yarp, "run", "--", "true"], None),
        "yarp --version": ([*yarp, "--version"], None),
    }
    try:
        benv.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        benv.environ.update(PYTHONPYCACHEPREFIX=os.path.join(benv.root, "pyc"), PYTHONHASHSEED="0",
                            XDG_CACHE_HOME=os.path.join(benv.root, "cache"))
        subprocess.run([*yarp, "run", "--", "true"], env=benv.environ, check=True, stdin=subprocess.DEVNULL)
        rows = {}
        for name, src in trees:
            env = dict(benv.environ, PYTHONPATH=src + os.pathsep + benv.environ["PYTHONPATH"])
            floor = callgrind_total([sys.executable, "-c", "pass"], env, cwd=work)
            for case, (argv, event) in cases.items():
                callgrind_total(argv, env, event() if event else None, cwd=work)  # caches warm
                total = callgrind_total(argv, env, event() if event else None, cwd=work)
                rows.setdefault(case, {})[name] = (total - floor) / 1e6
            rows.setdefault("python -c pass (the floor itself)", {})[name] = floor / 1e6
        names = [name for name, _ in trees]
        print("instructions of one whole process over the floor, in millions: " + " | ".join(names))
        for case, by_tree in rows.items():
            print(f"  {case:<36} " + "  ".join(f"{by_tree[name]:8.2f}" for name in names))
    finally:
        for pid in broker_pids(benv.archive):
            kill_pid(pid)
        close_run_env(benv, timeout=5)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--payload", default="1k", help="input text size of each begin_call (default 1k)")
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--processes", action="store_true",
                    help="count the per-tool-call processes (hooks, yarp run) over the interpreter floor")
    ap.add_argument("--against", metavar="SRC", help="with --processes: another tree's src directory, side by side")
    ap.add_argument("--rep-strings", action="store_true",
                    help="count glibc's rep-string copies byte by byte, as callgrind does by default")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing measured (apt install valgrind)")
        return 0
    if args.processes:
        trees = [("this tree", SRC)] + ([("against", os.path.abspath(args.against))] if args.against else [])
        count_processes(trees)
        return 0
    size = parse_size(args.payload)
    # Byte-compiled modules, as installed: a stage must not count compiling a module it imports first.
    import compileall

    compileall.compile_dir(SRC, quiet=1)
    with tempfile.TemporaryDirectory(prefix="yarp-instr-") as workdir:
        os.chmod(workdir, 0o700)
        with open(os.path.join(workdir, "program.py"), "w") as handle:
            handle.write(PROGRAM.format(here=HERE))
        totals = {stop: count_instructions(stop, args.requests, size, workdir, args.rep_strings) for stop in STAGES}
    counted = "rep-string copies byte by byte" if args.rep_strings else "glibc's vector copy loops"
    print(f"begin_call with {args.payload} of input, {args.requests} requests: instructions per request"
          f" ({counted})")
    previous = totals["setup"]
    total = 0
    for stage in STAGES[1:]:
        per_request = (totals[stage] - previous) / args.requests
        previous = totals[stage]
        total += per_request
        print(f"  {stage:<10} {per_request / 1000:8.1f} K")
    print(f"  {'broker':<10} {total / 1000:8.1f} K  (every stage: the operation is parsed once)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
