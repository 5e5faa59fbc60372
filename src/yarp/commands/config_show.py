"""`yarp config show`: the effective configuration, every key, archive path absolute."""

from __future__ import annotations

import json
import os
import sys

SUMMARY = "show the effective configuration (defaults plus config.toml)"
EPILOG = """\
Without --json, prints the file it read as a first '# ' comment line (or that
there is none, and the defaults apply), then one 'key = value' line per setting
(values in TOML/JSON notation). The file is $YARP_CONFIG, else
$XDG_CONFIG_HOME/yarp/config.toml (else ~/.config/yarp/config.toml). With
--json, prints the reference's object: version, pruning.enabled,
output.cap_bytes, output.recovery_cap_bytes, output.recovery_cap_lines,
archive.enabled, archive.path and rules.packs.
"""
ARCHIVE_OPTION = False


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _flatten(prefix: str, value, out: list[str]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else key, inner, out)
    else:
        out.append(f"{prefix} = {json.dumps(value, ensure_ascii=False)}")


def source_line(environ=os.environ) -> str:
    """The comment naming the configuration file read, or saying there is none (and who named it)."""
    from yarp.config import CONFIG_ENV, config_path

    path = config_path(environ)
    named = f" (named by ${CONFIG_ENV})" if environ.get(CONFIG_ENV) else ""
    if os.path.exists(path):
        return f"# configuration file: {path}{named}"
    return f"# configuration file: {path}{named} does not exist; these are the defaults"


def run(args) -> int:
    from yarp.config import load

    shown = load().to_json()
    if args.json:
        sys.stdout.write(json.dumps(shown, separators=(",", ":"), ensure_ascii=False) + "\n")
    else:
        lines: list[str] = [source_line()]
        _flatten("", shown, lines)
        sys.stdout.write("\n".join(lines) + "\n")
    return 0
