"""Qwen Code's hook events in the broker (layer `broker`): the call begun before the tool, its view after it.

`yarp hook qwen-code` forwards each event; here (`yarp.agents.qwen_code.hooks`
translated it):

* **`PreToolUse`** is one `begin_call` (`yarp.broker.services.begin.begin_event`)
  and no answer: Qwen Code 0.24.4 drops a rewritten input, so no command is
  wrapped (the record's `SHELL_TOOLS` is empty) and its output is never seen
  as raw streams.
* **`PostToolUse`** is one composite request: the raw result
  (`tool_response`, `{llmContent, returnDisplay}`) as `result/before`, with the
  whole output Qwen Code saved for a large result (`saved_output`: the file
  its cut text names) read under the approved-source rules (`read_saved`) and
  stored as `source_output/before`; then the visible result and the finish.
  When a file was saved, or the text the model would get is over the cap,
  the model is shown YARP's view of the whole text (`qwen_view`: the reduce
  rule of the command, then the cap, with the call's `yr_` marker) and the
  answer is `{"continue": false, "stopReason": view}`, which Qwen Code hands
  the model as the tool's whole result; the visible result is
  `{"llmContent": view}`, and the text a view was cut from, when no file held
  it, is `result_text/before`.
* **`PostToolUseFailure`** (a command that exits non-zero, a tool that threw)
  is archived the same way, the saved file included, but shown as Qwen Code
  made it: the failure event takes no replacement.

A `yarp search` or `yarp read` the model runs is never capped again. An
archive failure is an error reply, and the hook leaves Qwen Code's result as
it was.
"""

from __future__ import annotations

import os
import re
import stat

import orjson

from yarp import private_files
from yarp.agents.qwen_code import hooks as qwen
from yarp.broker.services.begin import begin_event, begun_state
from yarp.broker.services.shared import now_ms, prepare_composite
from yarp.errors import YarpError
from yarp.hooks.events import HookEvent, session_of
from yarp.limits import MAX_CAP_BYTES, MAX_STREAM_FILE_BYTES
from yarp.wire import operations as ops
from yarp.wire import protocol

#: The name Qwen Code gives a saved output: `<tool>_<12 hex>.output`, in `<runtime>/tmp/<sha256 of the project>/`.
_SAVED_NAME = re.compile(r"\A[a-z_]+_[0-9a-f]{12}\.output\Z")
_PROJECT_HASH = re.compile(r"\A[0-9a-f]{64}\Z")
#: Qwen Code's notice when a command's output passed what it captures (64 MiB by default).
_CAPTURE_LIMIT = "[Output exceeded the maximum captured size of "


class Service:
    """Qwen Code's events: the begin before the tool, the composite finish and the view after it."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm

    async def serve(self, request, hook: protocol.HookRequest, event: HookEvent) -> bytes:
        """Answer one Qwen Code event (`hooks.parse_event`'s)."""
        if event.before:
            return await begin_event(self.broker, self.warm, request, hook, event)
        found = begun_state(self.warm, event)
        if found is None:
            return protocol.reply_ok()  # never begun (initial capture failed), or finished already
        key, _ = found
        text = qwen.model_text(event)
        saved = qwen.saved_output(text)
        cap = hook.cap_bytes if isinstance(hook.cap_bytes, int) and 0 < hook.cap_bytes <= MAX_CAP_BYTES else 0
        viewing = (not event.is_failure and text is not None and cap > 0 and hook.pruning
                   and found[1].archive_ref is not None and not qwen.ran_recovery(event)
                   and (saved is not None or len(text.encode("utf-8", "surrogatepass")) > cap))
        view = None
        if saved is not None or viewing:
            rule = self.warm.rule_for(qwen.shell_command(event), hook.rule_packs) if viewing else None
            size = _size(saved) + (len(text) if text is not None else 0)
            try:
                view = await self.broker.work(size, qwen_view, event, text, saved, rule, cap if viewing else 0,
                                              found[1].archive_ref)
            except (OSError, ValueError, YarpError):
                view = None  # the result stands as Qwen Code made it, archived raw
        await self._finish(request, hook, event, key, view)
        if view is None or view.shown is None:
            return protocol.reply_ok()
        return protocol.reply_ok(extra={"answer": orjson.dumps(qwen.view_answer(view.shown["llmContent"])).decode()})

    async def _finish(self, request, hook: protocol.HookRequest, event: HookEvent, key: str, view) -> None:
        """Commit the raw result (with the saved output), the text a view was cut from, the visible result
        and the finish as one composite request, then forget the call."""
        account, now = self.warm.account, now_ms()
        session = session_of(event, account)
        error = qwen.is_error(event)
        shown = view.shown if view is not None and view.shown is not None else event.response
        operations = [ops.ResultBefore(session, event.call_id, event.response, now)]
        if view is not None and view.text is not None:
            operations.append(ops.ResultText(session, event.call_id, view.text, view.completeness, now))
        operations += [ops.StageResult(session, event.call_id, shown, error, now),
                       ops.FinishCall(session, event.call_id, shown, error, True, now)]
        operations = tuple(operations)
        sources = {0: view.source} if view is not None and view.source is not None else None
        prepared = await prepare_composite(self.broker, request, operations, sources=sources)
        await self.broker.submit_prepared(request, operations, prepared, hook.deadline_ms)
        self.warm.forget(key)


def _size(path: str | None) -> int:
    """The size of a saved output, to decide where it is read (0 when it cannot be seen)."""
    if path is None:
        return 0
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


class QwenView:
    """A Qwen Code result as archived and shown: `shown` (the visible result `{"llmContent": view}`, or None
    when the model keeps Qwen Code's own), `text` (the host text the view was cut from, stored as
    `result_text/before`, else None) with its `completeness`, and `source` (the saved output's bytes)."""

    __slots__ = ("completeness", "shown", "source", "text")

    def __init__(self, shown, text: str | None, completeness: str, source: bytes | None) -> None:
        self.shown = shown
        self.text = text
        self.completeness = completeness
        self.source = source


def qwen_view(event: HookEvent, text: str | None, saved: str | None, rule, cap: int, archive_ref: str | None
              ) -> QwenView | None:
    """Read the saved output (if named) and make the view (when `cap`); in the pool for large results.

    The view is cut from the saved output when it was read (complete, unless
    Qwen Code's own capture limit cut it), else from the text the model would
    get (complete when Qwen Code did not cut it). None when there is nothing
    to archive beyond the raw result and nothing to show.
    """
    from yarp.view.host import shell_view, text_view

    source = read_saved(saved, event.transcript_path, text) if saved is not None else None
    if cap <= 0 or text is None or archive_ref is None:
        return QwenView(None, None, "complete", source) if source is not None else None
    if source is not None:
        data, name = source, "source_output"
        completeness = "incomplete" if _CAPTURE_LIMIT.encode() in data else "complete"
    else:
        data, name = text.encode("utf-8", "surrogatepass"), "result_text"
        completeness = "incomplete" if saved is not None else "complete"
    options = {"cap": cap, "archive_ref": archive_ref, "source": name, "completeness": completeness}
    view = shell_view(data, rule=rule, **options) if qwen.shell_command(event) is not None \
        else text_view(data, **options)
    if view is None:
        if source is None:
            return None  # fits the cap: Qwen Code's own result stands
        view = source  # the whole output fits: the model gets it instead of Qwen Code's cut
    shown = {"llmContent": view.decode("utf-8", "replace")}
    return QwenView(shown, text if name == "result_text" else None, completeness, source)


def read_saved(path: str, transcript_path: object, text: str | None) -> bytes | None:
    """The bytes of the file Qwen Code saved a large result to, as an approved source output; None refused.

    Checks, each refusing the file (the result is then archived and viewed from
    the event alone): the path is Qwen Code's own, `<runtime>/tmp/<sha256 of
    the project>/<tool>_<12 hex>.output`, where `<runtime>` holds the session's
    transcript (`<runtime>/projects/<project>/chats/<session>.jsonl`); the file
    is opened without following a link; it is a regular file owned by this user
    that no one else may read or write (Qwen Code writes it 0600); it is at
    most `MAX_STREAM_FILE_BYTES`; and it begins with the lines the cut text
    shows of its head. The bytes are read once: the view and the archive use
    the same copy.
    """
    if not isinstance(transcript_path, str) or not os.path.isabs(transcript_path) or not os.path.isabs(path):
        return None
    runtime = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(transcript_path))))
    folder = os.path.dirname(path)
    if (os.path.normpath(path) != path or os.path.dirname(folder) != os.path.join(runtime, "tmp")
            or not _PROJECT_HASH.match(os.path.basename(folder)) or not _SAVED_NAME.match(os.path.basename(path))):
        return None
    try:
        fd, st = private_files.open_for_reading(path, private=True, owned=True)
    except (OSError, private_files.PrivatePathProblem):
        return None
    try:
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_STREAM_FILE_BYTES:
            return None
        data = private_files.read_bounded(fd, st.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != st.st_size or not data.startswith(qwen.saved_head(text).encode("utf-8", "surrogatepass")):
        return None
    return data
