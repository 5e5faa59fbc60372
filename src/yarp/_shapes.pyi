"""Types of the compiled line shapes and table rows (`yarp._shapes`)."""

from typing import Final, Literal

IMPLEMENTATION: Final[Literal["c"]]
SHAPE_BYTES: Final[int]

def line_shapes(data: bytes | bytearray | memoryview, firsts: list[int | None] | None = None) -> list[bytes]: ...
def rows_breaking(data: bytes | bytearray | memoryview, width: int, rule: tuple[tuple[int, bytes], ...]
                  ) -> tuple[int, list[int], list[int]]: ...
