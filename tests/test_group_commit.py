"""Group commit where flushes are slow: clients in a loop of requests share one flush, not half each.

A real broker runs with every fsync made 4 ms slower (bench/slow_flush.c,
preloaded: the flush still reaches the disk). Eight clients each send one
`begin_call` at a time, as agents' bridges do. Without group commit the
clients fall into two halves that take turns, four requests a batch; with
it, the batch after a slow commit waits a share of that commit for the
clients it answered, and most batches hold all eight. Every request is
acknowledged and archived either way.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from broker_helpers import BrokerProcess, begin, broker_env, count_rows  # noqa: F401  (fixture)

SHIM = Path(__file__).resolve().parents[1] / "bench" / "slow_flush.c"
CLIENTS, REQUESTS = 8, 30


@pytest.fixture(scope="module")
def slow_flush(tmp_path_factory) -> str:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the flush-delay shim")
    out = tmp_path_factory.mktemp("shim") / "slow_flush.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(out), str(SHIM), "-ldl"], check=True)
    return str(out)


def test_clients_in_a_loop_share_slow_flushes(broker_env, slow_flush):  # noqa: F811
    env = broker_env.with_env(LD_PRELOAD=slow_flush, YARP_BENCH_FLUSH_DELAY_US=4000)
    proc = BrokerProcess(broker_env, env=env).wait_ready()
    errors: list[BaseException] = []

    def client(n: int) -> None:
        try:
            with broker_env.client() as c:
                for i in range(REQUESTS):
                    assert c.request(begin(f"g{n}-{i}"), time.monotonic() + 30)["ok"]
        except BaseException as exc:  # reported on the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    status = broker_env.status()
    proc.stop()
    assert count_rows(broker_env, "tool_calls") == CLIENTS * REQUESTS
    mean_batch = status["requests"] / status["batches"]
    # Two halves taking turns would give CLIENTS / 2 a batch.
    assert mean_batch > CLIENTS * 0.7, status
