"""SHA-256 of a large buffer on a helper thread, shared by both frame kernels.

`prepare_payload` (compiled and pure-Python alike) starts the digest here and
compresses meanwhile: hashlib and zstandard both release the GIL on large
buffers, so the two overlap on separate cores.
"""

from __future__ import annotations

import hashlib
import threading


def hash_in_background(data: bytes):
    """Start SHA-256 of `data` on a helper thread; return (thread, result box)."""
    box: list[bytes] = []
    thread = threading.Thread(target=lambda: box.append(hashlib.sha256(data).digest()),
                              name="yarp-sha256", daemon=True)
    thread.start()
    return thread, box


def joined_digest(thread: threading.Thread, box: list[bytes], data: bytes) -> bytes:
    thread.join()
    # The thread can only fail for lack of memory; hash here rather than lose the digest.
    return box[0] if box else hashlib.sha256(data).digest()
