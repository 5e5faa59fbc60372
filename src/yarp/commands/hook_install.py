"""`yarp hook install AGENT`: add YARP's hooks to Claude Code's or Codex's settings."""

from __future__ import annotations

SUMMARY = "add the archive hooks to an agent's settings file (claude-code or codex)"
EPILOG = """\
files:
  claude-code  --user: ~/.claude/settings.json     --project: ./.claude/settings.json
  codex        --user: ~/.codex/hooks.json         --project: ./.codex/hooks.json

Existing settings and other hooks are kept; installing twice changes nothing.
The previous file is kept as <file>.yarp-backup-<unix ms> (mode 0600).
Codex runs hooks only with `codex_hooks = true` under [features] in ~/.codex/config.toml.
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
    from ..hooks.install import install, settings_path
    from ..hooks.launcher import shell_join, yarp_argv

    path = settings_path(args.agent, args.scope or "user")
    change = install(args.agent, path, shell_join(yarp_argv() + ["hook", args.agent]))
    if not change.changed:
        print(f"already installed: {path}")
        return 0
    print(f"installed: {path}")
    if change.backup:
        print(f"backup: {change.backup}")
    if args.agent == "codex":
        print("note: Codex runs hooks only with codex_hooks = true under [features] in its config.toml")
    return 0
