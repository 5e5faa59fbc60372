"""Know, on the broker's event loop, when an agent's transcript file is written (Linux inotify).

Codex writes a command's output to its session transcript before it starts
the `PostToolUse` hook process; the broker learns of the file's change at
once, while that process is still starting, and can do the post event's work
ahead of it (`yarp.agents.codex.broker.ahead`). Only a hint: nothing is read here, a watch
may be dropped at any time, and where inotify is unavailable (another
system, the watch limit reached) `TranscriptWatch.available` is False or
`watch` returns False, and the post event does all the work itself.

At most `MAX_WATCHED` files are watched: the least recently asked for is
dropped first. A watch never follows a symbolic link.
"""

from __future__ import annotations

import os
import struct
from collections import OrderedDict
from collections.abc import Callable

#: Files watched at once (each open Codex session has one transcript).
MAX_WATCHED = 64
_IN_MODIFY = 0x2
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_DONT_FOLLOW = 0x02000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then `len` bytes of name)
_READ_BYTES = 64 * 1024


def _libc():
    """libc's inotify calls, or None where there are none."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        init, add, remove = libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch
    except (OSError, AttributeError, ImportError):
        return None
    init.argtypes, init.restype = [ctypes.c_int], ctypes.c_int
    add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
    remove.argtypes, remove.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return init, add, remove


class TranscriptWatch:
    """Calls `changed(path)` on `loop` after a watched file is written (once per batch of writes read)."""

    def __init__(self, loop, changed: Callable[[str], None]) -> None:
        self._loop = loop
        self._changed = changed
        self._paths: OrderedDict[str, int] = OrderedDict()  # path -> watch descriptor
        self._by_wd: dict[int, str] = {}
        self._calls = _libc()
        self._fd = -1
        if self._calls is not None:
            fd = self._calls[0](_IN_NONBLOCK | _IN_CLOEXEC)
            if fd >= 0:
                self._fd = fd
                loop.add_reader(fd, self._ready)

    @property
    def available(self) -> bool:
        """Whether files can be watched here at all."""
        return self._fd >= 0

    def watch(self, path: str) -> bool:
        """Watch `path` (already watched: made the most recent); False if it cannot be watched."""
        if self._fd < 0:
            return False
        if path in self._paths:
            self._paths.move_to_end(path)
            return True
        wd = self._calls[1](self._fd, os.fsencode(path), _IN_MODIFY | _IN_DONT_FOLLOW)
        if wd < 0:
            return False
        stale = self._by_wd.get(wd)  # the same file under another name: one watch, the newer name
        if stale is not None:
            self._paths.pop(stale, None)
        self._paths[path] = wd
        self._by_wd[wd] = path
        while len(self._paths) > MAX_WATCHED:
            self.forget(next(iter(self._paths)))
        return True

    def forget(self, path: str) -> None:
        """Stop watching `path` (nothing if it is not watched)."""
        wd = self._paths.pop(path, None)
        if wd is not None and self._by_wd.get(wd) == path:
            del self._by_wd[wd]
            self._calls[2](self._fd, wd)

    def close(self) -> None:
        """Stop watching everything and close the inotify descriptor."""
        if self._fd >= 0:
            self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = -1
        self._paths.clear()
        self._by_wd.clear()

    def _ready(self) -> None:
        changed: set[str] = set()
        overflow = False
        while True:
            try:
                data = os.read(self._fd, _READ_BYTES)
            except BlockingIOError:
                break
            except OSError:
                return
            if not data:
                break
            at = 0
            while at + _EVENT.size <= len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, at)
                at += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    overflow = True
                elif mask & _IN_IGNORED:  # the file is gone (or the watch was removed)
                    path = self._by_wd.pop(wd, None)
                    if path is not None:
                        self._paths.pop(path, None)
                elif wd in self._by_wd:
                    changed.add(self._by_wd[wd])
        for path in (list(self._paths) if overflow else changed):
            self._changed(path)
