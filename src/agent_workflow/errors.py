"""Every error the evidence index raises on purpose, with its exit status.

Hierarchy (exit status in brackets)::

    AgentWorkflowError [74]        base; never raised directly
    ├── UsageError [64]            bad command line or filter value
    ├── EvidenceError [65]         source evidence does not satisfy its contract
    │   ├── RecordInvalid          a record fails its hand-written contract
    │   ├── SealBroken             a sealed receipt or listed artifact does not verify
    │   └── UnsafeSource           a symlink, non-regular or foreign-owned source file
    ├── IndexInvalid [65]          `index verify --full` found a problem
    ├── SyncFailed [65]            `index sync` / `rebuild` left a run in error
    ├── StateRootUnsafe [74]       the state root fails its trust checks
    ├── IndexMissing [74]          no projection database exists yet
    ├── IndexIncompatible [74]     newer, foreign or damaged projection header
    ├── IndexBusy [74]             another writer holds index.lock
    └── ExportUnavailable [74]     the optional Parquet extra is not installed

Messages are bounded and carry only fixed wording plus small facts (counts,
relative paths inside the state root, field names); never record contents,
prompts, terminal text or credentials.
"""

from __future__ import annotations

# The exit statuses and the bounding of error text are the same as yarp's: one
# definition serves both commands (the length limit stays this package's own).
from yarp.errors import EXIT_DATA, EXIT_IO, EXIT_OK, EXIT_USAGE  # noqa: F401  (re-exported)
from yarp.errors import bounded_text as _bounded_text

from .limits import MAX_ERROR_CHARS


def bounded_text(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Replace control characters and cut `text` to at most `limit` characters."""
    return _bounded_text(text, limit)


class AgentWorkflowError(Exception):
    """Base of every deliberate evidence-index error; carries a bounded message."""

    exit_code = EXIT_IO
    category = "error"

    def __init__(self, message: str = "") -> None:
        self.message = bounded_text(message or self.__class__.__doc__ or self.category)
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class UsageError(AgentWorkflowError):
    """Raised for a malformed command line or an out-of-range filter."""

    exit_code = EXIT_USAGE
    category = "usage"


class EvidenceError(AgentWorkflowError):
    """Raised when one run's source evidence cannot be projected."""

    exit_code = EXIT_DATA
    category = "evidence"


class RecordInvalid(EvidenceError):
    """Raised when a record is not JSON, not an object, or fails its contract."""

    category = "record_invalid"


class SealBroken(EvidenceError):
    """Raised when a final receipt is writable, malformed, or an artifact's digest differs."""

    category = "seal_broken"


class UnsafeSource(EvidenceError):
    """Raised for a symlinked, non-regular, oversized or foreign-owned source file."""

    category = "unsafe_source"


class IndexInvalid(AgentWorkflowError):
    """Raised when `index verify --full` finds the projection disagrees with its sources."""

    exit_code = EXIT_DATA
    category = "index_invalid"


class SyncFailed(AgentWorkflowError):
    """Raised after a sync or rebuild in which at least one run ended in error."""

    exit_code = EXIT_DATA
    category = "sync_failed"


class StateRootUnsafe(AgentWorkflowError):
    """Raised when the state root or index directory is symlinked, foreign-owned or too open."""

    category = "state_root_unsafe"


class IndexMissing(AgentWorkflowError):
    """Raised when a read-only command finds no projection database."""

    category = "index_missing"


class IndexIncompatible(AgentWorkflowError):
    """Raised for a database that is newer, foreign (other application id) or not SQLite."""

    category = "index_incompatible"


class IndexBusy(AgentWorkflowError):
    """Raised when the exclusive writer lock is held by another process."""

    category = "index_busy"


class ExportUnavailable(AgentWorkflowError):
    """Raised when `index export` needs pyarrow and it is not installed."""

    category = "export_unavailable"
