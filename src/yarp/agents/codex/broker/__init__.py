"""Codex CLI hooks in the broker (layer `broker`): exact output from the session transcript, YARP's capped view.

Measured with the real Codex CLI 0.171.0 (docs/design/adapters.md, "Codex: capture from
the transcript, replace the view after the command"):

- The model's `exec_command {"cmd"}` reaches hooks as tool `Bash` with
  `{"command"}`; the hook never sees `sandbox_permissions` or `justification`.
  A rewrite needs `permissionDecision: "allow"`, which a hook cannot give
  without knowing whether the call asked to leave the sandbox, and a rewritten
  `yarp run` cannot spool inside Codex's read-only sandbox. So nothing is
  rewritten: Codex runs the command under the user's own sandbox and approvals.
  The model's own call (`function_call`, `exec_command` and its arguments) is
  in the transcript before `PreToolUse` runs; `input/before` holds it.
- `PostToolUse` carries no exit code and an output Codex already cut to about
  10 KB. The complete output and the exit code are in the session transcript
  (`transcript_path`, an `event_msg` / `item_completed` line whose `item` is a
  `CommandExecution` with `id` = the call id, `aggregated_output`, `exit_code`,
  `status`), written before the post hook runs. Codex persists at most 64 KiB
  of an output (head and tail); a cut one is archived as an incomplete
  `result_text`, never as the exact source output.
- A `PostToolUse` answer `{"decision": "block", "reason": T}` replaces the
  whole tool output the model receives with T. That is how the model gets
  YARP's capped view with its `yr_` marker; the call itself already ran.
- A call Codex refuses or that is still running at `yield_time_ms` gets no
  post event. The next hook event of the session (any `PreToolUse`,
  `PostToolUse`, `Stop` or `SessionEnd`) settles it from the transcript: a
  `CommandExecution` finishes it with its exit code; a tool output the model
  got without any execution finishes it as not executed, an error. Codex kills
  commands still running when the session ends and records them (exit code
  137) before `SessionEnd`; only a call the transcript never completes (Codex
  itself killed) stays `started`, and `yarp archive verify` lists it.

All of this runs in the warm broker (`service.Service`, reached through
`yarp.broker.services.hooks`): `yarp hook codex` is the same thin client as every
agent's (`yarp.clients.hook`) and only forwards the event's bytes with the cap and
pruning switch of its configuration; `yarp.agents.codex.hooks` decodes it. The broker reads the transcript the
event names (no-follow, bounded, a regular file owned by the broker's own
user), builds every operation of the event, and commits them as one composite
request: one savepoint and one commit per event, however many earlier calls
it settles. The broker remembers, for each call it has begun and not yet
finished, where its reading of the transcript ended (`evidence.Mark`), so each event
reads only what Codex appended since. Codex writes a command's execution to
the transcript before it starts the post hook process, so the broker watches
the transcript of each begun shell call and, as soon as the execution is
written, caps the view and prepares the payloads while that process starts;
the post event uses that work when its own reading shows the same record,
and does it itself otherwise.

What a transcript record means and what a call's records prove (executed,
is_error, complete or cut) is `yarp.agents.codex.transcripts.evidence`'s, the
reader `yarp import` uses too, so a call gets the same outcome either way.
The modules (importers use them directly; this package exports the service):

- `service`: `Service`, the broker's state between a session's events
  and the one request per event;
- `evidence`: reading the transcript for the calls an event needs — the tail
  first, each open call from its `Mark`, a block at a time, only the lines
  naming a wanted call (`read_transcript`, `read_evidence`, `read_since`);
- `outcome`: the operations that begin and finish a call, the capped view
  that replaces Codex's output and the post answer (`call_outcome`,
  `capped_view`, `Finish`, `post_answer`);
- `ahead`: the post event's work done ahead, when the transcript shows the
  execution (`WorkAhead`, `work_ahead`, `Ahead`);
- `watch`: the inotify watch that says when a transcript was written.
"""

from yarp.agents.codex.broker.service import Service

__all__ = ["Service"]
