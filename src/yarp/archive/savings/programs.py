"""What a shell call ran: the program (`cargo`) and command (`cargo test`) its input names.

A report names a shell call by its input when it groups by program or lists
the call among the top commands. The input is the call's small
`input/before` payload, read once when the call's row is annotated
(`recalls.annotate`) and labelled here; the labels are kept on the row, so a
later report reads no input again. Labels are cut to `MAX_LABEL_CHARS`
printable characters. Nothing here reads an output.
"""

from __future__ import annotations

from yarp.errors import DataError

def _shell_tools() -> frozenset[str]:
    from yarp import agents

    return frozenset({STANDALONE_SHELL_TOOL}).union(*(
        (tool for tool, cls in agents.record(name).TOOL_CLASSES.items() if cls == "shell")
        for name in agents.names()))


#: The tool of a person's own `yarp run` (`yarp.broker.services.run.STANDALONE_TOOL`).
STANDALONE_SHELL_TOOL = "shell"
#: Tool names (lower-cased) whose input names a shell command: every agent's shell tools (its
#: record's `TOOL_CLASSES`), and a person's `yarp run`.
SHELL_TOOLS = _shell_tools()
#: Words before the program that do not name it.
_PREFIX_WORDS = frozenset({"sudo", "env", "time", "command", "exec", "nohup", "nice", "timeout", "builtin"})
#: Leading commands that only prepare the one that produces the output.
_SETUP_PROGRAMS = frozenset({"cd", "pushd", "export", "set", "source", ".", "unset", "true"})
#: Programs whose first word names what they do (`git log`, `cargo test`).
_SUBCOMMAND_PROGRAMS = frozenset({
    "git", "cargo", "npm", "pnpm", "yarn", "bun", "deno", "go", "docker", "kubectl", "uv", "pip", "pip3",
    "poetry", "gh", "dotnet", "mvn", "gradle", "make", "npx", "rustup", "helm", "terraform", "brew", "apt",
    "apt-get", "systemctl", "yarp", "just", "nix", "bazel", "hatch", "tox", "nox", "conda",
})
MAX_LABEL_CHARS = 48



def clean(text: str) -> str:
    """`text` as a label: unprintable characters as `?`, at most `MAX_LABEL_CHARS` characters."""
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "\u2026"


def _words_of(value: object) -> list[str] | None:
    """The words of the first command a shell tool's input runs (`command_text`)."""
    text = command_text(value)
    return _first_command(text) if text is not None else None


def command_text(value: object) -> str | None:
    """The command line a shell tool's input runs, as text, from its known shapes; None for other inputs.

    `{"command": "…"}` (most agents' shells), `{"cmd": "…"}`, `{"command":
    ["bash", "-lc", "…"]}` (an argv shell: the script), `{"argv": [...]}` (a
    person's `yarp run`).
    """
    if not isinstance(value, dict):
        return None
    for key in ("command", "cmd", "argv"):
        found = value.get(key)
        if isinstance(found, str):
            return found
        if isinstance(found, list) and found and all(isinstance(w, str) for w in found):
            if len(found) >= 3 and found[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and found[1] in ("-c", "-lc"):
                return found[2]
            import shlex

            return shlex.join(found)
    return None


def _first_command(text: str) -> list[str]:
    """Words of the first command that is not set-up (`cd x && cargo test` -> cargo test)."""
    for separator in ("&&", "||", ";", "\n"):
        text = text.replace(separator, "\0")
    for segment in text.split("\0"):
        words = segment.split("|", 1)[0].split()
        while words and ("=" in words[0] and not words[0].startswith("=") or words[0] in _PREFIX_WORDS):
            words.pop(0)
        if words and words[0] not in _SETUP_PROGRAMS:
            return [w.strip("'\"") for w in words]
    return []


def command_key(tool: str, value: object, *, subcommand: bool) -> str:
    """The program (and for `git`-like programs its first word) a call ran; else its tool."""
    words = _words_of(value) if tool.lower() in SHELL_TOOLS else None
    return (_label(words, subcommand) if words else None) or clean(tool)


def _label(words: list[str], subcommand: bool) -> str:
    program = words[0].rsplit("/", 1)[-1] or words[0]
    if subcommand and program in _SUBCOMMAND_PROGRAMS:
        rest = [w for w in words[1:] if not w.startswith("-")]
        if rest and len(rest[0]) <= 24 and "/" not in rest[0]:
            return clean(f"{program} {rest[0]}")
    return clean(program)


def input_value(compression: str, body: bytes, length: int) -> object:
    """A stored input payload's JSON value; None when it is damaged or not JSON (verify reports that,
    and the tool then names the call)."""
    from yarp.archive.codec import decode_body
    from yarp.json_text import loads_record

    try:
        return loads_record(decode_body(compression, body, length))
    except (ValueError, DataError):
        return None


def labels_of(text: str | None) -> tuple[str | None, str | None]:
    """(program label, command label) of a shell input's command text; None where it names no command."""
    words = _first_command(text) if text is not None else None
    return (_label(words, False), _label(words, True)) if words else (None, None)
