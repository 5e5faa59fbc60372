"""SHA-256 for YARP, picked by the size of what is hashed.

* `identity_sha256` hashes short identity strings (ordering keys, operation
  ids, the socket name's archive hash) on every client's path, `yarp run`
  included. It uses the interpreter's built-in SHA-256 module, which loads in
  microseconds, where `hashlib` first loads OpenSSL (2-3 ms of every wrapped
  shell command, for digests of a hundred bytes). The result is the same
  SHA-256; only the implementation differs.
* `payload_sha256` / `payload_hasher` hash archived payloads with OpenSSL's
  SHA-256 (the fastest on large buffers), loaded on first use.
* `hash_in_background` / `joined_digest`: `prepare_payload` (compiled and
  pure-Python alike) starts a large payload's digest on a helper thread and
  compresses meanwhile; hashlib and zstandard both release the GIL on large
  buffers, so the two overlap on separate cores.
"""

import sys

# The built-in module's name by version: a failed import searches every path entry.
try:
    if sys.version_info >= (3, 12):
        from _sha2 import sha256 as _identity_sha256
    else:
        from _sha256 import sha256 as _identity_sha256
except ImportError:  # a build without the built-in module
    from hashlib import sha256 as _identity_sha256


#: A SHA-256 object over a short byte string (identities and keys, not payloads):
#: the built-in constructor itself, so a call is no Python frame.
identity_sha256 = _identity_sha256


_payload_constructor = None


def payload_sha256_constructor():
    """OpenSSL's SHA-256 constructor, the fastest on large buffers, for a caller that hashes payload after payload.

    Loaded on first use, straight from `_hashlib`: `hashlib` itself also loads
    blake2, a few milliseconds of every command's start-up for nothing.
    """
    global _payload_constructor
    if _payload_constructor is None:
        try:
            from _hashlib import openssl_sha256 as constructor
        except ImportError:  # an interpreter built without OpenSSL
            from hashlib import sha256 as constructor
        _payload_constructor = constructor
    return _payload_constructor


def payload_hasher(data: bytes = b""):
    """A SHA-256 object for payloads (`payload_sha256_constructor`)."""
    return payload_sha256_constructor()(data)


def payload_sha256(data) -> bytes:
    """The SHA-256 digest of a payload (any size)."""
    return payload_hasher(data).digest()


def hash_in_background(data: bytes):
    """Start SHA-256 of `data` on a helper thread; return (thread, result box)."""
    import threading

    box: list[bytes] = []
    thread = threading.Thread(target=lambda: box.append(payload_sha256(data)), name="yarp-sha256", daemon=True)
    thread.start()
    return thread, box


def joined_digest(thread, box: list[bytes], data: bytes) -> bytes:
    """The digest computed by a thread from `threaded_digest`, once it has finished (computed here if it failed)."""
    thread.join()
    # The thread can only fail for lack of memory; hash here rather than lose the digest.
    return box[0] if box else payload_sha256(data)
