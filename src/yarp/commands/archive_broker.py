"""`yarp archive broker [status|stop]`: run the single archive writer, ask it for status, or stop it."""

from __future__ import annotations

import os
import sys
import time

SUMMARY = "run the archive's single writer (started on demand by clients), show its status, or stop it"
EPILOG = """\
Clients start the broker on demand; you rarely run it yourself. It exits after
YARP_BROKER_IDLE_MS (default 60000) without clients or work.

  yarp archive broker --foreground     run attached, with a JSON log on stderr
  yarp archive broker status [--json]  clients, queue depth, batches, commit latency, retries
  yarp archive broker stop [--json]    let it finish its admitted work, then exit (any yarp version)
"""


def configure(parser) -> None:
    parser.add_argument("action", nargs="?", choices=["status", "stop"],
                        help="ask a running broker for its status, or to drain and exit")
    parser.add_argument("--foreground", action="store_true", help="log structured events to stderr")
    parser.add_argument("--json", action="store_true", help="status or stop report as JSON")


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
    if args.action == "stop":
        return _stop(location, args.json)
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

    from yarp._version import __version__
    from yarp.clients.broker import BrokerClient
    from yarp.errors import BrokerUnavailable, BrokerVersionMismatch
    from yarp.runtime import check_socket_entry, runtime_paths

    paths = runtime_paths(location.path)
    status = None
    if check_socket_entry(paths.socket):
        try:
            with BrokerClient(location) as client:
                status = {"running": True, "compatible": True, **client.status(time.monotonic() + 5)}
        except BrokerVersionMismatch as exc:
            status = {"running": True, "compatible": False, "binaryVersion": exc.broker_version, "pid": exc.pid,
                      "note": f"a broker of another yarp version (this is {__version__}) serves this archive; "
                              "the next capture asks it to drain and exit and starts this version's, "
                              "or run `yarp archive broker stop`"}
        except BrokerUnavailable:  # a socket left behind, nothing answering on it
            status = None
    if status is None:
        print(json.dumps({"running": False}) if as_json else "broker: not running")
    elif as_json:
        print(json.dumps(status, sort_keys=True))
    else:
        for key, value in status.items():
            sys.stdout.write(f"{key}: {value}\n")
    return 0


def _stop(location, as_json: bool) -> int:
    import json

    from yarp.clients.stop import stop_broker

    stopped = stop_broker(location)
    if stopped is None:
        print(json.dumps({"running": False, "stopped": False}) if as_json else "broker: not running")
        return 0
    if as_json:
        print(json.dumps({"stopped": True, "pid": stopped.pid, "binaryVersion": stopped.version,
                          "waitedMs": stopped.waited_ms, "status": stopped.status}, sort_keys=True))
        return 0
    line = f"stopped: the broker of yarp {stopped.version} (pid {stopped.pid})"
    status = stopped.status
    if status is not None:
        line += (f", up {status.get('uptimeMs', 0) / 1000:.1f} s, {status.get('requests')} requests answered, "
                 f"{status.get('admitted')} in flight when asked")
    sys.stdout.write(line + f"; it finished its admitted work and released the archive in {stopped.waited_ms} ms\n")
    return 0
