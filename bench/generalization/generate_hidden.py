"""Regenerate the hidden half of the generalization corpus: tools and situations in no other half.

Run from the repo root: `python bench/generalization/generate_hidden.py [NAME ...]` records all or the
named cases; `--list` prints the recipes, `--check` re-checks the stored cases' signals, `--table`
prints the README's table, `--install` first installs the pinned tools (outside the repository).

The hidden half exists because the sealed half was scored once and its losses were then read, so it
is spent too: this sixth half is one nobody has looked at through the view. Its cases were recorded and
their signals annotated from the raw outputs, and committed, without any view of them being computed;
it is to be scored once. Every entry of `manifest-hidden.json` has `"half": "hidden"`.

Each recipe writes a small project under `/tmp/yarp-gen/hidden/work/NAME` (a fixed place, so paths in
the output are stable), runs one command there in one fixed environment (`hidden_common.hidden_env`,
the blind half's) and stores its exact stdout, stderr and exit status beside this file (a stream over
200 KB as `NAME.STREAM.zst`), with the native generator's storage. The recipes, with their signals,
are in `hidden_recipes_py.py` (PyPI tools and Python programs), `hidden_recipes_js.py` (npm tools),
`hidden_recipes_native.py` (compilers, build tools, crashes) and `hidden_recipes_system.py` (VCS,
services, data, listings). A pattern that matches no line of its new output, or more than 15, stops
the generator with the case's name; so does a case whose patterns match more than 15 lines in all.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generate_native as native
from generate_blind import check_signals
from hidden_common import APT_PINS, HOME, NPM, NPM_PINS, PY_PINS, RECIPES, VENV, WORK, Skip, hidden_env

MANIFEST = os.path.join(HERE, "manifest-hidden.json")
STREAMS = ("stdout", "stderr")
HALF = "hidden"


def load_recipes() -> None:
    """Import the recipe modules, which register themselves in `RECIPES` in this order."""
    import hidden_recipes_py  # noqa: F401, I001 (this order: Python, npm, native, system)
    import hidden_recipes_js  # noqa: F401
    import hidden_recipes_native  # noqa: F401
    import hidden_recipes_system  # noqa: F401


def install() -> None:
    """Install the pinned npm, PyPI and Debian tools outside the repository; failures only warn."""
    os.makedirs(NPM, exist_ok=True)
    steps = [["npm", "install", "--prefix", NPM, "--no-audit", "--no-fund", "--loglevel=error", *NPM_PINS]]
    if not os.path.exists(os.path.join(VENV, "bin", "python")):
        steps.append([sys.executable, "-m", "venv", VENV])
    steps.append([os.path.join(VENV, "bin", "python"), "-m", "pip", "install", "-q", *PY_PINS])
    steps.append(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                  *(f"{p}={v}" for p, v in APT_PINS.items())])
    for step in steps:
        done = subprocess.run(step, capture_output=True, check=False, cwd="/tmp",
                              env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if done.returncode:
            print(f"warning: {' '.join(step[:3])} failed; its cases will be skipped", file=sys.stderr)


def execute(rec, root: str):
    """Set up the case's project in `root` and run its command; return the run and the finished process."""
    run = rec.setup(root)
    env = hidden_env()
    env.update(run.env)
    env = {k: v for k, v in env.items() if v is not None}  # a recipe unsets a variable with None
    command = run.command or run.argv
    done = subprocess.run(command, cwd=os.path.normpath(os.path.join(root, run.cwd)), env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=run.timeout,
                          shell=isinstance(command, str), executable="/bin/bash" if isinstance(command, str) else None)
    return run, done


def fresh_root(name: str) -> str:
    """The case's project directory, emptied (its previous run's files removed, even read-only ones)."""
    root = os.path.join(WORK, name)
    if os.path.isdir(root):
        subprocess.run(["chmod", "-R", "u+rwx", root], check=False)
        shutil.rmtree(root)
    os.makedirs(root)
    os.chmod(root, 0o755)
    os.makedirs(HOME, exist_ok=True)
    return root


def keep_last(name: str, streams: dict[str, bytes]) -> str:
    """Write a failed run's streams under the work directory, for reading; return the directory."""
    last = os.path.join(WORK, ".last")
    os.makedirs(last, exist_ok=True)
    for stream, data in streams.items():
        with open(os.path.join(last, f"{name}.{stream}"), "wb") as handle:
            handle.write(data)
    return last


def record(rec) -> dict:
    """Set up, run and store one case; return its manifest entry (half `hidden`)."""
    missing = [b for b in rec.needs if not shutil.which(b, path=hidden_env()["PATH"])]
    if missing:
        raise Skip(f"{', '.join(missing)} not installed")
    version = native.tool_version(rec)
    run, done = execute(rec, fresh_root(rec.name))
    streams = {"stdout": done.stdout, "stderr": done.stderr}
    if run.expect_exit and not run.expect_exit(done.returncode):
        last = keep_last(rec.name, streams)
        raise RuntimeError(f"{rec.name}: unexpected exit status {done.returncode} (output in {last})")
    problems = check_signals(rec.name, run.signals, streams)
    if problems:
        raise RuntimeError("\n".join(problems + [f"(this run's output is in {keep_last(rec.name, streams)})"]))
    native.store(rec.name, streams)
    return {"name": rec.name, "tool": rec.tool, "argv": run.argv, "exit_code": done.returncode,
            "signals": run.signals, "category": rec.category, "version": version, "half": HALF}


def load_manifest() -> dict[str, dict]:
    """The stored entries by name, or none."""
    if not os.path.exists(MANIFEST):
        return {}
    with open(MANIFEST, encoding="utf-8") as handle:
        return {e["name"]: e for e in json.load(handle)}


def save_manifest(entries: dict[str, dict]) -> None:
    """Write the manifest in recipe order."""
    ordered = [entries[r.name] for r in RECIPES if r.name in entries]
    with open(MANIFEST, "w", encoding="utf-8") as handle:
        json.dump(ordered, handle, indent=1, ensure_ascii=False)
        handle.write("\n")


def check(entries: dict[str, dict]) -> int:
    """Re-check every stored case's signals against its stored streams."""
    problems = []
    for entry in entries.values():
        streams = {s: native.load_stream(entry["name"], s) for s in STREAMS}
        problems += check_signals(entry["name"], entry["signals"], streams)
        if entry["half"] != HALF:
            problems.append(f"{entry['name']}: half {entry['half']!r}, not {HALF!r}")
    print("\n".join(problems) or f"{len(entries)} case(s): every signal matches")
    return 1 if problems else 0


def main(argv=None) -> int:
    """Record all or the named cases, or list them, check them, or print the README's table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--list", action="store_true", help="print the recipes")
    parser.add_argument("--check", action="store_true", help="check the stored cases' signals only")
    parser.add_argument("--table", action="store_true", help="print the README's table of the recorded cases")
    parser.add_argument("--install", action="store_true", help="install the pinned tools first")
    args = parser.parse_args(argv)
    load_recipes()
    unknown = sorted(set(args.names) - {r.name for r in RECIPES})
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    entries = load_manifest()
    if args.list:
        print("\n".join(f"{r.name:34} {r.tool:12} {r.category}" for r in RECIPES))
        return 0
    if args.table:
        print(native.readme_table([entries[r.name] for r in RECIPES if r.name in entries]))
        return 0
    if args.check:
        return check(entries)
    if args.install:
        install()
    failed = native.record_each(RECIPES, args.names, entries, record)
    save_manifest(entries)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
