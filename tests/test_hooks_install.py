"""`yarp hook install|uninstall`: real settings files, merged, idempotent, backed up, exact removal."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

OTHER_HOOK = {"type": "command", "command": "/usr/local/bin/lint-guard --strict"}
EXISTING = {
    "model": "claude-sonnet-4-5",
    "permissions": {"allow": ["Bash(git status:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [OTHER_HOOK]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def yarp(home: Path, cwd: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YARP_", "XDG_")) and k not in ("CODEX_HOME", "GEMINI_CLI_HOME")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT / "src"), PATH="/usr/bin:/bin", **extra)
    return subprocess.run([sys.executable, "-m", "yarp", *args], env=env, cwd=cwd, capture_output=True, timeout=60,
                          check=False)


@pytest.fixture
def dirs(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def our_command(agent: str) -> str:
    return f"{sys.executable} -m yarp hook {agent}"


def test_install_merges_keeps_other_content_and_is_idempotent(dirs):
    home, project = dirs
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING))
    settings.chmod(0o644)
    first = yarp(home, project, "hook", "install", "claude-code", "--user")
    assert first.returncode == 0, first.stderr
    data = json.loads(settings.read_text())
    assert data["model"] == EXISTING["model"] and data["permissions"] == EXISTING["permissions"]
    assert data["hooks"]["Stop"] == EXISTING["hooks"]["Stop"]
    assert data["hooks"]["PreToolUse"][0] == {"matcher": "Bash", "hooks": [OTHER_HOOK]}
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        ours = [h for g in data["hooks"][event] for h in g["hooks"] if "hook claude-code" in h["command"]]
        assert ours == [{"type": "command", "command": our_command("claude-code"), "timeout": 30}]
        assert [g["matcher"] for g in data["hooks"][event] if g["hooks"][0] in ours] == ["*"]
    assert stat.S_IMODE(settings.stat().st_mode) == 0o644, "the file keeps its mode"
    backups = list(settings.parent.glob("settings.json.yarp-backup-*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == EXISTING
    assert stat.S_IMODE(backups[0].stat().st_mode) == 0o600
    before = settings.read_bytes()
    second = yarp(home, project, "hook", "install", "claude-code")
    assert second.returncode == 0 and second.stdout.startswith(b"already installed")
    assert settings.read_bytes() == before
    assert len(list(settings.parent.glob("settings.json.yarp-backup-*"))) == 1
    assert not list(settings.parent.glob("*.tmp-*"))


def test_uninstall_removes_exactly_our_entries(dirs):
    home, project = dirs
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING))
    assert yarp(home, project, "hook", "install", "claude-code").returncode == 0
    removed = yarp(home, project, "hook", "uninstall", "claude-code")
    assert removed.returncode == 0 and removed.stdout.startswith(b"removed 3 hook(s)")
    assert json.loads(settings.read_text()) == EXISTING
    again = yarp(home, project, "hook", "uninstall", "claude-code")
    assert again.stdout.startswith(b"not installed")


def test_a_shared_matcher_group_keeps_the_other_hooks(dirs):
    home, project = dirs
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    ours = {"type": "command", "command": "/opt/yarp/bin/yarp hook claude-code"}
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [OTHER_HOOK, ours]}]}}))
    assert yarp(home, project, "hook", "uninstall", "claude-code").returncode == 0
    assert json.loads(settings.read_text()) == {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [OTHER_HOOK]}]}}


def test_install_replaces_an_entry_for_a_moved_yarp(dirs):
    home, project = dirs
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    stale = {"type": "command", "command": "/old/venv/bin/yarp hook claude-code"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [stale]}]}}))
    assert yarp(home, project, "hook", "install", "claude-code").returncode == 0
    commands = [h["command"] for groups in json.loads(settings.read_text())["hooks"].values()
                for g in groups for h in g["hooks"]]
    assert commands == [our_command("claude-code")] * 3


def test_codex_project_scope_new_file_is_private(dirs):
    home, project = dirs
    result = yarp(home, project, "hook", "install", "codex", "--project")
    assert result.returncode == 0, result.stderr
    hooks = project / ".codex" / "hooks.json"
    data = json.loads(hooks.read_text())
    assert set(data["hooks"]) == {"PreToolUse", "PostToolUse", "Stop", "SessionEnd"}
    # The project's file is committed: its command runs the yarp on each machine's PATH.
    ours = {"type": "command", "command": "yarp hook codex", "timeout": 30}
    for event in ("PreToolUse", "PostToolUse"):
        assert data["hooks"][event] == [{"matcher": "", "hooks": [ours]}]
    for event in ("Stop", "SessionEnd"):
        assert data["hooks"][event] == [{"hooks": [ours]}], "Codex takes no matcher on these"
    assert stat.S_IMODE(hooks.stat().st_mode) == 0o600
    assert not list(hooks.parent.glob("*.yarp-backup-*")), "nothing to back up"
    assert not (home / ".codex").exists()
    assert yarp(home, project, "hook", "uninstall", "codex", "--project").returncode == 0
    assert not (project / ".codex").exists(), "the file and the folder install made are gone"


def test_codex_install_says_how_to_trust_and_follows_codex_home(dirs):
    home, project = dirs
    codex_home = project / "codex-home"
    first = yarp(home, project, "hook", "install", "codex", CODEX_HOME=str(codex_home))
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"installed: {codex_home / 'hooks.json'}\n".encode())
    # Untrusted hooks are skipped silently: the note names the way to trust them, not the obsolete flag.
    assert b"/hooks" in first.stdout and b"trust" in first.stdout and b"codex_hooks" not in first.stdout
    assert b"--dangerously-bypass-hook-trust" in first.stdout
    assert not (home / ".codex").exists()
    again = yarp(home, project, "hook", "install", "codex", CODEX_HOME=str(codex_home))
    assert again.stdout.startswith(b"already installed: ") and b"/hooks" in again.stdout
    default = yarp(home, project, "hook", "install", "codex")
    assert default.stdout.startswith(f"installed: {home / '.codex' / 'hooks.json'}\n".encode())


def test_gemini_entries_are_named_timed_in_ms_and_merged(dirs):
    home, project = dirs
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    theirs = {"security": {"auth": {"selectedType": "gemini-api-key"}},
              "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [OTHER_HOOK]}]}}
    settings.write_text(json.dumps(theirs))
    first = yarp(home, project, "hook", "install", "gemini")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"installed: {settings}\n".encode()) and b"trust" in first.stdout
    data = json.loads(settings.read_text())
    assert data["security"] == theirs["security"]
    ours = {"type": "command", "command": our_command("gemini"), "name": "yarp", "timeout": 30000}
    assert data["hooks"]["BeforeTool"] == [{"matcher": "write_file", "hooks": [OTHER_HOOK]},
                                           {"matcher": ".*", "hooks": [ours]}]
    assert data["hooks"]["AfterTool"] == [{"matcher": ".*", "hooks": [ours]}]
    assert yarp(home, project, "hook", "install", "gemini").stdout.startswith(b"already installed")
    removed = yarp(home, project, "hook", "uninstall", "gemini")
    assert removed.returncode == 0 and removed.stdout.startswith(b"removed 2 hook(s)")
    assert json.loads(settings.read_text()) == theirs
    # Gemini CLI's own home variable moves its user settings; --project is the project's.
    moved = project / "gemini-home"
    assert yarp(home, project, "hook", "install", "gemini", GEMINI_CLI_HOME=str(moved)).returncode == 0
    assert set(json.loads((moved / ".gemini" / "settings.json").read_text())["hooks"]) == {"BeforeTool", "AfterTool"}
    assert yarp(home, project, "hook", "install", "gemini", "--project").returncode == 0
    assert (project / ".gemini" / "settings.json").is_file()


@pytest.mark.parametrize("content", [b"{broken", b"[1, 2]", b'{"hooks": []}'])
def test_unreadable_settings_are_left_unchanged(dirs, content):
    home, project = dirs
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(content)
    result = yarp(home, project, "hook", "install", "claude-code")
    assert result.returncode == 65 and result.stderr.startswith(b"yarp: ")
    assert settings.read_bytes() == content
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_installed_command_runs_this_yarp(dirs):
    home, project = dirs
    assert yarp(home, project, "hook", "install", "claude-code").returncode == 0
    data = json.loads((home / ".claude" / "settings.json").read_text())
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(ROOT / "src"))
    result = subprocess.run(command + " --help", shell=True, env=env, capture_output=True, timeout=60, check=False)
    assert result.returncode == 0 and result.stdout.startswith(b"usage: yarp hook claude-code")


# --- --project, uninstall, backups ------------------------------------------------------------


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def test_project_hooks_run_on_every_machine_of_the_project(dirs, tmp_path):
    home, project = dirs
    # An older yarp wrote Claude Code's project hooks, with its own path, into the committed file.
    committed = project / ".claude" / "settings.json"
    committed.parent.mkdir()
    theirs = {"permissions": {"allow": ["Bash(make:*)"]}}
    older = {"type": "command", "command": "/home/someone/.venvs/y/bin/yarp hook claude-code", "timeout": 30}
    committed.write_text(json.dumps({**theirs, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [older]}]}}))
    for agent in ("claude-code", "codex", "gemini"):
        result = yarp(home, project, "hook", "install", agent, "--project")
        assert result.returncode == 0, result.stderr
    # Claude Code: this machine's own file (kept out of commits by Claude Code), with this yarp's path;
    # the committed file is left with the team's settings only.
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert {h["command"] for g in local["hooks"].values() for e in g for h in e["hooks"]} == {
        our_command("claude-code")}
    assert json.loads(committed.read_text()) == theirs
    # Codex and Gemini CLI have no such file: the committed one names no machine's path.
    commands = {}
    for agent, path in (("codex", project / ".codex" / "hooks.json"), ("gemini", project / ".gemini" / "settings.json")):
        found = {h["command"] for g in json.loads(path.read_text())["hooks"].values() for e in g for h in e["hooks"]}
        assert found == {f"yarp hook {agent}"} and str(tmp_path) not in path.read_text()
        commands[agent] = found.pop()
    # On a teammate's machine, whatever folder their yarp is in, the same command runs it.
    elsewhere = tmp_path / "teammate" / "bin"
    elsewhere.mkdir(parents=True)
    (elsewhere / "yarp").write_text(f"#!/bin/sh\nexec {sys.executable} -m yarp \"$@\"\n")
    (elsewhere / "yarp").chmod(0o755)
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(ROOT / "src"), PATH=f"{elsewhere}:/usr/bin:/bin")
    for agent, command in commands.items():
        ran = subprocess.run(command + " --help", shell=True, env=env, capture_output=True, timeout=60, check=False)
        assert ran.returncode == 0 and ran.stdout.startswith(f"usage: yarp hook {agent}".encode()), ran.stderr


@pytest.mark.parametrize("with_settings", [False, True], ids=["fresh", "with-settings"])
def test_uninstalling_every_agent_leaves_the_tree_as_install_found_it(dirs, tmp_path, with_settings):
    home, project = dirs
    if with_settings:  # the user's own settings files, formatted their way
        for base, name in ((home, ".claude/settings.json"), (home, ".codex/hooks.json"), (home, ".gemini/settings.json"),
                           (project, ".claude/settings.local.json"), (project, ".gemini/settings.json")):
            (base / name).parent.mkdir(exist_ok=True)
            (base / name).write_text("{\n    \"model\": \"theirs\"\n}\n")
    before = _tree(tmp_path)
    agents = ("claude-code", "codex", "gemini", "pi", "opencode")
    for scope in ("--user", "--project"):
        for agent in agents:
            assert yarp(home, project, "hook", "install", agent, scope).returncode == 0
    assert _tree(tmp_path) != before
    for scope in ("--user", "--project"):
        for agent in agents:
            result = yarp(home, project, "hook", "uninstall", agent, scope)
            assert result.returncode == 0 and result.stdout.startswith(b"removed"), result.stdout
    assert _tree(tmp_path) == before, "no {} file, no backup, no folder left behind; the user's bytes back"


def test_backups_are_kept_bounded(dirs):
    home, project = dirs
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING))
    for round_ in range(6):
        # A yarp that moved (an upgrade into another venv): each install replaces the entry, backing up.
        data = json.loads(settings.read_text())
        for groups in data["hooks"].values():
            for group in groups:
                for entry in group["hooks"]:
                    if entry["command"].endswith("hook claude-code"):
                        entry["command"] = f"/old/{round_}/bin/yarp hook claude-code"
        settings.write_text(json.dumps(data))
        result = yarp(home, project, "hook", "install", "claude-code")
        assert result.returncode == 0 and b"backup: " in result.stdout
    kept = sorted(settings.parent.glob("settings.json.yarp-backup-*"))
    assert len(kept) == 3, [p.name for p in kept]
    # The newest are kept: the oldest backup (the user's file before any yarp) went first.
    assert all("/old/" in p.read_text() for p in kept)
    assert yarp(home, project, "hook", "uninstall", "claude-code").returncode == 0
    assert json.loads(settings.read_text()) == EXISTING
    assert not list(settings.parent.glob("settings.json.yarp-backup-*")), "backups of ours plus these settings go"


# --- the Pi extension ------------------------------------------------------------------------

HOOKS = ROOT / "src" / "yarp" / "agents"  # each adapter's folder, and ts/ beside them


def _pi_folder(home: Path) -> Path:
    return home / ".pi" / "agent" / "extensions" / "yarp"


def test_pi_install_copies_the_shipped_extension_and_names_this_yarp(dirs):
    home, project = dirs
    result = yarp(home, project, "hook", "install", "pi")
    assert result.returncode == 0, result.stderr
    folder = _pi_folder(home)
    assert f"installed: {folder}".encode() in result.stdout
    shared = sorted(f"ts/{path.name}" for path in (HOOKS / "ts").glob("*.ts"))
    assert shared, "the adapters' shared TypeScript is missing"
    for name in ("pi/index.ts", "pi/extension.ts", *shared):
        assert (folder / name).read_bytes() == (HOOKS / name).read_bytes()
    # The view is the broker's: no cap, and none of the data a cap would read, is copied.
    assert sorted(p.name for p in (folder / "ts").iterdir()) == sorted(path.name for path in (HOOKS / "ts").glob("*.ts"))
    # Pi loads the folder through its manifest, which names the entry inside pi/.
    assert json.loads((folder / "package.json").read_text())["pi"] == {"extensions": ["./pi/index.ts"]}
    record = json.loads((folder / "yarp-install.json").read_text())
    # Run as `python -m yarp` (no console script on this PATH): a launcher of exactly that.
    assert record["yarpArgv"] == [sys.executable, "-m", "yarp"]
    launcher = Path(record["yarpBin"])
    assert launcher.parent == folder and os.access(launcher, os.X_OK)
    version = subprocess.run([str(launcher), "--version"], env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                             capture_output=True, text=True, timeout=60)
    assert version.stdout.startswith("yarp ")
    again = yarp(home, project, "hook", "install", "pi")
    assert again.returncode == 0 and b"already installed" in again.stdout


def test_pi_install_follows_the_agent_dir_and_the_project_scope(dirs, tmp_path):
    home, project = dirs
    agent_dir = tmp_path / "pi-agent"
    assert yarp(home, project, "hook", "install", "pi", PI_CODING_AGENT_DIR=str(agent_dir)).returncode == 0
    assert (agent_dir / "extensions" / "yarp" / "pi" / "index.ts").is_file()
    assert yarp(home, project, "hook", "install", "pi", "--project").returncode == 0
    assert (project / ".pi" / "extensions" / "yarp" / "pi" / "index.ts").is_file()
    assert not _pi_folder(home).exists()


def test_pi_install_refuses_what_it_did_not_install(dirs, tmp_path):
    home, project = dirs
    folder = _pi_folder(home)
    folder.parent.mkdir(parents=True)
    folder.symlink_to(tmp_path)  # an install from a checkout, the old way
    result = yarp(home, project, "hook", "install", "pi")
    assert result.returncode == 65 and b"symbolic link" in result.stderr
    folder.unlink()
    folder.mkdir()
    (folder / "index.ts").write_text("// someone else's\n")
    result = yarp(home, project, "hook", "install", "pi")
    assert result.returncode == 65 and b"not installed by yarp" in result.stderr
    assert (folder / "index.ts").read_text() == "// someone else's\n"
    assert yarp(home, project, "hook", "uninstall", "pi").returncode == 65


def test_pi_reinstall_replaces_an_older_copy_and_uninstall_keeps_the_users_files(dirs):
    home, project = dirs
    assert yarp(home, project, "hook", "install", "pi").returncode == 0
    folder = _pi_folder(home)
    record = json.loads((folder / "yarp-install.json").read_text())
    # As an older yarp left it: other bytes, and a file this one no longer ships, recorded.
    digest = __import__("hashlib").sha256(b"// older\n").hexdigest()
    for name in ("content.ts", "cap.ts"):
        (folder / "ts" / name).write_text("// older\n")
        record["files"][f"ts/{name}"] = digest
    (folder / "yarp-install.json").write_text(json.dumps(record))
    result = yarp(home, project, "hook", "install", "pi")
    assert result.returncode == 0 and b"installed:" in result.stdout
    assert (folder / "ts" / "content.ts").read_bytes() == (HOOKS / "ts" / "content.ts").read_bytes()
    assert not (folder / "ts" / "cap.ts").exists()
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".yarp-")]
    # A file the user added blocks a reinstall (it would be lost) and survives uninstall.
    (folder / "notes.txt").write_text("mine\n")
    blocked = yarp(home, project, "hook", "install", "pi")
    assert blocked.returncode == 0 and b"already installed" in blocked.stdout
    (folder / "ts" / "content.ts").write_text("// edited by the user\n")
    blocked = yarp(home, project, "hook", "install", "pi")
    assert blocked.returncode == 65 and b"changed or added" in blocked.stderr
    removed = yarp(home, project, "hook", "uninstall", "pi")
    assert removed.returncode == 0 and b"kept 2 file(s)" in removed.stdout
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == ["notes.txt", "ts/content.ts"]
    # What is left is the user's alone: yarp no longer claims the folder.
    again = yarp(home, project, "hook", "uninstall", "pi")
    assert again.returncode == 65 and b"not installed by yarp" in again.stderr
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == ["notes.txt", "ts/content.ts"]


# --- the opencode plugin -----------------------------------------------------------------------


def test_opencode_install_copies_the_plugin_writes_its_entry_and_uninstall_removes_both(dirs, tmp_path):
    home, project = dirs
    config = tmp_path / "config"
    result = yarp(home, project, "hook", "install", "opencode", XDG_CONFIG_HOME=str(config))
    assert result.returncode == 0, result.stderr
    folder = config / "opencode" / "yarp"
    shared = sorted(f"ts/{path.name}" for path in (HOOKS / "ts").glob("*.ts"))
    for name in ("opencode/plugin.ts", *shared):
        assert (folder / name).read_bytes() == (HOOKS / name).read_bytes()
    assert not (folder / "ts" / "salience.json").exists()
    # opencode loads only files directly in plugin/, and every function such a file exports is a plugin.
    entry = (config / "opencode" / "plugin" / "yarp.ts").read_text()
    exports = [line for line in entry.splitlines() if line.startswith("export")]
    assert exports == ['export { YarpPlugin } from "../yarp/opencode/plugin.ts"']
    assert b"already installed" in yarp(home, project, "hook", "install", "opencode",
                                         XDG_CONFIG_HOME=str(config)).stdout
    # An entry file of someone else's is never overwritten.
    (config / "opencode" / "plugin" / "yarp.ts").write_text("export const Mine = async () => ({})\n")
    refused = yarp(home, project, "hook", "install", "opencode", XDG_CONFIG_HOME=str(config))
    assert refused.returncode == 65 and b"not written by yarp" in refused.stderr
    (config / "opencode" / "plugin" / "yarp.ts").write_text(entry)
    removed = yarp(home, project, "hook", "uninstall", "opencode", XDG_CONFIG_HOME=str(config))
    assert removed.returncode == 0, removed.stderr
    assert not folder.exists() and not (config / "opencode" / "plugin" / "yarp.ts").exists()
    project_scope = yarp(home, project, "hook", "install", "opencode", "--project")
    assert project_scope.returncode == 0 and (project / ".opencode" / "plugin" / "yarp.ts").is_file()
    assert (project / ".opencode" / "yarp" / "opencode" / "plugin.ts").is_file()
