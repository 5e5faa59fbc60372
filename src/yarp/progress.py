"""A one-line progress display for long commands run at a terminal.

Written by hand rather than drawn by a progress library: tqdm, the well-kept
choice, added about 50 ms to every terminal run of `yarp archive verify`
(147 ms against 94 ms, medians of 15) through its own imports, more than the
whole display is worth (see docs/design/packaging.md, "A progress library for long
commands"). Only a command whose stderr is a terminal creates one.
"""

from __future__ import annotations

import time

#: Redraw at most this often; the last step is always drawn.
MIN_INTERVAL_S = 0.2


class TerminalProgress:
    """`label done/total detail` on one terminal line, throttled, removed when closed."""

    def __init__(self, stream, label: str, *, after_s: float = 0.0) -> None:
        self.stream = stream
        self.label = label
        self.last = 0.0
        self.shown = False
        #: Nothing is drawn before this: a command that is usually quick shows no line when it is.
        self.quiet_until = time.monotonic() + after_s if after_s else 0.0

    def update(self, done: int, total: int, detail: str = "") -> None:
        """Show `done`/`total` and `detail`; redraws are throttled except for the last step."""
        now = time.monotonic()
        if (now - self.last < MIN_INTERVAL_S and done != total) or now < self.quiet_until:
            return
        self.last = now
        self.shown = True
        self.stream.write(f"\r\033[K{self.label} {done}/{total}{' ' + detail if detail else ''}")
        self.stream.flush()

    def note(self, text: str) -> None:
        """Show `label: text` (a step without a count, such as a check that cannot say how far it is);
        throttled like `update`."""
        now = time.monotonic()
        if now - self.last < MIN_INTERVAL_S or now < self.quiet_until:
            return
        self.last = now
        self.shown = True
        self.stream.write(f"\r\033[K{self.label.split(' ', 1)[0]}: {text}")
        self.stream.flush()

    def close(self) -> None:
        """Remove the line, so the command's own output starts on a clean line."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
