"""Helpers (no tests) for running two YARP versions side by side from the checkout.

`other_version_src()` copies `src/yarp` (compiled kernels included) once per
test session into a private temporary tree whose `_version.py` says another
release (`OTHER_VERSION`); `as_version(env, src)` points a `BrokerEnv`'s
environment at one tree or the other. Brokers and clients started with it
are real processes of that version: the handshake, the start-up path and the
broker all read the copy's `__version__`.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import tempfile

from broker_helpers import SRC

from yarp._version import __version__


def bumped(version: str) -> str:
    """`version` with its last number one higher: the release after it."""
    head, last = re.fullmatch(r"(.*?)(\d+)", version).groups()
    return f"{head}{int(last) + 1}"


OTHER_VERSION = bumped(__version__)
_TREE: list[str] = []


def other_version_src() -> str:
    """A `src` directory holding this checkout's `yarp` as release `OTHER_VERSION` (made once)."""
    if not _TREE:
        root = tempfile.mkdtemp(prefix="yarp-other-")
        atexit.register(shutil.rmtree, root, True)
        shutil.copytree(os.path.join(SRC, "yarp"), os.path.join(root, "yarp"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        path = os.path.join(root, "yarp", "_version.py")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        patched = text.replace(f'__version__ = "{__version__}"', f'__version__ = "{OTHER_VERSION}"')
        assert patched != text, "the version line moved"
        with open(path, "w", encoding="utf-8") as f:
            f.write(patched)
        _TREE.append(root)
    return _TREE[0]


#: The last commit before clients handed over to their own version: its broker knows nothing of
#: the hand-over, as a released broker of that time would not.
BEFORE_HANDOVER = "7e74962"
BEFORE_HANDOVER_VERSION = "0.0.9"


def before_handover_src() -> str | None:
    """A `src` directory holding `yarp` as it was at `BEFORE_HANDOVER`, as release
    `BEFORE_HANDOVER_VERSION`; None when the checkout has no such commit (a shallow clone)."""
    root = tempfile.mkdtemp(prefix="yarp-before-")
    atexit.register(shutil.rmtree, root, True)
    archive = subprocess.run(["git", "-C", os.path.dirname(SRC), "archive", BEFORE_HANDOVER, "src/yarp"],
                             capture_output=True)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", root], input=archive.stdout, check=True)
    path = os.path.join(root, "src", "yarp", "_version.py")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(re.sub(r'__version__ = "[^"]*"', f'__version__ = "{BEFORE_HANDOVER_VERSION}"', text))
    return os.path.join(root, "src")


def as_version(environ: dict, src: str) -> dict:
    """`environ` with `src` (the checkout's `SRC`, or `other_version_src()`) first on PYTHONPATH."""
    env = dict(environ)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in (SRC, *_TREE)]
    env["PYTHONPATH"] = os.pathsep.join([src, *rest])
    return env
