"""What the global cap shows of a text, for tests that build a tool's output and check its view.

`view` caps one text as a tool result on stdout (the default cap, exit status 1 unless given);
`lines_of` is the set of a view's lines, for checking that a line is shown whole.
"""

from __future__ import annotations

from yarp.view.cap import cap_text

#: The archive reference every view names.
REF = "yr_" + "cd" * 16


def view(data: bytes, cap: int = 5120, exit_code: int | None = 1) -> str:
    """The view of `data` capped at `cap` bytes, as text."""
    return cap_text(data, cap=cap, archive_ref=REF, source="stdout", exit_code=exit_code).decode()


def lines_of(text: str) -> set[str]:
    """The lines of a view."""
    return set(text.split("\n"))
