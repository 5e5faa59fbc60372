"""Types of the compiled trigger scan (`yarp._scan`)."""

from typing import Final, Literal

IMPLEMENTATION: Final[Literal["c"]]
GIL_FREE_BYTES: Final[int]

def trigger_lines(buf: bytes | bytearray | memoryview, triggers: tuple[bytes, ...]) -> dict[int, tuple[bytes, ...]]: ...
def trigger_line_numbers(buf: bytes | bytearray | memoryview, triggers: tuple[bytes, ...]
                         ) -> tuple[list[int], list[tuple[bytes, ...]]]: ...
