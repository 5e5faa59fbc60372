"""Types of the compiled line templates (`yarp._templates`)."""

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Final, Literal

IMPLEMENTATION: Final[Literal["c"]]
TEMPLATE_BYTES: Final[int]

def masked_paths(line: bytes) -> bytes: ...
def template(line: bytes) -> bytes: ...
def templates(lines: Sequence[bytes], indices: Iterable[int],
              firsts: Sequence[int | None] | None = None) -> list[bytes]: ...
def classed_alike(lines: Sequence[bytes], found: list[tuple[int, tuple[bytes, ...]]],
                  blind: dict[tuple[bytes, ...], bool], asked: Callable[[tuple[bytes, ...]], bool],
                  class_of: Callable[[bytes, tuple[bytes, ...]], str | None], kinds: bool = True
                  ) -> tuple[list[str | None], list[int | None] | None]: ...
def tally(counts: dict, keys: Iterable[Hashable]) -> None: ...
