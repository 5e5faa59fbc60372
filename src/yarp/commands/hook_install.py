"""`yarp hook install AGENT`: add YARP's hooks to an agent's settings file, or its adapter to its folder."""

from __future__ import annotations

SUMMARY = "hook an agent up to the archive (claude-code, codex, gemini: settings file; pi, opencode: adapter folder)"
EPILOG = """\
files:
  claude-code  --user: ~/.claude/settings.json     --project: ./.claude/settings.json
  codex        --user: $CODEX_HOME/hooks.json (else ~/.codex/hooks.json)
               --project: ./.codex/hooks.json
  gemini       --user: $GEMINI_CLI_HOME/.gemini/settings.json (else ~/.gemini/settings.json)
               --project: ./.gemini/settings.json
  pi           --user: $PI_CODING_AGENT_DIR/extensions/yarp/ (else ~/.pi/agent/extensions/yarp/)
               --project: ./.pi/extensions/yarp/
  opencode     --user: $XDG_CONFIG_HOME/opencode/yarp/ and plugin/yarp.ts (else ~/.config/opencode/...)
               --project: ./.opencode/yarp/ and ./.opencode/plugin/yarp.ts

Existing settings and other hooks are kept; installing twice changes nothing.
The previous file is kept as <file>.yarp-backup-<unix ms> (mode 0600).
The Pi extension and the opencode plugin are copied from this yarp's own files
(no checkout, no npm) and run the yarp that installed them; installing again
after an upgrade replaces them.
Codex skips hooks it has not been told to trust, silently: after installing,
start `codex`, type /hooks and trust the entries that run `yarp hook codex`.
Gemini CLI runs hooks only in a folder it trusts (it asks once; a headless run
takes --skip-trust), and reads project hooks only if the folder was trusted
when it started.
"""
ARCHIVE_OPTION = False
#: Codex runs an untrusted hook never and says nothing about it.
CODEX_TRUST = (
    "Codex runs these hooks only after you trust them, and skips untrusted hooks without a word:",
    "  1. start `codex` in a terminal (in this project for --project),",
    "  2. type /hooks, review the entries that run `yarp hook codex`, and trust each of them.",
    "Trust is kept per entry in Codex's config.toml and lost when the entry changes (run this again, trust again).",
    "For one `codex exec` run without trusting: codex exec --dangerously-bypass-hook-trust ...",
)

#: Gemini CLI reads no hook at all in a folder it does not trust.
GEMINI_TRUST = (
    "Gemini CLI runs these hooks only in a folder it trusts: answer its trust prompt once per folder",
    "(a headless `gemini -p` run takes --skip-trust). Project hooks load only if the folder was trusted",
    "when gemini started (or with GEMINI_CLI_TRUST_WORKSPACE=true).",
)


def agents() -> tuple[str, ...]:
    """Every agent `yarp hook install` can hook up: settings-file hooks, then adapters installed as folders."""
    from yarp.hooks import extension_install
    from yarp.hooks.install import SETTINGS_FILES

    return (*SETTINGS_FILES, *extension_install.AGENTS)


def configure(parser) -> None:
    parser.add_argument("agent", choices=agents())
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="scope", action="store_const", const="user",
                       help="the user's settings in the home directory (default)")
    scope.add_argument("--project", dest="scope", action="store_const", const="project",
                       help="the settings of the project in the current directory")


def run(args) -> int:
    from yarp.hooks import extension_install
    from yarp.launcher import shell_join, yarp_argv

    if args.agent in extension_install.AGENTS:
        return _install_extension(args.agent, args.scope or "user", yarp_argv())
    from yarp.hooks.install import install, settings_path

    path = settings_path(args.agent, args.scope or "user")
    change = install(args.agent, path, shell_join(yarp_argv() + ["hook", args.agent]))
    if not change.changed:
        print(f"already installed: {path}")
    else:
        print(f"installed: {path}")
        if change.backup:
            print(f"backup: {change.backup}")
    for line in {"codex": CODEX_TRUST, "gemini": GEMINI_TRUST}.get(args.agent, ()):
        print(line)
    return 0


def _install_extension(agent: str, scope: str, argv: list[str]) -> int:
    from yarp.hooks.extension_install import install, install_path

    change = install(agent, install_path(agent, scope), argv)
    print(f"{'installed' if change.changed else 'already installed'}: {change.path}")
    name = {"pi": "Pi", "opencode": "opencode"}[agent]
    print(f"{name} loads it at its next start; `yarp doctor` checks it.")
    return 0
