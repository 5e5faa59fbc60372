"""When the broker starts the background refresh of its archive's read summaries (`yarp.archive.refresh`).

The statistics and savings reports keep what they computed and read only what
was added since; the first run over a large archive computes everything and
takes seconds (30 s for the savings at 1,000,000 calls). So the broker, which
is there while calls are written, starts `python -m yarp.archive.refresh
ARCHIVE` as a child once its archive is large (`YARP_BROKER_REFRESH_BYTES`,
64 MiB of database file by default):

- when it starts serving, so an archive that was never refreshed (or whose
  summaries an upgrade made stale) is refreshed while its agents work;
- while it serves, after every `YARP_BROKER_REFRESH_REQUESTS` requests
  (10,000 by default, about 5,000 calls);
- when it exits idle, after any request since the last refresh, so a session
  that just ended is in the summaries.

At most one child runs at a time, at a lower priority, in a session of its
own (it outlives an exiting broker) and with no descriptor of the broker's.
Below the size a report computes from scratch in well under a second, and
nothing is started: the suites' small archives never pay for a process.
"""

from __future__ import annotations

import os
import subprocess
import sys

BYTES_ENV = "YARP_BROKER_REFRESH_BYTES"
REQUESTS_ENV = "YARP_BROKER_REFRESH_REQUESTS"
#: The database file size from which the broker keeps the summaries up to date.
DEFAULT_BYTES = 64 * 1024 * 1024
#: Requests (about two a call) between two refreshes while the broker serves.
DEFAULT_REQUESTS = 10_000


class Refresher:
    """The broker's refresh child: when to start one, and the one running."""

    def __init__(self, archive_path: str, *, min_bytes: int = DEFAULT_BYTES,
                 every_requests: int = DEFAULT_REQUESTS, log=None) -> None:
        self.archive_path = archive_path
        self.min_bytes = min_bytes
        self.every_requests = every_requests
        self._log = log
        self._child: subprocess.Popen | None = None
        #: The broker's request count when the last child started.
        self._at_requests = 0

    def started_serving(self) -> None:
        """The broker accepts clients: refresh a large archive once."""
        self._start("start", 0)

    def served(self, requests: int) -> None:
        """The broker went idle between clients, `requests` served so far: refresh every `every_requests`."""
        if requests - self._at_requests >= self.every_requests:
            self._start("requests", requests)

    def exiting(self, requests: int) -> None:
        """The broker exits idle: refresh what was written since the last refresh."""
        if requests > self._at_requests:
            self._start("exit", requests)

    def _start(self, reason: str, requests: int) -> None:
        if self._child is not None and self._child.poll() is None:
            return  # one at a time; the next trigger finds what this one missed
        self._child = None
        try:
            if os.stat(self.archive_path).st_size < self.min_bytes:
                return
            self._child = subprocess.Popen(
                [sys.executable, "-m", "yarp.archive.refresh", self.archive_path],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                close_fds=True, start_new_session=True)
        except OSError as exc:
            if self._log is not None:
                self._log("refresh_failed", reason=reason, error=type(exc).__name__)
            return
        self._at_requests = requests
        if self._log is not None:
            self._log("refresh_started", reason=reason, pid=self._child.pid)
