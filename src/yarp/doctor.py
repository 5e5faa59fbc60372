"""`yarp doctor`: whether YARP works here, one check at a time, each with a fix.

Every check returns a `Check`: a name, `ok`, `warn` or `fail`, one line of
detail and, unless ok, one line saying what to do. In order:

* the data files this installation ships (rule files, salience data, the
  agents' TypeScript adapters) and the user's rule packs;
* which frame, payload and validation kernels loaded (compiled or the
  pure-Python twins);
* the archive's path, its directory and file permissions, its filesystem;
* the runtime directory the broker's socket and locks live in;
* a broker for the archive starts (or is running) and answers a handshake;
* a real `yarp run -- true` is captured through it, read back from the archive;
* for every agent (`yarp.agents`): whether its hooks or its adapter folder are
  installed, of which version, and whether they run this `yarp`;
* for each agent hooked up: which tool results its host lets YARP replace, and
  which YARP replaces with its view (`check_result_views`; no agent is run);
* the broker's last logged internal error (`yarp.fault_log`).

The capture check archives one call of `true` as the probe's (agent
`yarp-doctor`, session `doctor`), which the call list and the savings report
leave out; nothing else is written. A check never prints archived
content. `healthy` is false only when a check fails: warnings are advice.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from yarp import fault_log, private_files
from yarp._version import __version__
from yarp.errors import YarpError

OK, WARN, FAIL = "ok", "warn", "fail"
#: A logged broker error newer than this makes a warning; an older one is only reported.
RECENT_FAULT_S = 7 * 24 * 3600
_CHILD_TIMEOUT_S = 30


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report: what was checked, how it went, and what to do about it."""

    name: str
    status: str
    detail: str
    fix: str | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """Every check, in the order they ran."""

    checks: tuple[Check, ...]

    @property
    def healthy(self) -> bool:
        """Whether no check failed (warnings allowed)."""
        return all(check.status != FAIL for check in self.checks)

    def to_json(self) -> dict:
        """The report as plain data: `{"healthy", "version", "checks": [{name, status, detail, fix}]}`."""
        return {"healthy": self.healthy, "version": __version__, "checks": [asdict(c) for c in self.checks]}


def _guarded(name: str, check: Callable[[], list[Check]]) -> list[Check]:
    """Run one check; a failure it did not expect becomes a failed line, never a traceback."""
    try:
        return check()
    except YarpError as exc:
        return [Check(name, FAIL, exc.message)]
    except Exception as exc:  # noqa: BLE001 - a doctor reports what broke instead of breaking
        return [Check(name, FAIL, f"{type(exc).__name__} while checking", "run `yarp doctor` again; if it "
                      "persists, report it with this line")]


# --- the installation --------------------------------------------------------------------


def check_data_files() -> list[Check]:
    """The shipped rule files, salience data and agents' TypeScript adapters are present and valid."""
    import json

    from yarp import agents
    from yarp.hooks.extension_install import shipped_files
    from yarp.view import salience
    from yarp.view.rules import builtin_rule_files, builtin_rules

    reinstall = "reinstall yarp (pip install --force-reinstall yarp-archive); this installation is incomplete"
    try:
        rules = builtin_rules()
        salience.Classifier(salience.build_bundle(json.loads(salience.read_data())))
        adapters = [f"{agents.record(name).DOCTOR_NAME} ({len(shipped_files(name))} files)"
                    for name in agents.names() if agents.record(name).ADAPTER == agents.EXTENSION]
    except FileNotFoundError as exc:
        return [Check("data files", FAIL, f"missing: {os.path.basename(exc.filename or '?')}", reinstall)]
    except (YarpError, ValueError, KeyError, TypeError) as exc:
        return [Check("data files", FAIL, f"invalid shipped data: {getattr(exc, 'message', type(exc).__name__)}",
                      reinstall)]
    return [Check("data files", OK, f"{len(builtin_rule_files())} rule files ({len(rules)} rules), salience data"
                  + "".join(f", {adapter}" for adapter in adapters))]


def check_rule_packs(environ: Mapping[str, str]) -> list[Check]:
    """The configuration parses and every rule pack it lists loads."""
    from yarp import config
    from yarp.view.rules import load_rules

    try:
        cfg = config.load(environ)
    except YarpError as exc:
        return [Check("configuration", FAIL, exc.message, f"fix {config.config_path(environ)}")]
    checks = [Check("configuration", OK, "defaults (no configuration file)"
                    if not os.path.exists(config.config_path(environ)) else config.config_path(environ))]
    if not cfg.rule_packs:
        return checks + [Check("rule packs", OK, "none configured")]
    try:
        load_rules(cfg.rule_packs, environ=environ)
    except YarpError as exc:
        return checks + [Check("rule packs", FAIL, exc.message, "fix or remove the pack in rules.packs")]
    return checks + [Check("rule packs", OK, f"{len(cfg.rule_packs)} pack(s) valid")]


def check_kernels(environ: Mapping[str, str]) -> list[Check]:
    """Which of the accelerated kernels run compiled, and why not where not."""
    import importlib

    from yarp._compat import no_extensions

    #: label -> (selector module, compiled kernel module)
    names = {"frames": ("yarp.wire.frames", "yarp._fastframe"),
             "payloads": ("yarp.archive.payload_kernel", "yarp._payload_kernel"),
             "validation": ("yarp.wire.validation", "yarp._validate"),
             "trigger scan": ("yarp.view.scan", "yarp._scan"),
             "line templates": ("yarp.view.templates", "yarp._templates"),
             "line offsets": ("yarp.view.lines", "yarp._lines"),
             "line shapes": ("yarp.view.shapes", "yarp._shapes")}
    compiled, twins = [], []
    for label, (selector, kernel) in names.items():
        if importlib.import_module(selector).IMPLEMENTATION == "c":
            compiled.append(label)
            continue
        try:
            importlib.import_module(kernel)
            why = "selected"
        except ImportError as exc:
            why = type(exc).__name__
        twins.append(f"{label} ({why})")
    if not twins:
        return [Check("kernels", OK, "compiled: " + ", ".join(compiled))]
    if no_extensions(environ):
        return [Check("kernels", WARN, "pure-Python twins in use (YARP_NO_EXTENSIONS is set): " + ", ".join(twins),
                      "unset YARP_NO_EXTENSIONS for the compiled kernels")]
    return [Check("kernels", WARN, "pure-Python twins in use, compiled kernels did not load: " + ", ".join(twins),
                  "reinstall yarp where a C compiler is available (pip install --force-reinstall yarp-archive)")]


# --- the archive and the broker ------------------------------------------------------------


def _mode(st: os.stat_result) -> str:
    return f"{st.st_mode & 0o777:04o}"


def check_archive(location, named: bool = False) -> list[Check]:
    """The archive's directory and file: present, ours, private, on a local filesystem, schema v1.
    `named`: given with --archive, whose directory must exist (`yarp.paths.named_archive_problem`)."""
    from yarp.archive.sqlite import open_readonly
    from yarp.paths import NETWORK_FILESYSTEMS, filesystem_type, fix_for, named_archive_problem

    problem = named_archive_problem(location)
    if problem is not None and (named or os.path.isdir(location.path)):
        return [Check("archive", FAIL, problem, fix_for(location, problem))]
    try:
        st = os.lstat(location.directory)
    except FileNotFoundError:
        return [Check("archive", OK, f"{location.path} (not created yet: the first capture creates it)")]
    problem = private_files.problem_of(st, directory=True)
    if problem is not None:
        status = WARN if location.is_default and problem.startswith("permissions") else FAIL
        detail = f"archive directory {location.directory} {problem} ({_mode(st)})"
        return [Check("archive", status, detail + ("; yarp narrows the default location when it opens it"
                                                   if status == WARN else ""), fix_for(location, problem))]
    checks = []
    kind = filesystem_type(location.directory)
    if kind in NETWORK_FILESYSTEMS:
        checks.append(Check("archive filesystem", FAIL, f"the archive is on a network filesystem ({kind})",
                            "set archive.path (or YARP_ARCHIVE) to a local disk"))
    try:
        fst = os.lstat(location.path)
    except FileNotFoundError:
        return checks + [Check("archive", OK, f"{location.path} (directory 0700; the database is created on "
                                              "the first capture)")]
    problem = private_files.problem_of(fst, directory=False)
    if problem is not None:
        status = WARN if location.is_default and problem.startswith("permissions") else FAIL
        return checks + [Check("archive", status, f"archive database {location.path} {problem} ({_mode(fst)})",
                               fix_for(location, problem, database=True))]
    conn = open_readonly(location)
    try:
        calls = conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
    finally:
        conn.close()
    return checks + [Check("archive", OK, f"{location.path} (schema v1, {calls} calls; file {_mode(fst)} in "
                                          f"directory {_mode(st)})")]


def check_runtime(location, environ: Mapping[str, str]) -> list[Check]:
    """The broker's private runtime directory: a real directory of ours, 0700, a socket path that fits."""
    from yarp.runtime import check_socket_entry, fix_for, runtime_paths

    try:
        paths = runtime_paths(location.path, environ)
        running = check_socket_entry(paths.socket)
    except YarpError as exc:
        return [Check("runtime directory", FAIL, exc.message, fix_for(exc, environ))]
    return [Check("runtime directory", OK, f"{paths.directory} (0700{', broker socket present' if running else ''})")]


def check_broker(location, environ: Mapping[str, str]) -> list[Check]:
    """A broker for the archive answers the versioned handshake (started on demand, as clients do)."""
    from yarp.clients.broker import BrokerClient

    started = time.monotonic()
    with BrokerClient(location, environ) as client:
        try:
            client.connect(started + 10)
            status = client.status(time.monotonic() + 5)
        except YarpError as exc:
            return [Check("broker", FAIL, exc.message, broker_fix(location, environ, exc))]
        replaced = client.replaced
    detail = (f"answered the handshake in {int((time.monotonic() - started) * 1000)} ms "
              f"(pid {status['pid']}, {status['eventLoop']}, {status['pool']} pool, yarp {__version__})")
    if replaced is not None:
        # An upgrade (or a downgrade) left the other version's broker running: say so, it is why this took longer.
        detail = (f"a broker of yarp {replaced.broker_version}" + (f" (pid {replaced.pid})" if replaced.pid else "")
                  + f" was running; it drained and exited, and this version's {detail}")
    return [Check("broker", OK, detail)]


def broker_fix(location, environ: Mapping[str, str], error: YarpError | None = None) -> str:
    """What to do when the broker did not answer or a capture failed: stop another version's broker,
    read the broker's logged error when there is one (its line comes last), else watch a broker start."""
    from yarp.errors import BrokerUnresponsive, HandshakeMismatch

    archive = shlex.quote(location.path)
    if isinstance(error, BrokerUnresponsive):
        return "end the broker process named above (kill PID; it answers no stop request), the next client starts one"
    if isinstance(error, HandshakeMismatch):
        return f"yarp archive broker status --archive {archive}, then yarp archive broker stop --archive {archive}"
    watch = f"watch a broker start and fail: yarp archive broker --foreground --archive {archive}"
    try:
        logged = fault_log.read_last(environ) is not None
    except private_files.PrivatePathProblem:
        logged = False
    return f"the broker errors line (the last) holds the broker's last logged error; or {watch}" if logged else watch


def check_capture(location, environ: Mapping[str, str]) -> list[Check]:
    """A real `yarp run -- true` through the broker, then its call read back: finished, four streams.

    The call is the probe's (agent `yarp-doctor`, session `doctor`, a call of its own under
    `--archive-parent capture`), which the call list and the savings report leave out: none of the user's."""
    from yarp.archive.calls.selection import PROBE_AGENT, PROBE_SESSION
    from yarp.archive.sqlite import open_readonly
    from yarp.hooks.events import local_account

    account = local_account()
    probe = ["--archive-agent", PROBE_AGENT, "--archive-account", account, "--archive-session", PROBE_SESSION,
             "--archive-parent", "capture"]
    # The archive as an agent's capture names it (not --archive, whose directory must exist already).
    proc = subprocess.Popen([sys.executable, "-m", "yarp", "run", *probe, "--", "true"],
                            env={**environ, "YARP_ARCHIVE": location.path}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=_CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return [Check("capture", FAIL, f"`yarp run -- true` did not finish within {_CHILD_TIMEOUT_S} s",
                      "check the broker line above")]
    said = err.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode != 0 or said:
        return [Check("capture", FAIL, f"`yarp run -- true` exited {proc.returncode}"
                      + (f": {said[-1][:300]}" if said else ""), broker_fix(location, environ))]
    suffix = f"-{proc.pid}"  # the run's call id is `capture/<start ms>-<its pid>`
    conn = open_readonly(location)
    try:
        row = conn.execute(
            "SELECT c.archive_ref, c.status, (SELECT count(*) FROM snapshots s WHERE s.tool_call_id = c.id"
            " AND s.subject IN ('stdout', 'stderr')) FROM tool_calls c JOIN sessions x ON x.id = c.session_id"
            " WHERE x.agent = ? AND x.account = ? AND x.source_session_id = ? AND c.source_call_id >= 'capture/'"
            " AND c.source_call_id < 'capture0' AND substr(c.source_call_id, -length(?)) = ?"
            " ORDER BY c.id DESC LIMIT 1", (PROBE_AGENT, account, PROBE_SESSION, suffix, suffix)).fetchone()
    finally:
        conn.close()
    if row is None:
        return [Check("capture", FAIL, "`yarp run -- true` succeeded but its call is not in the archive",
                      "report it: the broker acknowledged a capture it did not keep")]
    ref, status, streams = row
    if status != "finished" or streams != 4:
        return [Check("capture", FAIL, f"call {ref} is {status} with {streams} of 4 stream snapshots",
                      "run `yarp archive verify`")]
    return [Check("capture", OK, f"`yarp run -- true` archived as {ref} (finished, 4 stream snapshots)")]


# --- the agents ---------------------------------------------------------------------------


def this_yarp() -> str | None:
    """The `yarp` console script of this installation (what hooks should run), or None.

    The script being run, else the one installed beside this interpreter: never
    a `yarp` found on PATH, which may be another installation's.
    """
    script = sys.argv[0] if sys.argv else ""
    for candidate in (script if os.path.basename(script) == "yarp" else "",
                      os.path.join(os.path.dirname(sys.executable), "yarp")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.realpath(candidate)
    return None


def _version_of(argv: list[str], environ: Mapping[str, str]) -> str | None:
    try:
        done = subprocess.run([*argv, "--version"], env=dict(environ), capture_output=True, text=True,
                              timeout=_CHILD_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = done.stdout.strip()
    return text.removeprefix("yarp ") if done.returncode == 0 and text.startswith("yarp ") else None


def _same_yarp(argv: list[str], ours: str | None, environ: Mapping[str, str]) -> bool:
    if len(argv) == 1:
        return ours is not None and os.path.realpath(_on_path(argv[0], environ) or argv[0]) == ours
    return len(argv) == 3 and argv[1:] == ["-m", "yarp"] and os.path.realpath(argv[0]) == os.path.realpath(
        sys.executable)


def _on_path(word: str, environ: Mapping[str, str]) -> str | None:
    """Where a bare command name (a project's `yarp hook AGENT`) is found on the agent's PATH, else None."""
    import shutil

    return shutil.which(word, path=environ.get("PATH", os.defpath)) if os.sep not in word else None


def _runs(argv: list[str], name: str, agent: str, environ: Mapping[str, str], ours: str | None,
          where: str, run_as: list[str] | None = None) -> Check:
    """How an installed hook or extension's `yarp` (`argv`, started as `run_as`) compares with this one."""
    reinstall = f"yarp hook install {agent}"
    if len(argv) == 1 and os.sep not in argv[0] and _on_path(argv[0], environ) is None:
        return Check(name, FAIL, f"{where} runs {argv[0]}, which is not on PATH", "put this yarp's folder on PATH")
    version = _version_of(run_as or argv, environ)
    if version is None:
        return Check(name, FAIL, f"{where} runs {shlex.join(argv)}, which does not answer `--version`",
                     reinstall)
    if not _same_yarp(argv, ours, environ):
        return Check(name, WARN, f"{where} runs another yarp ({shlex.join(argv)}, yarp {version})", reinstall)
    return Check(name, OK, f"{where} (yarp {version}, this yarp)")


def check_hooks(agent: str, environ: Mapping[str, str], ours: str | None, cwd: str) -> list[Check]:
    """An agent's command hook entries, user and project: every event covered, running this yarp
    (a project's may run the yarp on PATH)."""
    from yarp import agents
    from yarp.hooks.install import installed_commands, other_paths, settings_path

    record = agents.record(agent)
    name = record.DOCTOR_NAME
    trust = getattr(record, "TRUST_NOTE", None)
    checks = []
    for scope in ("user", "project"):
        for other in other_paths(agent, scope, cwd):
            try:
                if installed_commands(agent, other):
                    checks.append(Check(name, WARN, f"{other} holds hooks an older yarp put there",
                                        f"yarp hook install {agent} --project (moves them)"))
            except YarpError:
                pass  # not ours to judge
        path = settings_path(agent, scope, environ, cwd)
        try:
            commands = installed_commands(agent, path)
        except YarpError as exc:
            checks.append(Check(name, FAIL, f"{path}: {exc.message}", "fix the file, then yarp hook install "
                                + agent))
            continue
        if not commands:
            continue
        missing = [event for event in record.HOOK_EVENTS if event not in commands]
        argvs = {tuple(shlex.split(command)[:-2]) for found in commands.values() for command in found}
        if missing:
            checks.append(Check(name, WARN, f"{path} lacks {', '.join(missing)}", f"yarp hook install {agent}"
                                + (" --project" if scope == "project" else "")))
        for argv in sorted(argvs):
            check = _runs(list(argv), name, agent, environ, ours, path)
            if check.status == OK and trust:
                check = Check(name, OK, check.detail + "; " + trust)
            checks.append(check)
    return checks


def check_extension(agent: str, environ: Mapping[str, str], ours: str | None, cwd: str) -> list[Check]:
    """An agent's adapter folder, user and project: present, this package's files, running this yarp."""
    from yarp import agents
    from yarp.hooks.extension_install import install_path, installed

    name = agents.record(agent).DOCTOR_NAME
    checks = []
    for scope in ("user", "project"):
        path = install_path(agent, scope, environ, cwd)
        fix = f"yarp hook install {agent}" + (" --project" if scope == "project" else "")
        try:
            found = installed(agent, path)
        except YarpError as exc:
            checks.append(Check(name, FAIL, exc.message, fix))
            continue
        if found is None:
            continue
        if not found.current:
            checks.append(Check(name, WARN, f"{path} is from yarp {found.version}, not this yarp's "
                                f"files ({__version__})", fix))
            continue
        if found.yarp_bin is None or not found.yarp_argv:
            checks.append(Check(name, WARN, f"{path} does not say which yarp it runs", fix))
            continue
        checks.append(_runs(list(found.yarp_argv), name, agent, environ, ours, path, run_as=[found.yarp_bin]))
    return checks


def check_agents(environ: Mapping[str, str], cwd: str) -> list[Check]:
    """Every agent's adapter (`yarp.agents`); a warning when no agent at all is hooked up."""
    from yarp import agents

    ours = this_yarp()
    checks = []
    for agent in agents.names():
        record = agents.record(agent)
        check = check_hooks if record.ADAPTER == agents.HOOKS else check_extension
        found = _guarded(record.DOCTOR_NAME, lambda: check(agent, environ, ours, cwd))
        checks.extend(found or [Check(record.DOCTOR_NAME, OK, "not installed")])
    if all(check.detail == "not installed" for check in checks):
        return [Check("agents", WARN, "no agent is hooked up: nothing is captured yet",
                      "yarp hook install " + "|".join(agents.names()))] + checks
    return checks


# --- which tool results each host lets YARP replace ----------------------------------------


RESULT_VIEWS_CHECK = "tool results"


def hooked_agents(checks: list[Check]) -> list[str]:
    """The agents `check_agents` found hooked up (an installed adapter that did not fail), in its order."""
    from yarp import agents

    found = []
    for agent in agents.names():
        mine = [check for check in checks if check.name == agents.record(agent).DOCTOR_NAME]
        if any(check.detail != "not installed" for check in mine) and all(check.status != FAIL for check in mine):
            found.append(agent)
    return found


def check_result_views(hooked: list[str], environ: Mapping[str, str]) -> list[Check]:
    """One line per hooked-up agent: which results its host lets YARP replace, and which YARP does.

    Read from what each host allows (its record's `RESULT_VIEW`, with the
    evidence in docs/design/host-results.md) and this configuration's pruning
    switch and cap; no agent is run.
    """
    from yarp import agents, config
    from yarp.limits import DEFAULT_CAP_BYTES

    try:
        cfg = config.load(environ)
    except YarpError:
        cfg = None  # the configuration line above says why
    checks = []
    for agent in hooked:
        record = agents.record(agent)
        view = record.RESULT_VIEW
        if cfg is not None and not cfg.pruning_enabled:
            ours = "YARP replaces none here (pruning.enabled = false)"
        elif cfg is not None and cfg.cap_bytes == 0:
            ours = "YARP caps none here (output.cap_bytes = 0); wrapped shell commands show yarp run's view"
        else:
            cap = cfg.cap_bytes if cfg is not None else DEFAULT_CAP_BYTES
            most = view.get("max_cap")
            ours = view["ours"].format(cap=f"{min(cap, most) if most else cap:,} bytes")
        checks.append(Check(RESULT_VIEWS_CHECK, OK, f"{agent}: {record.LABEL} {view['host']}; {ours}; {view['left']}"))
    return checks


def check_last_fault(environ: Mapping[str, str], now: float | None = None) -> list[Check]:
    """The broker's newest logged internal error, a warning when it is recent."""
    try:
        found = fault_log.read_last(environ)
    except private_files.PrivatePathProblem as exc:
        return [Check("broker errors", FAIL, f"the fault log {exc.problem}",
                      f"remove {fault_log.shown_path(environ)}")]
    if found is None:
        return [Check("broker errors", OK, "none logged")]
    age = (now if now is not None else time.time()) - found["atMs"] / 1000
    line = "last: " + fault_log.describe(found)
    if age > RECENT_FAULT_S:
        return [Check("broker errors", OK, line)]
    return [Check("broker errors", WARN, line, f"if it repeats, report it with the line from "
                                               f"{fault_log.shown_path(environ)}")]


def run(explicit_archive: str | None = None, environ: Mapping[str, str] = os.environ,
        cwd: str | None = None, on_check: Callable[[Check], None] | None = None) -> Report:
    """Run every check in order; `on_check` sees each line as soon as it is known."""
    from yarp import config
    from yarp.paths import resolve_archive

    cwd = cwd or os.getcwd()
    checks: list[Check] = []

    def add(found: list[Check]) -> None:
        for check in found:
            checks.append(check)
            if on_check is not None:
                on_check(check)

    add(_guarded("data files", check_data_files))
    add(_guarded("configuration", lambda: check_rule_packs(environ)))
    add(_guarded("kernels", lambda: check_kernels(environ)))
    try:
        configured = config.load(environ).archive_path
    except YarpError:
        configured = None
    location = resolve_archive(explicit_archive, environ, configured)
    archive = _guarded("archive", lambda: check_archive(location, named=explicit_archive is not None))
    add(archive)
    runtime = _guarded("runtime directory", lambda: check_runtime(location, environ))
    add(runtime)
    if any(check.status == FAIL for check in archive + runtime):
        add([Check("broker", FAIL, "not tried: the archive or runtime directory is unsafe", "fix the lines above")])
    else:
        broker = _guarded("broker", lambda: check_broker(location, environ))
        add(broker)
        if broker[-1].status == OK:
            add(_guarded("capture", lambda: check_capture(location, environ)))
    agents = check_agents(environ, cwd)
    add(agents)
    add(_guarded(RESULT_VIEWS_CHECK, lambda: check_result_views(hooked_agents(agents), environ)))
    add(_guarded("broker errors", lambda: check_last_fault(environ)))
    return Report(tuple(checks))
