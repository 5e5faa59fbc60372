"""A loopback-only network namespace for the tests that run real agent programs.

Pi, Claude Code and Codex all try to reach public hosts (update checks,
telemetry, plugin fetches). Inside `loopback_namespace()` the calling thread is
moved into a fresh network namespace whose only interface is `lo`, brought up;
everything started from that thread while inside — the scripted model server
(its listening socket and threads), the agent and every process the agent
starts — lives in that namespace and can reach nothing but 127.0.0.1. On exit
the thread returns to the namespace it came from; the scripted server's socket
stays bound inside the new one, which disappears with its last user.

This is `unshare -n` followed by `ip link set lo up`, done with the two system
calls directly (`unshare(CLONE_NEWNET)` on the calling thread, then
`SIOCSIFFLAGS` on `lo`), so the server can be an in-process fixture whose
recorded requests the test reads. Registry installs must run before entering.
A network namespace needs CAP_SYS_ADMIN (root); without it the test is skipped
(failed in CI, `real_agent_required`), never run with the network reachable.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager

from real_agent_required import unavailable

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _bring_loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe.fileno(), SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def interfaces() -> list[str]:
    """The network interfaces the calling thread's namespace holds."""
    return [name for _, name in socket.if_nameindex()]


@contextmanager
def loopback_namespace() -> Iterator[None]:
    """Run the body (and every process it starts) in a new namespace with only `lo`, up."""
    libc = _libc()
    original = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.unshare(CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            unavailable(f"a loopback-only network namespace is needed to run a real agent: "
                        f"unshare(CLONE_NEWNET) failed: {os.strerror(error)} (run as root)")
        try:
            _bring_loopback_up()
            assert interfaces() == ["lo"], interfaces()
            yield
        finally:
            if libc.setns(original, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "cannot return to the original network namespace")
    finally:
        os.close(original)
