"""Add and remove YARP's hook entries in Claude Code's, Codex's and Gemini CLI's settings files.

All three read the same shape: `{"hooks": {EVENT: [{"matcher": M, "hooks":
[{"type": "command", "command": C, "timeout": S}]}]}}` (Claude Code:
`settings.json` under `~/.claude` or `./.claude`; Codex: `hooks.json` under
`$CODEX_HOME` (else `~/.codex`) or `./.codex`; Gemini CLI: `settings.json`
under `~/.gemini` or `./.gemini`, its timeout in milliseconds, each hook
named). Installing merges into what is there (other keys,
other hooks and other matcher groups are kept), is idempotent, keeps a private
backup of the previous file and replaces the file atomically. Uninstalling
removes exactly the entries this module recognises as ours: a command that runs
a `yarp` (console script or `-m yarp`) with the arguments `hook <agent>`.

Never rewrites a file it cannot parse as a JSON object, and never touches other
files of the agent.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from dataclasses import dataclass

from yarp import private_files
from yarp.clients.hook import HOOK_EVENTS
from yarp.errors import DataError, UsageError

SETTINGS_FILES = {"claude-code": (".claude", "settings.json"), "codex": (".codex", "hooks.json"),
                  "gemini": (".gemini", "settings.json")}
#: Match every tool: Claude Code documents "*"; Codex documents "" for all tools; Gemini CLI
#: matches a regular expression against the tool's name.
MATCHERS = {"claude-code": "*", "codex": "", "gemini": ".*"}
#: Events whose groups take a tool matcher (Codex ignores matchers on Stop and SessionEnd).
MATCHED_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"})
#: Seconds the agent waits for one hook process. Begin waits 2 s and results
#: 20 s internally; this only bounds a wedged process.
HOOK_TIMEOUT_S = 30
#: What each agent's hook entry holds beside its type and command: the timeout in the agent's
#: unit (Gemini CLI counts milliseconds) and, for Gemini CLI, the name its settings show.
ENTRY_FIELDS = {"claude-code": {"timeout": HOOK_TIMEOUT_S}, "codex": {"timeout": HOOK_TIMEOUT_S},
                "gemini": {"name": "yarp", "timeout": HOOK_TIMEOUT_S * 1000}}
#: Largest settings file we read.
MAX_SETTINGS_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Change:
    """What an install or uninstall did to a settings file: whether it changed, its backup and the hooks touched."""

    path: str
    changed: bool
    backup: str | None
    entries: int


def settings_path(agent: str, scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """The agent's hook settings file for `scope` (`user` or `project`); Codex honours `$CODEX_HOME`,
    Gemini CLI `$GEMINI_CLI_HOME`.

    Raises `UsageError` for an agent without hooks.
    """
    if agent not in SETTINGS_FILES:
        raise UsageError("unknown agent")
    directory, name = SETTINGS_FILES[agent]
    if scope == "project":
        base = cwd or os.getcwd()
    elif agent == "codex" and os.path.isabs(environ.get("CODEX_HOME") or ""):
        # Codex's user layer is $CODEX_HOME (else ~/.codex): its hooks.json sits beside config.toml.
        return os.path.join(environ["CODEX_HOME"], name)
    elif agent == "gemini" and os.path.isabs(environ.get("GEMINI_CLI_HOME") or ""):
        # Gemini CLI takes $GEMINI_CLI_HOME, when set, as the home its ~/.gemini lives in.
        base = environ["GEMINI_CLI_HOME"]
    else:
        base = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(base), directory, name)


def is_ours(command: object, agent: str) -> bool:
    """Whether a hook command runs `yarp hook AGENT` (through `yarp` or `python -m yarp`)."""
    if not isinstance(command, str):
        return False
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    if len(argv) < 3 or argv[-2:] != ["hook", agent]:
        return False
    head = argv[:-2]
    if len(head) == 1:
        return os.path.basename(head[0]) == "yarp"
    return len(head) == 3 and head[1:] == ["-m", "yarp"]


def _load(path: str) -> tuple[dict, bytes | None, int | None]:
    try:
        fd, st = private_files.open_for_reading(path, private=False)
    except FileNotFoundError:
        return {}, None, None
    except private_files.PrivatePathProblem as exc:
        raise DataError(f"the settings file {exc.problem}; it was left unchanged") from None
    except OSError as exc:
        raise DataError(f"cannot open the settings file: {exc.strerror}") from None
    try:
        mode = st.st_mode & 0o777
        data = private_files.read_bounded(fd, MAX_SETTINGS_BYTES)
    finally:
        os.close(fd)
    if len(data) > MAX_SETTINGS_BYTES:
        raise DataError(f"the settings file is larger than {MAX_SETTINGS_BYTES} bytes")
    if not data.strip():
        return {}, data, mode
    try:
        settings = json.loads(data)
    except ValueError:
        raise DataError("the settings file is not valid JSON; fix it first, it was left unchanged") from None
    if not isinstance(settings, dict):
        raise DataError("the settings file is not a JSON object; it was left unchanged")
    return settings, data, mode


def _write_private(path: str, data: bytes) -> None:
    fd = private_files.create_private(path)
    try:
        private_files.write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _save(path: str, settings: dict, previous: bytes | None, mode: int | None) -> str | None:
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    backup = None
    if previous is not None:
        backup = f"{path}.yarp-backup-{int(time.time() * 1000)}"
        _write_private(backup, previous)
    body = (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    private_files.replace_atomically(path, body, private_files.FILE_MODE if mode is None else mode)
    return backup


def _groups(settings: dict, event: str) -> list:
    hooks = settings.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, dict):
        raise DataError("the settings file's hooks key is not an object; it was left unchanged")
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise DataError(f"the settings file's {event} hooks are not a list; they were left unchanged")
    return groups


def _strip(settings: dict, agent: str, keep_command: str | None = None) -> tuple[int, int]:
    """Remove our entries (except exact `keep_command` ones); return (removed, kept)."""
    removed = kept = 0
    hooks = settings.get("hooks")
    for event in list(hooks) if isinstance(hooks, dict) else []:
        groups = hooks[event]
        if not isinstance(groups, list):  # another tool's business: left as it is
            continue
        new_groups = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                new_groups.append(group)
                continue
            remaining = []
            for entry in entries:
                command = entry.get("command") if isinstance(entry, dict) else None
                if is_ours(command, agent) and command != keep_command:
                    removed += 1
                    continue
                kept += is_ours(command, agent)
                remaining.append(entry)
            if len(remaining) == len(entries):
                new_groups.append(group)
            elif remaining:  # a group we shared with other hooks keeps them
                new_groups.append({**group, "hooks": remaining})
        if new_groups or not groups:
            hooks[event] = new_groups
        else:
            del hooks[event]
    if isinstance(hooks, dict) and not hooks and removed:
        del settings["hooks"]
    return removed, kept


def install(agent: str, path: str, command: str) -> Change:
    """Make `command` the agent's only yarp hook for every event it needs, keeping other hooks.

    The old file is backed up when changed; a malformed file raises `DataError` and is left unchanged.
    """
    settings, previous, mode = _load(path)
    for event in HOOK_EVENTS[agent]:
        _groups(settings, event)  # refuse malformed shapes before changing anything
    removed, _ = _strip(settings, agent, keep_command=command)
    added = 0
    hooks = settings.setdefault("hooks", {})
    for event in HOOK_EVENTS[agent]:
        groups = hooks.setdefault(event, [])
        present = any(
            isinstance(group, dict) and isinstance(group.get("hooks"), list)
            and any(isinstance(e, dict) and e.get("command") == command for e in group["hooks"])
            for group in groups
        )
        if present:
            continue
        group = {"matcher": MATCHERS[agent]} if event in MATCHED_EVENTS else {}
        group["hooks"] = [{"type": "command", "command": command, **ENTRY_FIELDS[agent]}]
        groups.append(group)
        added += 1
    if not added and not removed:
        return Change(path, False, None, 0)
    backup = _save(path, settings, previous, mode)
    return Change(path, True, backup, added)


def uninstall(agent: str, path: str) -> Change:
    """Remove the agent's yarp hooks, keeping every other hook and backing up the old file; `DataError` if malformed."""
    settings, previous, mode = _load(path)
    if previous is None:
        return Change(path, False, None, 0)
    removed, _ = _strip(settings, agent)
    if not removed:
        return Change(path, False, None, 0)
    backup = _save(path, settings, previous, mode)
    return Change(path, True, backup, removed)


def installed_commands(agent: str, path: str) -> dict[str, list[str]]:
    """Our hook commands in the settings file at `path`, by event (empty when none or no file).

    Raises `DataError` for a file that is not a JSON object of the expected shape.
    """
    settings, _, _ = _load(path)
    found: dict[str, list[str]] = {}
    for event in HOOK_EVENTS[agent]:
        for group in _groups(settings, event):
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                command = entry.get("command") if isinstance(entry, dict) else None
                if is_ours(command, agent):
                    found.setdefault(event, []).append(command)
    return found
