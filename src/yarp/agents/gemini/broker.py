"""Gemini CLI's hook events in the broker (layer `broker`): the call's derived identity, the rewrite, the view.

`yarp hook gemini` forwards each `BeforeTool` and `AfterTool` event; here
(`yarp.agents.gemini.hooks` translated the event):

* **`BeforeTool`**: the call's id is derived (its tool, its arguments' digest,
  and how many calls of the session already have both, counted in the
  archive under a per-session lock, so that two events of one session never
  count the same calls); a shell command `yarp plan` would wrap is rewritten
  to `yarp run` with that id in its `--archive-call` flag; the `begin_call` is
  committed before the answer hands Gemini the rewritten arguments.
* **`AfterTool`**: the call is the one the rewritten command names, else the
  session's oldest open call with the arguments' digest. Its raw response is
  `result/before`. A wrapped command's output is `yarp run`'s view already.
  Any other response whose text is over the cap (and not a recovery
  command's) is stored exact as `result_text/before`, its capped view with
  the `yr_` marker becomes `result/after`, and the answer has Gemini read
  that view through a tail call of `read_file` on a file this service writes
  in Gemini's project temp folder (`…/tmp/<project>/yarp-views/<ref>.txt`,
  0600 in 0700, the newest `MAX_VIEW_FILES` kept).
* A tail call's own events (the read of a view) are ours and not archived.

An archive failure answers an error and the hook leaves Gemini's own result.
"""

from __future__ import annotations

import os

import orjson

from yarp import private_files
from yarp.agents.gemini import hooks as gemini
from yarp.broker.services.begin import begin_event
from yarp.broker.services.shared import CallState, SessionLocks, now_ms, prepare_composite, ran_recovery
from yarp.hooks import capture
from yarp.hooks.events import HookEvent, session_of
from yarp.wire import operations as ops
from yarp.wire import protocol

#: Sessions whose lock is kept (an idle one beyond this is dropped: a lock guards only counting and begin).
MAX_SESSION_LOCKS = 512
#: View files kept in one project's folder of views; the oldest go first.
MAX_VIEW_FILES = 256
#: Text in an output Gemini cut at its process buffer (16 MB) before the hook saw it.
_GEMINI_CUT = "[GEMINI_CLI_WARNING: Output truncated"


class Service:
    """Gemini CLI hook events: `BeforeTool`'s derived id, rewrite and begin; `AfterTool`'s finish and view."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm
        self._lock = SessionLocks(MAX_SESSION_LOCKS)

    async def serve(self, request, hook: protocol.HookRequest, event: gemini.GeminiEvent) -> bytes:
        """Answer one Gemini CLI event (`hooks.parse_event`'s)."""
        if event.is_tail_call:
            return protocol.reply_ok()
        async with self._lock(event.session_id):
            if event.event == gemini.BEFORE:
                return await self._before(request, hook, event)
            return await self._after(request, hook, event)

    # --- BeforeTool -----------------------------------------------------------------------

    def _hook_event(self, event: gemini.GeminiEvent, call_id: str, tool_input=None) -> HookEvent:
        return HookEvent(gemini.AGENT, event.event, event.session_id, call_id, event.tool_name,
                         event.tool_input if tool_input is None else tool_input, event.cwd, None, event.response)

    async def _before(self, request, hook: protocol.HookRequest, event: gemini.GeminiEvent) -> bytes:
        prefix = gemini.call_prefix(event.tool_name, event.tool_input)
        session = ops.Session(gemini.AGENT, self.warm.account, event.session_id)
        call = self._hook_event(event, gemini.call_id(prefix, self.warm.calls_with_prefix(session, prefix)))
        return await begin_event(self.broker, self.warm, request, hook, call)

    # --- AfterTool ------------------------------------------------------------------------

    def _finishing(self, event: gemini.GeminiEvent) -> tuple[HookEvent, CallState] | None:
        """The open call this event finishes, with its state, or None (never begun, or finished)."""
        account = self.warm.account
        session = ops.Session(gemini.AGENT, account, event.session_id)
        named = gemini.rewritten_call(event.tool_input)
        if named is not None:
            candidates = [named[0]]
        else:
            prefix = gemini.call_prefix(event.tool_name, event.tool_input)
            open_calls = self.warm.session_calls(session, None)
            candidates = sorted((c for c, (status, _) in open_calls.items()
                                 if c.startswith(prefix) and status == "started"),
                                key=lambda c: int(c.rsplit(":", 1)[1]))
        for call_id in candidates:
            call = self._hook_event(event, call_id)
            key = ops.source_key(ops.ResultBefore(session_of(call, account), call_id, None, 0))
            state = self.warm.calls.get(key)
            if state is None:
                stored = self.warm.stored_call(session, call_id)
                if stored is None or stored[1] != "started":
                    continue
                state = CallState(stored[0], capture.wrapper_flags(call, account), stored[2])
            return call, state
        return None

    async def _after(self, request, hook: protocol.HookRequest, event: gemini.GeminiEvent) -> bytes:
        found = self._finishing(event)
        if found is None:
            return protocol.reply_ok()  # never begun (initial capture failed) or already finished
        call, state = found
        account, now = self.warm.account, now_ms()
        session = session_of(call, account)
        raw, error = event.response, gemini.is_error(event)
        operations = [ops.ResultBefore(session, call.call_id, raw, now)]
        view_path = None
        if state.requires_streams:
            if not capture.ran_wrapped(call, state.wrapper_flags or ""):
                # Gemini ran the original command, not our wrapper: no streams exist.
                operations.append(ops.FinishCall(session, call.call_id, raw, error, False, now))
            else:  # `yarp run`'s view is what the model got
                operations += [ops.StageResult(session, call.call_id, raw, error, now),
                               ops.FinishCall(session, call.call_id, raw, error, True, now)]
        else:
            shown, text, view_path = await self._view(hook, event, state.archive_ref)
            if text is not None:
                completeness = "incomplete" if _GEMINI_CUT in text else "complete"
                operations.append(ops.ResultText(session, call.call_id, text, completeness, now))
            operations += [ops.StageResult(session, call.call_id, shown, error, now),
                           ops.FinishCall(session, call.call_id, shown, error, True, now)]
        operations = tuple(operations)
        prepared = await prepare_composite(self.broker, request, operations)
        await self.broker.submit_prepared(request, operations, prepared, hook.deadline_ms)
        self.warm.forget(ops.source_key(operations[0]))
        if view_path is None:
            return protocol.reply_ok()
        return protocol.reply_ok(extra={"answer": orjson.dumps(gemini.view_answer(view_path)).decode()})

    async def _view(self, hook: protocol.HookRequest, event: gemini.GeminiEvent, archive_ref: str | None):
        """(the result the model is shown, the exact text a cap removes from, the view file) — the
        raw response and Nones when nothing is capped."""
        text = gemini.response_text(event.response)
        folder = gemini.view_folder(event.transcript_path)
        data = text.encode("utf-8", "surrogatepass") if text is not None else b""
        if (text is None or not hook.cap_bytes or len(data) <= hook.cap_bytes or archive_ref is None
                or folder is None or ran_recovery(event)):
            return event.response, None, None
        from functools import partial

        from yarp.view.cap import cap_text

        capped = await self.broker.work(len(data), partial(cap_text, data, cap=hook.cap_bytes, archive_ref=archive_ref,
                                                           source="result_text", completeness="complete"))
        view = capped.decode("utf-8", "replace")
        try:
            path = write_view(folder, archive_ref, capped)
        except (OSError, private_files.PrivatePathProblem):
            return event.response, None, None  # no view file: Gemini's own result stands
        return {**event.response, "llmContent": view}, text, path


def write_view(folder: str, archive_ref: str, data: bytes) -> str:
    """Write a view for Gemini's tail call to read: `folder/<ref>.txt` (0600; the folder 0700, made in
    Gemini's project temp folder, which must be a real folder of ours). Keeps the newest `MAX_VIEW_FILES`."""
    project = os.path.dirname(folder)
    st = os.lstat(project)
    problem = private_files.problem_of(st, directory=True, private=False)
    if problem is not None:
        raise private_files.PrivatePathProblem(problem)
    private_files.ensure_private_directory(folder, create=True, narrow=False, parents=False)
    path = os.path.join(folder, f"{archive_ref}.txt")
    private_files.replace_atomically(path, data)
    _prune_views(folder)
    return path


def _prune_views(folder: str) -> None:
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".txt") and e.is_file(follow_symlinks=False)]
    except OSError:
        return
    if len(entries) <= MAX_VIEW_FILES:
        return
    for entry in sorted(entries, key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns)[:-MAX_VIEW_FILES]:
        try:
            os.unlink(entry.path)
        except OSError:
            pass
