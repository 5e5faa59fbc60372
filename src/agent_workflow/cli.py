"""The `agent-workflow` command line: a thin, lazily loaded layer over the index.

Commands::

    agent-workflow index status | sync | rebuild | verify --full [--review SESSION]
    agent-workflow index query KIND [filters] [--limit N] [--fresh] [--json]
    agent-workflow index export --format parquet DIR
    agent-workflow supervisor once [--no-sync-index]

Only argparse and the errors module load at start-up; each command imports
what it needs when it runs. An `AgentWorkflowError` becomes one bounded stderr
line and its exit status (64 usage, 65 invalid evidence/index, 74 I/O); no
traceback reaches the user. There is no way to run arbitrary SQL.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__
from .errors import EXIT_DATA, EXIT_OK, EXIT_USAGE, AgentWorkflowError, UsageError, bounded_text

QUERY_KINDS = ("runs", "incidents", "permissions", "performance", "workflows", "workflow-nodes", "repairs", "errors")
QUERY_FILTERS = ("session", "state", "category", "executor", "model", "pack")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # `main` puts `agent-workflow: ` in front once; a subcommand's path follows it.
        command = self.prog.removeprefix("agent-workflow").strip()
        raise UsageError(f"{command}: {message}" if command else message)


def _limit(text: str) -> int:
    from .limits import MAX_QUERY_LIMIT, MIN_QUERY_LIMIT

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be an integer") from None
    if not MIN_QUERY_LIMIT <= value <= MAX_QUERY_LIMIT:
        raise argparse.ArgumentTypeError(f"must be between {MIN_QUERY_LIMIT} and {MAX_QUERY_LIMIT}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The `agent-workflow` argument parser: the `index` group's commands, each with `--state-root` and `--json`."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--state-root", metavar="PATH",
        help="agent-workflow state root, which must exist (default: $XDG_STATE_HOME/agent-workflow, else "
             "~/.local/state/agent-workflow, created by sync and rebuild when absent)",
    )
    common.add_argument("--json", action="store_true", help="print a JSON document instead of text")
    parser = _Parser(prog="agent-workflow", description="Query and maintain the agent-workflow evidence index.")
    parser.add_argument("--version", action="version", version=f"agent-workflow {__version__}")
    groups = parser.add_subparsers(dest="group", metavar="GROUP", parser_class=_Parser)
    groups.required = True
    index = groups.add_parser("index", help="the SQLite evidence index (a disposable projection)")
    sub = index.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    sub.add_parser("status", parents=[common], help="freshness, run counts and schema version")
    p = sub.add_parser("sync", parents=[common], help="re-project changed runs; exit 65 if any run is in error")
    p.add_argument("--session", metavar="ID", help="sync only this run")
    sub.add_parser("rebuild", parents=[common], help="delete the projection and rebuild it from evidence")
    p = sub.add_parser("verify", parents=[common], help="re-read every source and compare; exit 65 when invalid")
    p.add_argument("--full", action="store_true", required=True, help="full verification (the only mode)")
    p.add_argument("--review", metavar="SESSION", help="verify and describe only this run")
    p = sub.add_parser("query", parents=[common], help="curated read-only queries")
    p.add_argument("kind", choices=QUERY_KINDS)
    for name in QUERY_FILTERS:
        p.add_argument(f"--{name}", metavar="VALUE", help=f"filter by {name} (where the kind supports it)")
    p.add_argument("--limit", type=_limit, default=100, help="rows to return, 1-10000 (default 100)")
    p.add_argument("--fresh", action="store_true",
                   help="check every run's fingerprint for freshness (default: a bounded probe)")
    p = sub.add_parser("export", parents=[common], help="write each typed table as a Parquet file")
    p.add_argument("--format", choices=("parquet",), required=True)
    p.add_argument("directory", metavar="DIR")
    supervisor = groups.add_parser("supervisor", help="foreground run-health supervisor")
    sub = supervisor.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    p = sub.add_parser("once", parents=[common], help="one health-collection cycle, then sync the index")
    p.add_argument("--no-sync-index", action="store_true", help="do not sync the index after the cycle")
    p.add_argument("--no-progress-seconds", type=float, default=None, metavar="S",
                   help="seconds without semantic progress before an incident (default 600)")
    return parser


def _emit(args, document: dict, text: str) -> None:
    if args.json:
        import json

        sys.stdout.write(json.dumps(document, sort_keys=True, indent=2) + "\n")
    else:
        sys.stdout.write(text + "\n")


def _sync_text(report: dict) -> str:
    lines = [
        f"{report['operation']}: {report['indexed_count']} indexed, {report['skipped_count']} unchanged, "
        f"{report['historical_count']} historical, {report['pruned_count']} pruned, "
        f"{report['error_count']} errors, {report['repair_count']} repairs ({report['elapsed_seconds']} s)"
    ]
    for item in report["errors"][:20]:
        lines.append(f"  error {item['session_id']}: {item['category']}: {item['detail']}")
    return "\n".join(lines)


def _check_named_root(explicit: str | None) -> None:
    """Refuse a `--state-root` that does not exist: a typo would otherwise index nothing and report
    success. Only the default root (named or not) is ever created, by sync, rebuild and the supervisor."""
    if explicit is None:
        return
    from .state_root import default_state_root

    path = os.path.abspath(os.path.expanduser(explicit))
    if path != default_state_root() and not os.path.lexists(path):
        raise UsageError(f"--state-root {path} does not exist")


def _run(args) -> int:
    from . import index_store

    _check_named_root(args.state_root)
    if args.group == "supervisor":
        from .supervisor import run_once

        root = index_store.open_root(args.state_root)
        report = run_once(root, sync_index=not args.no_sync_index, no_progress_seconds=args.no_progress_seconds)
        text = "\n".join(
            [f"supervisor: {len(report['runs'])} active runs, {report['health_sample_count']} samples, "
             f"{report['incident_count']} incidents"]
            + [f"index_sync: {report['index_sync']['status']}"
               + (f" ({report['index_sync']['error']})" if report["index_sync"].get("error") else "")]
        )
        _emit(args, report, text)
        return EXIT_DATA if report["index_sync"]["status"] == "error" else EXIT_OK
    command = args.command
    if command in ("sync", "rebuild"):
        root = index_store.open_root(args.state_root, create=True)
        report = index_store.sync(root, only=getattr(args, "session", None), rebuild=command == "rebuild")
        _emit(args, report, _sync_text(report))
        return EXIT_DATA if report["error_count"] or report["repair_error_count"] else EXIT_OK
    root = index_store.open_root(args.state_root)
    if command == "status":
        from .freshness import summary_line

        report = index_store.status(root)
        counts = report["run_counts"]
        _emit(args, report, summary_line(report) + f"\nschema version {report['schema_version']}, last sync "
              f"{report['last_sync_at'] or 'never'}; runs: {counts['current']} current, {counts['error']} error, "
              f"{counts['historical_artifact']} historical")
        return EXIT_OK
    if command == "verify":
        report = index_store.verify(root, review=args.review)
        lines = [f"verify: {'valid' if report['valid'] else 'INVALID'} ({report['checked_run_count']} runs checked, "
                 f"{report['problem_count']} problems, {report['quarantined_count']} quarantined)"]
        lines += [f"  {p['session_id'] or '-'}: {p['category']}: {p['detail']}" for p in report["problems"][:50]]
        lines += [f"  quarantined {q['session_id']}: {q['detail']}" for q in report["quarantined"][:50]]
        _emit(args, report, "\n".join(lines))
        return EXIT_OK if report["valid"] else EXIT_DATA
    if command == "query":
        from .render import query_text

        filters = {name: getattr(args, name) for name in QUERY_FILTERS}
        report = index_store.query(root, args.kind, filters, args.limit, fresh=args.fresh)
        _emit(args, report, query_text(report) if not args.json else "")
        return EXIT_OK
    if command == "export":
        report = index_store.export(root, args.directory)
        _emit(args, report, f"exported {len(report['tables'])} tables to {report['directory']}")
        return EXIT_OK
    raise UsageError("unknown command")


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit code; never raises for a known failure.

    An `AgentWorkflowError` becomes one bounded line on stderr and its own exit code; Ctrl-C exits 130.
    """
    try:
        args = build_parser().parse_args(argv)
        return _run(args)
    except AgentWorkflowError as exc:
        sys.stderr.write(f"agent-workflow: {bounded_text(exc.message)}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except SystemExit as exc:  # --help
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
