"""Types of the compiled payload kernel (`yarp._payload_kernel`)."""

from typing import Final, Literal, TypeAlias

Buffer: TypeAlias = bytes | bytearray | memoryview

IMPLEMENTATION: Final[Literal["c"]]

def prepare_payload(data: Buffer) -> tuple[bytes, Literal["none", "zstd"], bytes]: ...
def canonical_fast_path_ok(value: object) -> bool: ...
