"""Tool families: one name for the tools that do one thing, whichever agent called them; and input gists.

Every agent names its tools its own way: a shell command is `Bash` to one,
`bash` to another, `run_shell_command`, `exec_command` or `shell` to others,
and `shell` to a person's `yarp run`. A *family* gathers the names that do
one thing, so `--tool shell` selects every shell call (`families`, the one
table of these names). Any other name selects that tool, whatever its case
(`tool_names`).

The `shell` and `read` families are each agent's own word on its tools (its
record's `TOOL_CLASSES` in `yarp.agents`) and a person's `yarp run`; the
others gather the generic names agents give their file tools.

`input_gist` names what a call's input asks for in one line: the command a
shell call ran, the file a read or an edit touched, the pattern of a search.
"""

from __future__ import annotations

#: The tool of a person's own `yarp run` (`yarp.broker.services.run.STANDALONE_TOOL`).
STANDALONE_SHELL_TOOL = "shell"
#: The families no agent record classes, by their members' names (lower-cased, any agent).
_GENERIC_FAMILIES: dict[str, frozenset[str]] = {
    "write": frozenset({"write", "write_file"}),
    "edit": frozenset({"edit", "multiedit", "replace", "apply_patch", "patch", "notebookedit",
                       "str_replace_based_edit_tool"}),
    "grep": frozenset({"grep", "search_file_content"}),
    "glob": frozenset({"glob", "find"}),
    "ls": frozenset({"ls", "list", "list_directory"}),
}
#: Other names a person may give for a family.
FAMILY_ALIASES = {"bash": "shell"}
_families: dict[str, frozenset[str]] = {}


def families() -> dict[str, frozenset[str]]:
    """Family -> the lower-cased tool names in it: `shell` and `read` from every agent's record, then the rest."""
    if not _families:
        from yarp import agents

        classed: dict[str, set[str]] = {"shell": {STANDALONE_SHELL_TOOL}, "read": set()}
        for name in agents.names():
            for tool, kind in agents.get(name, "TOOL_CLASSES", {}).items():
                if kind in classed:
                    classed[kind].add(tool.lower())
        _families.update({kind: frozenset(tools) for kind, tools in classed.items()})
        _families.update(_GENERIC_FAMILIES)
    return _families


#: Input members that name what a call is about, most telling first (canonical JSON sorts keys,
#: so the first member of the object would say little).
_GIST_KEYS = ("file_path", "absolute_path", "filePath", "notebook_path", "path", "file", "query", "url", "prompt",
              "description")
#: The longest gist kept from an input (characters).
MAX_GIST_CHARS = 400


def family_of(name: str) -> str | None:
    """The family `name` names (`shell` for `shell`, `bash` or `Shell`), or None for any other name."""
    word = name.strip().lower()
    word = FAMILY_ALIASES.get(word, word)
    return word if word in families() else None


def tool_names(name: str, stored: list[str]) -> list[str]:
    """The names among `stored` (the archive's distinct tool names) that `--tool name` selects:
    every member of its family, or the names equal to it ignoring case."""
    family = family_of(name)
    if family is not None:
        members = families()[family]
        return [tool for tool in stored if tool.lower() in members]
    wanted = name.strip().casefold()
    return [tool for tool in stored if tool.casefold() == wanted]


def is_shell(tool: str) -> bool:
    """Whether `tool` is a shell tool of some agent."""
    return tool.lower() in families()["shell"]


def input_gist(tool: str, value: object) -> str | None:
    """One line saying what an input asks for: a shell call's command, a path, a pattern; None if nothing does."""
    if not isinstance(value, dict):
        return None
    text = None
    if is_shell(tool):
        from yarp.archive.savings.programs import command_text

        text = command_text(value)
    if text is None:
        text = _members_gist(value)
    return one_line(text) if text is not None else None


def _members_gist(value: dict) -> str | None:
    pattern = value.get("pattern")
    if isinstance(pattern, str) and pattern:
        # A search: its pattern, then where it looked.
        where = next((value[k] for k in ("path", "file_path") if isinstance(value.get(k), str) and value[k]), None)
        return f"{pattern}  {where}" if where else pattern
    found = next((value[key] for key in _GIST_KEYS if isinstance(value.get(key), str) and value[key]), None)
    if found is not None:
        return found
    paths = value.get("paths")
    if isinstance(paths, list) and paths and all(isinstance(p, str) for p in paths):
        return " ".join(paths)
    return next((v for v in value.values() if isinstance(v, str) and v), None)


def one_line(text: str, limit: int = MAX_GIST_CHARS) -> str:
    """`text` on one line: runs of white space as one space, other control characters as `?`, cut to `limit`."""
    text = " ".join(text[: limit * 4].split())
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
