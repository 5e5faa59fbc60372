"""`yarp archive prune --before TIME`: delete finished calls older than TIME, through the broker.

`--incomplete-before TIME` also deletes the calls left `started` with no record
since TIME; `--dry-run` asks the broker what a prune would delete, and deletes
nothing (`yarp.archive.prune`).
"""

from __future__ import annotations

import sys
import time

from yarp.times import parse_time

SUMMARY = "delete finished calls older than a time (through the broker), then vacuum"
EPILOG = """\
TIME is RFC 3339 with any offset (2026-01-31T00:00:00Z), a local date or time
(2026-01-31, '2026-01-31 14:30'), Unix milliseconds, or an age: --before 30d
deletes what finished more than 30 days ago.

Calls still started (incomplete: a crash or a lost finish left them so) are
deleted only when --incomplete-before TIME asks for them too, and then only
those with no record since TIME (their start and every snapshot are older):
--incomplete-before 7d deletes those idle for a week. Either option alone is
enough. What was archived of them goes with them.

--dry-run deletes nothing: the broker counts what the same prune would delete
now, the calls, the payloads no remaining call uses and their bytes
(would_prune_calls, would_remove_payloads, would_free_logical_bytes,
would_free_stored_bytes).

Prints 'pruned_calls: N' once the prune is done, however long it takes: the
broker prunes in short steps between other requests (captures go on) and
reports its progress, shown on a terminal. If the broker connection is lost,
or it goes 30 s without a word, the outcome is unknown: a running broker goes
on and commits; inspect 'yarp archive stats' / 'verify' before retrying.
"""
#: How long the prune may take to reach the broker and begin; once it runs, its progress renews the wait.
PRUNE_TIMEOUT_S = 30.0
#: What the terminal line says in each phase of the prune (`yarp.archive.prune`).
_PHASES = {"count": "pruning: counting calls", "calls": "pruning calls", "payloads": "pruning: unreferenced payloads",
           "vacuum": "pruning: returning free pages"}
_DRY_PHASES = {"count": "dry run: counting calls", "payloads": "dry run: payloads that would go"}


def parse_before(text: str) -> int:
    """`--before` TIME (the command line's one grammar, `yarp.times`) → Unix milliseconds; `UsageError` otherwise."""
    return parse_time(text, "--before")


#: The name the benchmarks and tests know it by; it now reads every form, not only UTC.
parse_utc = parse_before


def configure(parser) -> None:
    parser.add_argument("--before", metavar="TIME",
                        help="delete finished calls that finished before TIME (RFC 3339, a date, or an age: 30d)")
    parser.add_argument("--incomplete-before", metavar="TIME",
                        help="also delete calls still started with no record since TIME (an age: 7d)")
    parser.add_argument("--dry-run", action="store_true",
                        help="delete nothing; print what the prune would delete (calls, payloads, bytes)")


def operation(args):
    """The prune the options ask for (`UsageError` when they ask for none)."""
    from yarp.errors import UsageError
    from yarp.wire import operations as ops

    if args.before is None and args.incomplete_before is None:
        raise UsageError("archive prune: --before TIME or --incomplete-before TIME is required")
    incomplete = None if args.incomplete_before is None else parse_time(args.incomplete_before, "--incomplete-before")
    # Without --before no finished call goes: none finished before 1970.
    return ops.PruneBefore(0 if args.before is None else parse_before(args.before), incomplete, args.dry_run)


def existing_archive(explicit: str | None):
    """The archive to prune, which must exist: a prune never creates one (a mistyped path is an error)."""
    import os

    from yarp.commands._archive import resolve_location
    from yarp.errors import ArchiveMissing
    from yarp.paths import refuse_directory

    location = resolve_location(explicit)
    refuse_directory(location)
    if not os.path.lexists(location.path):
        raise ArchiveMissing(f"archive database {location.path} does not exist: there is nothing to prune")
    return location


def run(args) -> int:
    from yarp.clients.broker import BrokerClient
    from yarp.errors import UnknownOutcome
    from yarp.wire import protocol

    prune = operation(args)
    location = existing_archive(args.archive)
    display = _progress(sys.stderr, _DRY_PHASES if prune.dry_run else _PHASES) if sys.stderr.isatty() else None
    try:
        with BrokerClient(location) as client:
            reply = client.send(protocol.outgoing(prune), time.monotonic() + PRUNE_TIMEOUT_S, on_progress=display)
    except UnknownOutcome:
        if not prune.dry_run:
            raise
        raise UnknownOutcome("the broker connection was lost before the dry run's answer; a dry run deletes "
                             "nothing: run it again") from None
    finally:
        if display is not None:
            display.close()
    sys.stdout.write("".join(f"{key}: {value}\n" for key, value in result_lines(prune, reply)))
    return 0


def result_lines(prune, reply: dict) -> list[tuple[str, int]]:
    """What the prune's answer says, as `name: value` lines: the calls deleted, or a dry run's counts."""
    if prune.dry_run:
        going = reply.get("dryRun") or {}
        lines = [("would_prune_calls", going.get("calls", 0))]
        if prune.incomplete_before_ms is not None:
            lines.append(("would_prune_incomplete_calls", going.get("incompleteCalls", 0)))
        return lines + [("would_remove_payloads", going.get("payloads", 0)),
                        ("would_free_logical_bytes", going.get("logicalBytes", 0)),
                        ("would_free_stored_bytes", going.get("storedBytes", 0))]
    lines = [("pruned_calls", reply.get("prunedCalls", 0))]
    if prune.incomplete_before_ms is not None:
        lines.append(("pruned_incomplete_calls", reply.get("prunedIncompleteCalls", 0)))
    return lines


def _progress(stream, phases: dict):
    """A terminal line of the prune's progress frames: its phase, and what it has done of it."""
    from yarp.progress import TerminalProgress

    display = TerminalProgress(stream, phases["count"])

    def show(progress: dict) -> None:
        label = phases.get(progress.get("phase"))
        done, total = progress.get("done"), progress.get("total")
        if label is None or type(done) is not int or type(total) is not int:
            return
        display.label = label
        display.update(done, total)

    show.close = display.close
    return show
