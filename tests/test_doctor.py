"""`yarp doctor` as a user runs it: real processes, a real broker, real files in a private home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from broker_helpers import broker_env  # noqa: F401  (fixture)
from broker_helpers import wait_gone
from version_helpers import OTHER_VERSION, as_version, other_version_src

from yarp import agents
from yarp.agents.codex.broker.outcome import MAX_VIEW_CAP
from yarp.hooks import extension_install
from yarp.hooks.install import install as install_hooks
from yarp.hooks.install import settings_path


def _yarp(env: dict, *argv: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "yarp", *argv], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def _doctor(env: dict, *extra: str, cwd: str | None = None) -> tuple[int, dict[str, list[dict]]]:
    result = _yarp(env, "doctor", "--json", *extra, cwd=cwd)
    report = json.loads(result.stdout)
    assert report["healthy"] == (result.returncode == 0)
    checks: dict[str, list[dict]] = {}
    for check in report["checks"]:
        assert check["status"] in ("ok", "warn", "fail")
        assert (check["fix"] is None) == (check["status"] == "ok"), check
        checks.setdefault(check["name"], []).append(check)
    return result.returncode, checks


@pytest.fixture
def env(broker_env, tmp_path):  # noqa: F811
    work = tmp_path / "work"
    work.mkdir()
    return broker_env.with_env(YARP_ARCHIVE=broker_env.archive, PI_CODING_AGENT_DIR=None, CODEX_HOME=None,
                               GEMINI_CLI_HOME=None)


def test_a_healthy_installation_passes_with_every_agent_hooked_up(env, tmp_path):
    # Every agent in the registry, each with its own check.
    for agent in agents.names():
        assert _yarp(env, "hook", "install", agent).returncode == 0
    status, checks = _doctor(env, cwd=str(tmp_path / "work"))
    assert status == 0
    statuses = {name: [c["status"] for c in found] for name, found in checks.items()}
    assert statuses == {
        "data files": ["ok"], "configuration": ["ok"], "rule packs": ["ok"], "kernels": [checks["kernels"][0]
                                                                                         ["status"]],
        "archive": ["ok"], "runtime directory": ["ok"], "broker": ["ok"], "capture": ["ok"],
        **{agents.record(name).DOCTOR_NAME: ["ok"] for name in agents.names()},
        "tool results": ["ok"] * len(agents.names()),
        "broker errors": ["ok"],
    }
    assert {"Pi extension", "Claude Code hooks", "Codex hooks", "Gemini CLI hooks", "opencode plugin"} <= set(checks)
    # One line per agent hooked up: what its host lets YARP replace, and what YARP does.
    assert [c["detail"].split(":")[0] for c in checks["tool results"]] == list(agents.names())
    assert "Pi extension (8 files)" in checks["data files"][0]["detail"]
    # The capture is real: its call is in the archive, finished, with its four streams.
    ref = checks["capture"][0]["detail"].split(" archived as ")[1].split()[0]
    with sqlite_ro(env["YARP_ARCHIVE"]) as db:
        row = db.execute("SELECT status, (SELECT count(*) FROM snapshots s WHERE s.tool_call_id = c.id) "
                         "FROM tool_calls c WHERE archive_ref = ?", (ref,)).fetchone()
    assert row[0] == "finished" and row[1] >= 6
    text = _yarp(env, "doctor", cwd=str(tmp_path / "work"))
    assert text.returncode == 0 and text.stdout.endswith("yarp works here\n")
    assert all(line.split()[0] in ("ok", "warn", "fail", "fix:", "yarp") for line in text.stdout.splitlines())


def sqlite_ro(path: str):
    import sqlite3
    from contextlib import closing

    return closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True))


def test_an_unsafe_archive_directory_fails_and_the_broker_is_not_tried(env, tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    os.chmod(loose, 0o755)
    status, checks = _doctor({**env, "YARP_ARCHIVE": str(loose / "tool-calls.sqlite3")})
    assert status == 1
    assert checks["archive"][0]["status"] == "fail" and "0755" in checks["archive"][0]["detail"]
    assert "chmod 700" in checks["archive"][0]["fix"]
    assert checks["broker"][0]["status"] == "fail" and "not tried" in checks["broker"][0]["detail"]
    assert "capture" not in checks


def test_a_broker_of_another_yarp_version_is_replaced_and_said_so(env):
    # An upgrade left the old version's broker running: doctor does not fail on its handshake.
    other = as_version({**env, "YARP_BROKER_IDLE_MS": "600000"}, other_version_src())
    assert _yarp(other, "run", "--", "true").returncode == 0
    old_pid = json.loads(_yarp(other, "archive", "broker", "status", "--json").stdout)["pid"]
    status, checks = _doctor(env)
    assert status == 0
    broker = checks["broker"][0]
    assert broker["status"] == "ok", broker
    assert broker["detail"].startswith(f"a broker of yarp {OTHER_VERSION} (pid {old_pid}) was running; it drained"
                                       " and exited, and this version's answered the handshake in ")
    assert checks["capture"][0]["status"] == "ok"
    assert wait_gone(old_pid, 10)


def test_no_agent_hooked_up_is_a_warning_not_a_failure(env):
    status, checks = _doctor(env)
    assert status == 0
    assert checks["agents"][0]["status"] == "warn"
    assert [c["detail"] for c in checks["Pi extension"]] == ["not installed"]
    assert [c["detail"] for c in checks["opencode plugin"]] == ["not installed"]
    assert "tool results" not in checks


def test_each_agent_hooked_up_says_which_results_yarp_replaces(env, tmp_path):
    for agent in ("codex", "gemini"):
        assert _yarp(env, "hook", "install", agent).returncode == 0
    status, checks = _doctor(env)
    assert status == 0
    codex, gemini = (c["detail"] for c in checks["tool results"])
    assert codex.startswith("codex: Codex lets a PostToolUse hook replace the result of its shell, apply_patch")
    assert "YARP replaces shell output over 5,120 bytes with its view" in codex
    assert "apply_patch and MCP results, are shown as Codex returns them" in codex
    assert gemini.startswith("gemini: Gemini CLI lets an AfterTool hook replace any tool's result (a tail call)")
    assert "YARP replaces every text result over 5,120 bytes" in gemini
    # The configuration decides what YARP replaces; the host's part stays.
    config = tmp_path / "config.toml"
    config.write_text("version = 1\n[output]\ncap_bytes = 8000\n")
    status, checks = _doctor({**env, "YARP_CONFIG": str(config)})
    assert status == 0 and "over 8,000 bytes" in checks["tool results"][0]["detail"]
    # Codex cuts hook text over its own budget, so its view is held under that whatever the cap.
    config.write_text("version = 1\n[output]\ncap_bytes = 20000\n")
    status, checks = _doctor({**env, "YARP_CONFIG": str(config)})
    assert f"over {MAX_VIEW_CAP:,} bytes" in checks["tool results"][0]["detail"]
    assert "over 20,000 bytes" in checks["tool results"][1]["detail"]
    config.write_text("version = 1\n[pruning]\nenabled = false\n")
    status, checks = _doctor({**env, "YARP_CONFIG": str(config)})
    assert status == 0
    assert all("YARP replaces none here (pruning.enabled = false)" in c["detail"] and c["status"] == "ok"
               for c in checks["tool results"])
    assert "lets a PostToolUse hook replace" in checks["tool results"][0]["detail"]
    # Hooks that fail their own check (a settings file that is not JSON) get no line.
    Path(settings_path("codex", "user", env)).write_text("{not json")
    status, checks = _doctor(env)
    assert status == 1 and [c["detail"].split(":")[0] for c in checks["tool results"]] == ["gemini"]
    text = _yarp(env, "doctor", cwd=str(tmp_path))
    assert "ok    tool results: gemini: Gemini CLI lets an AfterTool hook" in text.stdout


def test_an_opencode_plugin_whose_entry_is_gone_is_a_warning(env):
    assert _yarp(env, "hook", "install", "opencode").returncode == 0
    folder = Path(extension_install.install_path("opencode", "user", env))
    status, checks = _doctor(env)
    plugin, = checks["opencode plugin"]
    assert (status, plugin["status"]) == (0, "ok") and str(folder) in plugin["detail"]
    # Without the entry opencode loads, the plugin never runs.
    Path(extension_install.entry_path("opencode", str(folder))).unlink()
    status, checks = _doctor(env)
    plugin, = checks["opencode plugin"]
    assert plugin["status"] == "warn" and plugin["fix"] == "yarp hook install opencode"


def test_an_old_extension_and_hooks_of_another_yarp_are_warnings(env, tmp_path):
    home = Path(env["HOME"])
    assert _yarp(env, "hook", "install", "pi").returncode == 0
    target = home / ".pi" / "agent" / "extensions" / "yarp"
    # What an older yarp would have installed: other bytes, recorded as such.
    record = json.loads((target / "yarp-install.json").read_text())
    (target / "ts" / "content.ts").write_text("// an older copy\n")
    record["files"]["ts/content.ts"] = extension_install._digest(b"// an older copy\n")
    record["version"] = "0.0.9"
    (target / "yarp-install.json").write_text(json.dumps(record))
    other = tmp_path / "other" / "yarp"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\necho 'yarp 0.0.8'\n")
    other.chmod(0o755)
    install_hooks("claude-code", settings_path("claude-code", "user", env), f"{other} hook claude-code")
    status, checks = _doctor(env)
    assert status == 0
    pi, = checks["Pi extension"]
    assert pi["status"] == "warn" and "from yarp 0.0.9" in pi["detail"] and pi["fix"] == "yarp hook install pi"
    claude, = checks["Claude Code hooks"]
    assert claude["status"] == "warn" and "another yarp" in claude["detail"] and "0.0.8" in claude["detail"]
    # Installing again puts this yarp's files and hooks in place.
    assert _yarp(env, "hook", "install", "pi").returncode == 0
    assert _yarp(env, "hook", "install", "claude-code").returncode == 0
    status, checks = _doctor(env)
    assert [c["status"] for c in checks["Pi extension"] + checks["Claude Code hooks"]] == ["ok", "ok"]


def test_a_settings_file_that_is_not_json_fails(env):
    path = Path(settings_path("codex", "user", env))
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    status, checks = _doctor(env)
    assert status == 1
    assert checks["Codex hooks"][0]["status"] == "fail" and "not valid JSON" in checks["Codex hooks"][0]["detail"]
