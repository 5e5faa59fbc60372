"""Build the sdist and, from it, the wheel; install the wheel into a fresh venv; run the smoke suite.

This is what `make test-wheel` (and so `make test` and CI) runs. Nothing here
uses the checkout's sources at run time: the wheel is built by `python -m
build` from a clean copy of the checkout (an sdist first, then a wheel from
that sdist, in an isolated build environment), installed without `-e` into a new venv outside the tree, and the
tests in this folder run under that venv's interpreter, from a directory
outside the checkout, with no PYTHONPATH. The checkout is only where the test
files themselves, and the source file list they compare the artifacts with,
are read from (`YARP_TEST_SOURCE`).

    python tests/installed/run.py [--keep] [pytest arguments...]
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
#: Installed beside the wheel: the test runner, and what the export test reads Parquet with.
TEST_REQUIREMENTS = ("pytest>=8", "duckdb>=1.0")


def _step(label: str, argv: list[str], **kwargs) -> None:
    started = time.monotonic()
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        raise SystemExit(f"{label} failed (exit {result.returncode})")
    print(f"{label}: {time.monotonic() - started:.1f} s", flush=True)


def clean_copy(destination: str) -> str:
    """The checkout as a fresh clone would have it, working-tree edits included: the files git
    tracks or would track, never what it ignores (a stale `*.egg-info` there lists files for the
    sdist that package-data may no longer name, and would hide exactly the bug this suite is for)."""
    listed = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout
    for name in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        source = os.path.join(ROOT, name)
        if not os.path.lexists(source):  # deleted in the working tree, not yet in the index
            continue
        target = os.path.join(destination, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return destination


def clean_environment(venv: str) -> dict[str, str]:
    """The caller's environment without anything that points Python at the checkout or another venv."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP") and not key.startswith("YARP_")}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = venv
    return env


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    pytest_args = [arg for arg in argv if arg != "--keep"]
    work = tempfile.mkdtemp(prefix="yarp-wheel-")
    try:
        dist = os.path.join(work, "dist")
        venv = os.path.join(work, "venv")
        outside = os.path.join(work, "cwd")
        os.mkdir(outside)
        build_env = {k: v for k, v in os.environ.items() if not k.startswith("YARP_")}
        tree = clean_copy(os.path.join(work, "tree"))
        _step("sdist, then a wheel from the sdist", [sys.executable, "-m", "build", "--outdir", dist, tree],
              env=build_env, cwd=work)
        wheels = glob.glob(os.path.join(dist, "*.whl"))
        sdists = glob.glob(os.path.join(dist, "*.tar.gz"))
        assert len(wheels) == 1 and len(sdists) == 1, os.listdir(dist)
        _step("fresh venv", [sys.executable, "-m", "venv", venv], cwd=work)
        python = os.path.join(venv, "bin", "python")
        env = clean_environment(venv)
        _step("install the wheel", [python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                    f"{wheels[0]}[export]", *TEST_REQUIREMENTS], env=env, cwd=outside)
        env.update(YARP_TEST_DIST=dist, YARP_TEST_SOURCE=ROOT, YARP_TEST_VENV=venv)
        command = [python, "-m", "pytest", "-c", os.path.join(HERE, "pytest.ini"), HERE, *pytest_args]
        print("smoke suite:", " ".join(command[2:]), flush=True)
        return subprocess.run(command, env=env, cwd=outside).returncode
    finally:
        if keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
