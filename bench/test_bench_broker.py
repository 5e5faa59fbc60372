"""Micro benchmarks of the broker's per-request CPU path, each beside its baseline.

Run: PYTHONPATH=src .venv/bin/python -m pytest bench/test_bench_broker.py -q
Regression workflow (docs/broker.md): `pytest bench --benchmark-autosave`, then
`pytest bench --benchmark-compare --benchmark-compare-fail=median:10%`.

* envelope: `protocol.parse_envelope` on a decoded 1 KiB begin_call envelope
  (the event-loop part), against a bare `orjson.loads` of the same frame.
* prepare: `broker.prepare_request` on the same operation (validation, identity
  proof, canonical JSON, SHA-256, compression decision), the pool's unit of
  work, against `hashlib.sha256` of the frame (the cheapest possible proof).
* frame path: decode + parse_envelope + prepare_request + reply encoding for
  one 1 KiB request, the whole CPU cost the broker pays outside SQLite.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys

import orjson
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from yarp import operations as ops  # noqa: E402
from yarp import protocol  # noqa: E402
from yarp.broker import prepare_request  # noqa: E402

CORRELATION = "c-bench"


def _text(size: int) -> str:
    rng = random.Random(7)
    words = "error warning ok test build src lib main func return value index".split()
    out, n = [], 0
    while n < size:
        line = " ".join(rng.choice(words) for _ in range(8)) + f" {rng.randint(0, 9999)}\n"
        out.append(line)
        n += len(line)
    return "".join(out)[:size]


@pytest.fixture(scope="module")
def frame_1k() -> bytes:
    sess = ops.Session("pi", "bench", "session-1")
    inp = {"command": "cat", "args": _text(480)}
    op = ops.BeginCall(sess, ops.CallMeta("call-1", "bash", 1_700_000_000_000, False), inp, inp, 1_700_000_000_001)
    frame = protocol.envelope(op, CORRELATION, 5000)
    assert 1024 < len(frame) < 1600
    return frame


def test_envelope_baseline_orjson_loads(benchmark, frame_1k):
    benchmark.group = "envelope-1k"
    benchmark(orjson.loads, frame_1k)


def test_envelope_parse(benchmark, frame_1k):
    benchmark.group = "envelope-1k"

    def run():
        return protocol.parse_envelope(orjson.loads(frame_1k), CORRELATION)

    env = benchmark(run)
    assert env.kind == "begin_call"


def test_prepare_baseline_sha256(benchmark, frame_1k):
    benchmark.group = "prepare-1k"
    benchmark(lambda: hashlib.sha256(frame_1k).digest())


def test_prepare_request(benchmark, frame_1k):
    benchmark.group = "prepare-1k"
    env = protocol.parse_envelope(orjson.loads(frame_1k), CORRELATION)
    prepared = benchmark(prepare_request, env.operation, env.source_key, env.operation_id)
    assert [s.subject for s in prepared.snapshots] == ["input", "input"]


def test_request_cpu_path(benchmark, frame_1k):
    benchmark.group = "request-1k"

    def run():
        env = protocol.parse_envelope(protocol.decode_json(frame_1k, "envelope"), CORRELATION)
        prepare_request(env.operation, env.source_key, env.operation_id)
        return protocol.reply_ok("yr_" + "0" * 32)

    assert orjson.loads(benchmark(run))["ok"] is True
