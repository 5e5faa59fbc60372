"""What the agent took back of a capped view: recoveries and re-runs, each linked to the call it follows.

A capped view saved context only if the agent did not fetch what it hid. Two
kinds of later call take it back:

- a **recovery**: a shell call that runs `yarp search`, `yarp read` or `yarp
  restore` on a reference (directly, or after `yarp run … --`), from any
  agent. It follows the call with that reference; what it returned to the
  agent is recovered.
- a **re-run**: the same command (whitespace-normalised input, same working
  directory) run again in the same session within `RERUN_WINDOW_MS` of the
  end of the nearest earlier run of it, when that earlier run's view was
  capped and no file-editing tool ran in the session between them (after
  an edit, running the tests again is the work, not a recall).

A call that follows another exists only because of that call's cap, so its
whole cost is charged: what it returned to the agent to the call it follows,
and what its own view withheld to itself (it saved nothing: without the cap
it would not have run). A follower naming several references shares its
bytes among them. A `yarp run` of a recovery that an agent's own shell call
ran is the same recovery, counted once: the agent's call, which holds what
the agent saw.

`annotate` works out, once per call, what the report needs beyond sizes: a
shell call's recovered references and re-run key, a capped view's rule, and
the host's line-limited view of a wrapped output. Its rows live in the
projection (`projection`); the report sums them (`report`).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from contextlib import suppress

from yarp.archive.codec import decode_body
from yarp.archive.savings.hosts import host_view
from yarp.archive.savings.programs import command_text, input_value, labels_of
from yarp.archive.savings.projection import ARCHIVE
from yarp.errors import DataError

#: A re-run counts within this long after the end of the capped run it repeats.
RERUN_WINDOW_MS = 10 * 60 * 1000
#: Tools that edit files (lower-cased, any agent): one between two runs makes the second a new run.
EDIT_TOOLS = frozenset({"edit", "write", "multiedit", "notebookedit", "apply_patch", "replace", "write_file",
                        "patch", "str_replace_based_edit_tool"})
#: `yarp search|read|restore … yr_…`, with any path to `yarp`; `yarp run … -- yarp search …` holds it too.
_RECOVERY = re.compile(r"(?:^|[\s;&|(`'\"])(?:[\w.~/-]*/)?yarp\s+(?:search|read|restore)\b([^\n;&|]*)")
_REF = re.compile(r"\byr_[0-9a-f]{32}\b")
#: The reducer family a wrapped call's view names on its first line; a view without one was capped.
_SUMMARY = re.compile(rb"\[yarp summary: ([a-z_]{1,32});")
CAP_RULE = "cap"


def recovered_refs(text: str, own_ref: str) -> list[str]:
    """The references `text` recovers with `yarp search|read|restore`, in order, without repeats or `own_ref`."""
    if "yarp" not in text or "yr_" not in text:
        return []
    found: list[str] = []
    for match in _RECOVERY.finditer(text):
        for ref in _REF.findall(match.group(1)):
            if ref != own_ref and ref not in found:
                found.append(ref)
    return found


def rerun_key(text: str, cwd: str | None) -> bytes:
    """The key two runs of one command share: its whitespace-normalised text and its working directory."""
    return hashlib.sha256(" ".join(text.split()).encode() + b"\0" + (cwd or "").encode()).digest()


def rule_of_view(view: bytes | None) -> str:
    """What cut a wrapped call's view: the reducer family its first line names, else the cap."""
    match = _SUMMARY.match(view or b"")
    return match.group(1).decode() if match else CAP_RULE


#: New rows whose input, view or streams the report needs read, with what to read them from: a shell
#: call's input, a wrapped call's view when it was cut, and its raw streams when its host counts lines.
_PENDING = f"""
SELECT k.id, k.archive_ref, k.produced, k.withheld, k.kind, lower(c.tool_name), se.agent, c.is_error,
  c.working_directory, k.input_sha256, pin.compression, pin.body, pin.uncompressed_byte_length,
  pv.compression, pv.body, pv.uncompressed_byte_length, po.compression, po.body, po.uncompressed_byte_length,
  pe.compression, pe.body, pe.uncompressed_byte_length
FROM {{rows}} k
JOIN {ARCHIVE}.tool_calls c ON c.id = k.id
JOIN {ARCHIVE}.sessions se ON se.id = c.session_id
LEFT JOIN {ARCHIVE}.payloads pin ON pin.sha256 = k.input_sha256
LEFT JOIN {ARCHIVE}.snapshots v ON v.tool_call_id = CASE WHEN k.wrapped AND k.withheld > 0 THEN k.id END
  AND v.subject = 'stdout' AND v.stage = 'after'
LEFT JOIN {ARCHIVE}.payloads pv ON pv.sha256 = v.payload_sha256
LEFT JOIN {ARCHIVE}.snapshots o ON o.tool_call_id = CASE WHEN k.produced > k.line_limit THEN k.id END
  AND o.subject = 'stdout' AND o.stage = 'before'
LEFT JOIN {ARCHIVE}.payloads po ON po.sha256 = o.payload_sha256
LEFT JOIN {ARCHIVE}.snapshots e ON e.tool_call_id = CASE WHEN k.produced > k.line_limit THEN k.id END
  AND e.subject = 'stderr' AND e.stage = 'before'
LEFT JOIN {ARCHIVE}.payloads pe ON pe.sha256 = e.payload_sha256
WHERE k.annotated = 0 AND k.id > ?1
ORDER BY k.id LIMIT ?2
"""
#: The rows of the calls since a report's marks (after the id ?3, and those of the JSON list ?4).
_SINCE_MARKS = ("(SELECT * FROM main.call_savings WHERE id > ?3 UNION ALL"
                " SELECT * FROM main.call_savings WHERE id IN (SELECT value FROM json_each(?4)))")
#: Parsed shell inputs kept between batches, by digest: agents run the same commands again.
_PARSED_KEPT = 50_000
ADD_FOLLOWUP = "INSERT OR REPLACE INTO main.followups (id, archive_ref, target_ref, kind, parts) VALUES (?, ?, ?, ?, ?)"
#: Rows annotated per statement: a first report annotates every shell call, one batch of small
#: annotations in memory at a time (and one row's payloads).
ANNOTATE_BATCH = 4096

#: Each new row with a re-run key: the nearest earlier run of the same command in its session, when
#: that run was capped, ended within the window and no edit ran between the two.
_LINK_RERUNS = f"""
INSERT OR REPLACE INTO main.followups (id, archive_ref, target_ref, kind, parts)
SELECT r.id, r.archive_ref, t.archive_ref, 'rerun', 1
FROM main.call_savings r
JOIN main.call_savings t ON t.id = (
  SELECT p.id FROM main.call_savings p
  WHERE p.session_id = r.session_id AND p.rerun_key = r.rerun_key AND p.started_at_ms < r.started_at_ms
    AND p.id <> r.id
  ORDER BY p.started_at_ms DESC LIMIT 1)
WHERE r.id IN (SELECT id FROM temp.keyed_calls)
  AND t.kind = 'counted' AND t.withheld > 0 AND t.finished_at_ms <= r.started_at_ms
  AND r.started_at_ms - t.finished_at_ms <= {RERUN_WINDOW_MS}
  AND NOT EXISTS (SELECT 1 FROM {ARCHIVE}.tool_calls e WHERE e.started_at_ms > t.finished_at_ms
    AND e.started_at_ms < r.started_at_ms AND e.session_id = r.session_id
    AND lower(e.tool_name) IN ({", ".join("'" + t + "'" for t in sorted(EDIT_TOOLS))}))
"""


def annotate(conn: sqlite3.Connection, progress=None, since: tuple[int, str] | None = None) -> None:
    """Complete the projection's new rows: recoveries, re-run keys and their links, rules, line-limited
    views, and the labels of every shell input (`programs.labels_of`).

    Runs inside the report's transaction, after the rows were added; every
    row is annotated once, `ANNOTATE_BATCH` rows at a time in id order. The
    rows given a re-run key are linked to the runs they repeat once all are
    annotated (an imported run may have a later id than the live one after it).
    `progress(text)` hears how many rows are done. With `since` (a report's
    marks: the last call id and the JSON list of the calls open then) only
    the rows of the calls since are looked at; otherwise every row.
    """
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS keyed_calls (id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM temp.keyed_calls")
    rows = "main.call_savings" if since is None else _SINCE_MARKS
    marks = () if since is None else since
    pending = _PENDING.format(rows=rows)
    last = -(2**63)
    total = conn.execute(f"SELECT count(*) FROM {rows} WHERE annotated = 0", (0, 0, *marks) if marks else ()
                         ).fetchone()[0]
    done = 0
    parsed: dict[bytes, tuple] = {}
    while True:
        if progress is not None:
            progress(f"reading shell inputs and cut views {done}/{total}")
        updates, followups, keyed = [], [], []
        if len(parsed) > _PARSED_KEPT:
            parsed.clear()
        for row in conn.execute(pending, (last, ANNOTATE_BATCH, *marks)):
            call_id, ref, produced, withheld, kind, tool, agent, is_error, cwd, digest = row[:10]
            last = call_id
            key = names = None
            if digest is not None:
                known = parsed.get(digest)
                if known is None:
                    value = input_value(*row[10:13])
                    text = command_text(value)
                    known = parsed[digest] = (value, text, labels_of(text))
                value, text, names = known
                if text:
                    if cwd is None and isinstance(value, dict) and isinstance(value.get("cwd"), str):
                        cwd = value["cwd"]
                    key = rerun_key(text, cwd)
                    keyed.append((call_id,))
                    refs = recovered_refs(text, ref)
                    followups.extend((call_id, ref, target, "recovery", len(refs)) for target in refs)
            rule = host_shown = None
            if kind == "counted" and withheld > 0:
                rule, host_shown = _cut_view(row, produced, agent, tool, is_error)
            updates.append((call_id, rule, key, host_shown, *(names or (None, None))))
        if not updates:
            break
        done += len(updates)
        _apply_updates(conn, updates)
        conn.executemany("INSERT OR IGNORE INTO temp.keyed_calls (id) VALUES (?)", keyed)
        if followups:
            conn.executemany(ADD_FOLLOWUP, followups)
    conn.execute(_LINK_RERUNS)


def _cut_view(row: tuple, produced: int, agent: str, tool: str, is_error) -> tuple[str, int | None]:
    """(rule, host view or None) of a call whose view YARP cut: the rule from a wrapped call's view, the
    host's line-limited view from its raw streams. A damaged payload costs only what it would have told."""
    rule, host_shown = CAP_RULE, None
    view, out, err = row[13:16], row[16:19], row[19:22]
    with suppress(DataError):
        if view[1] is not None:
            rule = rule_of_view(decode_body(*view)[:256])
        if out[1] is not None:
            lines = decode_body(*out).count(b"\n") + (decode_body(*err).count(b"\n") if err[1] is not None else 0)
            found = host_view(agent, tool, bool(is_error))
            host_shown = found.shown(produced, lines + 1) if found is not None else None
    return rule, host_shown


def _apply_updates(conn: sqlite3.Connection, updates: list) -> None:
    """Write the annotations; a refined host view also refines the call's gross withheld."""
    plain = [(rule, key, program, command, call_id)
             for call_id, rule, key, shown, program, command in updates if shown is None]
    refined = [(rule, key, shown, shown, program, command, call_id)
               for call_id, rule, key, shown, program, command in updates if shown is not None]
    conn.executemany("UPDATE main.call_savings SET rule = ?, rerun_key = ?, program = ?, command = ?,"
                     " annotated = 1 WHERE id = ?", plain)
    conn.executemany("UPDATE main.call_savings SET rule = ?, rerun_key = ?, host_shown = ?,"
                     " gross = ? - (produced - withheld), program = ?, command = ?, annotated = 1 WHERE id = ?",
                     refined)
