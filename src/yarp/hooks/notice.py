"""One archive-failure warning per agent session, across hook processes.

Every hook event is its own process, so "once" is remembered by a small marker
file, `<runtime>/yarp/hooks/<agent>-<session hash>.warned` (0600 in a 0700
directory). The file holds nothing but its name; the session id itself is
hashed so it never appears on disk (the interpreter's built-in SHA-256: the
hook client never loads OpenSSL for a digest of a few bytes). If the marker cannot be written the warning
is printed anyway: a repeated warning is better than a silent failure.
"""

from __future__ import annotations

import os
import sys

from .._digest import identity_sha256
from ..errors import YarpError


def marker_path(agent: str, session_id: str, environ=os.environ) -> str:
    from ..runtime import runtime_base

    digest = identity_sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return os.path.join(runtime_base(environ), "yarp", "hooks", f"{agent}-{digest}.warned")


def _first_time(path: str) -> bool:
    directory = os.path.dirname(path)
    for part in (os.path.dirname(directory), directory):
        try:
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def warn_once(agent: str, session_id: str, text: str, environ=os.environ) -> bool:
    """Write `yarp: <text>` to stderr unless this session was already warned; return whether written."""
    try:
        first = _first_time(marker_path(agent, session_id, environ))
    except (OSError, YarpError):  # an unusable runtime directory must not hide the warning
        first = True
    if first:
        try:
            sys.stderr.write(f"yarp: {text}\n")
            sys.stderr.flush()
        except OSError:
            pass
    return first
