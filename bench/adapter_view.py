"""The broker's view for Pi and opencode beside the TypeScript cap it replaced: latency, in one run.

    python bench/adapter_view.py [--rounds 15] [--cap 5120] [--rev REV]

Extracts the old cap (`src/yarp/hooks/ts/cap.ts`, with the `rules/salience.json`
it read beside it) from `REV`, by default the last revision that had it, into a
temporary folder, then runs bench/adapter_view.mts with Node and the `tsx` of
hooks/pi (`npm ci` there first) against this checkout's `yarp` (the virtual
environment's, else the one on PATH) and prints its JSON: per text, the
`result_text` round trip that brings the broker's view (`new`) beside the plain
round trip followed by the local cap (`old`, and its two parts), medians and
p90s in milliseconds, and `added_p50_ms`, what the adapters now wait longer.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OLD_CAP = "src/yarp/hooks/ts/cap.ts"


def last_revision_with(path: str) -> str:
    """The parent of the last commit that touched `path` (its removal or rename): the last one holding it."""
    touched = subprocess.run(["git", "-C", ROOT, "rev-list", "-n", "1", "HEAD", "--", path], check=True,
                             capture_output=True, text=True).stdout.strip()
    if not touched:
        raise SystemExit(f"{path} is in no revision")
    return f"{touched}^"


def git_show(rev: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], check=True, capture_output=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cap", type=int, default=5120)
    parser.add_argument("--rev", help="the revision to take the old cap from (default: the last that had it)")
    args = parser.parse_args()
    rev = args.rev or last_revision_with(OLD_CAP)
    venv_bin = os.path.join(ROOT, ".venv", "bin")
    env = {**os.environ, "ROUNDS": str(args.rounds), "CAP": str(args.cap)}
    if os.path.isdir(venv_bin):
        env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    with tempfile.TemporaryDirectory(prefix="yarp-old-cap-") as folder:
        # The old cap reads its salience data beside it (as `yarp hook install` copied it).
        for name, path in (("cap.mts", OLD_CAP), ("salience.json", "src/yarp/rules/salience.json")):
            with open(os.path.join(folder, name), "wb") as out:
                out.write(git_show(rev, path))
        env["OLD_CAP"] = os.path.join(folder, "cap.mts")
        print(f"old cap from {rev}", file=sys.stderr)
        return subprocess.run(["node", "--import", "tsx", os.path.join(HERE, "adapter_view.mts")],
                              cwd=os.path.join(ROOT, "hooks", "pi"), env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())
