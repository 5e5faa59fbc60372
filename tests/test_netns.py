"""The loopback-only namespace the real agent tests run in: only `lo`, nothing else reachable."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys

from netns import interfaces, loopback_namespace


def test_only_loopback_inside_and_the_thread_returns_after():
    before = os.stat("/proc/thread-self/ns/net").st_ino
    with loopback_namespace():
        inside = os.stat("/proc/thread-self/ns/net").st_ino
        assert inside != before and interfaces() == ["lo"]
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.settimeout(5)
        try:
            code = probe.connect_ex(("192.0.2.1", 80))  # TEST-NET-1: no route from a loopback-only namespace
        finally:
            probe.close()
        assert code == errno.ENETUNREACH
        with socket.create_server(("127.0.0.1", 0)) as server:
            port = server.getsockname()[1]
            # A child process started inside shares the namespace and reaches the server on loopback.
            child = subprocess.run(
                [sys.executable, "-c", f"import os, socket; socket.create_connection(('127.0.0.1', {port}), 5).close();"
                 " print(os.stat('/proc/self/ns/net').st_ino)"],
                capture_output=True, text=True, timeout=30, check=True)
            assert int(child.stdout) == inside
    assert os.stat("/proc/thread-self/ns/net").st_ino == before
