"""The main job, end to end, on a throw-away archive: `make demo` runs this.

1. `yarp run -- python -m pytest -v …` runs a noisy test suite (one failure among
   300 passes) through the on-demand broker: the exact stdout/stderr go into
   the archive, the terminal gets the pruned, capped view with a marker.
2. `yarp archive stats` and `yarp archive verify` show what was stored.
3. `yarp search REF 'FAILED|Error'` and `yarp read REF stdout 1:3` recover the
   full output from the archive, as a model would.

Everything lives in temporary directories (archive, runtime socket, config),
so the demo never touches your real archive; at the end it stops the broker it
started and removes them. Headings are bold only on a terminal (not with
NO_COLOR, not with TERM=dumb).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

#: A test suite with one failure among 300 passes (the README's example view is this file's run).
TESTS = '''\
import pytest


@pytest.mark.parametrize("n", range(300))
def test_square_is_non_negative(n):
    assert n * n >= 0


def test_parser_rejects_bad_input():
    value = int("42")
    assert value == 41, "parser returned the wrong value"
'''


def _bold() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def banner(text: str) -> None:
    print(f"\n\033[1m$ {text}\033[0m" if _bold() else f"\n$ {text}", flush=True)


def short_temp() -> str:
    """Where the runtime directory goes: the temporary directory when its path is short, else /tmp,
    so the broker's socket path stays within the 107 bytes a Unix socket allows."""
    base = tempfile.gettempdir()
    return base if len(base) <= 24 else "/tmp"


def yarp(env: dict, *args: str, capture: bool = False) -> subprocess.CompletedProcess:
    banner("yarp " + " ".join(args))
    return subprocess.run([sys.executable, "-m", "yarp", *args], env=env, text=True, check=False,
                          stdout=subprocess.PIPE if capture else None)


def main() -> int:
    runtime = tempfile.mkdtemp(prefix="yr", dir=short_temp())
    try:
        with tempfile.TemporaryDirectory(prefix="yarp-demo-") as root:
            archive_dir = os.path.join(root, "archive")
            os.mkdir(archive_dir, 0o700)
            env = dict(os.environ, XDG_RUNTIME_DIR=runtime, YARP_BROKER_IDLE_MS="2000",
                       YARP_ARCHIVE=os.path.join(archive_dir, "tool-calls.sqlite3"),
                       XDG_CONFIG_HOME=os.path.join(root, "config"))
            try:
                return demo(root, env)
            finally:
                # The broker started for the demo's archive goes before its files do.
                subprocess.run([sys.executable, "-m", "yarp", "archive", "broker", "stop"], env=env, check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def demo(root: str, env: dict) -> int:
    """The demo's steps in `root`, with the environment `env`; its exit status."""
    tests = os.path.join(root, "test_sample.py")
    with open(tests, "w") as handle:
        handle.write(TESTS)
    run = yarp(env, "run", "--", sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", tests,
               capture=True)
    print(run.stdout, end="")
    print(f"[exit status {run.returncode}: the failing test's status is kept]")
    match = re.search(r"ref=(yr_[0-9a-f]{32})", run.stdout)
    if not match:
        print("demo: the run printed no archive reference", file=sys.stderr)
        return 1
    ref = match.group(1)
    yarp(env, "archive", "stats")
    yarp(env, "search", ref, "FAILED|Error")
    yarp(env, "read", ref, "stdout", "1:3")
    verify = yarp(env, "archive", "verify")
    print(f"\nThe archive kept every byte of the run under {ref}; the terminal showed the pruned view.")
    return 0 if verify.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
