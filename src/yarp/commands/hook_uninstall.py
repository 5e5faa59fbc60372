"""`yarp hook uninstall AGENT`: remove exactly what `yarp hook install` added for an agent."""

from __future__ import annotations

SUMMARY = "remove what `yarp hook install` added for an agent (claude-code, codex, gemini, pi, opencode)"
EPILOG = """\
Removes only entries that run `yarp ... hook AGENT`; every other setting and
hook is kept. The previous file is kept as <file>.yarp-backup-<unix ms> (0600).
For pi and opencode, removes the files `yarp hook install` wrote, unless you changed them.
"""
ARCHIVE_OPTION = False


def configure(parser) -> None:
    from yarp.commands.hook_install import agents

    parser.add_argument("agent", choices=agents())
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="scope", action="store_const", const="user",
                       help="the user's settings in the home directory (default)")
    scope.add_argument("--project", dest="scope", action="store_const", const="project",
                       help="the settings of the project in the current directory")


def run(args) -> int:
    from yarp.hooks import extension_install

    if args.agent in extension_install.AGENTS:
        return _uninstall_extension(args.agent, args.scope or "user")
    from yarp.hooks.install import settings_path, uninstall

    path = settings_path(args.agent, args.scope or "user")
    change = uninstall(args.agent, path)
    if not change.changed:
        print(f"not installed: {path}")
        return 0
    print(f"removed {change.entries} hook(s): {path}")
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
