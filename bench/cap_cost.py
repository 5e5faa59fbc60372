"""What one global cap costs: milliseconds and instructions per `cap_text`, on twelve outputs.

    python bench/cap_cost.py                    # this tree
    python bench/cap_cost.py --against main     # side by side with another revision's cap
    python bench/cap_cost.py --corpus [--against main]   # every real output of the corpus over 256 KiB
    python bench/cap_cost.py --corpus --instr-caps 1    # ... with instructions per cap, counted per case

The broker caps every output over the cap before it answers a hook, so the
cap's cost is paid inside the hook's latency budget. The outputs:

* seq — `seq 1 10000` (48,894 bytes of numbers) capped as the Codex hook caps
  it (`source_output`, complete, the default cap): the Codex benchmark's call;
* log — 10,000 worded log lines (about 770 KB), nothing salient in them;
* pytest — the recorded `pytest -v` output of the pruning corpus (PASSED
  lines: noise the context walk skips);
* log1m — 13,000 worded log lines (1 MB) with one ERROR line in the middle;
* build1m — the recorded `cargo build` errors and warnings repeated to 1 MiB
  (a salient line every few lines: the classifier's worst realistic case);
* cargo1m — the same, each copy naming its own file and missing value, so
  that fewer lines repeat byte for byte than in `build1m`;
* checkstyle, mandoc, pdnsutil, oops — real tools' outputs of the
  generalization corpus (`bench/generalization`), capped as a host's text is
  (stdout, then stderr): Checkstyle's 17,500 findings, each naming a long path
  (3.2 MB), mandoc's 6,000 warnings (718 KB), pdnsutil's 4,000 distinct
  `Checked N records of 'zone', 0 errors, 0 warnings.` (268 KB) and a kernel
  oops among 1.9 MB of log. Every line that holds a trigger differs from the
  others, so each is classed by the entries' expressions: the cost the
  synthetic inputs do not show.
* log8m, build8m — `log1m` and `build1m` eight times over, written to a file
  and capped as `yarp run` caps its stdout (`cap_files`): past `DENSE_LIMIT`
  a stream is read in chunks, holding only its edges and the windows of its
  first and last salient lines.

Each revision runs in its own processes (`--against` extracts the other
revision's `src/yarp` with `git archive`); wall time is the minimum over
interleaved rounds, and instructions are counted with callgrind as the
difference between a run that caps `--instr-caps` times and one that only
warms up (so imports and compiling the salience data are not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: Runs in a fresh interpreter with PYTHONPATH set to one tree's `src`.
PROGRAM = r"""
import json, os, sys, time
sys.path.insert(0, {here!r})
from corpus_cases import build_mib, read_host_text, read_stream
from yarp.view.cap import cap_text
from yarp.limits import DEFAULT_CAP_BYTES

REF = "yr_" + "ab" * 16
seq = "".join(f"{{i}}\n" for i in range(1, 10001)).encode()
log = "".join(f"2026-12-03 12:{{i // 60 % 60:02d}}:{{i % 60:02d}} INFO worker-{{i % 4}} handled request id={{i}} "
              f"status=200 in {{i % 97}}ms\n" for i in range(10000)).encode()
log1m = "".join(f"2026-12-03 12:{{i // 60 % 60:02d}}:{{i % 60:02d}} INFO worker-{{i % 4}} handled request id={{i}} "
                f"status=200 in {{i % 97}}ms\n" if i != 6500 else "2026-12-03 13:48:20 ERROR worker-2 payment gateway "
                f"timeout after 30000ms (order=8812)\n" for i in range(13000)).encode()
build1m, cargo1m = build_mib(), build_mib(varied=True)
GENERALIZATION = os.path.join({here!r}, "generalization")
REAL = {{"checkstyle": "checkstyle-inventory-two-errors", "mandoc": "mandoc-lint-toolkit-pages-two-errors",
        "pdnsutil": "pdnsutil-check-all-zones-cname-and-other-data", "oops": "cat-kernel-oops"}}
name, caps = sys.argv[1], int(sys.argv[2])
inputs = {{"seq": (seq, "source_output"), "log": (log, "result_text"),
          "pytest": (read_stream("pytest-verbose", "stdout"), "result_text"),
          "log1m": (log1m, "result_text"), "build1m": (build1m, "result_text"),
          "cargo1m": (cargo1m, "result_text")}}
if name in REAL:
    inputs[name] = (read_host_text(REAL[name], GENERALIZATION), "result_text")
if name in ("build8m", "log8m"):  # files past `DENSE_LIMIT`, read in chunks as `yarp run` reads them
    import tempfile
    from yarp.view.cap import cap_files
    data = (build1m if name == "build8m" else log1m) * 8
    folder = tempfile.mkdtemp()
    paths = [os.path.join(folder, "stdout"), os.path.join(folder, "stderr")]
    for path, text in zip(paths, (data, b"")):
        with open(path, "wb") as handle:
            handle.write(text)
    cap = lambda: b"".join(cap_files(paths, cap=DEFAULT_CAP_BYTES, archive_ref=REF))
else:
    data, source = inputs[name]
    cap = lambda: cap_text(data, cap=DEFAULT_CAP_BYTES, archive_ref=REF, source=source, completeness="complete")
view = cap()
times = []
for _ in range(caps):
    start = time.perf_counter()
    again = cap()
    times.append(time.perf_counter() - start)
    assert again == view
print(json.dumps({{"bytes": len(data), "times": times, "view": view.decode("utf-8", "replace")}}))
"""

INPUTS = ("seq", "log", "pytest", "log1m", "build1m", "cargo1m", "checkstyle", "mandoc", "pdnsutil", "oops", "log8m",
          "build8m")

#: `--corpus`: every case of the generalization corpus whose host text is at least `--corpus-bytes`, capped
#: as a host's text; prints {case: [bytes, min seconds]} (one tree's process, `caps` caps each). With a third
#: argument, `count`, every case is capped once first, then `caps` times each between two calls of
#: `os.getppid`, where callgrind (`--dump-before=getppid`) writes what it counted so far: one dump per case.
CORPUS_PROGRAM = r"""
import glob, json, os, sys, time
sys.path.insert(0, {here!r})
from corpus_cases import manifest_entries, read_host_text
from yarp.view.cap import cap_text

GENERALIZATION = os.path.join({here!r}, "generalization")
smallest, caps, count = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] == ["count"]
manifests = tuple(sorted(os.path.basename(path) for path in glob.glob(os.path.join(GENERALIZATION, "manifest-*.json"))))
cases = []
for entry in manifest_entries(GENERALIZATION, manifests):
    text = read_host_text(entry["name"], GENERALIZATION)
    if len(text) >= smallest:
        cases.append((entry["name"], text, int(entry["exit_code"])))

def cap(text, code):
    start = time.perf_counter()
    cap_text(text, archive_ref="yr_" + "ab" * 16, source="result_text", exit_code=code)
    return time.perf_counter() - start

if count:
    for _, text, code in cases:
        cap(text, code)  # warms up
    for _, text, code in cases:
        os.getppid()
        for _ in range(caps):
            cap(text, code)
    os.getppid()
    print(json.dumps([name for name, _, _ in cases]))
else:
    out = {{}}
    for name, text, code in cases:
        cap(text, code)  # warms up
        out[name] = [len(text), min(cap(text, code) for _ in range(caps))]
    print(json.dumps(out))
"""


def _run(src: str, name: str, caps: int, program: str, callgrind: bool = False) -> tuple[dict, int | None]:
    # Each tree keeps its own parse cache: the compiled salience data of one would evict the other's.
    cache = os.path.join(os.path.dirname(src), "cache")
    env = dict(os.environ, PYTHONPATH=src, PYTHONHASHSEED="0", XDG_CACHE_HOME=cache)
    argv = [sys.executable, program, name, str(caps)]
    if callgrind:
        argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    count = None
    if callgrind:
        found = re.search(r"Collected\s*:\s*([\d,]+)", proc.stderr) or re.search(r"refs:\s*([\d,]+)", proc.stderr)
        count = int(found.group(1).replace(",", "")) if found else None
    return json.loads(proc.stdout), count


def _extract(revision: str, into: str) -> str:
    """`src/yarp` of `revision`, written under `into`; returns the `src` directory.

    The compiled kernels are build products git does not hold: each one built in this tree is
    copied beside that revision's source when its `.pyx` is the same, and built from that revision's
    `.pyx` (`cythonize -i`, with setup.py's flags) when it differs, so both trees run compiled kernels
    (without them the other tree would scan with the pure-Python twins and look slower than it is)."""
    import glob

    archive = subprocess.run(["git", "-C", ROOT, "archive", revision, "src/yarp"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    for built in glob.glob(os.path.join(ROOT, "src", "yarp", "*.so")):
        name = os.path.basename(built).split(".", 1)[0]
        there = os.path.join(into, "src", "yarp", f"{name}.pyx")
        if not os.path.exists(there):
            continue
        if _kernel_source(ROOT, f"{name}.pyx") == _kernel_source(into, f"{name}.pyx"):
            shutil.copy2(built, os.path.join(into, "src", "yarp"))
        else:
            # Compiled as setup.py compiles this tree's (its flags after the interpreter's own): a kernel
            # built with other flags would be measured for its flags, not its code.
            cythonize = os.path.join(os.path.dirname(sys.executable), "cythonize")
            subprocess.run([cythonize, "-i", "-q", there], cwd=into, capture_output=True, check=True,
                           env=dict(os.environ, CFLAGS=_setup_cflags()))
    return os.path.join(into, "src")


def _kernel_source(base: str, name: str) -> bytes:
    """A kernel's `.pyx` (or an include) under `base`'s `src/yarp` with every file it includes, in order: a
    kernel whose own file is the same may include one that is not (`_scan_kinds.pxi`, `_alike.pxi`)."""
    with open(os.path.join(base, "src", "yarp", name), "rb") as handle:
        text = handle.read()
    parts = [text]
    for included in re.findall(rb'^include "([^"]+)"', text, re.M):
        parts.append(_kernel_source(base, included.decode()))
    return b"\0".join(parts)


def _setup_cflags() -> str:
    """The flags setup.py adds to the interpreter's when it compiles a kernel: its `extra_compile_args`."""
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as handle:
        found = re.search(r"extra_compile_args=\[([^\]]*)\]", handle.read())
    if found is None:
        raise SystemExit("setup.py names no extra_compile_args: cannot build a revision's kernels as it does")
    return " ".join(re.findall(r'"([^"]*)"', found.group(1)))


def trees(tmp: str, against: str | None) -> dict[str, str]:
    """Label -> `src` directory: this tree (linked) and, with `against`, that revision's
    `src/yarp`, each in a directory of its own under `tmp` (its parse cache goes beside it)."""
    os.mkdir(os.path.join(tmp, "this"))
    os.symlink(os.path.join(ROOT, "src"), os.path.join(tmp, "this", "src"))
    found = {"this tree": os.path.join(tmp, "this", "src")}
    if against:
        os.mkdir(os.path.join(tmp, "against"))
        found[against] = _extract(against, os.path.join(tmp, "against"))
    return found


def corpus(sources: dict[str, str], program: str, smallest: int, caps: int, instr_caps: int) -> None:
    """Per real output of at least `smallest` bytes, each tree's best time (and, with `instr_caps`, its
    millions of instructions per cap), and a summary: what a view costs on the tools' own outputs, which
    the synthetic inputs may not show."""
    env_of = {label: dict(os.environ, PYTHONPATH=src, PYTHONHASHSEED="0",
                          XDG_CACHE_HOME=os.path.join(os.path.dirname(src), "cache")) for label, src in sources.items()}
    found = {label: json.loads(subprocess.run([sys.executable, program, str(smallest), str(caps)], env=env,
                                              capture_output=True, text=True, check=True).stdout)
             for label, env in env_of.items()}
    counted = {label: _corpus_instructions(program, smallest, instr_caps, env) for label, env in env_of.items()
               } if instr_caps > 0 and shutil.which("valgrind") else {}
    labels = list(sources)
    first = found[labels[0]]
    print(f"{'case':52s} {'bytes':>9s} " + " ".join(f"{label[:12]:>12s}" for label in labels) + "  (min ms)"
          + ("".join(f" {label[:12]:>12s}" for label in counted) + "  (M instr/cap)" if counted else ""))
    for name in sorted(first, key=lambda name: -first[name][1]):
        print(f"{name[:52]:52s} {first[name][0]:9d} " + " ".join(f"{found[label][name][1] * 1000:12.2f}"
                                                               for label in labels)
              + "".join(f" {counted[label][name] / 1e6:12.2f}" for label in counted))
    for label in labels:
        times = found[label]
        big = [(size, took) for size, took in times.values() if size >= 1 << 20]
        instructions = f", {sum(counted[label].values()) / 1e6:.0f} M instructions" if label in counted else ""
        print(f"{label}: {len(times)} outputs, {sum(t for _, t in times.values()) * 1000:.0f} ms in all{instructions}, "
              f"the slowest {max(t for _, t in times.values()) * 1000:.1f} ms; of the {len(big)} of a MiB or more, "
              f"{sum(1 for size, took in big if took * 1000 > 5 * size / (1 << 20))} over 5 ms a MiB")


def _corpus_instructions(program: str, smallest: int, caps: int, env: dict) -> dict[str, float]:
    """Per case of `program`'s corpus run in `count` mode, the instructions callgrind counted per cap: the
    dump written before each `os.getppid` call holds what was counted since the one before it."""
    with tempfile.TemporaryDirectory(prefix="yarp-cap-cost-cg-") as tmp:
        out = os.path.join(tmp, "cg.out")
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
                               sys.executable, program, str(smallest), str(caps), "count"],
                              env=env, capture_output=True, text=True, check=True)
        names = json.loads(proc.stdout)
        counts = {}
        # Dump 1 holds the start and the warm-up; dump k + 2 the caps of case k.
        for number, name in enumerate(names, start=2):
            with open(f"{out}.{number}") as handle:
                totals = re.search(r"^(?:summary|totals):\s*(\d+)", handle.read(), re.M)
            counts[name] = int(totals.group(1)) / caps
        return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="also measure this git revision's cap, side by side")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per tree (default 5)")
    parser.add_argument("--caps", type=int, default=20, help="caps timed per round (default 20)")
    parser.add_argument("--instr-caps", type=int, default=5, help="caps counted under callgrind (0: skip)")
    parser.add_argument("--inputs", nargs="+", choices=INPUTS, default=INPUTS, help="the inputs measured (default all)")
    parser.add_argument("--corpus", action="store_true",
                        help="instead, cap every generalization case of at least --corpus-bytes (real outputs)")
    parser.add_argument("--corpus-bytes", type=int, default=256 << 10, help="the smallest case --corpus caps")
    args = parser.parse_args(argv)
    import compileall

    with tempfile.TemporaryDirectory(prefix="yarp-cap-cost-") as tmp:
        program = os.path.join(tmp, "program.py")
        with open(program, "w") as handle:
            handle.write(PROGRAM.format(here=HERE))
        sources = trees(tmp, args.against)
        if args.corpus:
            with open(program, "w") as handle:
                handle.write(CORPUS_PROGRAM.format(here=HERE))
            corpus(sources, program, args.corpus_bytes, max(1, args.rounds), args.instr_caps)
            return 0
        for src in sources.values():
            compileall.compile_dir(src, quiet=1)  # byte-compiled, as installed
            _run(src, INPUTS[0], 0, program)  # fills the tree's parse cache: no run below compiles the salience data
        counting = args.instr_caps > 0 and shutil.which("valgrind") is not None
        if args.instr_caps > 0 and not counting:
            print("valgrind is not installed: instructions not counted")
        print(f"{'input':10s} {'tree':12s} {'bytes':>8s} {'min ms':>8s} {'median ms':>10s} {'M instr/cap':>12s}")
        for name in args.inputs:
            best: dict[str, list[float]] = {label: [] for label in sources}
            views = {}
            for _ in range(args.rounds):
                for label, src in sources.items():
                    result, _count = _run(src, name, args.caps, program)
                    best[label].extend(result["times"])
                    views[label] = result["view"]
                    size = result["bytes"]
            same = len(set(views.values())) == 1
            for label, src in sources.items():
                instructions = ""
                if counting:
                    _, warm = _run(src, name, 0, program, callgrind=True)
                    _, capped = _run(src, name, args.instr_caps, program, callgrind=True)
                    instructions = f"{(capped - warm) / args.instr_caps / 1e6:12.2f}"
                times = sorted(best[label])
                print(f"{name:10s} {label:12s} {size:8d} {times[0] * 1000:8.2f} {times[len(times) // 2] * 1000:10.2f}"
                      f" {instructions}")
            if len(sources) > 1:
                print(f"{'':10s} views {'identical' if same else 'DIFFER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
