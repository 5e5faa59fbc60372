"""Composite preparation in the broker: each part stores exactly what it would prepared alone."""

from __future__ import annotations

from yarp.wire import operations as ops
from yarp.archive.codec import bytes_payload
from yarp.agents.codex.broker.outcome import call_outcome
from yarp.archive.prepare import Prepared, SnapshotSpec, prepare
from yarp.broker.services.shared import prepare_parts
from yarp.agents.codex.transcripts.evidence import CallEvidence

SESSION = ops.Session("codex", "local:1000", "session-1")
OUTPUT = "".join(f"{i}\n" for i in range(1, 10001))


def _alone(operations, sources) -> list[Prepared]:
    """Each part prepared on its own: the reference a shared payload must equal."""
    out = []
    for index, op in enumerate(operations):
        prepared = prepare(op)
        if index in sources:
            prepared = Prepared(op, prepared.snapshots + (SnapshotSpec("source_output", "before",
                                                                       bytes_payload(sources[index])),))
        out.append(prepared)
    return out


def _check(outcome) -> tuple[Prepared, ...]:
    sources = {0: outcome.source} if outcome.source is not None else {}
    parts = prepare_parts(tuple(outcome.operations), sources).parts
    alone = _alone(outcome.operations, sources)
    assert [p.operation.kind for p in parts] == [op.kind for op in outcome.operations]
    assert [p.snapshots for p in parts] == [p.snapshots for p in alone]
    return parts


def test_a_replaced_view_is_prepared_once_for_staged_and_final_result():
    evidence = CallEvidence("call-1", output=OUTPUT, exit_code=0, status="completed")
    outcome = call_outcome(SESSION, evidence, OUTPUT[:5000], "yr_abcdefghijkl", cap=5120, now_ms=1)
    assert outcome.view is not None
    parts = _check(outcome)
    staged, final = parts[-2].snapshots[0].payload, parts[-1].snapshots[0].payload
    assert staged is final  # one payload object: hashed and compressed once
    assert parts[0].snapshots[0].payload != staged  # the raw result differs from the view


def test_an_unchanged_result_shares_one_payload_for_raw_staged_and_final():
    evidence = CallEvidence("call-2", output="short\n", exit_code=3, status="failed")
    outcome = call_outcome(SESSION, evidence, "short\n", "yr_abcdefghijkl", cap=5120, now_ms=1)
    assert outcome.view is None
    parts = _check(outcome)
    payloads = {id(p.snapshots[0].payload) for p in parts}
    assert len(payloads) == 1
    assert [s.stage for p in parts for s in p.snapshots if s.subject == "result"] == ["before", "after", "after"]


def test_equal_but_distinct_results_are_each_prepared():
    first, second = {"output": "x", "exit_code": 0}, {"output": "x", "exit_code": 0}
    operations = (ops.StageResult(SESSION, "call-3", first, False, 1), ops.FinishCall(SESSION, "call-3", second,
                                                                                    False, True, 1))
    parts = prepare_parts(operations).parts
    assert parts[0].snapshots == parts[1].snapshots
    assert parts[0].snapshots[0].payload is not parts[1].snapshots[0].payload
