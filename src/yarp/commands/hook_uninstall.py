"""`yarp hook uninstall AGENT`: remove exactly what `yarp hook install` added for an agent."""

from __future__ import annotations

from yarp import agents

SUMMARY = f"remove what `yarp hook install` added for an agent ({', '.join(agents.names())})"
EPILOG = """\
Removes only entries that run `yarp ... hook AGENT`; every other setting and
hook is kept, and the tree is left as installing found it: a settings file
that held only YARP's hooks is removed, one that is left as it was before the
install gets its own bytes back, and backups that held nothing else go too.
Any other changed file is kept as <file>.yarp-backup-<unix ms> (0600).
For an adapter copied into the agent's folder, removes the files `yarp hook
install` wrote, unless you changed them.
"""
ARCHIVE_OPTION = False


def configure(parser) -> None:
    from yarp.commands.hook_install import agents_choices

    parser.add_argument("agent", choices=agents_choices())
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="scope", action="store_const", const="user",
                       help="the user's settings in the home directory (default)")
    scope.add_argument("--project", dest="scope", action="store_const", const="project",
                       help="the settings of the project in the current directory")


def run(args) -> int:
    scope = args.scope or "user"
    if agents.record(args.agent).ADAPTER == agents.EXTENSION:
        return _uninstall_extension(args.agent, scope)
    from yarp.hooks.install import other_paths, settings_path, uninstall

    path = settings_path(args.agent, scope)
    changes = [uninstall(args.agent, where) for where in [path, *other_paths(args.agent, scope)]]
    if not any(change.changed for change in changes):
        print(f"not installed: {path}")
        return 0
    for change in changes:
        if not change.changed:
            continue
        what = ("; the file held nothing else and was removed" if change.removed
                else "; the file is back as it was before" if change.restored else "")
        print(f"removed {change.entries} hook(s): {change.path}{what}")
        if change.backup:
            print(f"backup: {change.backup}")
    return 0


def _uninstall_extension(agent: str, scope: str) -> int:
    from yarp.hooks.extension_install import install_path, uninstall

    change = uninstall(agent, install_path(agent, scope))
    if not change.changed:
        print(f"not installed: {change.path}")
        return 0
    print(f"removed: {change.path}")
    if change.kept:
        print(f"kept {len(change.kept)} file(s) you changed or added: {', '.join(change.kept)}")
    return 0
