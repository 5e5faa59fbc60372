"""Every error YARP raises on purpose, with its exit status and wire code.

Hierarchy (exit status in brackets; ``code`` is the stable token sent in broker
replies and ingest acknowledgements)::

    YarpError [74]                    base; never raised directly
    ├── UsageError [64]               bad command line or configuration value
    ├── DataError [65]                input or archive content is wrong
    │   ├── InvalidReference          an archive_ref that is not yr_ + 32 hex
    │   ├── NotFound                  a well-formed ref / call that is not archived
    │   ├── ValidationError           an operation, envelope or record fails its contract
    │   ├── ConflictError             a stable identity reused with different content
    │   ├── LifecycleError            an operation not allowed in the call's state,
    │   │                             or a required snapshot is missing at finish
    │   └── VerificationFailed        `yarp archive verify` found a problem
    ├── ArchiveError [74]             the archive cannot be used as asked
    │   ├── ArchiveMissing            no archive at the path
    │   ├── UnsafePath                symlink, foreign owner, broad mode, wrong type
    │   ├── UnsupportedSchema         user_version newer (or unknown) to this binary
    │   ├── CorruptArchive            SQLite reports corruption / not a database
    │   ├── ArchiveBusy               typed SQLITE_BUSY / SQLITE_LOCKED (retryable)
    │   ├── DiskFull                  SQLITE_FULL or ENOSPC
    │   └── ArchiveReplaced           the broker's open file is no longer the one at the archive path
    ├── FrameError [74]               a length-prefixed frame is malformed
    │   └── FrameTooLarge             declared length above the limit (before allocation)
    └── BrokerError [74]              talking to the broker failed
        ├── BrokerUnavailable         no broker could be reached or started (transport)
        ├── BrokerUnresponsive        a broker holds the socket but does not answer
        ├── RuntimeDirUnusable        the runtime directory cannot be used (not retried)
        ├── HandshakeMismatch         schema, binary version or archive id differ
        │   └── BrokerVersionMismatch the running broker is another YARP version (replaced on start-up)
        ├── DeadlineExceeded          the request's end-to-end deadline passed
        ├── ShuttingDown              the broker is draining for idle exit (retry start-up)
        ├── UnknownOutcome            a prune acknowledgement was lost
        └── PruneInterrupted          a prune stopped part-way (its broker stopped); a rerun finishes it
    ExportUnavailable [74]            the optional Parquet extra (pyarrow) is missing

Messages are bounded (`MAX_ERROR_CHARS`), control characters are replaced, and no
message ever carries archived payloads, command text or credentials: callers pass
only fixed wording plus small facts (counts, limits, field names).
"""

from yarp.limits import MAX_ERROR_CHARS

EXIT_OK = 0
EXIT_USAGE = 64
EXIT_DATA = 65
EXIT_IO = 74


def bounded_text(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Replace control characters and cut `text` to at most `limit` characters."""
    cleaned = "".join(ch if ch.isprintable() else "\ufffd" for ch in str(text))
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1] + "\u2026"
    return cleaned


class YarpError(Exception):
    """Base of every deliberate YARP error; carries a bounded message."""

    exit_code = EXIT_IO
    code = "error"
    #: Whether a client may retry the same request within its deadline.
    retryable = False

    def __init__(self, message: str = "") -> None:
        self.message = bounded_text(message or self.__class__.__doc__ or self.code)
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class UsageError(YarpError):
    """Raised for a malformed command line or configuration value."""

    exit_code = EXIT_USAGE
    code = "usage"


class DataError(YarpError):
    """Raised when input or archived content does not satisfy its contract."""

    exit_code = EXIT_DATA
    code = "data"


class InvalidReference(DataError):
    """Raised when an archive reference is not `yr_` followed by 32 lowercase hex digits."""

    code = "invalid_ref"


class NotFound(DataError):
    """Raised when a well-formed reference or source call is not in the archive."""

    code = "not_found"


class ValidationError(DataError):
    """Raised when an operation, envelope or record fails validation."""

    code = "validation"


class ContractViolation(ValidationError):
    """An operation that breaks the adapter contract (its fields, types or bounds).

    The broker validates every operation; this distinct code lets a relay
    such as `yarp archive ingest` end with status 74 for it, as the contract
    asks, while other rejections are answered and the relay goes on.
    """

    code = "contract"


class ConflictError(DataError):
    """Raised when a stable identity is reused with different content."""

    code = "conflict"


class LifecycleError(DataError):
    """Raised when an operation is not allowed in the call's current state."""

    code = "lifecycle"


class VerificationFailed(DataError):
    """Raised when `yarp archive verify` finds one or more problems."""

    code = "verification_failed"


class ArchiveError(YarpError):
    """Raised when the archive cannot be opened or used as asked."""

    code = "archive"


class ArchiveMissing(ArchiveError):
    """Raised when no archive exists at the path a read-only command was given."""

    code = "archive_missing"


class UnsafePath(ArchiveError):
    """Raised for symlinks, foreign owners, broad permissions or wrong file types."""

    code = "unsafe_path"
    #: What was found unsafe, when the raiser said (`at`): its label, path and problem phrase,
    #: so `yarp doctor` can give the fix for the state it found.
    label: str | None = None
    path: str | None = None
    problem: str | None = None

    @classmethod
    def at(cls, label: str, path: str, problem: str) -> "UnsafePath":
        """The error for `path` (`label`: what it is to YARP) and its `problem` phrase
        (`yarp.private_files`): "LABEL PATH PROBLEM"."""
        error = cls(f"{label} {path} {problem}")
        error.label, error.path, error.problem = label, path, problem
        return error


class UnsupportedSchema(ArchiveError):
    """Raised when the archive's user_version is newer or unknown to this binary."""

    code = "unsupported_schema"


class CorruptArchive(ArchiveError):
    """Raised when SQLite reports corruption or the file is not a database."""

    code = "corrupt"


class ArchiveBusy(ArchiveError):
    """Raised for typed SQLITE_BUSY / SQLITE_LOCKED outcomes; retried within a deadline."""

    code = "busy"
    retryable = True


class DiskFull(ArchiveError):
    """Raised when SQLite or the filesystem reports that no space is left."""

    code = "disk_full"


class ArchiveReplaced(ArchiveError):
    """Raised when the archive file was removed or replaced under the broker after a batch committed.

    The batch went into the file the broker had open, which nobody reads any
    more: nothing in it is acknowledged, and the broker exits so that the next
    client starts one on the file at the archive path.
    """

    code = "archive_replaced"


class FrameError(YarpError):
    """Raised when a length-prefixed frame is malformed (zero length, truncated, bad JSON)."""

    code = "frame"


class FrameTooLarge(FrameError):
    """Raised when a declared frame length exceeds the limit, before any allocation."""

    code = "frame_too_large"

    def __init__(self, declared: int, limit: int) -> None:
        self.declared = declared
        self.limit = limit
        super().__init__(f"frame of {declared} bytes exceeds the limit of {limit} bytes")


class BrokerError(YarpError):
    """Raised when the broker cannot be reached or answers unusably."""

    code = "broker"


class BrokerUnavailable(BrokerError):
    """Raised when no broker could be reached or started (a transport failure)."""

    code = "unavailable"
    retryable = True


class BrokerUnresponsive(BrokerError):
    """Raised when a broker holds the archive's socket and lifetime lock but does not answer in time
    (stopped, or stuck); the message names its pid and socket and the bound waited."""

    code = "unresponsive"


class RuntimeDirUnusable(BrokerError):
    """Raised for a permanent error in the broker's runtime directory (read-only, permission, wrong
    type): reported at once, never retried; the message names the path and the cause."""

    code = "runtime_dir"


class HandshakeMismatch(BrokerError):
    """Raised when the broker handshake's schema, binary version or archive id differ."""

    code = "handshake"


class BrokerVersionMismatch(HandshakeMismatch):
    """Raised by a client whose handshake met a broker of another YARP version for the same archive.

    `broker_version` is what the broker's answer says it is (bounded text);
    `pid` the process listening on the socket (`SO_PEERCRED`), or None when
    the kernel did not say. The start-up path asks that broker to drain and
    exit, then starts this version's (`yarp.clients.handover`).
    """

    code = "broker_version"
    broker_version = ""
    pid: int | None = None

    @classmethod
    def of(cls, broker_version: str, pid: int | None) -> "BrokerVersionMismatch":
        """The error for a broker that answered as `broker_version`, listening in process `pid`."""
        version = bounded_text(broker_version, 64)
        error = cls(f"the running broker is yarp {version}" + (f" (pid {pid})" if pid else "")
                    + ", another version than this one")
        error.broker_version = version
        error.pid = pid
        return error


class DeadlineExceeded(BrokerError):
    """Raised when a request's end-to-end deadline passes before its acknowledgement."""

    code = "deadline"


class ShuttingDown(BrokerError):
    """Raised when the broker is draining for idle exit; clients retry start-up."""

    code = "shutting_down"
    retryable = True


class UnknownOutcome(BrokerError):
    """Raised when a prune acknowledgement was lost: inspect the archive before pruning again."""

    code = "unknown_outcome"


class PruneInterrupted(BrokerError):
    """Raised when a prune stopped part-way because its broker stopped: the steps it committed stay
    (their calls are gone), the rest is still archived, and the same prune run again finishes it."""

    code = "prune_interrupted"


class ExportUnavailable(YarpError):
    """Raised when `yarp archive export` needs pyarrow and it is not installed."""

    code = "export_unavailable"


def pyarrow_missing() -> str:
    """What to say when Parquet export finds no pyarrow: the command that installs it where this
    Python will find it (a pipx or uv tool environment has its own; else this interpreter's pip)."""
    import shlex
    import sys

    python = sys.executable or "python3"
    if "/pipx/venvs/" in python:
        command = "pipx inject yarp-archive 'pyarrow>=14'"
    elif "/uv/tools/" in python:
        command = "uv tool install --reinstall --with 'pyarrow>=14' yarp-archive"
    else:
        command = f"{shlex.quote(python)} -m pip install 'pyarrow>=14'"
    return f"Parquet export needs pyarrow, which is not installed; install it with: {command}"


#: Wire code -> class, used to rebuild a typed error from a broker reply.
ERRORS_BY_CODE: dict[str, type[YarpError]] = {}


def _register(cls: type[YarpError]) -> None:
    ERRORS_BY_CODE.setdefault(cls.code, cls)
    for sub in cls.__subclasses__():
        _register(sub)


_register(YarpError)


def from_code(code: str, message: str) -> YarpError:
    """Rebuild a typed error from its wire code (unknown codes become `BrokerError`)."""
    cls = ERRORS_BY_CODE.get(code, BrokerError)
    if cls is FrameTooLarge:
        return FrameError(message)
    return cls(message)
