"""Where each agent keeps its transcripts, and the files to read under a root.

Defaults: Pi `~/.pi/agent/sessions` (`PI_CODING_AGENT_DIR`/sessions when set),
Claude Code `~/.claude/projects` (`CLAUDE_CONFIG_DIR`/projects when set),
Codex `$CODEX_HOME/sessions` and `archived_sessions` (else `~/.codex/...`),
Gemini CLI `~/.gemini/tmp` (`$GEMINI_CLI_HOME/.gemini/tmp` when set), where
only `<project>/chats/session-*.jsonl` are sessions (`is_session_file`: a
subagent's file is read with its parent's), opencode its session store
`$XDG_DATA_HOME/opencode/opencode.db` (else `~/.local/share/...`). Only
regular `*.jsonl` files and session stores (`opencode.db`) are taken;
symbolic links are never followed, so a root cannot lead the importer
outside itself.
"""

from __future__ import annotations

import os
import stat

AGENTS = ("pi", "claude-code", "codex", "gemini", "opencode")
#: Files that are session stores (SQLite), not transcripts.
STORE_NAMES = frozenset({"opencode.db"})


def default_roots(agent: str, environ=os.environ) -> list[str]:
    """The directories holding `agent`'s transcripts, honouring the agent's own home variable.

    Raises `ValueError` for an agent without an importer.
    """
    home = environ.get("HOME") or os.path.expanduser("~")
    if agent == "pi":
        base = environ.get("PI_CODING_AGENT_DIR") or os.path.join(home, ".pi", "agent")
        return [os.path.join(base, "sessions")]
    if agent == "claude-code":
        base = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
        return [os.path.join(base, "projects")]
    if agent == "codex":
        base = environ.get("CODEX_HOME") or os.path.join(home, ".codex")
        return [os.path.join(base, "sessions"), os.path.join(base, "archived_sessions")]
    if agent == "gemini":
        return [os.path.join(environ.get("GEMINI_CLI_HOME") or home, ".gemini", "tmp")]
    if agent == "opencode":
        data = environ.get("XDG_DATA_HOME") or ""
        if not os.path.isabs(data):
            data = os.path.join(home, ".local", "share")
        return [os.path.join(data, "opencode", "opencode.db")]
    raise ValueError(agent)


def is_session_file(agent: str, path: str) -> bool:
    """Whether a file found under a folder is one of `agent`'s sessions (Gemini CLI keeps other
    JSONL files in its temp folders, and each subagent's beside its parent's session)."""
    if agent != "gemini":
        return True
    return os.path.basename(os.path.dirname(path)) == "chats" and os.path.basename(path).startswith("session-")


def transcript_files(root: str):
    """Every regular `*.jsonl` file and session store under `root` (or `root` itself), sorted, links not followed."""
    try:
        st = os.lstat(root)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        yield os.path.abspath(root)
        return
    if not stat.S_ISDIR(st.st_mode):
        return
    stack = [os.path.abspath(root)]
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False) and (entry.name.endswith(".jsonl")
                                                                or entry.name in STORE_NAMES):
                    yield entry.path
            except OSError:
                continue


def guess_agent(path: str) -> str | None:
    """The agent whose transcript `path` is, from its first line (for `all` with explicit paths)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(64 * 1024)
    except OSError:
        return None
    if first.startswith(b"SQLite format 3\x00"):
        return "opencode"
    if b'"type":"session"' in first.replace(b" ", b""):
        return "pi"
    if b'"projectHash"' in first and b'"sessionId"' in first:
        return "gemini"
    if b'"session_meta"' in first or (b'"instructions"' in first and b'"type"' not in first):
        return "codex"
    if b'"sessionId"' in first or b'"leafUuid"' in first or b'"type"' in first:
        return "claude-code"
    return None
