"""What every later half's generator shares: its manifest, the check of its stored cases, and its command line.

A half's generator (`generate_fresh.py`, `generate_blind.py`, `generate_sealed.py`,
`generate_hidden.py`) knows its tools, its environment and how to record one case; this
module keeps the rest in one place: installing pinned tools, running a case in a fresh
project directory, reading and writing `manifest-HALF.json` in recipe order, re-checking
every stored case's signals against its stored streams, and the options `NAMES`,
`--list`, `--check`, `--table` and `--install`. The blind, sealed and hidden halves also
share where their tools live and the environment their commands run in (`Place`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable

import generate_native as native

STREAMS = ("stdout", "stderr")
#: The most lines a case's signals may match, one pattern or all together.
MOST_LINES = 15


class Place:
    """Where a half's tools and projects live (`/tmp/yarp-gen/HALF`: `work`, `home`, `npm`, `venv`), its
    recipe registry, and the one environment its commands run in: its pinned tools first on PATH, a
    private HOME, `LANG=C.UTF-8`, `TZ=UTC`, no colours, no CI variable."""

    def __init__(self, half: str) -> None:
        root = os.path.join("/tmp/yarp-gen", half)
        self.half = half
        self.work, self.home = os.path.join(root, "work"), os.path.join(root, "home")
        self.npm, self.venv = os.path.join(root, "npm"), os.path.join(root, "venv")
        self.npm_bin, self.venv_bin = os.path.join(self.npm, "node_modules", ".bin"), os.path.join(self.venv, "bin")
        self.recipes: list[native.Recipe] = []

    def recipe(self, name: str, tool: str, category: str, version: list[str], needs=()):
        """Register the decorated setup function as this half's recipe `name`."""
        def register(setup):
            """Add the recipe; hand the setup function back unchanged."""
            self.recipes.append(native.Recipe(name, tool, category, list(version), setup, tuple(needs)))
            return setup
        return register

    def env(self) -> dict[str, str]:
        """The environment of every recorded command of this half."""
        cargo = os.path.expanduser("~/.cargo/bin")
        return {"PATH": f"{self.venv_bin}:{self.npm_bin}:{cargo}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
                "HOME": self.home, "LANG": "C.UTF-8", "TZ": "UTC", "TERM": "dumb", "NO_COLOR": "1",
                "FORCE_COLOR": "0", "CLICOLOR": "0", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
                "COLUMNS": "100", "NPM_CONFIG_UPDATE_NOTIFIER": "false", "NPM_CONFIG_FUND": "false",
                "PIP_CONFIG_FILE": "/dev/null"}

    def vbin(self, name: str) -> str:
        """A pinned PyPI tool's path."""
        return os.path.join(self.venv_bin, name)

    def pyver(self, dist: str) -> list[str]:
        """A version command that asks the half's venv Python for an installed distribution's version."""
        return [self.vbin("python"), "-c", f"import importlib.metadata as m; print(m.version('{dist}'))"]

    def npmver(self, package: str) -> list[str]:
        """A version command that reads an installed npm package's version (for tools whose --version
        prints none)."""
        return ["node", "-p", f"require('{self.npm}/node_modules/{package}/package.json').version"]

    def nbin(self, name: str) -> str:
        """A pinned npm tool's path."""
        return os.path.join(self.npm_bin, name)

    def link_node_modules(self, root: str) -> None:
        """Give a project the pinned npm tools as its own node_modules (a symlink)."""
        os.symlink(os.path.join(self.npm, "node_modules"), os.path.join(root, "node_modules"))


def wait_port(port: int) -> str:
    """Shell that waits until something listens on 127.0.0.1:`port` (a recipe's server started in the
    background)."""
    return (f"for i in $(seq 200); do python -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))' "
            f"2>/dev/null && break; sleep 0.1; done; ")


def served(server: str, port: int, client: str) -> str:
    """Shell that starts a recipe's `server` in the background, waits until it listens on 127.0.0.1:`port`,
    runs `client` against it, then stops the server and exits 0: the server's log is the case's output."""
    return f"{server} & server=$!; " + wait_port(port) + f"{client}; kill -TERM $server; wait $server; exit 0"


def redis_server(sock: str) -> str:
    """Shell that starts a private redis-server on the Unix socket `sock` (no TCP, no persistence) as `$redis`."""
    return (f"redis-server --port 0 --unixsocket {sock} --save '' --appendonly no --loglevel warning >/dev/null & "
            f"redis=$!; for i in $(seq 100); do [ -S {sock} ] && break; sleep 0.05; done; ")


@dataclass(frozen=True)
class Half:
    """One half's generator: its name, manifest path, recipes (filled by `load_recipes`), how it records
    one case and installs its tools, and its signal check (name, signals, streams -> problems)."""

    name: str
    manifest: str
    recipes: list
    load_recipes: Callable[[], None]
    record: Callable[[object], dict]
    install: Callable[[], None]
    check_signals: Callable[[str, list, dict], list]


def pinned_half(name: str, place: Place, here: str) -> Half:
    """A half whose four recipe modules (`NAME_recipes_py`, `_js`, `_native`, `_system`, registering in
    `place` in that order) each pin their own tools (`NPM_PINS`, `PY_PINS`, `APT_PINS`), recorded in
    `place`'s environment into `manifest-NAME.json` beside the generator (`here`)."""
    modules = tuple(f"{name}_recipes_{kind}" for kind in ("py", "js", "native", "system"))

    def load_recipes() -> list:
        """Import the recipe modules, which register themselves in the place's recipes; return them."""
        import importlib

        return [importlib.import_module(module) for module in modules]

    def install_pins() -> None:
        """Install every recipe module's pinned npm, PyPI and Debian tools outside the repository."""
        loaded = load_recipes()
        install(place.npm, [pin for m in loaded for pin in getattr(m, "NPM_PINS", [])], place.venv,
                [pin for m in loaded for pin in getattr(m, "PY_PINS", [])],
                {k: v for m in loaded for k, v in getattr(m, "APT_PINS", {}).items()})

    def record(rec) -> dict:
        """Set up, run and store one case; return its manifest entry."""
        return record_case(rec, name, place.work, place.env(), home=place.home)

    return Half(name, os.path.join(here, f"manifest-{name}.json"), place.recipes, load_recipes, record, install_pins,
                check_signals)


def check_signals(name: str, signals: list[dict], streams: dict[str, bytes]) -> list[str]:
    """Problems with a case's signals: a pattern matching no line or over `MOST_LINES`, or over
    `MOST_LINES` lines in all."""
    import re

    problems, total = [], 0
    for signal in signals:
        regex = re.compile(signal["pattern"])
        hits = sum(1 for line in native.split_lines(streams[signal["stream"]]) if regex.search(line))
        total += hits
        if not hits or hits > MOST_LINES:
            problems.append(f"{name}: {signal['stream']} pattern {signal['pattern']!r} matches {hits} lines")
    if total > MOST_LINES:
        problems.append(f"{name}: signals match {total} lines (at most {MOST_LINES})")
    return problems


def load_manifest(half: Half) -> dict[str, dict]:
    """The stored entries by name, or none."""
    try:
        with open(half.manifest, encoding="utf-8") as handle:
            return {e["name"]: e for e in json.load(handle)}
    except FileNotFoundError:
        return {}


def save_manifest(half: Half, entries: dict[str, dict]) -> None:
    """Write the manifest in recipe order, then any entry whose recipe this generator does not know
    (added by a newer generator recording at the same time), so no write drops another's case."""
    known = [r.name for r in half.recipes]
    ordered = [entries[name] for name in known if name in entries]
    ordered += [entry for name, entry in entries.items() if name not in set(known)]
    with open(half.manifest, "w", encoding="utf-8") as handle:
        json.dump(ordered, handle, indent=1, ensure_ascii=False)
        handle.write("\n")


def merge_manifest(half: Half, recorded: dict[str, dict]) -> None:
    """Add the newly recorded entries to the manifest as it is on disk now, under a lock, so two
    generators recording different cases of one half at once keep each other's entries."""
    import fcntl

    os.makedirs("/tmp/yarp-gen", exist_ok=True)
    with open(os.path.join("/tmp/yarp-gen", os.path.basename(half.manifest) + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        save_manifest(half, {**load_manifest(half), **recorded})


def check(half: Half, entries: dict[str, dict]) -> int:
    """Re-check every stored case's signals against its stored streams, and its half."""
    problems = []
    for entry in entries.values():
        streams = {s: native.load_stream(entry["name"], s) for s in STREAMS}
        problems += half.check_signals(entry["name"], entry["signals"], streams)
        if entry["half"] != half.name:
            problems.append(f"{entry['name']}: half {entry['half']!r}, not {half.name!r}")
    print("\n".join(problems) or f"{len(entries)} case(s): every signal matches")
    return 1 if problems else 0


def main(half: Half, argv, description: str) -> int:
    """Record all or the named cases, or list them, check them, or print the README's table."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--list", action="store_true", help="print the recipes")
    parser.add_argument("--check", action="store_true", help="check the stored cases' signals only")
    parser.add_argument("--table", action="store_true", help="print the README's table of the recorded cases")
    parser.add_argument("--install", action="store_true", help="install the pinned tools first")
    args = parser.parse_args(argv)
    half.load_recipes()
    unknown = sorted(set(args.names) - {r.name for r in half.recipes})
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    entries = load_manifest(half)
    if args.list:
        print("\n".join(f"{r.name:34} {r.tool:12} {r.category}" for r in half.recipes))
        return 0
    if args.table:
        print(native.readme_table([entries[r.name] for r in half.recipes if r.name in entries]))
        return 0
    if args.check:
        return check(half, entries)
    if args.install:
        half.install()
    recorded: dict[str, dict] = {}
    failed = native.record_each(half.recipes, args.names, recorded, half.record)
    merge_manifest(half, recorded)
    return 1 if failed else 0


def install(npm: str, npm_pins, venv: str, py_pins, apt_pins: dict, apt_flags=("--no-install-recommends",)) -> None:
    """Install a half's pinned npm, PyPI and Debian tools outside the repository; failures only warn."""
    os.makedirs(npm, exist_ok=True)
    steps = [["npm", "install", "--prefix", npm, "--no-audit", "--no-fund", "--loglevel=error", *npm_pins]]
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        steps.append([sys.executable, "-m", "venv", venv])
    steps.append([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", *py_pins])
    steps.append(["apt-get", "install", "-y", "-qq", *apt_flags, *(f"{p}={v}" for p, v in apt_pins.items())])
    for step in steps:
        done = subprocess.run(step, capture_output=True, check=False, cwd="/tmp",
                              env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if done.returncode:
            print(f"warning: {' '.join(step[:3])} failed; its cases will be skipped", file=sys.stderr)


def fresh_root(work: str, home: str | None, name: str) -> str:
    """The case's project directory under `work`, emptied (its previous run's files removed, even
    read-only ones), and the half's private `home` when it has one."""
    root = os.path.join(work, name)
    if os.path.isdir(root):
        subprocess.run(["chmod", "-R", "u+rwx", root], check=False)
        shutil.rmtree(root)
    os.makedirs(root)
    os.chmod(root, 0o755)
    if home:
        os.makedirs(home, exist_ok=True)
    return root


def run_case(rec, root: str, env: dict[str, str]):
    """Set up the case's project in `root` and run its command in `env` (the half's, with the recipe's
    own variables; one set to None is unset); return the run and the finished process."""
    run = rec.setup(root)
    env = {k: v for k, v in {**env, **run.env}.items() if v is not None}
    command = run.command or run.argv
    shell = isinstance(command, str)
    done = subprocess.run(command, cwd=os.path.normpath(os.path.join(root, run.cwd)), env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=run.timeout,
                          shell=shell, executable="/bin/bash" if shell else None)
    return run, done


def keep_last(work: str, name: str, streams: dict[str, bytes]) -> str:
    """Write a failed run's streams under `work`, for reading; return the directory."""
    last = os.path.join(work, ".last")
    os.makedirs(last, exist_ok=True)
    for stream, data in streams.items():
        with open(os.path.join(last, f"{name}.{stream}"), "wb") as handle:
            handle.write(data)
    return last


def record_case(rec, half: str, work: str, env: dict[str, str], check=check_signals, home: str | None = None,
                path: str | None = None) -> dict:
    """Set up, run and store one case of `half` (its project under `work`, its command in `env`, its
    `home` made; `path`, else `env`'s PATH, is where its tools are looked for); return its manifest
    entry. A case whose exit status or signals are not what its recipe says is not stored: its output
    is kept under `work` and the run fails with why."""
    missing = [b for b in rec.needs if not shutil.which(b, path=path or env["PATH"])]
    if missing:
        raise native.Skip(f"{', '.join(missing)} not installed")
    version = native.tool_version(rec)
    root = fresh_root(work, home, rec.name)
    run, done = run_case(rec, root, env)
    streams = {"stdout": done.stdout, "stderr": done.stderr}
    if run.expect_exit and not run.expect_exit(done.returncode):
        last = keep_last(work, rec.name, streams)
        raise RuntimeError(f"{rec.name}: unexpected exit status {done.returncode} (output in {last})\n"
                           f"{(done.stdout + done.stderr).decode('utf-8', 'replace')[-3000:]}")
    problems = check(rec.name, run.signals, streams)
    if problems:
        raise RuntimeError("\n".join(problems + [f"(this run's output is in {keep_last(work, rec.name, streams)})"]))
    native.store(rec.name, streams)
    return {"name": rec.name, "tool": rec.tool, "argv": run.argv, "exit_code": done.returncode,
            "signals": run.signals, "category": rec.category, "version": version, "half": half}
