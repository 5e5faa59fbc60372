"""`yarp hook uninstall AGENT`: remove exactly YARP's hooks from an agent's settings."""

from __future__ import annotations

SUMMARY = "remove the archive hooks from an agent's settings file (claude-code or codex)"
EPILOG = """\
Removes only entries that run `yarp ... hook AGENT`; every other setting and
hook is kept. The previous file is kept as <file>.yarp-backup-<unix ms> (0600).
"""
ARCHIVE_OPTION = False


def configure(parser) -> None:
    parser.add_argument("agent", choices=("claude-code", "codex"))
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="scope", action="store_const", const="user",
                       help="the user's settings in the home directory (default)")
    scope.add_argument("--project", dest="scope", action="store_const", const="project",
                       help="the settings of the project in the current directory")


def run(args) -> int:
    from ..hooks.install import settings_path, uninstall

    path = settings_path(args.agent, args.scope or "user")
    change = uninstall(args.agent, path)
    if not change.changed:
        print(f"not installed: {path}")
        return 0
    print(f"removed {change.entries} hook(s): {path}")
    if change.backup:
        print(f"backup: {change.backup}")
    return 0
