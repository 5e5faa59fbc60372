"""Shell planning: decide whether an agent's command text is wrapped by `yarp run`.

The command text is parsed with tree-sitter-bash, never executed, expanded or
reconstructed.

Compound planning (`compound=True`, what YARP's own adapters ask for): every
output-producing simple command inside lists, pipelines, redirections,
substitutions and assignments gets `yarp run` in front of its name
(`cd x && yarp run -- npm test`), in view or pass-through mode by where its
output goes (`yarp.view.segments`); the rest of the text is left byte for
byte. A text that is one simple command, alone, is wrapped whole, as below.

The reference planning (the default, what `yarp plan` answers adapters
written for the reference contract): only a single simple command made of literal words is a
candidate: pipelines, redirections, substitutions and expansions, chains
(`&&`, `||`, `;`, newlines), subshells, compound commands, here-documents,
comments, environment-assignment prefixes, wrappers (`sudo`, `env`, `xargs`,
`time`, `nohup`, `timeout`, ...) and `yarp` itself are left alone. A candidate
is rewritten only when exactly one reduce rule selects its argv (a pass-through
guard or two matching reduce rules keep it original), as
`yarp run [archive flags] -- <original text unchanged>`.

Either way, `yarp search` and `yarp read` are classed `recovery`: their output already has
its own bounds and is never capped again. Everything else is `ordinary`.

Importing this module loads the tree-sitter grammar; `yarp run` never imports
it (adapters call `yarp plan` before execution).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from yarp.errors import UsageError
from yarp.limits import MAX_IDENTITY_CHARS
from yarp.view.rules import RuleSet
from yarp.view.shell_syntax import literal_value, parse_text

#: Programs that run another command: their output is that command's, so they stay original.
WRAPPERS = frozenset({
    "sudo", "doas", "env", "xargs", "time", "nohup", "timeout", "nice", "ionice", "stdbuf",
    "unbuffer", "setsid", "flock", "chroot", "strace", "ltrace", "watch", "exec", "command",
    "builtin", "eval", "source", ".", "sh", "bash", "zsh", "dash", "fish", "script", "caffeinate",
    "chrt", "taskset", "firejail", "systemd-run", "su", "runuser", "parallel",
})
RECOVERY_COMMANDS = frozenset({"search", "read"})
ARCHIVE_FLAGS = ("--archive-agent", "--archive-account", "--archive-session", "--archive-call")
#: A wrapped part of a compound command records its own call under the adapter's, named by this flag.
PARENT_FLAG = "--archive-parent"

@dataclass(frozen=True, slots=True)
class ArchiveIdentity:
    """The four archive flags that tie a run to a call the adapter has begun."""

    agent: str
    account: str
    session: str
    call: str

    @classmethod
    def from_flags(cls, agent, account, session, call) -> "ArchiveIdentity | None":
        """The identity from the four `--archive-*` flags, or None when none is given.

        Raises `UsageError` when only some are given, or one is empty, too long or holds a NUL.
        """
        values = (agent, account, session, call)
        if all(v is None for v in values):
            return None
        if any(v is None for v in values):
            raise UsageError("--archive-agent, --archive-account, --archive-session and --archive-call go together")
        for flag, value in zip(ARCHIVE_FLAGS, values):
            if not value or len(value) > MAX_IDENTITY_CHARS or "\x00" in value:
                raise UsageError(f"{flag} must be 1 to {MAX_IDENTITY_CHARS} characters without NUL")
        return cls(agent, account, session, call)

    def flags(self) -> list[tuple[str, str]]:
        """The (flag, value) pairs, in the order a rewritten command carries them."""
        return list(zip(ARCHIVE_FLAGS, (self.agent, self.account, self.session, self.call)))

    def parent_flags(self) -> list[tuple[str, str]]:
        """The flags of a wrapped part of a compound command: its own call, under this one."""
        return self.flags()[:3] + [(PARENT_FLAG, self.call)]


@dataclass(frozen=True, slots=True)
class ShellPlan:
    """`execution` is `original` or `rewrite` (with `command`); `result` is `ordinary` or `recovery`.

    `reason` is a fixed token explaining the decision (never command text).
    Compound plans also say how the rewrite archives (`wrapped`: `whole`, the
    adapter's call holds the streams; `segments`, each wrapped command records
    its own call under it), how many commands were wrapped (`segments`) and
    why output-producing commands were left in the shell (`unwrapped`, one
    reason token each).
    """

    execution: str
    command: str | None
    result: str
    reason: str
    wrapped: str | None = None
    segments: int = 0
    unwrapped: tuple[str, ...] = ()

    @property
    def requires_streams(self) -> bool:
        """Whether the adapter's own call gets the four stream snapshots (a whole rewrite)."""
        return self.execution == "rewrite" and self.wrapped != "segments"

    def to_json(self) -> dict:
        """The plan as the `yarp plan` JSON document (version 1); the reason is not part of it.

        A compound plan's rewrite adds `wrapped` (`whole` or `segments`) to `execution`;
        a reference plan's document is exactly the reference's.
        """
        execution: dict = {"kind": self.execution}
        if self.execution == "rewrite":
            execution["command"] = self.command
            if self.wrapped is not None:
                execution["wrapped"] = self.wrapped
        return {"version": 1, "execution": execution, "result": {"kind": self.result}}


def shell_quote(value: str) -> str:
    """Single-quote a value for POSIX shells."""
    return "'" + value.replace("'", "'\\''") + "'"


def simple_argv(text: str) -> tuple[list[str] | None, str]:
    """Parse `text`; return (argv, "simple") for one simple literal command, else (None, reason)."""
    root, reason = parse_text(text)
    if root is None:
        return None, reason
    statements = [child for child in root.children]
    if len(statements) != 1:
        kinds = {child.type for child in statements}
        return None, "comment" if "comment" in kinds else "list"
    command = statements[0]
    if command.type != "command":
        return None, command.type
    argv: list[str] = []
    for child in command.children:
        if child.type == "command_name":
            if child.child_count != 1:
                return None, "dynamic_name"
            value = literal_value(child.children[0])
            if value is None or child.children[0].type != "word":
                return None, "dynamic_name"
            argv.append(value)
            continue
        if not argv:
            return None, "assignment" if child.type == "variable_assignment" else child.type
        value = literal_value(child)
        if value is None:
            return None, "expansion" if child.type in ("string", "concatenation") else child.type
        argv.append(value)
    if not argv:
        return None, "no_command"
    return argv, "simple"


def plan_command(text: str, rules: RuleSet, archive: ArchiveIdentity | None = None, *,
                 launcher: str = "yarp", compound: bool = False,
                 shell_names: frozenset[str] = frozenset(), search_path: str | None = None,
                 cwd: str | None = None) -> ShellPlan:
    """Decide how `text` runs and how its result is treated; see the module docstring.

    `launcher` is the shell text that runs `yarp` in the agent's environment
    (an absolute path, quoted); `compound` asks for compound planning, which
    leaves the aliases and functions `shell_names` (the agent's shell defines
    them before the command) in the shell, and the names its `search_path`
    (the agent's `PATH`, when known) cannot find; `cwd`, the agent's working
    directory when known, lets files the text sources be read for the
    functions they define.
    """
    if compound:
        return _plan_compound(text, archive, launcher, shell_names, search_path, cwd)
    argv, reason = simple_argv(text)
    if argv is None:
        return ShellPlan("original", None, "ordinary", reason)
    program = os.path.basename(argv[0])
    if program == "yarp":
        recovery = len(argv) > 1 and argv[1] in RECOVERY_COMMANDS
        return ShellPlan("original", None, "recovery" if recovery else "ordinary", "yarp")
    if program in WRAPPERS:
        return ShellPlan("original", None, "ordinary", "wrapper")
    selection = rules.select(argv)
    if selection.outcome != "reduce":
        return ShellPlan("original", None, "ordinary", selection.outcome)
    return ShellPlan("rewrite", rewrite_text(text, archive, launcher), "ordinary", "rule:" + selection.rule.id)


def _plan_compound(text: str, archive: ArchiveIdentity | None, launcher: str,
                   shell_names: frozenset[str], search_path: str | None, cwd: str | None) -> ShellPlan:
    from yarp.view.segments import find_segments

    root, reason = parse_text(text)
    if root is None:
        return ShellPlan("original", None, "ordinary", reason)
    source = text.encode("utf-8")
    found = find_segments(root, source, shell_names, search_path, cwd)
    result = "recovery" if found.recovery else "ordinary"
    if found.xtrace:
        # The shell's trace would print every `yarp run` prefix.
        return ShellPlan("original", None, result, "xtrace", unwrapped=("xtrace",) * max(1, len(found.points)))
    if not found.points:
        return ShellPlan("original", None, result, "nothing_to_wrap", unwrapped=found.unwrapped)
    if len(found.points) == 1 and found.points[0].mode == "view" and _is_whole(root, found.points[0].offset):
        return ShellPlan("rewrite", rewrite_text(text, archive, launcher), result, "whole", "whole", 1,
                         found.unwrapped)
    parts = []
    done = 0
    for point in found.points:
        parts += [source[done:point.offset], segment_prefix(archive, launcher, point.mode).encode("utf-8")]
        done = point.offset
    parts.append(source[done:])
    command = b"".join(parts).decode("utf-8")
    return ShellPlan("rewrite", command, result, "segments", "segments", len(found.points), found.unwrapped)


def _is_whole(root, offset: int) -> bool:
    """Whether the program is one plain simple command (no assignment, redirection or comment)
    starting at `offset`."""
    children = root.children
    return len(children) == 1 and children[0].type == "command" and children[0].start_byte == offset


def segment_prefix(archive: ArchiveIdentity | None, launcher: str, mode: str) -> str:
    """What goes in front of one wrapped command of a compound text, ending in `-- `."""
    parts = [launcher, "run"]
    if archive is not None:
        for flag, value in archive.parent_flags():
            parts += [flag, shell_quote(value)]
    if mode == "pass":
        parts.append("--pass")
    parts.append("--")
    return " ".join(parts) + " "


def result_argv(text: str) -> list[str] | None:
    """The argv of the simple command whose output ends the result of `text` (the last
    command of its last pipeline), when its name and arguments are literal; else None.

    A host's result of `cd x && pytest -q 2>&1 | tail -5` ends with `tail`'s
    output; the result's view is chosen by that command's rule.
    """
    root, _ = parse_text(text)
    node = root
    while node is not None and node.type != "command":
        named = [child for child in node.children if child.is_named and child.type not in (
            "comment", "file_redirect", "heredoc_redirect", "herestring_redirect")]
        if node.type not in ("program", "list", "pipeline", "redirected_statement", "negated_command",
                             "subshell", "compound_statement") or not named:
            return None
        node = named[-1]
    if node is None:
        return None
    argv = []
    for child in node.children:
        if child.type == "variable_assignment" and not argv:
            continue
        value = literal_value(child.children[0] if child.type == "command_name" and child.child_count == 1
                              else child)
        if value is None:
            return None
        argv.append(value)
    return argv or None


def is_recovery_command(command: object) -> bool:
    """Whether a shell command is `yarp search` / `yarp read` (by any path to `yarp`), whose
    output is never capped again: recovery commands use their own bounds."""
    if not isinstance(command, str) or "yarp" not in command:
        return False
    argv, _ = simple_argv(command)
    return bool(argv) and os.path.basename(argv[0]) == "yarp" and len(argv) > 1 and argv[1] in RECOVERY_COMMANDS


def rewrite_text(text: str, archive: ArchiveIdentity | None = None, launcher: str = "yarp") -> str:
    """`yarp run [archive flags] -- <text unchanged>` with flag values single-quoted."""
    parts = [launcher, "run"]
    if archive is not None:
        for flag, value in archive.flags():
            parts += [flag, shell_quote(value)]
    parts.append("--")
    return " ".join(parts) + " " + text
