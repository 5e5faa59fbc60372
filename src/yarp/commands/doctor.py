"""`yarp doctor`: whether YARP works here, one line per check with a fix."""

from __future__ import annotations

SUMMARY = "check that yarp works here: data files, kernels, archive, broker, a capture, agent hooks"
EPILOG = """\
Each line is `ok`, `warn` or `fail`, what was found and, unless ok, what to do.
It starts a broker if none runs and archives one `yarp run -- true` call,
read back to prove the round trip; it prints no archived content. That call
is the probe's (agent yarp-doctor): 'yarp calls' and 'yarp archive savings'
leave it out ('yarp calls --agent yarp-doctor' lists the probes).

Exit status: 0 when nothing fails (warnings allowed), 1 when a check fails.
"""


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object: {healthy, version, checks}")


def run(args) -> int:
    import json
    import sys

    from yarp import doctor

    def show(check) -> None:
        line = f"{check.status:<4}  {check.name}: {check.detail}"
        if check.fix:
            line += f"\n      fix: {check.fix}"
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    report = doctor.run(args.archive, on_check=None if args.json else show)
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write("yarp works here\n" if report.healthy else "yarp does not work here: see the fail lines\n")
    return 0 if report.healthy else 1
