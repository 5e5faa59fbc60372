"""Find archived calls and read, search and restore their exact outputs, read-only.

The library behind `yarp search`, `yarp read`, `yarp restore` and
`yarp archive restore`, by concept:

- `lookup`: find a call (by `archive_ref` or source identity) and its recovery
  sources in the specification's order;
- `reading`: stream a source's exact bytes, checked against length and SHA-256,
  and take line or byte ranges of them;
- `search`: match patterns line by line in bounded memory;
- `listing`: list calls newest first, and find those whose output matches a pattern;
- `render`: the text and JSON forms of search results.

Nothing here ever writes to the archive or puts archived bytes into an error message.
"""

from yarp.archive.recovery.listing import Listing, count_calls, list_calls
from yarp.archive.recovery.lookup import (
    FALLBACK_SOURCE,
    RECOVERY_ORDER,
    REF_PATTERN,
    SOURCE_NAMES,
    CallInfo,
    Source,
    call_by_source,
    check_ref,
    choose_source,
    find_call,
    find_call_by_source,
    recovery_sources,
    stream_sources,
    unfinished_calls,
)
from yarp.archive.recovery.reading import (
    ReadResult,
    check_source,
    iter_payload,
    iter_verified,
    parse_range,
    read_bytes,
    read_lines,
    utf8_safe_end,
)
from yarp.archive.recovery.render import render_search, search_json
from yarp.archive.recovery.search import (
    SearchOptions,
    SourceMatches,
    as_bytes,
    as_text,
    block_safe,
    compile_patterns,
    display_text,
    iter_match_blocks,
    match_bytes,
    scan,
    search_call,
    search_source,
)

__all__ = [
    "FALLBACK_SOURCE", "RECOVERY_ORDER", "REF_PATTERN", "SOURCE_NAMES", "CallInfo", "Listing", "ReadResult",
    "SearchOptions", "Source", "SourceMatches", "as_bytes", "as_text", "block_safe", "call_by_source", "check_ref",
    "check_source", "choose_source", "compile_patterns", "count_calls", "display_text", "find_call",
    "find_call_by_source", "iter_match_blocks", "iter_payload", "iter_verified", "list_calls", "match_bytes",
    "parse_range", "read_bytes", "read_lines", "recovery_sources", "render_search", "scan", "search_call",
    "search_json", "search_source", "stream_sources", "unfinished_calls", "utf8_safe_end",
]
