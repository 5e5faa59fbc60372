"""`yarp archive broker [status]`: run the single archive writer, or ask it for status."""

from __future__ import annotations

import os
import sys
import time

SUMMARY = "run the archive's single writer (started on demand by clients), or show its status"
EPILOG = """\
Clients start the broker on demand; you rarely run it yourself. It exits after
YARP_BROKER_IDLE_MS (default 60000) without clients or work.

  yarp archive broker --foreground     run attached, with a JSON log on stderr
  yarp archive broker status [--json]  clients, queue depth, batches, commit latency, retries
"""


def configure(parser) -> None:
    parser.add_argument("action", nargs="?", choices=["status"], help="ask a running broker for its status")
    parser.add_argument("--foreground", action="store_true", help="log structured events to stderr")
    parser.add_argument("--json", action="store_true", help="status as JSON")


def run(args) -> int:
    from yarp.paths import resolve_archive

    if args.archive:
        # Clients always start the broker with an explicit --archive: skipping
        # the configuration file (and its TOML parser) shortens cold start.
        location = resolve_archive(args.archive, os.environ)
    else:
        from yarp.config import load

        location = resolve_archive(None, os.environ, load().archive_path)
    if args.action == "status":
        return _status(location, args.json)
    try:
        from yarp.broker.lifecycle import run as run_broker
    except Exception as exc:  # a broken installation (a dependency that does not import): logged for `yarp doctor`
        from yarp import fault_log
        from yarp.errors import BrokerError

        fault_log.record(exc, operation="startup")
        raise BrokerError("the broker cannot start; " + fault_log.client_hint()) from None
    return run_broker(location, foreground=args.foreground)


def _status(location, as_json: bool) -> int:
    # Imported here: the broker itself starts through this module, and its
    # cold start should not pay for a JSON encoder it never uses.
    import json

    from yarp.clients.broker import BrokerClient
    from yarp.runtime import check_socket_entry, runtime_paths

    paths = runtime_paths(location.path)
    if not check_socket_entry(paths.socket):
        print(json.dumps({"running": False}) if as_json else "broker: not running")
        return 0
    with BrokerClient(location) as client:
        status = client.status(time.monotonic() + 5)
    status = {"running": True, **status}
    if as_json:
        print(json.dumps(status, sort_keys=True))
    else:
        for key, value in status.items():
            sys.stdout.write(f"{key}: {value}\n")
    return 0
