"""The aliases and functions of the agent's shell stay in it: names read from Claude Code's snapshot.

The snapshots here are written by a real bash the way the agent writes them
(`declare -f` quoted by `printf %q`, `alias` lines with `--`), and a real
PreToolUse event goes through the warm broker.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys

import pytest

from yarp.agents.claude_code.broker.shell_snapshot import defined_names, exported_path, shell_names, snapshot_folder
from yarp.view.plan import plan_command
from yarp.view.rules import load_rules

BASH_SNAPSHOT = r"""
nvm() { echo "nvm $*"; }
-weird() { :; }
alias ll='ls -l'
alias python=python3
{
  echo '# Functions'
  declare -F | while read -r f; do
    f=${f##* }
    if [[ "$f" == [-+]* ]]; then printf 'eval -- %q > /dev/null 2>&1\n' "$(declare -f -- "$f")"
    else printf 'eval %q > /dev/null 2>&1\n' "$(declare -f "$f")"; fi
  done
  echo '# Aliases'
  alias | sed -e 's/^alias //' -e 's/^/alias -- /'
} > "$1"
"""


def _bash_snapshot(path) -> str:
    subprocess.run(["bash", "-c", BASH_SNAPSHOT, "bash", str(path)], check=True, timeout=30)
    return path.read_text()


def test_names_from_a_snapshot_bash_wrote(tmp_path):
    text = _bash_snapshot(tmp_path / "snapshot-bash-1-abc.sh")
    assert {"nvm", "-weird", "ll", "python"} <= defined_names(text)
    assert "echo" not in defined_names(text) and "ls" not in defined_names(text)


def test_base64_encoded_functions(tmp_path):
    """Newer snapshots keep each function as `eval "$(echo '<base64>' | base64 -d)"`."""
    body = subprocess.run(["bash", "-c", "git() { echo mine; }; declare -f git"], capture_output=True, text=True,
                          check=True).stdout
    encoded = base64.b64encode(body.encode()).decode()
    text = f"eval \"$(echo '{encoded}' | base64 -d)\" > /dev/null 2>&1\nalias -- ll='ls -l'\n"
    assert defined_names(text) == {"git", "ll"}
    assert defined_names("eval \"$(echo 'not base64!' | base64 -d)\"\n") == frozenset()


def test_zsh_style_definitions():
    text = "# Functions\nconda () {\n\tcommand conda \"$@\"\n}\n# Aliases\nalias -- gs='git status'\n"
    assert defined_names(text) == {"conda", "gs"}


def test_the_newest_snapshot_beside_the_transcripts_is_read(tmp_path):
    config = tmp_path / ".claude"
    folder = config / "shell-snapshots"
    folder.mkdir(parents=True)
    old = folder / "snapshot-bash-1-aaa.sh"
    old.write_text("alias -- old='true'\n")
    os.utime(old, (1, 1))
    _bash_snapshot(folder / "snapshot-bash-2-bbb.sh")
    (folder / "snapshot-bash-3-ccc.sh").symlink_to(old)  # never followed
    transcript = config / "projects" / "-w-proj" / "session.jsonl"
    assert snapshot_folder(str(transcript)) == str(folder)
    names = shell_names(str(transcript))
    assert "nvm" in names and "old" not in names
    assert shell_names(str(tmp_path / "nowhere" / "projects" / "x" / "s.jsonl")) == frozenset()


def test_the_plan_leaves_shell_names_in_the_shell():
    rules = load_rules()
    names = frozenset({"nvm", "ll"})
    plan = plan_command("nvm use 20 && npm test && ll", rules, compound=True, shell_names=names)
    assert plan.command == "nvm use 20 && yarp run -- npm test && ll"
    assert plan_command("ll", rules, compound=True, shell_names=names).execution == "original"


def test_the_snapshot_path_is_read_unquoted(tmp_path):
    text = subprocess.run(["bash", "-c", "printf 'export PATH=%q\\n' \"$1\"", "bash", "/opt/my tools/bin:/usr/bin"],
                          capture_output=True, text=True, check=True).stdout
    assert exported_path("# Snapshot\n" + text) == "/opt/my tools/bin:/usr/bin"
    assert exported_path("no path here\n") is None


def test_names_the_path_cannot_find_stay_in_the_shell(tmp_path):
    """The shell reports a missing program in its own words: `bash: line 1: code: command not found`."""
    rules = load_rules()
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "mytool").write_text("#!/bin/sh\necho hi\n")
    (tools / "mytool").chmod(0o755)
    (tools / "notexec").write_text("x")
    path = f"{tools}:/usr/bin:/bin"
    plan = plan_command("code x.json; mytool && ls && notexec && ./local.sh", rules, compound=True, search_path=path)
    assert plan.command == "code x.json; yarp run -- mytool && yarp run -- ls && notexec && yarp run -- ./local.sh"
    assert plan.unwrapped == ()
    # Without a known PATH every name is wrapped, as before.
    assert plan_command("code x.json", rules, compound=True).command == "yarp run -- code x.json"


def test_yarp_plan_looks_names_up_on_its_own_path(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YARP_", "XDG_"))}
    env.update(PYTHONPATH=os.path.join(os.path.dirname(__file__), os.pardir, "src"), HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / ".config"))
    done = subprocess.run([sys.executable, "-m", "yarp", "rewrite", "--compound", "--", "nosuchtool-x && ls"],
                          capture_output=True, env=env, timeout=60)
    assert done.stdout == b"nosuchtool-x && yarp run -- ls\n", done.stderr
