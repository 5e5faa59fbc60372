"""`yarp hook claude-code|codex`: a thin client that forwards one event to the warm broker.

The agent starts this process for every tool call, twice, so it does only what
must happen in it: read the event (bounded), decide with the C JSON scanner
whether it is an event we archive at all, read the configuration (from the
parse cache) to know whether the archive is on and where it is, send the
event's bytes to the broker in one request, and print the answer. Planning the
rewrite (tree-sitter, the rule set), the account, the operations and the
commit all happen in the broker (`yarp.broker.services.hooks`), which keeps them loaded.

Importing only the standard library's C cores (`_json`, `_socket`, the built-in
SHA-256) is held by `tests/test_hooks.py`'s import-set test, as
`tests/test_run_imports.py` holds it for `yarp run`.

Codex events (`yarp hook codex`) take the same path: the broker
(`yarp.broker.services.codex.service.CodexService`) reads the session transcript, archives the
call and answers with the view that replaces a large output; this process
adds only the cap from its configuration, and also forwards Codex's `Stop`
and `SessionEnd`, which settle earlier calls.

Failure is always "no change": the process exits 0, prints nothing, and says
why once per session on stderr (`notice`). It never waits longer than the
event's deadline: 2 s before the tool runs (`BEGIN_TIMEOUT_S`, like the Pi
adapter's initial capture), 20 s after it (`RESULT_TIMEOUT_S`); the installed
hook timeout (30 s) only bounds a wedged process.
"""

import os
import sys
import time

from yarp.limits import MAX_FRAME_BYTES

#: Per agent, the hook events a hook process forwards to the broker (the ones `yarp hook install`
#: registers), in the agents' own names. Here, where the hook process reads them without importing
#: `yarp.hooks` (a package on the path of every event costs it about 0.35 M instructions); the
#: broker's translation (`yarp.hooks`) and the installer take them from here.
HOOK_EVENTS = {
    "claude-code": ("PreToolUse", "PostToolUse", "PostToolUseFailure"),
    # Codex has no PostToolUseFailure; Stop and SessionEnd settle calls that never got a post event.
    "codex": ("PreToolUse", "PostToolUse", "Stop", "SessionEnd"),
    "gemini": ("BeforeTool", "AfterTool"),
}
#: Per agent, the event before the tool runs: its capture must be durable first (it waits at most
#: `BEGIN_TIMEOUT_S`), and its failure means the session's calls run uncaptured.
BEFORE_TOOL = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}
#: Agents whose view the broker replaces itself, capped: their requests carry the configured cap.
CAPPING_AGENTS = ("claude-code", "codex", "gemini")

#: Initial capture must be durable before the tool runs; like the Pi adapter, wait at most 2 s.
BEGIN_TIMEOUT_S = 2.0
#: The post-tool request's deadline; the installed hook timeout is larger.
RESULT_TIMEOUT_S = 20.0
#: Room left in one frame for the request's own fields around the event.
_ENVELOPE_ROOM = 64 * 1024
MAX_EVENT_BYTES = MAX_FRAME_BYTES - _ENVELOPE_ROOM
#: Longest session id used to name the once-per-session warning marker.
_MAX_SESSION_CHARS = 1024

#: Help text shared by `yarp hook claude-code` and `yarp hook codex`.
HOOK_EPILOG = """\
Reads one PreToolUse, PostToolUse or PostToolUseFailure event as JSON on stdin
and hands it to the archive's broker (started on demand). PreToolUse answers on
stdout only to hand on a shell command rewritten to 'yarp run'; PostToolUse
only to replace a result the model would see with YARP's capped view (Claude
Code 2.1.121 and later). Every other event, and every archive failure, prints
nothing and exits 0 so the tool runs untouched. Failures are reported once per
session on stderr.
"""


def configure(parser) -> None:
    """Hook commands take no options beyond --archive."""


def run_fast(agent: str, argv: list[str]) -> int | None:
    """`yarp hook AGENT [--archive PATH]` without argparse; anything else returns None."""
    if not argv:
        return run_hook(agent, None)
    if len(argv) == 2 and argv[0] == "--archive" and argv[1]:
        return run_hook(agent, argv[1])
    if len(argv) == 1 and argv[0].startswith("--archive=") and len(argv[0]) > len("--archive="):
        return run_hook(agent, argv[0][len("--archive="):])
    return None


def _read_event() -> bytes | None:
    try:
        raw = sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)
    except (OSError, AttributeError, ValueError):
        return None
    raw = raw.strip()
    return raw if raw and len(raw) <= MAX_EVENT_BYTES else None


def _event_head(raw: bytes, agent: str) -> tuple[str, str] | None:
    """(event name, session id) of an event we archive, else None (never an error)."""
    from yarp.json_text import object_or_none

    event = object_or_none(raw) if raw.startswith(b"{") else None
    if event is None:
        return None
    name, session = event.get("hook_event_name"), event.get("session_id")
    if name not in HOOK_EVENTS[agent]:
        return None
    if not isinstance(session, str) or not 0 < len(session) <= _MAX_SESSION_CHARS:
        return None
    return name, session


def run_hook(agent: str, archive: str | None, environ=os.environ) -> int:
    """Always 0: a hook must never fail the agent's tool because of the archive."""
    raw = _read_event()
    head = _event_head(raw, agent) if raw is not None else None
    if head is None:
        # Malformed, oversized or foreign: nothing to archive, no session to warn.
        return 0
    name, session = head
    try:
        from yarp.config import load
        from yarp.paths import resolve_archive

        config = load(environ)
        if not config.archive_enabled:
            return 0
        location = resolve_archive(archive, environ, config.archive_path)
    except Exception as exc:  # noqa: BLE001 - `_failure` raises anything but an archive failure again
        warn_once(agent, session, f"archive capture is off for this session: {_failure(exc)}", environ)
        return 0
    before = name == BEFORE_TOOL[agent]
    timeout = BEGIN_TIMEOUT_S if before else RESULT_TIMEOUT_S
    # `pruning` decides the shell rewrite; `capBytes` (0 with pruning off) the view the broker caps.
    # Inside Gemini CLI's sandbox (it sets $SANDBOX) commands may not reach `yarp`: none is rewritten.
    rewrite = config.pruning_enabled and not (agent == "gemini" and environ.get("SANDBOX"))
    fields = {"agent": agent, "launcher": _launcher(environ), "pruning": rewrite,
              "rulePacks": list(config.rule_packs)}
    if agent in CAPPING_AGENTS:
        fields["capBytes"] = config.cap_bytes if config.pruning_enabled else 0
    try:
        reply = forward(location, environ, fields, raw, time.monotonic() + timeout)
    except Exception as exc:  # noqa: BLE001 - as above
        message = _failure(exc)
        if agent == "codex":
            text = ("archive capture failed; this session's calls run without capture or YARP's view "
                    f"until the archive answers again: {message}")
        elif before:
            text = ("archive capture failed; this session's tool calls run without capture or rewriting "
                    f"until the archive answers again: {message}")
        else:
            text = f"result archive failed; the call stays incomplete: {message}"
        warn_once(agent, session, text, environ)
        return 0
    warning = reply.get("warning")
    if isinstance(warning, str):
        warn_once(agent, session, warning, environ)
    answer = reply.get("answer")
    if isinstance(answer, str):
        try:
            sys.stdout.write(answer + "\n")
            sys.stdout.flush()
        except OSError:
            pass
    return 0


def _failure(exc: Exception) -> str:
    """The message of the archive failure `exc` (a `YarpError`); anything else is raised
    again. The error classes are imported here, on a failure only: an event that
    succeeds never loads them (`yarp.cli.reported_errors`)."""
    from yarp.errors import YarpError

    if isinstance(exc, YarpError):
        return exc.message
    raise exc


def warn_once(agent: str, session: str, text: str, environ) -> None:
    """Print an archive warning once per agent session (see `yarp.clients.notice`)."""
    # Imported only when there is something to say: most events say nothing.
    from yarp.clients.notice import warn_once as warn

    warn(agent, session, text, environ)


def _launcher(environ) -> list[str]:
    from yarp.launcher import yarp_argv

    return yarp_argv(environ)


def forward(location, environ, fields: dict, raw: bytes, deadline: float) -> dict:
    """One hook request: `fields` plus the event's exact bytes; the broker's reply.

    The event was checked to be one JSON object, so its bytes are spliced in
    as they are: no re-encoding in this process.
    """
    from yarp.clients.broker import BrokerClient, service_request

    with BrokerClient(location, environ) as client:
        return client.ask(service_request("hook", fields, b',"event":' + raw), deadline)
