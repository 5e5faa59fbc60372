"""What the agent's shell defines before each command: aliases, functions and PATH from Claude Code's snapshot.

Claude Code runs every Bash command after sourcing a snapshot of the user's
shell (`<config dir>/shell-snapshots/snapshot-<shell>-<time>-<random>.sh`):
its functions (`nvm`, `conda`, ...) and aliases (`alias python=python3`). A
rewrite that puts `yarp run` in front of such a name would run a program of
that name instead, or none at all, so the planner leaves these names in the
shell (`yarp.view.plan.plan_command(shell_names=...)`). The snapshot's `PATH`
is the one the command runs with: a name it cannot find stays in the shell
too, which reports it in its own words (`search_path=...`).

The snapshot is read, never sourced: only the lines that define a name are
matched, within `MAX_SNAPSHOT_BYTES`, and the result is kept per file
identity, so a session's calls read it once. A snapshot that cannot be read
yields no names (the rewrite then behaves as before).
"""

from __future__ import annotations

import os
import re

#: A snapshot larger than this is read only this far.
MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024
#: Snapshots looked at in the folder (the newest is used).
MAX_SNAPSHOT_FILES = 256

_NAME = r"[^\s'\"\\()=|&;<>$`]+"
_DEFINITIONS = re.compile(
    # alias -- ll='ls -l'            (bash and zsh)
    rf"^alias (?:-- )?({_NAME})="
    # eval $'nvm () \n{ ...'          (bash: `declare -f` quoted by printf %q)
    rf"|^eval (?:-- )?\$'({_NAME}) \(\)"
    # eval nvm\ \(\)\ ...             (bash, %q without a newline)
    rf"|^eval (?:-- )?({_NAME})\\ \\\(\\\)"
    # nvm () {                         (zsh: `typeset -f`)
    rf"|^({_NAME}) \(\) \{{",
    re.MULTILINE,
)

_EXPORTED_PATH = re.compile(r"^export PATH=([^\n]*)$", re.MULTILINE)


class Snapshot:
    """The names a snapshot defines, and its `PATH` (None when it sets none we can read)."""

    __slots__ = ("names", "path")

    def __init__(self, names: frozenset[str], path: str | None) -> None:
        self.names = names
        self.path = path


NO_SNAPSHOT = Snapshot(frozenset(), None)
_cache: dict[tuple, Snapshot] = {}


def snapshot_folder(transcript_path: str | None, environ=os.environ) -> str:
    """Claude Code's snapshot folder: beside `projects/` of the event's transcript, else the config dir's."""
    if transcript_path:
        parts = os.path.normpath(transcript_path).split(os.sep)
        if "projects" in parts:
            index = len(parts) - 1 - parts[::-1].index("projects")
            return os.path.join(os.sep.join(parts[:index]) or os.sep, "shell-snapshots")
    base = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(base, "shell-snapshots")


def newest_snapshot(folder: str) -> str | None:
    """The most recently written `snapshot-*.sh` regular file in `folder`, or None."""
    newest = None
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_SNAPSHOT_FILES:
                    break
                if not (entry.name.startswith("snapshot-") and entry.name.endswith(".sh")):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if entry.is_file(follow_symlinks=False) and (newest is None or st.st_mtime_ns > newest[0]):
                    newest = (st.st_mtime_ns, entry.path)
    except OSError:
        return None
    return newest[1] if newest else None


#: Newer snapshots keep each function as base64 (`eval "$(echo '<base64>' | base64 -d)"`).
_ENCODED = re.compile(r"""echo '([A-Za-z0-9+/=\s]{4,})' \| base64 -d""")
_DECODED_FUNCTION = re.compile(rf"^(?:function )?({_NAME}) \(\)", re.MULTILINE)


def defined_names(text: str) -> frozenset[str]:
    """The alias and function names a snapshot's text defines."""
    import base64
    import binascii

    names = set()
    for match in _DEFINITIONS.finditer(text):
        names.add(next(group for group in match.groups() if group))
    for match in _ENCODED.finditer(text):
        try:
            decoded = base64.b64decode("".join(match.group(1).split()), validate=True).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            continue
        names.update(_DECODED_FUNCTION.findall(decoded))
    return frozenset(names)


def exported_path(text: str) -> str | None:
    """The last `export PATH=…` of a snapshot, unquoted (`printf %q` escapes), or None.

    An ANSI-C quoted value (`$'…'`, a PATH with a newline) is not read.
    """
    values = _EXPORTED_PATH.findall(text)
    if not values or values[-1].startswith(("$'", "'", '"')):
        return None
    value, out, index = values[-1], [], 0
    while index < len(value):
        if value[index] == "\\" and index + 1 < len(value):
            index += 1
        out.append(value[index])
        index += 1
    return "".join(out)


def read_snapshot(transcript_path: str | None, environ=os.environ) -> Snapshot:
    """What the agent's shell defines before a command (nothing when no snapshot can be read)."""
    path = newest_snapshot(snapshot_folder(transcript_path, environ))
    if path is None:
        return NO_SNAPSHOT
    from yarp.private_files import PrivatePathProblem, open_for_reading, read_bounded

    try:
        fd, st = open_for_reading(path, private=False)  # a regular file of ours, no link followed
    except (OSError, PrivatePathProblem):
        return NO_SNAPSHOT
    try:
        key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        cached = _cache.get(key)
        if cached is not None:
            return cached
        data = read_bounded(fd, MAX_SNAPSHOT_BYTES)[:MAX_SNAPSHOT_BYTES]
    except OSError:
        return NO_SNAPSHOT
    finally:
        os.close(fd)
    text = data.decode("utf-8", "replace")
    snapshot = Snapshot(defined_names(text), exported_path(text))
    if len(_cache) >= 64:
        _cache.clear()
    _cache[key] = snapshot
    return snapshot


def shell_names(transcript_path: str | None, environ=os.environ) -> frozenset[str]:
    """Names the agent's shell defines before a command (empty when no snapshot can be read)."""
    return read_snapshot(transcript_path, environ).names


__all__ = ["Snapshot", "read_snapshot", "shell_names", "defined_names", "exported_path", "snapshot_folder",
           "newest_snapshot"]
