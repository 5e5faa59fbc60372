"""Shell planning on a table of commands, and `yarp plan` / `rewrite` / `config show` as processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from yarp.limits import MAX_COMMAND_BYTES
from yarp.view.plan import ArchiveIdentity, plan_command, shell_quote, simple_argv
from yarp.view.rules import load_rules

SRC = os.path.join(os.path.dirname(__file__), os.pardir, "src")


@pytest.fixture(scope="module")
def rules():
    return load_rules()


REWRITTEN = [
    "git status",
    "git log -n 5",
    "pytest -x 'tests/test a.py'",
    'pytest -k "not slow"',
    "cargo test --offline",
    "  git diff HEAD~1  ",
    "ls -laR src",
    "grep -rn TODO src\\ dir",
    "git log \\\n  -n 3",
    "find . -name '*.py'",
    "ls -R *.py",  # globs are expanded by the shell running the rewritten text
]

ORIGINAL = {
    "git status | head": "pipeline",
    "git status > out.txt": "redirected_statement",
    "pytest 2>&1": "redirected_statement",
    "git log $(cat ref)": "command_substitution",
    "git log `cat ref`": "command_substitution",
    'git log "$REF"': "expansion",
    "git log $REF": "simple_expansion",
    "git status && git diff": "list",
    "git status || true": "list",
    "git status; git diff": "list",
    "git status\ngit diff": "list",
    "(git status)": "subshell",
    "{ git status; }": "compound_statement",
    "cat <<EOF\nx\nEOF\n": "redirected_statement",
    "FOO=1 pytest": "assignment",
    "sudo make": "wrapper",
    "env CI=1 pytest": "wrapper",
    "xargs grep foo": "wrapper",
    "time pytest": "wrapper",
    "nohup make": "wrapper",
    "timeout 10 pytest": "wrapper",
    "yarp run -- git status": "yarp",
    "git status # note": "comment",
    "git status &": "list",
    "if true; then make; fi": "if_statement",
    "for f in a; do make; done": "for_statement",
    "$CMD status": "dynamic_name",
    "git status --porcelain": "passthrough",
    "frobnicate --all": "unknown",
    "cd src": "unknown",
    "echo 'unterminated": "syntax_error",
    "": "empty",
    "   ": "empty",
}


@pytest.mark.parametrize("text", REWRITTEN)
def test_rewritten(rules, text):
    plan = plan_command(text, rules)
    assert plan.execution == "rewrite" and plan.result == "ordinary"
    assert plan.command == "yarp run -- " + text  # original text unchanged
    assert plan.to_json() == {"version": 1, "execution": {"kind": "rewrite", "command": plan.command}, "result": {"kind": "ordinary"}}


@pytest.mark.parametrize("text, reason", ORIGINAL.items(), ids=[repr(k)[:40] for k in ORIGINAL])
def test_left_alone(rules, text, reason):
    plan = plan_command(text, rules)
    assert plan.execution == "original" and plan.command is None
    assert plan.reason == reason
    assert plan.to_json()["execution"] == {"kind": "original"}


@pytest.mark.parametrize("text", ["yarp search yr_0 'FAILED'", "/usr/local/bin/yarp read yr_0 stdout 1:5"])
def test_recovery_commands(rules, text):
    plan = plan_command(text, rules)
    assert plan.to_json() == {"version": 1, "execution": {"kind": "original"}, "result": {"kind": "recovery"}}


def test_literal_words_are_decoded(rules):
    argv, reason = simple_argv("""git log 'a b' "c\\"d" e\\ f g"h"'i'""")
    assert reason == "simple" and argv == ["git", "log", "a b", 'c"d', "e f", "ghi"]


def test_archive_flags_are_single_quoted(rules):
    identity = ArchiveIdentity.from_flags("pi", "me", "s 1", "call'1")
    plan = plan_command("git status", rules, identity)
    assert plan.command == (
        "yarp run --archive-agent 'pi' --archive-account 'me' --archive-session 's 1' "
        "--archive-call 'call'\\''1' -- git status"
    )
    assert shell_quote("it's") == "'it'\\''s'"


def test_text_that_is_not_utf8_is_left_alone(rules):
    for text in ("ls \udcff", "echo \ud800"):
        assert plan_command(text, rules).execution == "original"
        plan = plan_command(text, rules, compound=True)
        assert (plan.execution, plan.reason) == ("original", "not_utf8")


def test_bounds(rules):
    long = "git log " + "a" * MAX_COMMAND_BYTES
    assert plan_command(long, rules).reason == "too_large"
    nested = "echo " + "$(" * 200 + "x" + ")" * 200
    assert plan_command(nested, rules).execution == "original"


def _yarp(*args, stdin=None, env_extra=None, home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YARP_", "XDG_"))}
    env.update(PYTHONPATH=SRC, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".data"))
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "yarp", *args], input=stdin, capture_output=True, env=env, timeout=60)


def test_plan_command_json(tmp_path):
    done = _yarp("plan", "--json", "--archive-agent", "pi", "--archive-account", "a", "--archive-session", "s",
                 "--archive-call", "c", "--", "git diff", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "version": 1,
        "execution": {"kind": "rewrite", "command": "yarp run --archive-agent 'pi' --archive-account 'a' --archive-session 's' --archive-call 'c' -- git diff"},
        "result": {"kind": "ordinary"},
    }
    piped = _yarp("plan", "--json", stdin=b"git status | wc -l\n", home=tmp_path)
    assert json.loads(piped.stdout)["execution"] == {"kind": "original"}
    stdin_rewrite = _yarp("plan", "--json", stdin=b"git status\n", home=tmp_path)
    assert json.loads(stdin_rewrite.stdout)["execution"]["command"] == "yarp run -- git status"


def test_rewrite_command(tmp_path):
    assert _yarp("rewrite", "--", "pytest -q", home=tmp_path).stdout == b"yarp run -- pytest -q\n"
    assert _yarp("rewrite", "--", "pytest -q | tail", home=tmp_path).stdout == b"pytest -q | tail\n"


def test_user_pack_from_config_changes_the_plan(tmp_path):
    pack = tmp_path / "pack.toml"
    pack.write_text('version = 1\n[[rule]]\nid = "mine/deploy"\nprogram = ["deploy"]\naction = "reduce"\nreducer = "build"\n')
    (tmp_path / ".config" / "yarp").mkdir(parents=True)
    (tmp_path / ".config" / "yarp" / "config.toml").write_text(f'version = 1\n[rules]\npacks = ["{pack}"]\n')
    assert _yarp("rewrite", "deploy --prod", home=tmp_path).stdout == b"yarp run -- deploy --prod\n"
    pack.write_text("version = 1\n[[rule]]\nbogus = 1\n")
    bad = _yarp("rewrite", "deploy --prod", home=tmp_path)
    assert bad.returncode == 64 and bad.stderr.startswith(b"yarp: invalid rule file (rules.packs[0], rule 1)")


@pytest.mark.parametrize("args", [
    ("plan", "--json", "--archive-agent", "pi", "git status"),  # archive flags are all or none
    ("plan", "--archive-agent", "", "--archive-account", "a", "--archive-session", "s", "--archive-call", "c", "ls"),
    ("plan", "--bogus"),
    ("rewrite", "--nope"),
    ("config", "show", "--yaml"),
])
def test_usage_errors_exit_64(tmp_path, args):
    done = _yarp(*args, home=tmp_path)
    assert done.returncode == 64
    assert done.stderr.startswith(b"yarp: ") and done.stderr.count(b"\n") == 1


def test_config_show(tmp_path):
    done = _yarp("config", "show", "--json", home=tmp_path)
    assert done.returncode == 0
    shown = json.loads(done.stdout)
    assert shown == {
        "version": 1,
        "pruning": {"enabled": True},
        "output": {"cap_bytes": 5120, "recovery_cap_bytes": 32768, "recovery_cap_lines": 1900},
        "archive": {"enabled": True, "path": str(tmp_path / ".data" / "yarp" / "tool-calls.sqlite3")},
        "rules": {"packs": []},
    }
    human = _yarp("config", "show", home=tmp_path).stdout.decode().splitlines()
    assert human[:4] == [f"# configuration file: {tmp_path / '.config' / 'yarp' / 'config.toml'} does not exist;"
                         " these are the defaults", "version = 1", "pruning.enabled = true", "output.cap_bytes = 5120"]
    assert f'archive.path = "{tmp_path / ".data" / "yarp" / "tool-calls.sqlite3"}"' in human
    (tmp_path / ".config" / "yarp").mkdir(parents=True)
    (tmp_path / ".config" / "yarp" / "config.toml").write_text("version = 1\n[output]\ncap_bytes = 10\n")
    bad = _yarp("config", "show", "--json", home=tmp_path)
    assert bad.returncode == 64 and b"cap_bytes" in bad.stderr


def test_commands_have_help(tmp_path):
    for args in (("plan", "--help"), ("rewrite", "--help"), ("config", "show", "--help")):
        done = _yarp(*args, home=tmp_path)
        assert done.returncode == 0 and b"usage: yarp" in done.stdout


def test_run_path_does_not_import_tree_sitter():
    code = ("import sys; import yarp.view.rules, yarp.view.reducers, yarp.view.cap; "
            "print(any(m.startswith('tree_sitter') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, env={**os.environ, "PYTHONPATH": SRC})
    assert done.stdout.strip() == b"False"
