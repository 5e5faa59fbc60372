"""Payload preparation: canonicalise + hash + compression decision, c against py.

Inputs of 1 KiB, 64 KiB and 1 MiB in three kinds: realistic tool-call JSON
(canonicalised first), realistic build-log text, and incompressible bytes. Each
runs on `c` and `py`, beside two baselines in the same group:
`floor` = SHA-256 plus an unconditional Zstandard level 3 compression with a
reused compressor (what any implementation must at least pay when it
compresses), and for JSON `rfc8785` = the reference canonicaliser alone.

Run:  PYTHONPATH=src .venv/bin/python -m pytest -q bench/test_bench_payload.py
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest
import rfc8785
import zstandard

from yarp.archive import codec

SIZES = {"1KiB": 1024, "64KiB": 64 * 1024, "1MiB": 1024 * 1024}


def _json_value(size: int) -> dict:
    entries = []
    value = {"command": "rg -n --json 'def handler' src", "cwd": "/home/user/project", "matches": entries}
    i = 0
    while len(json.dumps(value)) < size:
        entries.append(
            {
                "path": f"src/app/module_{i % 97}.py",
                "line": i * 7 % 4000,
                "text": f"    def handler_{i}(self, request): return self.respond(request, status={200 + i % 5})",
                "binary": False,
                "submatches": [{"start": 8, "end": 15, "match": "handler"}],
            }
        )
        i += 1
    return value


def _text(size: int) -> bytes:
    out = bytearray()
    i = 0
    while len(out) < size:
        out += b"[%06d] src/app/module_%d.py:%d: warning: unused variable 'tmp_%d' [-Wunused]\n" % (i, i % 97, i * 7, i % 13)
        i += 1
    return bytes(out[:size])


INPUTS = {}
for _name, _size in SIZES.items():
    INPUTS[("json", _name)] = _json_value(_size)
    INPUTS[("text", _name)] = _text(_size)
    INPUTS[("random", _name)] = os.urandom(_size)

CASES = [(kind, name) for kind in ("json", "text", "random") for name in SIZES]
_floor_compressor = zstandard.ZstdCompressor(level=3)


def _prepare(impl, kind, value):
    if kind == "json":
        data = codec.canonical_json(value)
    else:
        data = value
        codec.media_type_of(data)
    return impl.prepare_payload(data)


@pytest.mark.parametrize("kind, size", CASES, ids=[f"{k}-{s}" for k, s in CASES])
def test_prepare(benchmark, payload_impl, kind, size):
    benchmark.group = f"payload: {kind} {size}"
    value = INPUTS[(kind, size)]
    digest, compression, body = benchmark(_prepare, payload_impl, kind, value)
    raw = codec.canonical_json(value) if kind == "json" else value
    assert codec.decode_body(compression, body, len(raw)) == raw
    benchmark.extra_info.update(bytes=len(raw), stored=len(body), compression=compression)


@pytest.mark.parametrize("kind, size", CASES, ids=[f"{k}-{s}" for k, s in CASES])
def test_floor_hash_and_compress(benchmark, kind, size):
    benchmark.group = f"payload: {kind} {size}"
    value = INPUTS[(kind, size)]
    data = rfc8785.dumps(value) if kind == "json" else value

    def floor():
        return hashlib.sha256(data).digest(), _floor_compressor.compress(data)

    benchmark(floor)


@pytest.mark.parametrize("size", list(SIZES))
def test_reference_canonicaliser(benchmark, size):
    benchmark.group = f"payload: json {size}"
    value = INPUTS[("json", size)]
    assert benchmark(rfc8785.dumps, value) == codec.canonical_json(value)
