"""The aliases and functions of the agent's shell stay in it: names read from Claude Code's snapshot.

The snapshots here are written by a real bash the way the agent writes them
(`declare -f` quoted by `printf %q`, `alias` lines with `--`), and a real
PreToolUse event goes through the warm broker.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from yarp.hooks.shell_snapshot import defined_names, shell_names, snapshot_folder
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
