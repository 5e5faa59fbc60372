"""Claude Code's hook events in the broker: the rewrite before the tool, the finish and the view after it.

* `PreToolUse` is one `begin_call` (`yarp.broker.services.begin.begin_event`),
  the shell command planned with the names Claude Code's shell snapshot
  defines (`shell_snapshot`). The call's state (whether it was rewritten, its
  wrapper flags, its reference) is remembered for its post event.
* `PostToolUse` / `PostToolUseFailure` is one composite request: raw result,
  visible result and finish in one savepoint and one commit
  (`finish_event`). A call the broker does not remember (it restarted, or the
  entry was dropped) has its state read from the archive read-only.
* The view (`_view`): the complete output Claude Code saved for a large Bash
  result is read (`output`) and stored with the raw result as
  `source_output/before`; a Bash, Read or Grep result over the cap (a Bash one
  after the reduce rule of its command) is shown as YARP's view
  (`yarp.view.host`), stored as the visible result, its source as
  `result_text/before` when no file held it, and answered as
  `updatedToolOutput` when the session's Claude Code takes it (2.1.121 on,
  read from the transcript). All of it here, where the rule set is loaded.
"""

from __future__ import annotations

import orjson

from yarp.broker.services.begin import begin_event, begun_state, finish_event
from yarp.broker.services.shared import CallState, ran_recovery
from yarp.errors import YarpError
from yarp.hooks import capture
from yarp.hooks.events import HookEvent
from yarp.limits import MAX_CAP_BYTES
from yarp.wire import protocol


class Service:
    """Claude Code's events: the Pre event's begin and the Post event's composite finish, with the view."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm
        #: Claude Code's version by session transcript (`_version`).
        self._versions: dict[str, tuple] = {}

    async def serve(self, request, hook: protocol.HookRequest, event: HookEvent) -> bytes:
        """Answer one Claude Code event (`hooks.parse_event`'s)."""
        if event.before:
            names, path = frozenset(), None
            if hook.pruning and event.shell_command() is not None:
                from yarp.agents.claude_code.broker.shell_snapshot import read_snapshot

                snapshot = read_snapshot(event.transcript_path)
                names, path = snapshot.names, snapshot.path
            return await begin_event(self.broker, self.warm, request, hook, event, shell_names=names,
                                     search_path=path)
        found = begun_state(self.warm, event)
        if found is None:
            return protocol.reply_ok()  # never begun, or finished already
        key, state = found
        flags = state.wrapper_flags or capture.wrapper_flags(event, self.warm.account)
        view = None
        if not event.is_failure and (not state.requires_streams or capture.ran_wrapped(event, flags)):
            view = await self._view(hook, event, state)
        await finish_event(self.broker, self.warm, request, hook, event, key, state, view=view)
        if view is None or not view.replaces:
            return protocol.reply_ok()
        from yarp.agents.claude_code.broker.output import updated_output_answer

        return protocol.reply_ok(extra={"answer": orjson.dumps(updated_output_answer(view.shown)).decode()})

    # --- Claude Code's view -----------------------------------------------------------

    def _version(self, transcript_path: str | None):
        """The Claude Code version the session's transcript names, read once per transcript."""
        if transcript_path is None:
            return None
        if transcript_path in self._versions:
            return self._versions[transcript_path]
        from yarp.agents.claude_code.broker.output import transcript_version

        version = transcript_version(transcript_path)
        if version is not None:  # an unreadable transcript is tried again at the next event
            self._versions[transcript_path] = version
            while len(self._versions) > MAX_TRANSCRIPTS:
                del self._versions[next(iter(self._versions))]
        return version

    async def _view(self, hook: protocol.HookRequest, event: HookEvent, state: CallState):
        """What a Claude Code post event's result becomes (`ClaudeView`), or None for the raw result as today.

        The complete output Claude Code saved for a large Bash result is read
        whatever the version (it is archived as `source_output/before`); the
        view replaces the result only with a cap, pruning on, a reference,
        and a Claude Code that takes `updatedToolOutput`.
        """
        from yarp.agents.claude_code.broker import output as claude_code

        response = event.response
        # A wrapped command's result is `yarp run`'s view, its exact streams archived already.
        wrapped = state.requires_streams
        persisted = claude_code.persisted_file(response) if event.tool_name == "Bash" and not wrapped else None
        cap = hook.cap_bytes if isinstance(hook.cap_bytes, int) and 0 < hook.cap_bytes <= MAX_CAP_BYTES else 0
        text = claude_code.host_text(event.tool_name, response)
        if text is not None and len(text.text) <= cap and len(text.text.encode("utf-8", "surrogatepass")) <= cap:
            text = None  # fits: the most common result costs no more than this
        elif text is not None and not _utf8(text.text):
            text = None  # a lone surrogate: no exact `result_text` can hold it, so no view is cut from it
        viewing = (text is not None and cap > 0 and hook.pruning and state.archive_ref is not None
                   and not ran_recovery(event)
                   and claude_code.takes_updated_output(self._version(event.transcript_path)))
        if persisted is None and not viewing:
            return None
        rule = (self.warm.rule_for(event.shell_command(), hook.rule_packs)
                if viewing and not wrapped and event.tool_name == "Bash" else None)
        size = persisted[1] if persisted is not None else len(text.text) if text is not None else 0
        try:
            return await self.broker.work(size, claude_view, event, text if viewing else None, persisted, rule,
                                          cap, state.archive_ref)
        except (OSError, ValueError, YarpError):
            return None  # the result stands as Claude Code made it, archived as today


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
    from yarp.agents.claude_code.broker import output as claude_code
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
