"""Where each agent keeps its transcripts, and the files to read under a root.

Each agent's `transcripts` part (`yarp.agents.<agent>.transcripts`) says where
its transcripts are by default (`default_roots`, honouring the agent's own
home variable), which files under a root are sessions (`is_session_file`,
optional) and how sure it is that a first line is one of its own
(`recognizes`: 2 sure, 1 plausible). A session store (`STORE_NAME`) is a
SQLite file, not a transcript. Only regular `*.jsonl` files and session
stores are taken; symbolic links are never followed, so a root cannot lead
the importer outside itself.
"""

from __future__ import annotations

import os
import stat

from yarp import agents


#: The agents with a transcript reader, in name order (their parts are imported only when read).
AGENTS = tuple(name for name in agents.names() if agents.has_part(name, "transcripts"))


def store_names(readers: tuple[str, ...]) -> frozenset[str]:
    """The file names of the session stores (SQLite, not transcripts) of the agents `readers`."""
    parts = (agents.part(name, "transcripts") for name in readers)
    return frozenset(part.STORE_NAME for part in parts if hasattr(part, "STORE_NAME"))


def default_roots(agent: str, environ=os.environ) -> list[str]:
    """The directories (or store) holding `agent`'s transcripts, honouring the agent's own home variable.

    Raises `ValueError` for an agent without an importer.
    """
    if agent not in AGENTS:
        raise ValueError(agent)
    return agents.part(agent, "transcripts").default_roots(environ)


def is_session_file(agent: str, path: str) -> bool:
    """Whether a file found under a folder is one of `agent`'s sessions (some agents keep other files there)."""
    check = getattr(agents.part(agent, "transcripts"), "is_session_file", None)
    return check is None or check(path)


def transcript_files(root: str, stores: frozenset[str] = frozenset()):
    """Every regular `*.jsonl` file and session store (named in `stores`) under `root` (or `root` itself),
    sorted, links not followed."""
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
                                                                or entry.name in stores):
                    yield entry.path
            except OSError:
                continue


def guess_agent(path: str) -> str | None:
    """The agent whose transcript `path` is, from its first line (for `all` with explicit paths): the one
    surest of it (`recognizes`), the first by name on a tie; None when none takes it. A session store
    named as an agent's (`STORE_NAME`) is that agent's: stores of agents that share a format begin alike."""
    file_name = os.path.basename(path)
    for agent in AGENTS:
        if getattr(agents.part(agent, "transcripts"), "STORE_NAME", None) == file_name:
            return agent
    try:
        with open(path, "rb") as handle:
            first = handle.readline(64 * 1024)
    except OSError:
        return None
    best, sure = None, 0
    for name in AGENTS:
        score = agents.part(name, "transcripts").recognizes(first)
        if score > sure:
            best, sure = name, score
    return best
