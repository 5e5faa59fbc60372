"""`yarp run` wraps every shell command: its start-up path must not import heavy modules.

These are import-set assertions (never timings): `python -X importtime -m yarp
run -- true` against a warm broker lists every module imported, and none of the
event loop, worker pool, shell parser, rules, canonical-JSON or SQLite modules
may be among them. With a broker running, not even the start-up half of the
broker client (`yarp.clients.startup`) or the operation types: the runner
asks the broker's run service (`yarp.clients.broker.service_request`), and the broker
prunes, caps and archives. Timings live in bench/test_bench_run.py and
bench/test_bench_hooks.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from run_helpers import close_run_env, make_run_env, yrun

#: Modules only the broker, `yarp plan` or the read-only commands need.
FORBIDDEN = ("uvloop", "tree_sitter", "tree_sitter_bash", "concurrent.futures", "asyncio", "rfc8785", "sqlite3",
             "_sqlite3", "yarp.broker", "yarp.archive.store", "yarp.archive.prepare", "yarp.archive.codec", "yarp.view.plan",
             "yarp.archive.recovery", "orjson", "dataclasses", "argparse", "zstandard",
             # The view is the broker's work (yarp.broker.services.run); starting a broker is a client's only on a cold start.
             "yarp.view.rules", "yarp.view.reducers", "yarp.view.cap", "yarp.view.markers", "yarp.view.streams",
             "yarp.view.families", "yarp.view.selector", "yarp.view.visible", "yarp.view.scan", "yarp._scan", "yarp.view.collector",
             "yarp._scan_py", "yarp.view.templates", "yarp._templates", "yarp._templates_py", "yarp.clients.startup",
             "yarp.view.lines", "yarp._lines", "yarp._lines_py", "yarp.view.shapes", "yarp._shapes", "yarp._shapes_py",
             # `yarp.cli` hands the common form straight to `yarp.clients.run.run_fast`.
             "yarp.commands", "yarp.commands.run",
             "yarp.wire.protocol", "yarp.wire.operations", "yarp.wire.frames", "yarp._fastframe", "yarp._fastframe_py",
             # The payload kernel is the broker's (through yarp.archive.codec), never a client's.
             "yarp.archive.payload_kernel", "yarp._payload_kernel", "yarp._payload_kernel_py")
#: Standard-library modules the run path reaches through their C cores instead
#: (`_json`, `_socket`, `_signal`, the built-in SHA-256); each costs every
#: wrapped command a millisecond or more.
STDLIB_AVOIDED = ("json", "re", "socket", "selectors", "signal", "enum", "hashlib", "_hashlib", "threading",
                  "importlib.util", "typing",
                  # The pipes are polled with `select.poll` (0.17 ms) and signals taken by a `_thread` thread;
                  # `fcntl` (0.15 ms) only enlarges a pipe that filled up, `resource` only precedes a core signal.
                  "fcntl", "resource",
                  # No module on the path asks for `from __future__ import annotations`: a real import.
                  "__future__")
#: Loaded on a failure only: a run that succeeds never builds the error classes
#: (about 1 ms of its start-up, `yarp.cli.reported_errors`).
FAILURE_ONLY = ("yarp.errors",)


@pytest.fixture
def warm_env():
    benv = make_run_env(idle_ms=5000)
    try:
        assert yrun(benv, "true").returncode == 0  # starts the broker
        yield benv
    finally:
        benv.environ["YARP_BROKER_IDLE_MS"] = "300"
        close_run_env(benv, timeout=15)


#: How the console script starts (`-m` would add runpy's own imports, importlib.util among them).
SCRIPT = ("-c", "import sys; from yarp.cli import main; sys.exit(main())")


def imported_modules(env: dict, *args: str, entry: tuple[str, ...] = ("-m", "yarp")
                     ) -> tuple[set[str], subprocess.CompletedProcess]:
    proc = subprocess.run([sys.executable, "-X", "importtime", *entry, *args], env=env,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    names = set()
    for line in proc.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names, proc


#: A quiet command, standalone and with an adapter's archive flags.
QUIET_RUNS = [
    ("run", "--", "true"),
    ("run", "--archive-agent", "a", "--archive-account", "b", "--archive-session", "s",
     "--archive-call", "c", "--", "true"),
]


def test_standalone_run_of_true_imports_nothing_heavy(warm_env):
    names, proc = imported_modules(warm_env.environ, "run", "--", "true")
    assert proc.returncode == 0
    assert all(line.startswith(b"import time:") for line in proc.stderr.splitlines())  # no archive failure
    assert "yarp.clients.run" in names and "yarp.clients.broker" in names  # the list is real
    assert sorted((set(FORBIDDEN) | set(FAILURE_ONLY)) & names) == []


@pytest.mark.parametrize("args", QUIET_RUNS)
def test_quiet_run_avoids_costly_stdlib_modules(warm_env, args):
    names, _ = imported_modules(warm_env.environ, *args, entry=SCRIPT)
    assert "yarp.clients.run" in names and "yarp.clients.broker" in names  # the list is real
    assert sorted(set(STDLIB_AVOIDED) & names) == []


def test_output_is_pruned_by_the_broker_not_the_runner(warm_env, tmp_path):
    # A command with output: the rules are consulted, and the view written, in
    # the broker. The runner reads no rule file and imports no parser.
    env = dict(warm_env.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    for _ in range(2):
        names, proc = imported_modules(env, "run", "--", "echo", "hello", entry=SCRIPT)
        assert proc.returncode == 0 and proc.stdout == b"hello\n"
        assert "yarp.clients.broker" in names  # the list is real
        assert sorted((set(STDLIB_AVOIDED) | set(FORBIDDEN) | set(FAILURE_ONLY) | {"tomllib", "yarp.parse_cache"})
                      & names) == []


def test_a_run_that_starts_the_broker_loads_the_start_up_but_no_payload_work():
    # Without a broker the runner starts one (`yarp.clients.startup`); framing
    # stays the lean client's, hashing and compressing payloads the broker's.
    benv = make_run_env(idle_ms=300)
    try:
        names, proc = imported_modules(benv.environ, "run", "--", "true", entry=SCRIPT)
        assert proc.returncode == 0
        assert {"yarp.clients.run", "yarp.clients.broker", "yarp.clients.startup"} <= names  # a cold start
        assert sorted({"yarp.wire.frames", "yarp.wire.protocol", "yarp.archive.codec", "yarp.archive.payload_kernel", "yarp._payload_kernel", "yarp._payload_kernel_py",
                       "zstandard", "rfc8785", "orjson"} & names) == []
    finally:
        close_run_env(benv, timeout=15)


def test_archive_disabled_run_imports_no_archive_code(warm_env, tmp_path):
    import os

    config_dir = os.path.join(warm_env.environ["XDG_CONFIG_HOME"], "yarp")
    os.makedirs(config_dir)
    with open(os.path.join(config_dir, "config.toml"), "w") as handle:
        handle.write("version = 1\n[archive]\nenabled = false\n")
    names, proc = imported_modules(warm_env.environ, "run", "--", "true")
    assert proc.returncode == 0
    assert "yarp.clients.run" in names
    assert sorted((set(FORBIDDEN) | {"yarp.clients.broker", "yarp.wire.operations", "yarp.view.rules", "zstandard"}) & names) == []


@pytest.mark.parametrize("args", QUIET_RUNS)
def test_common_run_forms_skip_argparse(warm_env, args):
    # The fast path parses the flags itself; argparse is only for help and errors.
    names, proc = imported_modules(warm_env.environ, *args)
    assert "yarp.clients.run" in names
    assert "argparse" not in names


def test_run_help_and_errors_still_use_argparse(warm_env):
    names, proc = imported_modules(warm_env.environ, "run", "--bogus", "--", "true")
    assert proc.returncode == 64 and b"unrecognized arguments" in proc.stderr
    assert "argparse" in names


def test_capped_adapter_run_imports_neither_sqlite_nor_the_cap(warm_env):
    # An adapter's call whose output passes the cap: the broker finds the
    # call's reference and writes the capped view with its marker.
    from yarp.wire import operations as ops

    session = ops.Session("pi", "me", "imports")
    for call in ("c1", "c2"):
        warm_env.request(ops.BeginCall(session, ops.CallMeta(call, "bash", 1, True), {}, {}, 1))
        flags = ("--archive-agent", "pi", "--archive-account", "me", "--archive-session", "imports",
                 "--archive-call", call)
        names, proc = imported_modules(warm_env.environ, "run", *flags, "--", sys.executable, "-c",
                                       "print('x' * 20000)", entry=SCRIPT)
        assert proc.returncode == 0 and b"capped at 5120; ref=yr_" in proc.stdout  # capped, with a marker
    assert "yarp.clients.run" in names and "yarp.clients.broker" in names  # the list is real
    assert sorted((set(STDLIB_AVOIDED) | set(FORBIDDEN) | {"yarp.archive.sqlite", "urllib.parse", "datetime"}) & names) == []


def test_a_configuration_file_is_parsed_once(warm_env, tmp_path):
    import os

    env = dict(warm_env.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    config_dir = os.path.join(env["XDG_CONFIG_HOME"], "yarp")
    os.makedirs(config_dir, exist_ok=True)
    with open(os.path.join(config_dir, "config.toml"), "w") as handle:
        handle.write("version = 1\n[output]\ncap_bytes = 8192\n")
    first, proc = imported_modules(env, "run", "--", "true", entry=SCRIPT)
    assert proc.returncode == 0 and "tomllib" in first
    names, proc = imported_modules(env, "run", "--", "true", entry=SCRIPT)
    assert proc.returncode == 0 and "yarp.parse_cache" in names
    assert sorted((set(STDLIB_AVOIDED) | {"tomllib"}) & names) == []
