"""Add and remove YARP's hook entries in an agent's settings file of command hooks.

Every agent with command hooks (`yarp.agents`, `ADAPTER = "hooks"`) reads the
same shape: `{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command",
"command": C, ...}]}]}}`; its `hooks` part says where the file is for a scope
(`settings_path`), its matcher and what an entry holds beside its command.
Installing merges into what is there (other keys, other hooks and other
matcher groups are kept), is idempotent, keeps a private backup of a file it
changes (the newest `MAX_BACKUPS` per file; older ones are removed) and
replaces the file atomically. Uninstalling removes exactly the entries this
module recognises as ours: a command that runs a `yarp` (console script or
`-m yarp`) with the arguments `hook <agent>`; it then leaves the tree as
installing found it: a file that held only our hooks is removed (with its
agent folder, when that is left empty), a file whose remaining settings are
exactly a backup's gets that backup's bytes back, and backups that held
nothing but those settings and our hooks are removed.

Never rewrites a file it cannot parse as a JSON object, and never touches other
files of the agent.

An agent that runs hook *files* instead (its `hooks` part's `HOOK_FILES`: one
executable file per event, named for the event, in a folder that
`settings_path` names) gets one small shell script per event that `exec`s the
command, marked as ours on its second line; other files in the folder are
never touched, uninstalling removes exactly ours, and the folder (and a dot
folder around it) when that is left empty. Nothing of anyone else's is
changed, so nothing is backed up.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from dataclasses import dataclass

from yarp import private_files
from yarp.errors import DataError, UsageError

#: Largest settings file we read.
MAX_SETTINGS_BYTES = 4 * 1024 * 1024
#: Backups kept per settings file (`<file>.yarp-backup-<unix ms>`); older ones are removed.
MAX_BACKUPS = 3
BACKUP_INFIX = ".yarp-backup-"


@dataclass(frozen=True, slots=True)
class Change:
    """What an install or uninstall did to a settings file: whether it changed, its backup, the hooks
    touched, and (uninstall) whether the file was removed or given its backup's bytes back."""

    path: str
    changed: bool
    backup: str | None
    entries: int
    removed: bool = False
    restored: bool = False


#: The second line of a hook file we write (`HOOK_FILES` agents), how uninstall knows it is ours.
HOOK_FILE_MARK = "# Added by `yarp hook install`; `yarp hook uninstall` removes it."
#: The names a hook file of ours may take after the event's (the first one free is used).
_HOOK_FILE_SUFFIXES = ("", ".sh", ".bash")
_MAX_HOOK_FILE_BYTES = 4096


def _agent(agent: str):
    """(the record, the `hooks` part) of an agent with command hooks; `UsageError` for any other."""
    from yarp import agents

    record = agents.hook_record(agent)
    if record is None:
        raise UsageError("unknown agent")
    return record, agents.part(agent, "hooks")


def settings_path(agent: str, scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """The agent's hook settings file for `scope` (`user` or `project`), as its `hooks` part says.

    Raises `UsageError` for an agent without command hooks.
    """
    return _agent(agent)[1].settings_path(scope, environ, cwd)


def other_paths(agent: str, scope: str, cwd: str | None = None) -> list[str]:
    """Files of `scope` where an older yarp put the agent's hooks (installing moves ours out of them)."""
    found = getattr(_agent(agent)[1], "OTHER_PROJECT_FILES", ()) if scope == "project" else ()
    return [os.path.join(os.path.abspath(cwd or os.getcwd()), name) for name in found]


def local_command(agent: str, scope: str) -> bool:
    """Whether the file of `scope` is this machine's own, so its command may name this `yarp` by path;
    a project file that is committed gets `yarp hook AGENT`, found on each machine's PATH."""
    return scope != "project" or bool(getattr(_agent(agent)[1], "LOCAL_PROJECT_FILE", False))


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
        backup = f"{path}{BACKUP_INFIX}{int(time.time() * 1000)}"
        while os.path.lexists(backup):  # two changes within a millisecond
            backup += "0"
        _write_private(backup, previous)
    body = (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    private_files.replace_atomically(path, body, private_files.FILE_MODE if mode is None else mode)
    _prune_backups(path)
    return backup


def backups(path: str) -> list[str]:
    """Our backups of the settings file at `path`, oldest first."""
    directory, name = os.path.split(path)
    prefix = name + BACKUP_INFIX
    try:
        found = [entry for entry in os.listdir(directory) if entry.startswith(prefix)
                 and entry[len(prefix):].isdigit()]
    except OSError:
        return []
    return [os.path.join(directory, entry) for entry in sorted(found, key=lambda e: (len(e), e))]


def _prune_backups(path: str) -> None:
    for old in backups(path)[:-MAX_BACKUPS]:
        try:
            os.unlink(old)
        except OSError:
            pass


def _tidy(path: str, agent: str, settings: dict) -> bytes | None:
    """Once our hooks are out and `settings` remain: remove every backup that holds nothing else (ours
    added to these settings); return the bytes of the oldest that was exactly these settings, if any."""
    original = None
    for backup in backups(path):
        try:
            before, data, _ = _load(backup)
        except DataError:
            continue  # not ours to judge: kept
        exact = data is not None and before == settings
        _strip(before, agent)
        if data is None or before != settings:
            continue
        if exact and original is None:
            original = data
        try:
            os.unlink(backup)
        except OSError:
            pass
    return original


def _remove_file(path: str) -> None:
    """Remove a settings file that held only our hooks, and its agent folder (a dot folder) if left empty."""
    os.unlink(path)
    directory = os.path.dirname(path)
    if os.path.basename(directory).startswith("."):
        try:
            os.rmdir(directory)
        except OSError:
            pass  # holds other files


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
    record, part = _agent(agent)
    if getattr(part, "HOOK_FILES", None):
        return _install_files(agent, path, command, part.HOOK_FILES)
    settings, previous, mode = _load(path)
    for event in record.HOOK_EVENTS:
        _groups(settings, event)  # refuse malformed shapes before changing anything
    removed, _ = _strip(settings, agent, keep_command=command)
    added = 0
    hooks = settings.setdefault("hooks", {})
    for event in record.HOOK_EVENTS:
        groups = hooks.setdefault(event, [])
        present = any(
            isinstance(group, dict) and isinstance(group.get("hooks"), list)
            and any(isinstance(e, dict) and e.get("command") == command for e in group["hooks"])
            for group in groups
        )
        if present:
            continue
        group = {"matcher": part.MATCHER} if event in part.MATCHED_EVENTS else {}
        group["hooks"] = [{"type": "command", "command": command, **part.ENTRY_FIELDS}]
        groups.append(group)
        added += 1
    if not added and not removed:
        return Change(path, False, None, 0)
    backup = _save(path, settings, previous, mode)
    return Change(path, True, backup, added)


def uninstall(agent: str, path: str) -> Change:
    """Remove the agent's yarp hooks, keeping every other hook; `DataError` if malformed.

    Backups that hold nothing but these settings plus our hooks are removed. A
    file left as one of them was before any hook of ours gets that backup's
    bytes back; a file left with nothing is removed; any other is rewritten
    (with no backup: what was removed is ours).
    """
    part = _agent(agent)[1]
    if getattr(part, "HOOK_FILES", None):
        return _uninstall_files(agent, path, part.HOOK_FILES)
    settings, previous, mode = _load(path)
    if previous is None:
        return Change(path, False, None, 0)
    removed, _ = _strip(settings, agent)
    if not removed:
        return Change(path, False, None, 0)
    original = _tidy(path, agent, settings)
    if original is not None:
        private_files.replace_atomically(path, original, private_files.FILE_MODE if mode is None else mode)
        return Change(path, True, None, removed, restored=True)
    if not settings:
        _remove_file(path)
        return Change(path, True, None, removed, removed=True)
    # No backup: what this removes is ours, and a backup of it would hold nothing else (`_tidy`).
    _save(path, settings, None, mode)
    return Change(path, True, None, removed)


def installed_commands(agent: str, path: str) -> dict[str, list[str]]:
    """Our hook commands in the settings file at `path`, by event (empty when none or no file).

    Raises `DataError` for a file that is not a JSON object of the expected shape.
    """
    record, part = _agent(agent)
    if getattr(part, "HOOK_FILES", None):
        return {event: [command] for event, _, command in _our_files(agent, path, part.HOOK_FILES)}
    settings, _, _ = _load(path)
    found: dict[str, list[str]] = {}
    for event in record.HOOK_EVENTS:
        for group in _groups(settings, event):
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                command = entry.get("command") if isinstance(entry, dict) else None
                if is_ours(command, agent):
                    found.setdefault(event, []).append(command)
    return found


# --- hook files: one script per event in a folder (`HOOK_FILES`) ----------------------------


def _hook_file_command(path: str, agent: str) -> str | None:
    """The command of a hook file of ours at `path` (marked, `exec`ing `yarp hook AGENT`), else None."""
    try:
        fd, st = private_files.open_for_reading(path, private=False)
    except (OSError, private_files.PrivatePathProblem):
        return None
    try:
        data = private_files.read_bounded(fd, _MAX_HOOK_FILE_BYTES) if st.st_size <= _MAX_HOOK_FILE_BYTES else b""
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = data.decode("utf-8", "replace").split("\n")
    if len(lines) < 3 or not lines[0].startswith("#!") or lines[1] != HOOK_FILE_MARK \
            or not lines[2].startswith("exec "):
        return None
    command = lines[2][len("exec "):]
    return command if is_ours(command, agent) else None


def _our_files(agent: str, folder: str, files: dict) -> list[tuple[str, str, str]]:
    """(event, path, command) of every hook file of ours in `folder`, by event then name."""
    found = []
    for event, stem in files.items():
        for suffix in _HOOK_FILE_SUFFIXES:
            path = os.path.join(folder, stem + suffix)
            command = _hook_file_command(path, agent) if os.path.isfile(path) and not os.path.islink(path) else None
            if command is not None:
                found.append((event, path, command))
    return found


def _install_files(agent: str, folder: str, command: str, files: dict) -> Change:
    """Make `command` our one hook file per event in `folder`; other files there are left alone."""
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise DataError("the hooks folder is not a folder; it was left unchanged")
    ours = _our_files(agent, folder, files)
    body = f"#!/bin/sh\n{HOOK_FILE_MARK}\nexec {command}\n".encode()
    changed = added = 0
    for event, stem in files.items():
        mine = [path for found, path, _ in ours if found == event]
        keep = next((path for found, path, held in ours if found == event and held == command), None)
        for path in mine:
            if path != keep:
                os.unlink(path)  # ours, running another yarp (or a second one): replaced
                changed += 1
        if keep is not None:
            continue
        free = [stem + suffix for suffix in _HOOK_FILE_SUFFIXES
                if not os.path.lexists(os.path.join(folder, stem + suffix))]
        if not free:
            raise DataError(f"the hooks folder holds other {stem} hooks under every name yarp may use")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        private_files.replace_atomically(os.path.join(folder, free[0]), body, 0o700)
        added += 1
    return Change(folder, bool(changed or added), None, added)


def _uninstall_files(agent: str, folder: str, files: dict) -> Change:
    """Remove our hook files from `folder`, and the folder (and a dot folder around it) when left empty."""
    ours = _our_files(agent, folder, files)
    for _, path, _ in ours:
        os.unlink(path)
    if not ours:
        return Change(folder, False, None, 0)
    removed = False
    for directory in (folder, os.path.dirname(folder)):
        if directory != folder and not os.path.basename(directory).startswith("."):
            break
        try:
            os.rmdir(directory)
        except OSError:
            break  # holds other files
        removed = True
    return Change(folder, True, None, len(ours), removed=removed)
