"""What each agent's host would have shown of a tool's output without YARP: one table, with sources.

A saving is only real up to what the host itself would have put in the
model's context: an agent that cuts a 1 MB output to 30 KB never showed the
rest, so withholding it saved nothing. Each entry says, for one agent and one
class of tool, how much output the host passes whole (`limit` bytes, and
`lines` when it also counts lines), and how many bytes the model sees past
that (`overflow`: the part kept plus the host's own notice). The figures
were read from each agent's installed package at the version named, and the
sources are listed in docs/design/savings.md ("What the host would have
shown"). Characters are taken as bytes (the hosts count JavaScript string
length or Rust byte length; for ASCII output both are bytes).

An output's size here is the size YARP archived for it: the exact streams of
a wrapped call, else the result's canonical JSON (whose escapes make it a
little larger than the text the host counts; the table then errs on the side
of the host showing less, never more). Line limits apply only to wrapped
calls: there `yarp run` replaced the host's own shell tool, so the raw streams
are what that tool would have cut; a result the adapter saw has already been
through the tool's own line limit (Pi, opencode and Gemini CLI cut lines
inside the tool, before any hook or extension sees the result).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HostView:
    """How a host shows one output: whole up to `limit` bytes (and `lines` lines), else `overflow` bytes.

    `overflow` None means the kept part is as large as the limit allows, plus
    `notice` bytes of the host's own note; a number is the fixed size of what
    the host shows instead (Claude Code's saved-to-file preview). Which end a
    host keeps (the comments of `HOST_VIEWS` say) does not change the size:
    a line-limited part is taken at the output's mean line length.
    """

    limit: int
    overflow: int | None = None
    notice: int = 0
    lines: int | None = None

    def shown(self, raw: int, raw_lines: int | None = None) -> int:
        """Bytes the host shows of an output of `raw` bytes (and `raw_lines` lines, when known)."""
        over_lines = self.lines is not None and raw_lines is not None and raw_lines > self.lines
        if raw <= self.limit and not over_lines:
            return raw
        if self.overflow is not None:
            return min(raw, self.overflow)
        kept = self.limit
        if over_lines:
            # The kept lines' bytes at the output's mean line length; the byte limit still holds.
            kept = min(kept, raw * self.lines // raw_lines)
        return min(raw, kept + self.notice)


#: Shell tools by agent (lower-cased names), then file reads; every other tool is "other".
SHELL = "shell"
READ = "read"
OTHER = "other"
_CLASSES: dict[str, dict[str, str]] = {
    "claude-code": {"bash": SHELL, "read": READ},
    "codex": {"exec_command": SHELL, "shell": SHELL, "local_shell": SHELL, "shell_command": SHELL},
    "pi": {"bash": SHELL, "read": READ},
    "gemini": {"run_shell_command": SHELL, "read_file": READ},
    "opencode": {"bash": SHELL, "read": READ},
}

#: (agent, class, the call failed) -> its view; `None` for the failure flag matches both outcomes.
#: Agents missing here (a person's `yarp run`, unknown adapters) show the whole output.
HOST_VIEWS: dict[tuple[str, str, bool | None], HostView] = {
    # Claude Code 2.1.197: Bash output over 30,000 bytes is saved to a file and the model gets a
    # preview of its first 2,000 characters inside a <persisted-output> note; a failed command's
    # text over 10,000 characters keeps its first and last 5,000. Read stops at 25,000 tokens
    # (about 100,000 bytes), keeping about 85 % of that; other tools persist past 50,000 characters.
    ("claude-code", SHELL, False): HostView(30_000, overflow=2_300),
    ("claude-code", SHELL, True): HostView(10_000, notice=100),
    ("claude-code", READ, None): HostView(100_000, overflow=85_200),
    ("claude-code", OTHER, None): HostView(50_000, overflow=2_300),
    # Codex 0.171.0: every tool output is cut to 10,000 tokens at 4 bytes a token, head and tail,
    # under a header and a truncation warning.
    ("codex", SHELL, None): HostView(40_000, notice=250),
    ("codex", OTHER, None): HostView(40_000, notice=250),
    # Pi 0.73.1: 2,000 lines or 50 KiB, whichever comes first; bash keeps the tail, read the head.
    ("pi", SHELL, None): HostView(51_200, notice=90, lines=2_000),
    ("pi", READ, None): HostView(51_200, notice=70, lines=2_000),
    ("pi", OTHER, None): HostView(51_200, notice=40),
    # Gemini CLI 0.61.0: shell output over 40,000 characters keeps 8,000 + 32,000 under a note;
    # read_file stops at 2,000 lines; other tools are not cut.
    ("gemini", SHELL, None): HostView(40_000, notice=250),
    ("gemini", READ, None): HostView(20 * 1024 * 1024, notice=150, lines=2_000),
    # opencode 1.18.33: 2,000 lines or 50 KiB; bash keeps the tail, read and the rest the head.
    ("opencode", SHELL, None): HostView(51_200, notice=110, lines=2_000),
    ("opencode", READ, None): HostView(51_200, notice=90, lines=2_000),
    ("opencode", OTHER, None): HostView(51_200, notice=170, lines=2_000),
}


def tool_class(agent: str, tool: str) -> str:
    """The class (`SHELL`, `READ`, `OTHER`) of `agent`'s tool `tool`."""
    return _CLASSES.get(agent, {}).get(tool.lower(), OTHER)


def host_view(agent: str, tool: str, is_error: bool) -> HostView | None:
    """The host's view rule for one call, or None when the host shows the whole output."""
    cls = tool_class(agent, tool)
    return HOST_VIEWS.get((agent, cls, bool(is_error))) or HOST_VIEWS.get((agent, cls, None))


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


#: The table's entries, numbered from 1 for SQL (0: the host shows the whole output).
_NUMBERED = list(HOST_VIEWS.items())


def key_sql(agent: str, tool: str, is_error: str) -> str:
    """A SQL expression: the number of the call's entry in `HOST_VIEWS` (1-based), 0 when it has none.

    The arguments are SQL expressions: the session's agent, the lower-cased
    tool name and the call's failure flag. The agent is matched first, then
    the tool's class, so a row costs a few comparisons, and what the later
    steps carry is one integer.
    """
    by_agent: dict[str, list[str]] = {}
    for number, ((name, cls, failed), _) in enumerate(_NUMBERED, 1):
        tools = [t for t, c in _CLASSES.get(name, {}).items() if c == cls]
        tests = [f"{tool} IN ({', '.join(map(_quoted, tools))})"] if cls != OTHER else []
        if failed is not None:
            tests.append(f"{is_error} = {int(failed)}")
        by_agent.setdefault(name, []).append(f"WHEN {' AND '.join(tests)} THEN {number}" if tests else f"ELSE {number}")
    cases = []
    for name, branches in by_agent.items():
        if not branches[-1].startswith("ELSE"):
            branches.append("ELSE 0")
        cases.append(f"WHEN {_quoted(name)} THEN CASE {' '.join(branches)} END")
    return f"CASE {agent} {' '.join(cases)} ELSE 0 END"


def shown_sql(key: str, raw: str) -> str:
    """A SQL expression for `HostView.shown(raw)` by byte limits, for the entry numbered `key` (lines are
    applied later, in Python)."""
    cases = []
    for number, (_, view) in enumerate(_NUMBERED, 1):
        over = view.overflow if view.overflow is not None else view.limit + view.notice
        cases.append(f"WHEN {number} THEN CASE WHEN {raw} <= {view.limit} THEN {raw} ELSE min({raw}, {over}) END")
    return f"CASE {key} {' '.join(cases)} ELSE {raw} END"


def line_limit_sql(key: str) -> str:
    """A SQL expression: the line limit of the entry numbered `key`, NULL when it counts no lines."""
    cases = [f"WHEN {number} THEN {view.lines}" for number, (_, view) in enumerate(_NUMBERED, 1)
             if view.lines is not None]
    return f"CASE {key} {' '.join(cases)} END"
