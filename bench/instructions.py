"""Instructions per broker request, stage by stage, counted with callgrind.

    python bench/instructions.py                 # 1 KiB begin_call, 1,000 requests
    python bench/instructions.py --payload 16k --requests 500

Wall-clock figures on a shared 2-core machine swing by 20 % or more between
runs; instruction counts do not (the same binary, inputs and environment give
the same total whatever else the machine is doing), so this is the tool for
telling whether a change to the request path made it cheaper. Each stage is
measured as the difference between two runs under `valgrind --tool=callgrind`
that stop before and after it:

* envelope — `yarp.validate.parse_envelope` of the client's frame (decode and
  structural checks);
* operation — `yarp.validate.check_operation`: the strict validation of the
  operation and the identities derived from it, once;
* prepare — `yarp.prepare.prepare` (canonical JSON, SHA-256 and the
  compression decision): what the broker does before the write lock;
* apply — `ArchiveStore.apply_batch`, 25 requests per transaction (SQLite
  statements, savepoints, one `synchronous = FULL` commit per batch).

The socket, the event loop and the writer thread are not included (run
`bench/load.py` for those). Requires valgrind; exits with status 0 and a note
when it is absent.
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

STAGES = ("setup", "envelope", "operation", "prepare", "apply")

#: The measured program: runs every stage up to STOP_AFTER, then exits.
PROGRAM = """
import os, random, sys
sys.path.insert(0, {here!r})
from load import make_text
from yarp import operations as ops, protocol
from yarp.prepare import prepare
from yarp.validate import IMPLEMENTATION, check_operation, parse_envelope
from yarp.paths import ArchiveLocation
from yarp.store import ArchiveStore

stop = os.environ["STOP_AFTER"]
count, size, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
text = make_text(size, random.Random(1))
session = ops.Session("bench", "instructions", "s1")
work = [ops.BeginCall(session, ops.CallMeta(f"c{{i}}", "bash", 1, False), {{"i": i, "t": text}},
                      {{"i": i, "t": text}}, 1) for i in range(count)]
frames = [protocol.envelope(op, "c-bench", 1000) for op in work]
store = ArchiveStore.open(ArchiveLocation(path, False))
# One request through every stage first, so lazy imports count as set-up.
warm = ops.BeginCall(session, ops.CallMeta("warm", "bash", 1, False), {{"t": text}}, {{"t": text}}, 1)
warm_env = parse_envelope(protocol.envelope(warm, "c-bench", 1000), "c-bench")
store.apply_batch([prepare(check_operation(warm_env))])
print("validator:", IMPLEMENTATION, file=sys.stderr)
if stop == "setup":
    sys.exit()
envelopes = [parse_envelope(f, "c-bench") for f in frames]
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
"""


def count_instructions(stop: str, requests: int, size: int, workdir: str) -> int:
    archive = os.path.join(workdir, f"{stop}.sqlite3")
    script = os.path.join(workdir, "program.py")
    # A fixed hash seed: set and dict layouts, hence the instructions, repeat exactly.
    env = dict(os.environ, STOP_AFTER=stop, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, script,
         str(requests), str(size), archive],
        env=env, capture_output=True, text=True, check=True,
    )
    found = re.search(r"Collected\s*:\s*([\d,]+)", proc.stderr) or re.search(r"refs:\s*([\d,]+)", proc.stderr)
    if found is None:
        raise RuntimeError("callgrind printed no instruction total")
    return int(found.group(1).replace(",", ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--payload", default="1k", help="input text size of each begin_call (default 1k)")
    ap.add_argument("--requests", type=int, default=1000)
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing measured (apt install valgrind)")
        return 0
    size = parse_size(args.payload)
    # Byte-compiled modules, as installed: a stage must not count compiling a module it imports first.
    import compileall

    compileall.compile_dir(SRC, quiet=1)
    with tempfile.TemporaryDirectory(prefix="yarp-instr-") as workdir:
        os.chmod(workdir, 0o700)
        with open(os.path.join(workdir, "program.py"), "w") as handle:
            handle.write(PROGRAM.format(here=HERE))
        totals = {stop: count_instructions(stop, args.requests, size, workdir) for stop in STAGES}
    print(f"begin_call with {args.payload} of input, {args.requests} requests: instructions per request")
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
