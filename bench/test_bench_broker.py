"""Micro benchmarks of the broker's per-request CPU path, each beside its baseline.

Run: PYTHONPATH=src .venv/bin/python -m pytest bench/test_bench_broker.py -q
Regression workflow (docs/broker.md): `pytest bench --benchmark-autosave`, then
`pytest bench --benchmark-compare --benchmark-compare-fail=median:10%`.

* envelope: `parse_request` (decode and structural checks) of a 1 KiB
  begin_call envelope, compiled (`c`) and pure Python (`py`), against a bare
  `orjson.loads` of the same frame.
* validator: `check_operation` (the strict validation of the operation and
  the identities derived from it), `c` against `py`.
* prepare: `broker.prepare_request` (validation, identity proof, canonical
  JSON, SHA-256, compression decision), against `hashlib.sha256` of the frame
  (the cheapest possible proof).
* relay: the ingest bridge's whole per-request CPU path for a 1 KiB
  begin_call (`ingest.parse_request`: decode, the checks it owns, identities,
  one encode; then the envelope frame), against decoding and re-encoding the
  same frame with the same C codec (the floor for a relay that must strip
  `requestId` and `schemaVersion`).
* frame path: parse_request + prepare_request + reply encoding for one 1 KiB
  request, the whole CPU cost the broker pays outside SQLite.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys

import orjson
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from yarp.wire import operations as ops  # noqa: E402
from yarp.wire import protocol  # noqa: E402
from yarp import _validate_py
from yarp.clients import ingest  # noqa: E402
from yarp.broker.handlers import prepare_request  # noqa: E402
from yarp.wire.validation import parse_request  # noqa: E402

try:
    from yarp import _validate
except ImportError:  # a pure build: only the twin is measured
    _validate = None
VALIDATORS = [pytest.param(_validate_py, id="py")] + ([pytest.param(_validate, id="c")] if _validate else [])

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


@pytest.mark.parametrize("impl", VALIDATORS)
def test_envelope_parse(benchmark, frame_1k, impl):
    benchmark.group = "envelope-1k"
    env = benchmark(impl.parse_request, frame_1k, CORRELATION)
    assert env.kind == "begin_call"


@pytest.mark.parametrize("impl", VALIDATORS)
def test_validator_check_operation(benchmark, frame_1k, impl):
    benchmark.group = "validator-1k"
    env = impl.parse_request(frame_1k, CORRELATION)
    op = benchmark(impl.check_operation, env)
    assert op.kind == "begin_call"


@pytest.fixture(scope="module")
def ingest_frame_1k(frame_1k) -> bytes:
    obj = orjson.loads(frame_1k)["operation"]
    obj.update(requestId=7, schemaVersion=1)
    return orjson.dumps(obj)


def test_relay_baseline_decode_encode(benchmark, ingest_frame_1k):
    benchmark.group = "relay-1k"

    def run():
        obj = protocol.json_text.loads(ingest_frame_1k, "request frame")
        del obj["requestId"], obj["schemaVersion"]
        return protocol.json_text.dumps(obj)

    benchmark(run)


def test_relay_request(benchmark, ingest_frame_1k):
    benchmark.group = "relay-1k"

    def run():
        request = ingest.parse_request(ingest_frame_1k, 1_700_000_000_000)
        return protocol.envelope_frame(request.outgoing, CORRELATION, 5000)

    frame = benchmark(run)
    env = parse_request(frame[8:], CORRELATION)
    sent = orjson.loads(ingest_frame_1k)
    del sent["requestId"], sent["schemaVersion"]
    assert env.operation == sent  # forwarded unchanged


def test_prepare_baseline_sha256(benchmark, frame_1k):
    benchmark.group = "prepare-1k"
    benchmark(lambda: hashlib.sha256(frame_1k).digest())


def test_prepare_request(benchmark, frame_1k):
    benchmark.group = "prepare-1k"
    env = parse_request(frame_1k, CORRELATION)
    prepared = benchmark(prepare_request, env)
    assert [s.subject for s in prepared.snapshots] == ["input", "input"]


def test_request_cpu_path(benchmark, frame_1k):
    benchmark.group = "request-1k"

    def run():
        prepare_request(parse_request(frame_1k, CORRELATION))
        return protocol.reply_ok("yr_" + "0" * 32)

    assert orjson.loads(benchmark(run))["ok"] is True
