"""The command line that starts this `yarp`, for settings files and rewritten commands.

Installed hook commands and `yarp run` rewrites run in the agent's environment,
not ours, so they name `yarp` by an absolute path: the console script being run
or found on PATH, else this interpreter with `-m yarp`. Never a bare `yarp`
that a different PATH could resolve elsewhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys


def yarp_argv(environ=os.environ) -> list[str]:
    """Absolute argv prefix that runs this YARP."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "yarp" and os.path.isfile(script) and os.access(script, os.X_OK):
        return [os.path.abspath(script)]
    found = shutil.which("yarp", path=environ.get("PATH"))
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "yarp"]


def shell_join(argv: list[str]) -> str:
    return " ".join(shlex.quote(part) for part in argv)
