"""A report's numbers: sums per group and in total, per rule, the top commands, and their JSON form.

Each class of call (`rule`) adds to its own sums: only counted calls add to
bytes produced, shown and withheld; calls whose view is unknown add to their
own counts and bytes, never to the savings. Beyond YARP's own cut
(`withheld` = produced − shown), a counted call whose view YARP cut has a
**gross** withheld: what the host would have shown (`hosts`) − what YARP
showed. What later calls took back of it (`recalls`: recovered by `yarp
search|read|restore`, or re-run) is subtracted to give the **net** withheld,
the number a user can trust. Tokens are an estimate (`BYTES_PER_TOKEN`),
labelled as such wherever they appear.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from yarp.archive.savings.rule import COUNTED, HOST_VIEW, IMPORTED, NOT_EXECUTED

#: Bytes per token for the estimate: the common rule of thumb for English text
#: and code under current tokenizers. An estimate, labelled as such.
BYTES_PER_TOKEN = 4
#: A rule whose capped views were recalled (recovered or re-run) more often than this share, over
#: at least `AGGRESSIVE_MIN_CALLS` capped calls, is flagged "too aggressive".
AGGRESSIVE_RECALL_RATE = 0.30
AGGRESSIVE_MIN_CALLS = 20


def estimate_tokens(nbytes: int) -> int:
    """A rough token count for `nbytes` (`BYTES_PER_TOKEN` bytes a token); an estimate, never billing."""
    return round(nbytes / BYTES_PER_TOKEN)


@dataclass(slots=True)
class Row:
    """One summed row of the report's statement: calls of one kind, capped or not, and their sums."""

    kind: str
    capped: bool
    calls: int
    produced: int
    withheld: int
    gross: int
    returned: int
    recovered: int
    rerun: int
    recalled: int


@dataclass(slots=True)
class Totals:
    """Sums for one group (or for the whole window)."""

    calls: int = 0
    produced: int = 0
    shown: int = 0
    withheld: int = 0
    gross: int = 0
    recovered: int = 0
    rerun: int = 0
    tool_output: int = 0
    capped_calls: int = 0
    recalled_calls: int = 0
    imported_calls: int = 0
    host_view_calls: int = 0
    view_unknown_bytes: int = 0
    not_executed_calls: int = 0
    incomplete_calls: int = 0

    @property
    def view_unknown_calls(self) -> int:
        """Calls whose shown size is unknown: imported ones, and unchanged calls of hosts that show their own result."""
        return self.imported_calls + self.host_view_calls

    @property
    def net(self) -> int:
        """Gross withheld less what followers took back: the context the views really saved."""
        return self.gross - self.recovered - self.rerun

    @property
    def recall_rate(self) -> float | None:
        """Capped calls whose view was recovered or re-run, as a share of the capped calls."""
        return self.recalled_calls / self.capped_calls if self.capped_calls else None

    @property
    def too_aggressive(self) -> bool:
        """Whether the views were recalled too often to be worth their cut (see `AGGRESSIVE_RECALL_RATE`)."""
        rate = self.recall_rate
        return self.capped_calls >= AGGRESSIVE_MIN_CALLS and rate is not None and rate > AGGRESSIVE_RECALL_RATE

    def add(self, row: Row) -> None:
        """Count one summed row: only counted calls add to produced, shown and withheld bytes."""
        self.recovered += row.recovered
        self.rerun += row.rerun
        if row.kind == COUNTED:
            self.calls += row.calls
            self.produced += row.produced
            self.withheld += row.withheld
            self.shown += row.produced - row.withheld
            self.gross += row.gross
            self.tool_output += row.returned + row.gross
            if row.capped:
                self.capped_calls += row.calls
                self.recalled_calls += row.recalled
        elif row.kind in (IMPORTED, HOST_VIEW):
            if row.kind == IMPORTED:
                self.imported_calls += row.calls
            else:
                self.host_view_calls += row.calls
            self.view_unknown_bytes += row.produced
            self.tool_output += row.returned
        elif row.kind == NOT_EXECUTED:
            self.not_executed_calls += row.calls
        else:
            self.incomplete_calls += row.calls

    def merge(self, other: Totals) -> None:
        """Add another group's sums into this one."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, int | float | bool | None]:
        """The sums as the JSON report's fields, with the shares and token estimates."""
        return {
            "calls": self.calls,
            "bytes_produced": self.produced,
            "bytes_shown": self.shown,
            "bytes_withheld": self.withheld,
            "withheld_ratio": round(self.withheld / self.produced, 4) if self.produced else None,
            "bytes_withheld_gross": self.gross,
            "bytes_recovered": self.recovered,
            "bytes_rerun": self.rerun,
            "bytes_withheld_net": self.net,
            "tool_output_bytes": self.tool_output,
            "net_share_of_tool_output": round(self.net / self.tool_output, 4) if self.tool_output else None,
            "tokens_produced_estimate": estimate_tokens(self.produced),
            "tokens_shown_estimate": estimate_tokens(self.shown),
            "tokens_withheld_estimate": estimate_tokens(self.withheld),
            "tokens_withheld_gross_estimate": estimate_tokens(self.gross),
            "tokens_withheld_net_estimate": estimate_tokens(self.net),
            "capped_calls": self.capped_calls,
            "recalled_calls": self.recalled_calls,
            "recall_rate": round(self.recall_rate, 4) if self.recall_rate is not None else None,
            "view_unknown_calls": self.view_unknown_calls,
            "view_unknown_imported_calls": self.imported_calls,
            "view_unknown_host_calls": self.host_view_calls,
            "view_unknown_bytes": self.view_unknown_bytes,
            "not_executed_calls": self.not_executed_calls,
            "incomplete_calls": self.incomplete_calls,
        }


@dataclass(slots=True)
class Savings:
    """The report: totals, per-group totals, per-rule totals, the commands that withheld most."""

    by: str
    since_ms: int | None
    until_ms: int | None
    total: Totals = field(default_factory=Totals)
    groups: dict[str, Totals] = field(default_factory=dict)
    #: What cut each capped view (a reducer family, or the cap), with its calls' sums.
    rules: dict[str, Totals] = field(default_factory=dict)
    #: (command, its capped calls' sums), most net withheld first.
    top_commands: list[tuple[str, Totals]] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The report as a JSON document: window, totals, groups in display order, rules and the top commands."""
        groups = sorted(self.groups.items(), key=group_order(self.by))
        return {
            "by": self.by,
            "since_ms": self.since_ms,
            "until_ms": self.until_ms,
            "bytes_per_token": BYTES_PER_TOKEN,
            "total": self.total.as_dict(),
            "groups": [{"group": key} | totals.as_dict() for key, totals in groups],
            "rules": [
                {"rule": name, "capped_calls": t.capped_calls, "recalled_calls": t.recalled_calls,
                 "recall_rate": round(t.recall_rate, 4) if t.recall_rate is not None else None,
                 "bytes_withheld_gross": t.gross, "bytes_withheld_net": t.net,
                 "tokens_withheld_net_estimate": estimate_tokens(t.net), "too_aggressive": t.too_aggressive}
                for name, t in rule_order(self.rules)
            ],
            "top_commands": [
                {"command": command, "calls": t.calls, "bytes_produced": t.produced, "bytes_withheld": t.withheld,
                 "bytes_withheld_gross": t.gross, "bytes_withheld_net": t.net,
                 "tokens_withheld_estimate": estimate_tokens(t.withheld),
                 "tokens_withheld_net_estimate": estimate_tokens(t.net)}
                for command, t in self.top_commands
            ],
        }


def group_order(by: str):
    """The sort key of (group, totals) items in display order: days by date, others most net withheld first."""
    if by == "day":
        return lambda item: item[0]
    return lambda item: (-item[1].net, -item[1].produced, item[0])


def rule_order(rules: dict[str, Totals]) -> list[tuple[str, Totals]]:
    """Rules most capped calls first."""
    return sorted(rules.items(), key=lambda item: (-item[1].capped_calls, item[0]))
