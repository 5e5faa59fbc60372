"""The command line that starts this `yarp`, for settings files and rewritten commands.

Installed hook commands and `yarp run` rewrites run in the agent's environment,
not ours, so they name `yarp` by an absolute path: the console script being run
or found on PATH, else this interpreter with `-m yarp`. Never a bare `yarp`
that a different PATH could resolve elsewhere.

The hook client computes this for every event (a couple of `stat` calls, no
`shutil`); the broker, which plans the rewrite, only quotes it.
"""

import os
import sys


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def which(name: str, search: str | None, *, executable: bool = True) -> str | None:
    """`name` on `search` (a PATH value) as a shell finds it; `shutil.which` without its import.

    With `executable` false, the first regular file of that name, executable or not (what
    bash reports "Permission denied" for).
    """
    for directory in (search if search is not None else os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or os.curdir, name)
        if _executable(candidate) if executable else os.path.isfile(candidate):
            return candidate
    return None


def yarp_argv(environ=os.environ) -> list[str]:
    """Absolute argv prefix that runs this YARP."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "yarp" and _executable(script):
        return [os.path.abspath(script)]
    found = which("yarp", environ.get("PATH"))
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "yarp"]


def shell_join(argv: list[str]) -> str:
    """`argv` as one shell command line, each part quoted."""
    import shlex

    return " ".join(shlex.quote(part) for part in argv)
