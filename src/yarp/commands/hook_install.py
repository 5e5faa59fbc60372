"""`yarp hook install AGENT`: add YARP's hooks to an agent's settings file, or its adapter to its folder."""

from __future__ import annotations

from yarp import agents

SUMMARY = ("hook an agent up to the archive (" + ", ".join(agents.hooked()) + ": settings file; "
           + ", ".join(name for name in agents.names() if name not in agents.hooked()) + ": adapter folder)")


def _files() -> str:
    lines = []
    for name in agents.names():
        for index, where in enumerate(agents.record(name).INSTALL_FILES):
            lines.append(f"  {name if index == 0 else '':<12} {where}")
    return "\n".join(lines)


EPILOG = f"""\
files:
{_files()}

Existing settings and other hooks are kept; installing twice changes nothing.
The previous file is kept as <file>.yarp-backup-<unix ms> (mode 0600; the
newest 3 per file). A project's hooks go where they work on every machine
of the project: into the agent's own uncommitted file with this yarp's path
where the agent has one, else into the project's file as `yarp hook AGENT`,
which runs the yarp on each machine's PATH (the files above say which).
An adapter folder is copied from this yarp's own files (no checkout, no npm)
and runs the yarp that installed it; installing again after an upgrade
replaces it. An agent that runs hooks only once they are
trusted says so, and how, after installing.
"""
ARCHIVE_OPTION = False


def agents_choices() -> tuple[str, ...]:
    """Every agent `yarp hook install` can hook up."""
    return agents.names()


def configure(parser) -> None:
    parser.add_argument("agent", choices=agents_choices())
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="scope", action="store_const", const="user",
                       help="the user's settings in the home directory (default)")
    scope.add_argument("--project", dest="scope", action="store_const", const="project",
                       help="the settings of the project in the current directory")


def run(args) -> int:
    from yarp.launcher import yarp_argv

    scope = args.scope or "user"
    record = agents.record(args.agent)
    if record.ADAPTER == agents.EXTENSION:
        return _install_extension(args.agent, scope, yarp_argv())
    from yarp.hooks.install import install, local_command, other_paths, settings_path, uninstall
    from yarp.launcher import shell_join

    path = settings_path(args.agent, scope)
    # A committed project file gets a command every machine of the project can run.
    argv = yarp_argv() if local_command(args.agent, scope) else ["yarp"]
    change = install(args.agent, path, shell_join(argv + ["hook", args.agent]))
    if not change.changed:
        print(f"already installed: {path}")
    else:
        print(f"installed: {path}")
        if change.backup:
            print(f"backup: {change.backup}")
    for other in other_paths(args.agent, scope):
        moved = uninstall(args.agent, other)
        if moved.changed:
            print(f"removed {moved.entries} hook(s) an older yarp put in {other}")
    for line in record.INSTALL_NOTES:
        print(line)
    return 0


def _install_extension(agent: str, scope: str, argv: list[str]) -> int:
    from yarp.hooks.extension_install import install, install_path

    change = install(agent, install_path(agent, scope), argv)
    print(f"{'installed' if change.changed else 'already installed'}: {change.path}")
    for line in agents.record(agent).INSTALL_NOTES:
        print(line)
    return 0
