"""`yarp import codex` on a rollout the real Codex wrote, in a loopback-only network namespace.

Codex 0.171 runs `exec` against a scripted Responses-API server inside
`unshare -n` (nothing but loopback exists there), with the configuration that
stops it from reaching any other host. It runs two commands: one with a long
output Codex cuts for the model, one that fails. The import must store the
complete output and the exit codes the rollout holds, as live capture would.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_packages import CODEX_CONFIG, codex_binary
from broker_helpers import broker_env  # noqa: F401  (fixture)
from test_import_formats import calls_by_id
from test_import_pi import import_json
from yarp.archive.codec import canonical_json

pytestmark = pytest.mark.slow

PORT = 18777


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("a loopback-only network namespace (root, unshare, ip) is needed to run the real Codex")
    return codex_binary()


def test_import_of_a_real_codex_rollout(broker_env, codex_bin, tmp_path):  # noqa: F811
    codex_home = tmp_path / "codex"
    work = tmp_path / "work"
    for path in (codex_home, work, tmp_path / "home"):
        path.mkdir()
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(base_url=f"http://127.0.0.1:{PORT}/v1"))
    server = Path(__file__).with_name("import_responses_server.py")
    commands = ["seq 1 5000", "ls /no-such-dir-for-yarp"]
    script = (f"ip link set lo up; {shlex.quote(sys.executable)} {shlex.quote(str(server))} {PORT} "
              + " ".join(shlex.quote(c) for c in commands) + " & server=$!; sleep 0.5; "
              f"{shlex.quote(str(codex_bin))} exec --skip-git-repo-check --sandbox danger-full-access count "
              "</dev/null; status=$?; kill $server; exit $status")
    env = dict(os.environ, HOME=str(tmp_path / "home"), CODEX_HOME=str(codex_home), SCRIPTED_API_KEY="dummy")
    run = subprocess.run(["unshare", "-n", "sh", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-800:]
    rollouts = list((codex_home / "sessions").rglob("rollout-*.jsonl"))
    assert len(rollouts) == 1
    thread = rollouts[0].stem[-36:]  # rollout-<local time>-<thread id>

    summary = import_json(broker_env, "codex", str(codex_home / "sessions"), "--settle", "0")
    assert (summary["callsFound"], summary["callsNew"], summary["callsWithoutResult"]) == (2, 2, 0)
    assert summary["resultsWithoutCall"] == 0 and summary["corruptLines"] == 0
    assert summary["unknownRecords"] == {}, "every record type Codex 0.171 writes is known"
    calls = calls_by_id(broker_env)
    full = "".join(f"{n}\n" for n in range(1, 5001))
    seq, ls = calls["call_0"], calls["call_1"]
    for call, command in ((seq, commands[0]), (ls, commands[1])):
        assert (call["agent"], call["session"], call["tool"]) == ("codex", thread, "exec_command")
        assert (call["provider"], call["model"], call["cwd"]) == ("scripted", "scripted-model", str(work))
        assert call["snaps"][("input", "before")] == canonical_json({"cmd": command})
    # The model saw about 10 KB; the archive holds all 23,893 bytes as the exact source output, as live
    # capture does, and the result the model got with the exit code and status the rollout proves.
    assert seq["snaps"][("source_output", "before")] == full.encode()
    result = json.loads(seq["snaps"][("result", "before")])
    assert (result["exit_code"], result["status"]) == (0, "completed")
    assert "Process exited with code 0" in result["output"]
    assert (seq["is_error"], ls["is_error"]) == (0, 1) and (seq["executed"], ls["executed"]) == (1, 1)
    assert b"no-such-dir-for-yarp" in ls["snaps"][("result", "before")]
    assert import_json(broker_env, "codex", str(codex_home / "sessions"), "--settle", "0")["callsNew"] == 0
