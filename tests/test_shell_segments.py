"""Compound planning: where `yarp run` goes in a compound command, in which mode, and what stays.

Each case is the exact rewritten text: the planner only inserts prefixes in
front of command names, so any other change to the text fails here. Whether
a rewrite keeps the shell's meaning when run is proven by the equivalence
harness (tests/test_shell_equivalence.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from yarp.view.plan import ArchiveIdentity, plan_command, result_argv
from yarp.view.rules import command_argv, load_rules, select_rule

SRC = os.path.join(os.path.dirname(__file__), os.pardir, "src")
V = "yarp run -- "
P = "yarp run --pass -- "


@pytest.fixture(scope="module")
def rules():
    return load_rules()


SEGMENTED = {
    # lists: the agent's shell keeps cd, export and the flow
    "cd pkg && npm test": f"cd pkg && {V}npm test",
    "cd a; make || echo failed": f"cd a; {V}make || echo failed",
    "export CI=1 && npm test": f"export CI=1 && {V}npm test",
    "npm test; echo \"exit=$?\"": f"{V}npm test; echo \"exit=$?\"",
    "git status\ngit diff": f"{V}git status\n{V}git diff",
    # assignments stay in front: the shell gives them to yarp, which hands them on
    "FOO=1 pytest -q": f"FOO=1 {V}pytest -q",
    # pipelines: producers pass their bytes through, the last command is viewed
    "grep -n X f | head -30": f"{P}grep -n X f | {V}head -30",
    "cd p && npm run check 2>&1 | tail -10": f"cd p && {P}npm run check 2>&1 | {V}tail -10",
    "a |& b": f"{P}a |& {V}b",
    "! grep -q x f | cat": f"! {P}grep -q x f | {V}cat",
    # redirections into files pass; 2>&1 and /dev/null do not need to
    "git log > out.txt": f"{P}git log > out.txt",
    "make >> build.log 2>&1": f"{P}make >> build.log 2>&1",
    "pytest 2>&1": f"{V}pytest 2>&1",
    "ls missing 2>/dev/null": f"{V}ls missing 2>/dev/null",
    "cmd 2> err.txt": f"{P}cmd 2> err.txt",
    "cmd &> all.txt": f"{P}cmd &> all.txt",
    "cmd >&3": f"{P}cmd >&3",
    "sort < in.txt": f"{V}sort < in.txt",
    # substitutions run first and are read by the shell: pass
    "git log $(git rev-parse HEAD)": f"{V}git log $({P}git rev-parse HEAD)",
    "x=$(date +%s)": f"x=$({P}date +%s)",
    "diff <(sort a) b": f"{V}diff <({P}sort a) b",
    # subshells and groups keep their destination
    "(cd sub && make)": f"(cd sub && {V}make)",
    "{ make; make test; } > log": f"{{ {P}make; {P}make test; }} > log",
    "if grep -q x f; then make; fi": f"if {V}grep -q x f; then {V}make; fi",
    # here-documents: their bodies are left exactly as written
    "cat <<'EOF' > f.txt\n$(not run)\nEOF": f"{P}cat <<'EOF' > f.txt\n$(not run)\nEOF",
    # a loop's header runs once; its body stays in the shell
    "for f in $(git ls-files); do wc -l \"$f\"; done": f"for f in $({P}git ls-files); do wc -l \"$f\"; done",
    "seq 3 | while read -r x; do echo $x; done": f"{P}seq 3 | while read -r x; do echo $x; done",
    # a here-document's command that writes into a pipe passes (tree-sitter nests the pipe in the redirection)
    "python3 - <<'PY' | tail -5\nprint(1)\nPY": f"{P}python3 - <<'PY' | {V}tail -5\nprint(1)\nPY",
    "cat <<EOF | grep x > out\na\nEOF\n": f"{P}cat <<EOF | {P}grep x > out\na\nEOF\n",
    # a redirection in front of the name is the command's
    ">out seq 2; ls": f">out {P}seq 2; {V}ls",
    "FOO=1 2>err ls /nope": f"FOO=1 2>err {P}ls /nope",
    # after `exec >log` nothing writes to the agent directly
    "exec >log 2>&1; seq 5000; ls": f"exec >log 2>&1; {P}seq 5000; {P}ls",
    # the keyword `time` times what it wraps
    "time make": f"time {V}make",
    # wrappers that run one command are programs like any other (alone: wrapped whole, below)
    "find . -name '*.py' | xargs wc -l": f"{P}find . -name '*.py' | {V}xargs wc -l",
    "./scripts/check.sh --fast # comment": f"{V}./scripts/check.sh --fast # comment",
    # a function defined in the text runs in the shell, its body exactly as written
    "f() { ls; }; f | wc -l": f"f() {{ ls; }}; f | {V}wc -l",
    # an alias defined in the text is the shell's
    "shopt -s expand_aliases\nalias grep='grep -i'\ngrep -c x f; ls": "shopt -s expand_aliases\nalias grep='grep -i'\ngrep -c x f; " + V + "ls",
}


@pytest.mark.parametrize("text, expected", SEGMENTED.items(), ids=[repr(k)[:40] for k in SEGMENTED])
def test_segments(rules, text, expected):
    plan = plan_command(text, rules, compound=True)
    assert (plan.execution, plan.wrapped, plan.command) == ("rewrite", "segments", expected)
    assert plan.segments == expected.count("yarp run")
    assert not plan.requires_streams


WHOLE = ["git status", "ls -la", "npm test", "seq 1 100000", "  pytest -q  ", "~/bin/tool --x",
         "timeout 60 pytest", "env CI=1 npm test", "sh -c 'make | tail'"]


@pytest.mark.parametrize("text", WHOLE)
def test_one_simple_command_is_wrapped_whole(rules, text):
    plan = plan_command(text, rules, compound=True)
    assert (plan.execution, plan.wrapped, plan.command) == ("rewrite", "whole", V + text)
    assert plan.requires_streams and plan.to_json()["execution"]["wrapped"] == "whole"


LEFT = {
    "cd src": ((), "nothing_to_wrap"),
    "export A=1; unset B": ((), "nothing_to_wrap"),
    'echo "=== done ==="': ((), "nothing_to_wrap"),  # output given by the text itself
    "echo $HOME": (("builtin",), "nothing_to_wrap"),
    "pwd": (("builtin",), "nothing_to_wrap"),
    "for f in *.ts; do wc -l \"$f\"; done": (("loop",), "nothing_to_wrap"),
    "until curl -s localhost:8000; do sleep 1; done": (("loop", "loop"), "nothing_to_wrap"),
    "$CMD --all": (("dynamic_name",), "nothing_to_wrap"),
    "sudo make install": (("sudo",), "nothing_to_wrap"),
    # background commands stay in the shell: `$!` is theirs, and `kill $!` reaches them
    "sleep 30 & pid=$!; kill $pid": (("background",), "nothing_to_wrap"),
    "coproc seq 3": (("coproc",), "nothing_to_wrap"),
    "time ! false": (("time",), "nothing_to_wrap"),
    "time FOO=1 seq 2": (("time",), "nothing_to_wrap"),
    "YARP_CONFIG=/x seq 2": (("interpreter_environment",), "nothing_to_wrap"),
    "XDG_RUNTIME_DIR=/nonexistent seq 2": (("interpreter_environment",), "nothing_to_wrap"),
    "HOME=/tmp/h make": (("interpreter_environment",), "nothing_to_wrap"),
    "exec make": (("exec",), "nothing_to_wrap"),
    "PYTHONPATH=src pytest": (("interpreter_environment",), "nothing_to_wrap"),
    "set -x; make": (("xtrace",), "xtrace"),
    "set -euo pipefail; set -o xtrace; make": (("xtrace",), "xtrace"),
    "shopt -so xtrace; make": (("xtrace",), "xtrace"),
    'eval "set -x"; make': (("xtrace",), "xtrace"),
    "trap 'echo failed: $BASH_COMMAND' ERR; git checkout nope": (("xtrace",), "xtrace"),
    "trap 'date' DEBUG; make": (("xtrace",), "xtrace"),
    "count() { grep -c \"$1\" \"$2\"; }; count x f": (("function",), "nothing_to_wrap"),
    "echo 'unterminated": ((), "syntax_error"),
}


@pytest.mark.parametrize("text, expected", LEFT.items(), ids=[repr(k)[:40] for k in LEFT])
def test_left_in_the_shell(rules, text, expected):
    plan = plan_command(text, rules, compound=True)
    assert plan.execution == "original" and plan.command is None
    assert (plan.unwrapped, plan.reason) == expected


def test_set_without_trace_flags_is_fine(rules):
    plan = plan_command("set -euo pipefail; make", rules, compound=True)
    assert plan.command == f"set -euo pipefail; {V}make"


def test_recovery_commands_are_left_and_classed(rules):
    plan = plan_command("cd /w && yarp search yr_0 'FAILED' | head", rules, compound=True)
    assert plan.result == "ordinary"  # piped into head: head's output is the result
    plan = plan_command("cd /w && /opt/bin/yarp read yr_0 stdout 1:5", rules, compound=True)
    assert (plan.execution, plan.result) == ("original", "recovery")


def test_archive_identity_names_the_parent_call(rules):
    identity = ArchiveIdentity.from_flags("pi", "me", "s 1", "call'1")
    plan = plan_command("cd x && make | tail -3", rules, identity, launcher="'/opt/y b/yarp'", compound=True)
    flags = "--archive-agent 'pi' --archive-account 'me' --archive-session 's 1' --archive-parent 'call'\\''1'"
    assert plan.command == f"cd x && '/opt/y b/yarp' run {flags} --pass -- make | '/opt/y b/yarp' run {flags} -- tail -3"
    whole = plan_command("make", rules, identity, launcher="'/opt/yarp'", compound=True)
    assert whole.command == ("'/opt/yarp' run --archive-agent 'pi' --archive-account 'me' --archive-session 's 1' "
                             "--archive-call 'call'\\''1' -- make")


def test_reference_planning_is_unchanged(rules):
    """Without `compound`, adapters written for the reference get the reference's answer."""
    assert plan_command("cd x && git status", rules).execution == "original"
    assert plan_command("git status", rules).to_json() == {
        "version": 1, "execution": {"kind": "rewrite", "command": "yarp run -- git status"}, "result": {"kind": "ordinary"}}


@pytest.mark.parametrize("text, argv", [
    ("cd x && pytest -q 2>&1 | tail -5", ["tail", "-5"]),
    ("cd sub && seq 1 100000", ["seq", "1", "100000"]),
    ("(cd a; make)", ["make"]),
    ("FOO=1 git status", ["git", "status"]),
    ("echo $x", None),
    ("x=1", None),
    ("echo 'unterminated", None),
])
def test_result_argv(text, argv):
    assert result_argv(text) == argv


@pytest.mark.parametrize("argv, inner", [
    (["timeout", "60", "pytest", "-x"], ["pytest", "-x"]),
    (["timeout", "-s", "KILL", "10", "cargo", "test"], ["cargo", "test"]),
    (["env", "CI=1", "npm", "test"], ["npm", "test"]),
    (["nice", "-n", "5", "make"], ["make"]),
    (["nohup", "stdbuf", "-oL", "pytest"], ["pytest"]),
    (["timeout"], ["timeout"]),
    (["pytest"], ["pytest"]),
])
def test_wrappers_are_looked_through_for_rules(rules, argv, inner):
    assert list(command_argv(argv)) == inner


def test_a_wrapped_test_run_gets_the_test_rule(rules):
    assert select_rule(["timeout", "60", "pytest", "-q"], rules) is select_rule(["pytest", "-q"], rules) is not None


def _yarp(*args, home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YARP_", "XDG_"))}
    env.update(PYTHONPATH=SRC, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    return subprocess.run([sys.executable, "-m", "yarp", *args], capture_output=True, env=env, timeout=60)


def test_plan_and_rewrite_commands_take_compound_and_launcher(tmp_path):
    done = _yarp("plan", "--json", "--compound", "--launcher", "'/x/yarp'", "--archive-agent", "pi",
                 "--archive-account", "a", "--archive-session", "s", "--archive-call", "c", "--", "cd x && make",
                 home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["execution"] == {
        "kind": "rewrite", "wrapped": "segments",
        "command": "cd x && '/x/yarp' run --archive-agent 'pi' --archive-account 'a' --archive-session 's' "
                   "--archive-parent 'c' -- make"}
    rewrite = _yarp("rewrite", "--compound", "--", "ls | wc -l", home=tmp_path)
    assert rewrite.stdout == f"{P}ls | {V}wc -l\n".encode()
    human = _yarp("plan", "--compound", "--", "cd x && echo $Y && make", home=tmp_path).stdout.decode()
    assert "wrapped: segments (1 command(s))" in human and "left in the shell: builtin" in human


def test_a_sourced_file_that_cannot_be_read_leaves_later_commands_in_the_shell(rules, tmp_path):
    """`. ./lib.sh` may define `git`: without reading it, nothing after it is wrapped."""
    plan = plan_command("make; . ./lib.sh; git status; ls", rules, compound=True)
    assert plan.command == f"{V}make; . ./lib.sh; git status; ls"
    assert plan.unwrapped == ("sourced", "sourced")
    assert plan_command('eval "$(direnv export bash)"; make', rules, compound=True).command == \
        f'eval "$({P}direnv export bash)"; make'


def test_a_sourced_file_is_read_for_the_functions_it_defines(rules, tmp_path):
    (tmp_path / "lib.sh").write_text("git() { echo mine; }\nalias ll='ls -l'\nexport X=1\n")
    (tmp_path / "activate").write_text("deactivate() { :; }\nexport PATH=/venv/bin:$PATH\n")
    (tmp_path / "chain.sh").write_text(". ./other.sh\n")
    plan = plan_command(". ./lib.sh && git status && ll && make", rules, compound=True, cwd=str(tmp_path))
    assert plan.command == f". ./lib.sh && git status && ll && {V}make"
    plan = plan_command("source activate && pytest -q", rules, compound=True, cwd=str(tmp_path))
    assert plan.command == f"source activate && {V}pytest -q"
    # A `cd` before it makes the relative path unknown; a file that sources more is not followed.
    assert plan_command("cd sub && source activate && pytest", rules, compound=True,
                        cwd=str(tmp_path)).unwrapped == ("sourced",)
    assert plan_command(". ./chain.sh; make", rules, compound=True, cwd=str(tmp_path)).unwrapped == ("sourced",)
