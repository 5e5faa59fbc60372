"""The shared body of `yarp hook claude-code` and `yarp hook codex`.

Reads one bounded event from stdin, runs it, prints the answer (if any) and
always exits 0: a hook must never fail the agent's tool because of the archive.
"""

from __future__ import annotations

import json
import os
import sys

from ..limits import MAX_FRAME_BYTES

#: Help text shared by `yarp hook claude-code` and `yarp hook codex`.
HOOK_EPILOG = """\
Reads one PreToolUse, PostToolUse or PostToolUseFailure event as JSON on stdin.
PreToolUse answers on stdout only to hand on a shell command rewritten to
'yarp run'; every other event, and every archive failure, prints nothing and
exits 0 so the tool runs untouched. Failures are reported once per session on
stderr.
"""


def configure(parser) -> None:
    """Hook commands take no options beyond --archive."""



def run_hook(agent: str, archive: str | None, environ=os.environ) -> int:
    from .capture import handle

    try:
        raw = sys.stdin.buffer.read(MAX_FRAME_BYTES + 1)
    except OSError:
        return 0
    if not raw or len(raw) > MAX_FRAME_BYTES:
        return 0
    answer = handle(agent, raw, archive=archive, environ=environ)
    if answer is not None:
        try:
            sys.stdout.write(json.dumps(answer, ensure_ascii=False, separators=(",", ":")) + "\n")
            sys.stdout.flush()
        except OSError:
            pass
    return 0
