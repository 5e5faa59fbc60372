"""Whether two revisions of the global cap show the same views: a digest of every view, per case.

    python bench/cap_views.py --against main     # this tree beside main
    python bench/cap_views.py                    # this tree only: prints its digest

A change made for speed must not change what the agent sees. This caps, in
each tree (`--against` extracts the other revision's `src/yarp` with `git
archive`; each tree runs in its own process with its own parse cache):

* every case of the pruning corpus at four caps, its stdout and stderr
  together (`cap_streams`) and joined (`cap_text`);
* every shared vector (`tests/vectors/cap`) at its own cap and at four caps;
* `seq 1 10000` and ten thousand worded log lines at seven caps, with and
  without a final newline;
* 400 seeded random mixes of numbered runs, noise, salient, marker,
  non-ASCII, invalid and over-long lines, split over two streams or not;
* the runner's file path (`cap_files`), including a stream big enough
  (about 18 MB) to be read in chunks;

and prints the digest of all views and the cases whose views differ.
Exits 1 if any differs. Takes about half a minute per tree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from cap_cost import trees  # noqa: E402

#: Runs in a fresh interpreter with PYTHONPATH set to one tree's `src`; prints {case: sha256 of its views}.
PROGRAM = r'''
import glob, hashlib, json, os, random, sys, tempfile
sys.path.insert(0, {here!r})
from corpus_cases import load_cases
try:
    from yarp.view.cap import cap_files, cap_streams, cap_text
except ImportError:  # a revision from before the regrouping by the path of a call
    from yarp.shell.cap import cap_files, cap_streams, cap_text

CAPS = (1024, 2048, 5120, 16384)
REF = "yr_" + "cd" * 16
POOL = [
    b"", b"   ", b"PASSED tests/test_a.py::test_one", b"tests/test_b.py::test_two PASSED [ 10%]",
    b"ok  \tpkg/sub\t0.01s", b"[=====>      ] 45%", b"Downloading foo-1.0.tar.gz (12 kB)",
    b"error: something broke here", b"src/main.c:10:5: error: expected ';' before '}}' token",
    b"    int x = 1", b"        ^", b"Traceback (most recent call last):",
    b'  File "/x/y.py", line 3, in <module>', b"ValueError: bad value", b"warning: unused variable `x`",
    b" --> src/lib.rs:4:9", b"=== 3 failed, 10 passed in 1.2s ===", b"diff --git a/x b/x", b"index 123..456 100644",
    b"--- a/x", b"+++ b/x", b"commit 0123456789abcdef0123456789abcdef01234567", b"Author: A <a@b>",
    b"    subject line of the commit", b"INFO worker handled request", b"12345", b"-----",
    "caf\u00e9 na\u00efve".encode(), b"\xff\xfe invalid utf8 \xc3", b"x" * 300, b"y" * 1500, "\u00e9".encode() * 700,
    b"[yarp: omitted 12 line(s) of this view]", b"Search omitted output: yarp search yr_00 'a|b'", b"exit status 1",
    b"FAILED tests/test_c.py::test_x", b"panic: runtime error: index out of range", b"\tat com.x.Y.z(Y.java:10)",
]


def digest(views):
    return hashlib.sha256(b"\x00--\x00".join(views or [b"<none>"])).hexdigest()


out = {{}}
for case in load_cases():
    for cap in CAPS:
        out[f"corpus/{{case.name}}/streams/{{cap}}"] = digest(cap_streams(
            [("stdout", case.stdout), ("stderr", case.stderr)], cap=cap, archive_ref=REF, exit_code=case.exit_code))
        out[f"corpus/{{case.name}}/text/{{cap}}"] = digest([cap_text(case.stdout + case.stderr, cap=cap, archive_ref=REF)])
for path in sorted(glob.glob(os.path.join({root!r}, "tests", "vectors", "cap", "*.json"))):
    with open(path, encoding="utf-8") as handle:
        vector = json.load(handle)
    for cap in (vector["cap"],) + CAPS:
        out[f"vector/{{os.path.basename(path)}}/{{cap}}"] = digest([cap_text(
            vector["input"].encode(), cap=cap, archive_ref=vector["ref"], source=vector["source"],
            completeness=vector["completeness"])])
seq = "".join(f"{{i}}\n" for i in range(1, 10001)).encode()
log = "".join(f"2026-12-03 12:{{i // 60 % 60:02d}}:{{i % 60:02d}} INFO worker-{{i % 4}} handled request id={{i}} "
              f"status=200 in {{i % 97}}ms\n" for i in range(10000)).encode()
for cap in CAPS + (700, 3000, 65536):
    for name, data in (("seq", seq), ("log", log), ("seq-no-newline", seq[:-1])):
        out[f"{{name}}/{{cap}}"] = digest([cap_text(data, cap=cap, archive_ref=REF, source="source_output")])
rng = random.Random(15)
for number in range(400):
    lines = rng.choices(POOL, [rng.random() ** 3 for _ in POOL], k=rng.choice((20, 80, 200, 600, 1500, 4000)))
    if rng.random() < 0.3:
        at, start = rng.randrange(len(lines) + 1), rng.choice((1, 8, 95, 990, 9990))
        lines[at:at] = [str(n).encode() for n in range(start, start + rng.choice((50, 300, 2000)))]
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.7 else b"")
    if rng.random() < 0.1:
        data = b"[yarp summary: 3 errors]\n" + data
    cap = rng.choice(CAPS + (1100, 1500, 3000, 7000))
    cut = rng.randrange(len(data) + 1) if rng.random() < 0.25 else len(data)
    out[f"random/{{number}}/{{cap}}"] = digest(cap_streams([("stdout", data[:cut]), ("stderr", data[cut:])], cap=cap,
                                                         archive_ref=REF, exit_code=rng.choice((None, 0, 2))))
with tempfile.TemporaryDirectory() as tmp:
    big, small = os.path.join(tmp, "big"), os.path.join(tmp, "small")
    rng = random.Random(7)
    with open(big, "wb") as handle:
        for block in range(60):
            handle.write(b"".join(rng.choice(POOL[:7] + POOL[24:27]) + b"\n" for _ in range(20000)))
            if block in (3, 40):
                handle.write(b"src/x.c:1:1: error: boom\n    int y\n        ^\n")
    with open(small, "wb") as handle:
        handle.write(b"".join(f"line {{i}} of output\n".encode() for i in range(3000)))
    for cap in CAPS:
        for paths in ((big, small), (small, big), (small, small)):
            names = "+".join(os.path.basename(p) for p in paths)
            out[f"files/{{names}}/{{cap}}"] = digest(cap_files(list(paths), cap=cap, archive_ref=REF, exit_code=1))
print(json.dumps(out))
'''


def _views(src: str, program: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=src, XDG_CACHE_HOME=os.path.join(os.path.dirname(src), "cache"))
    proc = subprocess.run([sys.executable, program], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="also cap with this git revision's src/yarp and compare")
    args = parser.parse_args(argv)
    import hashlib

    with tempfile.TemporaryDirectory(prefix="yarp-cap-views-") as tmp:
        program = os.path.join(tmp, "program.py")
        with open(program, "w") as handle:
            handle.write(PROGRAM.format(here=HERE, root=ROOT))
        views = {label: _views(src, program) for label, src in trees(tmp, args.against).items()}
    for label, found in views.items():
        total = hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest()
        print(f"{label:12s} {len(found)} views, digest {total}")
    if args.against:
        mine, theirs = views["this tree"], views[args.against]
        differ = sorted(case for case in mine.keys() | theirs.keys() if mine.get(case) != theirs.get(case))
        for case in differ:
            print(f"differs: {case}")
        print("views identical" if not differ else f"{len(differ)} case(s) differ")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
