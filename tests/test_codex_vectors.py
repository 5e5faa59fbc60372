"""Codex transcript vectors: live capture and `yarp import` archive every call with the same outcome.

Each vector (tests/vectors/codex/*.json) holds the lines of a Codex session
transcript and, per call id, what the transcript proves: whether the command
ran (`executed`), `is_error`, and whether its output is archived as the exact
complete output (`"output": "complete"`, `source_output/before`), as a text
Codex cut (`"cut"`, `result_text/before`, `incomplete`) or not at all
(`null`); `"finished": false` for a call the transcript never completes.

The same lines go through both ways a Codex call reaches the archive, each
writing real rows through the one writer (`ArchiveStore`) into an archive of
its own:

- live, in two runs of the broker's Codex service functions: each call is
  begun when its `function_call` is written (as its `PreToolUse` begins it);
  in one run every call is then settled from the transcript by the session's
  next event, in the other a call whose execution Codex wrote before the
  model's output is finished by its `PostToolUse` (as Codex runs the post
  hook then) and only the rest are settled;
- import: the Codex transcript parser over the same file, its calls prepared
  and applied as the broker applies an `import_calls` batch.

Every archive must hold the vector's outcome, and the settled live run and
the import the very same rows (their sources are the same transcript lines).
"""

from __future__ import annotations

import glob
import json
import os
import sqlite3

import pytest

from archive_factory import ArchiveFactory
from yarp.archive.codec import decode_body
from yarp.wire import operations as ops

VECTORS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "vectors", "codex", "*.json")))
ACCOUNT = "local:1000"
NOW = 1_772_359_300_000
SHOWN_BY_THE_POST_EVENT = "the tool_response of the post event"
#: What the two ways differ in by their sources alone: the times the archive got each row.
_TIMES = ("started", "finished")


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _session_id(vector: dict) -> str:
    return next(line["payload"]["id"] for line in vector["lines"] if line["type"] == "session_meta")


def _pre_event(session_id: str, transcript: str, call_id: str):
    from yarp.agents.codex.hooks import parse_event

    return parse_event({
        "session_id": session_id, "turn_id": "t1", "transcript_path": transcript, "cwd": "/home/dev/app",
        "hook_event_name": "PreToolUse", "model": "scripted-model", "permission_mode": "bypassPermissions",
        "tool_name": "Bash", "tool_input": {"command": "x"}, "tool_use_id": call_id}).call


def _apply(store, outcome) -> None:
    from yarp.broker.services.shared import prepare_parts

    sources = {0: outcome.source} if outcome.source is not None else {}  # the source belongs to result_before
    store.apply(prepare_parts(tuple(outcome.operations), sources))


def _live(vector: dict, transcript: str, archive: str, *, post_events: bool) -> None:
    """Write the transcript line by line, as Codex does, with the hook events Codex sends between lines."""
    from yarp.agents.codex.broker.evidence import read_transcript
    from yarp.agents.codex.broker.outcome import Finish, begin_operation, call_outcome

    session = ops.Session("codex", ACCOUNT, _session_id(vector))
    begun: dict[str, str] = {}
    finished: set[str] = set()
    shown: set[str] = set()
    with ArchiveFactory(archive) as factory, open(transcript, "w", encoding="utf-8") as handle:
        for line in vector["lines"]:
            handle.write(json.dumps(line) + "\n")
            handle.flush()
            payload = line.get("payload") or {}
            kind = payload.get("type")
            if kind == "function_call":
                call_id = payload["call_id"]
                reading = read_transcript(transcript, begun=call_id, pending={}, finishing=None)
                begin = begin_operation(session, _pre_event(session.source_session_id, transcript, call_id),
                                        reading.called, now_ms=NOW, deadline_at_ms=NOW + 30_000)
                begun[call_id] = factory.store.apply_operation(begin).archive_ref
            elif kind == "function_call_output":
                shown.add(payload["call_id"])
            elif post_events and kind in ("item_completed", "exec_command_end"):
                call_id = payload["item"]["id"] if kind == "item_completed" else payload["call_id"]
                if call_id in begun and call_id not in shown:  # Codex runs the post hook now
                    reading = read_transcript(transcript, begun=None, pending={}, finishing=call_id)
                    if reading.current is not None and reading.current.recorded:  # as the service's `_read`
                        finish = Finish(session, SHOWN_BY_THE_POST_EVENT, begun[call_id], 0)
                        outcome, prepared = finish.prepare(reading.current)
                        factory.store.apply(prepared)
                        finished.add(call_id)
        # The session's next event (here its `Stop`) settles every open call the transcript now proves.
        pending = {call_id: None for call_id in begun if call_id not in finished}
        reading = read_transcript(transcript, begun=None, pending=pending, finishing=None)
        for evidence in reading.settled:
            _apply(factory.store, call_outcome(session, evidence, evidence.model_output, begun[evidence.call_id],
                                               cap=0, now_ms=NOW))


def _imported(transcript: str, archive: str) -> None:
    from yarp.transcripts.batch import prepare_import_calls
    from yarp.agents.codex.transcripts import CodexParser
    from yarp.transcripts.parsing import Tally

    parser = CodexParser(transcript, ACCOUNT, Tally(), None, None)
    with open(transcript, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            parser.feed(json.loads(line), number)
    parser.end_of_read(True)
    calls = parser.take_ready()
    with ArchiveFactory(archive) as factory:
        factory.store.apply(prepare_import_calls(ops.import_calls(calls, NOW)))


def _rows(archive: str) -> dict[str, dict]:
    """Every call of the archive by call id: its flags, and each snapshot's completeness and bytes."""
    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    try:
        out = {}
        for rowid, call_id, tool, status, executed, is_error, started, finished in conn.execute(
                "SELECT id, source_call_id, tool_name, status, executed, is_error, started_at_ms, finished_at_ms"
                " FROM tool_calls"):
            snaps = {}
            for subject, stage, completeness, compression, body, length in conn.execute(
                    "SELECT s.subject, s.stage, s.source_completeness, p.compression, p.body,"
                    " p.uncompressed_byte_length FROM snapshots s JOIN payloads p ON p.sha256 = s.payload_sha256"
                    " WHERE s.tool_call_id = ?", (rowid,)):
                snaps[f"{subject}/{stage}"] = (completeness, decode_body(compression, bytes(body), length))
            out[call_id] = {"tool": tool, "status": status, "executed": executed, "is_error": is_error,
                            "started": started, "finished": finished, "snaps": snaps}
        return out
    finally:
        conn.close()


def _outcome(row: dict) -> dict:
    """The row as a vector states an outcome."""
    if row["status"] != "finished":
        return {"finished": False}
    snaps = row["snaps"]
    output = text = None
    if "source_output/before" in snaps:
        output, text = "complete", snaps["source_output/before"][1]
    elif "result_text/before" in snaps:
        completeness, text = snaps["result_text/before"]
        output = "cut" if completeness == "incomplete" else f"result_text {completeness}"
    out = {"executed": bool(row["executed"]), "is_error": bool(row["is_error"]), "output": output}
    if text is not None:
        out["text"] = text.decode("utf-8", "surrogatepass")
    return out


def _same_but_times(row: dict) -> dict:
    return {key: value for key, value in row.items() if key not in _TIMES}


def test_every_vector_names_its_calls_and_the_required_forms_are_covered():
    assert VECTORS, "tests/vectors/codex holds the vectors"
    names = {os.path.basename(path)[:-5] for path in VECTORS}
    assert {"completed-exit-0", "nonzero-exit", "persistence-cut", "no-exit-code", "answered-without-execution",
            "exec-command-end"} <= names
    for path in VECTORS:
        vector = _load(path)
        called = {line["payload"]["call_id"] for line in vector["lines"]
                  if line.get("payload", {}).get("type") == "function_call"}
        assert set(vector["calls"]) == called, path


@pytest.mark.parametrize("path", VECTORS, ids=lambda path: os.path.basename(path)[:-5])
def test_live_capture_and_import_give_the_vectors_outcome(path, tmp_path):
    vector = _load(path)
    expected = vector["calls"]
    transcript = str(tmp_path / f"rollout-2026-03-01T10-00-00-{_session_id(vector)}.jsonl")
    archives = {name: str(tmp_path / name / "tool-calls.sqlite3") for name in ("settled", "posted", "imported")}
    _live(vector, transcript, archives["settled"], post_events=False)
    os.unlink(transcript)
    _live(vector, transcript, archives["posted"], post_events=True)
    _imported(transcript, archives["imported"])
    rows = {name: _rows(archive) for name, archive in archives.items()}
    for name, found in rows.items():
        assert {call_id: _outcome(row) for call_id, row in found.items()} == expected, name
    # Live settlement and import read the same lines: the same rows.
    assert {c: _same_but_times(r) for c, r in rows["settled"].items()} == \
        {c: _same_but_times(r) for c, r in rows["imported"].items()}
