#!/usr/bin/env python3
"""A minimal adapter for `yarp archive ingest`: capture one tool call.

Copy this when you write an adapter for another agent. It shows everything the
protocol asks of you (docs/ingest-protocol.md has the full reference):

* start one long-lived `yarp archive ingest` child per agent session;
* write each request as an 8-byte big-endian length followed by UTF-8 JSON;
* send one request at a time and read its acknowledgement line before the next;
* number requests 1, 2, 3 … and always send ``"schemaVersion": 1``;
* give begin_call an absolute ``deadlineAtMs`` (at most 30 s ahead) and wait for
  its acknowledgement no longer than that; the other operations may take 30 s;
* ``"ok": false`` is a rejection of that request only: the bridge goes on;
  an ended bridge (exit status 74) means capture failed: start a new one later.

Run it:   yarp must be on PATH (or set YARP=/path/to/yarp); then
          python examples/ingest_client.py
It prints the acknowledgements, then the call's archive reference.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
import sys
import time

BEGIN_CALL_TIMEOUT_S = 2.0
OTHER_TIMEOUT_S = 30.0


class IngestBridge:
    """One `yarp archive ingest` child for one agent session."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command + ["archive", "ingest"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_request_id = 1
        self.pending = b""

    def request(self, body: dict, timeout_s: float) -> dict:
        """Send one operation and return its acknowledgement ({"requestId", "ok", …})."""
        request_id = self.next_request_id
        self.next_request_id += 1
        frame = json.dumps({"requestId": request_id, "schemaVersion": 1, **body}).encode("utf-8")
        self.proc.stdin.write(len(frame).to_bytes(8, "big") + frame)
        self.proc.stdin.flush()
        ack = json.loads(self._read_line(timeout_s))
        if ack["requestId"] != request_id:
            raise RuntimeError("acknowledgement for another request")
        return ack

    def _read_line(self, timeout_s: float) -> bytes:
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no acknowledgement in time")
            if select.select([fd], [], [], remaining)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError(f"ingest ended with status {self.proc.wait()}")
                self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    def close(self) -> int:
        """Close stdin at a frame boundary: the bridge exits 0."""
        self.proc.stdin.close()
        return self.proc.wait()


def now_ms() -> int:
    return int(time.time() * 1000)


def main() -> int:
    bridge = IngestBridge(shlex.split(os.environ.get("YARP", "yarp")))
    session = {"agent": "example", "account": os.environ.get("USER", "local"), "sourceSessionId": "demo-session"}
    call_id = f"call-{now_ms()}"
    arguments = {"path": "README.md"}
    try:
        began = bridge.request({
            "operation": "begin_call",
            "session": session,
            "call": {"sourceCallId": call_id, "toolName": "read", "startedAtMs": now_ms(), "requiresStreams": False},
            "inputBefore": arguments,   # what the model asked for
            "inputAfter": arguments,    # what the tool will run (the same here)
            "capturedAtMs": now_ms(),
            "deadlineAtMs": now_ms() + int(BEGIN_CALL_TIMEOUT_S * 1000),
        }, BEGIN_CALL_TIMEOUT_S)
        print(began)
        if not began["ok"]:
            # Run the tool without capture; a later call may try again.
            return 1
        result = {"content": [{"type": "text", "text": "# Title\n"}], "details": None, "isError": False}
        print(bridge.request({"operation": "result_before", "session": session, "sourceCallId": call_id,
                              "result": result, "capturedAtMs": now_ms()}, OTHER_TIMEOUT_S))
        print(bridge.request({"operation": "finish_call", "session": session, "sourceCallId": call_id,
                              "result": result, "isError": False, "requirePreResult": True,
                              "finishedAtMs": now_ms()}, OTHER_TIMEOUT_S))
        print(f"archived as {began['archiveRef']}")
    finally:
        status = bridge.close()
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
