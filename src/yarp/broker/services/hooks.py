"""The broker's half of a hook event: one request in, one answer out.

`yarp hook <agent>` sends the event's bytes with a few fields of its own
(`hook`: the agent, the `yarp` launcher argv, the pruning switch and rule
packs from its configuration, the deadline). Here, in the warm broker, the
event is translated (`events`), the rewrite planned with the parser and rule
set kept loaded, the lifecycle's operations built (`capture`) and submitted
through the broker's ordinary path: ordered per source, prepared, batched and
committed by the writer. One request per event:

* `PreToolUse` is one `begin_call`. The call's state (whether it was
  rewritten, its wrapper flags, its reference) is remembered for its Post
  event (`yarp.broker.services.shared.Warm.calls`: bounded, oldest dropped first, and
  dropped when the call finishes).
* `PostToolUse` / `PostToolUseFailure` is one composite request: raw result,
  visible result and finish in one savepoint and one commit. A call the
  broker does not remember (it restarted, or the entry was dropped) has its
  state read from the archive read-only, as the hook process used to.
* Claude Code's `PostToolUse` (`_claude_view`): the complete output Claude
  Code saved for a large Bash result is read (`yarp.hooks.claude_code`) and
  stored with the raw result as `source_output/before`; a Bash, Read or Grep
  result over the cap (a Bash one after the reduce rule of its command) is
  shown as YARP's view (`yarp.view.host`), stored as the visible result, its
  source as `result_text/before` when no file held it, and answered as
  `updatedToolOutput` when the session's Claude Code takes it (2.1.121 on,
  read from the transcript). All of it here, where the rule set is loaded.

Codex events go to `yarp.broker.services.codex.service.CodexService`, which reads the call's
outcome from the session transcript the event names and commits every
operation of the event (this call's, and those of earlier calls that got no
post event) as one composite request. Claude Code's and Codex's clients
add `capBytes`, the cap of the view that replaces a large output.

The reply is `{"ok": true}` plus `answer` (the JSON text the hook prints) and
`warning` (text the hook reports once per session); an archive failure is an
ordinary error reply, and the hook then leaves the tool untouched.

Request shape (validated strictly, with every other request, by
`yarp.wire.validation.parse_request`; unknown fields fail)::

    {"schema": "yarp.archive-broker.v1", "correlationId": …,
     "hook": {"agent": "claude-code", "launcher": ["/abs/yarp"], "pruning": true, "rulePacks": [],
              "capBytes": 5120 (the agents whose view is capped)},
     "deadlineMs": 2000, "event": {… the agent's event, exactly as it arrived …}}
"""

from __future__ import annotations

import orjson

from yarp.broker.services.begin import begin_event
from yarp.broker.services.shared import CallState, now_ms, prepare_composite, ran_recovery
from yarp.errors import YarpError
from yarp.hooks import PRE, capture
from yarp.limits import MAX_CAP_BYTES
from yarp.hooks.events import parse_event, session_of
from yarp.wire import operations as ops
from yarp.wire import protocol


class HookService:
    """Hook events: the Pre event's begin and the Post event's composite finish."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm
        self._codex = None
        self._gemini = None
        #: Claude Code's version by session transcript (`_claude_version`).
        self._versions: dict[str, tuple] = {}

    def _state(self, key: str, event) -> CallState | None:
        """The begun call's state: remembered, else read from the archive; None if never begun or finished."""
        state = self.warm.calls.get(key)
        if state is not None:
            return state
        stored = self.warm.stored_call(session_of(event, self.warm.account), event.call_id)
        if stored is None or stored[1] != "started":
            return None
        return CallState(stored[0], capture.wrapper_flags(event, self.warm.account), stored[2])

    def codex(self):
        """Codex events (`codex.service.CodexService`): made on the first one."""
        if self._codex is None:
            from yarp.broker.services.codex.service import CodexService

            self._codex = CodexService(self.broker, self.warm)
        return self._codex

    def gemini(self):
        """Gemini CLI events (`gemini.GeminiService`): made on the first one."""
        if self._gemini is None:
            from yarp.broker.services.gemini import GeminiService

            self._gemini = GeminiService(self.broker, self.warm)
        return self._gemini

    def close(self) -> None:
        """Stop what the Codex service watches, if it was ever made."""
        if self._codex is not None:
            self._codex.close()

    # --- one event -------------------------------------------------------------------

    async def serve(self, request, hook: protocol.HookRequest) -> bytes:
        """Answer one validated hook request (the broker's dispatch calls this from its request path)."""
        if hook.agent == "codex":
            return await self.codex().serve(request, hook)
        if hook.agent == "gemini":
            return await self.gemini().serve(request, hook)
        try:
            event = parse_event(hook.agent, hook.event)
        except YarpError:
            event = None  # malformed: the tool runs untouched, nothing to archive
        if event is None:
            return protocol.reply_ok()
        if event.event == PRE:
            return await self._pre(request, hook, event)
        return await self._post(request, hook, event)

    async def _pre(self, request, hook: protocol.HookRequest, event) -> bytes:
        return await begin_event(self.broker, self.warm, request, hook, event)

    async def _post(self, request, hook: protocol.HookRequest, event) -> bytes:
        account = self.warm.account
        key = ops.source_key(ops.ResultBefore(session_of(event, account), event.call_id, None, 0))
        state = self._state(key, event)
        if state is None:
            # Never begun (initial capture failed, hooks installed mid-call) or already finished.
            return protocol.reply_ok()
        flags = state.wrapper_flags or capture.wrapper_flags(event, account)
        view = None
        if event.agent == "claude-code" and not event.is_failure and (
                not state.requires_streams or capture.ran_wrapped(event, flags)):
            view = await self._claude_view(hook, event, state)
        sources = None
        if view is None:
            operations = capture.finish(event, account, requires_streams=state.requires_streams, flags=flags,
                                        now_ms=now_ms())
        else:
            operations = capture.finish_viewed(event, account, view.shown, text=view.text,
                                               completeness=view.completeness, now_ms=now_ms())
            sources = {0: view.source} if view.source is not None else None
        prepared = await prepare_composite(self.broker, request, operations, sources=sources)
        await self.broker.submit_prepared(request, operations, prepared, hook.deadline_ms)
        self.warm.forget(key)
        if view is None or not view.replaces:
            return protocol.reply_ok()
        from yarp.hooks.claude_code import updated_output_answer

        return protocol.reply_ok(extra={"answer": orjson.dumps(updated_output_answer(view.shown)).decode()})

    # --- Claude Code's view -----------------------------------------------------------

    def _claude_version(self, transcript_path: str | None):
        """The Claude Code version the session's transcript names, read once per transcript."""
        if transcript_path is None:
            return None
        if transcript_path in self._versions:
            return self._versions[transcript_path]
        from yarp.hooks.claude_code import transcript_version

        version = transcript_version(transcript_path)
        if version is not None:  # an unreadable transcript is tried again at the next event
            self._versions[transcript_path] = version
            while len(self._versions) > MAX_TRANSCRIPTS:
                del self._versions[next(iter(self._versions))]
        return version

    async def _claude_view(self, hook: protocol.HookRequest, event, state: CallState):
        """What a Claude Code post event's result becomes (`ClaudeView`), or None for the raw result as today.

        The complete output Claude Code saved for a large Bash result is read
        whatever the version (it is archived as `source_output/before`); the
        view replaces the result only with a cap, pruning on, a reference,
        and a Claude Code that takes `updatedToolOutput`.
        """
        from yarp.hooks import claude_code
        from yarp.view.host import host_text

        response = event.response
        # A wrapped command's result is `yarp run`'s view, its exact streams archived already.
        wrapped = state.requires_streams
        persisted = claude_code.persisted_file(response) if event.tool_name == "Bash" and not wrapped else None
        cap = hook.cap_bytes if isinstance(hook.cap_bytes, int) and 0 < hook.cap_bytes <= MAX_CAP_BYTES else 0
        text = host_text(event.tool_name, response)
        if text is not None and len(text.text) <= cap and len(text.text.encode("utf-8", "surrogatepass")) <= cap:
            text = None  # fits: the most common result costs no more than this
        elif text is not None and not _utf8(text.text):
            text = None  # a lone surrogate: no exact `result_text` can hold it, so no view is cut from it
        viewing = (text is not None and cap > 0 and hook.pruning and state.archive_ref is not None
                   and not ran_recovery(event)
                   and claude_code.takes_updated_output(self._claude_version(event.transcript_path)))
        if persisted is None and not viewing:
            return None
        rule = self._rule(hook, event) if viewing and not wrapped and event.tool_name == "Bash" else None
        size = persisted[1] if persisted is not None else len(text.text) if text is not None else 0
        try:
            return await self.broker.work(size, claude_view, event, text if viewing else None, persisted, rule,
                                          cap, state.archive_ref)
        except (OSError, ValueError, YarpError):
            return None  # the result stands as Claude Code made it, archived as today

    def _rule(self, hook: protocol.HookRequest, event):
        """The reduce rule for the argv of the command whose output reaches the result, or None."""
        command = event.shell_command()
        if command is None:
            return None
        from yarp.view.plan import result_argv
        from yarp.view.rules import select_rule

        argv = result_argv(command)
        if not argv:
            return None
        try:
            return select_rule(argv, self.warm.rules(hook.rule_packs))
        except YarpError:
            return None  # a broken rule pack costs the pruning, never the archive


#: Transcripts whose Claude Code version is remembered (the oldest forgotten first).
MAX_TRANSCRIPTS = 256


class ClaudeView:
    """A Claude Code result as archived and shown: `shown` (the visible result), `text` (the exact
    host text a cap cut, stored as `result_text/before`, else None) with its `completeness`,
    `source` (the complete output read from Claude Code's file, else None) and whether the
    answer `replaces` the result the model is shown."""

    __slots__ = ("shown", "text", "completeness", "source", "replaces")

    def __init__(self, shown, text: str | None, completeness: str, source: bytes | None, replaces: bool) -> None:
        self.shown = shown
        self.text = text
        self.completeness = completeness
        self.source = source
        self.replaces = replaces


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def claude_view(event, text, persisted, rule, cap: int, archive_ref: str | None) -> ClaudeView | None:
    """Read the saved complete output (if any) and make the view (if `text` is given); in the pool
    for large results. A refused file leaves the result's own text as the view's source, cut."""
    from yarp.hooks import claude_code
    from yarp.view.host import head_view, shell_view, text_view

    source = None
    if persisted is not None:
        read = claude_code.read_persisted(persisted[0], persisted[1], event.transcript_path, event.session_id)
        source = read.data
    if text is None:
        return ClaudeView(event.response, None, "complete", source, False) if source is not None else None
    if source is not None:
        data, name, completeness = source, "source_output", "complete"
    else:
        data, name, completeness = text.text.encode("utf-8", "surrogatepass"), "result_text", text.completeness
    options = {"cap": cap, "archive_ref": archive_ref, "source": name, "completeness": completeness}
    if event.tool_name == "Bash":
        view = shell_view(data, rule=rule, **options)
    elif text.numbered:
        view = head_view(data, **options)
    else:
        view = text_view(data, **options)
    if view is None:
        if source is None:
            return None
        # Under the cap: Claude Code's own notice names a file it keeps; the model reads the whole output.
        view = source
    shown = text.place(view.decode("utf-8", "replace"))
    return ClaudeView(shown, text.text if name == "result_text" else None, completeness, source, True)
