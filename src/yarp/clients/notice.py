"""One archive-failure warning per agent session, across hook processes.

Every hook event is its own process, so "once" is remembered by a small marker
file, `<runtime>/yarp/hooks/<agent>-<session hash>.warned` (0600 in a 0700
directory). The file holds nothing but its name; the session id itself is
hashed so it never appears on disk (the interpreter's built-in SHA-256: the
hook client never loads OpenSSL for a digest of a few bytes). If the marker cannot be written the warning
is printed anyway: a repeated warning is better than a silent failure.
"""

import os
import sys

from yarp import private_files
from yarp._digest import identity_sha256
from yarp.errors import YarpError


def marker_path(agent: str, session_id: str, environ=os.environ) -> str:
    """The marker file remembering that this session was warned; it holds a hash of the session id, never the id."""
    from yarp.runtime import runtime_base

    digest = identity_sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return os.path.join(runtime_base(environ), "yarp", "hooks", f"{agent}-{digest}.warned")


def _first_time(path: str) -> bool:
    directory = os.path.dirname(path)
    for part in (os.path.dirname(directory), directory):
        private_files.ensure_private_directory(part, create=True, narrow=True, parents=False)
    return private_files.create_private_empty(path)


def warn_once(agent: str, session_id: str, text: str, environ=os.environ) -> bool:
    """Write `yarp: <text>` to stderr unless this session was already warned; return whether written."""
    try:
        first = _first_time(marker_path(agent, session_id, environ))
    except (OSError, YarpError, private_files.PrivatePathProblem):  # an unusable directory must not hide it
        first = True
    if first:
        try:
            sys.stderr.write(f"yarp: {text}\n")
            sys.stderr.flush()
        except OSError:
            pass
    return first
