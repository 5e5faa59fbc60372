"""Where one cap's instructions go: its passes, counted one by one under callgrind.

    python bench/cap_phases.py CASE [CASE ...]     # cases of the generalization corpus (bench/generalization),
                                                   # or build1m / cargo1m, the synthetic MiBs of cap_cost.py

Wall-clock timers around a cap's passes mislead on a shared machine by more than
the passes' sizes (a hint's search timed at 1.8 ms counted 1 M instructions), and
callgrind attributes a Python function's work to the interpreter's loop. So each
pass listed in `PASSES` runs between two calls of `os.getppid`, where callgrind
(`--dump-before=getppid`) writes what it has counted: the dump that ends at a
pass's second call is that pass. A pass called inside another is counted in the
outer one. The cap runs once to warm up (imports, compiled expressions) before
the counted one. Needs valgrind.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: (module, attribute) of each pass counted: a stream's classing passes, then the cap's.
PASSES = [("yarp.view.salience", "Classifier.salient_line_numbers"), ("yarp.view.streams", "split_lines"),
          ("yarp.view.streams", "classed_alike"), ("yarp.view.streams", "rare_findings"),
          ("yarp.view.streams", "rare_lines"), ("yarp.view.streams", "rare_shapes"),
          ("yarp.view.streams", "largest_values"), ("yarp.view.streams", "rare_values"),
          ("yarp.view.streams", "rare_columns"), ("yarp.view.cap", "block_units"), ("yarp.view.cap", "spend_alike"),
          ("yarp.view.cap", "spend_on_blocks"), ("yarp.view.cap", "_context"), ("yarp.view.cap", "search_pattern"),
          ("yarp.view.cap", "omitted_counts"), ("yarp.view.cap", "_render")]

#: The synthetic MiBs of `bench/cap_cost.py`, built by `corpus_cases.build_mib`.
SYNTHETIC = ("build1m", "cargo1m")

#: Runs under callgrind with PYTHONPATH at the tree's `src`; prints the passes in the order counted.
PROGRAM = r"""
import functools, importlib, os, sys
sys.path.insert(0, {here!r})
from corpus_cases import build_mib, read_host_text
from yarp.view import cap
name = {name!r}
if name in {synthetic!r}:
    text = build_mib(varied=name == "cargo1m")
else:
    text = read_host_text(name, os.path.join({here!r}, "generalization"))
order, counting = [], [False]

def counted(function, label):
    @functools.wraps(function)
    def run(*args, **kwargs):
        if not counting[0]:
            return function(*args, **kwargs)
        counting[0] = False  # a pass inside this one is this one's
        os.getppid()
        try:
            return function(*args, **kwargs)
        finally:
            os.getppid()
            order.append(label)
            counting[0] = True
    return run

for module, attribute in {passes!r}:
    owner = importlib.import_module(module)
    *path, last = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    setattr(owner, last, counted(getattr(owner, last), last))
cap.cap_text(text, archive_ref="yr_" + "ab" * 16, source="result_text", completeness="complete")
counting[0] = True
os.getppid()
cap.cap_text(text, archive_ref="yr_" + "ab" * 16, source="result_text", completeness="complete")
counting[0] = False
os.getppid()
print(" ".join(order))
"""


def _count(dump: str) -> int:
    with open(dump) as handle:
        for line in handle:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    return 0


def phases(name: str) -> tuple[int, dict[str, int]]:
    """(the counted cap's instructions, per pass its instructions and the rest's under `(rest)`)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        program = PROGRAM.format(here=HERE, name=name, passes=PASSES, synthetic=SYNTHETIC)
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), PYTHONHASHSEED="0")
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
                               sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
        order = proc.stdout.split()
        counts = [_count(f"{out}.{number}") for number in range(2, len(glob.glob(out + ".*")) + 1)]
    # Dumps after the warm-up: the rest before a pass, the pass, ..., the rest after the last pass.
    spent = {"(rest)": sum(counts[0::2])}
    for label, count in zip(order, counts[1::2]):
        spent[label] = spent.get(label, 0) + count
    return sum(counts), spent


def main(argv=None) -> int:
    names = argv if argv is not None else sys.argv[1:]
    if not names:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for name in names:
        if name not in SYNTHETIC and not glob.glob(os.path.join(HERE, "generalization", glob.escape(name) + ".std*")):
            print(f"no such case: {name} (a case of bench/generalization, or one of {', '.join(SYNTHETIC)})",
                  file=sys.stderr)
            return 2
        total, spent = phases(name)
        print(f"{name}: {total / 1e6:.1f} M instructions")
        for label, count in sorted(spent.items(), key=lambda item: -item[1]):
            if count >= 50_000:
                print(f"  {label:24s} {count / 1e6:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
