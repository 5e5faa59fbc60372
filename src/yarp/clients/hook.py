"""`yarp hook AGENT`: a thin client that forwards one event of an agent's command hooks to the warm broker.

The agent starts this process for every tool call, twice, so it does only what
must happen in it: read the event (bounded), read the agent's hook facts
(`hook_facts`: which events it forwards, which one comes before the tool,
whether it sends the cap: the `hook.json` in the agent's folder, read without
importing the registry or any Python of the agent's), read the event's name
and session (a large event only from the head of its JSON: the C scanner
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

#: The folder of the agents' folders (`yarp.agents`), and the file in an agent's folder that holds
#: what this process needs (`yarp.agents.HOOK_FACTS`, whose record fields it also sets).
_AGENTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "agents")
_HOOK_FACTS = "hook.json"
_MAX_FACTS_BYTES = 64 * 1024
_facts: dict = {}

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


def hook_facts(agent) -> dict | None:
    """What this process needs of agent `agent`, from its `hook.json`: `events` (the names it forwards),
    `beforeTool`, `capsView`, and optionally `rewriteOffEnv` and `failureNotice`; None when `agent`
    names no agent with command hooks. Never imports the agent's Python (each import costs every
    event about 0.45 M instructions); `yarp.agents.record` gives the same facts to the other processes.
    """
    found = _facts.get(agent)
    if found is not None or type(agent) is not str:
        return found
    word = agent.replace("-", "_")
    if not (0 < len(agent) <= 32 and agent.isascii() and agent[0].isalpha() and word.isidentifier()
            and agent.islower() and "_" not in agent):
        return None
    try:
        with open(os.path.join(_AGENTS, word, _HOOK_FACTS), "rb") as handle:
            data = handle.read(_MAX_FACTS_BYTES)
    except OSError:
        return None
    from yarp.json_text import object_or_none

    facts = object_or_none(data.strip())
    events = facts.get("events") if facts is not None else None
    if type(events) is not list or facts.get("beforeTool") not in events or type(facts.get("capsView")) is not bool:
        return None
    _facts[agent] = facts
    return facts


def run_fast(agent: str, argv: list[str]) -> int | None:
    """`yarp hook AGENT [--archive PATH]` without argparse; anything else returns None.

    `agent` names an agent with command hooks (`hook_facts`).
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


#: The members of an event that name it and its session, unless the agent's facts name others
#: (`eventMember`, `sessionMember`: an agent whose events use other names).
_HEAD = ("hook_event_name", "session_id")
#: An event larger than this is read only from its head (`json_text.head_members`): decoding a
#: small one whole with the C scanner costs less than walking its members.
_HEAD_ONLY_BYTES = 4096


def _event_head(raw: bytes, facts: dict) -> tuple[str, str] | None:
    """(event name, session id) of an event we archive (one of the facts' `events`), else None (never
    an error)."""
    from yarp.json_text import head_members, object_or_none

    if not raw.startswith(b"{"):
        return None
    members = (facts.get("eventMember") or _HEAD[0], facts.get("sessionMember") or _HEAD[1])
    head = head_members(raw, members) if len(raw) > _HEAD_ONLY_BYTES else object_or_none(raw)
    if head is None:
        return None
    name, session = head.get(members[0]), head.get(members[1])
    if name not in facts["events"]:
        return None
    if not isinstance(session, str) or not 0 < len(session) <= _MAX_SESSION_CHARS:
        return None
    return name, session


def run_hook(agent: str, archive: str | None, environ=os.environ) -> int:
    """Always 0: a hook must never fail the agent's tool because of the archive."""
    facts = hook_facts(agent)
    if facts is None:
        return 0  # not an agent with command hooks (the command line checked this already)
    raw = _read_event()
    head = _event_head(raw, facts) if raw is not None else None
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
    before = name == facts["beforeTool"]
    timeout = BEGIN_TIMEOUT_S if before else RESULT_TIMEOUT_S
    # `pruning` decides the shell rewrite; `capBytes` (0 with pruning off) the view the broker caps.
    # An agent may name a variable under which commands may not reach `yarp` (a sandbox): no rewrite.
    off = facts.get("rewriteOffEnv")
    rewrite = config.pruning_enabled and not (isinstance(off, str) and environ.get(off))
    fields = {"agent": agent, "launcher": _launcher(environ), "pruning": rewrite,
              "rulePacks": list(config.rule_packs)}
    if facts["capsView"]:
        fields["capBytes"] = config.cap_bytes if config.pruning_enabled else 0
    try:
        reply = forward(location, environ, fields, raw, time.monotonic() + timeout)
    except Exception as exc:  # noqa: BLE001 - as above
        message = _failure(exc)
        notice = facts.get("failureNotice")
        if isinstance(notice, str) and notice:
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
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "yarp" and os.path.isfile(script) and os.access(script, os.X_OK):
        # The console script the agent ran: `yarp.launcher.yarp_argv`'s first answer, without loading
        # that module on every event.
        return [os.path.abspath(script)]
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
