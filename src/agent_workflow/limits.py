"""Numeric bounds of the evidence index, in one place.

Changing a bound here changes it everywhere; nothing else hard-codes sizes.
"""

from __future__ import annotations

#: Longest error message, in characters.
MAX_ERROR_CHARS = 400
#: Largest structured JSON artifact read (launch command catalogs are ~100 KiB).
MAX_JSON_BYTES = 16 * 1024 * 1024
#: Largest JSONL journal read (the writers cap terminal journals at 16 MiB).
MAX_JSONL_BYTES = 32 * 1024 * 1024
#: Largest sealed artifact hashed during receipt verification.
MAX_SEALED_ARTIFACT_BYTES = 512 * 1024 * 1024
#: Largest single JSONL line.
MAX_LINE_BYTES = 4 * 1024 * 1024
#: Stored incident summary, in characters (the contract's own bound).
MAX_SUMMARY_CHARS = 2048
#: Bounded short text columns (identifiers, categories, names).
MAX_FIELD_CHARS = 256
#: Stored index error detail, in characters.
MAX_INDEX_ERROR_CHARS = 512
#: Query row limit: default and inclusive bounds.
DEFAULT_QUERY_LIMIT = 100
MIN_QUERY_LIMIT = 1
MAX_QUERY_LIMIT = 10_000
#: SQLite busy timeout for the writer and readers, milliseconds.
BUSY_TIMEOUT_MS = 5_000
#: Seconds without semantic progress before the supervisor opens an incident.
NO_PROGRESS_SECONDS = 600.0
#: Largest journal the supervisor appends to (matches the recorder's control-journal cap).
MAX_SUPERVISOR_JOURNAL_BYTES = 8 * 1024 * 1024
#: A directory or journal modified less than this long before its mtime was
#: recorded is not trusted by the freshness probe (file-system timestamps are
#: coarse: a second change in the same tick can leave the mtime unchanged).
FRESHNESS_TRUST_MARGIN_NS = 2_000_000_000
#: Runs the default (probe) freshness check of a query looks at: runs in error,
#: then active runs, then the most recently indexed ones.
MAX_FRESHNESS_PROBE_RUNS = 256
#: Runs from which a sync fingerprints in two processes (one forked child).
PARALLEL_FINGERPRINT_RUNS = 2_000
