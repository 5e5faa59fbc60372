"""Types of the compiled line templates (`yarp._templates`)."""

from collections.abc import Iterable, Sequence
from typing import Final, Literal

IMPLEMENTATION: Final[Literal["c"]]
TEMPLATE_BYTES: Final[int]

def masked_paths(line: bytes) -> bytes: ...
def template(line: bytes) -> bytes: ...
def templates(lines: Sequence[bytes], indices: Iterable[int]) -> list[bytes]: ...
