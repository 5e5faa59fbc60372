"""The view of a result the agent's host produced, for a host that lets an adapter replace it.

Pure functions over bytes: no archive, no broker. The agent's own part finds
the text a tool's result shows the model and how to put a view in its place,
keeping the result's own shape; these make the view:

* a shell result (`shell_view`): the reduce rule chosen by the argv of the
  command whose output reaches the result, then the global cap, exactly as
  `yarp run` views a wrapped command's streams (`yarp.view.visible`), over
  the complete output when the host saved one (`source_output`) or the text
  it showed (`result_text`);
* any other text (`text_view`): the global cap.
* a file's text the host shows with line numbers (`head_view`): the host
  numbers the lines it shows from the first line read, so a view that left out lines in the middle would
  number every later line wrongly; this one keeps the lines from the top
  that fit and ends with the marker naming the rest.

Each view is None when it would change nothing. Every marker names the
call's reference and the recovery source, which the caller commits before
it shows the view.
"""

from __future__ import annotations

import os
import tempfile

def text_view(data: bytes, *, cap: int, archive_ref: str, source: str, completeness: str) -> bytes | None:
    """The global cap of `data`, or None when it fits."""
    if cap <= 0 or len(data) <= cap:
        return None
    from yarp.view.cap import cap_text

    return cap_text(data, cap=cap, archive_ref=archive_ref, source=source, completeness=completeness)


def head_view(data: bytes, *, cap: int, archive_ref: str, source: str, completeness: str) -> bytes | None:
    """The lines of `data` from the top that fit under `cap` with the marker naming the rest, or None when
    it fits. A line too long for the view ends it."""
    if cap <= 0 or len(data) <= cap:
        return None
    from yarp.view.markers import marker

    lines = data.splitlines(keepends=True)
    total = len(lines)

    def tail(kept: int) -> bytes:
        main = marker(len(data), cap, archive_ref, source, completeness, ".").lstrip("\n")
        return (main + f"[yarp: omitted {total - kept} line(s); {source} {kept + 1}:{total}]\n").encode()

    budget = cap - len(tail(0)) - 2 * len(str(total))  # the numbers of the final marker at their longest
    kept = used = 0
    while kept < total and used + len(lines[kept]) <= budget:
        used += len(lines[kept])
        kept += 1
    view = b"".join(lines[:kept])
    if view and not view.endswith(b"\n"):
        view += b"\n"
    return view + tail(kept)


def shell_view(data: bytes, *, rule, cap: int, archive_ref: str, source: str, completeness: str) -> bytes | None:
    """A shell output's view: `rule`'s reduction (None: none), then the global cap; None when unchanged.

    The reducer and the cap work on files in bounded memory (`yarp.view.reducers`,
    `yarp.view.cap.cap_files`); the output is written to a private temporary
    folder for them only when a rule applies.
    """
    if rule is None:
        return text_view(data, cap=cap, archive_ref=archive_ref, source=source, completeness=completeness)
    from yarp.view.reducers import reduce_stream

    with tempfile.TemporaryDirectory(prefix="yarp-view-") as folder:
        before, after = os.path.join(folder, "before"), os.path.join(folder, "after")
        fd = os.open(before, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        reduced = reduce_stream(rule, 0, before, after, ref=archive_ref, stream_name=source)
        if not reduced.reduced:
            return text_view(data, cap=cap, archive_ref=archive_ref, source=source, completeness=completeness)
        if cap > 0 and os.path.getsize(after) > cap:
            from yarp.view.cap import cap_files

            capped = cap_files([after], cap=cap, archive_ref=archive_ref, source=source, completeness=completeness,
                               names=(source,), markers=(reduced.markers,))
            if capped is not None:
                return capped[0]
        with open(after, "rb") as view:
            return view.read()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
