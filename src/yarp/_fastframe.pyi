"""Types of the compiled frame splitter and payload kernel (`yarp._fastframe`)."""

from typing import Final, Literal, TypeAlias

Buffer: TypeAlias = bytes | bytearray | memoryview

IMPLEMENTATION: Final[Literal["c"]]

MIN_COMPRESS_BYTES: Final[int]
MIN_SAVING_RATIO: Final[float]
MIN_SAVING_BYTES: Final[int]
PROBE_THRESHOLD_BYTES: Final[int]
PROBE_SLICE_BYTES: Final[int]
PROBE_MIN_SAVING_RATIO: Final[float]
COMPRESSION_LEVEL: Final[int]

def prepare_payload(data: Buffer) -> tuple[bytes, Literal["none", "zstd"], bytes]: ...
def encode_frame(body: Buffer, max_frame_bytes: int = ...) -> bytes: ...

class FrameSplitter:
    def __init__(self, max_frame_bytes: int = ...) -> None: ...
    @property
    def max_frame_bytes(self) -> int: ...
    @property
    def buffered(self) -> int: ...
    @property
    def at_boundary(self) -> bool: ...
    def feed(self, data: Buffer) -> list[bytes]: ...
    def get_buffer(self, sizehint: int = -1) -> memoryview: ...
    def buffer_updated(self, nbytes: int) -> list[bytes]: ...
