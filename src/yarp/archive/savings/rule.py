"""What a finished call counts as: its class, its bytes produced and withheld, and how its view is known.

Every number comes from snapshot rows and the stored `uncompressed_byte_length`
of their payloads, so the rule never decompresses an output payload. Each
finished call is classified and sized once, by one statement (`project_sql`)
that writes its row to the savings projection, inside SQLite.

How one finished call is counted (the rule `docs/commands.md` documents):

- **wrapped** (it has `stdout/after` or `stderr/after`): YARP's runner produced
  the output the tool returned. produced = stdout/before + stderr/before;
  withheld = (streams before − streams after) + (result/before − result/after).
  The second term is what a later cap or summary removed from the result.
- **not executed** (no `result/before`): no tool output existed; counted apart.
- **rewritten** (`result/after` is another payload than `result/before`): the
  adapter handed on YARP's result. produced = result/before, shown = result/after.
- **imported** (its `result/before` was captured after the call finished): a
  live capture commits the result before it finishes the call, so the call
  came from a transcript; its view is unknown.
- **unchanged** (same payload before and after): counted with nothing withheld
  when the session's agent hands `result/after` to the model itself
  (`VIEW_REPLACING_AGENTS`); otherwise the host kept its own output (a hook
  that cannot replace a result) and the view is unknown.

Calls with an unknown view are reported separately and never as savings.
shown = produced − withheld for every counted call. Result sizes are the bytes
of canonical JSON, stream sizes the exact stream bytes.
"""

from __future__ import annotations

from yarp.archive.savings.hosts import key_sql, line_limit_sql, shown_sql
from yarp.archive.savings.programs import SHELL_TOOLS
from yarp.archive.savings.projection import INSERT_CALL
from yarp.archive.savings.window import access

# Classes of finished calls (and of a call not yet finished).
COUNTED = "counted"
NOT_EXECUTED = "not_executed"
IMPORTED = "imported"
HOST_VIEW = "host_view"
INCOMPLETE = "incomplete"

def _view_replacing() -> frozenset[str]:
    from yarp import agents

    return frozenset({"yarp-run"} | {name for name in agents.names() if agents.record(name).REPLACES_VIEW})


#: Agents whose adapter stands in the result's path: it hands the model
#: `result/after` when it changes the view, and leaves the tool's own result
#: (which is `result/before`) when it does not (a person's `yarp run`, and each
#: agent whose record says `REPLACES_VIEW`). Other agents' hooks cannot
#: replace a result they leave alone, and the host may still cut it after
#: them, so their unchanged calls have an unknown view.
VIEW_REPLACING_AGENTS = _view_replacing()

#: The row of each finished call of the window that the projection lacks,
#: walked in the order of `tool_calls`: its `result` snapshots and whether it
#: has a stream after YARP come from primary-key lookups, and a payload's size
#: is read only where the rule needs it: result/before unless the call is
#: wrapped and its result unchanged, result/after only when it is another
#: payload, each stream/before, and a stream/after only when it is another
#: payload than its stream/before. (`BETWEEN 'stderr' AND 'stdout'` holds
#: exactly the two stream subjects of the schema's list: one index range.)
#: Each level is a co-routine (`LIMIT -1` keeps SQLite from flattening it into
#: the next) so that a value computed once, such as the call's kind, is read by
#: the levels above instead of being recomputed at each use. `{access}` picks a
#: rowid-ordered scan of every call or, for a small window, the start-time
#: index. A shell call keeps its input's digest, to be named by program.
_PROJECT = """
WITH c0 AS (
  SELECT c.id AS id, c.archive_ref AS ref, c.session_id AS sid, c.started_at_ms AS started,
    {host_key} AS hk, lower(c.tool_name) IN ({shell}) AS shell,
    rb.payload_sha256 AS rbs, rb.captured_at_ms AS rcap, c.finished_at_ms AS fin,
    rb.payload_sha256 IS NOT NULL AND ra.payload_sha256 IS NOT NULL AND ra.payload_sha256 IS NOT rb.payload_sha256
      AS rewritten,
    se.agent IN ({replacing}) AS replacing, pra.uncompressed_byte_length AS ral,
    EXISTS (SELECT 1 FROM snapshots x WHERE x.tool_call_id = c.id
      AND x.subject BETWEEN 'stderr' AND 'stdout' AND x.stage = 'after') AS wrapped
  FROM {calls} c {access} JOIN sessions se ON se.id = c.session_id
  LEFT JOIN snapshots rb ON rb.tool_call_id = c.id AND rb.subject = 'result' AND rb.stage = 'before'
  LEFT JOIN snapshots ra ON ra.tool_call_id = c.id AND ra.subject = 'result' AND ra.stage = 'after'
  LEFT JOIN payloads pra ON pra.sha256 = CASE WHEN ra.payload_sha256 IS NOT rb.payload_sha256
    THEN ra.payload_sha256 END
  WHERE c.started_at_ms >= ?1 AND c.started_at_ms < ?2 AND c.status = 'finished'{split}
    AND NOT EXISTS (SELECT 1 FROM main.call_savings k WHERE k.id = c.id AND k.archive_ref = c.archive_ref)
  LIMIT -1
),
c1 AS (
  SELECT c0.id AS id, ref, sid, started, fin, hk, shell, wrapped, rewritten, ral,
    prb.uncompressed_byte_length AS rbl, {kind} AS kind,
    coalesce(pob.uncompressed_byte_length, 0) + coalesce(peb.uncompressed_byte_length, 0) AS sb,
    {stdout_after} + {stderr_after} AS sa
  FROM c0
  LEFT JOIN payloads prb ON prb.sha256 = CASE WHEN NOT wrapped OR rewritten THEN rbs END
  {streams}
  LIMIT -1
),
c2 AS (
  SELECT id, ref, sid, started, fin, hk, shell, wrapped, kind,
    CASE WHEN kind = 'not_executed' THEN 0 WHEN wrapped THEN sb ELSE rbl END AS produced,
    CASE WHEN kind <> 'counted' THEN 0
      ELSE CASE WHEN wrapped THEN sb - sa ELSE 0 END + CASE WHEN rewritten THEN rbl - ral ELSE 0 END
    END AS withheld
  FROM c1
  LIMIT -1
)
{insert}
SELECT id, ref, kind, produced, withheld, CASE WHEN shell THEN
    (SELECT i.payload_sha256 FROM snapshots i WHERE i.tool_call_id = id AND i.subject = 'input' AND i.stage = 'before')
  END, sid, started, fin, wrapped,
  CASE WHEN wrapped AND kind = 'counted' AND withheld > 0 THEN {line_limit} END,
  {host_shown},
  CASE WHEN kind = 'counted' AND withheld > 0 THEN {host_shown} - (produced - withheld) ELSE 0 END,
  CASE kind WHEN 'counted' THEN produced - withheld WHEN 'host_view' THEN {host_shown}
    WHEN 'imported' THEN {host_shown} ELSE 0 END,
  NOT shell AND NOT (wrapped AND kind = 'counted' AND withheld > 0),
  CASE WHEN kind = 'counted' AND withheld > 0 AND NOT wrapped THEN 'cap' END, NULL
FROM c2
"""
#: The classification of `docs/commands.md` for a finished call, in SQL (over `c0`).
_KIND = """CASE WHEN wrapped THEN 'counted' WHEN rbs IS NULL THEN 'not_executed'
    WHEN rewritten THEN 'counted' WHEN fin IS NOT NULL AND rcap > fin THEN 'imported'
    WHEN replacing THEN 'counted' ELSE 'host_view' END"""
#: A wrapped call's stream snapshots: joined only when the call is wrapped
#: (a NULL key skips the lookup), the after payload's size read only when it
#: differs from the before payload.
_STREAM_JOINS = """
  LEFT JOIN snapshots {s}b ON {s}b.tool_call_id = CASE WHEN wrapped THEN c0.id END
    AND {s}b.subject = '{subject}' AND {s}b.stage = 'before'
  LEFT JOIN snapshots {s}a ON {s}a.tool_call_id = CASE WHEN wrapped THEN c0.id END
    AND {s}a.subject = '{subject}' AND {s}a.stage = 'after'
  LEFT JOIN payloads p{s}b ON p{s}b.sha256 = {s}b.payload_sha256
  LEFT JOIN payloads p{s}a ON p{s}a.sha256 = CASE WHEN {s}a.payload_sha256 IS NOT {s}b.payload_sha256
    THEN {s}a.payload_sha256 END"""
_STREAM_AFTER = """CASE WHEN {s}a.payload_sha256 IS NULL THEN 0
      WHEN {s}a.payload_sha256 IS {s}b.payload_sha256 THEN p{s}b.uncompressed_byte_length
      ELSE p{s}a.uncompressed_byte_length END"""
#: The two streams and their table aliases in `_STREAM_JOINS`.
_STREAMS = (("o", "stdout"), ("e", "stderr"))


def _quoted(names) -> str:
    return ", ".join("'" + name.replace("'", "''") + "'" for name in sorted(names))


#: The calls after the marks' last one (?3) and the calls open then (?4, a JSON list of ids).
_SINCE_MARKS = ("(SELECT * FROM tool_calls WHERE id > ?3 UNION ALL"
                " SELECT * FROM tool_calls WHERE id IN (SELECT value FROM json_each(?4)))")


def project_sql(windowed: bool, split: bool = False, insert: bool = True, since_marks: bool = False) -> str:
    """The statement that adds the projection's missing rows for the calls started in [?1, ?2).

    With `split`, only calls whose id is in [?3, ?4); with `since_marks`, only
    calls after the id ?3 and those whose ids the JSON list ?4 holds (the
    calls a report's marks say may lack a row); without `insert`, it returns
    the rows instead of adding them (for a part computed on another
    connection).
    """
    return _PROJECT.format(
        calls=_SINCE_MARKS if since_marks else "tool_calls", access="" if since_marks else access(windowed),
        split=" AND c.id >= ?3 AND c.id < ?4" if split else "",
        insert=INSERT_CALL if insert else "", replacing=_quoted(VIEW_REPLACING_AGENTS), kind=_KIND,
        streams="".join(_STREAM_JOINS.format(s=s, subject=subject) for s, subject in _STREAMS),
        stdout_after=_STREAM_AFTER.format(s="o"), stderr_after=_STREAM_AFTER.format(s="e"),
        shell=_quoted(SHELL_TOOLS), host_key=key_sql("se.agent", "lower(c.tool_name)", "c.is_error"),
        host_shown=shown_sql("hk", "produced"), line_limit=line_limit_sql("hk"))
