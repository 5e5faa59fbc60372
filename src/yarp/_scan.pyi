"""Types of the compiled trigger scan (`yarp._scan`)."""

from typing import Final, Literal

IMPLEMENTATION: Final[Literal["c"]]
GIL_FREE_BYTES: Final[int]

def trigger_lines(buf: bytes | bytearray | memoryview, triggers: tuple[bytes, ...]) -> dict[int, tuple[bytes, ...]]: ...
def trigger_line_numbers(buf: bytes | bytearray | memoryview, triggers: tuple[bytes, ...]) -> list[tuple[int, tuple[bytes, ...]]]: ...

SHAPE_BYTES: Final[int]

def line_shapes(data: bytes | bytearray | memoryview) -> list[bytes]: ...
def rows_breaking(data: bytes | bytearray | memoryview, width: int, rule: tuple[tuple[int, bytes], ...]) -> tuple[int, list[int]]: ...
