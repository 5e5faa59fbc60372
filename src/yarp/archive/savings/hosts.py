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
through the tool's own line limit (several hosts cut lines inside the tool,
before any hook or extension sees the result).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HostView:
    """How a host shows one output: whole up to `limit` bytes (and `lines` lines), else `overflow` bytes.

    `overflow` None means the kept part is as large as the limit allows, plus
    `notice` bytes of the host's own note; a number is the fixed size of what
    the host shows instead (a saved-to-file preview). Which end a
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


#: Tool classes: shell tools, file reads; every other tool is "other".
SHELL = "shell"
READ = "read"
OTHER = "other"


def _tables() -> tuple[dict[str, dict[str, str]], dict[tuple[str, str, bool | None], HostView]]:
    """Every agent's tool classes (lower-cased names) and host views, from its record (`yarp.agents`)."""
    from yarp import agents

    classes, views = {}, {}
    for name in agents.names():
        record = agents.record(name)
        classes[name] = dict(record.TOOL_CLASSES)
        for (cls, failed), fields in record.HOST_VIEWS.items():
            views[(name, cls, failed)] = HostView(**fields)
    return classes, views


#: agent -> lower-cased tool name -> class, for agents whose tools are not all "other".
#: (agent, class, the call failed) -> its view; `None` for the failure flag matches both outcomes.
#: Agents missing here (a person's `yarp run`, unknown adapters) show the whole output.
_CLASSES, HOST_VIEWS = _tables()


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
