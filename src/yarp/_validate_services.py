"""Validation of the per-tool-call clients' service requests: `yarp hook <agent>` and `yarp run` steps.

One source for both request validators: the compiled `yarp._validate`
includes this text, and its pure-Python twin `yarp._validate_py` imports it,
so the two cannot drift apart. These requests are small and few (one or two
per tool call); the typed scanning of the compiled module is for the archive
operations.

No `from __future__ import annotations` and annotations only in comments:
the compiled module includes this text verbatim, and Cython would otherwise
turn annotations into type checks.
"""

from yarp.agents import hook_record
from yarp.errors import ValidationError
from yarp.limits import (
    MAX_CAP_BYTES,
    MAX_DEADLINE_MS,
    MAX_IDENTITY_CHARS,
    MAX_NAME_CHARS,
    MAX_PACKS,
    MAX_WORKING_DIRECTORY_CHARS,
    MIN_DEADLINE_MS,
)
from yarp.wire import operations as ops
from yarp.wire.protocol import HookRequest, RunBegin, RunCapture, RunNotStarted, RunTarget, SpoolFiles

_HOOK_REQUEST_FIELDS = frozenset({"schema", "correlationId", "hook", "deadlineMs", "event"})
_HOOK_FIELDS = frozenset({"agent", "launcher", "pruning", "rulePacks"})
#: Sent by the agents whose view the broker caps itself (their record's `CAPS_VIEW`): the configured cap.
_CAP_FIELD = "capBytes"
_RUN_REQUEST_FIELDS = frozenset({"schema", "correlationId", "deadlineMs", "run"})
_RUN_STEPS = {
    "begin": frozenset({"step", "session", "startedAtMs", "argv", "cwd"}),
    "capture": frozenset({"step", "target", "argv", "status", "signal", "pruning", "rulePacks", "capBytes",
                          "spool"}),
    "not_started": frozenset({"step", "target", "status"}),
}
#: A segment call's begin: the full identity of the call the run begins itself, instead of `session`.
_BEGIN_CALL_FIELDS = frozenset({"step", "target", "startedAtMs", "argv", "cwd"})
#: A capture whose spool could not take every byte: `spoolError`, the errno of the failed write.
_CAPTURE_SPOOL_ERROR_FIELDS = _RUN_STEPS["capture"] | {"spoolError"}
_MAX_ARGV = 4096


def _deadline(value, what):
    if type(value) is not int or not MIN_DEADLINE_MS <= value <= MAX_DEADLINE_MS:
        raise ValidationError(f"{what} deadline must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms")
    return value


def _paths(value, most, at_least=0):
    """A list of `at_least`..`most` NUL-free strings of at most a path's length, as a tuple; else None."""
    if type(value) is not list or not at_least <= len(value) <= most:
        return None
    for item in value:
        if type(item) is not str or not 0 < len(item) <= MAX_WORKING_DIRECTORY_CHARS or "\x00" in item:
            return None
    return tuple(value)


def hook_request(obj):
    """A `yarp hook <agent>` request: the agent, its `yarp` launcher, the rules, the deadline and the event."""
    if obj.keys() != _HOOK_REQUEST_FIELDS:
        raise ValidationError("hook request has unknown or missing fields")
    hook = obj["hook"]
    if type(hook) is not dict or set(hook) - {_CAP_FIELD} != _HOOK_FIELDS:
        raise ValidationError("hook request fields are not the expected set")
    agent = hook["agent"]
    record = hook_record(agent)  # an agent with command hooks (`yarp.agents`), never a stranger imported
    if record is None:
        raise ValidationError("hook request names an unknown agent")
    cap = hook.get(_CAP_FIELD)
    if record.CAPS_VIEW and (type(cap) is not int or not 0 <= cap <= MAX_CAP_BYTES):
        raise ValidationError(f"hook request capBytes must be 0..{MAX_CAP_BYTES} for {agent}")
    launcher = _paths(hook["launcher"], 3, 1)
    if launcher is None or not launcher[0].startswith("/"):
        raise ValidationError("hook request launcher must be 1 to 3 strings, the first an absolute path")
    if type(hook["pruning"]) is not bool:
        raise ValidationError("hook request pruning must be a boolean")
    packs = _paths(hook["rulePacks"], MAX_PACKS)
    if packs is None:
        raise ValidationError(f"hook request rulePacks must be at most {MAX_PACKS} paths")
    deadline = _deadline(obj["deadlineMs"], "hook request")
    return HookRequest(agent, launcher, hook["pruning"], packs, deadline, obj["event"], cap)


def _run_text(value, limit, what):
    if type(value) is not str or not 0 < len(value) <= limit or "\x00" in value:
        raise ValidationError(f"run request {what} must be 1 to {limit} characters without NUL")
    return value


def _run_int(value, what, low, high):
    if type(value) is not int or not low <= value <= high:
        raise ValidationError(f"run request {what} must be an integer in {low}..{high}")
    return value


def _run_path(value, what):
    path = _run_text(value, MAX_WORKING_DIRECTORY_CHARS, what)
    if not path.startswith("/"):
        raise ValidationError(f"run request {what} must be an absolute path")
    return path


def _run_argv(value):
    if type(value) is not list or not 0 < len(value) <= _MAX_ARGV:
        raise ValidationError("run request argv must be a non-empty list of strings without NUL")
    for word in value:
        if type(word) is not str or len(word) > MAX_WORKING_DIRECTORY_CHARS or "\x00" in word:
            raise ValidationError("run request argv must be a non-empty list of strings without NUL")
    return tuple(value)


_TARGET_FIELDS = frozenset({"agent", "account", "session", "call"})
_OWN_TARGET_FIELDS = frozenset({"agent", "account", "session", "call", "own"})


def _run_target(value, own_only=False):
    """`{session}` (a standalone run's own call), `{agent, account, session, call}` (an adapter's) or
    `{agent, account, session, call, own: true}` (a segment call the run began itself); with
    `own_only`, the last form only."""
    if type(value) is dict and value.keys() == {"session"} and not own_only:
        return RunTarget(None, None, _run_text(value["session"], MAX_IDENTITY_CHARS, "session"), None, True)
    if type(value) is not dict or not (value.keys() == _OWN_TARGET_FIELDS
                                       or (value.keys() == _TARGET_FIELDS and not own_only)):
        raise ValidationError("run request target must be {session}, {agent, account, session, call} "
                              "or {agent, account, session, call, own}")
    own = value.get("own", False)
    if own_only or "own" in value:
        if own is not True:
            raise ValidationError("run request target own must be true")
    return RunTarget(_run_text(value["agent"], MAX_NAME_CHARS, "agent"),
                     _run_text(value["account"], MAX_IDENTITY_CHARS, "account"),
                     _run_text(value["session"], MAX_IDENTITY_CHARS, "session"),
                     _run_text(value["call"], MAX_IDENTITY_CHARS, "call"), own)


def _run_stream_file(value, what):
    if type(value) is not dict or value.keys() != {"path", "device", "inode", "size"}:
        raise ValidationError(f"run request {what} must be {{path, device, inode, size}}")
    return ops.StreamFile(_run_path(value["path"], what), _run_int(value["device"], what, 0, 2**63 - 1),
                          _run_int(value["inode"], what, 0, 2**63 - 1), _run_int(value["size"], what, 0, 2**63 - 1))


def _run_spool(value):
    if type(value) is not dict or value.keys() != {"stdout", "stderr", "stdoutAfter", "stderrAfter"}:
        raise ValidationError("run request spool must be {stdout, stderr, stdoutAfter, stderrAfter}")
    return SpoolFiles(_run_stream_file(value["stdout"], "spool stdout"),
                      _run_stream_file(value["stderr"], "spool stderr"),
                      _run_path(value["stdoutAfter"], "spool stdoutAfter"),
                      _run_path(value["stderrAfter"], "spool stderrAfter"))


def run_request(obj):
    """A `yarp run` step: `RunBegin` (a standalone run's `{session}`, or a segment call's full
    identity as `target`), `RunCapture` or `RunNotStarted`."""
    if obj.keys() != _RUN_REQUEST_FIELDS:
        raise ValidationError("run request has unknown or missing fields")
    deadline = _run_int(obj["deadlineMs"], "deadlineMs", MIN_DEADLINE_MS, MAX_DEADLINE_MS)
    run = obj["run"]
    step = run.get("step") if type(run) is dict else None
    if step not in _RUN_STEPS or (run.keys() != _RUN_STEPS[step]
                                  and not (step == "begin" and run.keys() == _BEGIN_CALL_FIELDS)
                                  and not (step == "capture" and run.keys() == _CAPTURE_SPOOL_ERROR_FIELDS)):
        raise ValidationError("run request step is unknown or its fields are not the expected set")
    if step == "begin":
        if "session" in run:
            target = RunTarget(None, None, _run_text(run["session"], MAX_IDENTITY_CHARS, "session"), None, True)
        else:
            target = _run_target(run["target"], True)
        return RunBegin(deadline, target, _run_int(run["startedAtMs"], "startedAtMs", 0, 2**63 - 1),
                        _run_argv(run["argv"]), _run_path(run["cwd"], "cwd"))
    if step == "not_started":
        return RunNotStarted(deadline, _run_target(run["target"]), _run_int(run["status"], "status", 0, 255))
    target = _run_target(run["target"])
    argv = _run_argv(run["argv"])
    status = _run_int(run["status"], "status", 0, 255)
    signum = None if run["signal"] is None else _run_int(run["signal"], "signal", 1, 255)
    cap = _run_int(run["capBytes"], "capBytes", 0, 2**31 - 1)
    if type(run["pruning"]) is not bool:
        raise ValidationError("run request pruning must be a boolean")
    packs = run["rulePacks"]
    if type(packs) is not list or len(packs) > MAX_PACKS or not all(type(p) is str for p in packs):
        raise ValidationError(f"run request rulePacks must be at most {MAX_PACKS} paths")
    spool_error = _run_int(run["spoolError"], "spoolError", 1, 4095) if "spoolError" in run else None
    return RunCapture(deadline, target, argv, status, signum, run["pruning"], tuple(packs), cap,
                      _run_spool(run["spool"]), spool_error)
