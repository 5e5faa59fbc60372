"""Wall time of whole `yarp hook codex` processes against a warm broker.

    python bench/codex_hook.py               # 20 calls
    python bench/codex_hook.py --calls 40

Each call is the model's `function_call` line, a `PreToolUse` event, a
`CommandExecution` appended to a Codex transcript of the recorded shape (the 48,894-byte output of `seq 1 10000`), and
a `PostToolUse` event whose answer replaces the model's view. Beside them, as
the baseline measured in the same loop, `python -m yarp --version`. Then the
transcript reader alone on a 119 MB transcript, tail first and whole.
Wall-clock figures on a shared machine swing; compare the hook to the baseline.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]

from test_hooks import HookWorld  # noqa: E402
from test_hooks_codex import Transcript, event, seq  # noqa: E402

from yarp.agents.codex.broker.evidence import read_evidence  # noqa: E402


def summary(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    return (f"p50 {statistics.median(ordered) * 1000:.0f} ms, p90 {ordered[int(len(ordered) * 0.9)] * 1000:.0f} ms,"
            f" max {ordered[-1] * 1000:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="yarp-codex-bench-"))
    world = HookWorld(tmp)
    world.env["YARP_BROKER_IDLE_MS"] = "60000"
    transcript = Transcript(tmp / "rollout.jsonl")
    output = seq(10000)
    pre, post, baseline = [], [], []

    def timed(payload: dict, into: list[float]) -> subprocess.CompletedProcess:
        start = time.perf_counter()
        result = world.hook("codex", payload)
        into.append(time.perf_counter() - start)
        assert result.returncode == 0 and not result.stderr, result.stderr
        return result

    try:
        world.hook("codex", event(world, transcript, "PreToolUse", "warm", "true"))  # starts the broker
        for number in range(args.calls):
            call_id = f"call_{number}"
            transcript.called(call_id, "exec_command", {"cmd": "seq 1 10000", "yield_time_ms": 10000})
            timed(event(world, transcript, "PreToolUse", call_id, "seq 1 10000"), pre)
            transcript.executed(call_id, output, 0)
            answer = timed(event(world, transcript, "PostToolUse", call_id, "seq 1 10000", tool_response="cut"), post)
            assert json.loads(answer.stdout)["decision"] == "block"
            transcript.model_output(call_id, json.loads(answer.stdout)["reason"])
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "yarp", "--version"], env=world.env, capture_output=True, check=True)
            baseline.append(time.perf_counter() - start)
        print(f"PreToolUse                       {summary(pre)}")
        print(f"PostToolUse, 48,894 B, replaced  {summary(post)}")
        print(f"python -m yarp --version         {summary(baseline)}")
        big = Transcript(tmp / "big.jsonl")
        for number in range(2000):
            big.executed(f"b{number}", output, 0)
            big.model_output(f"b{number}", "shown")
        size = big.path.stat().st_size
        for label, tail in (("tail first", 8 * 1024 * 1024), ("whole file", 0)):
            start = time.perf_counter()
            found = read_evidence(str(big.path), ["b1999"], tail_bytes=tail)
            assert found["b1999"].executed
            print(f"read_evidence, {size / 1e6:.0f} MB, {label}: {(time.perf_counter() - start) * 1000:.0f} ms")
    finally:
        world.env["YARP_BROKER_IDLE_MS"] = "300"
        world.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
