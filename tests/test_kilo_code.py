"""Kilo Code (`yarp.agents.kilo_code`): opencode's plugin under Kilo's name, installed, checked and imported.

Kilo Code's CLI is a fork of opencode: its plugin is opencode's made with
this agent's name, installed with opencode's file beside it into Kilo's own
config folders, and its session store (`kilo.db`) is read by opencode's
reader. These tests run the real `yarp` in child processes, a real broker and
real SQLite stores written as Kilo Code 7.7.7 writes them (the same tables and
JSON as opencode's, tests/opencode_store.py); the real CLI's run is
tests/test_real_kilo_code.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from broker_helpers import broker_env  # noqa: F401  (fixture)
from import_fixtures import set_old_mtime
from opencode_store import SESSION, Store, completed, errored
from test_hooks_install import dirs, yarp  # noqa: F401  (fixture)
from test_import_formats import calls_by_id
from test_import_pi import import_json
from test_import_pi import yarp as yarp_archive
from yarp import agents
from yarp.archive.codec import canonical_json

ROOT = Path(__file__).resolve().parent.parent
AGENTS_DIR = ROOT / "src" / "yarp" / "agents"
HOOKS = ROOT / "src" / "yarp" / "agents"  # each adapter's folder, and ts/ beside them


def test_the_plugin_is_opencodes_made_with_this_agents_name():
    record = agents.record("kilo-code")
    assert (record.ADAPTER, record.EXTENSION_BASE, record.EXTENSION_FILES) == ("extension", "opencode", ("plugin.ts",))
    source = (AGENTS_DIR / "kilo_code" / "plugin.ts").read_text()
    assert 'import { createYarpPlugin } from "../opencode/plugin.ts"' in source
    assert re.search(r'^export const AGENT = "kilo-code"$', source, re.MULTILINE)
    assert "createYarpPlugin({ agent: AGENT })" in source
    # opencode's plugin records the agent it is made for, and opencode's own stays opencode.
    base = (HOOKS / "opencode" / "plugin.ts").read_text()
    assert "agent: options.agent ?? AGENT," in base and 'export const AGENT = "opencode"' in base


def test_install_copies_the_plugin_with_opencodes_beside_it_and_uninstall_removes_them(dirs, tmp_path):  # noqa: F811
    home, project = dirs
    config = tmp_path / "config"
    result = yarp(home, project, "hook", "install", "kilo-code", XDG_CONFIG_HOME=str(config))
    assert result.returncode == 0, result.stderr
    assert b"Kilo Code loads it at its next start" in result.stdout
    folder = config / "kilo" / "yarp"
    shared = sorted(f"ts/{path.name}" for path in (HOOKS / "ts").glob("*.ts"))
    assert (folder / "kilo-code" / "plugin.ts").read_bytes() == (AGENTS_DIR / "kilo_code" / "plugin.ts").read_bytes()
    for name in ("opencode/plugin.ts", *shared):
        assert (folder / name).read_bytes() == (HOOKS / name).read_bytes(), name
    record = json.loads((folder / "yarp-install.json").read_text())
    assert record["agent"] == "kilo-code" and "kilo-code/plugin.ts" in record["files"]
    # Kilo loads only files directly in plugin/; opencode's own folder is untouched.
    entry = (config / "kilo" / "plugin" / "yarp.ts").read_text()
    exports = [line for line in entry.splitlines() if line.startswith("export")]
    assert exports == ['export { YarpPlugin } from "../yarp/kilo-code/plugin.ts"']
    assert not (config / "opencode").exists()
    assert b"already installed" in yarp(home, project, "hook", "install", "kilo-code",
                                         XDG_CONFIG_HOME=str(config)).stdout
    doctor = yarp(home, project, "doctor", XDG_CONFIG_HOME=str(config)).stdout.decode()
    assert re.search(rf"^ok +Kilo Code plugin: {re.escape(str(folder))} \(yarp \S+, this yarp\)$", doctor, re.MULTILINE)

    # A file of the copy changed: doctor says it is not current, uninstall keeps it.
    (folder / "opencode" / "plugin.ts").write_text("// mine\n")
    doctor = yarp(home, project, "doctor", XDG_CONFIG_HOME=str(config)).stdout.decode()
    assert not re.search(r"^ok +Kilo Code plugin: .*this yarp\)$", doctor, re.MULTILINE)
    removed = yarp(home, project, "hook", "uninstall", "kilo-code", XDG_CONFIG_HOME=str(config))
    assert removed.returncode == 0, removed.stderr
    assert not (config / "kilo" / "plugin" / "yarp.ts").exists() and not (folder / "kilo-code").exists()
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == ["opencode/plugin.ts"]


def test_project_scope_goes_into_the_projects_kilo_folder(dirs):  # noqa: F811
    home, project = dirs
    assert yarp(home, project, "hook", "install", "kilo-code", "--project").returncode == 0
    assert (project / ".kilo" / "plugin" / "yarp.ts").is_file()
    assert (project / ".kilo" / "yarp" / "kilo-code" / "plugin.ts").is_file()
    assert (project / ".kilo" / "yarp" / "opencode" / "plugin.ts").is_file()
    assert yarp(home, project, "hook", "uninstall", "kilo-code", "--project").returncode == 0
    assert not (project / ".kilo" / "yarp").exists() and not (project / ".kilo" / "plugin" / "yarp.ts").exists()


@pytest.fixture
def kilo_store(tmp_path):
    made = Store(tmp_path / "data", "kilo/kilo.db")
    yield made
    made.close()


def test_import_reads_the_kilo_store_under_this_agents_name_incrementally(broker_env, kilo_store, tmp_path):  # noqa: F811
    spill = tmp_path / "tool_0001"
    spill.write_text("".join(f"{n}\n" for n in range(1, 30001)))
    tail = "...output truncated...\n\nFull output saved to: x\n\n29999\n30000\n"
    kilo_store.add_session()
    kilo_store.add_message("msg_1")
    seq = completed({"command": "seq 1 30000"}, tail, {"exit": 0, "truncated": True, "outputPath": str(spill)}, 1)
    kilo_store.add_tool("call_seq", "bash", seq, second=1)
    kilo_store.add_tool("call_fail", "bash", completed({"command": "exit 3"}, "oops\n", {"exit": 3}, 2), second=2)
    kilo_store.add_tool("call_gone", "read", errored({"filePath": "nope"}, "File not found: nope", 3), second=3)
    set_old_mtime(kilo_store.path, kilo_store.path.with_name("kilo.db-wal"))
    # Found where Kilo Code keeps it: $XDG_DATA_HOME/kilo/kilo.db.
    broker_env.environ["XDG_DATA_HOME"] = str(tmp_path / "data")
    first = import_json(broker_env, "kilo-code")
    assert (first["files"], first["sessions"], first["callsFound"], first["callsNew"]) == (1, 1, 3, 3)
    assert first["issues"] == [] and first["unknownRecords"] == {}
    calls = calls_by_id(broker_env)
    assert {(call["agent"], call["session"]) for call in calls.values()} == {("kilo-code", SESSION)}
    assert {call_id: (call["is_error"], call["executed"]) for call_id, call in calls.items()} == {
        "call_seq": (0, 1), "call_fail": (1, 1), "call_gone": (1, 0)}
    assert calls["call_seq"]["snaps"][("source_output", "before")] == spill.read_bytes()
    assert calls["call_seq"]["snaps"][("result", "before")] == canonical_json(
        {"title": "t", "output": tail, "metadata": seq["metadata"]})

    # Idempotent: nothing changed, nothing read; a new part alone is read next time.
    again = import_json(broker_env, "kilo-code")
    assert (again["filesUnchanged"], again["callsFound"], again["callsNew"]) == (1, 0, 0)
    kilo_store.add_tool("call_more", "bash", completed({"command": "true"}, "", {"exit": 0}, 9), second=9)
    later = import_json(broker_env, "kilo-code", "--settle", "0")
    # Parts updated within opencode's re-read margin are read again and found already taken.
    assert (later["callsNew"], later["callsImportedBefore"]) == (1, 3)
    assert set(calls_by_id(broker_env)) == {"call_seq", "call_fail", "call_gone", "call_more"}
    assert "archive: ok" in yarp_archive(broker_env, "archive", "verify").stdout


def test_a_store_given_by_path_is_its_agents_by_its_name(broker_env, tmp_path):  # noqa: F811
    # Both stores begin alike (SQLite): `yarp import all PATH` tells them apart by their file names.
    for relative, call_id in (("kilo/kilo.db", "call_k"), ("opencode/opencode.db", "call_o")):
        store = Store(tmp_path / "data", relative)
        store.add_session()
        store.add_message("msg_1")
        store.add_tool(call_id, "bash", completed({"command": "true"}, "", {"exit": 0}, 1), second=1)
        store.close()
    summary = import_json(broker_env, "all", str(tmp_path / "data"), "--settle", "0")
    assert summary["callsNew"] == 2
    assert {call_id: call["agent"] for call_id, call in calls_by_id(broker_env).items()} == {
        "call_k": "kilo-code", "call_o": "opencode"}


def test_savings_count_what_kilo_code_would_have_shown():
    # Savings read the record: bash keeps its last 2,000 lines or 50 KiB, and the plugin hands the model
    # its view, so an unchanged result withheld nothing.
    from yarp.archive.savings.hosts import host_view
    from yarp.archive.savings.rule import VIEW_REPLACING_AGENTS

    shell = host_view("kilo-code", "bash", False)
    assert (shell.limit, shell.lines) == (51_200, 2_000)
    assert shell.shown(588_895, 100_000) == 588_895 * 2_000 // 100_000 + shell.notice
    assert host_view("kilo-code", "read", False).lines == 2_000
    assert "kilo-code" in VIEW_REPLACING_AGENTS
