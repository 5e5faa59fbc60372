"""Every command takes its options before or after its positional arguments.

Each command has a sample here (a new command without one fails
`test_every_command_has_a_sample`): its positionals and its options, parsed
both ways round through `yarp.cli.parse_arguments`, the function `yarp` itself
parses with, must give the same arguments. Commands whose positional is a
command line (`run`, `plan`, `rewrite`) take theirs after `--`, and everything
there belongs to that command line. A few real processes prove the same from
the outside.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from archive_factory import yarp_env
from shared_data import shared_path

from yarp.cli import COMMANDS, load_command, parse_arguments
from yarp.errors import UsageError

REF = "yr_0123456789abcdef0123456789abcdef"
#: command path -> (positionals, options): both orders must parse alike.
SAMPLES: dict[tuple[str, ...], tuple[list[str], list[str]]] = {
    ("search",): ([REF, "needle"], ["-F", "-i", "-C", "3", "--json"]),
    ("calls",): ([], ["--tool", "shell", "--since", "2026-01-01", "-n", "5", "--json"]),
    ("show",): ([REF], ["--json", "--color", "never"]),
    ("read",): ([REF, "stdout", "1:5"], ["--json"]),
    ("restore",): ([REF, "stdout"], ["--output", "out.bin", "--json"]),
    ("config", "show"): ([], ["--json"]),
    ("archive", "stats"): ([], ["--json", "--archive", "/tmp/a.sqlite3"]),
    ("archive", "savings"): ([], ["--by", "program", "--top", "3", "--json"]),
    ("archive", "export"): (["out-dir"], ["--format", "parquet", "--json", "--since", "2026-01-01T00:00:00Z"]),
    ("archive", "verify"): ([], ["--json"]),
    ("archive", "prune"): ([], ["--before", "2026-01-01T00:00:00Z"]),
    ("archive", "restore"): ([], ["--archive-agent", "a", "--archive-account", "b", "--archive-session", "s",
                                  "--archive-call", "c"]),
    ("archive", "ingest"): ([], ["--archive", "/tmp/a.sqlite3"]),
    ("archive", "broker"): (["status"], ["--json"]),
    ("hook", "install"): (["pi"], ["--project"]),
    ("hook", "uninstall"): (["codex"], ["--user"]),
    ("import",): (["pi", "sessions/a.jsonl", "sessions/b.jsonl"], ["--json", "--dry-run", "--settle", "0"]),
    ("doctor",): ([], ["--json"]),
}
#: Commands whose positional is a command line: options first, then `--` and the command, whose own
#: options stay its own.
COMMAND_LINES = {("run",), ("plan",), ("rewrite",)}


def test_every_command_has_a_sample():
    assert set(COMMANDS) == set(SAMPLES) | COMMAND_LINES


@pytest.mark.parametrize("path", sorted(SAMPLES), ids=lambda p: " ".join(p))
def test_options_parse_the_same_before_and_after_positionals(path):
    positionals, options = SAMPLES[path]
    module = load_command(path)
    first = vars(parse_arguments(path, module, options + positionals))
    after = vars(parse_arguments(path, module, positionals + options))
    assert first == after
    # The sample sets something: a parse that dropped the options would compare equal too.
    try:
        bare = vars(parse_arguments(path, module, positionals))
    except UsageError:  # an option the command requires
        bare = None
    assert first != bare or not options


@pytest.mark.parametrize("argv", [
    [REF, "--json", "--", "-x"], ["--json", REF, "--", "-x"], ["--json", "--", REF, "-x"], [REF, "--", "-x"],
], ids=["option-after-ref", "option-first", "all-after-separator", "no-option"])
def test_options_anywhere_before_the_separator_and_words_after_it_positional(argv):
    args = parse_arguments(("search",), load_command(("search",)), argv)
    assert (args.ref, args.pattern, args.json) == (REF, "-x", "--json" in argv)


def test_a_word_after_the_separator_is_never_an_option():
    path = ("import",)
    for argv in (["pi", "--json", "--", "-odd.jsonl"], ["--json", "--", "pi", "-odd.jsonl"]):
        args = parse_arguments(path, load_command(path), argv)
        assert args.json is True and args.targets == ["pi", "-odd.jsonl"], argv
    args = parse_arguments(path, load_command(path), ["pi", "--", "--json"])
    assert args.json is False and args.targets == ["pi", "--json"]


@pytest.mark.parametrize("path", sorted(COMMAND_LINES), ids=lambda p: " ".join(p))
def test_a_command_line_keeps_its_own_options(path):
    module = load_command(path)
    args = parse_arguments(path, module, ["--archive-agent", "a", "--", "ls", "-la", "--json"])
    assert args.command[-3:] == ["ls", "-la", "--json"]
    assert args.archive_agent == "a"


def _yarp(home, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "yarp", *argv], env=yarp_env(home), capture_output=True,
                          timeout=120, text=True)


def test_import_takes_json_after_the_agent_and_its_files(tmp_path):
    sessions = shared_path("data", "pi-sessions")
    files = sorted(str(p) for p in sessions.glob("*.jsonl"))
    if not files:
        pytest.skip("the shared Pi sessions are absent")
    for argv in (["import", "pi", "--json", "--dry-run", *files], ["import", "pi", *files, "--dry-run", "--json"]):
        result = _yarp(tmp_path, *argv)
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["files"] == len(files) and summary["callsFound"] > 0


def test_plan_keeps_a_commands_own_flags_after_the_separator(tmp_path):
    result = _yarp(tmp_path, "plan", "--", "git", "diff", "--json")
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    assert lines["execution"] == "rewrite", "the command's --json was not taken as plan's own"
    assert lines["command"].endswith(" -- git diff --json")
