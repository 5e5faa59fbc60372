"""Names the agent's shell defines before each command: aliases and functions from Claude Code's snapshot.

Claude Code runs every Bash command after sourcing a snapshot of the user's
shell (`<config dir>/shell-snapshots/snapshot-<shell>-<time>-<random>.sh`):
its functions (`nvm`, `conda`, ...) and aliases (`alias python=python3`). A
rewrite that puts `yarp run` in front of such a name would run a program of
that name instead, or none at all, so the planner leaves these names in the
shell (`yarp.view.plan.plan_command(shell_names=...)`).

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

_cache: dict[tuple, frozenset[str]] = {}


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


def defined_names(text: str) -> frozenset[str]:
    """The alias and function names a snapshot's text defines."""
    names = set()
    for match in _DEFINITIONS.finditer(text):
        names.add(next(group for group in match.groups() if group))
    return frozenset(names)


def shell_names(transcript_path: str | None, environ=os.environ) -> frozenset[str]:
    """Names the agent's shell defines before a command (empty when no snapshot can be read)."""
    path = newest_snapshot(snapshot_folder(transcript_path, environ))
    if path is None:
        return frozenset()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return frozenset()
    try:
        st = os.fstat(fd)
        key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        cached = _cache.get(key)
        if cached is not None:
            return cached
        data = os.read(fd, MAX_SNAPSHOT_BYTES)
    except OSError:
        return frozenset()
    finally:
        os.close(fd)
    names = defined_names(data.decode("utf-8", "replace"))
    if len(_cache) >= 64:
        _cache.clear()
    _cache[key] = names
    return names


__all__ = ["shell_names", "defined_names", "snapshot_folder", "newest_snapshot"]
