"""A command run with one of its streams on a pseudo-terminal, as a person's terminal would show it."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios


def on_a_terminal(argv: list[str], env: dict, *, stream: str = "stdout", columns: int | None = None,
                  timeout: float = 60) -> tuple[subprocess.CompletedProcess, bytes]:
    """Run `argv` with its `stream` ("stdout" or "stderr") on a new terminal `columns` wide; return the
    finished process (the other stream captured) and every byte the terminal received."""
    leader, follower = pty.openpty()
    try:
        if columns is not None:
            fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        other = {"stdout": "stderr", "stderr": "stdout"}[stream]
        proc = subprocess.run(argv, env=env, timeout=timeout, **{stream: follower, other: subprocess.PIPE})
        os.close(follower)
        follower = -1
        seen = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal is closed once its last writer is gone
                break
            if not chunk:
                break
            seen.append(chunk)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    return proc, b"".join(seen)
