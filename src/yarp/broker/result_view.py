"""The view an adapter asks for with `result_text`'s `capBytes`, sent back with the acknowledgement.

An extension adapter (TypeScript in the agent's own process) makes its
operations itself: it cannot hand a hook event to the broker and take YARP's
view back as a command hook does (`yarp.broker.services.hooks`). So the operation that makes a
result's exact text durable, `result_text`, may name the cap (`capBytes`),
and the broker answers with the view of that text under it, made by the same
function the hooks use for a host's text (`yarp.view.host.text_view`, source
`result_text`) with the call's archive reference as the commit found it:
every adapter shows the one view, kept in one place.

The view is made after the commit. The writer leaves such a request's
`Outcome` to `answer` instead of encoding its reply (`wants_view`); `answer`
makes the view on the loop when the text is small, else in the preparation
pool where the broker does its other CPU work, then sends the acknowledgement
with `view` (absent when the text fits the cap). A view that fails, or is not
made `VIEW_DEADLINE_MARGIN_S` before the request's deadline, is left out: the
text is durable all the same and the acknowledgement says so, and the
adapter shows the result as the tool made it.
"""

from __future__ import annotations

import functools
import time

from yarp.archive.prepare import Prepared
from yarp.limits import VIEW_DEADLINE_MARGIN_S
from yarp.wire import operations as ops
from yarp.wire import protocol


def wants_view(prepared) -> bool:
    """Whether a committed request's reply carries a view: a `result_text` that names a cap."""
    return type(prepared) is Prepared and type(prepared.operation) is ops.ResultText and bool(
        prepared.operation.cap_bytes)


def view_text(text: str, cap: int, archive_ref: str, completeness: str) -> str | None:
    """The view of `text` under `cap` with its recovery marker naming `archive_ref`, or None when it fits."""
    if len(text) * 4 <= cap:
        return None  # fits whatever its characters' UTF-8 widths
    from yarp.view.host import text_view

    view = text_view(text.encode("utf-8"), cap=cap, archive_ref=archive_ref, source="result_text",
                     completeness=completeness)
    return None if view is None else view.decode("utf-8", "replace")


def answer(broker, request, outcome) -> None:
    """Make the view of a committed `result_text` (`wants_view`), then send its acknowledgement."""
    op = request.prepared.operation
    job = functools.partial(view_text, op.text, op.cap_bytes, outcome.archive_ref, op.source_completeness)
    if broker.runs_inline(len(op.text)):
        try:
            view = job()
        except Exception as exc:  # the text is durable: acknowledged without a view
            broker.fault(exc, request)
            view = None
        _send(broker, request, outcome, view)
        return
    future = broker.in_pool(job)
    future.add_done_callback(functools.partial(_made, broker, request, outcome))
    left = request.deadline - time.monotonic() - VIEW_DEADLINE_MARGIN_S
    request.timer = broker.loop.call_later(max(0.0, left), _send, broker, request, outcome, None)


def _made(broker, request, outcome, future) -> None:
    if request.settled:
        return  # acknowledged without it at the deadline
    try:
        view = future.result()
    except Exception as exc:
        broker.fault(exc, request)
        view = None
    _send(broker, request, outcome, view)


def _send(broker, request, outcome, view: str | None) -> None:
    if request.timer is not None:
        request.timer.cancel()
        request.timer = None
    extra = {"view": view} if view is not None else None
    broker.finish(request, protocol.reply_ok(outcome.archive_ref, extra=extra))
