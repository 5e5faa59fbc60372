"""`yarp import`: past agent sessions into the archive, through the broker (each agent's reader: `yarp.agents`)."""

from __future__ import annotations

import json
import os
import sys

from yarp import agents
from yarp.errors import UsageError
from yarp.transcripts.discovery import AGENTS

SUMMARY = "import past tool calls of the agents from their transcripts"
_WHERE = "".join(f"\n  {name:<12} {agents.record(name).TRANSCRIPTS}" for name in AGENTS)
EPILOG = f"""\
AGENT is one of the agents below, or all (the default). Without PATHS, where
each keeps its transcripts is read, read only:{_WHERE}
PATHS may be files or directories; each must exist (exit 64 otherwise),
and so must the directory of an --archive PATH.

Imports are incremental: each transcript's checkpoint (identity, size, offset,
prefix hash, parser version) lives in a private state file next to the archive,
so a second run reads only what was appended and imports nothing twice. Calls
already archived (captured live) are left untouched. Calls of a transcript
written in the last --settle seconds that still wait for their result are kept
for the next run; older ones are recorded without a result.

--dry-run reads and counts but writes nothing; no output ever shows content.
Ends with a one-line summary (or one JSON object with --json); a progress line
is drawn on a terminal.

Exit status: 0, 64 bad usage, 65 bad data, 74 archive or broker unavailable.

Examples:
  yarp import
  yarp import {AGENTS[0]} --dry-run
  yarp import {AGENTS[0]} ~/some/transcripts --since 2026-01-01T00:00:00Z
  yarp import all --json
"""

_AGENT_CHOICES = (*AGENTS, "all")


def configure(parser) -> None:
    parser.add_argument("targets", nargs="*", metavar="[AGENT] PATH",
                        help=f"whose transcripts to read ({', '.join(_AGENT_CHOICES)}; default all),"
                             " then transcript files or directories")
    parser.add_argument("--since", metavar="TIME", help="only transcripts modified since (RFC 3339 or Unix ms)")
    parser.add_argument("--dry-run", action="store_true", help="count only; write nothing")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.add_argument("--settle", type=float, default=None, metavar="SECONDS",
                        help="idle time after which calls without a result are recorded as such (default 600)")


def _progress(stream):
    """A terminal display of the import: files read, calls read and imported; removed at the end."""
    from yarp.progress import TerminalProgress

    display = TerminalProgress(stream, "importing files")

    def show(done: int, total: int, tally) -> None:
        display.update(done, total, f"({tally.calls_found} calls read, {tally.calls_new} imported)")

    show.close = display.close
    return show


def summary_line(values: dict, dry_run: bool) -> str:
    verb = "would import" if dry_run else "imported"
    return (f"{verb} {values['callsNew']} calls from {values['files']} files ({values['sessions']} sessions);"
            f" {values['callsAlreadyArchived'] + values['callsImportedBefore']} already archived,"
            f" {values['callsRefused']} refused,"
            f" {values['callsWithoutResult']} without result, {values['callsWaitingForResult']} waiting,"
            f" {values['resultsWithoutCall']} results without call, {values['corruptLines']} corrupt lines,"
            f" {sum(values['unknownRecords'].values())} unknown records")


def _check_paths(paths: list[str], first: bool) -> None:
    """Refuse a transcript path that does not exist: read as empty, a typo would import nothing and succeed.
    `first`: the first path came where an agent may (no agent was named), so a mistyped agent is said as that."""
    for index, path in enumerate(paths):
        if not os.path.lexists(path):
            if first and index == 0 and os.sep not in path:
                raise UsageError(f"{path} is neither an agent ({', '.join(_AGENT_CHOICES)}) nor an existing path")
            raise UsageError(f"{path} does not exist")


def run(args) -> int:
    from yarp.commands.search import parse_time_ms
    from yarp.config import load
    from yarp.paths import named_archive_problem, resolve_archive
    from yarp.transcripts.importer import DEFAULT_SETTLE_S, ImportOptions, import_transcripts

    since_ms = None
    if args.since is not None:
        try:
            since_ms = parse_time_ms(args.since)
        except Exception as exc:
            raise UsageError(f"--since: {exc}") from None
    if args.settle is not None and not 0 <= args.settle <= 10**7:
        raise UsageError("--settle must be between 0 and 10000000 seconds")
    targets = list(args.targets)
    agent = targets.pop(0) if targets and targets[0] in _AGENT_CHOICES else "all"
    agents = AGENTS if agent == "all" else (agent,)
    _check_paths(targets, first=agent == "all")
    location = resolve_archive(args.archive, os.environ, load().archive_path)
    if args.archive is not None and (problem := named_archive_problem(location)) is not None:
        raise UsageError(f"--archive: {problem}")
    options = ImportOptions(agents, tuple(targets), since_ms, args.dry_run,
                            DEFAULT_SETTLE_S if args.settle is None else args.settle)
    progress = _progress(sys.stderr) if sys.stderr.isatty() and not args.json else None
    try:
        tally = import_transcripts(location, options, progress=progress)
    finally:
        if progress is not None:
            progress.close()
    values = tally.to_json()
    if args.json:
        sys.stdout.write(json.dumps(values) + "\n")
    else:
        for issue in values["issues"]:
            sys.stderr.write(f"yarp import: {issue['file']}:{issue['line']}: {issue['reason']}\n")
        sys.stdout.write(summary_line(values, args.dry_run) + "\n")
    return 0
