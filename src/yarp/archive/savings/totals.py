"""A report's numbers: sums per group and in total, the top commands, and their JSON form.

Each class of call (`rule`) adds to its own sums: only counted calls add to
bytes produced, shown and withheld; calls whose view is unknown add to their
own counts and bytes, never to the savings. Tokens are an estimate
(`BYTES_PER_TOKEN`), labelled as such wherever they appear.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from yarp.archive.savings.rule import COUNTED, HOST_VIEW, IMPORTED, NOT_EXECUTED

#: Bytes per token for the estimate: the common rule of thumb for English text
#: and code under current tokenizers. An estimate, labelled as such.
BYTES_PER_TOKEN = 4


def estimate_tokens(nbytes: int) -> int:
    """A rough token count for `nbytes` (`BYTES_PER_TOKEN` bytes a token); an estimate, never billing."""
    return round(nbytes / BYTES_PER_TOKEN)


@dataclass(slots=True)
class Totals:
    """Sums for one group (or for the whole window)."""

    calls: int = 0
    produced: int = 0
    shown: int = 0
    withheld: int = 0
    imported_calls: int = 0
    host_view_calls: int = 0
    view_unknown_bytes: int = 0
    not_executed_calls: int = 0
    incomplete_calls: int = 0

    @property
    def view_unknown_calls(self) -> int:
        """Calls whose shown size is unknown: imported ones, and unchanged calls of hosts that show their own result."""
        return self.imported_calls + self.host_view_calls

    def add(self, kind: str, produced: int, withheld: int, calls: int = 1) -> None:
        """Count one row (or `calls` calls) of `kind`; only counted calls add to produced, shown and withheld bytes."""
        if kind == COUNTED:
            self.calls += calls
            self.produced += produced
            self.withheld += withheld
            self.shown += produced - withheld
        elif kind == IMPORTED:
            self.imported_calls += calls
            self.view_unknown_bytes += produced
        elif kind == HOST_VIEW:
            self.host_view_calls += calls
            self.view_unknown_bytes += produced
        elif kind == NOT_EXECUTED:
            self.not_executed_calls += calls
        else:
            self.incomplete_calls += calls

    def merge(self, other: Totals) -> None:
        """Add another group's sums into this one."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, int | float | None]:
        """The sums as the JSON report's fields, with the withheld ratio and token estimates."""
        return {
            "calls": self.calls,
            "bytes_produced": self.produced,
            "bytes_shown": self.shown,
            "bytes_withheld": self.withheld,
            "withheld_ratio": round(self.withheld / self.produced, 4) if self.produced else None,
            "tokens_produced_estimate": estimate_tokens(self.produced),
            "tokens_shown_estimate": estimate_tokens(self.shown),
            "tokens_withheld_estimate": estimate_tokens(self.withheld),
            "view_unknown_calls": self.view_unknown_calls,
            "view_unknown_imported_calls": self.imported_calls,
            "view_unknown_host_calls": self.host_view_calls,
            "view_unknown_bytes": self.view_unknown_bytes,
            "not_executed_calls": self.not_executed_calls,
            "incomplete_calls": self.incomplete_calls,
        }


@dataclass(slots=True)
class Savings:
    """The report: totals, per-group totals, the commands that withheld most."""

    by: str
    since_ms: int | None
    until_ms: int | None
    total: Totals = field(default_factory=Totals)
    groups: dict[str, Totals] = field(default_factory=dict)
    #: (command, calls, bytes produced, bytes withheld), most withheld first.
    top_commands: list[tuple[str, int, int, int]] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The report as a JSON document: window, totals, groups in display order and the top commands."""
        groups = sorted(self.groups.items(), key=group_order(self.by))
        return {
            "by": self.by,
            "since_ms": self.since_ms,
            "until_ms": self.until_ms,
            "bytes_per_token": BYTES_PER_TOKEN,
            "total": self.total.as_dict(),
            "groups": [{"group": key} | totals.as_dict() for key, totals in groups],
            "top_commands": [
                {"command": command, "calls": calls, "bytes_produced": produced, "bytes_withheld": withheld,
                 "tokens_withheld_estimate": estimate_tokens(withheld)}
                for command, calls, produced, withheld in self.top_commands
            ],
        }


def group_order(by: str):
    """The sort key of (group, totals) items in display order: days by date, others most withheld first."""
    if by == "day":
        return lambda item: item[0]
    return lambda item: (-item[1].withheld, -item[1].produced, item[0])
