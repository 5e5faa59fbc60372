"""Every child process the tests start runs the implementation the test run asked for.

`make test-twin` runs the end-to-end suites with `YARP_NO_EXTENSIONS=1`; that
only proves the pure-Python twin if the brokers, bridges and `yarp run`
processes those tests start inherit the switch. Each environment factory of
the test helpers is checked here by asking a real child which implementation
it selected.
"""

from __future__ import annotations

import subprocess
import sys

from archive_factory import yarp_env
from broker_helpers import cleanup_broker_env, make_broker_env
from ingest_helpers import Sandbox
from yarp.wire import frames as fastframe
from yarp.archive import payload_kernel
from yarp.view import lines, scan, shapes, templates

PROBE = ("from yarp.wire import frames; from yarp.archive import payload_kernel; "
         "from yarp.view import lines, scan, shapes, templates; print(frames.IMPLEMENTATION, "
         "payload_kernel.IMPLEMENTATION, scan.IMPLEMENTATION, templates.IMPLEMENTATION, lines.IMPLEMENTATION, "
         "shapes.IMPLEMENTATION)")
#: What this test run selected, for the frame kernel, the payload kernel, the trigger scan, the line templates,
#: the lines and the line shapes.
SELECTED = (f"{fastframe.IMPLEMENTATION} {payload_kernel.IMPLEMENTATION} {scan.IMPLEMENTATION} "
            f"{templates.IMPLEMENTATION} {lines.IMPLEMENTATION} {shapes.IMPLEMENTATION}")


def _child_implementation(env: dict) -> str:
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()


def test_broker_environments_keep_the_selection():
    benv = make_broker_env()
    try:
        assert _child_implementation(benv.environ) == SELECTED
    finally:
        cleanup_broker_env(benv)


def test_bridge_sandboxes_keep_the_selection(tmp_path):
    assert _child_implementation(Sandbox.create(tmp_path).env()) == SELECTED


def test_command_environments_keep_the_selection(tmp_path):
    assert _child_implementation(yarp_env(tmp_path)) == SELECTED


def test_the_probe_sees_the_switch(tmp_path):
    """The probe itself can tell: with the switch set, a child always selects the twin."""
    assert _child_implementation(dict(yarp_env(tmp_path), YARP_NO_EXTENSIONS="1")) == "py py py py py py"


def test_brokers_run_on_the_event_loop_the_run_asked_for():
    """`make test` runs the broker suites a second time with YARP_EVENT_LOOP=asyncio."""
    import os

    from broker_helpers import BrokerProcess

    expected = os.environ.get("YARP_EVENT_LOOP") or "uvloop"
    benv = make_broker_env()
    try:
        broker = BrokerProcess(benv).wait_ready()
        try:
            assert benv.status()["eventLoop"] == expected
        finally:
            broker.stop()
        asyncio_env = benv.with_env(YARP_EVENT_LOOP="asyncio")
        broker = BrokerProcess(benv, env=asyncio_env).wait_ready()
        try:
            assert benv.status()["eventLoop"] == "asyncio"
        finally:
            broker.stop()
    finally:
        cleanup_broker_env(benv)
