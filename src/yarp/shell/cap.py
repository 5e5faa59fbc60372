"""The global cap on agent-visible text, exactly as the contract defines it.

All text blocks are joined without separators and measured in UTF-8 bytes. At
or under the cap nothing changes (0 disables the cap). Over it:

    budget = cap - len(marker)
    head   = floor(budget / 2), moved back to a UTF-8 boundary
    tail   = len - (budget - head), moved forward past continuation bytes

and the marker sits at the first omitted position. Image blocks keep their
order and do not count. The visible result is therefore never larger than the
cap, its head is an exact prefix and its tail an exact suffix of the input.

Two entry points: `cap_blocks` for an agent's list of content blocks, and
`cap_files` for the runner, which caps the combined pruned stdout and stderr
files while reading only the bytes it keeps. Neither touches the archive: the
caller commits the exact text before it shows the capped form.
"""

from __future__ import annotations

import os

from .._record import Record
from ..limits import DEFAULT_CAP_BYTES

# typing costs `yarp run` milliseconds; annotations only need it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

COMPLETENESS = ("complete", "incomplete", "unknown")


def marker(source_bytes: int, cap: int, archive_ref: str, source: str, completeness: str) -> str:
    """The contract's cap marker; it starts and ends with a newline."""
    return (
        f"\n[yarp: {source_bytes} byte(s) capped at {cap}; ref={archive_ref}; {source} {completeness}]\n"
        f"Search omitted output: yarp search {archive_ref} 'term|alternate'\n"
    )


class CapPlan(Record):
    """Where the cap cuts a text of `source_bytes` bytes: keep [0, head) and [tail, end)."""

    __slots__ = ("source_bytes", "head", "tail", "marker")
    source_bytes: int
    head: int
    tail: int
    marker: bytes


def _is_continuation(byte: int) -> bool:
    return (byte & 0xC0) == 0x80


def plan_cap(
    source_bytes: int,
    byte_at,
    *,
    cap: int,
    archive_ref: str,
    source: str,
    completeness: str,
) -> CapPlan | None:
    """Compute the cut for a text of `source_bytes` bytes, or None when nothing changes.

    `byte_at(i)` returns the i-th byte of the joined text; only a few bytes
    around the two cut points are read, so the text itself may live in files.
    """
    if cap <= 0 or source_bytes <= cap:
        return None
    mark = marker(source_bytes, cap, archive_ref, source, completeness).encode("utf-8")
    budget = max(0, cap - len(mark))
    head = budget // 2
    while head > 0 and _is_continuation(byte_at(head)):
        head -= 1
    tail = source_bytes - (budget - head)
    while tail < source_bytes and _is_continuation(byte_at(tail)):
        tail += 1
    return CapPlan(source_bytes, head, tail, mark)


def cap_text(
    data: bytes,
    *,
    cap: int = DEFAULT_CAP_BYTES,
    archive_ref: str,
    source: str = "result_text",
    completeness: str = "unknown",
) -> bytes:
    """Cap one UTF-8 byte string (head + marker + tail), or return it unchanged."""
    plan = plan_cap(
        len(data), data.__getitem__, cap=cap, archive_ref=archive_ref, source=source, completeness=completeness
    )
    if plan is None:
        return data
    return data[: plan.head] + plan.marker + data[plan.tail :]


def cap_blocks(
    blocks: Sequence[dict],
    *,
    cap: int = DEFAULT_CAP_BYTES,
    archive_ref: str,
    source: str = "result_text",
    completeness: str = "unknown",
) -> list[dict] | None:
    """Cap a list of content blocks; return new blocks, or None when nothing changes.

    Text blocks are `{"type": "text", "text": str}`; every other block (images)
    is kept in place and not counted. A text block whose whole text falls in the
    omitted middle disappears; the marker is added to the block that holds the
    first omitted byte.
    """
    encoded: list[bytes | None] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            encoded.append(block["text"].encode("utf-8"))
        else:
            encoded.append(None)
    joined = b"".join(part for part in encoded if part is not None)
    plan = plan_cap(
        len(joined), joined.__getitem__, cap=cap, archive_ref=archive_ref, source=source, completeness=completeness
    )
    if plan is None:
        return None
    out: list[dict] = []
    offset = 0
    marker_placed = False
    for block, part in zip(blocks, encoded):
        if part is None:
            out.append(block)
            continue
        start, end = offset, offset + len(part)
        offset = end
        pieces = []
        if start < plan.head:
            pieces.append(part[: min(end, plan.head) - start])
        if not marker_placed and start <= plan.head < end:
            pieces.append(plan.marker)
            marker_placed = True
        if end > plan.tail:
            pieces.append(part[max(start, plan.tail) - start :])
        if pieces:
            new_block = dict(block)
            new_block["text"] = b"".join(pieces).decode("utf-8")
            out.append(new_block)
    if not marker_placed:  # head == len(joined) cannot happen over the cap; kept for safety
        out.append({"type": "text", "text": plan.marker.decode("utf-8")})
    return out


class _FileBytes:
    """Random access to single bytes of several files taken as one joined text."""

    def __init__(self, handles, sizes) -> None:
        self.handles = handles
        self.sizes = sizes

    def locate(self, position: int) -> tuple[int, int]:
        for number, size in enumerate(self.sizes):
            if position < size:
                return number, position
            position -= size
        raise IndexError(position)

    def __call__(self, position: int) -> int:
        number, local = self.locate(position)
        handle = self.handles[number]
        handle.seek(local)
        return handle.read(1)[0]


def cap_files(
    paths: Sequence[str],
    *,
    cap: int = DEFAULT_CAP_BYTES,
    archive_ref: str,
    source: str = "stdout",
    completeness: str = "complete",
) -> list[bytes] | None:
    """Cap the joined contents of `paths` (e.g. pruned stdout then stderr).

    Returns one byte string per path (what to emit on that path's stream, the
    marker inside the part holding the first omitted byte), or None when the
    joined size is at or under the cap and the files should be emitted as they
    are. Reads only the kept bytes: memory is bounded by the cap.
    """
    handles = [open(path, "rb") for path in paths]
    try:
        sizes = [os.fstat(handle.fileno()).st_size for handle in handles]
        total = sum(sizes)
        reader = _FileBytes(handles, sizes)
        plan = plan_cap(total, reader, cap=cap, archive_ref=archive_ref, source=source, completeness=completeness)
        if plan is None:
            return None
        out: list[bytes] = []
        offset = 0
        marker_placed = False
        for handle, size in zip(handles, sizes):
            start, end = offset, offset + size
            offset = end
            pieces = []
            if start < plan.head:
                handle.seek(0)
                pieces.append(handle.read(min(end, plan.head) - start))
            if not marker_placed and start <= plan.head < end:
                pieces.append(plan.marker)
                marker_placed = True
            if end > plan.tail:
                local = max(start, plan.tail) - start
                handle.seek(local)
                pieces.append(handle.read(size - local))
            out.append(b"".join(pieces))
        return out
    finally:
        for handle in handles:
            handle.close()
