"""Regenerate the fresh half of the generalization corpus: tools and situations in neither other half.

Run from the repo root: `python bench/generalization/generate_fresh.py [NAME ...]` records all or the
named cases; `--list` prints the recipes, `--check` re-checks the stored cases' signals, `--table`
prints the README's table, `--install` first installs the pinned tools (outside the repository).

The fresh half exists because the held-out half was read while view rules were written: it is a
third half that no view rule may be tuned on. Its cases were recorded and their signals annotated
from the raw outputs, and committed, before any view of them was computed. Every entry of
`manifest-fresh.json` has `"half": "fresh"`, whatever its name's hash says.

Each recipe writes a small project under `/tmp/yarp-gen/fresh/work/NAME` (a fixed place, so paths
in the output are stable), runs one command there and stores its exact stdout, stderr and exit
status beside this file (a stream over 200 KB as `NAME.STREAM.zst`), like the native generator,
whose machinery it reuses. The recipes, with their signals, are in `fresh_recipes_js.py` (npm and
node), `fresh_recipes_py.py` (Python), `fresh_recipes_native.py` (Go, Rust, C/C++, Java, make,
ctest) and `fresh_recipes_system.py` (git, sqlite3, jq, tar, rsync, system tools). A pattern that
matches no line of its new output stops the generator with the case's name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate_native as native
import half_cli
from fresh_common import APT_PINS, NPM, NPM_PINS, PY_PINS, RECIPES, VENV, WORK, Skip

MANIFEST = os.path.join(HERE, "manifest-fresh.json")
HALF = "fresh"


def load_recipes() -> None:
    """Import the recipe modules, which register themselves in `RECIPES` in this order."""
    import fresh_recipes_js  # noqa: F401
    import fresh_recipes_native  # noqa: F401
    import fresh_recipes_py  # noqa: F401
    import fresh_recipes_system  # noqa: F401


def install() -> None:
    """Install the pinned npm, PyPI and Debian tools outside the repository; failures only warn."""
    os.makedirs(NPM, exist_ok=True)
    steps = [["npm", "install", "--prefix", NPM, "--no-audit", "--no-fund", "--loglevel=error", *NPM_PINS]]
    if not os.path.exists(os.path.join(VENV, "bin", "python")):
        steps.append([sys.executable, "-m", "venv", VENV])
    steps.append([os.path.join(VENV, "bin", "python"), "-m", "pip", "install", "-q", *PY_PINS])
    steps.append(["apt-get", "install", "-y", "-qq", *(f"{p}={v}" for p, v in APT_PINS.items())])
    for step in steps:
        done = subprocess.run(step, capture_output=True, check=False)
        if done.returncode:
            print(f"warning: {' '.join(step[:3])} failed; its cases will be skipped", file=sys.stderr)


def record(rec) -> dict:
    """Set up, run and store one case; return its manifest entry (half `fresh`)."""
    missing = [b for b in rec.needs if not shutil.which(b, path=native.base_env()["PATH"] + ":" + os.path.join(
        NPM, "node_modules", ".bin") + ":" + os.path.join(VENV, "bin"))]
    if missing:
        raise Skip(f"{', '.join(missing)} not installed")
    version = native.tool_version(rec)
    root = os.path.join(WORK, rec.name)
    if os.path.isdir(root):
        subprocess.run(["chmod", "-R", "u+rwx", root], check=False)
        shutil.rmtree(root)
    os.makedirs(root)
    run = rec.setup(root)
    env = native.base_env()
    env.update(run.env)
    command = run.command or run.argv
    done = subprocess.run(command, cwd=os.path.normpath(os.path.join(root, run.cwd)), env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=run.timeout,
                          shell=isinstance(command, str), executable="/bin/bash" if isinstance(command, str) else None)
    streams = {"stdout": done.stdout, "stderr": done.stderr}
    if run.expect_exit and not run.expect_exit(done.returncode):
        raise RuntimeError(f"{rec.name}: unexpected exit status {done.returncode}\n"
                           f"{(done.stdout + done.stderr).decode('utf-8', 'replace')[-3000:]}")
    problems = native.check_signals(rec.name, run.signals, streams)
    if problems:
        last = os.path.join(WORK, ".last")
        os.makedirs(last, exist_ok=True)
        for stream, data in streams.items():
            with open(os.path.join(last, f"{rec.name}.{stream}"), "wb") as handle:
                handle.write(data)
        raise RuntimeError("\n".join(problems + [f"(this run's output is in {last})"]))
    native.store(rec.name, streams)
    return {"name": rec.name, "tool": rec.tool, "argv": run.argv, "exit_code": done.returncode,
            "signals": run.signals, "category": rec.category, "version": version, "half": HALF}


HALF_SPEC = half_cli.Half(HALF, MANIFEST, RECIPES, load_recipes, record, install, native.check_signals)


def main(argv=None) -> int:
    """Record all or the named cases, or list them, check them, or print the README's table."""
    return half_cli.main(HALF_SPEC, argv, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    raise SystemExit(main())
