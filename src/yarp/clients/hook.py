"""`yarp hook AGENT`: a thin client that forwards one event of an agent's command hooks to the warm broker.

The agent starts this process for every tool call, twice, so it does only what
must happen in it: read the event (bounded), read the agent's record
(`yarp.agents`: which events it forwards, which one comes before the tool),
read the event's name and session from the head of its JSON (the C scanner
reads the members before them, never the tool's input or output), read the
configuration (from the parse cache) to know whether the archive is on and
where it is, send the event's bytes to the broker in one request, and print
the answer. The broker decodes the event once, in its request's validation;
the agent's own part translates it; planning the rewrite (tree-sitter, the
rule set), the account, the operations and the commit all happen there
(`yarp.broker.services.hooks`), which keeps them loaded.

Importing only the standard library's C cores (`_json`, `_socket`, the built-in
SHA-256) is held by `tests/test_hooks.py`'s import-set test, as
`tests/test_run_imports.py` holds it for `yarp run`.

Failure is always "no change": the process exits 0, prints nothing, and says
why once per session on stderr (`notice`). It never waits longer than the
event's deadline: 2 s before the tool runs (`BEGIN_TIMEOUT_S`, as an
extension adapter's initial capture), 20 s after it (`RESULT_TIMEOUT_S`); the
installed hook timeout (30 s) only bounds a wedged process.
"""

import os
import sys
import time

from yarp.limits import MAX_FRAME_BYTES

#: Initial capture must be durable before the tool runs; as an extension adapter does, wait at most 2 s.
BEGIN_TIMEOUT_S = 2.0
#: The post-tool request's deadline; the installed hook timeout is larger.
RESULT_TIMEOUT_S = 20.0
#: Room left in one frame for the request's own fields around the event.
_ENVELOPE_ROOM = 64 * 1024
MAX_EVENT_BYTES = MAX_FRAME_BYTES - _ENVELOPE_ROOM
#: Longest session id used to name the once-per-session warning marker.
_MAX_SESSION_CHARS = 1024

def configure(parser) -> None:
    """Hook commands take no options beyond --archive."""


def run_fast(agent: str, argv: list[str]) -> int | None:
    """`yarp hook AGENT [--archive PATH]` without argparse; anything else returns None.

    `agent` names an agent with command hooks (`yarp.agents.hook_record`).
    """
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


#: The members of an event the hook process reads.
_HEAD = ("hook_event_name", "session_id")


def _event_head(raw: bytes, events: tuple) -> tuple[str, str] | None:
    """(event name, session id) of an event we archive (one of `events`), else None (never an error)."""
    from yarp.json_text import head_members

    head = head_members(raw, _HEAD) if raw.startswith(b"{") else None
    if head is None:
        return None
    name, session = head.get("hook_event_name"), head.get("session_id")
    if name not in events:
        return None
    if not isinstance(session, str) or not 0 < len(session) <= _MAX_SESSION_CHARS:
        return None
    return name, session


def run_hook(agent: str, archive: str | None, environ=os.environ) -> int:
    """Always 0: a hook must never fail the agent's tool because of the archive."""
    from yarp.agents import hook_record

    record = hook_record(agent)
    raw = _read_event()
    head = _event_head(raw, record.HOOK_EVENTS) if raw is not None else None
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
    before = name == record.BEFORE_TOOL
    timeout = BEGIN_TIMEOUT_S if before else RESULT_TIMEOUT_S
    # `pruning` decides the shell rewrite; `capBytes` (0 with pruning off) the view the broker caps.
    # An agent may name a variable under which commands may not reach `yarp` (a sandbox): no rewrite.
    off = getattr(record, "REWRITE_OFF_ENV", None)
    rewrite = config.pruning_enabled and not (off and environ.get(off))
    fields = {"agent": agent, "launcher": _launcher(environ), "pruning": rewrite,
              "rulePacks": list(config.rule_packs)}
    if record.CAPS_VIEW:
        fields["capBytes"] = config.cap_bytes if config.pruning_enabled else 0
    try:
        reply = forward(location, environ, fields, raw, time.monotonic() + timeout)
    except Exception as exc:  # noqa: BLE001 - as above
        message = _failure(exc)
        notice = getattr(record, "FAILURE_NOTICE", None)
        if notice:
            text = notice.format(message=message)
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
