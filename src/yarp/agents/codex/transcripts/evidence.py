"""What a Codex session transcript proves about one call: the one reader of its records.

Codex calls reach the archive two ways, both from the session transcript
(`$CODEX_HOME/sessions/…/rollout-….jsonl`): live, through the broker's Codex
hook service (`yarp.agents.codex.broker`), which reads the transcript on
every hook event, and later through `yarp import` (`yarp.agents.codex.transcripts`).
Each reads the file its own way — the broker scans only the lines that name
its open calls, from where it last stopped; the importer reads every line
once, in order — and hands every record it finds here. What a record means,
what a call's records prove together and how the call is then archived are
decided in this module alone, so that a call gets the same rows whichever way
it came.

The records (`record_evidence`; `item_evidence` and `event_evidence` take a
line's payload, or a bare-era line itself):

- `response_item` / `function_call`: the model's own call, its tool name and
  its JSON arguments string;
- `response_item` / `function_call_output`: the text the model got (a string,
  or content items joined without separators);
- `event_msg` / `item_completed` of a `CommandExecution` (`id` = the call id):
  the execution, with `aggregated_output`, `exit_code` and `status`. Codex
  keeps at most 64 KiB of the output, cut in the middle with
  `PERSISTENCE_CUT`;
- `event_msg` / `exec_command_end` (`call_id`), the older form of the
  execution. Codex persisted at most 10,000 bytes of its output, cut in the
  middle with `…N chars truncated…`.

The later record of a kind supersedes the earlier one. An execution without
an output, or `declined` (refused: the command never ran), is no execution.

What they prove (`CallEvidence`):

- **executed**: the transcript holds the command's execution, or the output
  the model got states its exit code (`Process exited with code N`, `Exit
  code: N`, JSON `metadata.exit_code`: Codex writes one only for a command
  that ran, and older transcripts hold no execution records);
- **is_error**: not executed; else an exit code other than 0 (the
  execution's, else the one the output states); with no exit code known, the
  execution's `status`: `completed` is not an error, `failed`, any other
  status or none is;
- **settled** (the outcome is final): the model got its output, and the
  command ran or is not still running (`Process running with session ID …`:
  its execution is written when it ends);
- **the output** (`CallEvidence.stored_output`): a complete one is the exact
  `source_output/before`; one Codex cut is `result_text/before`,
  `incomplete`, never passed off as the exact output;
- **the result** (`result_record`): `{"exit_code", "status", "output"}`,
  with the text Codex produced for the model.

Tools that are not commands (patches, MCP tools, searches) have no execution
records: their outcome is their output as the transcript holds it
(`tool_is_error`).

This module never imports `yarp.broker`: the broker imports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from yarp.agents.codex import TOOL_CLASSES

#: What Codex puts in the middle of an output it cut to 64 KiB before writing a `CommandExecution`.
PERSISTENCE_CUT = "\n... command output truncated for persistence ...\n"
#: Codex's answer when a command is still running at `yield_time_ms`.
RUNNING_PREFIX = "Process running with session ID"
#: The two forms of a command's execution in a transcript.
ITEM_COMPLETED, EXEC_COMMAND_END = "item_completed", "exec_command_end"
#: The model's names for Codex's shell tools (`local_shell` is a `local_shell_call`; the record's
#: `TOOL_CLASSES`): their outcome is what the transcript proves of the command.
SHELL_TOOLS = frozenset(tool for tool, kind in TOOL_CLASSES.items() if kind == "shell")
#: The marker of an `exec_command_end` output Codex cut to 10,000 bytes before persisting it.
_END_CUT = re.compile(r"…\d+ (?:chars|tokens) truncated…")
_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")
#: How far into an output its header (the exit code, `Output:`) is looked for.
_HEADER_CHARS = 512


def output_text(value: Any) -> str | None:
    """The text of a tool output as the transcript holds it: a string, or its content items' text joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content items
        return "".join(part.get("text", "") for part in value if isinstance(part, dict)
                       and isinstance(part.get("text"), str))
    return None


def reported_exit_code(output: Any) -> int | None:
    """The exit code a tool output states in its own header, else None.

    The header is what comes before `Output:` (unified exec: `Process exited
    with code N`; the older shell tool: `Exit code: N`), or the `metadata` of
    a JSON output; a number further down is part of the command's output.
    """
    if not isinstance(output, str):
        return None
    at = output.find("\nOutput:", 0, _HEADER_CHARS + 8)
    match = _EXIT.search(output, 0, at if at != -1 else _HEADER_CHARS)
    if match:
        return int(match.group(1))
    if output.startswith("{") and '"exit_code"' in output[:65536]:
        try:
            meta = orjson.loads(output).get("metadata")
        except (orjson.JSONDecodeError, AttributeError):
            return None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    return None


@dataclass(frozen=True, slots=True)
class CallEvidence:
    """What the transcript proves about one call.

    `output`/`exit_code`/`status` come from the command's execution (None
    when there is none), `form` says which record it was; `model_output` is
    the text of the `function_call_output` the model received (None when not
    yet written); `tool_name`/`arguments` are the model's own `function_call`
    (for example `exec_command` with its JSON arguments string).
    """

    call_id: str
    output: str | None = None
    exit_code: int | None = None
    status: str | None = None
    model_output: str | None = None
    tool_name: str | None = None
    arguments: str | None = None
    form: str = ITEM_COMPLETED

    @property
    def recorded(self) -> bool:
        """Whether the transcript holds the command's execution record (its output and exit code)."""
        return self.output is not None

    @property
    def code(self) -> int | None:
        """The exit code the transcript proves: the execution's, else the one the model's output states."""
        return self.exit_code if self.exit_code is not None else reported_exit_code(self.model_output)

    @property
    def executed(self) -> bool:
        """Whether the command ran: its execution is recorded, or the output the model got states its exit code."""
        return self.output is not None or reported_exit_code(self.model_output) is not None

    @property
    def complete(self) -> bool:
        """Whether `output` is the whole output: Codex cuts what it persists (module docstring)."""
        if self.output is None:
            return False
        if self.form == EXEC_COMMAND_END:
            return _END_CUT.search(self.output) is None
        return PERSISTENCE_CUT not in self.output

    @property
    def running(self) -> bool:
        """Codex answered "still running" and no execution has completed since."""
        if self.model_output is None or self.executed:
            return False
        header = self.model_output.split("\nOutput:", 1)[0]
        return any(line.startswith(RUNNING_PREFIX) for line in header.splitlines())

    @property
    def settled(self) -> bool:
        """Whether the call's outcome is final, for a call no post event finishes.

        Codex writes the tool output it gives the model after the post hook ran,
        so requiring it never races a post hook still at work; then the call
        either ran to its end or got an answer without running.
        """
        return self.model_output is not None and (self.executed or not self.running)

    @property
    def is_error(self) -> bool:
        """Not executed; else a non-zero exit code; with none known, a status other than `completed`."""
        if not self.executed:
            return True
        code = self.code
        if code is not None:
            return code != 0
        return self.status != "completed"

    def stored_output(self) -> tuple[str, str, str] | None:
        """(subject, completeness, text) under which the command's output is archived, or None without one.

        A complete output is the source output, exactly. One Codex cut for
        persistence is only a text of the result, with the cut in it: stored
        as `result_text`, `incomplete`, never passed off as the exact output.
        """
        if self.output is None:
            return None
        subject, completeness = output_source(self)
        return subject, completeness, self.output


def output_source(evidence: CallEvidence) -> tuple[str, str]:
    """(subject, completeness) under which the transcript's output is archived and named in a view's marker."""
    return ("source_output", "complete") if evidence.complete else ("result_text", "incomplete")


def result_record(evidence: CallEvidence, shown: str | None) -> dict:
    """`result/before`: the exit code and status the transcript proves, with the text Codex
    produced for the model (`shown`: the post event's `tool_response` live, else the tool
    output in the transcript)."""
    return {"exit_code": evidence.code, "status": evidence.status, "output": shown}


def source_bytes(evidence: CallEvidence) -> bytes:
    """The complete output as stored in `source_output/before`."""
    return (evidence.output or "").encode("utf-8", "surrogatepass")


def is_command(tool_name: str | None, evidence: CallEvidence) -> bool:
    """Whether a call's outcome is the command's (`CallEvidence`): a shell tool, or any call with an execution."""
    return tool_name in SHELL_TOOLS or evidence.recorded


def tool_is_error(output: Any) -> bool:
    """`is_error` of a tool that is not a command: a non-zero exit code its output states, else not an error."""
    return reported_exit_code(output) not in (None, 0)


# --- the records ----------------------------------------------------------------------


def record_evidence(record: Any) -> tuple[str, dict] | None:
    """(call id, `CallEvidence` fields) one decoded transcript line holds, or None (the module docstring's records)."""
    if not isinstance(record, dict):
        return None
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return None
    kind = record.get("type")
    if kind == "event_msg":
        return event_evidence(payload)
    if kind == "response_item":
        return item_evidence(payload)
    return None


def item_evidence(item: dict) -> tuple[str, dict] | None:
    """(call id, fields) of a response item: the model's call, or the output it got."""
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        return None
    kind = item.get("type")
    if kind == "function_call_output":
        text = output_text(item.get("output"))
        return (call_id, {"model_output": text}) if text is not None else None
    if kind == "function_call" and isinstance(item.get("name"), str) and isinstance(item.get("arguments"), str):
        return call_id, {"tool_name": item["name"], "arguments": item["arguments"]}
    return None


def event_evidence(payload: dict) -> tuple[str, dict] | None:
    """(call id, fields) of an event message: a command's execution, in either form."""
    kind = payload.get("type")
    if kind == "item_completed":
        item = payload.get("item")
        if isinstance(item, dict) and item.get("type") == "CommandExecution":
            return _execution(item.get("id"), item, ITEM_COMPLETED)
    elif kind == "exec_command_end":
        return _execution(payload.get("call_id"), payload, EXEC_COMMAND_END)
    return None


def _execution(call_id: Any, record: dict, form: str) -> tuple[str, dict] | None:
    output = record.get("aggregated_output")
    status = record.get("status") if isinstance(record.get("status"), str) else None
    if not isinstance(call_id, str) or not isinstance(output, str) or status == "declined":
        return None
    code = record.get("exit_code")
    return call_id, {"output": output, "exit_code": code if isinstance(code, int) and not isinstance(code, bool)
                     else None, "status": status, "form": form}
