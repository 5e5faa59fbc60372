"""Shell equivalence harness: a rewritten command must mean exactly what the original meant.

For every command of a corpus (the real Pi sessions' bash commands and the Claude
Code / Codex forms in `tests/vectors/shell_forms.txt`) the planner's rewrite is
computed, then the original and the rewritten text each run as `bash -c TEXT` in
an identical, freshly copied scratch world (a small git project, a home and a
temporary directory at the same absolute paths, the same environment, standard
input from /dev/null, standard output and error to two files). The two runs are
compared on:

- the exit status;
- the visible stdout and stderr, each byte for byte (the view is disabled:
  `output.cap_bytes = 0`, `pruning.enabled = false`);
- the final file tree of project, home and temporary directory: paths, types,
  permission bits, contents, link targets (mtimes are not compared; a git
  index is compared by its entries, `git ls-files --stage`, not by its bytes,
  whose stat cache holds inode numbers and change times of the fresh copy);
- the shell's final state, written by an EXIT trap prepended to both texts:
  working directory, exported environment, shell variables (all but the
  ones that differ between any two runs: pids, clocks, random numbers, and
  the command text itself), functions, options, `shopt`, umask, traps,
  directory stack and `PIPESTATUS`.

The rewritten run's archive is then checked: every `yarp run` that started
(logged by a `yarp` launcher on PATH that records its arguments, working
directory and the targets of fds 1 and 2, then runs YARP's own entry point in
the same process) has exactly one finished call with that argv and cwd; each
call's stdout/stderr `before` equals its `after` (nothing may be shortened
with the view disabled); and where fd 1 or 2 of the run was the harness's own
capture file, what it emitted appears there (contiguously, or line by line in
order when both fds shared the file). `yarp archive verify` must pass at the
end.

When the two runs differ, the original is run once more; a difference between
two plain runs marks the command `unstable` (nondeterministic here), not
`different`.

Nothing here needs pytest except the network namespace (`netns.py`).
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SRC = REPO / "src"
FORMS_FILE = TESTS / "vectors" / "shell_forms.txt"
#: The Pi corpus's project root; both corpora use it and it becomes the scratch project's path.
PROJECT_TOKEN = "/Users/badlogic/workspaces/pi-mono"
#: `/tmp/…` at the start of a word becomes the scratch temporary directory (both runs alike).
TMP_WORD = re.compile(r"(?<![\w./~-])/tmp/")
PER_COMMAND_TIMEOUT = 20.0
FIXED_DATE = "2025-01-02T03:04:05+00:00"
FIXED_EPOCH = 1735787045
#: Shell variables left out of the comparison. Pids, clocks and random numbers differ between any two
#: runs of one text; BASH_EXECUTION_STRING and BASH_COMMAND hold the text (or its last command) itself;
#: BASH_CMDS is the command hash table, which holds `yarp` wherever a wrapped command was looked up.
VOLATILE_VARIABLES = frozenset({
    "BASH_EXECUTION_STRING", "BASH_COMMAND", "BASH_CMDS", "BASHPID", "PPID", "RANDOM", "SRANDOM", "SECONDS",
    "EPOCHSECONDS", "EPOCHREALTIME",
})
STATE_FILES = ("status", "pwd", "env", "vars", "funcs", "opts", "shopt", "umask", "traps", "dirs")


def _on_path(folder: Path) -> None:
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def _python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


# --- corpora ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """One command of a corpus: where it comes from and its text as recorded."""

    corpus: str
    id: str
    text: str
    note: str = ""


def pi_session_files(shared_dir: Path | None = None) -> list[Path]:
    """The recorded Pi session logs, or [] when the shared data is absent."""
    if shared_dir is None:
        _on_path(TESTS)
        from shared_data import shared_path

        folder = shared_path("data", "pi-sessions")
    else:
        folder = shared_dir / "data" / "pi-sessions"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def load_pi_corpus(files: Iterable[Path] | None = None) -> list[Case]:
    """Every `bash` tool call's command in the recorded Pi sessions, in order."""
    cases = []
    for path in (pi_session_files() if files is None else files):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            entry = json.loads(line)
            message = entry.get("message") or {}
            if entry.get("type") != "message" or message.get("role") != "assistant":
                continue
            for item in message.get("content") or []:
                if (isinstance(item, dict) and item.get("type") == "toolCall" and item.get("name") == "bash"
                        and isinstance((item.get("arguments") or {}).get("command"), str)):
                    cases.append(Case("pi", f"{path.stem}:{number}:{item.get('id')}", item["arguments"]["command"]))
    return cases


def load_forms_corpus(path: Path = FORMS_FILE) -> list[Case]:
    """The forms file: one JSON object per line (`id`, `source`, `cmd`); `#` lines and blank lines are comments."""
    cases = []
    seen = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        record = json.loads(line)
        if not isinstance(record.get("cmd"), str) or not record.get("id") or record["id"] in seen:
            raise ValueError(f"{path.name}:{number}: a record needs a unique id and a string cmd")
        seen.add(record["id"])
        cases.append(Case("forms", record["id"], record["cmd"], record.get("source", "")))
    return cases


# --- plans ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PlanInfo:
    """What a rewriter decided for one text (the fields of `yarp.view.plan.ShellPlan` the harness uses)."""

    execution: str
    command: str | None
    reason: str
    segments: int
    unwrapped: tuple[str, ...]
    planner_has_unwrapped: bool = True
    wrapped: str | None = None  # `whole` (one simple command, alone) or `segments`

    @property
    def text_to_run(self) -> str | None:
        """The rewritten text, or None when the original runs."""
        return self.command if self.execution == "rewrite" else None

    @property
    def covers_all_output(self) -> bool:
        """Every output-producing simple command is wrapped (the planner's `unwrapped` is empty)."""
        return not self.unwrapped


#: A rewriter plans one text; `search_path` is the `PATH` the text will run with (the agent's).
Rewriter = Callable[..., PlanInfo]


def yarp_rewriter(rules=None) -> Rewriter:
    """The repository's planner with compound wrapping, looking names up on the runs' `PATH`.

    Older signatures are tried in turn (without `search_path`, then without keywords). Without the
    `unwrapped` field, an original command counts as one unwrapped command with the plan's reason, and a
    rewritten one as fully wrapped.
    """
    _on_path(SRC)
    from yarp.view.plan import plan_command
    from yarp.view.rules import load_rules

    loaded = load_rules([]) if rules is None else rules

    def rewrite(text: str, search_path: str | None = None) -> PlanInfo:
        try:
            plan = plan_command(text, loaded, None, launcher="yarp", compound=True, search_path=search_path)
        except TypeError:
            try:
                plan = plan_command(text, loaded, None, launcher="yarp", compound=True)
            except TypeError:
                plan = plan_command(text, loaded, None)
        has = hasattr(plan, "unwrapped")
        if has:
            unwrapped = tuple(plan.unwrapped)
        else:
            unwrapped = () if plan.execution == "rewrite" else (plan.reason,)
        segments = getattr(plan, "segments", 1 if plan.execution == "rewrite" else 0)
        return PlanInfo(plan.execution, plan.command, plan.reason, segments, unwrapped, has,
                        getattr(plan, "wrapped", None))

    return rewrite


# --- the scratch world ------------------------------------------------------------------------

_CHECK = ("echo 'Checked 14 files in 4ms. No fixes applied.'"
          " && echo 'packages/tui/src/components/markdown.ts:3:7 lint/style/useConst: prefer const' >&2"
          " && echo 'tsgo --noEmit: 0 errors'")
_BUILD = ("echo 'building packages/tui' && echo 'warning: option importsNotUsedAsValues is deprecated' >&2"
          " && echo 'building packages/coding-agent' && echo 'built 2 packages'")
_TEST = "python3 tests/run_tests.py && echo 'tests done'"

PROJECT_FILES = {
    "package.json": json.dumps({
        "name": "pi-monorepo", "version": "0.7.2", "private": True, "type": "module",
        "workspaces": ["packages/*"],
        "scripts": {"check": _CHECK, "build": _BUILD, "test": _TEST},
    }, indent=2) + "\n",
    "README.md": "# pi-mono\n\nTools for building AI agents.\n",
    ".gitignore": "node_modules/\ndist/\n*.log\n",
    "tests/run_tests.py": (
        "import sys\nimport unittest\n\n# Like `unittest -v`, without timings: the same lines on every run.\n"
        "suite = unittest.defaultTestLoader.discover('tests')\nresult = unittest.TestResult()\nsuite.run(result)\n"
        "for test in suite:\n    for case in test:\n        print(case.id(), '... ok', file=sys.stderr)\n"
        "print(f'Ran {result.testsRun} tests')\nprint('OK' if result.wasSuccessful() else 'FAILED')\n"
        "sys.exit(0 if result.wasSuccessful() else 1)\n"),
    "tools/greet.py": ('#!/usr/bin/env python3\n"""Greeting helper."""\n\n\n'
                       'def greet(name):\n    return f"hello, {name}"\n\n\n'
                       'if __name__ == "__main__":\n    print(greet("pi"))\n'),
    "tests/test_greet.py": ("import sys\nimport unittest\n\nsys.path.insert(0, 'tools')\nfrom greet import greet\n\n\n"
                            "class GreetTest(unittest.TestCase):\n    def test_greet(self):\n"
                            "        self.assertEqual(greet('x'), 'hello, x')\n\n    def test_upper(self):\n"
                            "        self.assertEqual(greet('X').upper(), 'HELLO, X')\n"),
    "packages/coding-agent/package.json": json.dumps({
        "name": "@mariozechner/pi-coding-agent", "version": "0.7.2", "type": "module",
        # Not in the (empty) npm cache: `npm install` fails the same way every time instead of timing itself.
        "dependencies": {"chalk": "^5.3.0"},
        "scripts": {
            "check": "echo 'coding-agent: tsgo --noEmit' && echo 'src/main.ts(12,7): warning TS6133' >&2 && echo ok",
            "build": "echo 'tsgo -p tsconfig.build.json' && echo 'copied 3 theme files' && echo 'build ok' >&2",
            "test": "echo 'vitest run' && echo ' ✓ test/agent-session.test.ts (3 tests)' && echo ' 1 passed'",
        },
    }, indent=2) + "\n",
    "packages/coding-agent/README.md": "# coding-agent\n\n## Slash Commands\n\n/theme, /model, /export\n",
    "packages/coding-agent/CHANGELOG.md": "# Changelog\n\n## [0.7.2]\n\n- Themes.\n\n## [0.7.1]\n\n- Fixes.\n",
    "packages/coding-agent/docs/refactor.md": "# Refactor\n\n## WP1: bash executor\n\n## WP6: queue mode\n",
    "packages/coding-agent/docs/theme.md": "# Themes\n\n### Backgrounds & Content Text\n\nTotal: 43 color tokens\n",
    "packages/coding-agent/src/main.ts": (
        'import { AgentSession } from "./core/agent-session.js";\n'
        'import { TuiRenderer } from "./tui/tui-renderer.js";\n\n'
        "async function runSingleShotMode(session: AgentSession) {\n\treturn session;\n}\n\n"
        "function buildSystemPrompt(cwd: string): string {\n\tconst systemPrompt = `cwd: ${cwd}`;\n"
        "\treturn systemPrompt;\n}\n\n"
        "export async function main(args: string[]) {\n\tconst agent = new Agent();\n"
        "\tawait runSingleShotMode(agent);\n}\n"),
    "packages/coding-agent/src/core/agent-session.ts": (
        "import type { AppMessage } from \"@mariozechner/pi-agent\";\n\nexport class AgentSession {\n"
        "\tprivate messages: AppMessage[] = [];\n\tasync prompt(text: string) {\n"
        "\t\tthis.messages.push({ role: \"user\", text });\n\t}\n"
        "\tunsubscribeAll() {}\n\tresubscribe() {}\n\ttokensAfter = 0;\n}\n"),
    "packages/coding-agent/src/tui/tui-renderer.ts": (
        "import chalk from \"chalk\";\n\nexport class TuiRenderer {\n\tconstructor(private agent: unknown) {}\n"
        "\tprivate showThemeSelector() {\n\t\tconsole.log(chalk.dim(\"Preview theme\"));\n\t}\n"
        "\tprivate updatePendingMessagesDisplay() {\n\t\tconsole.log(chalk.bold(\"pending\"));\n\t}\n}\n"),
    "packages/coding-agent/src/theme/theme.ts": (
        "export let theme = loadTheme(\"dark\");\n"
        "export function setTheme(name: string) {\n\ttheme = loadTheme(name);\n}\n"
        "export function loadTheme(name: string) {\n\treturn { name };\n}\n"
        "function fgAnsi(r: number) {\n\treturn `\\x1b[38;5;${r}m`;\n}\n"),
    "packages/coding-agent/src/theme/dark.json": json.dumps(
        {"name": "dark", "vars": {"cyan": "#00d7ff", "gray": "#808080"}, "colors": {"muted": "gray", "mdCode": "cyan"}},
        indent=2) + "\n",
    "packages/coding-agent/src/theme/light.json": json.dumps(
        {"name": "light", "vars": {"blue": "#0000ff"}, "colors": {"muted": "blue", "mdCode": "blue"}}, indent=2) + "\n",
    "packages/tui/package.json": json.dumps({
        "name": "@mariozechner/pi-tui", "version": "0.7.2", "type": "module",
        "scripts": {
            "build": "echo 'tsgo -p tsconfig.build.json' && echo 'tui built'",
            "test": "echo 'node --test' && echo '# tests 4' && echo '# fail 0' && echo 'done' >&2",
        },
    }, indent=2) + "\n",
    "packages/tui/src/index.ts": 'export { Editor, type EditorTheme } from "./components/editor.js";\n'
                                 'export { Markdown, type MarkdownTheme } from "./components/markdown.js";\n',
    "packages/tui/src/components/markdown.ts": (
        "export interface MarkdownTheme {\n\tcode: (s: string) => string;\n\tlink: (s: string) => string;\n}\n"
        "export class Markdown {\n"
        "\tconstructor(text: string, paddingX: number, paddingY: number, theme?: MarkdownTheme) {}\n"
        "\tinvalidate() {}\n}\n"),
    "packages/tui/src/components/text.ts": "export class Text {\n\tconstructor(text: string) {}\n}\n",
    "packages/tui/src/components/editor.ts": ("export interface EditorTheme {\n\tborderColor: string;\n}\n"
                                              "export class Editor {}\n"),
    "packages/tui/test/markdown.test.ts": (
        'import { Markdown } from "../src/components/markdown.js";\n\nconst a = new Markdown("# hi", 0, 0);\n'
        'const b = new Markdown(\n\t"text",\n\t1,\n\t0,\n);\n'),
    "packages/tui/test/editor.test.ts": ('import { Editor } from "../src/components/editor.js";\n\n'
                                         'const e = new Editor();\n'),
}
EXECUTABLE = {"tools/greet.py"}
HOME_FILES = {
    ".gitconfig": "[user]\n\tname = Pi Developer\n\temail = dev@example.invalid\n[init]\n\tdefaultBranch = main\n"
                  "[advice]\n\tdetachedHead = false\n",
    ".pi/agent/settings.json": '{"theme": "dark"}\n',
}


def _write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.chmod(path, 0o755 if rel in EXECUTABLE else 0o644)


def run_environment(root: Path, yarp_dir: Path) -> dict[str, str]:
    """The environment both runs get (identical); every path is under the worker's root."""
    return {
        "PATH": f"{root / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(root / "home"),
        "USER": "root" if os.geteuid() == 0 else os.environ.get("USER", "user"),
        "LOGNAME": "root" if os.geteuid() == 0 else os.environ.get("USER", "user"),
        "SHELL": "/bin/bash",
        "TMPDIR": str(root / "tmp"),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "GIT_AUTHOR_DATE": FIXED_DATE,
        "GIT_COMMITTER_DATE": FIXED_DATE,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "npm_config_offline": "true",
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
        "npm_config_logs_max": "0",
        "npm_config_cache": str(root / "home" / ".npm"),
        "YARP_ARCHIVE": str(yarp_dir / "data" / "tool-calls.sqlite3"),
        "YARP_CONFIG": str(yarp_dir / "config.toml"),
        "YARP_BROKER_IDLE_MS": "600000",
        "XDG_RUNTIME_DIR": str(yarp_dir / "run"),
        "XDG_DATA_HOME": str(yarp_dir / "xdata"),
        "XDG_CONFIG_HOME": str(yarp_dir / "xconfig"),
        "XDG_CACHE_HOME": str(yarp_dir / "xcache"),
        "XDG_STATE_HOME": str(yarp_dir / "xstate"),
    }


def build_template(base: Path) -> Path:
    """The pristine world every run starts from: `project/` (a git repository), `home/`, `tmp/`."""
    template = base / "template"
    project, home = template / "project", template / "home"
    _write_files(project, PROJECT_FILES)
    _write_files(home, HOME_FILES)
    (template / "tmp").mkdir()
    env = run_environment(template, base / "unused")
    env["PATH"] = "/usr/bin:/bin"
    git = ["git", "-c", "core.fsync=none"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "Initial import"],
                 ["tag", "v0.7.2"], ["checkout", "-q", "-b", "feature/themes"],
                 ["checkout", "-q", "main"]):
        subprocess.run(git + args, cwd=project, env=env, check=True, stdout=subprocess.DEVNULL)
    for dirpath, dirnames, filenames in os.walk(template, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (FIXED_EPOCH, FIXED_EPOCH), follow_symlinks=False)
    os.utime(template, (FIXED_EPOCH, FIXED_EPOCH))
    return template


# --- one run ------------------------------------------------------------------------------------


@dataclasses.dataclass
class RunResult:
    """What one `bash -c` run left behind."""

    status: int | str
    stdout: bytes
    stderr: bytes
    tree: dict
    state: dict
    seconds: float
    invocations: list = dataclasses.field(default_factory=list)


def trap_prefix(meta: Path) -> str:
    """The EXIT trap prepended (on its own line) to both texts; it writes the final shell state under `meta`."""
    m = {name: _sq(str(meta / name)) for name in STATE_FILES}
    volatile = "|".join(sorted(VOLATILE_VARIABLES))
    body = (
        '__yse_s=$? __yse_p="${PIPESTATUS[*]}"; '
        f'builtin printf "%s\\n%s\\n" "$__yse_s" "$__yse_p" >| {m["status"]}; '
        f'builtin pwd >| {m["pwd"]}; '
        f'/usr/bin/env -0 >| {m["env"]}; '
        f'for __yse_v in $(builtin compgen -v); do case $__yse_v in {volatile}|__yse_v) ;; '
        f'*) builtin declare -p "$__yse_v" 2>/dev/null;; esac; done >| {m["vars"]}; '
        f'builtin declare -f >| {m["funcs"]}; '
        f'builtin set +o >| {m["opts"]}; '
        f'builtin shopt -p >| {m["shopt"]}; '
        f'builtin umask >| {m["umask"]}; '
        f'builtin trap -p >| {m["traps"]}; '
        f'builtin dirs -l -p >| {m["dirs"]}'
    )
    return f"trap {_sq(body)} EXIT\n"


def _sq(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def snapshot_tree(root: Path, parts: Iterable[str] = ("project", "home", "tmp")) -> dict:
    """path -> (type, permission bits, content or sha256 or link target); git indexes by their entries."""
    tree = {}
    for part in parts:
        top = root / part
        if not top.exists():
            tree[part] = ("missing",)
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            tree[os.path.relpath(dirpath, root)] = ("dir", stat.S_IMODE(os.lstat(dirpath).st_mode))
            for name in sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                st = os.lstat(path)
                mode = stat.S_IMODE(st.st_mode)
                if stat.S_ISLNK(st.st_mode):
                    tree[rel] = ("link", os.readlink(path))
                elif stat.S_ISREG(st.st_mode):
                    if name == "index" and os.path.basename(dirpath) == ".git":
                        tree[rel] = ("git-index", mode, _git_index_entries(dirpath))
                    else:
                        with open(path, "rb") as handle:
                            data = handle.read()
                        tree[rel] = ("file", mode, data if len(data) <= 4096 else hashlib.sha256(data).hexdigest())
                else:
                    tree[rel] = ("other", stat.S_IFMT(st.st_mode), mode)
    return tree


def _git_index_entries(git_dir: str) -> bytes:
    done = subprocess.run(["git", "--git-dir", git_dir, "ls-files", "--stage", "-z"], capture_output=True,
                          env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"})
    return done.stdout + b"\0status=" + str(done.returncode).encode()


def _read_state(meta: Path) -> dict:
    state = {}
    for name in STATE_FILES:
        try:
            state[name] = (meta / name).read_bytes()
        except FileNotFoundError:
            state[name] = None
    return state


def _read_invocations(log: Path) -> list[dict]:
    try:
        text = log.read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return []
    return [ast.literal_eval(line) for line in text.splitlines() if line.strip()]


# --- workers ----------------------------------------------------------------------------------------

SHIM = '''#!{python}
# `yarp` for the equivalence harness: note this invocation, then run YARP's own entry point in this process.
import os, sys
def _fd(n):
    try:
        return os.readlink("/proc/self/fd/%d" % n)
    except OSError:
        return None
def _cwd():
    try:
        return os.getcwd()
    except OSError:
        return None
_fd1, _fd2 = _fd(1), _fd(2)
try:
    _same = os.path.samestat(os.fstat(1), os.fstat(2))
except OSError:
    _same = False
_line = repr({{"argv": sys.argv[1:], "cwd": _cwd(), "fd1": _fd1, "fd2": _fd2, "same": _same, "pid": os.getpid()}})
_h = os.open({log!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
os.write(_h, (_line + "\\n").encode("utf-8", "surrogateescape"))
os.close(_h)
sys.path.insert(0, {src!r})
from yarp.cli import main
sys.argv[0] = "yarp"
sys.exit(main())
'''


class Worker:
    """One worker's fixed root: the scratch world's paths, its `yarp` launcher, its archive and broker."""

    def __init__(self, base: Path, index: int, template: Path) -> None:
        self.root = base / f"w{index}"
        self.template = template
        self.yarp_dir = base / f"y{index}"
        self.io = base / f"io{index}"
        self.meta = self.io / "meta"
        for path in (self.root, self.yarp_dir, self.io, self.meta, self.root / "bin"):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        for sub in ("data", "run", "xdata", "xconfig", "xcache", "xstate"):
            (self.yarp_dir / sub).mkdir(mode=0o700, exist_ok=True)
        (self.yarp_dir / "config.toml").write_text(
            "version = 1\n[pruning]\nenabled = false\n[output]\ncap_bytes = 0\n", encoding="utf-8")
        self.log = self.io / "invocations"
        shim = self.root / "bin" / "yarp"
        shim.write_text(SHIM.format(python=_python(), log=str(self.log), src=str(SRC)), encoding="utf-8")
        os.chmod(shim, 0o755)
        self.env = run_environment(self.root, self.yarp_dir)
        self.archive = self.env["YARP_ARCHIVE"]
        self.broker: subprocess.Popen | None = None
        self.last_call_id = 0

    @property
    def project(self) -> Path:
        """The scratch project's absolute path (the same for every run of this worker)."""
        return self.root / "project"

    def substitute(self, text: str) -> str:
        """The corpus text with the recorded project path and `/tmp/` pointed into the scratch world."""
        text = TMP_WORD.sub(str(self.root / "tmp") + "/", text)
        return text.replace(PROJECT_TOKEN, str(self.project))

    def start_broker(self, attempts: int = 3) -> None:
        """A warm broker for this worker's archive, in its own session (killed by `close`)."""
        env = dict(self.env)
        env["PYTHONPATH"] = str(SRC)
        log = self.io / "broker.log"
        problem = ""
        for _ in range(attempts):
            with open(log, "wb") as handle:
                self.broker = subprocess.Popen(
                    [_python(), "-m", "yarp", "archive", "broker", "--foreground", "--archive", self.archive],
                    env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=handle,
                    start_new_session=True, cwd=str(self.yarp_dir))
            end = time.monotonic() + 30
            while time.monotonic() < end:
                if self.broker.poll() is not None:
                    problem = f"broker exited with {self.broker.returncode}: " + log.read_text(errors="replace")[-2000:]
                    break
                if b'"event":"ready"' in log.read_bytes():
                    return
                time.sleep(0.02)
            else:
                problem = "broker did not become ready in 30 s"
                self.broker.kill()
                self.broker.wait()
            time.sleep(0.5)
        raise RuntimeError(problem)

    def reset(self) -> None:
        """A fresh copy of the template at the same paths, and empty run files."""
        for part in ("project", "home", "tmp"):
            shutil.rmtree(self.root / part, ignore_errors=True)
            if (self.root / part).exists() or (self.root / part).is_symlink():
                subprocess.run(["rm", "-rf", str(self.root / part)], check=False)
        subprocess.run(["cp", "-a", f"{self.template}/project", f"{self.template}/home", f"{self.template}/tmp",
                        str(self.root)], check=True)
        os.utime(self.root, (FIXED_EPOCH, FIXED_EPOCH))
        for path in list(self.meta.iterdir()) + [self.log, self.io / "stdout", self.io / "stderr"]:
            try:
                path.unlink()
            except FileNotFoundError:
                pass

    def run(self, text: str, timeout: float = PER_COMMAND_TIMEOUT, merged: bool = False) -> RunResult:
        """`bash -c TRAP+text` in a fresh world; stdin /dev/null, stdout and stderr to two files, or with
        `merged` both to one open file (as an agent that shows one combined output in arrival order reads them)."""
        self.reset()
        script = trap_prefix(self.meta) + text
        started = time.monotonic()
        with open(self.io / "stdout", "wb") as out, open(self.io / "stderr", "wb") as err:
            proc = subprocess.Popen(["/bin/bash", "-c", script], cwd=str(self.project), env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=out if merged else err,
                                    start_new_session=True)
            try:
                status: int | str = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc.pid)
                proc.wait()
                status = "timeout"
            _kill_group(proc.pid)  # anything the command left running in the background
        seconds = time.monotonic() - started
        if isinstance(status, int) and status < 0:
            status = f"signal {-status}"
        return RunResult(status, (self.io / "stdout").read_bytes(), (self.io / "stderr").read_bytes(),
                         snapshot_tree(self.root), _read_state(self.meta), seconds, _read_invocations(self.log))

    def new_calls(self) -> list[dict]:
        """Calls archived since the previous look, with their input and stream snapshots."""
        _on_path(SRC)
        from yarp.archive.codec import decode_body

        if not os.path.exists(self.archive):
            return []
        conn = sqlite3.connect(f"file:{self.archive}?mode=ro", uri=True)
        try:
            rows = conn.execute(
                "SELECT c.id, c.archive_ref, c.status, c.executed, c.requires_streams, s.agent"
                " FROM tool_calls c JOIN sessions s ON s.id = c.session_id WHERE c.id > ? ORDER BY c.id",
                (self.last_call_id,)).fetchall()
            calls = []
            for call_id, ref, status, executed, requires, agent in rows:
                snaps = {}
                for subject, stage, compression, body, length, sha in conn.execute(
                        "SELECT s.subject, s.stage, p.compression, p.body, p.uncompressed_byte_length, p.sha256"
                        " FROM snapshots s JOIN payloads p ON p.sha256 = s.payload_sha256 WHERE s.tool_call_id = ?",
                        (call_id,)):
                    data = decode_body(compression, body, length)
                    if hashlib.sha256(data).digest() != bytes(sha):
                        raise AssertionError(f"payload of call {call_id} {subject}/{stage} does not hash to its key")
                    snaps[(subject, stage)] = data
                calls.append({"id": call_id, "ref": ref, "status": status, "executed": executed,
                              "requires_streams": requires, "agent": agent, "snapshots": snaps})
                self.last_call_id = call_id
            return calls
        finally:
            conn.close()

    def verify(self) -> subprocess.CompletedProcess:
        """`yarp archive verify` on this worker's archive."""
        env = dict(self.env)
        env["PYTHONPATH"] = str(SRC)
        return subprocess.run([_python(), "-m", "yarp", "archive", "verify", "--archive", self.archive],
                              env=env, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)

    def close(self) -> None:
        """Kill this worker's broker and any other broker serving its archive (by pid)."""
        pids = set(_broker_pids(self.archive))
        if self.broker is not None:
            pids.add(self.broker.pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.broker is not None:
            self.broker.wait(10)


def _broker_pids(archive: str) -> list[int]:
    needle = archive.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:
            continue
        if b"broker" in args and needle in args and b"status" not in args:
            found.append(int(name))
    return found


# --- comparison -------------------------------------------------------------------------------------


def _show(data: bytes | None, at: int, width: int = 60) -> str:
    if data is None:
        return "absent"
    start = max(0, at - 20)
    return repr(data[start:start + width])


def _first_difference(a: bytes, b: bytes) -> int:
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def compare_bytes(label: str, plain: bytes | None, rewritten: bytes | None) -> list[str]:
    """One line naming where two byte strings first differ, or []."""
    if plain == rewritten:
        return []
    if plain is None or rewritten is None:
        return [f"{label}: plain {_show(plain, 0)} vs rewritten {_show(rewritten, 0)}"]
    at = _first_difference(plain, rewritten)
    return [f"{label}: {len(plain)} vs {len(rewritten)} bytes, first difference at byte {at}: "
            f"plain {_show(plain, at)} vs rewritten {_show(rewritten, at)}"]


def _split_env(data: bytes | None) -> dict | None:
    if data is None:
        return None
    out = {}
    for item in data.split(b"\0"):
        if item:
            key, _, value = item.partition(b"=")
            out[key] = value
    return out


def _dict_differences(label: str, plain: dict | None, rewritten: dict | None) -> list[str]:
    if plain == rewritten:
        return []
    if plain is None or rewritten is None:
        return [f"{label}: plain {'absent' if plain is None else 'present'} vs rewritten "
                f"{'absent' if rewritten is None else 'present'}"]
    lines = []
    for key in sorted(set(plain) | set(rewritten), key=repr):
        if plain.get(key) != rewritten.get(key):
            lines.append(f"{label} {key!r}: plain {_brief(plain.get(key))} vs rewritten {_brief(rewritten.get(key))}")
    return lines


def _brief(value) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _vars(data: bytes | None) -> dict | None:
    if data is None:
        return None
    out = {}
    for line in data.split(b"\n"):
        match = re.match(rb"declare (-\S+) ([^=\s]+)(=?.*)", line)
        if match:
            out[match.group(2)] = match.group(1) + b" " + match.group(3)
    return out


def compare_runs(plain: RunResult, rewritten: RunResult) -> list[str]:
    """Every way the rewritten run's outcome differs from the plain one's (empty: equivalent)."""
    diffs = []
    if plain.status != rewritten.status:
        diffs.append(f"exit status: plain {plain.status} vs rewritten {rewritten.status}")
    diffs += compare_bytes("stdout", plain.stdout, rewritten.stdout)
    diffs += compare_bytes("stderr", plain.stderr, rewritten.stderr)
    diffs += _dict_differences("file", plain.tree, rewritten.tree)
    for name in STATE_FILES:
        a, b = plain.state[name], rewritten.state[name]
        if name == "env":
            diffs += _dict_differences("env", _split_env(a), _split_env(b))
        elif name == "vars":
            diffs += _dict_differences("shell variable", _vars(a), _vars(b))
        else:
            diffs += compare_bytes(f"final {name}", a, b)
    return diffs


def _lines_in_order(needle: bytes, haystack: bytes) -> bool:
    position = 0
    for line in needle.splitlines(keepends=True):
        found = haystack.find(line, position)
        if found < 0:
            return False
        position = found + len(line)
    return True


def check_archive(run: RunResult, calls: list[dict], io: Path, whole: bool = False) -> tuple[list[str], int]:
    """Problems with the archived calls of a rewritten run, and how many emissions were seen on the capture files.

    `whole`: the text was one simple command wrapped whole, the only writer of both capture files, so what
    it emitted must be exactly what is visible.
    """
    problems = []
    observed = 0
    invocations = [inv for inv in run.invocations if inv["argv"][:1] == ["run"]]
    others = [inv for inv in run.invocations if inv["argv"][:1] != ["run"]]
    if others:
        problems.append(f"yarp invoked for something other than run: {[o['argv'][:3] for o in others]}")

    def key_of_invocation(inv):
        argv = inv["argv"]
        command = argv[argv.index("--") + 1:] if "--" in argv else None
        return json.dumps([command, inv["cwd"]])

    def key_of_call(call):
        raw = call["snapshots"].get(("input", "before"))
        try:
            data = json.loads(raw)
            return json.dumps([data.get("argv"), data.get("cwd")])
        except (TypeError, ValueError, AttributeError):
            return json.dumps([None, None])

    pending: dict[str, list] = {}
    for call in calls:
        pending.setdefault(key_of_call(call), []).append(call)
    for inv in invocations:
        key = key_of_invocation(inv)
        matches = pending.get(key)
        if not matches:
            problems.append(f"no archived call for yarp run of {json.loads(key)[0]!r} in {json.loads(key)[1]!r}")
            continue
        call = matches.pop(0)
        snaps = call["snapshots"]
        label = f"call {call['ref']} ({json.loads(key)[0]!r})"
        if call["status"] != "finished" or call["requires_streams"] != 1:
            problems.append(f"{label}: status {call['status']}, requires_streams {call['requires_streams']}")
        if call["executed"] == 0:  # could not be started: finished as not executed, without streams
            if any(subject in ("stdout", "stderr") for subject, _ in snaps):
                problems.append(f"{label}: not executed, yet has stream snapshots")
            continue
        for subject in ("stdout", "stderr"):
            before, after = snaps.get((subject, "before")), snaps.get((subject, "after"))
            if before is None or after is None:
                problems.append(f"{label}: {subject} snapshots missing")
            elif before != after:
                problems.append(f"{label}: {subject}/before ({len(before)} bytes) differs from {subject}/after "
                                f"({len(after)} bytes) with the view disabled")
        out, err = snaps.get(("stdout", "after"), b""), snaps.get(("stderr", "after"), b"")
        visible = {str(io / "stdout"): run.stdout, str(io / "stderr"): run.stderr}
        if inv["same"] and inv["fd1"] in visible:
            observed += 1
            target = visible[inv["fd1"]]
            if not (_lines_in_order(out, target) and _lines_in_order(err, target)):
                problems.append(f"{label}: emitted stdout+stderr not found line by line in the visible "
                                f"{os.path.basename(inv['fd1'])}")
        else:
            for fd, data, name in ((inv["fd1"], out, "stdout"), (inv["fd2"], err, "stderr")):
                if fd in visible:
                    observed += 1
                    if whole and len(invocations) == 1 and data != visible[fd]:
                        problems.append(f"{label}: its {name} ({len(data)} bytes) is not exactly the visible "
                                        f"{os.path.basename(fd)} ({len(visible[fd])} bytes)")
                    elif data not in visible[fd]:
                        problems.append(f"{label}: its {name} ({len(data)} bytes) is not in the visible "
                                        f"{os.path.basename(fd)}")
    for key, left in pending.items():
        for call in left:
            problems.append(f"archived call {call['ref']} ({json.loads(key)[0]!r}) matches no yarp run")
    return problems, observed


# --- the harness ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class CaseResult:
    """The verdict on one command."""

    case: Case
    plan: PlanInfo | None
    verdict: str  # equivalent | different | unstable | error | not_run
    differences: list[str] = dataclasses.field(default_factory=list)
    archive_problems: list[str] = dataclasses.field(default_factory=list)
    calls: int = 0
    observed: int = 0
    seconds: float = 0.0

    @property
    def equivalent(self) -> bool:
        """Same meaning, and every wrapped command archived exactly."""
        return self.verdict == "equivalent" and not self.archive_problems

    @property
    def reached(self) -> bool:
        """Its output is archived exactly and goes through the view: fully wrapped and equivalent."""
        return self.plan is not None and self.plan.covers_all_output and self.equivalent

    def to_json(self) -> dict:
        """A JSON-ready summary."""
        plan = dataclasses.asdict(self.plan) if self.plan else None
        return {"corpus": self.case.corpus, "id": self.case.id, "text": self.case.text, "plan": plan,
                "verdict": self.verdict, "equivalent": self.equivalent, "reached": self.reached,
                "differences": self.differences, "archive_problems": self.archive_problems,
                "calls": self.calls, "observed": self.observed, "seconds": round(self.seconds, 3)}


def evaluate(worker: Worker, case: Case, rewriter: Rewriter, merged: bool = False) -> CaseResult:
    """Plan, run plain and rewritten, compare, check the archive (`merged`: one file for stdout and stderr)."""
    started = time.monotonic()
    text = worker.substitute(case.text)
    try:
        plan = rewriter(text, search_path=worker.env["PATH"])
    except Exception as exc:  # a planner crash is a finding, not a harness failure
        return CaseResult(case, None, "error", [f"planner raised {exc!r}"])
    rewritten_text = plan.text_to_run
    if rewritten_text is None:  # the original runs: nothing to compare
        return CaseResult(case, plan, "equivalent", seconds=time.monotonic() - started)
    plain = worker.run(text, merged=merged)
    rewritten = worker.run(rewritten_text, merged=merged)
    calls = worker.new_calls()
    diffs = compare_runs(plain, rewritten)
    verdict = "equivalent"
    if diffs:
        again = worker.run(text, merged=merged)
        worker.new_calls()
        verdict = "unstable" if compare_runs(plain, again) else "different"
    problems, observed = check_archive(rewritten, calls, worker.io, plan.wrapped == "whole" and not merged)
    return CaseResult(case, plan, verdict, diffs, problems, len(calls), observed, time.monotonic() - started)


@dataclasses.dataclass
class HarnessReport:
    """Every case's result, the archives' verification, and the time taken."""

    results: list[CaseResult]
    verify: list[tuple[int, str]]
    seconds: float

    def corpus(self, name: str) -> list[CaseResult]:
        """The results of one corpus."""
        return [r for r in self.results if r.case.corpus == name]

    def figures(self, name: str) -> dict:
        """Counts and rates for one corpus."""
        results = self.corpus(name)
        total = len(results)
        equivalent = sum(r.equivalent for r in results)
        reached = sum(r.reached for r in results)
        planned = sum(1 for r in results if r.plan is not None and r.plan.covers_all_output)
        rewritten = sum(1 for r in results if r.plan is not None and r.plan.execution == "rewrite")
        return {
            "corpus": name, "commands": total, "equivalent": equivalent,
            "equivalence_rate": equivalent / total if total else None,
            "reached": reached, "reach": reached / total if total else None,
            "fully_wrapped_by_plan": planned, "rewritten": rewritten,
            "different": sum(r.verdict == "different" for r in results),
            "archive_problems": sum(bool(r.archive_problems) for r in results),
            "unstable": sum(r.verdict == "unstable" for r in results),
            "errors": sum(r.verdict == "error" for r in results),
            "not_run": sum(r.verdict == "not_run" for r in results),
            "wrapped_calls": sum(r.calls for r in results),
            "emissions_seen": sum(r.observed for r in results),
        }

    @property
    def verified(self) -> bool:
        """Every worker's archive passed `yarp archive verify`."""
        return all(code == 0 for code, _ in self.verify)


def run_harness(cases: list[Case], rewriter: Rewriter | None = None, *, workers: int = 2,
                budget: float = 600.0, base: Path | None = None, merged: bool = False,
                progress: Callable[[CaseResult], None] | None = None) -> HarnessReport:
    """Evaluate every case with `workers` parallel workers; cases not started within `budget` seconds are `not_run`.

    Identical texts of one corpus run once (the worlds are identical, so are the outcomes; the repeat of a
    differing plain run guards that) and their result is reported for each. With `merged`, each run's stdout
    and stderr share one file and the corpus is reported as `<corpus>/merged`. The caller provides the
    isolation from the network (`netns.loopback_namespace`); every worker thread must still be in the
    caller's network namespace.
    """
    started = time.monotonic()
    rewriter = rewriter or yarp_rewriter()
    if merged:
        cases = [dataclasses.replace(case, corpus=case.corpus + "/merged") for case in cases]
    own_base = base is None
    base = Path(tempfile.mkdtemp(prefix="yse", dir="/tmp")) if base is None else base
    os.chmod(base, 0o700)
    namespace = os.readlink("/proc/thread-self/ns/net")
    template = build_template(base)
    pool: queue.Queue[Worker] = queue.Queue()
    all_workers = [Worker(base, index, template) for index in range(workers)]
    unique: dict[tuple[str, str], list[int]] = {}
    for index, case in enumerate(cases):
        unique.setdefault((case.corpus, case.text), []).append(index)
    results: list[CaseResult | None] = [None] * len(cases)
    lock = threading.Lock()
    try:
        for worker in all_workers:
            worker.start_broker()
            pool.put(worker)

        def task(indexes: list[int]) -> None:
            case = cases[indexes[0]]
            if time.monotonic() - started > budget:
                result = CaseResult(case, None, "not_run", ["time budget exhausted"])
            elif os.readlink("/proc/thread-self/ns/net") != namespace:
                result = CaseResult(case, None, "error", ["worker thread outside the caller's network namespace"])
            else:
                worker = pool.get()
                try:
                    result = evaluate(worker, case, rewriter, merged)
                except Exception as exc:
                    result = CaseResult(case, None, "error", [f"harness error: {exc!r}"])
                finally:
                    pool.put(worker)
            for index in indexes:
                results[index] = dataclasses.replace(result, case=cases[index])
            if progress is not None:
                with lock:
                    progress(result)

        # Slow commands first, so the workers finish together.
        groups = sorted(unique.values(), key=lambda group: -_expected_cost(cases[group[0]].text))
        with ThreadPoolExecutor(max_workers=workers) as executor:
            list(executor.map(task, groups))
        verify = []
        for worker in all_workers:
            done = worker.verify()
            verify.append((done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")))
        return HarnessReport([r for r in results if r is not None], verify, time.monotonic() - started)
    finally:
        for worker in all_workers:
            worker.close()
        if own_base:
            shutil.rmtree(base, ignore_errors=True)


def _expected_cost(text: str) -> float:
    sleeps = sum(float(n) for n in re.findall(r"\bsleep\s+(\d+(?:\.\d+)?)", text))
    return 3 * sleeps + len(re.findall(r"\bnp[mx]\b", text)) + (20 if "npm install" in text else 0)


# --- deliberately wrong rewrites (for testing the harness itself) ----------------------------------------


def wrong_wrap_cd(text: str, search_path: str | None = None) -> PlanInfo:
    """Wraps a leading `cd DIR &&` too: `yarp run -- cd DIR && …` (cd is a builtin: not found, and no effect)."""
    match = re.match(r"\s*cd (\S+) && (.*)", text, re.S)
    if not match:
        return PlanInfo("original", None, "no_cd", 0, ("no_cd",))
    return PlanInfo("rewrite", f"yarp run -- cd {match.group(1)} && yarp run -- {match.group(2)}", "wrong", 2, ())


def wrong_drop_stderr_merge(text: str, search_path: str | None = None) -> PlanInfo:
    """Drops `2>&1` from the text (stderr no longer goes where the agent asked)."""
    if "2>&1" not in text:
        return PlanInfo("original", None, "no_merge", 0, ("no_merge",))
    return PlanInfo("rewrite", text.replace(" 2>&1", ""), "wrong", 1, ())


def wrong_child_shell(text: str, search_path: str | None = None) -> PlanInfo:
    """Runs the whole text in a child shell under `yarp run` (a `cd` or `export` no longer reaches the shell)."""
    return PlanInfo("rewrite", "yarp run -- bash -c " + _sq(text), "wrong", 1, ())


def identity(text: str, search_path: str | None = None) -> PlanInfo:
    """Leaves every command alone (equivalent, reaches nothing)."""
    return PlanInfo("original", None, "identity", 0, ("identity",))


# --- reporting ------------------------------------------------------------------------------------------------


def format_report(report: HarnessReport, *, show_unreached: bool = False, show_differences: bool = False) -> str:
    """The figures per corpus, then optionally the unreached and the non-equivalent commands."""
    lines = []
    for name in sorted({r.case.corpus for r in report.results}):
        f = report.figures(name)
        lines.append(
            f"{name}: {f['commands']} commands; equivalent {f['equivalent']} ({_pct(f['equivalence_rate'])}); "
            f"reach {f['reached']} ({_pct(f['reach'])}); fully wrapped by the plan {f['fully_wrapped_by_plan']}; "
            f"rewritten {f['rewritten']}; different {f['different']}; archive problems {f['archive_problems']}; "
            f"unstable {f['unstable']}; errors {f['errors']}; not run {f['not_run']}; "
            f"archived calls {f['wrapped_calls']} ({f['emissions_seen']} emissions checked on the visible streams)")
    lines.append(f"archive verify: {'ok' if report.verified else 'FAILED'}; {report.seconds:.1f} s")
    for code, text in report.verify:
        if code != 0:
            lines.append("  " + text.strip().replace("\n", "\n  "))
    if show_unreached:
        lines.append("")
        lines.append("unreached (output not all archived through the view):")
        for r in report.results:
            if not r.reached:
                why = ",".join(r.plan.unwrapped) if r.plan and r.plan.unwrapped else r.verdict
                lines.append(f"  [{r.case.corpus}] {why}: {_one_line(r.case.text)}")
    if show_differences:
        lines.append("")
        lines.append("not equivalent:")
        for r in report.results:
            if not r.equivalent:
                lines.append(f"  [{r.case.corpus} {r.case.id}] {r.verdict}: {_one_line(r.case.text)}")
                if r.plan and r.plan.command:
                    lines.append(f"    rewritten: {_one_line(r.plan.command)}")
                for d in (r.differences + r.archive_problems)[:12]:
                    lines.append(f"    - {d}")
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _one_line(text: str, limit: int = 160) -> str:
    flat = text.replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."
